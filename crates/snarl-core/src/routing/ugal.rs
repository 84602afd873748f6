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

use super::minimal::toward;
use super::valiant::{random_intermediate, two_phase};
use super::{PortView, Route, RouteQuery, Routing};
use crate::config::{MinimalSelect, UgalInformation};
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
        let valiant_hops = (topo.distance(here, via as usize) + topo.distance(via as usize, dst_switch)) as u64;
        let minimal_hops = topo.distance(here, dst_switch) as u64;
        let (minimal_port, minimal_load, valiant_port, valiant_load) = match self.information {
            UgalInformation::Local => {
                let minimal_port = toward(topo, here, dst_switch, MinimalSelect::Adaptive, view, rng);
                let valiant_port = toward(topo, here, via as usize, MinimalSelect::Adaptive, view, rng);
                (minimal_port, view.occupancy(minimal_port), valiant_port, view.occupancy(valiant_port))
            }
            UgalInformation::Global => {
                let (minimal_port, minimal_load) = source_group_load(topo, here, dst_switch, view);
                let (valiant_port, valiant_load) = source_group_load(topo, here, via as usize, view);
                (minimal_port, minimal_load, valiant_port, valiant_load)
            }
        };
        if valiant_load * valiant_hops + self.threshold < minimal_load * minimal_hops {
            let mut route = two_phase(topo, q, via, view, rng);
            route.port = valiant_port;
            route
        } else {
            let mut route = two_phase(topo, q, NIL, view, rng);
            route.port = minimal_port;
            route
        }
    }
}

/// UGAL-G's view of a minimal route from `from` toward `target`: following the least
/// occupied minimal output at each switch, the summed occupancy of the outputs taken up
/// to and including the first global link (or the whole route on flat fabrics), and the
/// first of those outputs.
fn source_group_load(topo: &AnyTopology, from: usize, target: usize, view: &impl PortView) -> (u16, u64) {
    let (mut switch, mut first, mut load) = (from, None, 0);
    while switch != target {
        let mut ports = [0u16; MAX_MINIMAL];
        let n = topo.minimal_ports(switch, target, &mut ports);
        let Some(&port) = ports[..n].iter().min_by_key(|&&p| view.occupancy_at(switch, p)) else { break };
        load += view.occupancy_at(switch, port);
        first.get_or_insert(port);
        if topo.is_global_port(switch, port) {
            break;
        }
        match topo.peer(switch, port as usize) {
            Endpoint::Switch { switch: next, .. } => switch = next as usize,
            _ => break,
        }
    }
    (first.unwrap_or(0), load)
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
    }

    /// The minimal route of a packet leaves its group through a saturated global link of
    /// another switch. UGAL-L sees only its own empty outputs and always stays minimal;
    /// UGAL-G sees the global link and goes the long way unless the random intermediate's
    /// route crosses the same link (then both routes are as heavy and minimal wins).
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
        let q = RouteQuery { switch: here as u32, src, dst, qp: 0, vc: 0, hops: 0, in_port: 0, via: NIL };
        let detours = |information| {
            let ugal = Ugal { threshold: 0, information };
            let mut rng = Pcg64Mcg::seed_from_u64(1);
            (0..100).filter(|_| ugal.route(&topo, &q, &view, &mut rng).via != NIL).count()
        };
        assert_eq!(detours(UgalInformation::Local), 0);
        let global = detours(UgalInformation::Global);
        assert!(global >= 60, "UGAL-G detoured {global} of 100 packets");
    }
}
