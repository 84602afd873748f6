//! Link-level flow control, split three ways as the link is: the sender's side
//! ([`Sender`]: credits in hand and on their way back, paused flags; "may I send", "I
//! sent", "feedback arrived"), the receiver's side ([`Receiver`]: the ingress buffer
//! reacting to packets entering and leaving its queues), and the [`Feedback`] message
//! between them (credits, pause/resume). Credits travel back in a small ring per link
//! ([`CreditReturns`]) rather than as events where they can; a feedback that does not
//! travel there is an `Event::FeedbackToSwitch` or `Event::FeedbackToHost`. The parts:
//! [`CreditSender`] (credit counters), [`PauseState`] (paused flags), [`PfcReceiver`]
//! (XOFF/XON per ingress queue); the NICs use them directly.
//!
//! Everything is per (link, queue), with the switches' queue ids (`switch::ioq::queues`).

mod config;
mod credit;
mod feedback;
mod pfc;
mod receiver;
mod returns;
mod sender;

pub(crate) use config::validate_pfc;
pub use config::{pfc_headroom, FlowControlConfig, Threshold, Thresholds, PAUSE_FRAME_BYTES};
pub use credit::{CreditSender, UNLIMITED};
pub use feedback::Feedback;
pub use pfc::{PauseState, PfcFrame, PfcReceiver};
pub use receiver::Receiver;
pub use returns::CreditReturns;
pub(crate) use returns::Ring;
pub use sender::{Carried, Sender};
