//! Flow completion times (a flow is a message): FCT = delivery of the last packet −
//! generation of the message, and slowdown = FCT / ideal FCT, where the ideal is the FCT
//! of the message alone on an empty network over the path it took. Overall, per sending
//! group and per flow-size bucket; O(1) per flow, no allocation after construction.

use super::Latency;
use crate::report::{FctBucket, FctSummary, LatencyStats};
use crate::units::{Rate, SerialTime};

/// Flow-size buckets: `[min, max)` in bytes (1 KB = 1000 bytes); the last is open.
pub const BUCKETS: [(&str, u64, Option<u64>); 4] = [
    ("<10KB", 0, Some(10_000)),
    ("10KB-100KB", 10_000, Some(100_000)),
    ("100KB-1MB", 100_000, Some(1_000_000)),
    (">=1MB", 1_000_000, None),
];

/// The bucket of a flow of `bytes`.
#[inline]
fn bucket(bytes: u64) -> usize {
    BUCKETS.iter().rposition(|&(_, min, _)| bytes >= min).unwrap_or(0)
}

/// What the ideal FCT depends on: the fabric at zero load.
#[derive(Clone, Copy, Debug)]
pub struct IdealFct {
    pub host_rate: Rate,
    /// Host-link propagation latency, ps.
    pub host_latency: u64,
    /// Switch-to-switch link propagation latency, ps.
    pub switch_link_latency: u64,
    /// Switch traversal latency, ps.
    pub switch_latency: u64,
    /// What the wire adds to each packet (none by default).
    pub per_packet: PerPacket,
}

/// The bytes the wire adds to every packet (`[nic] header` and `framing`) and the largest
/// payload a packet carries: a flow alone on the fabric still sends them.
#[derive(Clone, Copy, Debug, Default)]
pub struct PerPacket {
    pub mtu: u64,
    pub bytes: u64,
}

impl IdealFct {
    /// Ideal FCT in ps of a flow of `bytes` whose packets crossed `hops` links:
    /// serialisation of the whole flow (its packets' headers and framing included) at the
    /// host rate + the propagation of every link (two host links and hops − 2 switch
    /// links; one host link back to back) + hops − 1 switch traversals.
    #[inline]
    pub fn ideal(&self, bytes: u64, hops: u16) -> u64 {
        self.with_serialisation(self.host_rate.serialize(self.on_wire(bytes)), hops)
    }

    /// The link time of a flow of `bytes` of payload, in bytes: with the header and
    /// framing of each of its packets.
    #[inline]
    pub fn on_wire(&self, bytes: u64) -> u64 {
        let extra = self.per_packet.bytes;
        if extra == 0 {
            return bytes;
        }
        bytes + bytes.div_ceil(self.per_packet.mtu.max(1)) * extra
    }

    /// The ideal FCT of a flow whose serialisation at the host rate takes `serialise` ps.
    #[inline]
    fn with_serialisation(&self, serialise: u64, hops: u16) -> u64 {
        let hops = hops.max(1) as u64;
        let links =
            if hops == 1 { self.host_latency } else { 2 * self.host_latency + (hops - 2) * self.switch_link_latency };
        serialise + links + (hops - 1) * self.switch_latency
    }
}

/// Slowdowns are recorded in millionths.
const SLOWDOWN_SCALE: f64 = 1e6;

/// A distribution of slowdowns: a latency histogram of millionths (same bounds and
/// precision, up to a slowdown of 10⁷).
#[derive(Clone, Default)]
pub struct Slowdown(Latency);

impl Slowdown {
    #[inline]
    pub fn record(&mut self, slowdown: f64) {
        self.0.record((slowdown * SLOWDOWN_SCALE).round() as u64);
    }

    pub fn merge(&mut self, other: &Slowdown) {
        self.0.merge(&other.0);
    }

    pub fn stats(&self) -> LatencyStats {
        self.0.stats(SLOWDOWN_SCALE)
    }
}

/// FCT and slowdown distributions of one set of flows.
#[derive(Clone, Default)]
pub struct FctDist {
    pub fct: Latency,
    pub slowdown: Slowdown,
}

impl FctDist {
    #[inline]
    fn record(&mut self, fct: u64, slowdown: f64) {
        self.fct.record(fct);
        self.slowdown.record(slowdown);
    }

    pub fn merge(&mut self, other: &FctDist) {
        self.fct.merge(&other.fct);
        self.slowdown.merge(&other.slowdown);
    }

    pub fn flows(&self) -> u64 {
        self.fct.count()
    }
}

/// FCT statistics per group and per size bucket.
pub struct Fct {
    ideal: IdealFct,
    host_serial: SerialTime,
    /// Per sending group. A run of one group has exactly the flows of the buckets in it:
    /// it is filled from them once the run is over (`settle`), so that each flow is
    /// recorded once, not twice.
    pub groups: Vec<FctDist>,
    buckets: Vec<FctDist>,
    /// Flows are recorded per group as they complete (the run has several groups).
    per_group: bool,
}

impl Fct {
    pub fn new(ideal: IdealFct, groups: usize) -> Fct {
        Fct {
            ideal,
            host_serial: SerialTime::new(ideal.host_rate),
            groups: vec![FctDist::default(); groups],
            buckets: vec![FctDist::default(); BUCKETS.len()],
            per_group: groups > 1,
        }
    }

    /// A flow of `bytes` sent by `group` completed after `fct` ps, its last packet
    /// having crossed `hops` links.
    #[inline]
    pub fn record(&mut self, group: u16, bytes: u64, fct: u64, hops: u16) {
        // Fixed-point serialisation (within 1 ps of the exact one) keeps a 128-bit
        // division off the per-message path.
        let ideal = self.ideal.with_serialisation(self.host_serial.time(self.ideal.on_wire(bytes)), hops);
        let slowdown = fct as f64 / ideal as f64;
        if self.per_group {
            self.groups[group as usize].record(fct, slowdown);
        }
        self.buckets[bucket(bytes)].record(fct, slowdown);
    }

    /// Makes `groups` complete: a run of one group gathers its flows from the buckets
    /// (histograms merged count by count, as if each flow had been recorded there).
    pub fn settle(&mut self) {
        if !self.per_group {
            if let Some(only) = self.groups.first_mut() {
                *only = FctDist::default();
                self.buckets.iter().for_each(|b| only.merge(b));
            }
        }
    }

    /// The summary over all groups, FCTs in units of `ps_per_unit` picoseconds.
    pub fn summary(&self, ps_per_unit: f64) -> FctSummary {
        // Every flow is in exactly one bucket: their union is that of the groups.
        let mut all = FctDist::default();
        for b in &self.buckets {
            all.merge(b);
        }
        let buckets = BUCKETS
            .iter()
            .zip(&self.buckets)
            .map(|(&(label, min_bytes, max_bytes), d)| FctBucket {
                label: label.to_string(),
                min_bytes,
                max_bytes,
                flows: d.flows(),
                fct: d.fct.stats(ps_per_unit),
                slowdown: d.slowdown.stats(),
            })
            .collect();
        FctSummary { flows: all.flows(), fct: all.fct.stats(ps_per_unit), slowdown: all.slowdown.stats(), buckets }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDEAL: IdealFct = IdealFct {
        host_rate: Rate(100_000_000_000),
        host_latency: 25_000,
        switch_link_latency: 50_000,
        switch_latency: 100_000,
        per_packet: PerPacket { mtu: 0, bytes: 0 },
    };

    #[test]
    fn ideal_fct_adds_serialisation_links_and_switches() {
        // 10 000 bytes at 100 Gb/s: 800 ns.
        assert_eq!(IDEAL.ideal(10_000, 1), 800_000 + 25_000);
        assert_eq!(IDEAL.ideal(10_000, 2), 800_000 + 50_000 + 100_000);
        // 4 KiB packets with 62 bytes of header and 20 of framing: three packets, 246
        // bytes more on the wire (19.68 ns at 100 Gb/s).
        let framed = IdealFct { per_packet: PerPacket { mtu: 4096, bytes: 82 }, ..IDEAL };
        assert_eq!(framed.ideal(10_000, 1), 800_000 + 19_680 + 25_000);
        assert_eq!(IDEAL.ideal(10_000, 4), 800_000 + 50_000 + 2 * 50_000 + 3 * 100_000);
    }

    #[test]
    fn buckets_split_at_decades() {
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(9_999), 0);
        assert_eq!(bucket(10_000), 1);
        assert_eq!(bucket(999_999), 2);
        assert_eq!(bucket(1_000_000), 3);
        assert_eq!(bucket(u64::MAX), 3);
    }

    #[test]
    fn flows_are_counted_overall_per_group_and_per_bucket() {
        let mut f = Fct::new(IDEAL, 2);
        f.record(0, 10_000, IDEAL.ideal(10_000, 2), 2);
        f.record(1, 100, 2 * IDEAL.ideal(100, 2), 2);
        let s = f.summary(1000.0);
        assert_eq!(s.flows, 2);
        assert_eq!(s.buckets.iter().map(|b| b.flows).collect::<Vec<_>>(), [1, 1, 0, 0]);
        assert!((s.slowdown.p50 - 1.0).abs() < 2e-3 && (s.slowdown.max - 2.0).abs() < 2e-3, "{s:?}");
        assert!((f.groups[1].slowdown.stats().mean - 2.0).abs() < 2e-3);
    }

    #[test]
    fn one_group_has_the_flows_of_all_buckets() {
        let flows = [(10_000, 3, 2), (100, 2, 2), (2_000_000, 5, 4), (100, 1, 6)];
        let (mut one, mut two) = (Fct::new(IDEAL, 1), Fct::new(IDEAL, 2));
        for (bytes, times, hops) in flows {
            one.record(0, bytes, times * IDEAL.ideal(bytes, hops), hops);
            two.record(0, bytes, times * IDEAL.ideal(bytes, hops), hops);
        }
        one.settle();
        one.settle();
        let (got, want) = (&one.groups[0], &two.groups[0]);
        assert_eq!(got.flows(), 4);
        assert_eq!(format!("{:?}", got.fct.stats(1.0)), format!("{:?}", want.fct.stats(1.0)));
        assert_eq!(format!("{:?}", got.slowdown.stats()), format!("{:?}", want.slowdown.stats()));
        assert_eq!(format!("{:?}", one.summary(1.0)), format!("{:?}", two.summary(1.0)));
    }
}
