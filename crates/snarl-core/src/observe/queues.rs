//! Queue probes: the time-weighted occupancy of chosen egress queues. Each change of a
//! probed queue closes the interval during which it held its previous value; the
//! interval's length is that value's weight in an HDR histogram, so quantiles are
//! fractions of time ("the queue held at most p95 bytes 95% of the time").

use crate::report::QueueSummary;
use hdrhistogram::Histogram;

pub struct QueueProbe {
    pub switch: u32,
    pub port: u32,
    pub priority: u32,
    bytes: u64,
    since: u64,
    /// Weight: picoseconds spent at each occupancy (bytes), from the measurement start.
    time_at: Histogram<u64>,
}

pub struct QueueProbes {
    measure_from: u64,
    pub probes: Vec<QueueProbe>,
}

impl QueueProbes {
    pub fn new(measure_from: u64) -> QueueProbes {
        QueueProbes { measure_from, probes: Vec::new() }
    }

    /// Adds a probe; returns its index.
    pub fn add(&mut self, switch: u32, port: u32, priority: u32) -> u16 {
        let time_at = Histogram::new_with_bounds(1, 1 << 40, 3).expect("static histogram bounds");
        self.probes.push(QueueProbe { switch, port, priority, bytes: 0, since: 0, time_at });
        (self.probes.len() - 1) as u16
    }

    /// Probe `index` now holds `bytes`.
    #[inline]
    pub fn record(&mut self, index: u16, now: u64, bytes: u64) {
        let from = self.measure_from;
        let p = &mut self.probes[index as usize];
        close(p, from, now);
        p.bytes = bytes;
        p.since = now;
    }

    pub fn summarise(&mut self, end: u64) -> Vec<QueueSummary> {
        let from = self.measure_from;
        self.probes
            .iter_mut()
            .map(|p| {
                close(p, from, end);
                p.since = end;
                let h = &p.time_at;
                let q = |x: f64| if h.is_empty() { 0 } else { h.value_at_quantile(x) };
                QueueSummary {
                    switch: p.switch,
                    port: p.port,
                    priority: p.priority,
                    mean_bytes: if h.is_empty() { 0.0 } else { h.mean() },
                    p5_bytes: q(0.05),
                    p25_bytes: q(0.25),
                    p50_bytes: q(0.50),
                    p75_bytes: q(0.75),
                    p95_bytes: q(0.95),
                    p99_bytes: q(0.99),
                    max_bytes: h.max(),
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
        // Zero bytes is recorded as the histogram's lowest value, 1 byte.
        p.time_at.saturating_record_n(p.bytes.max(1), now - start);
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
        let s = &probes.summarise(1200)[0];
        // 100 ps at 8000 B, 900 ps at 1000 B, 100 ps at 0 B.
        assert_eq!((s.switch, s.port, s.priority), (3, 4, 0));
        assert!((s.p50_bytes as f64 - 1000.0).abs() <= 1.0);
        assert!((s.max_bytes as f64 - 8000.0).abs() <= 8.0);
        assert!(s.p5_bytes <= 1, "the empty queue is 1/11 of the time");
        let mean = (100.0 * 8000.0 + 900.0 * 1000.0 + 100.0) / 1100.0;
        assert!((s.mean_bytes - mean).abs() / mean < 0.01, "mean {} vs {mean}", s.mean_bytes);
    }
}
