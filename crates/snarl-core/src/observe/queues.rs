//! Queue probes: the time-weighted occupancy of chosen egress queues. Each change of a
//! probed queue closes the interval during which it held its previous value; the
//! interval's length is that value's weight in an HDR histogram, so quantiles are
//! fractions of time ("the queue held at most p95 bytes 95% of the time"), within 0.1%
//! and never outside the least and greatest occupancy held, which are kept exactly, as
//! is the time-weighted mean.

use super::{Collector, Finish, TraceEvent};
use crate::report::text::int;
use crate::report::{Section, Summary};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub struct QueueProbe {
    pub switch: u32,
    pub port: u32,
    pub priority: u32,
    bytes: u64,
    since: u64,
    /// Weight: picoseconds spent at each occupancy (bytes), from the measurement start.
    time_at: Histogram<u64>,
    /// Exact: bytes times picoseconds, picoseconds, and the least and greatest occupancy
    /// held for some time, from the measurement start.
    weighted: u128,
    held: u64,
    least: u64,
    most: u64,
    /// Bytes that left the queue (onto its link) from the measurement start.
    sent: u64,
}

pub struct QueueProbes {
    measure_from: u64,
    /// ECN marking thresholds (Kmin, Kmax), when the fabric marks.
    ecn: Option<(u64, u64)>,
    pub probes: Vec<QueueProbe>,
}

/// Time spent at each occupancy, in bytes up to 1 TiB.
fn occupancy_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 40, 3).expect("static histogram bounds")
}

impl QueueProbes {
    pub fn new(measure_from: u64) -> QueueProbes {
        QueueProbes { measure_from, ecn: None, probes: Vec::new() }
    }

    /// Also report the time spent below, between and above the marking thresholds.
    pub fn set_ecn_thresholds(&mut self, kmin: u64, kmax: u64) {
        self.ecn = Some((kmin, kmax));
    }

    /// Bytes of one probe's histogram, for the memory estimate.
    pub fn probe_heap_bytes() -> u64 {
        (occupancy_histogram().distinct_values() * size_of::<u64>()) as u64
    }

    /// Adds a probe; returns its index.
    pub fn add(&mut self, switch: u32, port: u32, priority: u32) -> u16 {
        let time_at = occupancy_histogram();
        let probe = QueueProbe {
            switch,
            port,
            priority,
            bytes: 0,
            since: 0,
            time_at,
            weighted: 0,
            held: 0,
            least: u64::MAX,
            most: 0,
            sent: 0,
        };
        self.probes.push(probe);
        (self.probes.len() - 1) as u16
    }

    /// Probe `index` now holds `bytes`.
    #[inline]
    pub fn record(&mut self, index: u16, now: u64, bytes: u64) {
        let from = self.measure_from;
        let p = &mut self.probes[index as usize];
        close(p, from, now);
        // A queue changes a packet at a time: a fall is a packet leaving for the link.
        if now >= from {
            p.sent += p.bytes.saturating_sub(bytes);
        }
        p.bytes = bytes;
        p.since = now;
    }

    pub fn summaries(&mut self, end: u64) -> Vec<QueueSummary> {
        let (from, ecn) = (self.measure_from, self.ecn);
        self.probes
            .iter_mut()
            .map(|p| {
                close(p, from, end);
                p.since = end;
                let h = &p.time_at;
                let (least, most) = (p.least.min(p.most), p.most);
                let q = |x: f64| if h.is_empty() { 0 } else { h.value_at_quantile(x).clamp(least, most) };
                QueueSummary {
                    switch: p.switch,
                    port: p.port,
                    priority: p.priority,
                    mean_bytes: if p.held == 0 { 0.0 } else { p.weighted as f64 / p.held as f64 },
                    p5_bytes: q(0.05),
                    p25_bytes: q(0.25),
                    p50_bytes: q(0.50),
                    p75_bytes: q(0.75),
                    p95_bytes: q(0.95),
                    p99_bytes: q(0.99),
                    max_bytes: most,
                    sent_bytes: p.sent,
                    ecn_band: ecn.filter(|_| !h.is_empty()).map(|(kmin, kmax)| {
                        let total = h.len() as f64;
                        let below = h.count_between(0, kmin) as f64 / total;
                        // A bucket of the histogram holding both thresholds (Kmin = Kmax,
                        // or closer than its precision) counts on both sides: its samples
                        // above Kmax are the ones not below Kmin.
                        let above = (h.count_between(kmax + 1, u64::MAX) as f64 / total).min(1.0 - below);
                        EcnBand { below_kmin: below, between: 1.0 - below - above, above_kmax: above }
                    }),
                }
            })
            .collect()
    }
}

/// Weighs the probe's current value by the time it has held it (after `from`).
#[inline]
fn close(p: &mut QueueProbe, from: u64, now: u64) {
    let start = p.since.max(from);
    if now > start {
        let time = now - start;
        p.time_at.saturating_record_n(p.bytes, time);
        p.weighted += p.bytes as u128 * time as u128;
        p.held += time;
        p.least = p.least.min(p.bytes);
        p.most = p.most.max(p.bytes);
    }
}

impl Collector for QueueProbes {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        if let TraceEvent::QueueLength { probe, bytes } = *event {
            self.record(probe, now, bytes);
        }
    }

    fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        let queues = self.summaries(finish.end);
        let section = Section::new(SECTION, &queues).at(POSITION);
        summary.sections.set(queues.iter().fold(section, |s, q| s.note(q.note())));
    }
}

/// The summary's section of the probed queues (a list, in config order), and its
/// position among the sections.
pub const SECTION: &str = "queues";
pub const POSITION: u32 = 200;

/// Time-weighted occupancy of one probed egress queue over the measurement interval:
/// `pXX_bytes` is the occupancy the queue did not exceed XX% of the time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueSummary {
    pub switch: u32,
    pub port: u32,
    pub priority: u32,
    pub mean_bytes: f64,
    pub p5_bytes: u64,
    pub p25_bytes: u64,
    pub p50_bytes: u64,
    pub p75_bytes: u64,
    pub p95_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    /// Bytes that left the queue for its link over the interval, headers included: the
    /// load the link carried (per priority).
    pub sent_bytes: u64,
    /// Fractions of the time below Kmin, between Kmin and Kmax, and above Kmax (runs
    /// with ECN marking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_band: Option<EcnBand>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EcnBand {
    pub below_kmin: f64,
    pub between: f64,
    pub above_kmax: f64,
}

impl QueueSummary {
    /// Its line in the printout of a run.
    pub fn note(&self) -> String {
        let band = self.ecn_band.as_ref().map_or(String::new(), |b| {
            format!(", {}% of the time between Kmin and Kmax", crate::report::text::num(100.0 * b.between, 1))
        });
        format!(
            "queue switch {} port {} priority {}: mean {} B, p50 {} B, p99 {} B, max {} B{band}",
            self.switch,
            self.port,
            self.priority,
            int(self.mean_bytes.round_ties_even() as u64),
            int(self.p50_bytes),
            int(self.p99_bytes),
            int(self.max_bytes),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_weigh_values_by_the_time_they_were_held() {
        let mut probes = QueueProbes::new(100);
        let i = probes.add(3, 4, 0);
        probes.record(i, 50, 8000); // before the measurement: only [100, 200) counts
        probes.record(i, 200, 1000);
        probes.record(i, 1100, 0);
        let s = &probes.summaries(1200)[0];
        // 100 ps at 8000 B, 900 ps at 1000 B, 100 ps at 0 B.
        assert_eq!((s.switch, s.port, s.priority), (3, 4, 0));
        assert!((s.p50_bytes as f64 - 1000.0).abs() <= 1.0);
        assert_eq!(s.max_bytes, 8000, "exact");
        assert_eq!(s.p5_bytes, 0, "the empty queue is 1/11 of the time");
        let mean = (100.0 * 8000.0 + 900.0 * 1000.0) / 1100.0;
        assert!((s.mean_bytes - mean).abs() < 1e-9, "mean {} vs {mean}, exact", s.mean_bytes);
        assert!(s.ecn_band.is_none(), "no thresholds, no band");
        assert_eq!(s.sent_bytes, 7000 + 1000, "falls after the measurement start: at 200 and at 1100");
    }

    #[test]
    fn an_empty_queue_reports_zero_and_a_capped_one_its_cap() {
        let mut probes = QueueProbes::new(0);
        let (empty, full) = (probes.add(0, 0, 0), probes.add(0, 1, 0));
        probes.record(full, 100, 262_144);
        let s = probes.summaries(1_000);
        let _ = empty;
        assert_eq!((s[0].mean_bytes, s[0].p50_bytes, s[0].p99_bytes, s[0].max_bytes), (0.0, 0, 0, 0));
        assert_eq!((s[1].p99_bytes, s[1].max_bytes), (262_144, 262_144), "quantiles within the cap");
    }

    #[test]
    fn time_in_the_marking_band() {
        let mut probes = QueueProbes::new(0);
        probes.set_ecn_thresholds(5_000, 200_000);
        let i = probes.add(0, 0, 0);
        probes.record(i, 100, 100_000); // [0, 100): empty, below Kmin
        probes.record(i, 400, 300_000); // [100, 400): in the band
        let band = probes.summaries(500)[0].ecn_band.clone().unwrap(); // [400, 500): above
        assert!((band.below_kmin - 0.2).abs() < 1e-9 && (band.between - 0.6).abs() < 1e-9, "{band:?}");
        assert!((band.above_kmax - 0.2).abs() < 1e-9, "{band:?}");
    }

    #[test]
    fn a_single_threshold_has_an_empty_band() {
        let mut probes = QueueProbes::new(0);
        probes.set_ecn_thresholds(16_384, 16_384);
        let i = probes.add(0, 0, 0);
        probes.record(i, 100, 16_384); // at the threshold: not above it
        probes.record(i, 300, 16_399); // above it, in the same bucket of the histogram
        let band = probes.summaries(400)[0].ecn_band.clone().unwrap();
        assert!(band.between >= 0.0 && band.between < 1e-9, "{band:?}");
        assert!((band.below_kmin + band.above_kmax - 1.0).abs() < 1e-9, "{band:?}");
    }
}
