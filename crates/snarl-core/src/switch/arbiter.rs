//! Arbiters pick one request among many.

/// Picks one set bit of a request mask.
pub trait Arbiter {
    /// The first requester, in this arbiter's order starting at `start`, for which
    /// `eligible` holds.
    fn pick(&self, mask: &[u64], bits: usize, start: usize, eligible: impl FnMut(usize) -> bool) -> Option<usize>;
}

/// Round robin: scan the requesters cyclically from the one after the last grant.
pub struct RoundRobin;

impl Arbiter for RoundRobin {
    #[inline]
    fn pick(&self, mask: &[u64], bits: usize, start: usize, mut eligible: impl FnMut(usize) -> bool) -> Option<usize> {
        let start = if start >= bits { 0 } else { start };
        if let [word] = mask {
            // One word (radix x VCs <= 64, the common case): the bits from `start` up,
            // then those below it.
            let below = (1u64 << start) - 1;
            for mut candidates in [word & !below, word & below] {
                while candidates != 0 {
                    let bit = candidates.trailing_zeros() as usize;
                    if eligible(bit) {
                        return Some(bit);
                    }
                    candidates &= candidates - 1;
                }
            }
            return None;
        }
        // Two passes: [start, bits) then [0, start).
        for (lo, hi) in [(start, bits), (0, start)] {
            let mut word_index = lo / 64;
            while word_index * 64 < hi {
                let mut word = mask[word_index];
                let base = word_index * 64;
                if base < lo {
                    word &= !0u64 << (lo - base);
                }
                if hi - base < 64 {
                    word &= (1u64 << (hi - base)) - 1;
                }
                while word != 0 {
                    let bit = base + word.trailing_zeros() as usize;
                    if eligible(bit) {
                        return Some(bit);
                    }
                    word &= word - 1;
                }
                word_index += 1;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_rotates_and_skips_ineligible() {
        let mask = [0b1011_0000u64, 1];
        let rr = RoundRobin;
        assert_eq!(rr.pick(&mask, 70, 0, |_| true), Some(4));
        assert_eq!(rr.pick(&mask, 70, 5, |_| true), Some(5));
        assert_eq!(rr.pick(&mask, 70, 6, |_| true), Some(7));
        assert_eq!(rr.pick(&mask, 70, 8, |_| true), Some(64));
        assert_eq!(rr.pick(&mask, 70, 65, |_| true), Some(4), "wraps around");
        assert_eq!(rr.pick(&mask, 70, 0, |b| b != 4 && b != 5), Some(7));
        assert_eq!(rr.pick(&[0, 0], 70, 3, |_| true), None);
    }

    #[test]
    fn round_robin_on_one_word_rotates_and_wraps() {
        let mask = [0b1010_0110u64];
        let rr = RoundRobin;
        assert_eq!(rr.pick(&mask, 32, 0, |_| true), Some(1));
        assert_eq!(rr.pick(&mask, 32, 2, |_| true), Some(2));
        assert_eq!(rr.pick(&mask, 32, 3, |_| true), Some(5));
        assert_eq!(rr.pick(&mask, 32, 8, |_| true), Some(1), "wraps around");
        assert_eq!(rr.pick(&mask, 32, 40, |_| true), Some(1), "a start past the bits restarts at 0");
        assert_eq!(rr.pick(&mask, 32, 3, |b| b != 5 && b != 7), Some(1), "skips, then wraps");
        assert_eq!(rr.pick(&mask, 32, 0, |_| false), None);
        assert_eq!(rr.pick(&[1 << 63], 64, 63, |_| true), Some(63));
    }
}
