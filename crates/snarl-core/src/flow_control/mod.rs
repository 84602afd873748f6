//! Link-level flow control, split three ways: the sender's view of the link
//! ([`CreditSender`]: may I send, I sent), the receiver's buffer (the switch input queues,
//! which return feedback as packets leave them), and the feedback message itself
//! ([`CreditReturns`]: credits travelling back along the link with its latency, or an
//! `Event::Credit` where no return ring is kept).

mod credit;
mod returns;

pub use credit::{CreditSender, UNLIMITED};
pub use returns::CreditReturns;
