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
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        out.only(Route { port: hops.first + hops.dmodk, vc: q.vc, via: NIL });
    }
}
