//! Link-level flow control, split three ways: the sender's view of the link
//! ([`CreditSender`]: may I send, I sent), the receiver's buffer (the switch input queues,
//! which return feedback as packets leave them), and the feedback message itself
//! ([`CreditReturns`]: credits travelling back along the link with its latency, or an
//! `Event::Credit` where no return ring is kept). Priority flow control ([`PauseState`],
//! [`PfcReceiver`]) is the same split for Ethernet: a paused flag, thresholds on the
//! ingress queues, and pause/resume frames.

mod credit;
mod pfc;
mod returns;

pub use credit::{CreditSender, UNLIMITED};
pub use pfc::{PauseState, PfcFrame, PfcReceiver};
pub use returns::CreditReturns;
pub(crate) use returns::Ring;
