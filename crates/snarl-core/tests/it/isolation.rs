//! Congestion isolation (CI, ICI) as a mechanism, on small fabrics where what should
//! happen can be worked out: head-of-line blocking removed, packets in order, lossless
//! with the congested-flow class paused, entries released, tables that overflow,
//! messages that take a frame's time, and NICs that stop only the isolated flows.

use crate::common::*;
use snarl_core::isolation::IsolationSummary;
use snarl_core::observe::{PfcSummary, QueueSummary};
use snarl_core::report::Report;
use snarl_core::{ColumnData, Summary};

/// Two shared-buffer switches in a line (a mesh of side 2), four hosts on each, 100 Gb/s
/// links of 25 ns, PFC at 22/20 packets, 4 KiB MTU. Hosts 5, 6 and 7 (on the second
/// switch) and host 1 (on the first) send to host 4 at line rate: host 4's link is the
/// root, and the link between the switches carries host 1's share of it. The groups come
/// with each test.
const LINE: &str = r#"
[simulation]
duration = "400us"
warmup = "100us"
window = "10us"

[topology]
type = "mesh"
sides = [2]
hosts_per_switch = 4

[links]
host = { rate = "100Gbps", latency = "25ns" }
switch = { rate = "100Gbps", latency = "25ns" }

[switch]
type = "shared_buffer"
port_buffer = "512KiB"
egress_cap = "256KiB"
speedup = 2.0

[flow_control]
type = "pfc"
xoff = 22
xon = 20

[routing]
type = "minimal"

[nic]
mtu = "4KiB"
scheduling = "round_robin"
source_queue = 4

[traffic]
process = "periodic"
message_size = "16KiB"
load = 1.0
"#;

/// `LINE` with an incast onto host 4 by hosts 5, 6 and 7 at line rate and host 1 at 35
/// Gb/s over the link between the switches, and the bystander, host 0, sending 65 Gb/s to
/// host 7 over the same link, with `isolation` (a TOML section, or "").
fn bystander(isolation: &str) -> String {
    format!(
        "{LINE}{isolation}
[[traffic.groups]]
name = \"incast\"
hosts = [5, 6, 7]
pattern = {{ type = \"incast\", destination = 4 }}

[[traffic.groups]]
name = \"across\"
hosts = [1]
load = 0.35
pattern = {{ type = \"incast\", destination = 4 }}

[[traffic.groups]]
name = \"bystander\"
hosts = [0]
load = 0.65
pattern = {{ type = \"incast\", destination = 7 }}

[[traffic.groups]]
name = \"root\"
hosts = [4]
load = 0.0

[[traffic.groups]]
name = \"quiet\"
rest = true
load = 0.0
"
    )
}

/// The isolation summary of a run, after checking what every isolation run must hold:
/// nothing reordered (lossless and conservation are checked by `run`).
fn isolation(report: &Report) -> IsolationSummary {
    let iso: IsolationSummary = report.summary.section("isolation").expect("isolation runs report isolation");
    assert_eq!(iso.reordered_packets, 0, "packets overtook older ones of their flow");
    iso
}

fn u64s(report: &Report, table: &str, column: &str) -> Vec<u64> {
    match report.tables[table].column(column) {
        Some(ColumnData::U64(v)) => v.clone(),
        other => panic!("{table}.{column}: {other:?}"),
    }
}

fn f64s(report: &Report, table: &str, column: &str) -> Vec<f64> {
    match report.tables[table].column(column) {
        Some(ColumnData::F64(v)) => v.clone(),
        other => panic!("{table}.{column}: {other:?}"),
    }
}

/// Head-of-line blocking. Max-min fair shares: host 4's link gives each of its four
/// senders 25 Gb/s, so host 1's flow takes 25 of the link between the switches and the
/// bystander may have the other 75 Gb/s: its fair share is all it offers, 65. Under PFC
/// alone the root's back-pressure pauses that link and the bystander's packets wait behind
/// host 1's at the second switch's ingress (measured 29.4 Gb/s, under half its share).
/// With CI host 1's flow waits in a queue and a class of its own, and the bystander gets
/// at least 90% of its share (measured 65.4 Gb/s). The two flows on the link never
/// exceed it (35 + 65), so CI has no reason to isolate the bystander.
#[test]
fn ci_removes_head_of_line_blocking_that_pfc_alone_suffers() {
    let fair = 65.0;
    let pfc = run(&bystander(""), &[]);
    let ci = run(&bystander("[isolation]\ntype = \"ci\"\n"), &[]);
    let gbps = |r: &Report| r.summary.groups["bystander"].accepted_gbps;
    assert!(gbps(&pfc) < 0.5 * fair, "PFC alone: the bystander gets {:.1} Gb/s", gbps(&pfc));
    assert!(gbps(&ci) >= 0.9 * fair, "CI: the bystander gets {:.1} Gb/s of {fair}", gbps(&ci));
    let iso = isolation(&ci);
    assert!(iso.cft_allocations > 0 && iso.isolated_packets > 0 && iso.messages_sent > 0, "{iso:?}");
    // The root keeps its rate: host 4 still receives at line rate.
    let root = ci.summary.groups["root"].received_gbps;
    assert!(root > 95.0, "host 4 receives {root:.1} Gb/s");
}

/// Lossless with the congested-flow class paused: at the root the congested-flow queue
/// fills, its class pauses the link between the switches and the isolated NICs, and
/// nothing is dropped (`run` checks drops and conservation); pause frames of the class
/// were sent, and its paused time is counted.
#[test]
fn the_congested_flow_class_reaches_its_xoff_and_nothing_is_lost() {
    let report = run(&bystander("[isolation]\ntype = \"ci\"\n"), &[]);
    let iso = isolation(&report);
    assert!(iso.cfq_paused_time > 0.0, "{iso:?}");
    let pfc: PfcSummary = report.summary.section("pfc").unwrap();
    assert!(pfc.pause_frames_sent > 0);
    assert_eq!(report.summary.packets.dropped, 0);
}

/// Release: the incast stops at 200 us; every entry is released within the minimum
/// residency (10 us) and the drain of what was queued toward host 4 (at most the
/// senders' source queues, 4 x 64 KiB, the ingress queues, about 4 x 170 KiB, and the
/// root's egress queues, 384 KiB: 1.3 MB, 105 us at 100 Gb/s), so the table is empty from
/// 320 us on (measured: the last release at 270 us), every allocation has its release,
/// and nothing is left isolated.
#[test]
fn entries_are_released_once_the_tree_is_gone() {
    for kind in ["ci", "ici"] {
        let text = bystander(&format!("[isolation]\ntype = \"{kind}\"\n"))
            + "[[traffic.phases]]\nat = \"200us\"\ngroup = \"incast\"\npattern = { type = \"silent\" }\n"
            + "[[traffic.phases]]\nat = \"200us\"\ngroup = \"across\"\npattern = { type = \"silent\" }\n";
        let report = run(&text, &[]);
        let iso = isolation(&report);
        assert!(iso.cft_allocations > 0, "{kind}: {iso:?}");
        assert_eq!(iso.cft_allocations, iso.cft_releases, "{kind}: {iso:?}");
        assert_eq!(iso.cft_occupancy.at_end, 0, "{kind}");
        let (time, occupancy) = (f64s(&report, "isolation", "time"), u64s(&report, "isolation", "cft_occupancy"));
        let late = time.iter().zip(&occupancy).filter(|(t, _)| **t >= 320_000.0);
        for (t, &n) in late {
            assert_eq!(n, 0, "{kind}: {n} entries in use at {t} ns");
        }
        let busy = occupancy.iter().zip(&time).filter(|(&n, &t)| n > 0 && t < 200_000.0).count();
        assert!(busy > 0, "{kind}: entries were in use during the incast");
    }
}

/// Capacity: two roots meet at the first switch's port toward the second. Hosts 0 and 1
/// send to host 4, hosts 2 and 3 to host 5, and hosts 6 and 7 (on the second switch) to
/// both; ICI keys its entries by root, so the port needs two. With one, the second root's
/// isolation message finds the table full (`cft_overflows`) and its flows stay in the
/// port's normal queue, which the queue probe sees fill (measured: 254 KiB on average, 674
/// overflows); with two, both roots are isolated and the normal queue stays empty.
#[test]
fn a_full_table_leaves_the_second_root_in_the_normal_queue() {
    let text = |entries: u32| {
        format!(
            "{LINE}
[isolation]
type = \"ici\"
cft_entries = {entries}
confirm = \"0us\"
propagate = 0

[[observe.queues]]
switch = 0
port = 4
priority = 0

[[traffic.groups]]
name = \"to4\"
hosts = [0, 1, 6]
pattern = {{ type = \"incast\", destination = 4 }}

[[traffic.groups]]
name = \"to5\"
hosts = [2, 3, 7]
pattern = {{ type = \"incast\", destination = 5 }}

[[traffic.groups]]
name = \"quiet\"
rest = true
load = 0.0
"
        )
    };
    let (one, two) = (run(&text(1), &[]), run(&text(2), &[]));
    let normal_queue = |r: &Report| r.summary.section::<Vec<QueueSummary>>("queues").unwrap()[0].mean_bytes;
    let (iso1, iso2) = (isolation(&one), isolation(&two));
    assert!(iso1.cft_overflows > 0, "{iso1:?}");
    assert_eq!(iso2.cft_overflows, 0, "{iso2:?}");
    assert!(normal_queue(&one) > 16_384.0, "one entry: the normal queue holds {}", normal_queue(&one));
    assert!(
        normal_queue(&two) < 0.25 * normal_queue(&one),
        "two: {} vs one: {}",
        normal_queue(&two),
        normal_queue(&one)
    );
}

/// Signalling: the first entry upstream (the first switch's, from the second switch's
/// message) is taken no earlier than the first detection plus a 64-byte frame's
/// serialisation (5.12 ns at 100 Gb/s) and one link latency (25 ns). A message waits for
/// `propagate` packets of its key at the ingress: lazily (8), the upstream entry comes
/// later than eagerly (0).
#[test]
fn an_isolation_message_takes_a_frame_and_a_link_latency() {
    let first = |propagate: u32| {
        let report = run(&bystander(&format!("[isolation]\ntype = \"ci\"\npropagate = {propagate}\n")), &[]);
        let iso = isolation(&report);
        (iso.first_detection.unwrap(), iso.first_message_allocation.expect("an upstream entry"))
    };
    let flight = 5.12 + 25.0;
    let (detected, eager) = first(0);
    assert!(eager >= detected + flight, "detected at {detected} ns, upstream at {eager} ns");
    let (detected_lazily, lazy) = first(8);
    assert_eq!(detected, detected_lazily, "detection does not depend on propagation");
    assert!(lazy > eager, "lazily at {lazy} ns, eagerly at {eager} ns");
}

/// NIC isolation: host 0 sends half its traffic to host 4 (the root of an incast by hosts
/// 5, 6 and 7) and half to host 1 on its own switch. Told to isolate its flow to host 4,
/// its NIC sends that flow in the congested-flow class, which the switch pauses: the flow
/// to host 1 keeps its 50 Gb/s (at least 90% of it). A NIC that ignores the messages
/// (`nic_isolation = 0`) has its normal class paused for the flow to host 4, and the flow
/// to host 1 loses at least a third of its rate (measured: 50.0 against 25.0 Gb/s).
#[test]
fn a_paused_congested_flow_class_stops_only_the_isolated_flows_of_a_nic() {
    let text = |nic: &str| {
        format!(
            "{LINE}
[isolation]
type = \"ci\"
nic_isolation = \"{nic}\"

[[traffic.groups]]
name = \"mixed\"
hosts = [0]
pattern = {{ type = \"mix\", parts = [{{ share = 0.5, pattern = {{ type = \"incast\", destination = 4 }} }}, {{ share = 0.5, pattern = {{ type = \"incast\", destination = 1 }} }}] }}

[[traffic.groups]]
name = \"local\"
hosts = [1]
load = 0.0

[[traffic.groups]]
name = \"incast\"
hosts = [5, 6, 7]
pattern = {{ type = \"incast\", destination = 4 }}

[[traffic.groups]]
name = \"quiet\"
rest = true
load = 0.0
"
        )
    };
    let (isolating, ignoring) = (run(&text("20us"), &[]), run(&text("0us"), &[]));
    let to_host_1 = |r: &Report| r.summary.groups["local"].received_gbps;
    isolation(&isolating);
    isolation(&ignoring);
    assert!(to_host_1(&isolating) >= 0.9 * 50.0, "isolating NIC: {:.1} Gb/s to host 1", to_host_1(&isolating));
    assert!(
        to_host_1(&ignoring) <= 2.0 / 3.0 * to_host_1(&isolating),
        "ignoring NIC: {:.1} Gb/s to host 1, isolating {:.1}",
        to_host_1(&ignoring),
        to_host_1(&isolating)
    );
}

/// The six mechanisms of the ICI paper's comparison on its one-tree scenario: each gives
/// a summary of its own (a mechanism that silently does nothing would repeat another's).
#[test]
fn each_of_the_six_mechanisms_changes_the_one_tree_run() {
    let summaries: Vec<(String, String)> = ["none", "dcqcn", "ci", "ici", "ici-dcqcn", "ici-plus"]
        .iter()
        .map(|m| {
            let text = scenario_file(&format!("lossless-ethernet/one-tree-{m}"));
            let report = run(&text, &[("simulation.duration", "600us"), ("traffic.phases.1.at", "500us")]);
            if report.summary.sections.get("isolation").is_some() {
                isolation(&report);
            }
            (m.to_string(), summary_json(&report.summary))
        })
        .collect();
    for (i, (a, sa)) in summaries.iter().enumerate() {
        for (b, sb) in &summaries[i + 1..] {
            assert_ne!(sa, sb, "{a} and {b} give the same summary");
        }
    }
}

fn summary_json(s: &Summary) -> String {
    let mut s = s.clone();
    s.wall_seconds = 0.0;
    serde_json::to_string(&s).unwrap()
}

/// The config error of `text` with `overrides`: its key path and message.
fn config_error(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let refused = match snarl_core::load_config(text, &o, None) {
        Ok(config) => snarl_core::run(&config).map(|_| ()),
        Err(e) => Err(e),
    };
    match refused {
        Err(snarl_core::Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

/// Isolation where it cannot work, and knobs out of range, are refused with their key
/// path and, for a misspelt key, the closest valid names.
#[test]
fn bad_isolation_settings_are_refused_with_their_key_path() {
    let line = bystander("[isolation]\ntype = \"ici\"\n");
    // (key, value, the path refused, a hint the message gives)
    let cases = [
        ("isolation.cft_entrys", "4", "isolation.cft_entrys", "cft_entries"),
        ("isolation.type", "icii", "isolation.type", "ici"),
        ("isolation.cft_entries", "0", "isolation.cft_entries", "between 1 and 64"),
        ("isolation.cfqs_per_port", "3", "isolation.cfqs_per_port", "cft_entries"),
        ("isolation.cfq_xon", "20", "isolation.cfq_xon", "cfq_xoff"),
        ("isolation.cfq_xoff", "40", "isolation.cfq_xoff", "headroom"),
        ("isolation.scheduler", "1.5", "isolation.scheduler", "(0, 1)"),
        ("routing.select", "\"adaptive\"", "isolation.type", "one route"),
    ];
    for (key, value, path, hint) in cases {
        let (got, message) = config_error(&line, &[(key, value)]);
        assert_eq!(got, path, "{key} = {value}: {message}");
        assert!(message.contains(hint), "{key} = {value}: {message}");
    }
    // Not on credit-based switches, and ICI+'s marking needs isolation.
    let ioq = SINGLE_SWITCH.to_string() + "[isolation]\ntype = \"ci\"\n";
    assert_eq!(config_error(&ioq, &[]).0, "isolation.type");
    let plus = bystander("[marking]\ntype = \"red\"\npolicy = \"ici_plus\"\n");
    assert_eq!(config_error(&plus, &[]).0, "marking.policy");
}

/// The same config and seed give the same summary, byte for byte, with isolation too.
#[test]
fn isolation_runs_are_deterministic() {
    let text = scenario_file("lossless-ethernet/one-tree-ici-plus");
    let overrides = [("simulation.duration", "400us"), ("traffic.phases.1.at", "350us")];
    let (a, b) = (run(&text, &overrides), run(&text, &overrides));
    assert_eq!(summary_json(&a.summary), summary_json(&b.summary));
    assert_eq!(a.tables["isolation"], b.tables["isolation"]);
}
