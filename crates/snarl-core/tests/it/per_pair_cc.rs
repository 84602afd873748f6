//! The per-pair congestion control (`congestion_control.type = "per_pair"`), run end to
//! end: contributors to a congested host share its link and hold its queue near the
//! marking threshold, pairs that only share a link with them keep their rate, no window
//! leaves its bounds, and bad settings are refused at their key. Each run beside a
//! control run without congestion control, where that shows what the control does.
//!
//! The fabrics are Slingshot's links: 200 Gb/s hosts, 4 KiB packets, a crossbar speedup
//! of 2 (so that the congested output queue, which the marking watches, fills rather
//! than the inputs). Every run goes through `common::run`, which checks conservation
//! (data and ACKs) and that nothing was dropped.

use crate::common::*;
use snarl_core::observe::{Collector, PerPairSummary, QueueSummary, TraceEvent};
use snarl_core::{load_config, ColumnData, Error, Report, Simulation};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Two senders (hosts 0 and 1, groups `a` and `b`) at line rate into host 2 on one
/// switch, whose port 2 (to host 2) is probed. Measured over the second half of the run.
const INCAST: &str = r#"
[simulation]
duration = "200us"
warmup = "100us"

[topology]
type = "single_switch"
hosts = 3

[links]
host = { rate = "200Gbps", latency = "25ns" }

[switch]
speedup = 2.0

[nic]
mtu = "4KiB"

[congestion_control]
type = "per_pair"

[traffic]
load = 1.0

[[traffic.groups]]
name = "a"
hosts = [0]
pattern = { type = "incast", destination = 2 }

[[traffic.groups]]
name = "b"
hosts = [1]
pattern = { type = "incast", destination = 2 }

[[traffic.groups]]
name = "sink"
hosts = [2]
pattern = { type = "silent" }

[[observe.queues]]
switch = 0
port = 2
"#;

/// Two leaves under one spine (400 Gb/s links between them, never a bottleneck). Host 3
/// is congested: hosts 0 and 1 on the first leaf and host 5 beside it send to it at line
/// rate (host 1 75% of its traffic, a part of its own). Two pairs only share links with
/// them: host 2 to host 4 at half its link (the victim: the same uplink, spine and
/// downlink as hosts 0 and 1), and host 1's other part, a quarter of its link to host 4
/// (the same host and injection link as a contributor). Host 4 receives 75% of its link.
/// The sources are periodic: random arrivals would now and then congest host 4's port or
/// the uplink for a moment, and make the pairs through them contributors there, cut for
/// a queue of their own. Measured over the second half of the run.
const SHARED_LINKS: &str = r#"
[simulation]
duration = "200us"
warmup = "100us"

[topology]
type = "spine_leaf"
leaves = 2
spines = 1
hosts_per_leaf = 3

[links]
host = { rate = "200Gbps", latency = "25ns" }
switch = { rate = "400Gbps", latency = "25ns" }

[switch]
speedup = 2.0

[nic]
mtu = "4KiB"

[congestion_control]
type = "per_pair"

[traffic]
load = 1.0
process = "periodic"

[[traffic.groups]]
name = "a"
hosts = [0]
pattern = { type = "incast", destination = 3 }

[[traffic.groups]]
name = "b"
hosts = [1]
pattern = { type = "mix", parts = [{ share = 0.75, pattern = { type = "incast", destination = 3 } }, { pattern = { type = "incast", destination = 4 } }] }

[[traffic.groups]]
name = "victim"
hosts = [2]
load = 0.5
pattern = { type = "incast", destination = 4 }

[[traffic.groups]]
name = "local"
hosts = [5]
pattern = { type = "incast", destination = 3 }

[[traffic.groups]]
name = "quiet"
rest = true
pattern = { type = "silent" }
"#;

const KIB: u64 = 1024;

fn per_pair(r: &Report) -> PerPairSummary {
    r.summary.section("per_pair").expect("a per-pair run has a `per_pair` section")
}

fn queue(r: &Report) -> QueueSummary {
    r.summary.section::<Vec<QueueSummary>>("queues").expect("the probe")[0].clone()
}

fn accepted(r: &Report, group: &str) -> f64 {
    r.summary.groups[group].accepted_load
}

/// The control's figures agree with the counters and the `fabric` table, and its windows
/// stayed within [one MTU, the cap].
fn check_windows(r: &Report, mtu: u64) -> PerPairSummary {
    let s = per_pair(r);
    let c = &r.summary.counters;
    assert_eq!(
        (s.congestion_marks, s.marked_acks, s.window_cuts),
        (c["congestion_marks"], c["marked_acks_delivered"], c["window_cuts"]),
        "{s:?} {c:?}"
    );
    assert!(!c.contains_key("ecn_marks") && !c.contains_key("cnps_sent"), "its own terms: {c:?}");
    let fabric = r.table("fabric").expect("the fabric table");
    let sum = |name: &str| match fabric.column(name) {
        Some(ColumnData::U64(v)) => v.iter().sum::<u64>(),
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!((sum("congestion_marks"), sum("window_cuts")), (s.congestion_marks, s.window_cuts));
    assert_eq!(sum("marked_acks"), c["marked_acks_sent"]);
    assert!(s.highest_window <= s.window_cap, "a window above the cap: {s:?}");
    assert!(s.lowest_window >= mtu, "a window below one MTU: {s:?}");
    assert!(s.highest_window.is_multiple_of(mtu) && s.lowest_window.is_multiple_of(mtu), "{s:?}");
    s
}

/// Two pairs into one host converge to half its link each, ± 0.05, over the second half
/// of the run, and the control holds the host's queue near the marking threshold (16 KiB:
/// its mean within 8 KiB above it). Without the control the switch's round robin shares
/// the link as evenly, but the queue stays full (its 32 KiB output buffer less the packet
/// leaving, all the time) and nothing is marked: the control is what keeps it low.
#[test]
fn two_pairs_into_one_host_share_its_link_and_keep_its_queue_low() {
    let r = run(INCAST, &[]);
    let (a, b) = (accepted(&r, "a"), accepted(&r, "b"));
    assert_close("pair 0 -> 2", a, 0.5, 0.05);
    assert_close("pair 1 -> 2", b, 0.5, 0.05);
    let q = queue(&r);
    assert!(q.mean_bytes <= (16 + 8) as f64 * KIB as f64, "{q:?}");
    let s = check_windows(&r, 4 * KIB);
    assert!(s.window_cuts > 20 && s.lowest_window < s.window_cap, "the windows were cut: {s:?}");

    let none = run(INCAST, &[("congestion_control.type", "none")]);
    assert_close("pair 0 -> 2 without control", accepted(&none, "a"), 0.5, 0.05);
    let q = queue(&none);
    assert!(q.mean_bytes >= 28.0 * KIB as f64 && q.p5_bytes >= 28 * KIB, "a full queue: {q:?}");
    assert!(none.summary.section::<PerPairSummary>("per_pair").is_none());
    assert!(!none.summary.counters.contains_key("congestion_marks"), "nothing marks");
}

/// What one run delivered per (sending group, destination host) over the measurement
/// interval, how often each pair of hosts had its window cut and each port marked
/// meanwhile.
#[derive(Default, Debug)]
struct PairLog {
    measure_from: u64,
    delivered: BTreeMap<(u16, u32), u64>,
    cuts: BTreeMap<(u32, u32), u64>,
    marks: BTreeMap<u32, u64>,
}

struct Logging(Arc<Mutex<PairLog>>);

impl Collector for Logging {
    fn on(&mut self, now: u64, event: &TraceEvent) {
        let mut log = self.0.lock().unwrap();
        match *event {
            TraceEvent::Delivered { src_group, dst, bytes, .. } if now >= log.measure_from => {
                *log.delivered.entry((src_group, dst)).or_default() += bytes;
            }
            TraceEvent::EcnMarked { port, .. } if now >= log.measure_from => {
                *log.marks.entry(port).or_default() += 1;
            }
            TraceEvent::WindowChanged { src, dst, cut: true, .. } if now >= log.measure_from => {
                *log.cuts.entry((src, dst)).or_default() += 1;
            }
            _ => {}
        }
    }
}

/// `text` with `overrides`, and its log.
fn run_logged(text: &str, overrides: &[(&str, &str)]) -> (Report, PairLog) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap();
    let log = Arc::new(Mutex::new(PairLog { measure_from: config.simulation.warmup.0, ..PairLog::default() }));
    let mut simulation = Simulation::new(&config).unwrap();
    simulation.add_collector(Logging(log.clone()));
    let report = simulation.run(&mut |_| true).unwrap();
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight, "packet conservation, nothing dropped: {p:?}");
    let log = std::mem::take(&mut *log.lock().unwrap());
    (report, log)
}

/// The global port of the second leaf's port to host 3 (the first leaf's four ports come
/// first).
const HOST_3_PORT: u32 = 4;

/// The groups of `SHARED_LINKS`, in config order: their indices in trace events.
const GROUPS: [&str; 5] = ["a", "b", "victim", "local", "quiet"];

/// The load group `group` delivered to host `dst` in `log`, as a fraction of a 200 Gb/s
/// link over the 100 us measured.
fn load_to(log: &PairLog, group: &str, dst: u32) -> f64 {
    let g = GROUPS.iter().position(|name| *name == group).unwrap() as u16;
    let bytes = log.delivered.get(&(g, dst)).copied().unwrap_or(0);
    bytes as f64 * 8.0 / (200e9 * 100e-6)
}

/// Only contributors are throttled. The pair from host 2 to host 4, which shares the
/// uplink, the spine and the downlink with two contributors, keeps at least 0.95 of the
/// half link it offers; so does host 1's pair to host 4 (a quarter of its link), although
/// host 1 also contributes to the congestion: its window is its own. Over the second half
/// of the run only host 3's port marks and only the three pairs into host 3 are cut, and
/// together they fill its link (± 0.1). Without the control the congestion tree at host 3
/// holds both back to less than 0.75 of what they offer (two thirds, as measured): the
/// victim behind the contributors' packets in the second leaf's FIFO input from the
/// spine, host 1's other pair behind its own packets to host 3, waiting for credits.
#[test]
fn only_contributors_are_throttled() {
    let (r, log) = run_logged(SHARED_LINKS, &[]);
    let victim = accepted(&r, "victim");
    let offered = r.summary.groups["victim"].offered_load;
    assert!(victim >= 0.95 * offered, "victim: accepted {victim:.4} of {offered:.4}");
    let other = load_to(&log, "b", 4);
    assert!(other >= 0.95 * 0.25, "host 1's pair to host 4: {other:.4} of 0.25");
    let marking: Vec<u32> = log.marks.keys().copied().collect();
    assert_eq!(marking, [HOST_3_PORT], "only host 3's port marks");
    let cut: Vec<(u32, u32)> = log.cuts.keys().copied().collect();
    assert!(cut.iter().all(|&(_, dst)| dst == 3), "only pairs into host 3 are cut: {cut:?}");
    for contributor in [0, 1, 5] {
        assert!(log.cuts.contains_key(&(contributor, 3)), "pair {contributor} -> 3 was cut: {cut:?}");
    }
    check_windows(&r, 4 * KIB);
    // Every pair into host 3 is throttled to a share of its link: together they fill it.
    let into_hotspot = load_to(&log, "a", 3) + load_to(&log, "b", 3) + load_to(&log, "local", 3);
    assert_close("into host 3", into_hotspot, 1.0, 0.1);

    let (none, none_log) = run_logged(SHARED_LINKS, &[("congestion_control.type", "none")]);
    let victim = accepted(&none, "victim");
    assert!(victim < 0.75 * offered, "without the control the victim is held back: {victim:.4}");
    let other = load_to(&none_log, "b", 4);
    assert!(other < 0.75 * 0.25, "without the control host 1's other pair is held back: {other:.4}");
    assert!(none_log.cuts.is_empty() && none_log.marks.is_empty());
}

/// No window leaves [one MTU, the cap] over a whole run of many contributors: eight hosts
/// at line rate into one, through the summary's `per_pair` section (its highest window
/// against its cap, 2 x 200 Gb/s x 2 us = 100,000 B, 24 MTUs: 98,304 B; its lowest, the
/// floor of one MTU, which eight pairs sharing a link of a few packets' round trip
/// reach), with a cut factor of 0.7 and a threshold of 8 KiB. Together they fill the
/// receiver's link (± 0.1).
#[test]
fn no_window_exceeds_its_cap_in_a_run() {
    let text = INCAST.replace("hosts = 3\n", "hosts = 9\n").replace("hosts = [1]", "hosts = [1, 3, 4, 5, 6, 7, 8]");
    let r = run(&text, &[("congestion_control.cut_factor", "0.7"), ("congestion_control.threshold", "\"8KiB\"")]);
    let s = check_windows(&r, 4 * KIB);
    assert_eq!(s.window_cap, 98_304, "{s:?}");
    assert!(s.window_cuts > 20 && s.lowest_window == 4 * KIB, "cut down to the floor: {s:?}");
    assert_close("the receiver's link", accepted(&r, "a") + 7.0 * accepted(&r, "b"), 1.0, 0.1);
}

/// The queue pairs of a pair share its window: spreading each host's messages over four
/// queue pairs changes nothing, neither the shares nor a single cut (a window per queue
/// pair would let each pair have four times as much in flight).
#[test]
fn the_queue_pairs_of_a_pair_share_its_window() {
    let one = run(INCAST, &[]);
    let four = run(INCAST, &[("nic.qps_per_destination", "4")]);
    assert_eq!(per_pair(&four), per_pair(&one));
    assert_eq!((accepted(&four, "a"), accepted(&four, "b")), (accepted(&one, "a"), accepted(&one, "b")));
    check_windows(&four, 4 * KIB);
}

/// A `--set` override: a dotted key and its value.
type Override = (&'static str, &'static str);

fn config_error(overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match load_config(INCAST, &o, None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error for {overrides:?}, got {other:?}"),
    }
}

/// Bad values are refused at their key, with what is wrong.
#[test]
fn bad_per_pair_settings_name_their_key() {
    let cases: [(&[Override], &str, &str); 9] = [
        (&[("congestion_control.threshold", "\"28KiB\"")], "congestion_control.threshold", "nothing would be marked"),
        (&[("congestion_control.cut_factor", "1.0")], "congestion_control.cut_factor", "(0, 1)"),
        (&[("congestion_control.cut_factor", "0.0")], "congestion_control.cut_factor", "(0, 1)"),
        (&[("congestion_control.cut_factor", "-0.5")], "congestion_control.cut_factor", "(0, 1)"),
        (&[("congestion_control.base_rtt", "\"0us\"")], "congestion_control.base_rtt", "positive"),
        (&[("congestion_control.idle_reset", "\"0us\"")], "congestion_control.idle_reset", "positive"),
        (&[("congestion_control.cut", "0.5")], "congestion_control.cut", "cut_factor"),
        (&[("marking.type", "\"red\"")], "marking", "own threshold"),
        (&[("nic.scheduling", "\"fifo\"")], "nic.scheduling", "round robin"),
    ];
    for (overrides, key, says) in cases {
        let (path, message) = config_error(overrides);
        assert_eq!(path, key, "{overrides:?}: {message}");
        assert!(message.contains(says), "{overrides:?}: {message}");
    }
    // A lossy fabric: a dropped packet would never be acknowledged.
    let lossy = [("switch.type", "\"shared_buffer\""), ("switch.speedup", "2.0"), ("flow_control.type", "\"none\"")];
    let (path, message) = config_error(&lossy);
    assert_eq!(path, "congestion_control.type", "{message}");
    assert!(message.contains("lossless"), "{message}");
    // The threshold a shared-buffer switch's egress cap allows is checked against it.
    let shared = [
        ("switch.type", "\"shared_buffer\""),
        ("switch.speedup", "2.0"),
        ("flow_control.type", "\"pfc\""),
        ("flow_control.xoff", "50"),
        ("flow_control.xon", "45"),
        ("switch.egress_cap", "\"16KiB\""),
    ];
    let (path, message) = config_error(&shared);
    assert_eq!(path, "congestion_control.threshold", "{message}");
    assert!(message.contains("switch.egress_cap"), "{message}");
}
