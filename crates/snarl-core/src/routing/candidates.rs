//! What a routing offers the switch's allocator: one or more routes (output port, VC and
//! the intermediate switch still to visit), each with a weight. The allocator requests
//! the lightest routes (those with room for the packet among them, if any), chooses among
//! equal weights by which output grants first, and asks the routing again when the
//! outputs it waits for fill up (see `IoqFabric::post`). Deterministic routings offer one
//! route.

use super::{Route, RouteQuery};
use crate::packet::NIL;
use crate::topology::{AnyTopology, PortRange, UpDown};
use arrayvec::ArrayVec;

/// Most routes one decision may offer: the up-ports of a tree switch, or the minimal
/// ports toward a destination and toward an intermediate switch.
pub const MAX_CANDIDATES: usize = 128;

/// One route on offer; the lower the weight, the more it is preferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub route: Route,
    pub weight: u64,
}

/// The routes a routing offers for one packet at one switch.
///
/// Every route's `via` is either `NIL` or `intermediate`: the switch keeps
/// `intermediate` with the packet while it waits, so that asking again offers the same
/// detour (a source-adaptive routing draws it once per packet).
#[derive(Clone, Debug)]
pub struct Candidates {
    routes: ArrayVec<Candidate, MAX_CANDIDATES>,
    /// The intermediate switch of this packet's detour, if it has one (`NIL`: none).
    pub intermediate: u32,
}

impl Default for Candidates {
    fn default() -> Self {
        Candidates::new()
    }
}

impl Candidates {
    /// No routes yet, and no intermediate.
    #[inline]
    pub fn new() -> Candidates {
        Candidates { routes: ArrayVec::new(), intermediate: NIL }
    }

    /// Offers one route, of weight 0, and keeps its intermediate.
    #[inline]
    pub fn only(&mut self, route: Route) {
        self.routes.push(Candidate { route, weight: 0 });
        self.intermediate = route.via;
    }

    /// The equal next hops of `q` toward its destination when there is a choice among
    /// them; with one, offers it and returns None (the routings that choose start so).
    #[inline]
    pub fn choice_of_hops(&mut self, topo: &AnyTopology, q: &RouteQuery) -> Option<PortRange> {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        if hops.count <= 1 {
            self.only(Route { port: hops.first, vc: q.vc, via: NIL });
            return None;
        }
        Some(hops)
    }

    /// Offers `route` with `weight`. Routings offer at most `MAX_CANDIDATES` routes (their
    /// builders refuse fabrics that would need more), so a further one is a bug.
    #[inline]
    pub fn offer(&mut self, route: Route, weight: u64) {
        debug_assert!(route.via == NIL || route.via == self.intermediate, "a detour not through the intermediate");
        self.routes.push(Candidate { route, weight });
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    #[inline]
    pub fn as_slice(&self) -> &[Candidate] {
        &self.routes
    }

    /// The first route on offer (the only one of deterministic routings).
    #[inline]
    pub fn first(&self) -> Route {
        self.routes[0].route
    }
}
