//! UGAL (Kim et al., ISCA 2008), source-adaptive as in the endpoint-congestion study of
//! Postigo et al.: at the first switch a packet is offered every minimal port and every
//! port toward a random intermediate switch (a Valiant detour), each weighed as Singh
//! does: (occupancy + threshold) x the hops its route still has to go. The allocator
//! takes the lightest, waiting for it if it has no room (see `switch::ioq::allocation`);
//! the constant threshold keeps the shorter route the lighter at low load. Further switches offer every minimal
//! port toward the intermediate, then toward the destination, equally.
//!
//! The occupancy is, for UGAL-L (the default), the credits the switch has used on the
//! port: bytes it sent downstream that the next switch still holds, summed over the
//! port's VCs, as the paper's switches measure them; for UGAL-G, the idealised variant,
//! the sum of the queued-plus-credit occupancies over the outputs the route takes in the
//! source group up to and including its first global link, which a real router could not
//! read.
//!
//! The intermediate is drawn once per packet: a packet whose outputs fill up while it
//! waits is offered the same detour again (with today's weights). `redraw` draws a new
//! intermediate each time instead, an extension the paper does not use.

use super::minimal::{eject, hop_class, offer_route, offer_toward};
use super::valiant::random_intermediate;
use super::{Candidates, PortView, RouteQuery, Routing};
use crate::config::UgalInformation;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Endpoint, Minimal, Topology, MAX_MINIMAL};
use rand_pcg::Pcg64Mcg;

pub struct Ugal {
    /// Bytes added to every route's occupancy before it is multiplied by the hops, so
    /// that at low load the shorter route weighs less.
    pub threshold: u64,
    pub information: UgalInformation,
    /// Draw a new intermediate each time a waiting packet's routes are reconsidered at
    /// its first switch (rather than once per packet).
    pub redraw: bool,
    /// VCs a packet on a minimal route may start on at its first switch (it keeps the one
    /// it takes); 0: its hop class only.
    pub minimal_vcs: u8,
}

impl Routing for Ugal {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let here = q.switch as usize;
        let (dst_switch, dst_port) = topo.host_switch(q.dst as usize);
        if q.hops > 0 {
            // On the chosen route: every minimal port toward the intermediate, once
            // there toward the destination.
            let reached = q.via == q.switch;
            let via = if reached { NIL } else { q.via };
            if via == NIL && dst_switch == here {
                return out.only(eject(q, dst_port));
            }
            let target = if via == NIL { dst_switch } else { via as usize };
            out.intermediate = via;
            let class = hop_class(topo, q, reached);
            return offer_toward(topo, here, target, class..class + 1, via, out, |_| 0);
        }
        if dst_switch == here {
            return out.only(eject(q, dst_port));
        }
        let via = if q.via == NIL || self.redraw { random_intermediate(topo, q, dst_switch, rng) } else { q.via };
        // At the source: the packet's first hop class, whichever route it takes. Each
        // port weighs its occupancy (plus the threshold) times the hops its route still
        // has to go (Singh).
        let vc = hop_class(topo, q, false);
        let weight = |load: u64, hops: u64| (self.threshold + load) * hops;
        offer_route(topo, here, dst_switch, self.vcs(vc, NIL), NIL, out, |port, hops| {
            weight(self.load(topo, here, port, dst_switch, view), hops)
        });
        if via == NIL {
            return;
        }
        out.intermediate = via;
        let onward = topo.distance(via as usize, dst_switch) as u64;
        offer_route(topo, here, via as usize, vc..vc + 1, via, out, |port, hops| {
            weight(self.load(topo, here, port, via as usize, view), hops + onward)
        });
    }
}

impl Ugal {
    /// The VCs a route of hop class `class` through `via` may start on at the source: its
    /// class, or for a minimal route any VC from it up when `minimal_vcs` allows (the
    /// packet then keeps it: each VC carries whole minimal routes).
    #[inline]
    fn vcs(&self, class: u8, via: u32) -> std::ops::Range<u8> {
        if via == NIL && self.minimal_vcs > class {
            class..self.minimal_vcs
        } else {
            class..class + 1
        }
    }

    /// The occupancy a route leaving `here` by `port` toward `target` is weighed by: for
    /// UGAL-L the port's own (credits in use, as the switch counts them); for UGAL-G the
    /// outputs the route takes through the source group.
    #[inline]
    fn load(&self, topo: &AnyTopology, here: usize, port: u16, target: usize, view: &impl PortView) -> u64 {
        match self.information {
            UgalInformation::Local => view.credits_in_use(port),
            UgalInformation::Global => source_group_load(topo, here, port, target, view),
        }
    }
}

/// UGAL-G's view of a minimal route from `from` toward `target` that leaves by `port`:
/// the summed occupancy of the outputs it takes, the least occupied minimal one at each
/// switch, up to and including the first global link (or the whole route on flat
/// fabrics).
fn source_group_load(topo: &AnyTopology, from: usize, port: u16, target: usize, view: &impl PortView) -> u64 {
    let (mut switch, mut port, mut load) = (from, port, 0);
    loop {
        load += view.occupancy_at(switch, port);
        if topo.is_global_port(switch, port) {
            return load;
        }
        match topo.peer(switch, port as usize) {
            Endpoint::Switch { switch: next, .. } if next as usize != target => switch = next as usize,
            _ => return load,
        }
        let mut ports = [0u16; MAX_MINIMAL];
        let n = topo.minimal_ports(switch, target, &mut ports);
        match ports[..n].iter().min_by_key(|&&p| view.occupancy_at(switch, p)) {
            Some(&next) => port = next,
            None => return load,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig};
    use crate::topology;
    use rand::SeedableRng;

    /// Every output is empty except one global link of another switch of the group.
    struct HiddenHotspot {
        switch: usize,
        port: u16,
    }

    impl PortView for HiddenHotspot {
        fn occupancy(&self, _port: u16) -> u64 {
            0
        }
        fn occupancy_at(&self, switch: usize, port: u16) -> u64 {
            if (switch, port) == (self.switch, self.port) {
                1 << 20
            } else {
                0
            }
        }
        fn credits_in_use(&self, _port: u16) -> u64 {
            0
        }
        fn has_room(&self, _port: u16, _vc: u8, _bytes: u64) -> bool {
            true
        }
    }

    /// The minimal route of a packet leaves its group through a saturated global link of
    /// another switch. UGAL-L sees only its own empty outputs and always stays minimal;
    /// UGAL-G sees the global link and always goes the long way (an intermediate lies
    /// outside the destination group, so its route never takes that link).
    #[test]
    fn only_global_information_sees_a_congested_global_link_downstream() {
        let cfg: TopologyConfig = toml::from_str(
            "type = 'dragonfly'\nhosts_per_switch = 2\nswitches_per_group = 4\nglobal_links_per_switch = 2",
        )
        .unwrap();
        let topo = topology::build(&cfg, &LinksConfig::default()).unwrap();
        // A source host on switch 0 and a destination whose group switch 0 has no global
        // link to: the minimal route crosses a local link, then another switch's global link.
        let (src, here) = (0u32, 0usize);
        let dst = (0..topo.num_hosts() as u32)
            .find(|&h| {
                let d = topo.host_switch(h as usize).0;
                let mut ports = [0u16; MAX_MINIMAL];
                let n = topo.minimal_ports(here, d, &mut ports);
                topo.distance(here, d) == 3 && ports[..n].iter().all(|&p| !topo.is_global_port(here, p))
            })
            .expect("a destination two groups' hops away");
        let target = topo.host_switch(dst as usize).0;
        let mut ports = [0u16; MAX_MINIMAL];
        topo.minimal_ports(here, target, &mut ports);
        let Endpoint::Switch { switch: gateway, .. } = topo.peer(here, ports[0] as usize) else { panic!() };
        let mut gateway_ports = [0u16; MAX_MINIMAL];
        topo.minimal_ports(gateway as usize, target, &mut gateway_ports);
        let view = HiddenHotspot { switch: gateway as usize, port: gateway_ports[0] };
        let q =
            RouteQuery { switch: here as u32, src, dst, qp: 0, vc: 0, hops: 0, in_port: 0, via: NIL, size: 64, now: 0 };
        let detours = |information| {
            let ugal = Ugal { threshold: 0, information, redraw: false, minimal_vcs: 0 };
            let mut rng = Pcg64Mcg::seed_from_u64(1);
            (0..100).filter(|_| lightest(&ugal, &topo, &q, &view, &mut rng).via != NIL).count()
        };
        assert_eq!(detours(UgalInformation::Local), 0);
        assert_eq!(detours(UgalInformation::Global), 100);
    }

    /// The route the allocator prefers when every output has room: the lightest.
    fn lightest(
        ugal: &Ugal,
        topo: &AnyTopology,
        q: &RouteQuery,
        view: &impl PortView,
        rng: &mut Pcg64Mcg,
    ) -> crate::routing::Route {
        let mut offer = Candidates::new();
        ugal.route(topo, q, view, rng, &mut offer);
        offer.as_slice().iter().min_by_key(|c| c.weight).unwrap().route
    }

    /// Credits in use by port.
    struct Credits(Vec<u64>);
    impl PortView for Credits {
        fn occupancy(&self, port: u16) -> u64 {
            self.0[port as usize] + 1_000_000 // Queued bytes do not count.
        }
        fn occupancy_at(&self, _switch: usize, port: u16) -> u64 {
            self.occupancy(port)
        }
        fn credits_in_use(&self, port: u16) -> u64 {
            self.0[port as usize]
        }
        fn has_room(&self, _port: u16, _vc: u8, _bytes: u64) -> bool {
            true
        }
    }

    /// At its first switch a packet is offered every minimal port, weighed by the credits
    /// in use times the minimal hops, and every port toward its intermediate, weighed by
    /// the credits in use times the detour's hops plus the threshold (Singh's weight);
    /// asked again, it keeps its intermediate. Further on, it is offered every minimal port
    /// toward its intermediate, equally.
    #[test]
    fn the_source_offers_every_route_at_singh_weights_and_keeps_its_intermediate() {
        let cfg: TopologyConfig = toml::from_str("type = 'hyperx'\nsides = [4, 4]\nhosts_per_switch = 1").unwrap();
        let topo = topology::build(&cfg, &LinksConfig::default()).unwrap();
        let credits = Credits((0..topo.num_ports(0) as u64).map(|p| 100 * (p + 1)).collect());
        let q = RouteQuery { switch: 0, src: 0, dst: 5, qp: 0, vc: 0, hops: 0, in_port: 0, via: NIL, size: 64, now: 0 };
        let ugal = Ugal { threshold: 7, information: UgalInformation::Local, redraw: false, minimal_vcs: 0 };
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut offer = Candidates::new();
        ugal.route(&topo, &q, &credits, &mut rng, &mut offer);
        let via = offer.intermediate;
        assert!(via != NIL && via != 0 && via != 5);
        let mut minimal = [0u16; MAX_MINIMAL];
        let n = topo.minimal_ports(0, 5, &mut minimal);
        let mut toward_via = [0u16; MAX_MINIMAL];
        let m = topo.minimal_ports(0, via as usize, &mut toward_via);
        assert_eq!(offer.len(), n + m);
        let detour_hops = (topo.distance(0, via as usize) + topo.distance(via as usize, 5)) as u64;
        for c in offer.as_slice() {
            let used = credits.0[c.route.port as usize];
            assert_eq!(c.route.vc, 0);
            if c.route.via == NIL {
                assert!(minimal[..n].contains(&c.route.port));
                assert_eq!(c.weight, (7 + used) * topo.distance(0, 5) as u64);
            } else {
                assert!(toward_via[..m].contains(&c.route.port));
                assert_eq!((c.route.via, c.weight), (via, (7 + used) * detour_hops));
            }
        }
        // Asked again while it waits (its intermediate kept with it): the same detour.
        for _ in 0..10 {
            let mut again = Candidates::new();
            ugal.route(&topo, &RouteQuery { via, ..q }, &credits, &mut rng, &mut again);
            assert_eq!(again.intermediate, via);
        }
        // With `redraw`, a new intermediate each time (almost surely not always the same).
        let redraw = Ugal { redraw: true, ..ugal };
        let drawn: std::collections::HashSet<u32> = (0..20)
            .map(|_| {
                let mut again = Candidates::new();
                redraw.route(&topo, &RouteQuery { via, ..q }, &credits, &mut rng, &mut again);
                again.intermediate
            })
            .collect();
        assert!(drawn.len() > 1, "{drawn:?}");
        // One hop on, toward the intermediate: its minimal ports, equally, on the next
        // hop class.
        let Endpoint::Switch { switch: next, port: in_port } = topo.peer(0, toward_via[0] as usize) else { panic!() };
        if next != via {
            let on = RouteQuery { switch: next, hops: 1, in_port, via, ..q };
            let mut offer = Candidates::new();
            ugal.route(&topo, &on, &credits, &mut rng, &mut offer);
            assert!(offer.as_slice().iter().all(|c| c.weight == 0 && c.route.via == via && c.route.vc == 1));
        }
    }
}
