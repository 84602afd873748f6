//! RED-style ECN marking at a switch's egress queues (`marking.type = "red"`, or the older
//! `[ecn]`): probability 0 up to Kmin bytes, rising linearly to Pmax at Kmax, 1 above
//! Kmax, on the queue's occupancy as a packet enters it (or, configured so, as it leaves);
//! only the configured one of the two acts. The marker draws from its own random stream,
//! so runs without marking draw nothing and stay as they were.

use super::marking::{Marking, QueueState};
use crate::config::{EcnMarkAt, EcnPolicy, RedConfig};
use crate::packet::{Packet, PacketKind};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The marking policy: thresholds and probability, nothing else.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcnMarker {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl EcnMarker {
    pub fn new(config: &RedConfig) -> EcnMarker {
        EcnMarker { kmin: config.kmin.0, kmax: config.kmax.0, pmax: config.pmax }
    }

    /// Marking probability for a queue holding `queue_bytes`.
    pub fn probability(&self, queue_bytes: u64) -> f64 {
        if queue_bytes <= self.kmin {
            0.0
        } else if queue_bytes > self.kmax {
            1.0
        } else {
            self.pmax * (queue_bytes - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        }
    }

    /// Whether to mark a packet seeing `queue_bytes`; draws from `rng` only between the
    /// thresholds.
    #[inline]
    pub fn mark(&self, queue_bytes: u64, rng: &mut impl Rng) -> bool {
        if queue_bytes <= self.kmin {
            false
        } else if queue_bytes > self.kmax {
            true
        } else {
            rng.random_bool(self.probability(queue_bytes).min(1.0))
        }
    }
}

/// The marker of a fabric, with its random stream and the point it acts at.
pub struct Red {
    marker: EcnMarker,
    at_dequeue: bool,
    /// ICI+: only packets congestion isolation points at may be marked.
    ici_plus: bool,
    rng: Pcg64Mcg,
}

impl Red {
    pub fn new(config: &RedConfig, seed: u64) -> Red {
        Red {
            marker: EcnMarker::new(config),
            at_dequeue: config.mark == EcnMarkAt::Dequeue,
            ici_plus: config.policy == EcnPolicy::IciPlus,
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// Whether the policy lets the packet be marked at all (ICI+: only where isolation
    /// points at it; it draws nothing otherwise).
    #[inline]
    fn allowed(&self, queue: &impl QueueState) -> bool {
        !self.ici_plus || queue.isolation_points_here()
    }

    /// Control packets (CNPs) are never marked; a packet already marked upstream stays
    /// marked without a new draw.
    #[inline]
    fn consider(&mut self, queue_bytes: u64, packet: &mut Packet) -> bool {
        let marked = packet.kind.is_plain_data() && self.marker.mark(queue_bytes, &mut self.rng);
        if marked {
            packet.kind = packet.kind.marked(PacketKind::ECN_MARKED);
        }
        marked
    }
}

impl Marking for Red {
    /// On the bytes queued ahead of the packet.
    #[inline]
    fn on_enqueue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool {
        !self.at_dequeue && self.allowed(queue) && self.consider(queue.bytes(), packet)
    }

    /// On the bytes left behind the packet.
    #[inline]
    fn on_dequeue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool {
        self.at_dequeue && self.allowed(queue) && self.consider(queue.bytes(), packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue of so many bytes, its port free and facing a switch; congestion isolation
    /// points at its packets unless the second field says otherwise.
    struct Queue(u64, bool);
    impl QueueState for Queue {
        fn bytes(&self) -> u64 {
            self.0
        }
        fn blocked(&self) -> bool {
            false
        }
        fn faces_host(&self) -> bool {
            false
        }
        fn waiting(&self) -> u64 {
            0
        }
        fn credits(&self) -> u64 {
            u64::MAX
        }
        fn isolation_points_here(&self) -> bool {
            self.1
        }
    }

    fn marker() -> EcnMarker {
        EcnMarker { kmin: 5_000, kmax: 200_000, pmax: 0.01 }
    }

    #[test]
    fn probability_is_red() {
        let m = marker();
        assert_eq!(m.probability(0), 0.0);
        assert_eq!(m.probability(5_000), 0.0);
        assert!((m.probability(102_500) - 0.005).abs() < 1e-12);
        assert!((m.probability(200_000) - 0.01).abs() < 1e-12);
        assert_eq!(m.probability(200_001), 1.0);
    }

    #[test]
    fn marks_at_the_expected_rate_and_never_outside() {
        let m = marker();
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        assert!((0..1000).all(|_| !m.mark(4_000, &mut rng)));
        assert!((0..1000).all(|_| m.mark(300_000, &mut rng)));
        let marked = (0..200_000).filter(|_| m.mark(102_500, &mut rng)).count();
        // p = 0.5%: 1000 expected, sd ~32.
        assert!((880..=1120).contains(&marked), "{marked}");
    }

    #[test]
    fn control_packets_and_the_other_point_are_left_alone() {
        let config = RedConfig { kmin: crate::units::Bytes(0), kmax: crate::units::Bytes(0), ..RedConfig::default() };
        let mut red = Red::new(&config, 1);
        let queue = Queue(10_000, true);
        let mut cnp = Packet { kind: PacketKind::CNP, ..Default::default() };
        assert!(!red.on_enqueue(&queue, &mut cnp));
        assert_eq!(cnp.kind, PacketKind::CNP);
        let mut data = Packet::default();
        assert!(!red.on_dequeue(&queue, &mut data));
        assert_eq!(data.kind, PacketKind::DATA, "marking happens at enqueue only");
        assert!(red.on_enqueue(&queue, &mut data));
        assert_eq!(data.kind, PacketKind::ECN_MARKED);
    }

    #[test]
    fn ici_plus_marks_only_where_isolation_points() {
        let config = RedConfig {
            kmin: crate::units::Bytes(0),
            kmax: crate::units::Bytes(0),
            policy: EcnPolicy::IciPlus,
            ..RedConfig::default()
        };
        let mut red = Red::new(&config, 1);
        let mut data = Packet::default();
        assert!(!red.on_enqueue(&Queue(10_000, false), &mut data), "a flow isolation does not point at");
        assert_eq!(data.kind, PacketKind::DATA);
        assert!(red.on_enqueue(&Queue(10_000, true), &mut data));
        let mut all = Red::new(&RedConfig { policy: EcnPolicy::All, ..config }, 1);
        let mut other = Packet::default();
        assert!(all.on_enqueue(&Queue(10_000, false), &mut other), "`all` marks every data packet");
    }
}
