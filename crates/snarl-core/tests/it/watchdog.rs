//! The watchdog: deadlocks of part of the fabric, deadlocks in short runs, and heavy
//! congestion that is no deadlock.

use crate::common::{run, scenario_file};
use snarl_core::{load_config, Error};

/// An 8-switch ring with two hosts per switch and no deadlock avoidance. The even hosts
/// send 3 switches clockwise (their channels close a cycle that fills and jams); the odd
/// hosts send 1 switch counter-clockwise, over links the jam never touches.
const RING: &str = include_str!("../configs/ring-deadlock.toml");

fn deadlock(text: &str, overrides: &[(&str, &str)]) -> String {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap();
    match snarl_core::run(&config) {
        Err(Error::Deadlock(found)) => {
            assert!(!found.blocked.is_empty() && found.blocked.len() <= 10, "{found}");
            found.to_string()
        }
        other => panic!("expected a deadlock, got {:?}", other.map(|r| r.summary.groups.clone())),
    }
}

/// The time in the message ("at 123.4us", "at 5000ns", "at 700cycles"), in ns or cycles.
fn reported_at_ns(message: &str) -> f64 {
    let at = message.split("(at ").nth(1).expect("a time").split([':', ' ']).next().unwrap();
    let (value, scale) = if let Some(v) = at.strip_suffix("cycles") {
        (v, 1.0)
    } else if let Some(v) = at.strip_suffix("us") {
        (v, 1e3)
    } else if let Some(v) = at.strip_suffix("ms") {
        (v, 1e6)
    } else {
        (at.strip_suffix("ns").expect("a unit"), 1.0)
    };
    value.parse::<f64>().unwrap() * scale
}

#[test]
fn a_deadlock_of_part_of_the_fabric_is_caught_while_the_rest_moves() {
    let message = deadlock(RING, &[]);
    // The cycle is the clockwise ring: every switch's clockwise output and input.
    assert!(message.contains("wait on each other in 1 cycle(s)"), "{message}");
    assert!(!message.contains("no packet moved"), "the counter-clockwise traffic moves: {message}");
    // The blocked queues are the clockwise ring's: inputs and outputs on the cycle.
    let o: Vec<(String, String)> = Vec::new();
    let Err(Error::Deadlock(found)) = snarl_core::run(&load_config(RING, &o, None).unwrap()) else { unreachable!() };
    assert_eq!(found.cycles, 1);
    assert_eq!(found.queues_on_cycles, 16, "an input and an output per switch: {found}");
    assert!(found.blocked.iter().all(|q| q.on_cycle && q.packets > 0 && q.vc == 0), "{found}");
    // Soon: the default interval of 500 slowest hops is ~230us here; detection comes at
    // most a quarter interval after it, and the ring jams within a few microseconds.
    assert!(reported_at_ns(&message) < 320_000.0, "{message}");
    // Without the clockwise senders the same fabric runs to the end (a 4 KiB buffer holds
    // one packet, so the credit loop caps each link at about 0.77).
    let report = run(RING, &[("traffic.groups.0.load", "0")]);
    let accepted = report.summary.groups["counter-clockwise"].accepted_load;
    assert!(accepted > 0.7, "{accepted}");
}

#[test]
fn a_deadlock_of_the_whole_fabric_names_the_blocked_queues_and_hop_class_vcs_prevent_it() {
    let clockwise_only = [("traffic.groups.1.load", "0")];
    let message = deadlock(RING, &clockwise_only);
    assert!(message.contains("no packet moved") && message.contains("switch"), "{message}");
    let safe = RING.replace("vcs = 1", "vcs = 4").replace("deadlock_avoidance = false", "");
    run(&safe, &clockwise_only);
}

#[test]
fn a_deadlock_in_a_run_shorter_than_the_old_one_millisecond_watchdog_is_caught() {
    // Cycle units: the default interval is 500 hops of 8 + 1 + 1 cycles = 5,000 cycles.
    let cycles = [
        ("simulation.duration", "20000cycles"),
        ("simulation.time_unit", "cycles"),
        ("links.host", r#"{ rate = "1phit/cycle", latency = "1cycle" }"#),
        ("links.switch", r#"{ rate = "1phit/cycle", latency = "1cycle" }"#),
        ("switch.latency", "1cycle"),
        ("switch.input_buffer", "16phits"),
        ("switch.output_buffer", "16phits"),
        ("nic.mtu", "8phits"),
        ("traffic.message_size", "8phits"),
        ("traffic.groups.1.load", "0"),
    ];
    let message = deadlock(RING, &cycles);
    assert!(message.contains("no packet moved for 5000cycles"), "{message}");
}

#[test]
fn a_deadlock_whose_interval_ends_after_the_last_check_is_caught_at_the_end() {
    // The ring jams at once; with a 1.2 ms interval the periodic checks (every 300 us)
    // have not seen it for a whole interval when the 1.5 ms run ends, the final check has.
    let o = [("simulation.duration", "1.5ms"), ("simulation.watchdog", "1.2ms"), ("traffic.groups.1.load", "0")];
    let message = deadlock(RING, &o);
    assert!(message.contains("no packet moved for 1200us"), "{message}");
    assert!((reported_at_ns(&message) - 1.5e6).abs() < 1.0, "{message}");
}

#[test]
fn a_congestion_tree_is_no_deadlock_however_long_its_heads_wait() {
    // Behind a saturated hotspot, queue heads far up the tree wait for over 15,000 cycles
    // while round robin serves the other branches; their waits end at the hotspot's host
    // link, which drains, so a 1,000-cycle watchdog sees long stalls but no cycle.
    let report = run(&scenario_file("demo/hotspot-fat-tree-small"), &[("simulation.watchdog", "1000cycles")]);
    assert!(report.summary.groups["uniform"].accepted_load < 0.5, "the tree must form");
}
