//! Routing: at each switch, offer the output ports (and VCs) the packet at the head of
//! an input queue may take ([`Candidates`]); the switch's allocator chooses among them.
//! Routings see the switch only through a read-only [`PortView`].
//!
//! A routing may keep state of its own per switch ([`PerSwitch`], sized in
//! [`AnyRouting::build`] and reached by [`RouteQuery::switch`]; `route` takes `&self`
//! because the switch lends it a view of its queues while it decides), and sees the
//! current time ([`RouteQuery::now`]) and, on demand, a hash of the packet's flow
//! ([`RouteQuery::flow_hash`]); routings that use none of these pay nothing for them.

mod adaptive;
mod candidates;
mod config;
mod dmodk;
mod dre;
mod ecmp;
mod flowlet;
mod flowlet_table;
pub mod hash;
mod leaf_tables;
pub mod likely;
mod minimal;
mod planner;
mod spray;
mod state;
#[cfg(test)]
mod stateful_test;
mod ugal;
mod updown;
mod valiant;

pub use adaptive::{Adaptive, AdaptiveSettings};
pub use candidates::{Candidate, Candidates, MAX_CANDIDATES};
pub use config::{
    AdaptiveMode, EcmpHash, MinimalSelect, MinimalVcs, RoutingConfig, SprayMode, Telemetry, UgalInformation, UpDownVcs,
    UpSelect, MAX_TABLE,
};
pub use dmodk::DModK;
pub use ecmp::Ecmp;
pub use flowlet::Flowlet;
pub use minimal::MinimalRouting;
pub use planner::Planner;
pub use spray::Spray;
pub use state::PerSwitch;
pub use ugal::Ugal;
pub use updown::UpDownRouting;
pub use valiant::Valiant;

use crate::error::{Error, Result};
use crate::topology::{AnyTopology, Topology, MAX_MINIMAL};
use rand_pcg::Pcg64Mcg;

/// Most VCs of one port a routing may offer for one packet: a waiting request records
/// its choice of output VCs in a byte.
pub const MAX_VC_CHOICE: usize = 8;

/// What a routing decision may depend on.
#[derive(Clone, Copy, Debug)]
pub struct RouteQuery {
    pub switch: u32,
    pub src: u32,
    pub dst: u32,
    /// Queue pair of the flow within (src, dst).
    pub qp: u32,
    /// VC the packet arrived on.
    pub vc: u8,
    /// Switch-to-switch hops taken so far (0 at the first switch).
    pub hops: u16,
    /// Port of this switch the packet arrived by.
    pub in_port: u16,
    /// Intermediate switch still to visit (Valiant, UGAL), or `NIL`.
    pub via: u32,
    /// Packet size in bytes.
    pub size: u32,
    /// The current time (ps), for routings that keep time-dependent state.
    pub now: u64,
}

impl RouteQuery {
    /// A hash of the packet's flow: its 5-tuple, with the UDP source port derived from
    /// the queue pair as RoCEv2 NICs do (ECMP's `five_tuple` hash). Computed on demand,
    /// so routings that do not ask do not pay for it.
    #[inline]
    pub fn flow_hash(&self) -> u64 {
        hash::five_tuple(self.src, self.dst, self.qp)
    }
}

/// A packet leaving a switch output, as a routing that measures the fabric hears of it
/// ([`AnyRouting::measures`]).
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    pub switch: u32,
    pub port: u16,
    /// The packet's handle, valid until it is delivered (or dropped): a routing may keep
    /// notes on a packet in a table indexed by it, written where the packet enters the
    /// fabric (at `hops` 0, which every packet crossing the fabric passes first).
    pub packet: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes of its frame.
    pub size: u32,
    /// Switch-to-switch hops taken before this one (0 at the first switch).
    pub hops: u16,
    /// The output leads to a host: the packet leaves the fabric.
    pub to_host: bool,
    /// When its transmission starts (ps): the current time, or a later one the switch
    /// has committed it to (the only packet for an idle link, waiting for its head).
    pub at: u64,
}

/// A route: output port, output VC, and the intermediate switch the packet still has to
/// visit (`NIL`: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub port: u16,
    pub vc: u8,
    pub via: u32,
}

/// Read-only state of the switch doing the routing.
pub trait PortView {
    /// Bytes waiting at, or in flight from, the output side of `port` of this switch:
    /// output queue occupancy plus credits consumed downstream, summed over VCs.
    fn occupancy(&self, port: u16) -> u64;

    /// The same measure at another switch: global knowledge, for idealised routings
    /// (UGAL-G) only.
    fn occupancy_at(&self, switch: usize, port: u16) -> u64;

    /// Credits of `port` of this switch in use: bytes sent downstream whose space the
    /// next switch has not yet freed, summed over VCs (what a switch counts itself).
    fn credits_in_use(&self, port: u16) -> u64;

    /// Whether output queue (`port`, `vc`) of this switch has room for `bytes` now.
    fn has_room(&self, port: u16, vc: u8, bytes: u64) -> bool;
}

/// A routing: called for the packet at the head of an input queue of switch `q.switch`
/// (and again while it waits, when the outputs it asked for have filled up); offers its
/// routes in `out`, which comes empty.
pub trait Routing {
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg, out: &mut Candidates);

    /// The ports `route` will most likely offer for `q`, worked out without a random
    /// draw or the switch's state (`q.now` unused), for the lookahead to prefetch:
    /// returns how many there are, and names them in `ports` where there are at most
    /// [`likely::NAMED_LIKELY`]. A hint: a wrong guess costs only the prefetch. By default
    /// the ports of the shortest way ([`likely::shortest_ports`]); a routing that can tell
    /// its one port names it.
    #[inline(always)]
    fn likely_ports(&self, topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
        likely::shortest_ports(topo, q, ports)
    }
}

/// A routing made outside this crate, boxed in [`AnyRouting::Custom`]: [`Routing`] with
/// the switch's view behind a reference to a trait object (a built-in routing is
/// dispatched statically, and so is its view).
pub trait CustomRouting {
    /// As [`Routing::route`].
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &dyn PortView, rng: &mut Pcg64Mcg, out: &mut Candidates);

    /// Whether it may offer several routes (see [`AnyRouting::offers_choices`]).
    fn offers_choices(&self) -> bool {
        false
    }

    /// Whether it hears of every packet leaving a switch output (see
    /// [`AnyRouting::measures`]).
    fn measures(&self) -> bool {
        false
    }

    /// A packet leaves a switch output (called only if `measures`).
    fn departed(&mut self, _topo: &AnyTopology, _d: &Departure) {}
}

/// The routings, dispatched statically: the built-in ones, and one made outside this
/// crate (`Custom`, installed with `Simulation::with_components`).
pub enum AnyRouting {
    UpDown(UpDownRouting),
    DModK(DModK),
    Ecmp(Ecmp),
    Flowlet(Flowlet),
    Spray(Spray),
    Planner(Planner),
    /// Boxed: its state is ten times the others'.
    Adaptive(Box<Adaptive>),
    Minimal(MinimalRouting),
    Valiant(Valiant),
    Ugal(Ugal),
    Custom(Box<dyn CustomRouting + Send>),
}

impl Routing for AnyRouting {
    /// Dispatched to the routings that tell their ports otherwise than by the shortest
    /// way; a routing that overrides `likely_ports` gets an arm here (the routing walk
    /// test fails for one whose offers the default does not foresee). Fewer arms than
    /// `route` keep the lookahead's call small: 7-12 instructions per packet-hop fewer on
    /// the endpoint-study cases than an arm per routing.
    #[inline(always)]
    fn likely_ports(&self, topo: &AnyTopology, q: &RouteQuery, ports: &mut [u16; MAX_MINIMAL]) -> usize {
        match self {
            AnyRouting::UpDown(r) => r.likely_ports(topo, q, ports),
            AnyRouting::DModK(r) => r.likely_ports(topo, q, ports),
            AnyRouting::Ecmp(r) => r.likely_ports(topo, q, ports),
            _ => likely::shortest_ports(topo, q, ports),
        }
    }

    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        view: &impl PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        match self {
            AnyRouting::UpDown(r) => r.route(topo, q, view, rng, out),
            AnyRouting::DModK(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Ecmp(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Flowlet(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Spray(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Planner(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Adaptive(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Minimal(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Valiant(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Ugal(r) => r.route(topo, q, view, rng, out),
            AnyRouting::Custom(r) => r.route(topo, q, view, rng, out),
        }
    }
}

impl AnyRouting {
    /// Whether the routing may offer several routes, among which the allocator chooses
    /// (and which it asks for again when the ones a waiting packet asked for fill up).
    pub fn offers_choices(&self) -> bool {
        match self {
            AnyRouting::UpDown(r) => r.select == UpSelect::Adaptive || r.any_vc > 0,
            AnyRouting::Minimal(r) => r.select == MinimalSelect::Adaptive,
            AnyRouting::Ugal(_) => true,
            AnyRouting::Adaptive(r) => r.offers_choices(),
            AnyRouting::DModK(_)
            | AnyRouting::Ecmp(_)
            | AnyRouting::Flowlet(_)
            | AnyRouting::Spray(_)
            | AnyRouting::Planner(_)
            | AnyRouting::Valiant(_) => false,
            AnyRouting::Custom(r) => r.offers_choices(),
        }
    }

    /// Whether the switches tell the routing of every packet leaving an output
    /// ([`AnyRouting::departed`]): routings that measure the links they choose among. The
    /// switches ask once, when the fabric is built; the others' packets pay one branch.
    pub fn measures(&self) -> bool {
        match self {
            AnyRouting::Adaptive(_) => true,
            AnyRouting::Custom(r) => r.measures(),
            _ => false,
        }
    }

    /// Packet `d.packet` leaves output `d.port` of switch `d.switch` (only for routings
    /// that `measures`).
    #[inline]
    pub fn departed(&mut self, topo: &AnyTopology, d: &Departure) {
        match self {
            AnyRouting::Adaptive(r) => r.departed(d),
            AnyRouting::Custom(r) => r.departed(topo, d),
            _ => {}
        }
    }

    /// Builds the routing for `topo`; refuses combinations that cannot work: tree
    /// routings on fabrics without an up/down structure, distance-based routings on
    /// fabrics without a distance, and too few VCs for the hop classes a routing needs.
    pub fn build(config: &RoutingConfig, topo: &AnyTopology, vcs: usize, mtu: u64) -> Result<AnyRouting> {
        let tree = matches!(
            config,
            RoutingConfig::Updown { .. }
                | RoutingConfig::Dmodk {}
                | RoutingConfig::Ecmp { .. }
                | RoutingConfig::Flowlet { .. }
                | RoutingConfig::Spray { .. }
                | RoutingConfig::Planner { .. }
                | RoutingConfig::Adaptive { .. }
        );
        if tree && !topo.supports_up_down() {
            return Err(Error::config(
                "routing.type",
                format!("{} has no up/down structure: use minimal, valiant or ugal", topo.describe()),
            ));
        }
        if !tree && !topo.supports_minimal() {
            return Err(Error::config(
                "routing.type",
                format!(
                    "{} has no distance-based routes: use updown, dmodk, ecmp, flowlet, spray, planner or adaptive",
                    topo.describe()
                ),
            ));
        }
        let classes = match config {
            RoutingConfig::Minimal { deadlock_avoidance: false, .. } => 0,
            RoutingConfig::Minimal { .. } => topo.classes(false),
            RoutingConfig::Valiant {} | RoutingConfig::Ugal { .. } => topo.classes(true),
            _ => 0,
        };
        let widest = (0..topo.num_switches()).map(|s| topo.num_ports(s)).max().unwrap_or(0);
        if matches!(config, RoutingConfig::Adaptive { mode: AdaptiveMode::Packet, .. }) && widest > MAX_CANDIDATES {
            return Err(Error::config(
                "routing.mode",
                format!(
                    "per packet, every equal port is offered the allocator, at most {MAX_CANDIDATES}; {} has switches of {widest}: use flowlet",
                    topo.describe()
                ),
            ));
        }
        if let RoutingConfig::Updown { select, vcs: offered } = config {
            let any = *offered == UpDownVcs::Any;
            if any && vcs > MAX_VC_CHOICE {
                return Err(Error::config(
                    "routing.vcs",
                    format!(
                        "\"any\" offers the allocator at most {MAX_VC_CHOICE} VCs of a port; found {vcs}: use \"keep\""
                    ),
                ));
            }
            let per_port = if any { vcs } else { 1 };
            if *select == UpSelect::Adaptive && widest * per_port > MAX_CANDIDATES {
                return Err(Error::config(
                    "routing.select",
                    format!(
                        "an adaptive choice offers the allocator at most {MAX_CANDIDATES} routes; {} has switches of {widest} ports{}: use random or deterministic",
                        topo.describe(),
                        if any { format!(" with {vcs} VCs each") } else { String::new() }
                    ),
                ));
            }
        }
        if matches!(config, RoutingConfig::Ugal { minimal_vcs: MinimalVcs::Any, .. })
            && !topo.minimal_routes_take_any_vc()
        {
            return Err(Error::config(
                "routing.minimal_vcs",
                format!(
                    "\"any\" is deadlock-free only where minimal routes cannot close a cycle on one VC (a megafly's up, global, down); {} needs \"class\"",
                    topo.describe()
                ),
            ));
        }
        if classes > vcs {
            return Err(Error::config(
                "switch.vcs",
                format!("this routing needs {classes} VCs (hop classes) on {}; found {vcs}", topo.describe()),
            ));
        }
        Ok(match config {
            RoutingConfig::Updown { select, vcs: offered } => AnyRouting::UpDown(UpDownRouting {
                select: *select,
                any_vc: if *offered == UpDownVcs::Any { vcs as u8 } else { 0 },
            }),
            RoutingConfig::Dmodk {} => AnyRouting::DModK(DModK),
            RoutingConfig::Ecmp { hash } => AnyRouting::Ecmp(Ecmp { hash: *hash }),
            RoutingConfig::Flowlet { gap, hash, table } => {
                AnyRouting::Flowlet(Flowlet::new(*hash, gap.0, *table, topo.num_switches())?)
            }
            RoutingConfig::Spray { mode } => AnyRouting::Spray(Spray::new(*mode, topo)?),
            RoutingConfig::Planner { idle, table } => AnyRouting::Planner(Planner::new(idle.0, *table, topo)?),
            RoutingConfig::Adaptive { gap, mode, telemetry, period, alpha, age, table } => {
                let settings = AdaptiveSettings {
                    mode: *mode,
                    telemetry: *telemetry,
                    gap: gap.0,
                    period: period.0,
                    alpha: *alpha,
                    age: age.0,
                    table: *table,
                };
                AnyRouting::Adaptive(Box::new(Adaptive::new(&settings, topo)?))
            }
            RoutingConfig::Minimal { select, deadlock_avoidance } => {
                AnyRouting::Minimal(MinimalRouting { select: *select, hop_classes: *deadlock_avoidance })
            }
            RoutingConfig::Valiant {} => AnyRouting::Valiant(Valiant),
            RoutingConfig::Ugal { threshold, information, redraw, minimal_vcs } => AnyRouting::Ugal(Ugal {
                threshold: threshold.map_or(2 * mtu, |t| t.0),
                information: *information,
                redraw: *redraw,
                minimal_vcs: if *minimal_vcs == MinimalVcs::Any { vcs.min(8) as u8 } else { 0 },
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EcmpHash, LinksConfig, MinimalSelect, TopologyConfig, UgalInformation, UpDownVcs, UpSelect};
    use crate::packet::NIL;
    use crate::topology::{self, Endpoint, Minimal, Topology};
    use rand::{Rng, SeedableRng};

    /// Pseudo-random occupancies, so adaptive choices vary between hops.
    struct Scrambled(u64);
    impl PortView for Scrambled {
        fn occupancy(&self, port: u16) -> u64 {
            hash::mix64(self.0 ^ port as u64) % 10_000
        }
        fn occupancy_at(&self, switch: usize, port: u16) -> u64 {
            hash::mix64(self.0 ^ ((switch as u64) << 16) ^ port as u64) % 10_000
        }
        fn credits_in_use(&self, port: u16) -> u64 {
            self.occupancy(port) / 2
        }
        fn has_room(&self, port: u16, vc: u8, _bytes: u64) -> bool {
            hash::mix64(self.0 ^ ((vc as u64) << 16) ^ port as u64) & 1 == 0
        }
    }

    /// Channel dependencies seen along routes: a channel is (switch, output port, VC), and
    /// a route that holds one while asking for the next adds an edge.
    #[derive(Default)]
    struct Dependencies {
        ids: std::collections::HashMap<(usize, u16, u8), usize>,
        edges: Vec<Vec<usize>>,
    }

    impl Dependencies {
        fn channel(&mut self, c: (usize, u16, u8)) -> usize {
            let next = self.ids.len();
            let id = *self.ids.entry(c).or_insert(next);
            if id == self.edges.len() {
                self.edges.push(Vec::new());
            }
            id
        }

        fn add(&mut self, from: (usize, u16, u8), to: (usize, u16, u8)) {
            let (a, b) = (self.channel(from), self.channel(to));
            if !self.edges[a].contains(&b) {
                self.edges[a].push(b);
            }
        }

        /// Whether the channel dependency graph has a cycle (Kahn's algorithm): with
        /// none, the routing cannot deadlock (Dally and Seitz).
        fn has_cycle(&self) -> bool {
            let n = self.edges.len();
            let mut indegree = vec![0usize; n];
            self.edges.iter().flatten().for_each(|&b| indegree[b] += 1);
            let mut ready: Vec<usize> = (0..n).filter(|&c| indegree[c] == 0).collect();
            let mut removed = 0;
            while let Some(c) = ready.pop() {
                removed += 1;
                for &b in &self.edges[c] {
                    indegree[b] -= 1;
                    if indegree[b] == 0 {
                        ready.push(b);
                    }
                }
            }
            removed < n
        }
    }

    /// Walks every (source, destination) pair hop by hop, several times (random and
    /// adaptive choices differ): the packet must reach its destination within `max_hops`
    /// switch hops, on VCs that never decrease (and, for hop-class routings, increase at
    /// every hop) and stay below `vcs`; the channel dependencies of all these routes must
    /// form no cycle.
    fn walk_all_pairs(topology: &TopologyConfig, routing: &RoutingConfig, vcs: usize) {
        let (dependencies, name) = walk_routes(topology, routing, vcs);
        assert!(
            !dependencies.has_cycle(),
            "{routing:?} on {name} with {vcs} VCs: the channel dependency graph has a cycle"
        );
    }

    /// The routes' checks of `walk_all_pairs`; returns their channel dependencies and the
    /// fabric's description.
    fn walk_routes(topology: &TopologyConfig, routing: &RoutingConfig, vcs: usize) -> (Dependencies, String) {
        let topo = topology::build(topology, &LinksConfig::default()).unwrap();
        let r = AnyRouting::build(routing, &topo, vcs, 4096).unwrap();
        let hop_class =
            !topo.supports_up_down() && !matches!(routing, RoutingConfig::Minimal { deadlock_avoidance: false, .. });
        let max_hops = if hop_class { 2 * topo.diameter_hint() as u16 + 1 } else { 8 };
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let hosts = topo.num_hosts() as u32;
        let mut dependencies = Dependencies::default();
        // These routings tell their one port without a random draw at every hop.
        let names_its_port = matches!(
            routing,
            RoutingConfig::Dmodk { .. }
                | RoutingConfig::Ecmp { .. }
                | RoutingConfig::Updown { select: UpSelect::Deterministic, .. }
        );
        for (src, dst) in (0..8).flat_map(|_| (0..hosts).flat_map(move |s| (0..hosts).map(move |d| (s, d)))) {
            if src == dst {
                continue;
            }
            let mut held: Option<(usize, u16, u8)> = None;
            let Endpoint::Switch { switch, .. } = topo.attachment(src as usize) else { panic!("host {src}") };
            let Endpoint::Switch { port: first_port, .. } = topo.attachment(src as usize) else { unreachable!() };
            let (mut switch, mut vc, mut hops, mut via, mut in_port) = (switch, 0u8, 0u16, NIL, first_port);
            loop {
                let q = RouteQuery { switch, src, dst, qp: 0, vc, hops, in_port, via, size: 64, now: 0 };
                let mut offer = Candidates::new();
                r.route(&topo, &q, &Scrambled(hops as u64 ^ src as u64), &mut rng, &mut offer);
                assert!(!offer.is_empty(), "{routing:?}: no route offered ({src} -> {dst} at switch {switch})");
                // The ports the lookahead prefetches are the ones offered: every one, where
                // the routing names them, and not a detour decided here (UGAL, Valiant).
                let mut likely = [0u16; MAX_MINIMAL];
                let n = r.likely_ports(&topo, &RouteQuery { now: 0, ..q }, &mut likely);
                assert!(
                    !names_its_port || n == 1,
                    "{routing:?}: tells its port without a draw, yet named {n} likely ones"
                );
                if n <= likely::NAMED_LIKELY {
                    for c in offer.as_slice().iter().filter(|c| c.route.via == via) {
                        assert!(
                            likely[..n].contains(&c.route.port),
                            "{routing:?}: offered port {}, not among the likely {:?} ({src} -> {dst} at switch {switch})",
                            c.route.port,
                            &likely[..n]
                        );
                    }
                }
                // The packet holds its channel while it asks for any route on offer.
                for candidate in offer.as_slice() {
                    let route = candidate.route;
                    assert!(
                        (route.vc as usize) < vcs,
                        "{routing:?} on {}: vc {} >= {vcs} ({src} -> {dst} at switch {switch}, via {via})",
                        topo.describe(),
                        route.vc
                    );
                    // Up/down on any VC may go down a VC: deadlock-free by its up-then-down
                    // order alone, which the dependency check below confirms.
                    let any_vc = matches!(routing, RoutingConfig::Updown { vcs: UpDownVcs::Any, .. });
                    assert!(any_vc || route.vc >= vc, "{routing:?}: VC went down from {vc} to {}", route.vc);
                    if let Some(previous) = held {
                        dependencies.add(previous, (switch as usize, route.port, route.vc));
                    }
                }
                // The allocator takes one of them.
                let route = offer.as_slice()[rng.random_range(0..offer.len())].route;
                held = Some((switch as usize, route.port, route.vc));
                let next = topo.peer(switch as usize, route.port as usize);
                if hop_class && !matches!(next, Endpoint::Host(_)) && !topo.class_at_intermediate() {
                    assert_eq!(route.vc as u16, hops, "one class per hop on flat fabrics");
                }
                match next {
                    Endpoint::Host(h) => {
                        assert_eq!(h, dst, "{routing:?}: delivered to the wrong host");
                        break;
                    }
                    Endpoint::Switch { switch: next, port } => {
                        (switch, vc, via, in_port) = (next, route.vc, route.via, port);
                        hops += 1;
                        assert!(hops <= max_hops, "{routing:?}: {src} -> {dst} takes over {max_hops} hops");
                    }
                    Endpoint::Unconnected => panic!("{routing:?}: routed to an unwired port"),
                }
            }
        }
        (dependencies, topo.describe())
    }

    #[test]
    fn the_dependency_check_sees_the_cycle_of_a_torus_without_hop_classes() {
        let torus = TopologyConfig::Torus { sides: vec![4, 3], hosts_per_switch: 1 };
        let minimal = |deadlock_avoidance| RoutingConfig::Minimal { select: MinimalSelect::Random, deadlock_avoidance };
        assert!(walk_routes(&torus, &minimal(false), 1).0.has_cycle());
        assert!(!walk_routes(&torus, &minimal(true), 6).0.has_cycle());
    }

    fn direct_fabrics() -> Vec<(TopologyConfig, usize)> {
        let toml = |t: &str| toml::from_str::<TopologyConfig>(t).unwrap();
        vec![
            // Hierarchical fabrics through an intermediate switch: a dragonfly needs 4 VCs
            // (2 when minimal), a megafly 2 (1 when minimal).
            (toml("type = 'dragonfly'\nhosts_per_switch = 2\nswitches_per_group = 4\nglobal_links_per_switch = 2"), 4),
            (toml("type = 'megafly'\ngroups = 5\nleaves_per_group = 2\nspines_per_group = 2\nhosts_per_leaf = 2\nglobal_links_per_spine = 2"), 2),
            (toml("type = 'hyperx'\nsides = [3, 4]\nhosts_per_switch = 2"), 4),
            (toml("type = 'torus'\nsides = [4, 3]\nhosts_per_switch = 1"), 6),
            (toml("type = 'mesh'\nsides = [3, 3]\nhosts_per_switch = 1"), 8),
        ]
    }

    #[test]
    fn distance_routings_reach_every_pair_on_increasing_vcs() {
        for (fabric, vcs) in direct_fabrics() {
            for routing in [
                RoutingConfig::Minimal { select: MinimalSelect::Random, deadlock_avoidance: true },
                RoutingConfig::Minimal { select: MinimalSelect::Adaptive, deadlock_avoidance: true },
                RoutingConfig::Valiant {},
                RoutingConfig::Ugal {
                    threshold: Some(crate::units::Bytes(0)),
                    information: UgalInformation::Local,
                    redraw: false,
                    minimal_vcs: MinimalVcs::Class,
                },
                RoutingConfig::Ugal {
                    threshold: None,
                    information: UgalInformation::Global,
                    redraw: false,
                    minimal_vcs: MinimalVcs::Class,
                },
            ] {
                walk_all_pairs(&fabric, &routing, vcs);
            }
        }
    }

    #[test]
    fn hierarchical_fabrics_route_minimally_on_two_vcs() {
        for (fabric, _) in direct_fabrics().into_iter().take(2) {
            walk_all_pairs(
                &fabric,
                &RoutingConfig::Minimal { select: MinimalSelect::Random, deadlock_avoidance: true },
                2,
            );
        }
    }

    #[test]
    fn tree_routings_reach_every_pair() {
        let fabrics = [
            TopologyConfig::FatTree { radix: 8, levels: 3 },
            TopologyConfig::SpineLeaf {
                leaves: 3,
                spines: 2,
                hosts_per_leaf: 3,
                links_per_pair: 2,
                oversubscription: None,
                oversubscription_by: None,
            },
            // Uplinks removed: 2 of a leaf's 3 links to spine 0, 1 of its 3 to spine 1.
            TopologyConfig::SpineLeaf {
                leaves: 3,
                spines: 2,
                hosts_per_leaf: 3,
                links_per_pair: 3,
                oversubscription: Some("1:0.5".into()),
                oversubscription_by: Some(crate::config::OversubscriptionBy::Links),
            },
        ];
        for fabric in fabrics {
            for routing in [
                RoutingConfig::Updown { select: UpSelect::Random, vcs: UpDownVcs::Keep },
                RoutingConfig::Updown { select: UpSelect::Random, vcs: UpDownVcs::Any },
                RoutingConfig::Updown { select: UpSelect::Deterministic, vcs: UpDownVcs::Keep },
                RoutingConfig::Updown { select: UpSelect::Deterministic, vcs: UpDownVcs::Any },
                RoutingConfig::Updown { select: UpSelect::Adaptive, vcs: UpDownVcs::Keep },
                RoutingConfig::Updown { select: UpSelect::Adaptive, vcs: UpDownVcs::Any },
                RoutingConfig::Dmodk {},
                RoutingConfig::Ecmp { hash: EcmpHash::FiveTuple },
                RoutingConfig::Ecmp { hash: EcmpHash::Qp },
                RoutingConfig::Flowlet { gap: crate::units::Time(1), hash: EcmpHash::FiveTuple, table: 64 },
                RoutingConfig::Spray { mode: SprayMode::Random },
                RoutingConfig::Spray { mode: SprayMode::RoundRobin },
                RoutingConfig::Planner { idle: crate::units::Time(1), table: 64 },
                toml::from_str("type = 'adaptive'\ngap = '1ps'\ntable = 64").unwrap(),
                toml::from_str("type = 'adaptive'\nmode = 'packet'\ntelemetry = 'instant'").unwrap(),
                toml::from_str("type = 'adaptive'\ntelemetry = 'local'").unwrap(),
            ] {
                walk_all_pairs(&fabric, &routing, 1);
                if matches!(routing, RoutingConfig::Updown { vcs: UpDownVcs::Any, .. }) {
                    walk_all_pairs(&fabric, &routing, 3);
                }
            }
        }
    }

    #[test]
    fn mismatched_routing_and_fabric_are_refused() {
        let links = LinksConfig::default();
        let torus =
            topology::build(&toml::from_str("type = 'torus'\nsides = [4, 4]\nhosts_per_switch = 1").unwrap(), &links)
                .unwrap();
        let err = AnyRouting::build(&RoutingConfig::Dmodk {}, &torus, 4, 4096).err().unwrap();
        assert!(matches!(err, Error::Config { ref path, .. } if path == "routing.type"), "{err}");
        let load_balancing = [
            "type = 'flowlet'",
            "type = 'spray'\nmode = 'round_robin'",
            "type = 'planner'\nidle = '1us'",
            "type = 'adaptive'",
        ];
        for text in load_balancing {
            let err = AnyRouting::build(&toml::from_str(text).unwrap(), &torus, 4, 4096).err().unwrap();
            assert!(matches!(err, Error::Config { ref path, .. } if path == "routing.type"), "{err}");
        }
        let err = AnyRouting::build(&RoutingConfig::Valiant {}, &torus, 2, 4096).err().unwrap();
        assert!(matches!(err, Error::Config { ref path, .. } if path == "switch.vcs"), "{err}");
        let tree = topology::build(&TopologyConfig::FatTree { radix: 4, levels: 2 }, &links).unwrap();
        assert!(AnyRouting::build(&RoutingConfig::Valiant {}, &tree, 8, 4096).is_err());
    }
}
