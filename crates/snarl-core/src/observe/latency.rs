//! Latency distributions: HDR histograms (3 significant digits: quantiles within 0.1% of
//! the true value) in picoseconds, with the count, sum, minimum and maximum kept exactly
//! beside them. O(1) per record and no allocation after construction. (4 digits would
//! take 8 times the memory, and reading the quantiles of every group's histograms at the
//! end of a run would cost as much as a short run itself.)

use crate::report::LatencyStats;
use hdrhistogram::Histogram;

/// Up to 10 simulated seconds.
const MAX_PS: u64 = 10_000_000_000_000;

/// Significant decimal digits of the quantiles.
pub const SIGNIFICANT_DIGITS: u8 = 3;

#[derive(Clone)]
pub struct Latency {
    histogram: Histogram<u64>,
    /// Exact: the sum of the recorded values, their least and greatest.
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            histogram: Histogram::new_with_bounds(1, MAX_PS, SIGNIFICANT_DIGITS).expect("static histogram bounds"),
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Latency {
    /// Bytes of one histogram's counts, for the memory estimate.
    pub fn heap_bytes() -> u64 {
        (Latency::default().histogram.distinct_values() * size_of::<u64>()) as u64
    }

    #[inline]
    pub fn record(&mut self, ps: u64) {
        self.histogram.saturating_record(ps);
        self.sum += ps as u128;
        self.min = self.min.min(ps);
        self.max = self.max.max(ps);
    }

    pub fn merge(&mut self, other: &Latency) {
        self.histogram.add(&other.histogram).expect("histograms share their bounds");
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// Statistics in units of `ps_per_unit` picoseconds: the mean, minimum and maximum
    /// exact, the quantiles from the histogram, kept within [minimum, maximum]; nothing
    /// (every figure NaN) without samples.
    pub fn stats(&self, ps_per_unit: f64) -> LatencyStats {
        if self.histogram.is_empty() {
            return LatencyStats::default();
        }
        let (min, max) = (self.min, self.max);
        let q = |x: f64| self.histogram.value_at_quantile(x).clamp(min, max) as f64 / ps_per_unit;
        LatencyStats {
            mean: self.sum as f64 / self.count() as f64 / ps_per_unit,
            min: min as f64 / ps_per_unit,
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
            max: max as f64 / ps_per_unit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_precision_and_extremes_exact() {
        let mut l = Latency::default();
        for v in 1..=1000u64 {
            l.record(v * 1000 + 7);
        }
        let s = l.stats(1000.0);
        let near = |got: f64, want: f64| (got - want).abs() <= want * 1e-3 + 0.01;
        assert!((s.mean - 500.507).abs() < 1e-9, "{s:?}");
        assert_eq!((s.min, s.max), (1.007, 1000.007));
        assert!(near(s.p50, 500.007) && near(s.p95, 950.007) && near(s.p99, 990.007), "{s:?}");
    }

    #[test]
    fn quantiles_never_leave_the_extremes() {
        let mut l = Latency::default();
        for _ in 0..10 {
            l.record(54_886_123);
        }
        let s = l.stats(1000.0);
        assert_eq!((s.min, s.p50, s.p99, s.max), (54_886.123, 54_886.123, 54_886.123, 54_886.123));
    }

    #[test]
    fn no_samples_report_nothing() {
        let s = Latency::default().stats(1000.0);
        assert!(s.is_empty() && s.mean.is_nan() && s.p99.is_nan());
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"mean":null,"min":null,"p50":null,"p95":null,"p99":null,"max":null}"#
        );
    }
}
