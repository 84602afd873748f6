//! Up/down routing on tree-like fabrics: climb until an ancestor of the destination,
//! then descend. The choice among equal up-ports is random, fixed per source (S-mod-K:
//! at every level a digit of the source, as D-mod-K takes one of the destination, so
//! sources spread over the up-ports of every level), or adaptive (least occupied, ties
//! broken at random, never by port order).

use super::{PortView, Route, RouteQuery, Routing};
use crate::config::UpSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, UpDown};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct UpDownRouting {
    pub select: UpSelect,
}

impl Routing for UpDownRouting {
    #[inline]
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        let index = if hops.count <= 1 {
            0
        } else {
            match self.select {
                UpSelect::Random => rng.random_range(0..hops.count),
                UpSelect::Deterministic => topo.up_digit(q.switch as usize, q.src as usize),
                UpSelect::Adaptive => least_occupied(hops.first, hops.count, view, rng),
            }
        };
        Route { port: hops.first + index, vc: q.vc, via: NIL }
    }
}

/// The index (in `0..count`) of the least occupied of the ports `first..first + count`,
/// uniformly at random among those that tie (one draw, and only when several tie).
fn least_occupied(first: u16, count: u16, view: &impl PortView, rng: &mut Pcg64Mcg) -> u16 {
    let (mut least, mut ties, mut pick) = (u64::MAX, 0u16, 0u16);
    for i in 0..count {
        let occupancy = view.occupancy(first + i);
        if occupancy < least {
            (least, ties, pick) = (occupancy, 1, i);
        } else if occupancy == least {
            ties += 1;
        }
    }
    if ties == 1 {
        return pick;
    }
    let mut nth = rng.random_range(0..ties);
    for i in pick..count {
        if view.occupancy(first + i) == least {
            if nth == 0 {
                return i;
            }
            nth -= 1;
        }
    }
    unreachable!("{ties} ports tie at the least occupancy")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Occupancies by port.
    struct Queues(Vec<u64>);
    impl PortView for Queues {
        fn occupancy(&self, port: u16) -> u64 {
            self.0[port as usize]
        }
        fn occupancy_at(&self, _switch: usize, port: u16) -> u64 {
            self.0[port as usize]
        }
        fn has_room(&self, _port: u16, _vc: u8, _bytes: u64) -> bool {
            true
        }
    }

    #[test]
    fn the_least_occupied_port_wins_and_ties_are_broken_at_random() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        // Ports 2..6: the least occupied (5) is port 4, index 2.
        let view = Queues(vec![0, 0, 9, 7, 5, 8]);
        assert!((0..50).all(|_| least_occupied(2, 4, &view, &mut rng) == 2));
        // Ports 1, 3 and 5 tie at 1: each is chosen, about a third of the time, and never
        // another.
        let view = Queues(vec![0, 1, 4, 1, 6, 1]);
        let mut seen = [0u32; 6];
        for _ in 0..3000 {
            seen[1 + least_occupied(1, 5, &view, &mut rng) as usize] += 1;
        }
        assert_eq!(seen[0] + seen[2] + seen[4], 0, "{seen:?}");
        // 1000 expected each, sd ~26.
        assert!([1, 3, 5].iter().all(|&p| (880..=1120).contains(&seen[p])), "{seen:?}");
    }
}
