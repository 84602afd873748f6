//! A routing made here, outside the crate, and installed with `AnyRouting::Custom`: on a
//! spine-leaf fabric it always takes the first of the up-ports toward a destination
//! (where up*/down* routing draws one at random), so every packet between leaves climbs
//! to the first spine. It counts its calls and the up-ports it could have taken.

use rand_pcg::Pcg64Mcg;
use snarl_core::routing::{AnyRouting, Candidates, CustomRouting, PortView, Route, RouteQuery};
use snarl_core::sim::Components;
use snarl_core::topology::{AnyTopology, UpDown};
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
    let text = format!(
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
    );
    load_config(&text, &[], None).unwrap()
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
