//! Congestion trees (`[observe.trees]`, `observe/trees.rs`): roots and the blocked ports
//! and hosts behind them, from periodic samples of the fabric's wait-for relation. Every
//! run goes through `common`'s helpers, which check packet conservation and that the
//! lossless fabrics dropped nothing.

use crate::common::*;
use snarl_core::observe::TreesSummary;
use snarl_core::report::ColumnData;
use snarl_core::Report;
use std::collections::BTreeSet;

fn trees(report: &Report) -> TreesSummary {
    report.summary.section("trees").expect("a trees section")
}

fn column<'a>(report: &'a Report, table: &str, name: &str) -> &'a ColumnData {
    report.table(table).and_then(|t| t.column(name)).unwrap_or_else(|| panic!("no column {table}.{name}"))
}

fn u64s<'a>(report: &'a Report, table: &str, name: &str) -> &'a [u64] {
    match column(report, table, name) {
        ColumnData::U64(v) => v,
        other => panic!("{table}.{name} is not u64: {other:?}"),
    }
}

/// The roots of a summary as (switch, port, VC).
fn roots(t: &TreesSummary) -> BTreeSet<(u32, u32, u32)> {
    t.roots.iter().map(|r| (r.switch, r.port, r.vc)).collect()
}

/// The mean size (ports) of the trees of the windows from `from` on (ps).
fn mean_size(report: &Report, from: u64) -> f64 {
    let ColumnData::F64(time) = column(report, "trees", "time") else { panic!("trees.time") };
    let sizes: Vec<f64> = u64s(report, "trees", "size")
        .iter()
        .zip(time)
        .filter(|(_, &t)| t * 1000.0 >= from as f64)
        .map(|(&s, _)| s as f64)
        .collect();
    sizes.iter().sum::<f64>() / sizes.len().max(1) as f64
}

/// A single switch of 17 hosts, host 0 the hotspot of `senders` hosts sending to it at
/// line rate (credits, FIFO input and output buffers of 32 KiB: the default switch).
fn incast(senders: usize, tracked: bool) -> String {
    let observe = if tracked { "[observe.trees]" } else { "" };
    format!(
        r#"
[simulation]
duration = "100us"
warmup = "20us"
window = "10us"

[topology]
type = "single_switch"
hosts = 17

[links]
host = {{ rate = "100Gbps", latency = "25ns" }}

[traffic]
load = 1.0
message_size = "64KiB"

[[traffic.groups]]
name = "hotspot"
hosts = [0]
pattern = {{ type = "silent" }}

[[traffic.groups]]
name = "senders"
count = {senders}
pattern = {{ type = "incast", destination = 0 }}

[[traffic.groups]]
name = "rest"
rest = true
pattern = {{ type = "silent" }}

{observe}
"#
    )
}

/// Hosts 1..=k send to host 0: one root, the hotspot's port, in every sample; behind it
/// the k senders' NICs, out of credits, and their k ingress ports, full of packets for
/// it. The tree grows with the senders: k + 1 ports, k hosts, on the one switch.
#[test]
fn a_single_switch_incast_has_one_root_and_a_tree_that_grows_with_its_senders() {
    let mut sizes = Vec::new();
    for k in [2, 4, 8, 16] {
        let r = run(&incast(k, true), &[]);
        let t = trees(&r);
        assert_eq!(roots(&t), BTreeSet::from([(0, 0, 0)]), "{k} senders: the hotspot's port is the root");
        assert!(t.samples >= 4, "{k} senders: {} samples", t.samples);
        assert_eq!((t.count_max, t.roots[0].samples), (1, t.samples), "{k} senders: one tree in every sample");
        assert_eq!((t.size_max, t.switches_max, t.depth_max, t.hosts_blocked_max), (k as u64 + 1, 1, 1, k as u64));
        // Each window's row names the root, and the ports: the root and the senders'.
        assert!(u64s(&r, "trees", "root_port").iter().all(|&p| p == 0));
        let ports: BTreeSet<u64> = u64s(&r, "tree_ports", "port").iter().copied().collect();
        assert_eq!(ports, (0..=k as u64).collect());
        sizes.push(t.size_max);
    }
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "sizes {sizes:?}");
}

/// Tracking trees reads the fabric and changes nothing: the same run without it has the
/// same summary (the `trees` section aside) and the same tables (the trees' aside).
#[test]
fn tracking_trees_changes_nothing_else() {
    let (mut on, mut off) = (run(&incast(4, true), &[]), run(&incast(4, false), &[]));
    for r in [&mut on, &mut off] {
        r.summary.wall_seconds = 0.0;
    }
    assert!(on.summary.sections.remove("trees").is_some() && off.summary.section::<TreesSummary>("trees").is_none());
    assert_eq!(on.summary_json(), off.summary_json());
    for name in ["trees", "tree_ports", "topology"] {
        assert!(on.tables.remove(name).is_some() && !off.tables.contains_key(name), "table {name}");
    }
    // Compared as text: windows without a latency hold NaN, which equals nothing.
    assert_eq!(format!("{:?}", on.tables), format!("{:?}", off.tables));
}

/// The ICI paper's one congestion tree: 16 contributors, one per leaf, incast host 1 for
/// 1 ms while 48 victims send uniformly at 0.5, on a 64-host k-ary 3-tree of shared-buffer
/// switches. Under PFC alone the tree of host 1's port spreads through the fabric (21
/// switches: every leaf with a contributor, and the spines between); DCQCN throttles the
/// contributors (at most 17 switches, at the onset), and congestion isolation moves the
/// tree into its congested-flow queues, out of the priority the victims use (at most 4).
#[test]
fn under_pfc_alone_the_tree_spans_more_switches_than_under_dcqcn_or_ci() {
    let tracked = [("observe.trees", "{}")];
    let one_tree = |mechanism: &str| run_scenario(&format!("lossless-ethernet/one-tree-{mechanism}"), &tracked, None);
    let (none, dcqcn, ci) = std::thread::scope(|s| {
        let dcqcn = s.spawn(|| one_tree("dcqcn"));
        let ci = one_tree("ci");
        (one_tree("none"), dcqcn.join().unwrap(), ci)
    });
    let (none, dcqcn, ci) = (trees(&none), trees(&dcqcn), trees(&ci));
    let switches = (none.switches_max, dcqcn.switches_max, ci.switches_max);
    assert!(switches.0 > switches.1 && switches.0 > switches.2, "switches (PFC, DCQCN, CI): {switches:?}");
    assert!(none.switches_max >= 16, "the tree reaches the contributors' leaves: {}", none.switches_max);
    // The longest-lived root is host 1's port (switch 0, port 1).
    let lasting = none.roots.iter().max_by_key(|r| r.samples).unwrap();
    assert_eq!((lasting.switch, lasting.port, lasting.vc), (0, 1, 0));
}

/// Without a hotspot, at load 0.5, no egress holds half a buffer behind which anything
/// is blocked: no tree, on the lossless Ethernet fabric of the one-tree scenario with its
/// contributors silent, and on a credit-based k-ary n-tree of switches with virtual output
/// queues under uniform traffic. (With FIFO inputs the same fabric has a few trees of two
/// switches, each seen once: a head packet for a busy port holds its whole input queue,
/// which then blocks the link into it.)
#[test]
fn without_a_hotspot_at_load_half_there_is_no_tree() {
    let quiet = [("observe.trees", "{}"), ("traffic.phases.0.pattern", "{type='silent'}")];
    let pfc = run_scenario("lossless-ethernet/one-tree-none", &quiet, None);
    let credit = run(
        r#"
[simulation]
duration = "200us"
warmup = "50us"
window = "10us"

[topology]
type = "k_ary_n_tree"
k = 4
n = 3

[links]
host = { rate = "100Gbps", latency = "25ns" }
switch = { rate = "100Gbps", latency = "25ns" }

[traffic]
load = 0.5

[switch]
type = "ioq"
input_queuing = "voq"

[observe.trees]
"#,
        &[],
    );
    for (name, r) in [("PFC", &pfc), ("credits", &credit)] {
        let t = trees(r);
        assert!(t.samples > 0, "{name}: sampled");
        assert_eq!((t.count_max, t.roots.len()), (0, 0), "{name}: {t:?}");
        assert_eq!(report_rows(r, "trees"), 0, "{name}");
    }
}

fn report_rows(report: &Report, table: &str) -> usize {
    report.table(table).map_or(0, |t| t.rows())
}

/// The silent forest (Gran et al.): 518 contributors send only to 8 hotspots on the
/// 648-host fat-tree of 36-port switches with virtual output queues. Without congestion
/// control every sample has 8 trees, rooted at the hotspots' ports, reaching back over
/// the fabric; IB CC throttles the contributors and the trees shrink (snarl, 15-20 ms:
/// at most 157 ports against 220, 104 blocked hosts against 147).
#[test]
fn the_silent_forest_has_eight_roots_and_ib_cc_shrinks_its_trees() {
    let short = [("observe.trees", "{}"), ("simulation.duration", "20ms"), ("simulation.warmup", "15ms")];
    let forest = |cc: &str| run_scenario(&format!("infiniband-cc/silent-forest-cc-{cc}"), &short, None);
    let (off, on) = std::thread::scope(|s| {
        let off = s.spawn(|| forest("off"));
        (off.join().unwrap(), forest("on"))
    });
    // The hotspots' ports: host h is on leaf h / 18, port h % 18 (hosts come first).
    let hotspots: BTreeSet<(u32, u32, u32)> =
        u64s(&off, "hotspots", "host").iter().map(|&h| (h as u32 / 18, h as u32 % 18, 0)).collect();
    assert_eq!(hotspots.len(), 8);
    let (t_off, t_on) = (trees(&off), trees(&on));
    assert_eq!(roots(&t_off), hotspots, "CC off: the roots are the hotspots");
    assert_eq!((t_off.count_max, t_off.count_mean), (8, 8.0), "CC off: 8 trees in every sample");
    assert!(t_off.switches_max > 18, "CC off: a tree reaches over the fabric: {t_off:?}");
    assert!(roots(&t_on).is_subset(&hotspots), "CC on: roots {:?}", roots(&t_on));
    assert!(t_on.size_max < t_off.size_max, "size {} with CC, {} without", t_on.size_max, t_off.size_max);
    assert!(t_on.hosts_blocked_max < t_off.hosts_blocked_max, "{t_on:?} / {t_off:?}");
    let from = 15_000_000_000;
    let (mean_off, mean_on) = (mean_size(&off, from), mean_size(&on, from));
    assert!(mean_on < mean_off, "mean size {mean_on} with CC, {mean_off} without");
}
