//! The global links of dragonfly-like fabrics: g groups of m global ports each, where
//! port k of every group leads to the group a fixed offset away (so rotating the groups
//! maps the fabric onto itself) and to a fixed port k' there.
//!
//! With g = m + 1 every pair of groups is joined by exactly one link: port k of group G
//! leads to group G + k + 1 ("consecutive") or G − k − 1 ("palmtree", its mirror image),
//! at port m − 1 − k. With fewer groups the ports are dealt in blocks of g − 1: port
//! k = b·(g − 1) + r of a complete block has offset r + 1 and is paired with port
//! b·(g − 1) + (g − 2 − r), so each complete block joins every pair of groups once. The
//! last `rem` ports, if the block is incomplete, have offsets +1, −1, +2, −2, ... (ports
//! 2i and 2i + 1 paired, so each adds one link to each of rem/2 pairs of groups) and, for
//! an odd `rem`, a last port of offset g/2 paired with itself. Two groups are then joined
//! by ⌊m / (g − 1)⌋ or one more links. Palmtree negates every offset.

use crate::config::Arrangement;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug)]
pub(super) struct GlobalLinks {
    groups: usize,
    /// Global ports per group, m.
    ports: usize,
    /// Ports in complete blocks of g − 1.
    complete: usize,
    /// Ports of the incomplete last block.
    rem: usize,
    mirror: bool,
}

impl GlobalLinks {
    /// `fabric` names the fabric in errors. Needs 2 <= groups <= ports + 1 and an even
    /// number of global ports in all (every link has two ends).
    pub(super) fn new(fabric: &str, groups: u64, ports: u64, arrangement: Arrangement) -> Result<GlobalLinks> {
        if groups < 2 {
            return Err(Error::Topology(format!("{fabric}: needs at least 2 groups, found {groups}")));
        }
        if groups > ports + 1 {
            return Err(Error::Topology(format!(
                "{fabric}: {groups} groups cannot all be joined by {ports} global ports per group (at most {} groups)",
                ports + 1
            )));
        }
        if groups % 2 == 1 && ports % 2 == 1 {
            return Err(Error::Topology(format!(
                "{fabric}: {groups} groups of {ports} global ports leave one port without a peer (the total must be even)"
            )));
        }
        let (groups, ports) = (groups as usize, ports as usize);
        let rem = ports % (groups - 1);
        Ok(GlobalLinks { groups, ports, complete: ports - rem, rem, mirror: arrangement == Arrangement::Palmtree })
    }

    /// The far end of global port `k` of any group: (group offset in 1..g, port there).
    #[inline]
    pub(super) fn target(&self, k: usize) -> (usize, usize) {
        debug_assert!(k < self.ports, "global port {k} out of range");
        let g = self.groups;
        let (offset, peer) = if k < self.complete {
            let (block, r) = (k / (g - 1), k % (g - 1));
            (r + 1, block * (g - 1) + (g - 2 - r))
        } else {
            let r = k - self.complete;
            if r + 1 == self.rem && self.rem % 2 == 1 {
                (g / 2, k)
            } else if r.is_multiple_of(2) {
                (r / 2 + 1, k + 1)
            } else {
                (g - (r / 2 + 1), k - 1)
            }
        };
        (if self.mirror { g - offset } else { offset }, peer)
    }

    /// Most global links joining two groups.
    pub(super) fn max_links_per_pair(&self) -> usize {
        self.complete / (self.groups - 1) + usize::from(self.rem > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the pairing and returns the number of links between each pair of groups.
    fn links_per_pair(links: &GlobalLinks) -> Vec<Vec<usize>> {
        let (g, m) = (links.groups, links.ports);
        let mut count = vec![vec![0; g]; g];
        for group in 0..g {
            for k in 0..m {
                let (offset, peer) = links.target(k);
                assert!((1..g).contains(&offset) && peer < m, "port {k}: offset {offset}, peer {peer}");
                let (back, again) = links.target(peer);
                assert_eq!(((offset + back) % g, again), (0, k), "port {k} of {g} groups, {m} ports");
                count[group][(group + offset) % g] += 1;
            }
        }
        count
    }

    #[test]
    fn one_link_per_pair_at_full_size() {
        for arrangement in [Arrangement::Palmtree, Arrangement::Consecutive] {
            let links = GlobalLinks::new("test", 33, 32, arrangement).unwrap();
            let count = links_per_pair(&links);
            assert!((0..33).all(|a| (0..33).all(|b| count[a][b] == usize::from(a != b))));
            assert_eq!(links.max_links_per_pair(), 1);
            // The closed forms: G ∓ (k + 1), at port m − 1 − k.
            for k in 0..32 {
                let (offset, peer) = links.target(k);
                let expected = if arrangement == Arrangement::Palmtree { 33 - k - 1 } else { k + 1 };
                assert_eq!((offset, peer), (expected, 31 - k));
            }
        }
    }

    #[test]
    fn fewer_groups_spread_links_evenly() {
        for (g, m) in [(2, 1), (2, 6), (3, 4), (4, 6), (5, 6), (6, 7), (9, 32), (17, 32), (10, 12), (8, 9)] {
            for arrangement in [Arrangement::Palmtree, Arrangement::Consecutive] {
                let links = GlobalLinks::new("test", g, m, arrangement).unwrap();
                let count = links_per_pair(&links);
                let most = links.max_links_per_pair();
                for (a, row) in count.iter().enumerate() {
                    for (b, &n) in row.iter().enumerate() {
                        assert_eq!(n, count[b][a]);
                        if a != b {
                            assert!(n + 1 >= most && n <= most, "{g} groups, {m} ports: {n} links {a}-{b}");
                        }
                    }
                    assert_eq!(row.iter().sum::<usize>(), m as usize);
                }
            }
        }
    }

    #[test]
    fn impossible_arrangements() {
        let err = |g, m| GlobalLinks::new("df", g, m, Arrangement::Palmtree).unwrap_err().to_string();
        assert!(err(1, 4).contains("at least 2 groups"));
        assert!(err(6, 4).contains("at most 5 groups"));
        assert!(err(3, 3).contains("total must be even"));
    }
}
