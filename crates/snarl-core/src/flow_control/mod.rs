//! Link-level flow control, split three ways: the sender's view of the link
//! ([`CreditSender`]: may I send, I sent), the receiver's buffer (the switch input queues,
//! which return feedback as packets leave them), and the feedback message itself
//! (`Event::Credit`, which travels the link with its latency).

mod credit;

pub use credit::{CreditSender, UNLIMITED};
