//! ECMP: the up-port is a hash of the flow (5-tuple or queue-pair number), salted per
//! switch so that consecutive stages do not make correlated choices.

use super::hash::{mix64, qp_number};
use super::{likely, Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::EcmpHash;
use crate::packet::NIL;
use crate::topology::{AnyTopology, PortRange, UpDown, MAX_MINIMAL};
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
        out.only(Route { port: self.hashed(hops, q), vc: q.vc, via: NIL });
    }

    /// The one port the flow hashes to.
    #[inline(always)]
    fn likely_ports(&self, topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        likely::only(if hops.count <= 1 { hops.first } else { self.hashed(hops, q) }, ports)
    }
}

impl Ecmp {
    /// The port of `hops` (more than one) the flow of `q` hashes to at its switch.
    #[inline(always)]
    fn hashed(&self, hops: PortRange, q: &RouteQuery) -> u16 {
        let key = match self.hash {
            EcmpHash::FiveTuple => q.flow_hash(),
            EcmpHash::Qp => qp_number(q.src, q.dst, q.qp) as u64,
        };
        let salted = mix64(key ^ ((q.switch as u64) << 32));
        hops.first + (salted % hops.count as u64) as u16
    }
}
