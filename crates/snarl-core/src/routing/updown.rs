//! Up/down routing on tree-like fabrics: climb until an ancestor of the destination,
//! then descend. The choice among equal up-ports is random, fixed per source (S-mod-K:
//! at every level a digit of the source, as D-mod-K takes one of the destination, so
//! sources spread over the up-ports of every level), or adaptive (all of them are offered
//! and the allocator takes one with room as it arbitrates, as in an IOQ router).

use super::{Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::UpSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, UpDown};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct UpDownRouting {
    pub select: UpSelect,
}

impl Routing for UpDownRouting {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        let index = if hops.count <= 1 {
            0
        } else {
            match self.select {
                UpSelect::Random => rng.random_range(0..hops.count),
                UpSelect::Deterministic => topo.up_digit(q.switch as usize, q.src as usize),
                UpSelect::Adaptive => {
                    // Every up-port, equally: the allocator takes one with room whose
                    // crossbar path frees first.
                    for port in hops.first..hops.first + hops.count {
                        out.offer(Route { port, vc: q.vc, via: NIL }, 0);
                    }
                    return;
                }
            }
        };
        out.only(Route { port: hops.first + index, vc: q.vc, via: NIL });
    }
}
