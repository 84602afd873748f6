//! Up/down routing on tree-like fabrics: climb until an ancestor of the destination,
//! then descend. The choice among equal up-ports is random, fixed per source, or
//! adaptive (least occupied).

use super::{PortView, Route, RouteQuery, Routing};
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
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        let index = if hops.count <= 1 {
            0
        } else {
            match self.select {
                UpSelect::Random => rng.random_range(0..hops.count),
                UpSelect::Deterministic => (q.src % hops.count as u32) as u16,
                UpSelect::Adaptive => {
                    (0..hops.count).min_by_key(|i| view.occupancy(hops.first + i)).expect("count > 1")
                }
            }
        };
        Route { port: hops.first + index, vc: q.vc, via: NIL }
    }
}
