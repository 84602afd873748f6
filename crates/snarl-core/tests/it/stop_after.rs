//! `simulation.stop_after`: a run ends at the instant a group completes its N-th message,
//! and reports everything as of then.

use crate::common::*;
use snarl_core::{load_config, ColumnData, Error, Report};

/// A 4-ary 2-tree (16 hosts): half the hosts send 8 KiB messages (two packets) to
/// uniform destinations, the other half an incast to host 15, which congests the tree:
/// messages complete long after their last packet left its sender.
const FABRIC: &str = r#"
[simulation]
duration = "60us"

[topology]
type = "k_ary_n_tree"
k = 4
n = 2

[links]
host = { rate = "100Gbps", latency = "25ns" }

[traffic]
load = 0.6
message_size = "8KiB"

[[traffic.groups]]
name = "victims"
count = 8
placement = "interleaved"
pattern = { type = "uniform" }

[[traffic.groups]]
name = "aggressors"
rest = true
pattern = { type = "incast", destination = 15 }
"#;

fn stop_after(messages: u64) -> String {
    format!("{FABRIC}\n[simulation.stop_after]\ngroup = \"victims\"\nmessages = {messages}\n")
}

fn with_stop(messages: u64, overrides: &[(&str, &str)]) -> Report {
    run(&stop_after(messages), overrides)
}

/// The tables as text (windows without deliveries have a NaN mean latency, which `==`
/// would never call equal).
fn tables(report: &Report) -> String {
    format!("{:?}", report.tables)
}

/// The summary as JSON, wall time aside.
fn json(report: &Report) -> String {
    let mut summary = report.summary.clone();
    summary.wall_seconds = 0.0;
    serde_json::to_string_pretty(&summary).unwrap()
}

/// Messages the victims completed: their flows (the runs have no warm-up, so every
/// message counts).
fn victim_messages(report: &Report) -> u64 {
    report.summary.groups["victims"].flows
}

#[test]
fn the_run_ends_when_the_group_completes_its_nth_message() {
    let r = with_stop(100, &[]);
    let s = &r.summary;
    let stopped = s.stopped_after.as_ref().expect("a run with stop_after reports it");
    assert_eq!((stopped.group.as_str(), stopped.messages), ("victims", 100));
    let at = stopped.at.expect("the victims complete 100 messages well within the duration");
    assert_eq!(s.sim_time, at);
    assert!(at > 0.0 && at < 60_000.0, "stopped at {at} ns");
    assert_eq!(victim_messages(&r), 100);
    // The aggressors' completions count too, but not towards the stop.
    assert!(s.counters["messages_delivered"] > 100, "{:?}", s.counters);
    // Conservation with the packets still travelling at the stop (`run` checks it; the
    // kernel also checks that the count in flight is the packets alive).
    assert!(s.packets.in_flight > 0, "{:?}", s.packets);
    assert_eq!(s.packets.injected, s.packets.delivered + s.packets.in_flight + s.packets.dropped);
}

/// The stop is the exact instant of the completion: a run without `stop_after` that
/// ends then (deliveries at its end do not happen) completes fewer than N of the
/// victims' messages, one that ends a picosecond later at least N. A stop decided when
/// the last packet starts its last link, with its delivery still ahead, would come early.
#[test]
fn the_stop_is_the_instant_of_the_completion() {
    let n = 100;
    let stopped = with_stop(n, &[]);
    let at_ns = stopped.summary.stopped_after.as_ref().and_then(|s| s.at).unwrap();
    let at = (at_ns * 1000.0).round() as u64;
    let until = |ps: u64| run(FABRIC, &[("simulation.duration", &format!("{ps}ps"))]);
    let before = until(at);
    let after = until(at + 1);
    assert!(victim_messages(&before) < n, "{} messages before the stop", victim_messages(&before));
    assert!(victim_messages(&after) >= n, "{} messages at the stop", victim_messages(&after));
    // Up to the stop, the stopped run is the run that ends there, give or take what
    // happens at the very instant of the stop.
    let between = |what: &str, f: &dyn Fn(&Report) -> u64| {
        let (low, got, high) = (f(&before), f(&stopped), f(&after));
        assert!(low <= got && got <= high, "{what}: {low} <= {got} <= {high}");
    };
    between("aggressors' messages", &|r| r.summary.groups["aggressors"].flows);
    between("packets injected", &|r| r.summary.packets.injected);
    between("packets delivered", &|r| r.summary.packets.delivered);
}

#[test]
fn a_stopped_run_is_deterministic() {
    let a = with_stop(200, &[("seed", "7")]);
    let b = with_stop(200, &[("seed", "7")]);
    assert_eq!(json(&a), json(&b));
    assert_eq!(tables(&a), tables(&b));
}

/// Rates, loads and tables cover the run up to the stop.
#[test]
fn everything_is_reported_as_of_the_stop() {
    let r = with_stop(100, &[("simulation.window", "1us"), ("observe.queues", "[{ switch = 0, port = 0 }]")]);
    let s = &r.summary;
    let at = s.sim_time;
    let table = r.table("timeseries").expect("a time series");
    let Some(ColumnData::F64(time)) = table.column("time") else { panic!("no time column") };
    let last = time.iter().copied().fold(0.0, f64::max);
    assert!(last < at && at <= last + 1000.0, "last window at {last} ns, stop at {at} ns");
    // Three rows per window: the two groups and "all"; one per window of the probe.
    let windows = (at / 1000.0).ceil() as usize;
    assert_eq!(table.rows(), 3 * windows);
    assert_eq!(r.table("queues").expect("a probed queue").rows(), windows);
    // Loads over [0, stop]: the victims' delivered packets (4 KiB each) over the stop
    // time and their 8 hosts' links, not over the duration (which would read about a
    // third of it); packets arriving across the stop add a little.
    let victims = &s.groups["victims"];
    let bits = victims.packets.delivered as f64 * 4096.0 * 8.0;
    let load = bits / (at * 1e-9) / (8.0 * 100e9);
    assert!(
        victims.accepted_load >= load * (1.0 - 1e-9) && victims.accepted_load < load * 1.05,
        "accepted load {} for {} packets in {at} ns",
        victims.accepted_load,
        victims.packets.delivered
    );
}

/// A stop the run never reaches leaves it to end at its duration, with the summary of
/// the same run without `stop_after` (the deliveries that travel as events aside: they
/// count in `events`), and `stopped_after.at` null.
#[test]
fn a_stop_never_reached_changes_nothing_but_the_report_of_it() {
    let plain = run(FABRIC, &[]);
    let unreached = with_stop(1_000_000, &[]);
    let stopped = unreached.summary.stopped_after.clone().expect("reported");
    assert_eq!(stopped.at, None);
    assert_eq!(unreached.summary.sim_time, 60_000.0);
    assert!(victim_messages(&unreached) < 1_000_000);
    let text = serde_json::to_string(&unreached.summary).unwrap();
    assert!(text.contains(r#""stopped_after":{"group":"victims","messages":1000000,"at":null}"#), "{text}");
    assert!(unreached.summary.events > plain.summary.events);
    let mut same = unreached.summary.clone();
    same.stopped_after = None;
    same.events = plain.summary.events;
    same.wall_seconds = plain.summary.wall_seconds;
    assert_eq!(serde_json::to_string_pretty(&same).unwrap(), plain.summary_json());
    assert_eq!(tables(&unreached), tables(&plain));
    // Without stop_after the summary has no such key.
    assert!(!plain.summary_json().contains("stopped_after"));
}

fn config_error(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match load_config(text, &o, None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn an_unknown_group_is_refused_with_the_closest_name() {
    let (path, message) = config_error(&stop_after(10), &[("simulation.stop_after.group", "victim")]);
    assert_eq!(path, "simulation.stop_after.group");
    assert!(message.contains("unknown group `victim`; did you mean `victims`?"), "{message}");
}

#[test]
fn a_run_without_groups_cannot_stop_after_one() {
    let (path, message) = config_error(
        SINGLE_SWITCH,
        &[("simulation.stop_after.group", "default"), ("simulation.stop_after.messages", "10")],
    );
    assert_eq!(path, "simulation.stop_after.group");
    assert!(message.contains("no `[[traffic.groups]]`"), "{message}");
}

#[test]
fn bad_stop_after_values_are_refused() {
    let (path, message) = config_error(&stop_after(10), &[("simulation.stop_after.messages", "0")]);
    assert_eq!(path, "simulation.stop_after.messages");
    assert!(message.contains("positive"), "{message}");
    let (path, _) = config_error(&stop_after(10), &[("simulation.stop_after.mesages", "10")]);
    assert!(path.starts_with("simulation.stop_after"), "{path}");
    let (path, _) = config_error(FABRIC, &[("simulation.stop_after.group", "victims")]);
    assert!(path.starts_with("simulation.stop_after"), "{path}");
}
