//! Discounting rate estimators (DRE), CONGA's measure of a link's utilisation (Alizadeh
//! et al., SIGCOMM 2014): a register X per output, incremented by the bytes of every
//! packet sent and multiplied by (1 - alpha) every `period`. A steady rate r keeps X
//! between (1 - alpha) r tau and r tau, with tau = period / alpha, so X / (C tau) tracks
//! the utilisation r / C of a link of capacity C within alpha, with a memory of about tau.
//! It is read quantised to `BITS` bits, the size of the field packets carry it in.
//!
//! The decay is applied lazily, when a register is next touched: the period boundaries
//! crossed since it was last touched are counted and (1 - alpha)^n applied at once,
//! which is the result of n decays at the boundaries, without a timer per period.
//! Registers hold bytes with 8 fractional bits; factors are 32-bit fixed-point.

use crate::error::Result;
use crate::memory::fallible::{self, Zero};
use strength_reduce::StrengthReducedU64;

/// Bits of a quantised utilisation (CONGA's 3): levels 0 to 7.
pub(super) const BITS: u32 = 3;
/// The highest level: a link at (7/8 or more of) its capacity.
pub(super) const TOP: u8 = (1 << BITS) - 1;
/// Fractional bits of a register.
const FRAC: u32 = 8;
/// Registers stop here rather than wrap (a link would need years at a Tb/s to get there).
const CAP: u64 = 1 << 60;

/// A register and when its next decay is due (the end of the period it was last
/// touched in: a multiple of the period).
#[derive(Clone, Copy, Default)]
struct Register {
    x: u64,
    next: u64,
}

impl Zero for Register {}

pub(super) struct Dre {
    period: StrengthReducedU64,
    /// (1 - alpha)^(2^k) in 32-bit fixed point, k = 0..64: n periods multiply by the
    /// factors of n's bits.
    squares: [u64; 64],
    registers: Vec<Register>,
    /// Per output, its capacity's index in `full` (a fabric has few link rates: one
    /// divisor per rate keeps the per-output state small).
    class: Vec<u8>,
    /// Per link rate: C tau in register units, which divides X << BITS into its level
    /// (1 for outputs that are not measured).
    full: Vec<StrengthReducedU64>,
}

impl Dre {
    /// Estimators for outputs of the given capacities (bits per second; 0 for those
    /// never measured), decayed by (1 - `alpha`) every `period` ps.
    pub(super) fn new(rates: impl ExactSizeIterator<Item = u64>, period: u64, alpha: f64) -> Result<Dre> {
        let period = period.max(1);
        let mut squares = [0u64; 64];
        let mut factor = ((1.0 - alpha.clamp(0.0, 1.0)) * (1u64 << 32) as f64).round() as u64;
        for square in squares.iter_mut() {
            *square = factor;
            factor = ((factor as u128 * factor as u128) >> 32) as u64;
        }
        let tau = period as f64 / alpha.clamp(f64::MIN_POSITIVE, 1.0);
        let n = rates.len();
        let (mut class, mut known) = (fallible::with_capacity(n, "the rate estimators")?, Vec::<u64>::new());
        for bits in rates {
            let k = known.iter().position(|&b| b == bits).unwrap_or_else(|| {
                known.push(bits);
                known.len() - 1
            });
            if k > u8::MAX as usize {
                return Err(crate::error::Error::config("routing.type", "more than 256 link rates"));
            }
            class.push(k as u8);
        }
        // Bytes per ps times ps, in register units.
        let full = known
            .iter()
            .map(|&bits| {
                let full = bits as f64 / 8e12 * tau * (1u64 << FRAC) as f64;
                StrengthReducedU64::new((full.round() as u64).clamp(1, CAP))
            })
            .collect();
        let registers = fallible::zeroed(n, "the rate estimators")?;
        Ok(Dre { period: StrengthReducedU64::new(period), squares, registers, class, full })
    }

    /// Register `r` at `at`: its value and its next decay. Only a register read past its
    /// next decay divides, to count the periods gone by.
    #[inline]
    fn decayed(&self, r: Register, at: u64) -> Register {
        if at < r.next {
            return r;
        }
        let mut n = (at - r.next) / self.period + 1;
        let (mut x, mut k) = (r.x, 0);
        let next = r.next + n * self.period.get();
        while n != 0 && x != 0 {
            if n & 1 != 0 {
                x = ((x as u128 * self.squares[k] as u128) >> 32) as u64;
            }
            (n, k) = (n >> 1, k + 1);
        }
        Register { x, next }
    }

    /// Output `port` sends `bytes` at `at`; returns its level then.
    #[inline]
    pub(super) fn add(&mut self, port: usize, bytes: u32, at: u64) -> u8 {
        let r = self.decayed(self.registers[port], at);
        let x = (r.x + ((bytes as u64) << FRAC)).min(CAP);
        self.registers[port] = Register { x, next: r.next };
        self.quantised(port, x)
    }

    /// Register value `x` of output `port` as a level.
    #[inline]
    fn quantised(&self, port: usize, x: u64) -> u8 {
        ((x << BITS) / self.full[self.class[port] as usize]).min(TOP as u64) as u8
    }

    /// The register of output `port` at `at`.
    #[inline]
    fn value(&self, port: usize, at: u64) -> u64 {
        self.decayed(self.registers[port], at).x
    }

    /// The utilisation of output `port` at `at`, quantised: floor(X / (C tau) x 2^BITS),
    /// at most `TOP`.
    #[inline]
    pub(super) fn level(&self, port: usize, at: u64) -> u8 {
        self.quantised(port, self.value(port, at))
    }

    /// The utilisation of output `port` at `at`, unquantised (for the tests).
    #[cfg(test)]
    pub(super) fn utilisation(&self, port: usize, at: u64) -> f64 {
        self.value(port, at) as f64 / self.full[self.class[port] as usize].get() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: u64 = 1_000;

    /// One output of 800 Gb/s (100 bytes per ns), decayed by 0.1 every µs: tau = 10 µs.
    fn link() -> Dre {
        Dre::new([800_000_000_000u64].into_iter(), 1_000 * NS, 0.1).unwrap()
    }

    #[test]
    fn a_steady_rate_reads_as_its_utilisation_within_a_quantum() {
        // Packets of 4 KiB evenly spaced at r / C of the link, for 30 tau; read between
        // packets over the last 10 tau.
        for fraction in [0.1, 0.25, 0.5, 0.7, 0.9, 1.0] {
            let mut dre = link();
            // ps between packets: 4096 bytes at 100 bytes per ns times the fraction.
            let spacing = (4096.0 / (100.0 * fraction) * NS as f64) as u64;
            let (mut t, mut reads) = (0, 0);
            while t < 300_000 * NS {
                dre.add(0, 4096, t);
                let between = t + spacing / 2;
                if t > 200_000 * NS {
                    // The closed form: between (1 - alpha) r/C and r/C (give or take a
                    // packet), so within alpha r/C < 1/8, a quantum, of r/C.
                    let u = dre.utilisation(0, between);
                    assert!(u >= 0.9 * fraction - 0.005 && u <= fraction + 0.005, "rate {fraction}: {u}");
                    assert!((u - fraction).abs() < 1.0 / 8.0);
                    // Its level is the quantum it falls in: r/C's, or the one below when
                    // the decay has just taken it under a boundary.
                    let level = dre.level(0, between);
                    assert_eq!(level as f64, (u * 8.0).floor().min(TOP as f64), "rate {fraction}");
                    let top = ((fraction * 8.0).floor() as u8).min(TOP);
                    assert!(level == top || level + 1 == top, "rate {fraction}: level {level}");
                    reads += 1;
                }
                t += spacing;
            }
            assert!(reads > 200);
        }
    }

    #[test]
    fn an_idle_link_decays_as_one_multiplication_per_period() {
        let mut dre = link();
        dre.add(0, 100_000, 0);
        let start = dre.utilisation(0, 0);
        assert!((start - 0.1).abs() < 1e-6, "100 KB of C tau = 1 MB: {start}");
        // Within the first period nothing decays; after n periods, (0.9)^n.
        assert_eq!(dre.utilisation(0, 999 * NS), start);
        for n in [1u64, 2, 5, 13, 40, 100] {
            let want = start * 0.9f64.powi(n as i32);
            let got = dre.utilisation(0, n * 1_000 * NS + 3 * NS);
            assert!((got - want).abs() <= 1e-6 + want * 1e-6, "{n} periods: {got}, want {want}");
        }
        // Long idle: nothing left, and the level is 0.
        assert_eq!(dre.level(0, 10_000_000 * NS), 0);
        // Decays applied lazily on a later packet are those of every period in between.
        let mut lazy = link();
        lazy.add(0, 100_000, 0);
        lazy.add(0, 4096, 3_500 * NS);
        let want = (100_000.0 * 0.9f64.powi(3) + 4096.0) / 1_000_000.0;
        assert!((lazy.utilisation(0, 3_500 * NS) - want).abs() < 1e-6);
    }

    #[test]
    fn an_estimator_takes_the_bytes_the_memory_estimate_counts() {
        assert_eq!(size_of::<Register>() + size_of::<u8>(), 17);
    }

    #[test]
    fn a_saturated_link_reads_top_and_an_unmeasured_one_zero() {
        let mut dre = Dre::new([800_000_000_000u64, 0].into_iter(), 1_000 * NS, 0.1).unwrap();
        for k in 0..100_000 {
            dre.add(0, 4096, k * 41 * NS);
        }
        assert_eq!(dre.level(0, 4_100_000 * NS), TOP);
        assert_eq!(dre.level(1, 4_100_000 * NS), 0);
    }
}
