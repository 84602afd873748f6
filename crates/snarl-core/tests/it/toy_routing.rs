//! A routing made here, outside the crate, and installed with `AnyRouting::Custom`: on a
//! spine-leaf fabric it always takes the first of the up-ports toward a destination
//! (where up*/down* routing draws one at random), so every packet between leaves climbs
//! to the first spine. It counts its calls and the up-ports it could have taken. A second
//! toy hears of every packet leaving a switch output, as routings that measure the fabric
//! do, and checks what it hears.

use rand_pcg::Pcg64Mcg;
use snarl_core::routing::{AnyRouting, Candidates, CustomRouting, Departure, PortView, Route, RouteQuery, Routing};
use snarl_core::sim::Components;
use snarl_core::topology::{AnyTopology, Endpoint, Topology, UpDown};
use snarl_core::{load_config, Report, Simulation, ValidConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct FirstUpPort {
    calls: Arc<AtomicU64>,
    /// Decisions that had more than one port to choose from.
    choices: Arc<AtomicU64>,
}

impl CustomRouting for FirstUpPort {
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &dyn PortView,
        _rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let hops = topo.next_hops(q.switch as usize, q.dst as usize);
        if hops.count > 1 {
            self.choices.fetch_add(1, Ordering::Relaxed);
        }
        out.only(Route { port: hops.first, vc: q.vc, via: u32::MAX });
    }
}

/// Three leaves of four hosts under two spines, uniform traffic at `load`.
fn config(load: f64) -> ValidConfig {
    load_config(&text(load), &[], None).unwrap()
}

fn text(load: f64) -> String {
    format!(
        r#"
[simulation]
duration = "100us"
warmup = "10us"

[topology]
type = "spine_leaf"
leaves = 3
spines = 2
hosts_per_leaf = 4

[routing]
type = "updown"
select = "random"

[traffic]
load = {load}
"#
    )
}

#[test]
fn a_custom_routing_routes_a_run_to_completion() {
    let (calls, choices) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let toy = AnyRouting::Custom(Box::new(FirstUpPort { calls: calls.clone(), choices: choices.clone() }));
    let config = config(0.9);
    let sim = Simulation::with_components(&config, Components::default().routing(toy)).unwrap();
    // `run` checks conservation and the invariants at the end.
    let toy: Report = sim.run(&mut |_| true).unwrap();
    let p = toy.summary.packets.clone();
    assert!(p.delivered > 500, "{p:?}");
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped);
    assert_eq!(p.dropped, 0);
    // Every packet delivered was routed at least at its leaf; those between leaves had
    // two spines to choose from.
    assert!(calls.load(Ordering::Relaxed) >= p.delivered, "{} calls", calls.load(Ordering::Relaxed));
    assert!(choices.load(Ordering::Relaxed) > 0);
    // Up*/down* routing spreads the climbs over both spines; the toy's single spine
    // carries them all and delivers less of a load near saturation.
    let control = snarl_core::run(&config).unwrap();
    let (a, b) = (toy.summary.accepted_load, control.summary.accepted_load);
    assert!(a < 0.95 * b, "the toy accepted {a}, up*/down* {b}");
    // Python's `Report` has the toy's run as Rust made it.
    if let Some(seen) = crate::python::assert_python_sees(&config, &toy) {
        assert_eq!(seen["summary"]["accepted_load"], a);
    }
}

/// Up/down's deterministic choice, hearing of every departure: how many left switches
/// toward switches and toward hosts.
struct Listening {
    inner: AnyRouting,
    to_switches: Arc<AtomicU64>,
    to_hosts: Arc<AtomicU64>,
}

impl CustomRouting for Listening {
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &dyn PortView,
        rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        self.inner.route(topo, q, &NoView, rng, out);
    }

    fn measures(&self) -> bool {
        true
    }

    fn departed(&mut self, topo: &AnyTopology, d: &Departure) {
        match topo.peer(d.switch as usize, d.port as usize) {
            Endpoint::Host(h) => {
                assert!(d.to_host && h == d.dst, "{d:?}");
                self.to_hosts.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                assert!(!d.to_host, "{d:?}");
                self.to_switches.fetch_add(1, Ordering::Relaxed);
            }
        }
        let Endpoint::Switch { switch: first, .. } = topo.attachment(d.src as usize) else { unreachable!() };
        assert_eq!(d.hops == 0, d.switch == first, "{d:?}");
        assert!(d.size > 0 && d.at > 0);
    }
}

/// Up/down's deterministic choice reads no occupancy.
struct NoView;
impl PortView for NoView {
    fn occupancy(&self, _port: u16) -> u64 {
        0
    }
    fn occupancy_at(&self, _switch: usize, _port: u16) -> u64 {
        0
    }
    fn credits_in_use(&self, _port: u16) -> u64 {
        0
    }
    fn has_room(&self, _port: u16, _vc: u8, _bytes: u64) -> bool {
        true
    }
}

#[test]
fn a_routing_that_measures_hears_of_every_packet_leaving_a_switch() {
    let config = load_config(&text(0.5).replace("\"random\"", "\"deterministic\""), &[], None).unwrap();
    let topo = snarl_core::topology::build(&config.topology.shape, &config.links).unwrap();
    let inner = AnyRouting::build(&config.routing, &topo, 1, 4096).unwrap();
    let (to_switches, to_hosts) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let toy = Listening { inner, to_switches: to_switches.clone(), to_hosts: to_hosts.clone() };
    let sim = Simulation::with_components(&config, Components::default().routing(AnyRouting::Custom(Box::new(toy))));
    let heard = sim.unwrap().run(&mut |_| true).unwrap();
    // Listening changes nothing.
    let mut plain = snarl_core::run(&config).unwrap();
    plain.summary.wall_seconds = heard.summary.wall_seconds;
    assert_eq!(heard.summary_json(), plain.summary_json());
    // Every packet delivered left its last switch toward its host; those between leaves
    // (two thirds of uniform traffic on three leaves) also left two switches toward others.
    let p = &heard.summary.packets;
    let (hosts, switches) = (to_hosts.load(Ordering::Relaxed), to_switches.load(Ordering::Relaxed));
    assert!(hosts >= p.delivered && hosts <= p.injected, "{hosts} to hosts, {p:?}");
    assert!(switches > hosts && switches < 2 * hosts, "{switches} to switches, {hosts} to hosts");
}
