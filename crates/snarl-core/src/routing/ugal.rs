//! UGAL (Kim et al., ISCA 2008), source-adaptive as in the endpoint-congestion study of
//! Postigo et al.: at the first switch a packet compares its minimal route with a
//! Valiant route through a random intermediate switch. Each weighs an occupancy times
//! the hops that route still has to go; the Valiant route is taken only if it is lighter
//! by more than a constant threshold, which keeps traffic minimal at low load.
//!
//! The occupancy is, for UGAL-L (the default), that of the route's first output port
//! (bytes queued there plus credits consumed downstream, summed over the port's VCs, as
//! the switch measures them itself); for UGAL-G, the idealised variant, the sum over
//! the outputs the route takes in the source group up to and including its first global
//! link, which a real router could not read.
//!
//! A packet waiting at its first switch for a full output is routed again (with a new
//! intermediate), as a router re-evaluates a waiting head packet, and leaves by the new
//! route if its output has room (see `IoqFabric::reroute_waiting`): without that, the
//! packets that once chose a saturated minimal route block their input queues, and UGAL
//! falls below Valiant under adversarial traffic. Among several minimal ports, one with
//! room for the packet is preferred.

use super::minimal::hop_class;
use super::valiant::{random_intermediate, two_phase};
use super::{PortView, Route, RouteQuery, Routing};
use crate::config::UgalInformation;
use crate::packet::NIL;
use crate::topology::{AnyTopology, Endpoint, Minimal, Topology, MAX_MINIMAL};
use rand_pcg::Pcg64Mcg;

pub struct Ugal {
    /// In bytes times hops.
    pub threshold: u64,
    pub information: UgalInformation,
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
        let minimal = self.candidate(topo, q, NIL, dst_switch, view);
        let valiant = self.candidate(topo, q, via, via as usize, view);
        let valiant_hops = valiant.hops + topo.distance(via as usize, dst_switch) as u64;
        if valiant.load * valiant_hops + self.threshold < minimal.load * minimal.hops {
            valiant.route
        } else {
            minimal.route
        }
    }
}

/// One of the two routes UGAL weighs.
struct Candidate {
    route: Route,
    /// Occupancy the weight multiplies by the route's hops.
    load: u64,
    /// Hops from here to the candidate's target (the destination, or the intermediate).
    hops: u64,
}

impl Ugal {
    /// The route through `via` (NIL: minimal) leaving by the best minimal port toward
    /// `target`: among the ports with room for the packet if any, the least loaded, as
    /// UGAL-L (the port itself) or UGAL-G (the route through the source group) sees it.
    fn candidate(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        via: u32,
        target: usize,
        view: &impl PortView,
    ) -> Candidate {
        let (here, size) = (q.switch as usize, q.size as u64);
        // At the source: the packet's first hop class, whichever route it takes.
        let vc = hop_class(topo, q, false);
        let load = |port: u16| match self.information {
            UgalInformation::Local => view.occupancy(port),
            UgalInformation::Global => source_group_load(topo, here, port, target, view),
        };
        let mut ports = [0u16; MAX_MINIMAL];
        let (hops, n) = topo.minimal_route(here, target, &mut ports);
        let (port, load) = ports[..n]
            .iter()
            .map(|&p| (p, load(p)))
            .min_by_key(|&(p, load)| (!view.has_room(p, vc, size), load))
            .expect("a minimal port toward another switch");
        Candidate { route: Route { port, vc, via }, load, hops: hops as u64 }
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
            let ugal = Ugal { threshold: 0, information };
            let mut rng = Pcg64Mcg::seed_from_u64(1);
            (0..100).filter(|_| ugal.route(&topo, &q, &view, &mut rng).via != NIL).count()
        };
        assert_eq!(detours(UgalInformation::Local), 0);
        assert_eq!(detours(UgalInformation::Global), 100);
    }

    /// Of two minimal ports, the lighter one has no room for the packet: the route
    /// leaves by the other rather than wait.
    #[test]
    fn a_minimal_port_with_room_beats_a_lighter_one_without() {
        struct FullLightPort(u16);
        impl PortView for FullLightPort {
            fn occupancy(&self, port: u16) -> u64 {
                if port == self.0 {
                    0
                } else {
                    1000
                }
            }
            fn occupancy_at(&self, _switch: usize, port: u16) -> u64 {
                self.occupancy(port)
            }
            fn has_room(&self, port: u16, _vc: u8, _bytes: u64) -> bool {
                port != self.0
            }
        }
        let cfg: TopologyConfig = toml::from_str("type = 'hyperx'\nsides = [4, 4]\nhosts_per_switch = 1").unwrap();
        let topo = topology::build(&cfg, &LinksConfig::default()).unwrap();
        // Switch 0 to switch 5 differs in both dimensions: two minimal ports.
        let mut ports = [0u16; MAX_MINIMAL];
        assert_eq!(topo.minimal_ports(0, 5, &mut ports), 2);
        let view = FullLightPort(ports[0]);
        let q = RouteQuery { switch: 0, src: 0, dst: 5, qp: 0, vc: 0, hops: 0, in_port: 0, via: NIL, size: 64, now: 0 };
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        for information in [UgalInformation::Local, UgalInformation::Global] {
            // A threshold no detour can beat keeps the packet minimal.
            let ugal = Ugal { threshold: 1 << 40, information };
            for _ in 0..20 {
                let route = ugal.route(&topo, &q, &view, &mut rng);
                assert_eq!((route.port, route.via), (ports[1], NIL), "{information:?}");
            }
        }
    }
}
