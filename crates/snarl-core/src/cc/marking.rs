//! The switch half of congestion control: a marking policy, consulted as a packet enters
//! or leaves an egress queue, that may set a congestion flag on it for the receiving NIC.

use super::fecn::Fecn;
use super::red::Red;
use crate::config::MarkingConfig;
use crate::packet::Packet;

/// What a marker may see of the egress queue a packet enters or leaves.
pub trait QueueState {
    /// Bytes queued: ahead of the packet as it enters, behind it as it leaves.
    fn bytes(&self) -> u64;
    /// Whether the port may not send from this queue now: out of credits for the next
    /// hop, or paused by it (a queue that is a victim of congestion further on rather
    /// than its root).
    fn blocked(&self) -> bool;
    /// Whether the port's link leads to a host.
    fn faces_host(&self) -> bool;
    /// Bytes routed to this queue's port and VC that still wait in the switch's input
    /// virtual output queues (0 with FIFO input queuing, where only the heads are routed).
    fn waiting(&self) -> u64;
    /// Credits the port could spend on this queue now, the packet being judged included
    /// (`u64::MAX` where the link is not credit-controlled).
    fn credits(&self) -> u64;
    /// Whether congestion isolation points at the packet being judged, for ICI+'s
    /// marking (a detected root without a free entry, or a congested-flow queue that has
    /// stayed busy and pressed for `persist`); true without isolation.
    fn isolation_points_here(&self) -> bool;
}

/// A marking policy. Each method returns whether it marked the packet now.
pub trait Marking {
    /// `packet` enters an egress queue.
    fn on_enqueue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool;
    /// `packet` leaves an egress queue for the link.
    fn on_dequeue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool;
}

/// The marking policies, dispatched statically.
pub enum AnyMarking {
    Red(Red),
    Fecn(Fecn),
}

impl AnyMarking {
    /// The policy of `config`; `seed` seeds its random stream, if it draws;
    /// `port_vl_buffer` is the buffer of a port-VL that thresholds are fractions of
    /// (`Config::port_vl_buffer`).
    pub fn build(config: &MarkingConfig, seed: u64, port_vl_buffer: u64) -> AnyMarking {
        match config {
            MarkingConfig::Red(red) => AnyMarking::Red(Red::new(red, seed)),
            MarkingConfig::Fecn(fecn) => AnyMarking::Fecn(Fecn::new(fecn, port_vl_buffer, seed)),
        }
    }
}

impl Marking for AnyMarking {
    #[inline]
    fn on_enqueue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool {
        match self {
            AnyMarking::Red(m) => m.on_enqueue(queue, packet),
            AnyMarking::Fecn(m) => m.on_enqueue(queue, packet),
        }
    }

    #[inline]
    fn on_dequeue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool {
        match self {
            AnyMarking::Red(m) => m.on_dequeue(queue, packet),
            AnyMarking::Fecn(m) => m.on_dequeue(queue, packet),
        }
    }
}
