//! Valiant routing: minimally to a random intermediate switch, then minimally to the
//! destination. Load-balances any traffic at the price of twice the hops.

use super::minimal::{eject, hop_class, toward};
use super::{PortView, Route, RouteQuery, Routing};
use crate::config::MinimalSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal, Topology};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct Valiant;

impl Routing for Valiant {
    #[inline]
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        let via = if q.hops == 0 { random_intermediate(topo, q, rng) } else { q.via };
        two_phase(topo, q, via, view, rng)
    }
}

/// A random switch with hosts, other than the packet's current and destination
/// switches (NIL when the fabric has no such switch). Switches without hosts (Megafly
/// spines) are never chosen: paths through them could exceed twice the diameter.
pub(super) fn random_intermediate(topo: &AnyTopology, q: &RouteQuery, rng: &mut Pcg64Mcg) -> u32 {
    let hosts = topo.num_hosts();
    let dst_switch = topo.host_switch(q.dst as usize).0;
    let src_switch = topo.host_switch(q.src as usize).0;
    if src_switch == dst_switch && topo.host_switch(0).0 == topo.host_switch(hosts - 1).0 {
        return NIL; // A single switch with hosts.
    }
    for _ in 0..64 {
        let s = topo.host_switch(rng.random_range(0..hosts)).0;
        if s != q.switch as usize && s != dst_switch {
            return s as u32;
        }
    }
    NIL
}

/// Routes toward `via` until it is reached, then toward the destination.
#[inline]
pub(super) fn two_phase(
    topo: &AnyTopology,
    q: &RouteQuery,
    via: u32,
    view: &impl PortView,
    rng: &mut Pcg64Mcg,
) -> Route {
    let here = q.switch as usize;
    let reached = via == q.switch;
    let via = if reached { NIL } else { via };
    let port = if via != NIL {
        toward(topo, here, via as usize, MinimalSelect::Random, view, rng)
    } else {
        let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
        if dst_switch == here {
            return eject(q, dst_port);
        }
        toward(topo, here, dst_switch, MinimalSelect::Random, view, rng)
    };
    Route { port, vc: hop_class(topo, q, reached), via }
}
