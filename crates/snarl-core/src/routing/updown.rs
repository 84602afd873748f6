//! Up/down routing on tree-like fabrics: climb until an ancestor of the destination,
//! then descend. The choice among equal up-ports is random, fixed per source (S-mod-K:
//! at every level a digit of the source, as D-mod-K takes one of the destination, so
//! sources spread over the up-ports of every level), or adaptive (all of them are offered
//! and the allocator takes one with room as it arbitrates, as in an IOQ router).
//!
//! A packet keeps the VC it was injected on, or (`vcs = "any"`) is offered every VC of
//! the ports it may take, and the allocator takes one with room, as CAMINOS's up/down
//! does. Either is deadlock-free: every route climbs and then descends, so a channel
//! (switch, port, VC) only ever waits for one further along that order, whatever the VC.

use super::{likely, Candidates, PortView, Route, RouteQuery, Routing};
use crate::config::UpSelect;
use crate::packet::NIL;
use crate::topology::{AnyTopology, UpDown, MAX_MINIMAL};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct UpDownRouting {
    pub select: UpSelect,
    /// 0: the packet keeps its VC; n: VCs 0..n of every port are offered.
    pub any_vc: u8,
}

impl UpDownRouting {
    /// Offers `port` on the packet's VC, or on every VC.
    #[inline]
    fn offer_port(&self, q: &RouteQuery, port: u16, out: &mut Candidates) {
        if self.any_vc == 0 {
            out.offer(Route { port, vc: q.vc, via: NIL }, 0);
        } else {
            for vc in 0..self.any_vc {
                out.offer(Route { port, vc, via: NIL }, 0);
            }
        }
    }
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
                        self.offer_port(q, port, out);
                    }
                    return;
                }
            }
        };
        if self.any_vc == 0 {
            out.only(Route { port: hops.first + index, vc: q.vc, via: NIL });
        } else {
            self.offer_port(q, hops.first + index, out);
        }
    }

    /// The down-port; the up-port where it is fixed per source; else every up-port.
    #[inline(always)]
    fn likely_ports(&self, topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        match self.select {
            UpSelect::Deterministic if hops.count > 1 => {
                likely::only(hops.first + topo.up_digit(q.switch as usize, q.src as usize), ports)
            }
            _ => likely::next_hop_ports(hops, ports),
        }
    }
}
