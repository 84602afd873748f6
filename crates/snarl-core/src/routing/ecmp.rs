//! ECMP: the up-port is a hash of the flow (5-tuple or queue-pair number), salted per
//! switch so that consecutive stages do not make correlated choices.

use super::hash::{mix64, qp_number};
use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::EcmpHash;
use crate::packet::NIL;
use crate::topology::AnyTopology;
use rand_pcg::Pcg64Mcg;

pub struct Ecmp {
    pub hash: EcmpHash,
}

impl Routing for Ecmp {
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
        let salted = mix64(key ^ ((q.switch as u64) << 32));
        out.only(Route { port: hops.first + (salted % hops.count as u64) as u16, vc: q.vc, via: NIL });
    }
}
