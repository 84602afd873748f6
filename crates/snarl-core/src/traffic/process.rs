//! When a source generates its next message: Bernoulli slots, Poisson or periodic.

use crate::config::ProcessKind;
use rand::Rng;
use rand_distr::{Distribution, Exp, Geometric};
use rand_pcg::Pcg64Mcg;

/// The injection process of one group: gaps between message generations.
#[derive(Clone, Copy, Debug)]
pub struct Process {
    kind: ProcessKind,
    /// Bernoulli slot, in picoseconds.
    slot: u64,
    /// Serialisation time of one message on the host link, in picoseconds.
    message_time: u64,
    /// The sampler of the gaps at the load last asked for (its bits): a load changes
    /// only at a phase, while every generation draws a gap.
    sampler: Option<(u64, Sampler)>,
}

/// How the gaps at one load are drawn: the distribution built once, drawing the same
/// random numbers in the same order as building it for each gap would.
#[derive(Clone, Copy, Debug)]
enum Sampler {
    /// Bernoulli: the failures before the first success of a trial per slot.
    Slots(Geometric),
    /// Bernoulli with a success probability `p` so small that 1 - p rounds to 1.
    RareSlots(f64),
    /// Poisson: exponential gaps.
    Exponential(Exp<f64>),
    /// The same gap every time (periodic, a Bernoulli success every slot, or a load too
    /// small for a Poisson gap), before clamping.
    Fixed(u64),
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
    pub fn new(kind: ProcessKind, slot: u64, message_time: u64) -> Process {
        Process { kind, slot, message_time, sampler: None }
    }

    /// The sampler of the gaps at `load`.
    #[cold]
    #[inline(never)]
    fn sampler_at(&self, load: f64) -> Sampler {
        let mean = self.message_time as f64 / load;
        match self.kind {
            ProcessKind::Bernoulli => {
                let p = (load * self.slot as f64 / self.message_time as f64).min(1.0);
                if p >= 1.0 {
                    Sampler::Fixed(self.slot)
                } else if 1.0 - p < 1.0 {
                    Sampler::Slots(Geometric::new(p).expect("0 < p < 1"))
                } else {
                    Sampler::RareSlots(p)
                }
            }
            // A load so small that the mean gap overflows never generates.
            ProcessKind::Poisson if !mean.is_finite() => Sampler::Fixed(MAX_GAP),
            ProcessKind::Poisson => Sampler::Exponential(Exp::new(1.0 / mean).expect("positive rate")),
            ProcessKind::Periodic => Sampler::Fixed(mean.round() as u64),
        }
    }

    /// Time to the next generation at `load` (> 0), in picoseconds (at least 1).
    #[inline]
    pub fn gap(&mut self, load: f64, rng: &mut Pcg64Mcg) -> u64 {
        let sampler = match self.sampler {
            Some((bits, sampler)) if bits == load.to_bits() => sampler,
            _ => {
                let sampler = self.sampler_at(load);
                self.sampler = Some((load.to_bits(), sampler));
                sampler
            }
        };
        let gap = match sampler {
            Sampler::Slots(geometric) => geometric.sample(rng).saturating_add(1).saturating_mul(self.slot),
            Sampler::RareSlots(p) => rare_failures(p, rng).saturating_add(1).saturating_mul(self.slot),
            Sampler::Exponential(exp) => exp.sample(rng).round() as u64,
            Sampler::Fixed(gap) => gap,
        };
        gap.clamp(1, MAX_GAP)
    }

    /// Time of the first generation: a random phase, so periodic sources do not align.
    pub fn first(&mut self, load: f64, rng: &mut Pcg64Mcg) -> u64 {
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
        let mut p = Process::new(kind, 1000, 8000);
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
            let mut p = Process::new(kind, 1000, 1000);
            for load in [1e-17, 1e-300, f64::MIN_POSITIVE] {
                let gap = p.gap(load, &mut rng);
                assert!(gap > 1_000_000_000_000_000 && gap <= MAX_GAP, "{kind:?} at {load}: {gap}");
                assert!(p.first(load, &mut rng) <= MAX_GAP);
            }
        }
    }

    #[test]
    fn bernoulli_gaps_are_whole_slots() {
        let mut p = Process::new(ProcessKind::Bernoulli, 1000, 8000);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        assert!((0..1000).all(|_| p.gap(0.3, &mut rng).is_multiple_of(1000)));
    }
}
