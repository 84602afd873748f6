//! Flow sizes drawn from published data-center CDFs.
//!
//! Each built-in distribution is a CSV file in `data/flow_sizes/` (columns `bytes,cdf`,
//! `#` comments naming the source), embedded in the binary. A size is drawn by inverse
//! transform: a uniform u in [0, 1) is located between the two points whose CDF values
//! bracket it, and the size is interpolated linearly between their sizes (the CDF is
//! taken as piecewise linear). If the first point's CDF is above 0, that fraction of the
//! flows has exactly the first size. The result is rounded to whole bytes, at least 1.
//! One draw costs one random number and a binary search; nothing is allocated.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// The built-in distributions: name and CSV text.
const BUILT_IN: [(&str, &str); 4] = [
    ("web_search", include_str!("../../data/flow_sizes/web_search.csv")),
    ("google_all", include_str!("../../data/flow_sizes/google_all.csv")),
    ("hadoop", include_str!("../../data/flow_sizes/hadoop.csv")),
    ("fb_hadoop", include_str!("../../data/flow_sizes/fb_hadoop.csv")),
];

/// Names of the built-in distributions, for validation and hints.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILT_IN.iter().map(|(name, _)| *name)
}

/// A flow-size CDF: sizes in bytes (increasing) and cumulative fractions
/// (non-decreasing, the last one 1).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizes {
    pub name: String,
    bytes: Vec<f64>,
    cdf: Vec<f64>,
    mean: f64,
}

impl FlowSizes {
    /// The built-in distribution `name`, if there is one.
    pub fn built_in(name: &str) -> Option<FlowSizes> {
        let (name, text) = BUILT_IN.iter().find(|(n, _)| *n == name)?;
        Some(FlowSizes::parse(name, text).expect("built-in CSVs are valid"))
    }

    /// Parses `bytes,cdf` lines (a header line and `#` comments are skipped).
    pub fn parse(name: &str, text: &str) -> Result<FlowSizes, String> {
        let (mut bytes, mut cdf) = (Vec::new(), Vec::new());
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line == "bytes,cdf" {
                continue;
            }
            let bad = || format!("line {}: expected `bytes,cdf`, found `{line}`", n + 1);
            let (b, c) = line.split_once(',').ok_or_else(bad)?;
            let b: f64 = b.trim().parse().map_err(|_| bad())?;
            let c: f64 = c.trim().parse().map_err(|_| bad())?;
            let increasing = bytes.last().is_none_or(|&last| b > last) && cdf.last().is_none_or(|&last| c >= last);
            if !(b.is_finite() && b >= 0.0 && (0.0..=1.0).contains(&c) && increasing) {
                return Err(format!("line {}: sizes must increase and the CDF must not decrease within [0, 1]", n + 1));
            }
            bytes.push(b);
            cdf.push(c);
        }
        if cdf.last() != Some(&1.0) {
            return Err("the CDF must end at 1".into());
        }
        let mut mean = bytes[0] * cdf[0];
        for i in 1..bytes.len() {
            mean += (cdf[i] - cdf[i - 1]) * (bytes[i - 1] + bytes[i]) / 2.0;
        }
        Ok(FlowSizes { name: name.to_string(), bytes, cdf, mean })
    }

    /// The mean size in bytes of the piecewise-linear CDF (before rounding to bytes).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The size at cumulative fraction `u` in [0, 1), in bytes (at least 1).
    #[inline]
    pub fn quantile(&self, u: f64) -> u64 {
        // First point whose CDF reaches u; u < 1 = the last CDF, so it exists.
        let i = self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1);
        let size = if i == 0 {
            self.bytes[0]
        } else {
            let (c0, c1) = (self.cdf[i - 1], self.cdf[i]);
            let (b0, b1) = (self.bytes[i - 1], self.bytes[i]);
            if c1 > c0 {
                b0 + (b1 - b0) * (u - c0) / (c1 - c0)
            } else {
                b1
            }
        };
        (size.round() as u64).max(1)
    }

    /// Draws one size (one random number from `rng`).
    #[inline]
    pub fn sample(&self, rng: &mut Pcg64Mcg) -> u64 {
        self.quantile(rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Standard deviation of the piecewise-linear distribution (uniform within segments).
    fn std_dev(d: &FlowSizes) -> f64 {
        let mut m2 = d.bytes[0] * d.bytes[0] * d.cdf[0];
        for i in 1..d.bytes.len() {
            let (a, b) = (d.bytes[i - 1], d.bytes[i]);
            m2 += (d.cdf[i] - d.cdf[i - 1]) * (a * a + a * b + b * b) / 3.0;
        }
        (m2 - d.mean * d.mean).sqrt()
    }

    /// On an even grid of 10⁶ fractions the quantiles average to the analytic mean
    /// within 0.1% (the only difference is rounding to whole bytes); 10⁶ random draws
    /// average to it within 5 standard errors (the tails are heavy: one standard error
    /// is 0.2% of the mean for web_search and 4.6% for google_all).
    #[test]
    fn sampled_mean_matches_the_cdf_mean() {
        let n = 1_000_000;
        for name in names() {
            let d = FlowSizes::built_in(name).unwrap();
            let grid = (0..n).map(|i| d.quantile((i as f64 + 0.5) / n as f64) as f64).sum::<f64>() / n as f64;
            assert!((grid / d.mean() - 1.0).abs() < 1e-3, "{name}: grid mean {grid} vs {}", d.mean());
            let mut rng = Pcg64Mcg::seed_from_u64(11);
            let drawn = (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let tolerance = 5.0 * std_dev(&d) / (n as f64).sqrt();
            assert!((drawn - d.mean()).abs() < tolerance, "{name}: drawn mean {drawn} vs {} ± {tolerance}", d.mean());
        }
    }

    #[test]
    fn means_of_the_built_in_tables() {
        let mean = |name| FlowSizes::built_in(name).unwrap().mean();
        assert!((mean("web_search") - 1_711_250.0).abs() < 1.0);
        assert!((mean("google_all") - 864.155).abs() < 0.01);
        assert!((mean("hadoop") - 134_854.2).abs() < 0.1);
        assert!((mean("fb_hadoop") - 120_420.75).abs() < 0.01);
    }

    #[test]
    fn quantiles_interpolate_and_clamp() {
        let d = FlowSizes::parse("t", "bytes,cdf\n100,0.5\n300,1\n").unwrap();
        assert_eq!(d.quantile(0.0), 100); // the first point's mass
        assert_eq!(d.quantile(0.5), 100);
        assert_eq!(d.quantile(0.75), 200);
        assert_eq!(d.quantile(0.999_999_9), 300);
        assert_eq!(d.mean(), 150.0);
        let zero = FlowSizes::parse("z", "0,0\n10,1\n").unwrap();
        assert_eq!(zero.quantile(0.0), 1, "at least one byte");
        assert!(FlowSizes::parse("x", "10,0.5\n5,1\n").is_err());
        assert!(FlowSizes::parse("x", "10,0.5\n").is_err());
    }
}
