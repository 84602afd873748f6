//! Which hosts form each node group: contiguous, interleaved or random placement.

use crate::config::Placement;
use rand::seq::SliceRandom;
use rand_pcg::Pcg64Mcg;

/// Takes `count` hosts out of `free` (kept sorted) according to `placement`.
pub fn take(free: &mut Vec<u32>, count: usize, placement: Placement, rng: &mut Pcg64Mcg) -> Vec<u32> {
    debug_assert!(count <= free.len());
    let picked_positions: Vec<usize> = match placement {
        Placement::Contiguous => (0..count).collect(),
        // Evenly spaced: position floor(i * free / count), e.g. every tenth host for 10%.
        Placement::Interleaved => (0..count).map(|i| i * free.len() / count.max(1)).collect(),
        Placement::Random => {
            let mut positions: Vec<usize> = (0..free.len()).collect();
            positions.shuffle(rng);
            positions.truncate(count);
            positions.sort_unstable();
            positions
        }
    };
    let mut taken = Vec::with_capacity(count);
    let mut keep = Vec::with_capacity(free.len() - count);
    let mut next = picked_positions.iter().peekable();
    for (position, &host) in free.iter().enumerate() {
        if next.peek() == Some(&&position) {
            next.next();
            taken.push(host);
        } else {
            keep.push(host);
        }
    }
    *free = keep;
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn interleaved_spreads_evenly() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut free: Vec<u32> = (0..100).collect();
        let hs = take(&mut free, 10, Placement::Interleaved, &mut rng);
        assert_eq!(hs, (0..10).map(|i| i * 10).collect::<Vec<u32>>());
        assert_eq!(free.len(), 90);
    }

    #[test]
    fn contiguous_and_random_take_distinct_hosts() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut free: Vec<u32> = (0..20).collect();
        assert_eq!(take(&mut free, 3, Placement::Contiguous, &mut rng), vec![0, 1, 2]);
        let r = take(&mut free, 5, Placement::Random, &mut rng);
        assert_eq!(r.len(), 5);
        assert!(r.iter().all(|h| !free.contains(h) && *h >= 3));
    }
}
