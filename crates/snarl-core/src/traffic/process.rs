//! When a source generates its next message: Bernoulli slots, Poisson or periodic.

use crate::config::ProcessKind;
use rand::Rng;
use rand_distr::{Distribution, Exp, Geometric};
use rand_pcg::Pcg64Mcg;

/// The injection process of one group: gaps between message generations.
#[derive(Clone, Copy, Debug)]
pub struct Process {
    pub kind: ProcessKind,
    /// Bernoulli slot, in picoseconds.
    pub slot: u64,
    /// Serialisation time of one message on the host link, in picoseconds.
    pub message_time: u64,
}

/// Longest gap: times in a config are at most `u64::MAX / 2` picoseconds, so the time of
/// the next generation (now + gap) never overflows, however small the load.
const MAX_GAP: u64 = u64::MAX / 2;

/// Failures before the first success of a Bernoulli trial of probability `p` so small
/// that 1 - p rounds to 1 (p below about 5.6e-17), where the geometric sampler would
/// never return: the inverse transform, floor(ln U / ln(1 - p)), with ln(1 - p) taken
/// without rounding. The gap is astronomically long (more than 10^16 slots) and saturates.
#[cold]
fn rare_failures(p: f64, rng: &mut Pcg64Mcg) -> u64 {
    let u = 1.0 - rng.random::<f64>(); // in (0, 1]
    (u.ln() / (-p).ln_1p()).floor() as u64
}

impl Process {
    /// Time to the next generation at `load` (> 0), in picoseconds (at least 1).
    #[inline]
    pub fn gap(&self, load: f64, rng: &mut Pcg64Mcg) -> u64 {
        let mean = self.message_time as f64 / load;
        let gap = match self.kind {
            ProcessKind::Bernoulli => {
                let p = (load * self.slot as f64 / self.message_time as f64).min(1.0);
                let failures = if p >= 1.0 {
                    0
                } else if 1.0 - p < 1.0 {
                    Geometric::new(p).expect("0 < p < 1").sample(rng)
                } else {
                    rare_failures(p, rng)
                };
                failures.saturating_add(1).saturating_mul(self.slot)
            }
            // A load so small that the mean gap overflows never generates.
            ProcessKind::Poisson if !mean.is_finite() => MAX_GAP,
            ProcessKind::Poisson => Exp::new(1.0 / mean).expect("positive rate").sample(rng).round() as u64,
            ProcessKind::Periodic => mean.round() as u64,
        };
        gap.clamp(1, MAX_GAP)
    }

    /// Time of the first generation: a random phase, so periodic sources do not align.
    pub fn first(&self, load: f64, rng: &mut Pcg64Mcg) -> u64 {
        match self.kind {
            ProcessKind::Periodic => {
                let period = (self.message_time as f64 / load).round().max(1.0) as u64;
                rng.random_range(0..period).min(MAX_GAP)
            }
            _ => self.gap(load, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_gap(kind: ProcessKind, load: f64) -> f64 {
        let p = Process { kind, slot: 1000, message_time: 8000 };
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let n = 200_000;
        (0..n).map(|_| p.gap(load, &mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn mean_gap_matches_load() {
        for kind in [ProcessKind::Bernoulli, ProcessKind::Poisson, ProcessKind::Periodic] {
            for load in [0.1, 0.5, 0.9] {
                let want = 8000.0 / load;
                let got = mean_gap(kind, load);
                assert!((got / want - 1.0).abs() < 0.02, "{kind:?} at {load}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn loads_too_small_for_a_slot_give_gaps_beyond_any_run() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        for kind in [ProcessKind::Bernoulli, ProcessKind::Poisson, ProcessKind::Periodic] {
            let p = Process { kind, slot: 1000, message_time: 1000 };
            for load in [1e-17, 1e-300, f64::MIN_POSITIVE] {
                let gap = p.gap(load, &mut rng);
                assert!(gap > 1_000_000_000_000_000 && gap <= MAX_GAP, "{kind:?} at {load}: {gap}");
                assert!(p.first(load, &mut rng) <= MAX_GAP);
            }
        }
    }

    #[test]
    fn bernoulli_gaps_are_whole_slots() {
        let p = Process { kind: ProcessKind::Bernoulli, slot: 1000, message_time: 8000 };
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        assert!((0..1000).all(|_| p.gap(0.3, &mut rng).is_multiple_of(1000)));
    }
}
