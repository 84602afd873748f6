//! The feedback a receiver sends its sender along a link, about one of the link's queues
//! (the same queue id at both ends: the receiver's ingress queue).

/// A flow-control message travelling upstream. Credits usually travel in the sender's
/// return ring ([`super::CreditReturns`]) rather than as an event; pause frames always
/// travel as events.
///
/// A third kind (say, a congestion-isolation message asking the sender to move a flow to
/// a queue of its own) would be a variant here with what the sender needs, produced by
/// [`super::Receiver`] on enqueue or dequeue and handled in [`super::Sender::on_feedback`]
/// (and for hosts in the kernel's `FeedbackToHost` arm). The enum must stay small:
/// events carry it and `Event` stays within 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// `bytes` of the receiver's buffer for `queue` are free again.
    Credit { queue: u8, bytes: u32 },
    /// PFC: stop (`on`) or resume sending on `queue` (a priority).
    Pause { queue: u8, on: bool },
    /// Congestion isolation: isolate the key of the sending switch's mirror `mirror` (a
    /// global mirror index, whose key the receiver reads from the fabric).
    Isolate { mirror: u32 },
}
