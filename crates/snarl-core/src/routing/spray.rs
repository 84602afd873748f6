//! Packet spraying: every packet picks its port among the equal next hops on its own,
//! whatever its flow: the up-ports of a tree, and a spine's parallel links down to a
//! leaf; where there is one next hop (down a tree) there is nothing to pick. A flow's
//! packets then take different paths and may arrive out of order.
//!
//! `random` draws the port uniformly from the routing's random stream (the same draw as
//! `updown`'s random choice, so the two route a run alike). `round_robin` gives each
//! group of equal ports of a switch a turn of its own, kept at the group's first port,
//! which every packet routed to the group advances, whichever input it came by: the
//! group's ports then carry packet counts within one of each other. One turn per switch
//! would let groups interleave (packets alternating between two leaves through a spine
//! would take every other port of each), and one per input port would start every input
//! on the same port.

use super::{Candidates, PerSwitch, PortView, Route, RouteQuery, Routing};
use crate::config::SprayMode;
use crate::error::Result;
use crate::memory::fallible;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Topology, UpDown};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct Spray {
    mode: SprayMode,
    /// Round robin: per switch and port, the turn (an index into the group) of the group
    /// of equal ports that starts at that port. Empty for random spraying.
    turns: PerSwitch<Vec<u16>>,
}

impl Spray {
    pub fn new(mode: SprayMode, topo: &AnyTopology) -> Result<Spray> {
        let switches = if mode == SprayMode::RoundRobin { topo.num_switches() } else { 0 };
        let turns = PerSwitch::try_new(switches, |s| fallible::zeroed(topo.num_ports(s), "the spraying turns"))?;
        Ok(Spray { mode, turns })
    }
}

impl Routing for Spray {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        let index = if hops.count <= 1 {
            0
        } else {
            match self.mode {
                SprayMode::Random => rng.random_range(0..hops.count),
                SprayMode::RoundRobin => self.turns.with(q.switch, |turns| {
                    let turn = &mut turns[hops.first as usize];
                    let index = if *turn < hops.count { *turn } else { 0 };
                    *turn = if index + 1 < hops.count { index + 1 } else { 0 };
                    index
                }),
            }
        };
        out.only(Route { port: hops.first + index, vc: q.vc, via: NIL });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig, UpSelect};
    use crate::routing::stateful_test::{at_leaf, only_route};
    use crate::routing::UpDownRouting;
    use crate::topology;
    use rand::SeedableRng;

    /// Two leaves of eight hosts, two spines, two links between each leaf and spine.
    fn spine_leaf() -> AnyTopology {
        let t = TopologyConfig::SpineLeaf {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 8,
            links_per_pair: 2,
            oversubscription: None,
            oversubscription_by: None,
        };
        topology::build(&t, &LinksConfig::default()).unwrap()
    }

    #[test]
    fn round_robin_takes_the_ports_of_a_group_in_turn_whatever_the_flow_and_input() {
        let topo = spine_leaf();
        let spray = Spray::new(SprayMode::RoundRobin, &topo).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Leaf 0's up-ports are 8..12; packets of different flows, and one that stays on
        // the leaf (which does not advance the turn).
        let ports: Vec<u16> = [(0, 9), (1, 12), (2, 3), (3, 15), (0, 9), (4, 8), (5, 10)]
            .iter()
            .map(|&(src, dst)| only_route(&spray, &topo, &at_leaf(&topo, src, dst, 0, 0), &mut rng).port)
            .collect();
        assert_eq!(ports, [8, 9, 3, 10, 11, 8, 9]);
        // A spine's parallel links to each leaf are a group of their own, with a turn of
        // their own: interleaved packets to two leaves each go round their group.
        let spine = 2;
        let down: Vec<u16> = (0..8)
            .map(|k| {
                let q = RouteQuery {
                    switch: spine,
                    hops: 1,
                    in_port: k % 4,
                    ..at_leaf(&topo, 0, 8 * (k as u32 % 2), 0, 0)
                };
                only_route(&spray, &topo, &q, &mut rng).port
            })
            .collect();
        assert_eq!(down, [0, 2, 1, 3, 0, 2, 1, 3]);
    }

    #[test]
    fn random_spraying_is_updowns_random_choice() {
        let topo = spine_leaf();
        let spray = Spray::new(SprayMode::Random, &topo).unwrap();
        let updown = UpDownRouting { select: UpSelect::Random, any_vc: 0 };
        let (mut a, mut b) = (Pcg64Mcg::seed_from_u64(9), Pcg64Mcg::seed_from_u64(9));
        let mut seen = [0u32; 4];
        for k in 0..4000u32 {
            let q = at_leaf(&topo, k % 8, 8 + k % 7, 0, k as u64);
            let port = only_route(&spray, &topo, &q, &mut a).port;
            assert_eq!(port, only_route(&updown, &topo, &q, &mut b).port);
            seen[port as usize - 8] += 1;
        }
        // Packets of the same flow go everywhere: about 1000 per port.
        assert!(seen.iter().all(|&n| (900..=1100).contains(&n)), "{seen:?}");
    }
}
