//! D-mod-K: the up-port is a function of the destination alone, so all traffic to one
//! destination converges on one root and down-paths are contention free.

use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::packet::NIL;
use crate::topology::{AnyTopology, UpDown};
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
        let port = self.foreseen_port(topo, q).unwrap_or_default();
        out.only(Route { port, vc: q.vc, via: NIL });
    }

    #[inline(always)]
    fn foreseen_port(&self, topo: &AnyTopology, q: &RouteQuery) -> Option<u16> {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        Some(hops.first + hops.dmodk)
    }
}
