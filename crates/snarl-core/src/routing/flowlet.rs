//! Flowlet switching (LetFlow): a flow keeps its port while the gaps between its packets
//! at a switch stay within `gap`; a packet after a longer pause starts a new flowlet,
//! which takes a new pseudo-random port. A pause longer than the paths' difference in
//! delay lets a flow move without reordering its packets, so flows that collide on a
//! path part at their pauses, by chance rather than by measuring the paths.
//!
//! Each switch times its flows in a flowlet table of fixed size (`flowlet_table.rs`), as
//! switch hardware does: an entry per flow hash (modulo the size) holding the time of its
//! last packet and a flowlet counter. Flows that collide share an entry: the packets of
//! one keep the other's flowlet alive, and a new flowlet of either moves both. The port
//! of flowlet 0 is ECMP's and that of flowlet n > 0 a hash of (flow, n), so a gap longer
//! than the run routes exactly as ECMP does, and no random number is drawn.

use super::flowlet_table::{FlowletTables, Since};
use super::hash::{mix64, qp_number};
use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::EcmpHash;
use crate::error::Result;
use crate::packet::NIL;
use crate::topology::AnyTopology;
use rand_pcg::Pcg64Mcg;

pub struct Flowlet {
    hash: EcmpHash,
    /// Per switch, each entry's current flowlet.
    tables: FlowletTables<u32>,
}

impl Flowlet {
    /// A table of `entries` per switch, allocated now (the per-packet path allocates
    /// nothing).
    pub fn new(hash: EcmpHash, gap: u64, entries: u32, switches: usize) -> Result<Flowlet> {
        Ok(Flowlet { hash, tables: FlowletTables::new(gap, entries, switches, "the flowlet tables")? })
    }
}

impl Routing for Flowlet {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        _rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let Some(hops) = out.choice_of_hops(topo, q) else { return };
        let key = match self.hash {
            EcmpHash::FiveTuple => q.flow_hash(),
            EcmpHash::Qp => qp_number(q.src, q.dst, q.qp) as u64,
        };
        let flowlet = self.tables.touch(q.switch, key, q.now, |flowlet, since| {
            if since == Since::Pause {
                *flowlet = flowlet.wrapping_add(1);
            }
            *flowlet
        });
        // ECMP's hash, salted per switch; flowlets after the first rehash it with their number.
        let salted = mix64(key ^ ((q.switch as u64) << 32));
        let h = if flowlet == 0 { salted } else { mix64(salted.wrapping_add(flowlet as u64)) };
        out.only(Route { port: hops.first + (h % hops.count as u64) as u16, vc: q.vc, via: NIL });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig};
    use crate::routing::stateful_test::{at_leaf, only_route};
    use crate::routing::Ecmp;
    use crate::topology::{self, Endpoint, Topology};
    use rand::{Rng, SeedableRng};

    /// Two leaves of eight hosts, one spine, four links between each leaf and the spine.
    fn spine_leaf() -> AnyTopology {
        let t = TopologyConfig::SpineLeaf {
            leaves: 2,
            spines: 1,
            hosts_per_leaf: 8,
            links_per_pair: 4,
            oversubscription: None,
            oversubscription_by: None,
        };
        topology::build(&t, &LinksConfig::default()).unwrap()
    }

    const US: u64 = 1_000_000;

    #[test]
    fn with_a_gap_longer_than_the_run_it_is_ecmp_and_draws_nothing() {
        let topo = spine_leaf();
        for hash in [EcmpHash::FiveTuple, EcmpHash::Qp] {
            let flowlet = Flowlet::new(hash, u64::MAX, 64, topo.num_switches()).unwrap();
            let ecmp = Ecmp { hash };
            let mut rng = Pcg64Mcg::seed_from_u64(3);
            let untouched = rng.clone();
            for (k, (src, dst, qp)) in
                (0..8).flat_map(|s| (8..16).flat_map(move |d| (0..3).map(move |q| (s, d, q)))).enumerate()
            {
                // At the leaf (four up-ports) and at the spine (four links down).
                let leaf = at_leaf(&topo, src, dst, qp, k as u64 * 7 * US);
                let spine = RouteQuery { switch: 2, hops: 1, in_port: 0, ..leaf };
                for q in [leaf, spine] {
                    assert_eq!(
                        only_route(&flowlet, &topo, &q, &mut rng),
                        only_route(&ecmp, &topo, &q, &mut rng.clone())
                    );
                }
            }
            assert_eq!(rng.random::<u64>(), untouched.clone().random::<u64>(), "no random number drawn");
        }
    }

    #[test]
    fn a_flow_keeps_its_port_within_the_gap_and_moves_after_a_pause() {
        let topo = spine_leaf();
        let flowlet = Flowlet::new(EcmpHash::FiveTuple, 2 * US, 4096, topo.num_switches()).unwrap();
        let ecmp = Ecmp { hash: EcmpHash::FiveTuple };
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let port = |now, rng: &mut Pcg64Mcg| only_route(&flowlet, &topo, &at_leaf(&topo, 1, 12, 0, now), rng).port;
        let first = port(0, &mut rng);
        let ecmps = only_route(&ecmp, &topo, &at_leaf(&topo, 1, 12, 0, 0), &mut rng).port;
        assert_eq!(first, ecmps, "the first flowlet takes ECMP's port");
        // Packets 2 us apart (a gap of exactly `gap` continues the flowlet) for 40 us.
        for t in 1..=20 {
            assert_eq!(port(t * 2 * US, &mut rng), first, "still the first flowlet at {t}");
        }
        // Pauses of 3 us: each packet starts a flowlet, which takes a pseudo-random port.
        let mut seen = [0u32; 4];
        for k in 1..=400 {
            seen[(port(40 * US + k * 3 * US, &mut rng) - 8) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (70..=130).contains(&n)), "new flowlets spread over the 4 up-ports: {seen:?}");
        let Endpoint::Switch { switch, .. } = topo.attachment(1) else { unreachable!() };
        let key = crate::routing::hash::five_tuple(1, 12, 0);
        let counter = flowlet.tables.value(switch, (key % 4096) as usize);
        assert_eq!(counter, 400, "one flowlet per pause");
    }

    #[test]
    fn flows_that_collide_share_an_entry() {
        let topo = spine_leaf();
        // One entry: every flow of a switch collides.
        let flowlet = Flowlet::new(EcmpHash::FiveTuple, 10 * US, 1, topo.num_switches()).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut port = |src, now| only_route(&flowlet, &topo, &at_leaf(&topo, src, 12, 0, now), &mut rng).port;
        let b = port(2, 0);
        port(1, 8 * US);
        assert_eq!(port(2, 16 * US), b, "16 us after its last packet, but the other flow's kept the flowlet alive");
        // Flow 1's pause starts a flowlet for both: flow 2's next flowlet numbers follow.
        port(1, 40 * US);
        assert_eq!(flowlet.tables.value(0, 0), 1);
        port(2, 41 * US);
        assert_eq!(flowlet.tables.value(0, 0), 1, "no pause of the entry: the same flowlet");
    }

    #[test]
    fn an_entry_takes_the_bytes_the_memory_estimate_counts() {
        assert_eq!(size_of::<crate::routing::flowlet_table::Slot<u32>>(), 16);
    }

    #[test]
    fn down_paths_without_a_choice_touch_no_entry() {
        let topo = spine_leaf();
        let flowlet = Flowlet::new(EcmpHash::FiveTuple, US, 16, topo.num_switches()).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Host 1 to host 5: both on leaf 0, one port down.
        let route = only_route(&flowlet, &topo, &at_leaf(&topo, 1, 5, 0, 7), &mut rng);
        assert_eq!(route.port, 5);
        assert!(flowlet.tables.untouched(0));
    }
}
