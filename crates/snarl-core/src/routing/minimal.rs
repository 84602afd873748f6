//! Minimal routing on distance-based fabrics (Dragonfly, Megafly, HyperX, tori): every
//! hop brings the packet one switch closer to its destination. VCs follow hop classes
//! that only increase along a path, so no cyclic wait can form: on flat fabrics one class
//! per switch-to-switch hop; on hierarchical ones one per global hop and one at an
//! intermediate switch, so that each class holds at most one local hop per group visit
//! (Dragonfly: 2 VCs for minimal routes, 4 through an intermediate, as in the
//! endpoint-congestion study).

use super::{PortView, Route, RouteQuery, Routing};
use crate::config::MinimalSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal, MAX_MINIMAL};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct MinimalRouting {
    pub select: MinimalSelect,
    /// Hop-class VCs; without them packets keep their VC (and may deadlock).
    pub hop_classes: bool,
}

impl Routing for MinimalRouting {
    #[inline]
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
        if dst_switch == q.switch as usize {
            return eject(q, dst_port);
        }
        let vc = if self.hop_classes { hop_class(topo, q, false) } else { q.vc };
        Route { port: toward(topo, q.switch as usize, dst_switch, self.select, view, rng), vc, via: NIL }
    }
}

/// The last hop, to the destination host: hosts always drain, so it keeps its VC.
#[inline]
pub(super) fn eject(q: &RouteQuery, port: u16) -> Route {
    Route { port, vc: q.vc, via: NIL }
}

/// The VC (class) of the next switch-to-switch hop; `at_intermediate`: the packet has
/// just reached its intermediate switch.
#[inline]
pub(super) fn hop_class(topo: &AnyTopology, q: &RouteQuery, at_intermediate: bool) -> u8 {
    if q.hops == 0 {
        return 0;
    }
    let step = topo.class_step(q.in_port);
    q.vc + step + u8::from(at_intermediate && topo.class_at_intermediate())
}

/// A port of `switch` that starts a minimal path to switch `target`.
#[inline]
pub(super) fn toward(
    topo: &AnyTopology,
    switch: usize,
    target: usize,
    select: MinimalSelect,
    view: &impl PortView,
    rng: &mut Pcg64Mcg,
) -> u16 {
    let mut ports = [0u16; MAX_MINIMAL];
    let n = topo.minimal_ports(switch, target, &mut ports);
    debug_assert!(n > 0, "no minimal port from switch {switch} to {target}");
    match (n, select) {
        (0 | 1, _) => ports[0],
        (_, MinimalSelect::Random) => ports[rng.random_range(0..n)],
        (_, MinimalSelect::Adaptive) => *ports[..n].iter().min_by_key(|&&p| view.occupancy(p)).expect("n > 1"),
    }
}
