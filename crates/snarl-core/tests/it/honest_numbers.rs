//! Numbers a user can trust: extremes reported exactly and percentiles never beyond
//! them, nothing reported for what has no samples, offered load that never exceeds what
//! a link can carry, per-window loads within the links, and each congestion-control
//! family counted in its own terms.

use crate::common::run;
use snarl_core::observe::{Collector, TraceEvent};
use snarl_core::{load_config, ColumnData, Simulation};

/// 8 hosts at 100 Gb/s on one switch.
const SWITCH: &str = r#"
seed = 3

[simulation]
duration = "300us"
warmup = "50us"
window = "100ns"

[topology]
type = "single_switch"
hosts = 8

[links]
host = { rate = "100Gbps", latency = "25ns" }

[switch]
input_buffer = "64KiB"
output_buffer = "64KiB"

[nic]
mtu = "4KiB"

[traffic]
load = 1.0
"#;

#[test]
fn offered_load_never_exceeds_the_link_for_any_process_or_message_size() {
    for process in ["bernoulli", "poisson", "periodic"] {
        for size in ["4KiB", "1MiB"] {
            let o = [("traffic.process", process), ("traffic.message_size", size)];
            let report = run(SWITCH, &o);
            let offered = report.summary.offered_load;
            // Before offerings were spread over their serialisation, 1 MiB messages
            // counted whole at generation: 1.049 at load 1.0.
            assert!(offered <= 1.0 + 1e-9, "{process}, {size}: offered {offered}");
            // Not nothing either (1 MiB takes 84 us here: a few per host in the run).
            assert!(offered > 0.5, "{process}, {size}: offered {offered}");
            for (name, g) in &report.summary.groups {
                assert!(g.offered_load <= 1.0 + 1e-9, "{process}, {size}, group {name}: {}", g.offered_load);
            }
        }
    }
}

#[test]
fn no_window_accepts_more_than_its_link_carried() {
    // Host 0 streams to host 1; windows of 100 ns are shorter than a packet (328 ns).
    let text = format!(
        "{SWITCH}\n[[traffic.groups]]\nname = \"sender\"\nhosts = [0]\npattern = {{ type = \"shift\", offset = 1 }}\n\
         \n[[traffic.groups]]\nname = \"idle\"\nrest = true\nload = 0.0\n"
    );
    let report = run(&text, &[]);
    let table = report.table("timeseries").unwrap();
    let (Some(ColumnData::Str(group)), Some(ColumnData::F64(accepted))) =
        (table.column("group"), table.column("accepted_load"))
    else {
        panic!("timeseries columns")
    };
    let sender: Vec<f64> = group.iter().zip(accepted).filter(|(g, _)| *g == "sender").map(|(_, &a)| a).collect();
    let most = sender.iter().copied().fold(0.0, f64::max);
    assert!(most <= 1.0 + 1e-9, "a window accepted {most} of the link");
    assert!(most > 0.9, "the stream fills its link: {most}");
    // A group that sends nothing reports no latency at all, not 0.
    let idle = &report.summary.groups["idle"];
    assert!(idle.latency.is_empty() && idle.latency.p99.is_nan(), "{:?}", idle.latency);
    let json: serde_json::Value = serde_json::from_str(&report.summary_json()).unwrap();
    assert_eq!(json["groups"]["idle"]["latency"]["p99"], serde_json::Value::Null);
}

#[test]
fn a_capped_queue_reports_at_most_its_cap_and_an_idle_one_zero() {
    // Every host sends to host 7: its output queue (port 7) fills to its cap (a crossbar
    // faster than the links moves the queue from the inputs to the output).
    let probes =
        "\n[observe]\nqueues = [{ switch = 0, port = 7, priority = 0 }, { switch = 0, port = 0, priority = 0 }]\n";
    let text = format!("{SWITCH}{probes}");
    let report =
        run(&text, &[("traffic.pattern", "{ type = \"incast\", destination = 7 }"), ("switch.speedup", "2.0")]);
    let queues = report.summary.sections.get("queues").expect("the queues section");
    let (hot, idle) = (&queues[0], &queues[1]);
    let cap = 64 * 1024;
    let max = hot["max_bytes"].as_u64().unwrap();
    assert!(max <= cap && max > cap / 2, "max {max} of a {cap} B queue");
    for p in ["p5_bytes", "p50_bytes", "p95_bytes", "p99_bytes"] {
        assert!(hot[p].as_u64().unwrap() <= max, "{p} above the max: {hot}");
    }
    // The table's largest occupancy is the summary's.
    let table = report.table("queues").unwrap();
    let (Some(ColumnData::U64(port)), Some(ColumnData::U64(most))) = (table.column("port"), table.column("max_bytes"))
    else {
        panic!("queues columns")
    };
    let table_max = port.iter().zip(most).filter(|(p, _)| **p == 7).map(|(_, &m)| m).max().unwrap();
    assert_eq!(table_max, max);
    // Host 0's port receives nothing: its queue is empty, all along.
    for k in ["mean_bytes", "p50_bytes", "p99_bytes", "max_bytes"] {
        assert_eq!(idle[k].as_f64(), Some(0.0), "{k}: {idle}");
    }
}

/// The exact latency of every packet delivered inside the measurement interval.
struct Exact {
    from: u64,
    latencies: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
}

impl Collector for Exact {
    fn on(&mut self, now: u64, event: &TraceEvent) {
        if let TraceEvent::Delivered { created, .. } = *event {
            if now >= self.from {
                self.latencies.lock().unwrap().push(now - created);
            }
        }
    }
}

#[test]
fn incast_percentiles_are_as_distinct_as_the_exact_ones() {
    // Poisson sources at half their link each: the seven share the eighth's link in
    // bursts, so latencies spread.
    let o: Vec<(String, String)> = [
        ("traffic.pattern", "{ type = \"incast\", destination = 7 }"),
        ("traffic.process", "poisson"),
        ("traffic.load", "0.13"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let config = load_config(SWITCH, &o, None).unwrap();
    let latencies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut sim = Simulation::new(&config).unwrap();
    sim.add_collector(Exact { from: 50_000_000, latencies: latencies.clone() });
    let report = sim.run(&mut |_| true).unwrap();
    let mut exact = latencies.lock().unwrap().clone();
    exact.sort_unstable();
    let ns = |ps: u64| ps as f64 / 1000.0;
    let pick = |q: f64| ns(exact[((q * exact.len() as f64).ceil() as usize).clamp(1, exact.len()) - 1]);
    let s = &report.summary.latency;
    assert_eq!((s.min, s.max), (ns(exact[0]), ns(*exact.last().unwrap())), "extremes exact");
    for (name, got, want) in [("p50", s.p50, pick(0.5)), ("p95", s.p95, pick(0.95)), ("p99", s.p99, pick(0.99))] {
        // Within the histograms' stated precision, 0.1%.
        assert!((got - want).abs() <= want * 1e-3 + 1e-3, "{name}: {got} vs exact {want}");
    }
    // Where the exact percentiles differ, so do the reported ones.
    let reported = [s.p50, s.p95, s.p99, s.max];
    let exact_ones = [pick(0.5), pick(0.95), pick(0.99), ns(*exact.last().unwrap())];
    for k in 1..4 {
        if exact_ones[k] - exact_ones[k - 1] > exact_ones[k] * 2e-3 {
            assert!(reported[k] > reported[k - 1], "{reported:?} vs exact {exact_ones:?}");
        }
    }
    assert!(exact_ones[0] < exact_ones[3], "an incast's latencies spread: {exact_ones:?}");
}

#[test]
fn infiniband_runs_count_in_infiniband_terms_and_agree() {
    let o = [
        ("congestion_control.type", "ibcc"),
        ("switch.speedup", "2.0"),
        ("traffic.pattern", "{ type = \"incast\", destination = 7 }"),
    ];
    let report = run(SWITCH, &o);
    let c = &report.summary.counters;
    for k in ["ecn_marks", "cnps_sent", "cnps_delivered", "rate_cuts"] {
        assert!(!c.contains_key(k), "{k} in an IB run's counters: {c:?}");
    }
    let ibcc = report.summary.sections.get("ibcc").unwrap();
    assert!(c["fecn_marks"] > 0 && c["becns_sent"] >= c["becns_delivered"] && c["becns_delivered"] > 0, "{c:?}");
    assert_eq!(ibcc["fecn_marks"].as_u64(), Some(c["fecn_marks"]));
    assert_eq!(ibcc["becns"].as_u64(), Some(c["becns_delivered"]));
    let sum = |table: &str, column: &str| match report.table(table).unwrap().column(column) {
        Some(ColumnData::U64(v)) => v.iter().sum::<u64>(),
        other => panic!("{table}.{column}: {other:?}"),
    };
    assert_eq!(sum("ibcc", "fecn_marks"), c["fecn_marks"]);
    assert_eq!(sum("ibcc", "becns"), c["becns_delivered"]);
    assert_eq!(sum("fabric", "fecn_marks"), c["fecn_marks"]);
    assert_eq!(sum("fabric", "becns"), c["becns_sent"]);
    assert_eq!(sum("fabric", "ccti_increases"), c["ccti_increases"]);
    let words = |n: &str| n.split(|c: char| !c.is_alphanumeric()).map(str::to_string).collect::<Vec<_>>();
    for note in &report.notes {
        assert!(!words(note).iter().any(|w| w.starts_with("CNP") || w == "ECN"), "{note}");
    }
    // The same fabric under DCQCN counts ECN marks and CNPs.
    let report = run(SWITCH, &[("congestion_control.type", "dcqcn"), o[1], o[2]]);
    assert!(report.summary.counters["ecn_marks"] > 0 && report.summary.counters.contains_key("cnps_sent"));
}

/// An output buffer of one MTU cannot keep its link busy while the next packet crosses
/// the switch: a contention-free permutation gets 327.7 / (327.7 + 100) ns of the links.
/// The run says so first, with that figure, and two MTUs restore the links.
#[test]
fn a_one_packet_output_buffer_is_named_with_what_it_costs() {
    let text = SWITCH.replace("output_buffer = \"64KiB\"", "output_buffer = \"4KiB\"");
    let o = [("traffic.pattern", "{ type = \"shift\", offset = 1 }"), ("switch.latency", "100ns")];
    let report = run(&text, &o);
    let first = report.notes.first().expect("a warning");
    assert!(first.starts_with("warning: switch.output_buffer") && first.contains("76.6%"), "{first}");
    crate::common::assert_close("accepted", report.summary.accepted_load, 327.68 / 427.68, 0.005);
    let two = run(&text.replace("output_buffer = \"4KiB\"", "output_buffer = \"8KiB\""), &o);
    assert!(two.notes.iter().all(|n| !n.starts_with("warning")), "{:?}", two.notes);
    crate::common::assert_close("accepted with two packets", two.summary.accepted_load, 1.0, 0.005);
}
