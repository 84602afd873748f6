//! Division of host and switch numbers by a constant of the fabric (hosts per switch,
//! switches per group), which routing does on every packet: a multiplication and a shift
//! instead of a division. Unlike a general divisor (`strength_reduce`, used where the
//! numerators are wider), it needs no branch for powers of two: node numbers are below
//! 2^31, so one 64-bit product serves every divisor.

use super::limits::MAX_NODES;

/// `n / d` and `n % d` for every node number n < 2^31 (see `limits`), d fixed when the
/// fabric is built: n·m >> s with s = 31 + ⌈log2 d⌉ and m = ⌈2^s / d⌉. Then
/// m·d = 2^s + e with e < d ≤ 2^⌈log2 d⌉, so n·m / 2^s exceeds n / d by less than 1/d
/// and the floor is exact; m ≤ 2^32 keeps n·m below 2^63.
#[derive(Clone, Copy, Debug)]
pub(super) struct NodeDivisor {
    multiplier: u64,
    shift: u32,
    divisor: usize,
}

impl NodeDivisor {
    pub(super) fn new(divisor: usize) -> NodeDivisor {
        assert!(divisor >= 1 && divisor as u64 <= MAX_NODES, "node divisor {divisor} out of range");
        let shift = 31 + (usize::BITS - (divisor - 1).leading_zeros());
        NodeDivisor { multiplier: (1u64 << shift).div_ceil(divisor as u64), shift, divisor }
    }

    #[inline]
    pub(super) fn div(self, n: usize) -> usize {
        debug_assert!((n as u64) < MAX_NODES, "node {n} out of range");
        ((n as u64 * self.multiplier) >> self.shift) as usize
    }

    #[inline]
    pub(super) fn div_rem(self, n: usize) -> (usize, usize) {
        let q = self.div(n);
        (q, n - q * self.divisor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_division() {
        let last = MAX_NODES as usize - 1;
        let mut divisors: Vec<usize> = (1..=1000).collect();
        for bits in 10..=31 {
            let p = 1usize << bits;
            divisors.extend([p - 1, p, p + 1, p / 3, p / 3 * 2 + 1]);
        }
        for d in divisors.into_iter().filter(|&d| (1..=MAX_NODES as usize).contains(&d)) {
            let nd = NodeDivisor::new(d);
            let mut n = 0usize;
            let numerators = (0..2000).chain([d - 1, d, d + 1, last.saturating_sub(d), last - 1, last]).chain(
                std::iter::from_fn(|| {
                    n = (n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407)) % (last + 1);
                    Some(n)
                }),
            );
            for n in numerators.take(2000 + 6 + 500).filter(|&n| n <= last) {
                assert_eq!(nd.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
