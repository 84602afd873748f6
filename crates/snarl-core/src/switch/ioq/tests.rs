//! The queue-id space: extra queues per port, empty and never chosen, change nothing.

use super::Port;
use crate::error::Error;
use crate::load_config;
use crate::sim::Simulation;

/// The summary (wall time aside) of `scenario` (a path under `scenarios/`, or TOML text)
/// with `overrides`, run with `extra` extra queues per port, or the deadlock it ends in.
fn outcome(scenario: &str, overrides: &[(&str, &str)], extra: usize) -> String {
    let text = if scenario.ends_with(".toml") {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        std::fs::read_to_string(root.join(scenario)).unwrap()
    } else {
        scenario.to_string()
    };
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(&text, &o, None).unwrap();
    let simulation = Simulation::with_extra_queues(&config, extra).unwrap();
    match simulation.run(&mut |_| true) {
        Ok(mut report) => {
            report.summary.wall_seconds = 0.0;
            report.summary_json()
        }
        Err(Error::Deadlock(found)) => format!("deadlock: {found} {:?}", found.blocked),
        Err(e) => panic!("{scenario}: {e}"),
    }
}

fn same_with_extra_queues(scenario: &str, overrides: &[(&str, &str)]) -> String {
    let plain = outcome(scenario, overrides, 0);
    for extra in [1, 2] {
        assert_eq!(plain, outcome(scenario, overrides, extra), "{scenario} with {extra} extra queues");
    }
    plain
}

#[test]
fn port_state_fills_one_cache_line() {
    // A field more and every port spans two lines, which the per-packet path touches.
    assert_eq!(std::mem::size_of::<Port>(), 64);
    assert_eq!(std::mem::align_of::<Port>(), 64);
}

#[test]
fn extra_queues_change_nothing_on_a_credit_fat_tree() {
    // Two VCs, adaptive up-routing (it reads the ports' occupancy and room) and a probe.
    let fat_tree = r#"
        [simulation]
        duration = "60us"
        warmup = "10us"
        [topology]
        type = "fat_tree"
        radix = 8
        levels = 3
        [switch]
        vcs = 2
        [routing]
        type = "updown"
        select = "adaptive"
        [nic]
        qps_per_destination = 2
        [traffic]
        load = 0.9
        [[observe.queues]]
        switch = 40
        port = 1
        priority = 1
    "#;
    let summary = same_with_extra_queues(fat_tree, &[]);
    assert!(summary.contains("\"queues\""), "{summary}");
}

#[test]
fn extra_queues_change_nothing_under_ugal_rerouting() {
    // 1056 hosts, 4 VCs: the request masks span several words; waiting packets re-route.
    same_with_extra_queues(
        "endpoint-congestion/uniform-dragonfly.toml",
        &[
            ("routing.type", "ugal"),
            ("traffic.load", "1.0"),
            ("simulation.duration", "3000cycles"),
            ("simulation.warmup", "1000cycles"),
        ],
    );
}

#[test]
fn extra_queues_change_nothing_with_pfc_ecn_and_dcqcn() {
    let summary = same_with_extra_queues(
        "lossless-ethernet/one-tree-dcqcn.toml",
        &[
            ("simulation.duration", "300us"),
            ("traffic.phases.1.at", "250us"),
            ("observe.queues", "[{ switch = 16, port = 1 }]"),
        ],
    );
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert!(summary["pfc"]["pause_frames_sent"].as_u64().unwrap() > 0, "{}", summary["pfc"]);
}

#[test]
fn extra_queues_change_nothing_in_what_the_watchdog_reports() {
    // The torus ring of the watchdog tests: without hop classes it deadlocks.
    let ring = include_str!("../../../tests/configs/ring-deadlock.toml");
    let found = same_with_extra_queues(ring, &[]);
    assert!(found.starts_with("deadlock") && found.contains("1 cycle"), "{found}");
    let frozen = same_with_extra_queues(ring, &[("traffic.groups.1.load", "0")]);
    assert!(frozen.contains("no packet moved"), "{frozen}");
}
