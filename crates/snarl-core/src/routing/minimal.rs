//! Minimal routing on distance-based fabrics (Dragonfly, Megafly, HyperX, tori): every
//! hop brings the packet one switch closer to its destination. VCs follow hop classes
//! that only increase along a path, so no cyclic wait can form: on flat fabrics one class
//! per switch-to-switch hop; on hierarchical ones one per global hop and one at an
//! intermediate switch, so that each class holds at most one local hop per group visit
//! (Dragonfly: 2 VCs for minimal routes, 4 through an intermediate, as in the
//! endpoint-congestion study).

use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::MinimalSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal, MAX_MINIMAL};
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use std::ops::Range;

pub struct MinimalRouting {
    pub select: MinimalSelect,
    /// Hop-class VCs; without them packets keep their VC (and may deadlock).
    pub hop_classes: bool,
}

impl Routing for MinimalRouting {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
        if dst_switch == q.switch as usize {
            return out.only(eject(q, dst_port));
        }
        let vc = if self.hop_classes { hop_class(topo, q, false) } else { q.vc };
        match self.select {
            MinimalSelect::Random => {
                out.only(Route { port: toward(topo, q.switch as usize, dst_switch, rng), vc, via: NIL })
            }
            // Every minimal port, equally: the allocator takes one with room.
            MinimalSelect::Adaptive => offer_toward(topo, q.switch as usize, dst_switch, vc..vc + 1, NIL, out, |_| 0),
        }
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

/// A port of `switch` that starts a minimal path to switch `target`, at random.
#[inline]
pub(super) fn toward(topo: &AnyTopology, switch: usize, target: usize, rng: &mut Pcg64Mcg) -> u16 {
    let mut ports = [0u16; MAX_MINIMAL];
    let n = topo.minimal_ports(switch, target, &mut ports);
    debug_assert!(n > 0, "no minimal port from switch {switch} to {target}");
    if n <= 1 {
        ports[0]
    } else {
        ports[rng.random_range(0..n)]
    }
}

/// `offer_toward` with the weight a function of the port and of the distance from
/// `switch` to `target` (found in the same pass as the ports).
#[inline]
pub(super) fn offer_route(
    topo: &AnyTopology,
    switch: usize,
    target: usize,
    vcs: Range<u8>,
    via: u32,
    out: &mut Candidates,
    weight: impl Fn(u16, u64) -> u64,
) {
    let mut ports = [0u16; MAX_MINIMAL];
    let (hops, n) = topo.minimal_route(switch, target, &mut ports);
    offer_ports(&ports[..n], vcs, via, out, |port| weight(port, hops as u64));
}

/// Offers every port of `switch` that starts a minimal path to switch `target`, on each
/// VC of `vcs`, through `via`, weighed by `weight`.
#[inline]
pub(super) fn offer_toward(
    topo: &AnyTopology,
    switch: usize,
    target: usize,
    vcs: Range<u8>,
    via: u32,
    out: &mut Candidates,
    weight: impl Fn(u16) -> u64,
) {
    let mut ports = [0u16; MAX_MINIMAL];
    let n = topo.minimal_ports(switch, target, &mut ports);
    offer_ports(&ports[..n], vcs, via, out, weight);
}

/// Offers each of `ports` on each VC of `vcs`, through `via`, weighed by `weight`.
#[inline]
fn offer_ports(ports: &[u16], vcs: Range<u8>, via: u32, out: &mut Candidates, weight: impl Fn(u16) -> u64) {
    debug_assert!(!ports.is_empty(), "no minimal port toward the target");
    for &port in ports {
        let w = weight(port);
        for vc in vcs.clone() {
            out.offer(Route { port, vc, via }, w);
        }
    }
}
