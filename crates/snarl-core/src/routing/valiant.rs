//! Valiant routing: minimally to a random intermediate switch, then minimally to the
//! destination. Load-balances any traffic at the price of twice the hops.

use super::minimal::{eject, hop_class, toward};
use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal, Topology};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct Valiant;

impl Routing for Valiant {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let via =
            if q.hops == 0 { random_intermediate(topo, q, topo.host_switch(q.dst as usize).0, rng) } else { q.via };
        out.only(two_phase(topo, q, via, rng));
    }
}

/// A random switch with hosts, other than the packet's current and destination
/// (`dst_switch`) switches (NIL when the fabric has no such switch). Switches without
/// hosts (Megafly spines) are never chosen: paths through them could exceed twice the
/// diameter. On hierarchical fabrics the intermediate lies outside the source and
/// destination groups, as in Kim et al.'s Valiant routing on the dragonfly: a detour
/// within either group would still take the minimal route's global link.
pub(super) fn random_intermediate(topo: &AnyTopology, q: &RouteQuery, dst_switch: usize, rng: &mut Pcg64Mcg) -> u32 {
    if topo.hosts_on_one_switch() && topo.host_switch(q.src as usize).0 == dst_switch {
        return NIL;
    }
    let hosts = topo.num_hosts();
    let here = q.switch as usize;
    let (here_group, dst_group) = (topo.group_of(here), topo.group_of(dst_switch));
    let spans_groups = here_group.is_some() && here_group != dst_group;
    for _ in 0..64 {
        let s = topo.host_switch(rng.random_range(0..hosts)).0;
        let group = topo.group_of(s);
        if s != here && s != dst_switch && !(spans_groups && (group == here_group || group == dst_group)) {
            return s as u32;
        }
    }
    NIL
}

/// Routes toward `via` until it is reached, then toward the destination.
#[inline]
pub(super) fn two_phase(topo: &AnyTopology, q: &RouteQuery, via: u32, rng: &mut Pcg64Mcg) -> Route {
    let here = q.switch as usize;
    let reached = via == q.switch;
    let via = if reached { NIL } else { via };
    let port = if via != NIL {
        toward(topo, here, via as usize, rng)
    } else {
        let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
        if dst_switch == here {
            return eject(q, dst_port);
        }
        toward(topo, here, dst_switch, rng)
    };
    Route { port, vc: hop_class(topo, q, reached), via }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig};
    use crate::topology;
    use rand::SeedableRng;

    /// On a dragonfly the intermediate lies outside the source and destination groups;
    /// within one group any other switch will do.
    #[test]
    fn dragonfly_intermediates_avoid_the_source_and_destination_groups() {
        let cfg: TopologyConfig = toml::from_str(
            "type = 'dragonfly'\nhosts_per_switch = 2\nswitches_per_group = 4\nglobal_links_per_switch = 2",
        )
        .unwrap();
        let topo = topology::build(&cfg, &LinksConfig::default()).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let hosts = topo.num_hosts() as u32;
        for (src, dst) in [(0, hosts - 1), (0, 9), (0, 3)] {
            let here = topo.host_switch(src as usize).0;
            let there = topo.host_switch(dst as usize).0;
            let q = RouteQuery {
                switch: here as u32,
                src,
                dst,
                qp: 0,
                vc: 0,
                hops: 0,
                in_port: 0,
                via: NIL,
                size: 64,
                now: 0,
            };
            let same_group = topo.group_of(here) == topo.group_of(there);
            for _ in 0..200 {
                let via = random_intermediate(&topo, &q, there, &mut rng) as usize;
                assert!(via != here && via != there);
                let group = topo.group_of(via);
                if !same_group {
                    assert!(group != topo.group_of(here) && group != topo.group_of(there), "{src}->{dst} via {via}");
                }
            }
        }
    }
}
