//! The receiver's side of a link's flow control: its ingress buffer, reacting as packets
//! enter and leave an ingress queue with the feedback to send upstream, if any.

use super::{Feedback, PfcFrame, PfcReceiver};

/// How a fabric's links keep the receivers' input buffers from overflowing.
///
/// An explicit tag (`repr(u8)`): the per-packet path asks which kind it is, and a tag
/// hidden in a niche of the PFC state's vectors costs a few instructions each time.
#[repr(u8)]
pub enum Receiver {
    /// Credits per queue: a packet starts only if the receiver's buffer has room for it;
    /// the space a packet leaves goes back as credits.
    Credit,
    /// Shared ingress memory and priority flow control: pause frames at XOFF, resume
    /// frames at XON.
    Pfc(PfcReceiver),
    /// Shared ingress memory, and packets that find it full are dropped.
    TailDrop,
}

impl Receiver {
    /// Whether the links are credit-based (otherwise the ingress buffer is shared).
    #[inline]
    pub fn credit_based(&self) -> bool {
        matches!(self, Receiver::Credit)
    }

    /// A packet entered ingress queue (port, queue), which now holds `held` bytes.
    #[inline]
    pub fn on_enqueue(&mut self, port: usize, queue: usize, held: u64) -> Option<Feedback> {
        match self {
            Receiver::Pfc(receiver) => pfc(receiver.on_change(port, queue, held), queue),
            Receiver::Credit | Receiver::TailDrop => None,
        }
    }

    /// A packet of `bytes` left ingress queue (port, queue), which now holds `held()`
    /// bytes (read only by receivers that watch the queue's level).
    #[inline]
    pub fn on_dequeue(
        &mut self,
        port: usize,
        queue: usize,
        bytes: u64,
        held: impl FnOnce() -> u64,
    ) -> Option<Feedback> {
        match self {
            Receiver::Credit => Some(Feedback::Credit { queue: queue as u8, bytes: bytes as u32 }),
            Receiver::Pfc(receiver) => pfc(receiver.on_change(port, queue, held()), queue),
            Receiver::TailDrop => None,
        }
    }
}

#[inline]
fn pfc(frame: Option<PfcFrame>, queue: usize) -> Option<Feedback> {
    frame.map(|frame| Feedback::Pause { queue: queue as u8, on: frame == PfcFrame::Pause })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_receivers_return_what_leaves_and_pfc_receivers_cross_thresholds() {
        let mut credit = Receiver::Credit;
        assert_eq!(credit.on_enqueue(0, 1, 4096), None);
        assert_eq!(credit.on_dequeue(0, 1, 4096, || 0), Some(Feedback::Credit { queue: 1, bytes: 4096 }));
        let mut pfc = Receiver::Pfc(PfcReceiver::new(vec![500], vec![100]));
        if let Receiver::Pfc(r) = &mut pfc {
            r.resize(1, 2).unwrap();
        }
        assert_eq!(pfc.on_enqueue(0, 1, 600), Some(Feedback::Pause { queue: 1, on: true }), "priority 0's thresholds");
        assert_eq!(pfc.on_dequeue(0, 1, 500, || 100), Some(Feedback::Pause { queue: 1, on: false }));
        assert_eq!(Receiver::TailDrop.on_dequeue(0, 0, 100, || 0), None);
        assert!(credit.credit_based() && !pfc.credit_based());
    }
}
