//! RED-style ECN marking at a switch's output (port, VC) queues: probability 0 up to Kmin
//! bytes, rising linearly to Pmax at Kmax, 1 above Kmax. The switch calls
//! [`Ecn::on_enqueue`] where a granted packet enters an output queue and [`Ecn::on_dequeue`]
//! where the link takes it; only the configured one of the two acts. The marker draws from
//! its own random stream, so runs without marking draw nothing and stay as they were.

use crate::config::{EcnConfig, EcnMarkAt};
use crate::packet::{Packet, ECN_MARKED};
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
    pub fn new(config: &EcnConfig) -> EcnMarker {
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
pub struct Ecn {
    marker: EcnMarker,
    at_dequeue: bool,
    rng: Pcg64Mcg,
}

impl Ecn {
    pub fn new(config: &EcnConfig, seed: u64) -> Ecn {
        Ecn {
            marker: EcnMarker::new(config),
            at_dequeue: config.mark == EcnMarkAt::Dequeue,
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// A packet enters an output queue that holds `ahead` bytes before it; `true` if it
    /// was marked now.
    #[inline]
    pub fn on_enqueue(&mut self, ahead: u64, packet: &mut Packet) -> bool {
        !self.at_dequeue && self.consider(ahead, packet)
    }

    /// A packet leaves an output queue for the link, leaving `behind` bytes queued;
    /// `true` if it was marked now.
    #[inline]
    pub fn on_dequeue(&mut self, behind: u64, packet: &mut Packet) -> bool {
        self.at_dequeue && self.consider(behind, packet)
    }

    /// Control packets (CNPs) are never marked; a packet already marked upstream stays
    /// marked without a new draw.
    #[inline]
    fn consider(&mut self, queue_bytes: u64, packet: &mut Packet) -> bool {
        let marked = packet.flags == 0 && self.marker.mark(queue_bytes, &mut self.rng);
        if marked {
            packet.flags |= ECN_MARKED;
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::CNP;

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
        let config = EcnConfig { kmin: crate::units::Bytes(0), kmax: crate::units::Bytes(0), ..EcnConfig::default() };
        let mut ecn = Ecn::new(&config, 1);
        let mut cnp = Packet { flags: CNP, ..Default::default() };
        assert!(!ecn.on_enqueue(10_000, &mut cnp));
        assert_eq!(cnp.flags, CNP);
        let mut data = Packet::default();
        assert!(!ecn.on_dequeue(10_000, &mut data));
        assert_eq!(data.flags, 0, "marking happens at enqueue only");
        assert!(ecn.on_enqueue(10_000, &mut data));
        assert_eq!(data.flags, ECN_MARKED);
    }
}
