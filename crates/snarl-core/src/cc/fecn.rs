//! InfiniBand FECN marking, the switch half of IB congestion control (`marking.type =
//! "fecn"`), as the InfiniBand Architecture Specification 1.2.1 defines it and section II
//! of Gran et al. (the InfiniBand CC study of dynamic traffic on the 648-host fat-tree)
//! describes it.
//!
//! **Congestion state.** A port-VL (an output port and VC) is congested when the bytes
//! queued for it exceed the threshold: the bytes in its output queue
//! ([`QueueState::bytes`]) plus those waiting for it in the switch's input virtual output
//! queues ([`QueueState::waiting`]). The specification gives the threshold as a weight w
//! from 0 to 15 (0: never mark; 1 to 15: a uniformly decreasing threshold) and leaves its
//! meaning to the switch. snarl maps it onto the port-VL's buffer, the per-VL input buffer
//! of an InfiniBand switch port (`switch.input_buffer`; the egress cap on shared-buffer
//! switches): the threshold is (16 − w)/16 of it, so w = 15 marks above 1/16 of the buffer
//! (most sensitive: the tree is caught before it spreads) and w = 1 above 15/16 (almost
//! full: congestion has spread already). That buffer is what back-pressure fills, and
//! measures how close a port-VL is to stopping its upstream: the fraction is one of it
//! whatever the fabric's buffer sizes. (With FIFO input queues and a crossbar speedup of
//! 1, a packet crosses into an output queue at the rate the link drains it, so the queue
//! holds next to nothing behind a leaving packet and the congestion, in the input queues,
//! is seen only when they report it as waiting bytes, as virtual output queues do: FECN
//! needs VoQs or a speedup there.)
//!
//! **Root or victim.** Only a root enters the state: a port-VL that has credits to send,
//! checked as the packet leaves: the credits it could spend now ([`QueueState::credits`],
//! this packet's included) cover this packet and another of its size. A port-VL short of
//! that sends each packet as a credit comes back: it is a victim of back-pressure from
//! further on, and stays quiet, unless the victim mask is set for its port (`host_ports`:
//! ports facing hosts, which never detect congestion themselves; `all`; `none`).
//!
//! **Marking.** While in the state, a leaving packet is eligible if it is data (never a
//! BECN) of at least `packet_size` bytes and not marked already; an eligible packet gets
//! the FECN mark (the packet's `ECN_MARKED` flag) with probability
//! 1/(`marking_rate` + 1), so that `marking_rate` eligible packets on average go unmarked
//! between two marked ones, as the specification's Marking_Rate means. The draw comes
//! from the marking's own seeded stream, and only when `marking_rate` > 0 (a draw, rather
//! than a count per port-VL, keeps the marking stateless, and a run with `marking_rate =
//! 0` draws nothing). Marking is evaluated at dequeue only, where the credit check means
//! something.

use super::marking::{Marking, QueueState};
use crate::config::{FecnConfig, VictimMask};
use crate::packet::{Packet, PacketKind};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The FECN marking of a fabric.
pub struct Fecn {
    /// Queued bytes above which a port-VL is congested (`u64::MAX`: never).
    threshold: u64,
    /// 1/(marking_rate + 1); 1.0 marks every eligible packet without a draw.
    probability: f64,
    packet_size: u64,
    victim_mask: VictimMask,
    rng: Pcg64Mcg,
}

/// The threshold in bytes of weight `weight` on a port-VL buffer of `buffer` bytes:
/// (16 − weight)/16 of it; weight 0 never marks (`u64::MAX`).
pub fn threshold_bytes(weight: u32, buffer: u64) -> u64 {
    if weight == 0 {
        return u64::MAX;
    }
    (buffer as u128 * (16 - weight.min(15)) as u128 / 16) as u64
}

impl Fecn {
    /// The marking of `config` on port-VLs of `buffer` bytes, drawing from `seed`'s stream.
    pub fn new(config: &FecnConfig, buffer: u64, seed: u64) -> Fecn {
        Fecn {
            threshold: threshold_bytes(config.threshold, buffer),
            probability: 1.0 / (config.marking_rate as f64 + 1.0),
            packet_size: config.packet_size.0,
            victim_mask: config.victim_mask,
            rng: Pcg64Mcg::seed_from_u64(seed),
        }
    }

    /// Whether the port-VL `queue` that `packet` leaves is in the congestion state.
    #[inline]
    fn congested(&self, queue: &impl QueueState, packet: &Packet) -> bool {
        if queue.bytes().saturating_add(queue.waiting()) <= self.threshold {
            return false;
        }
        let masked = match self.victim_mask {
            VictimMask::All => true,
            VictimMask::None => false,
            VictimMask::HostPorts => queue.faces_host(),
        };
        // A root has credits for this packet and another of its size.
        masked || queue.credits() >= 2 * packet.size as u64
    }
}

impl Marking for Fecn {
    /// FECN marking acts at dequeue only.
    #[inline]
    fn on_enqueue(&mut self, _queue: &impl QueueState, _packet: &mut Packet) -> bool {
        false
    }

    #[inline]
    fn on_dequeue(&mut self, queue: &impl QueueState, packet: &mut Packet) -> bool {
        let eligible = packet.kind.is_plain_data() && packet.size as u64 >= self.packet_size;
        if !eligible || !self.congested(queue, packet) {
            return false;
        }
        if self.probability < 1.0 && !self.rng.random_bool(self.probability) {
            return false;
        }
        packet.kind = packet.kind.marked(PacketKind::FECN);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    /// A port-VL: queued and waiting bytes, credits, whether it faces a host.
    #[derive(Clone, Copy)]
    struct PortVl {
        bytes: u64,
        waiting: u64,
        credits: u64,
        host: bool,
    }
    impl QueueState for PortVl {
        fn bytes(&self) -> u64 {
            self.bytes
        }
        fn blocked(&self) -> bool {
            self.credits == 0
        }
        fn faces_host(&self) -> bool {
            self.host
        }
        fn waiting(&self) -> u64 {
            self.waiting
        }
        fn credits(&self) -> u64 {
            self.credits
        }
        fn isolation_points_here(&self) -> bool {
            true
        }
    }

    const BUFFER: u64 = 32 * 1024;
    const ROOT: PortVl = PortVl { bytes: 8_192, waiting: 0, credits: u64::MAX, host: false };

    fn fecn(config: FecnConfig) -> Fecn {
        Fecn::new(&config, BUFFER, 7)
    }

    fn data(size: u32) -> Packet {
        Packet { size, ..Default::default() }
    }

    #[test]
    fn the_weight_maps_onto_the_port_vl_buffer() {
        assert_eq!(threshold_bytes(15, BUFFER), 2_048, "w = 15: 1/16 of the buffer");
        assert_eq!(threshold_bytes(8, BUFFER), 16_384);
        assert_eq!(threshold_bytes(1, BUFFER), 30_720, "w = 1: 15/16");
        assert_eq!(threshold_bytes(0, BUFFER), u64::MAX, "w = 0 never marks");
    }

    #[test]
    fn marks_above_the_threshold_counting_waiting_bytes() {
        let mut m = fecn(FecnConfig::default());
        let below = PortVl { bytes: 1_024, waiting: 1_024, ..ROOT };
        let mut p = data(4096);
        assert!(!m.on_dequeue(&below, &mut p), "2 KiB is not above 2 KiB");
        assert_eq!(p.kind, PacketKind::DATA);
        let above = PortVl { waiting: 1_025, ..below };
        assert!(m.on_dequeue(&above, &mut p), "waiting bytes count");
        assert_eq!(p.kind, PacketKind::FECN);
        assert!(!m.on_dequeue(&above, &mut p), "a marked packet is not marked again");
        let mut q = data(4096);
        assert!(!m.on_enqueue(&ROOT, &mut q), "never at enqueue");
        let mut never = fecn(FecnConfig { threshold: 0, ..FecnConfig::default() });
        let full = PortVl { bytes: u64::MAX / 4, ..ROOT };
        assert!(!never.on_dequeue(&full, &mut q), "threshold 0 never marks");
    }

    #[test]
    fn victims_stay_quiet_unless_masked() {
        let mut p = data(4096);
        // Credits for this packet only: a victim of back-pressure.
        let victim = PortVl { credits: 4096 + 4095, ..ROOT };
        let root = PortVl { credits: 2 * 4096, ..ROOT };
        let mut host_ports = fecn(FecnConfig::default());
        assert!(!host_ports.on_dequeue(&victim, &mut p), "a switch-facing victim");
        assert!(host_ports.on_dequeue(&root, &mut p.clone()), "credits for two packets: a root");
        assert!(host_ports.on_dequeue(&PortVl { host: true, ..victim }, &mut p.clone()), "host ports are masked");
        let mut none = fecn(FecnConfig { victim_mask: VictimMask::None, ..FecnConfig::default() });
        assert!(!none.on_dequeue(&PortVl { host: true, ..victim }, &mut p.clone()));
        let mut all = fecn(FecnConfig { victim_mask: VictimMask::All, ..FecnConfig::default() });
        assert!(all.on_dequeue(&victim, &mut p));
    }

    #[test]
    fn only_large_enough_data_packets_are_eligible() {
        let mut m = fecn(FecnConfig { packet_size: Bytes(1_000), ..FecnConfig::default() });
        let mut small = data(999);
        assert!(!m.on_dequeue(&ROOT, &mut small));
        let mut becn = Packet { kind: PacketKind::BECN, ..data(4096) };
        assert!(!m.on_dequeue(&ROOT, &mut becn));
        assert_eq!(becn.kind, PacketKind::BECN);
        assert!(m.on_dequeue(&ROOT, &mut data(1_000)));
    }

    #[test]
    fn the_marking_rate_leaves_that_many_unmarked_between_marks_on_average() {
        let mut every = fecn(FecnConfig::default());
        assert!((0..1000).all(|_| every.on_dequeue(&ROOT, &mut data(4096))));
        let mut m = fecn(FecnConfig { marking_rate: 3, ..FecnConfig::default() });
        let n = 200_000;
        let marked = (0..n).filter(|_| m.on_dequeue(&ROOT, &mut data(4096))).count();
        // One in 4: 50000 expected, sd ~194.
        assert!((49_000..=51_000).contains(&marked), "{marked}");
    }
}
