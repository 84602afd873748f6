//! UGAL (Kim et al., ISCA 2008), source-adaptive as in the endpoint-congestion study of
//! Postigo et al.: at the first switch a packet compares its minimal route with a
//! Valiant route through a random intermediate switch. Each weighs the occupancy of its
//! first output port (bytes queued there plus credits consumed downstream, summed over
//! the port's VCs, as the switch measures them itself) times the hops that route still
//! has to go. The Valiant route is taken only if it is lighter by more than a constant
//! threshold, which keeps traffic minimal at low load.

use super::minimal::toward;
use super::valiant::{random_intermediate, two_phase};
use super::{PortView, Route, RouteQuery, Routing};
use crate::config::MinimalSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Minimal};
use rand_pcg::Pcg64Mcg;

pub struct Ugal {
    /// In bytes times hops.
    pub threshold: u64,
}

impl Routing for Ugal {
    #[inline]
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        if q.hops > 0 {
            return two_phase(topo, q, q.via, view, rng);
        }
        let here = q.switch as usize;
        let dst_switch = topo.host_switch(q.dst as usize).0;
        if dst_switch == here {
            return two_phase(topo, q, NIL, view, rng);
        }
        let via = random_intermediate(topo, q, rng);
        if via == NIL {
            return two_phase(topo, q, NIL, view, rng);
        }
        let minimal_port = toward(topo, here, dst_switch, MinimalSelect::Adaptive, view, rng);
        let minimal_weight = view.occupancy(minimal_port) * topo.distance(here, dst_switch) as u64;
        let valiant_port = toward(topo, here, via as usize, MinimalSelect::Adaptive, view, rng);
        let valiant_hops = topo.distance(here, via as usize) + topo.distance(via as usize, dst_switch);
        let valiant_weight = view.occupancy(valiant_port) * valiant_hops as u64;
        if valiant_weight + self.threshold < minimal_weight {
            let mut route = two_phase(topo, q, via, view, rng);
            route.port = valiant_port;
            route
        } else {
            let mut route = two_phase(topo, q, NIL, view, rng);
            route.port = minimal_port;
            route
        }
    }
}
