//! Latency distributions: HDR histograms (3 significant digits) in picoseconds, O(1) per
//! record and no allocation after construction.

use crate::report::LatencyStats;
use hdrhistogram::Histogram;

/// Up to 10 simulated seconds.
const MAX_PS: u64 = 10_000_000_000_000;

#[derive(Clone)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Latency(Histogram::new_with_bounds(1, MAX_PS, 3).expect("static histogram bounds"))
    }
}

impl Latency {
    /// Bytes of one histogram's counts, for the memory estimate.
    pub fn heap_bytes() -> u64 {
        (Latency::default().0.distinct_values() * size_of::<u64>()) as u64
    }

    #[inline]
    pub fn record(&mut self, ps: u64) {
        self.0.saturating_record(ps);
    }

    pub fn merge(&mut self, other: &Latency) {
        self.0.add(&other.0).expect("histograms share their bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Statistics in units of `ps_per_unit` picoseconds.
    pub fn stats(&self, ps_per_unit: f64) -> LatencyStats {
        if self.0.is_empty() {
            return LatencyStats::default();
        }
        let q = |x: f64| self.0.value_at_quantile(x) as f64 / ps_per_unit;
        LatencyStats {
            mean: self.0.mean() / ps_per_unit,
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
            max: self.0.max() as f64 / ps_per_unit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_precision() {
        let mut l = Latency::default();
        for v in 1..=1000u64 {
            l.record(v * 1000);
        }
        let s = l.stats(1000.0);
        assert!((s.mean - 500.5).abs() < 1.0, "{s:?}");
        assert!((s.p50 - 500.0).abs() <= 1.0 && (s.p99 - 990.0).abs() <= 1.0 && (s.max - 1000.0).abs() <= 1.0, "{s:?}");
    }
}
