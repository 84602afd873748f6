//! InfiniBand congestion control: FECN marking at the roots of congestion, BECNs, CCTIs
//! and the congestion control table, run end to end.

use crate::common::*;
use snarl_core::observe::IbccSummary;
use snarl_core::report::Report;
use snarl_core::{load_config, ColumnData, Error};

/// Two switches in a line (a mesh of side 2), four hosts on each, 100 Gb/s: host 0 on the
/// first switch and hosts 5, 6 and 7 on the second send to host 4 on the second at line
/// rate. The link between the switches carries one flow and is never oversubscribed;
/// host 4's link carries four: the second switch's port 0 is the root of congestion, the
/// first switch's port 4 (to the second) a victim of its back-pressure.
const LINE: &str = r#"
[simulation]
duration = "300us"
warmup = "50us"
window = "25us"

[topology]
type = "mesh"
sides = [2]
hosts_per_switch = 4

[links]
host = { rate = "100Gbps", latency = "25ns" }
switch = { rate = "100Gbps", latency = "25ns" }

[switch]
speedup = 2.0

[routing]
type = "minimal"

[congestion_control]
type = "ibcc"

[traffic]
load = 1.0
process = "periodic"

[[traffic.groups]]
name = "senders"
hosts = [0, 5, 6, 7]
pattern = { type = "incast", destination = 4 }

[[traffic.groups]]
name = "quiet"
rest = true
load = 0.0
"#;

/// A 2-level fat-tree of radix 8 (32 hosts on 8 leaves, 100 Gb/s, up/down routing with
/// random up-ports): eight contributors on four leaves send to one hotspot at line rate,
/// the other hosts (victims) send uniformly at half their link, much of it through the
/// congestion tree the hotspot grows over every spine.
const TREE: &str = r#"
[simulation]
duration = "600us"
warmup = "200us"
window = "50us"

[topology]
type = "fat_tree"
radix = 8
levels = 2

[switch]
speedup = 2.0

[congestion_control]
type = "ibcc"

[traffic]
load = 0.5

[[traffic.groups]]
name = "hotspot"
hosts = [31]
load = 0.0

[[traffic.groups]]
name = "contributors"
hosts = [0, 1, 4, 5, 8, 9, 12, 13]
load = 1.0
pattern = { type = "incast", destination = 31 }

[[traffic.groups]]
name = "victims"
rest = true
pattern = { type = "uniform" }
"#;

fn ibcc(r: &Report) -> IbccSummary {
    r.summary.section("ibcc").expect("an IB CC run has an `ibcc` section")
}

/// FECN marks of (switch, port) in the summary's list.
fn marks_at(r: &Report, switch: u32, port: u32) -> u64 {
    ibcc(r).marking_ports.iter().filter(|p| p.switch == switch && p.port == port).map(|p| p.fecn_marks).sum()
}

fn column_f64<'a>(r: &'a Report, table: &str, column: &str) -> &'a [f64] {
    match r.table(table).and_then(|t| t.column(column)) {
        Some(ColumnData::F64(v)) => v,
        other => panic!("{table}.{column}: {other:?}"),
    }
}

fn column_u64<'a>(r: &'a Report, table: &str, column: &str) -> &'a [u64] {
    match r.table(table).and_then(|t| t.column(column)) {
        Some(ColumnData::U64(v)) => v,
        other => panic!("{table}.{column}: {other:?}"),
    }
}

/// The summary as JSON without its `ibcc` section and wall time.
fn without_ibcc(mut r: Report) -> (String, Report) {
    r.summary.sections.remove("ibcc");
    r.summary.wall_seconds = 0.0;
    (r.summary_json(), r)
}

#[test]
fn one_flow_into_a_free_network_gets_no_becn() {
    let r = run(LINE, &[("traffic.groups.0.hosts", "[0]")]);
    let s = ibcc(&r);
    assert_eq!((s.fecn_marks, s.becns, s.ccti_max), (0, 0, 0), "{s:?}");
    let c = &r.summary.counters;
    assert_eq!((c["fecn_marks"], c["becns_sent"], c["ccti_increases"]), (0, 0, 0), "{c:?}");
    assert_close("the flow's load", r.summary.groups["senders"].accepted_load, 1.0, 0.01);
}

#[test]
fn the_ccti_stays_within_its_bounds_in_a_congested_run() {
    let bounds = [("congestion_control.ccti_min", "2"), ("congestion_control.ccti_limit", "12")];
    let r = run(TREE, &bounds);
    let s = ibcc(&r);
    eprintln!("{s:?}");
    assert!(s.becns > 100, "congestion sends BECNs: {s:?}");
    assert!(s.ccti_max <= 12 && s.ccti_max > 2, "{s:?}");
    assert!((2.0..=12.0).contains(&s.ccti_mean) && s.ccti_mean > 2.0, "{s:?}");
    let means = column_f64(&r, "ibcc", "ccti_mean");
    assert!(means.iter().all(|m| (2.0..=12.0).contains(m)), "{means:?}");
    // The table's windows add up to the whole run's marks and BECNs.
    let c = &r.summary.counters;
    assert_eq!(column_u64(&r, "ibcc", "fecn_marks").iter().sum::<u64>(), c["fecn_marks"]);
    assert_eq!(column_u64(&r, "ibcc", "becns").iter().sum::<u64>(), c["becns_delivered"]);
    assert_eq!((s.fecn_marks, s.becns), (c["fecn_marks"], c["becns_delivered"]), "section and counters agree");
    // One BECN per marked packet that arrived: no coalescing.
    assert!(c["becns_sent"] <= c["fecn_marks"] && c["becns_sent"] + 100 >= c["fecn_marks"], "{c:?}");
}

/// Only the root marks: the second switch's port to the hotspot. The first switch's
/// port to the second, full but sending only as credits come back, is a victim; it marks
/// only when its victim mask is set (`all`). The CCT here has no delays, so the
/// congestion stays for the whole run (with a throttling CCT the senders come down, and
/// as the root drains the upstream port may briefly hold a backlog with credits to
/// spare: a root for that while, which marks as it should).
#[test]
fn only_the_root_marks_unless_victims_are_masked() {
    let flat = [("congestion_control.cct", "[[0, 0], [0, 0]]"), ("congestion_control.ccti_limit", "1")];
    let host_ports = run(LINE, &flat);
    eprintln!("host_ports: {:?}", ibcc(&host_ports));
    assert!(marks_at(&host_ports, 1, 0) > 100, "{:?}", ibcc(&host_ports));
    assert_eq!(marks_at(&host_ports, 0, 4), 0, "the victim stays quiet: {:?}", ibcc(&host_ports));
    assert_eq!(ibcc(&host_ports).marking_ports.len(), 1, "{:?}", ibcc(&host_ports));
    let all = run(LINE, &[&flat[..], &[("marking.victim_mask", "\"all\"")]].concat());
    eprintln!("all: {:?}", ibcc(&all));
    assert!(marks_at(&all, 1, 0) > 100, "{:?}", ibcc(&all));
    assert!(marks_at(&all, 0, 4) > 100, "a masked victim marks: {:?}", ibcc(&all));
    let none = run(LINE, &[&flat[..], &[("marking.victim_mask", "\"none\"")]].concat());
    assert_eq!(marks_at(&none, 0, 4), 0);
    assert!(marks_at(&none, 1, 0) > 100, "host ports have credits: a root marks unmasked");
}

/// The CCTI timer decides how fast throttled flows recover. Table I's 150 units (153.6
/// µs), chosen for 20 Gb/s links, leave the line's senders far below their share for the
/// whole run once BECNs have raised their CCTIs (measured: host 4's link 25% busy); a
/// shorter timer brings them back sooner (73% at 20 µs, 92% at 2 µs), with lower CCTIs.
/// A period written in units equals the same duration written out.
#[test]
fn the_ccti_timer_sets_how_fast_throttled_flows_recover() {
    let longer = [("simulation.duration", "600us"), ("simulation.warmup", "200us")];
    let with_timer = |timer: &str| run(LINE, &[&longer[..], &[("congestion_control.ccti_timer", timer)]].concat());
    let runs: Vec<(f64, f64)> = ["150", "\"20us\"", "\"2us\""]
        .iter()
        .map(|t| {
            let r = with_timer(t);
            (r.summary.groups["quiet"].received_load * 4.0, ibcc(&r).ccti_mean)
        })
        .collect();
    eprintln!("host 4's link and ccti_mean at 153.6, 20 and 2 us: {runs:?}");
    assert!(runs[0].0 < 0.4, "{runs:?}");
    assert!(runs[1].0 > runs[0].0 + 0.2 && runs[2].0 > runs[1].0 + 0.1, "{runs:?}");
    assert!(runs[0].1 > runs[1].1 && runs[1].1 > runs[2].1, "{runs:?}");
    let (units, _) = without_ibcc(with_timer("150"));
    let (written, _) = without_ibcc(with_timer("\"153600ns\""));
    assert_eq!(units, written, "150 units of 1.024 us are 153.6 us");
}

/// IB CC that cannot act (threshold 0, or ccti_increase 0) gives the run without
/// congestion control, to the byte, apart from its own (empty) section and table.
#[test]
fn inert_ib_cc_is_no_congestion_control() {
    let rr = [("nic.scheduling", "\"round_robin\"")];
    let off = run(TREE, &[&rr[..], &[("congestion_control.type", "\"none\"")]].concat());
    let (off_json, off) = without_ibcc(off);
    for inert in [("marking.threshold", "0"), ("congestion_control.ccti_increase", "0")] {
        let r = run(TREE, &[&rr[..], &[inert]].concat());
        let s = ibcc(&r).clone();
        assert_eq!((s.fecn_marks, s.becns, s.ccti_max), (0, 0, 0), "{inert:?}: {s:?}");
        assert!(r.table("ibcc").is_some());
        let (json, r) = without_ibcc(r);
        assert_eq!(json, off_json, "{inert:?}");
        // (Debug text: windows without deliveries hold NaN latencies.)
        let series = |r: &Report| format!("{:?}", r.table("timeseries"));
        assert_eq!(series(&r), series(&off), "{inert:?}");
    }
    // And IB CC that acts changes the run.
    let (acting, _) = without_ibcc(run(TREE, &rr));
    assert_ne!(acting, off_json);
}

/// A flow held at CCTI i sends at R/(1 + i) with the linear table, R/(1 + i²/128) with
/// the quadratic one, R/(1 + m/2^s) with an explicit entry (s, m).
#[test]
fn a_flow_at_ccti_i_sends_at_its_tables_rate() {
    let cases: [(&str, u32, f64); 5] = [
        ("\"linear\"", 1, 1.0 / 2.0),
        ("\"linear\"", 3, 1.0 / 4.0),
        ("\"linear\"", 9, 1.0 / 10.0),
        ("\"quadratic\"", 8, 1.0 / 1.5),
        ("[[0, 0], [0, 0], [2, 6]]", 2, 1.0 / 2.5),
    ];
    for (cct, i, want) in cases {
        let at = i.to_string();
        let held = [
            ("traffic.groups.0.hosts", "[0]"),
            ("congestion_control.cct", cct),
            ("congestion_control.ccti_min", at.as_str()),
            ("congestion_control.ccti_limit", at.as_str()),
            ("simulation.duration", "300us"),
        ];
        let r = run(LINE, &held);
        let got = r.summary.groups["senders"].accepted_load;
        eprintln!("{cct} at {i}: {got:.4} (want {want:.4})");
        assert!((got - want).abs() <= 0.02 * want, "{cct} at CCTI {i}: {got} of the link, want {want}");
        assert_eq!(ibcc(&r).ccti_mean, i as f64, "no flow ever leaves ccti_min = ccti_limit");
    }
}

/// The congestion tree of a hotspot holds the victims back (measured: 0.31 of the 0.50
/// they offer); IB CC throttles the contributors and gives the victims their throughput
/// back (0.50), at the cost of the hotspot's link, which Table I's slow timer leaves
/// half used after the first BECNs (0.51; 1.0 without CC).
#[test]
fn ib_cc_lets_the_victims_through_the_congestion_tree() {
    let off = run(TREE, &[("congestion_control.type", "\"none\"")]);
    let on = run(TREE, &[]);
    let victims = |r: &Report| r.summary.groups["victims"].accepted_load;
    let offered = on.summary.groups["victims"].offered_load;
    eprintln!(
        "victims: {:.3} without CC, {:.3} with IB CC (offered {offered:.3}); hotspot {:.3} / {:.3}; {:?}",
        victims(&off),
        victims(&on),
        off.summary.groups["hotspot"].received_load,
        on.summary.groups["hotspot"].received_load,
        ibcc(&on)
    );
    assert!(victims(&off) < 0.75 * offered, "the tree holds the victims back: {} of {offered}", victims(&off));
    assert!(victims(&on) > 1.3 * victims(&off), "{} vs {}", victims(&on), victims(&off));
    assert_close("victims with IB CC", victims(&on), offered, 0.03);
    assert!(off.summary.groups["hotspot"].received_load > 0.95);
    assert!(on.summary.groups["hotspot"].received_load > 0.3, "the hotspot still receives");
    let s = ibcc(&on);
    assert!(s.becns > 100 && s.ccti_mean > 1.0, "{s:?}");
}

/// Every IB CC run carries the `ibcc` table, a row per window.
#[test]
fn the_ibcc_table_has_a_row_per_window() {
    let r = run(LINE, &[]);
    let t = r.table("ibcc").expect("an ibcc table");
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["time", "fecn_marks", "becns", "ccti_mean"]);
    assert_eq!(t.rows(), 12);
    assert_eq!(column_f64(&r, "ibcc", "time")[1], 25_000.0, "window starts in ns");
    assert!(column_u64(&r, "ibcc", "becns").iter().sum::<u64>() > 0);
}

/// The key path of the error `overrides` of `LINE` give, and its message.
fn config_error(overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match load_config(LINE, &o, None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn bad_ib_cc_settings_name_their_key() {
    let (path, message) = config_error(&[("marking.threshold", "16")]);
    assert_eq!(path, "marking.threshold");
    assert!(message.contains("0") && message.contains("15") && message.contains("16"), "{message}");
    let (path, message) = config_error(&[("congestion_control.cct", "[[0, 0], [0, 1], [0, 2]]")]);
    assert_eq!(path, "congestion_control.cct");
    assert!(message.contains("at least 128") && message.contains("found 3"), "{message}");
    let (path, message) =
        config_error(&[("congestion_control.cct", "[[0, 0], [4, 1]]"), ("congestion_control.ccti_limit", "1")]);
    assert_eq!(path, "congestion_control.cct.1");
    assert!(message.contains("shift"), "{message}");
    let (path, message) =
        config_error(&[("congestion_control.cct", "[[0, 16384], [0, 1]]"), ("congestion_control.ccti_limit", "1")]);
    assert_eq!(path, "congestion_control.cct.0");
    assert!(message.contains("multiplier") && message.contains("16383"), "{message}");
    let (path, message) = config_error(&[("congestion_control.cct", "\"lineer\"")]);
    assert_eq!(path, "congestion_control.cct");
    assert!(message.contains("did you mean `linear`"), "{message}");
    let (path, message) =
        config_error(&[("congestion_control.ccti_min", "20"), ("congestion_control.ccti_limit", "10")]);
    assert_eq!(path, "congestion_control.ccti_min");
    assert!(message.contains("ccti_limit (10)") && message.contains("20"), "{message}");
    let (path, message) = config_error(&[("congestion_control.ccti_scope", "\"qpp\"")]);
    assert_eq!(path, "congestion_control.ccti_scope");
    assert!(message.contains("did you mean `qp`"), "{message}");
    let (path, message) = config_error(&[("marking.victim_mask", "\"host_port\"")]);
    assert_eq!(path, "marking.victim_mask");
    assert!(message.contains("did you mean `host_ports`"), "{message}");
    let (path, _) = config_error(&[("congestion_control.ccti_timer", "0")]);
    assert_eq!(path, "congestion_control.ccti_timer");
    let (path, message) = config_error(&[("congestion_control.ccti_timer", "\"150 furlongs\"")]);
    assert_eq!(path, "congestion_control.ccti_timer");
    assert!(message.contains("unknown time unit"), "{message}");
    let (path, message) = config_error(&[("congestion_control.ccti_incrase", "2")]);
    assert_eq!(path, "congestion_control.ccti_incrase");
    assert!(message.contains("did you mean `ccti_increase`"), "{message}");
}

/// IB CC without a `[marking]` marks with FECN at Table I's settings, written out in the
/// resolved config; a `[marking]` without a type is FECN too under IB CC.
#[test]
fn ib_cc_implies_table_i_fecn_marking() {
    let config = load_config(LINE, &[], None).unwrap();
    let toml = config.to_toml();
    let marking = "[marking]\ntype = \"fecn\"\nthreshold = 15\nmarking_rate = 0\npacket_size = \"0B\"\nvictim_mask = \"host_ports\"";
    assert!(toml.contains(marking), "{toml}");
    for key in [
        "ccti_increase = 1\n",
        "ccti_limit = 127\n",
        "ccti_min = 0\n",
        "ccti_timer = 150\n",
        "ccti_scope = \"qp\"",
        "cct = \"linear\"",
    ] {
        assert!(toml.contains(key), "{key} in {toml}");
    }
    let again = load_config(&toml, &[], None).unwrap();
    assert_eq!(again.to_toml(), toml, "the resolved config reads back as itself");
    let untyped = load_config(LINE, &[("marking.marking_rate".into(), "3".into())], None).unwrap();
    assert!(untyped.to_toml().contains("type = \"fecn\"\nthreshold = 15\nmarking_rate = 3"), "{}", untyped.to_toml());
}
