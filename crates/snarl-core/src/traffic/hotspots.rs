//! The run's shared hotspots (`[traffic.hotspots]`): a set of hosts drawn at random,
//! which `hotspots` patterns send to, moving to new random hosts every lifetime.
//! Hotspot k keeps its index when it moves, so the senders of subset k follow it.

use super::pattern::choose_hotspots;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

#[derive(Clone, Debug, PartialEq)]
pub struct HotspotSet {
    /// The hosts hotspots are drawn from, in host order.
    among: Vec<u32>,
    /// Hotspot k, by index.
    current: Vec<u32>,
    /// Time between two moves (ps), if they move.
    pub lifetime: Option<u64>,
    /// Scratch for the draws, so that a move allocates nothing.
    pool: Vec<u32>,
}

impl HotspotSet {
    /// `count` distinct hosts of `among` (at most all of them), drawn from `rng`.
    pub fn place(among: Vec<u32>, count: usize, lifetime: Option<u64>, rng: &mut Pcg64Mcg) -> HotspotSet {
        let current = choose_hotspots(&among, count, rng);
        let pool = Vec::with_capacity(among.len());
        HotspotSet { among, current, lifetime, pool }
    }

    /// The hotspots, by index.
    #[inline]
    pub fn current(&self) -> &[u32] {
        &self.current
    }

    /// Every hotspot moves to a new host: `count` hosts drawn at random among those of
    /// `among` that are not hotspots now (among all of `among` when too few are left),
    /// hotspot k taking the k-th drawn.
    pub fn move_all(&mut self, rng: &mut Pcg64Mcg) {
        let count = self.current.len();
        self.pool.clear();
        let current = &self.current;
        self.pool.extend(self.among.iter().copied().filter(|h| !current.contains(h)));
        if self.pool.len() < count {
            self.pool.clear();
            self.pool.extend_from_slice(&self.among);
        }
        // A partial Fisher-Yates shuffle, as `choose_hotspots` draws the first set.
        for i in 0..count {
            let j = rng.random_range(i..self.pool.len());
            self.pool.swap(i, j);
        }
        self.current.copy_from_slice(&self.pool[..count]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::pattern::{hotspot_subsets, Pattern};
    use rand::SeedableRng;

    fn set(seed: u64, among: Vec<u32>, count: usize) -> (HotspotSet, Pcg64Mcg) {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        (HotspotSet::place(among, count, Some(1000), &mut rng), rng)
    }

    #[test]
    fn placement_draws_distinct_members_and_follows_the_seed() {
        let among: Vec<u32> = (0..100).map(|h| h * 3).collect();
        let (a, _) = set(7, among.clone(), 8);
        assert_eq!(a.current().len(), 8);
        assert!(a.current().iter().all(|h| among.contains(h)));
        let mut sorted = a.current().to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 8, "distinct hosts: {:?}", a.current());
        assert_eq!(a, set(7, among.clone(), 8).0, "same seed, same hotspots");
        assert!((8..13).any(|seed| set(seed, among.clone(), 8).0 != a), "the hotspots ignore the seed");
    }

    #[test]
    fn every_hotspot_moves_to_a_new_host_the_same_way_for_a_seed() {
        let among: Vec<u32> = (0..40).collect();
        let (mut a, mut rng_a) = set(3, among.clone(), 8);
        let (mut b, mut rng_b) = set(3, among, 8);
        for _ in 0..50 {
            let before = a.current().to_vec();
            a.move_all(&mut rng_a);
            b.move_all(&mut rng_b);
            assert_eq!(a.current(), b.current(), "moves follow the seed");
            assert!(a.current().iter().all(|h| !before.contains(h)), "{before:?} -> {:?}", a.current());
            let mut sorted = a.current().to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 8);
        }
    }

    #[test]
    fn with_too_few_hosts_left_hotspots_are_drawn_among_all() {
        // 3 hotspots among 4 hosts: only one host is not a hotspot, so some must stay.
        let (mut a, mut rng) = set(1, vec![10, 11, 12, 13], 3);
        for _ in 0..20 {
            a.move_all(&mut rng);
            let mut sorted = a.current().to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 3);
        }
    }

    #[test]
    fn senders_split_evenly_and_follow_their_hotspot() {
        // Senders 20..30 (10 of them) over 4 hotspots: subsets of 3, 3, 2, 2, in host order.
        let senders: Vec<u32> = (20..30).collect();
        let pattern = Pattern::Hotspots { subset: hotspot_subsets(40, &senders, 4).unwrap() };
        let (mut spots, mut rng) = set(5, (0..20).collect(), 4);
        let mut r = Pcg64Mcg::seed_from_u64(0);
        for _ in 0..3 {
            let hot = spots.current().to_vec();
            for (k, &s) in senders.iter().enumerate() {
                assert_eq!(pattern.dest(s, &mut r, &hot), Some(hot[k % 4]), "sender {s}");
            }
            let per: Vec<usize> = (0..4)
                .map(|i| senders.iter().filter(|&&s| pattern.dest(s, &mut r, &hot) == Some(hot[i])).count())
                .collect();
            assert_eq!(per, [3, 3, 2, 2]);
            assert_eq!(pattern.dest(5, &mut r, &hot), None, "host 5 is not a sender");
            spots.move_all(&mut rng);
        }
        // A sender that is its own hotspot sends nothing meanwhile.
        let pattern = Pattern::Hotspots { subset: hotspot_subsets(40, &senders, 1).unwrap() };
        assert_eq!(pattern.dest(22, &mut r, &[22]), None);
        assert_eq!(pattern.dest(23, &mut r, &[22]), Some(22));
    }
}
