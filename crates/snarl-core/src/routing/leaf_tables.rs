//! CONGA's leaf-to-leaf congestion tables (Alizadeh et al., SIGCOMM 2014). A path is a
//! source leaf's up-port (its index among the leaf's up-ports). The destination leaf
//! keeps Congestion-From-Leaf[source leaf][path], the congestion the last packet from
//! that leaf on that path reported; it feeds the entries back one at a time on packets
//! going to that leaf, round robin over those measured since they were last fed back.
//! The source leaf keeps what it hears in Congestion-To-Leaf[destination leaf][path],
//! with the time it heard it: an entry not heard of for longer than `age` reads 0, so a
//! path abandoned as congested is tried again (no packet on it means no news of it).
//!
//! Every table is flat and sized at build time: leaves x leaves x paths entries.

use crate::error::Result;
use crate::memory::fallible;

pub(super) struct LeafTables {
    leaves: usize,
    paths: usize,
    /// Words of a pending mask (64 paths a word).
    words: usize,
    /// Longest an entry of Congestion-To-Leaf is believed (ps).
    age: u64,
    /// Congestion-To-Leaf, [source][destination][path]: (time heard + 1) << 8 | level;
    /// 0: never heard.
    to_leaf: Vec<u64>,
    /// Congestion-From-Leaf, [destination][source][path]: the level last reported.
    from_leaf: Vec<u8>,
    /// [destination][source]: a bit per path measured since it was last fed back.
    pending: Vec<u64>,
    /// [destination][source]: the path the round robin looks at first.
    turn: Vec<u16>,
}

/// Times stop here in `to_leaf` (2^56 ps: 20 hours of simulated time).
const LATEST: u64 = (1 << 56) - 1;

impl LeafTables {
    pub(super) fn new(leaves: usize, paths: usize, age: u64) -> Result<LeafTables> {
        let words = paths.div_ceil(64);
        let (pairs, entries) = (leaves * leaves, leaves * leaves * paths);
        Ok(LeafTables {
            leaves,
            paths,
            words,
            age,
            to_leaf: fallible::zeroed(entries, "the congestion-to-leaf tables")?,
            from_leaf: fallible::zeroed(entries, "the congestion-from-leaf tables")?,
            pending: fallible::zeroed(pairs * words, "the congestion-from-leaf tables")?,
            turn: fallible::zeroed(pairs, "the congestion-from-leaf tables")?,
        })
    }

    #[inline]
    fn entry(&self, leaf: u32, other: u32, path: u16) -> usize {
        (leaf as usize * self.leaves + other as usize) * self.paths + path as usize
    }

    /// What source leaf `leaf` believes of `path` to leaf `to` at `now` (0 once aged).
    #[inline]
    pub(super) fn remote(&self, leaf: u32, to: u32, path: u16, now: u64) -> u8 {
        let e = self.to_leaf[self.entry(leaf, to, path)];
        if e == 0 || now.saturating_sub((e >> 8) - 1) > self.age {
            0
        } else {
            e as u8
        }
    }

    /// Destination leaf `leaf` receives a packet from leaf `from` that took `path` and met
    /// congestion `level` on the way.
    #[inline]
    pub(super) fn measured(&mut self, leaf: u32, from: u32, path: u16, level: u8) {
        let e = self.entry(leaf, from, path);
        self.from_leaf[e] = level;
        let pair = leaf as usize * self.leaves + from as usize;
        self.pending[pair * self.words + path as usize / 64] |= 1 << (path % 64);
    }

    /// The entry leaf `leaf` feeds back on a packet to leaf `to`, if any: the first path
    /// from the round robin's turn measured since it was last fed back, and its level.
    #[inline]
    pub(super) fn feedback(&mut self, leaf: u32, to: u32) -> Option<(u16, u8)> {
        if self.pending.is_empty() {
            return None; // No up-ports, or no tables (telemetry other than feedback).
        }
        let pair = leaf as usize * self.leaves + to as usize;
        let mask = &mut self.pending[pair * self.words..(pair + 1) * self.words];
        let start = self.turn[pair] as usize;
        // From the turn to the end, then from the start: the first bit set.
        let (w0, b0) = (start / 64, start % 64);
        let mut path = None;
        for k in 0..=self.words {
            let w = (w0 + k) % self.words;
            let mut word = mask[w];
            if k == 0 {
                word &= u64::MAX << b0;
            } else if k == self.words {
                word = mask[w0] & !(u64::MAX << b0);
            }
            if word != 0 {
                path = Some(w * 64 + word.trailing_zeros() as usize);
                break;
            }
        }
        let path = path?;
        mask[path / 64] &= !(1 << (path % 64));
        self.turn[pair] = if path + 1 == self.paths { 0 } else { path as u16 + 1 };
        Some((path as u16, self.from_leaf[pair * self.paths + path]))
    }

    /// Source leaf `leaf` hears at `now` that `path` to leaf `to` is at `level`.
    #[inline]
    pub(super) fn heard(&mut self, leaf: u32, to: u32, path: u16, level: u8, now: u64) {
        let e = self.entry(leaf, to, path);
        self.to_leaf[e] = ((now + 1).min(LATEST) << 8) | level as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_goes_round_robin_over_the_paths_measured_since_last_time() {
        // Three leaves, 70 paths (two words of pending bits).
        let mut t = LeafTables::new(3, 70, 1_000).unwrap();
        assert_eq!(t.feedback(1, 0), None, "nothing measured");
        for (path, level) in [(3, 5), (65, 7), (10, 2)] {
            t.measured(1, 0, path, level);
        }
        // Leaf 1's entries about leaf 2 are apart.
        t.measured(1, 2, 4, 6);
        assert_eq!(t.feedback(1, 0), Some((3, 5)));
        // Measured again, path 3 waits for its turn behind 10 and 65.
        t.measured(1, 0, 3, 4);
        assert_eq!(t.feedback(1, 0), Some((10, 2)));
        assert_eq!(t.feedback(1, 0), Some((65, 7)));
        assert_eq!(t.feedback(1, 0), Some((3, 4)), "the round robin wraps, with the latest level");
        assert_eq!(t.feedback(1, 0), None, "each measurement is fed back once");
        assert_eq!(t.feedback(1, 2), Some((4, 6)));
        // The last path, then the first.
        t.measured(0, 2, 69, 1);
        t.measured(0, 2, 0, 3);
        assert_eq!(t.feedback(0, 2), Some((0, 3)));
        assert_eq!(t.feedback(0, 2), Some((69, 1)));
        t.measured(0, 2, 0, 2);
        assert_eq!(t.feedback(0, 2), Some((0, 2)), "from path 0 after the last");
    }

    #[test]
    fn what_a_leaf_heard_ages_out() {
        let mut t = LeafTables::new(2, 4, 1_000).unwrap();
        assert_eq!(t.remote(0, 1, 2, 0), 0, "never heard");
        t.heard(0, 1, 2, 6, 5_000);
        assert_eq!(t.remote(0, 1, 2, 5_000), 6);
        assert_eq!(t.remote(0, 1, 2, 6_000), 6, "exactly `age` old is still believed");
        assert_eq!(t.remote(0, 1, 2, 6_001), 0, "older is not");
        assert_eq!(t.remote(1, 0, 2, 5_000), 0, "the other direction's entry");
        t.heard(0, 1, 2, 0, 0);
        assert_eq!(t.remote(0, 1, 2, 0), 0);
    }
}
