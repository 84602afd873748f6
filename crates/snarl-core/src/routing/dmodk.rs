//! D-mod-K: the up-port is a function of the destination alone, so all traffic to one
//! destination converges on one root and down-paths are contention free.

use super::{likely, Candidates, PortView, Route, RouteQuery, Routing};
use crate::packet::NIL;
use crate::topology::{AnyTopology, UpDown, MAX_MINIMAL};
use rand_pcg::Pcg64Mcg;

pub struct DModK;

impl Routing for DModK {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        _rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        out.only(Route { port: self.port(topo, q), vc: q.vc, via: NIL });
    }

    #[inline(always)]
    fn likely_ports(&self, topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
        likely::only(self.port(topo, q), ports)
    }
}

impl DModK {
    /// The port of `q`: the destination's own among the next hops.
    #[inline(always)]
    fn port(&self, topo: &AnyTopology, q: &RouteQuery) -> u16 {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        hops.first + hops.dmodk
    }
}
