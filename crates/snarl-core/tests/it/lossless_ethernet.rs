//! The ICI paper's lossless Ethernet experiments (Section 4): a congestion tree under
//! PFC alone drags down the uniform senders (victims); DCQCN throttles the contributors
//! and protects the victims, and the pause frames fall.

use crate::common::*;
use snarl_core::Summary;

fn scenario(name: &str) -> String {
    scenario_file(&format!("lossless-ethernet/{name}"))
}

fn summary(name: &str) -> Summary {
    run(&scenario(name), &[]).summary
}

fn pauses(s: &Summary) -> (u64, f64) {
    let pfc: snarl_core::observe::PfcSummary = s.section("pfc").expect("PFC scenarios report pfc");
    (pfc.pause_frames_sent, pfc.paused_time)
}

/// One tree: with DCQCN the victims get at least twice their throughput under PFC alone
/// (measured: 0.49 vs 0.14 of their links, of 0.50 offered), pause frames fall at least
/// to a quarter (691 vs 3,092) and the paused time by five (7 vs 91 link-ms).
#[test]
fn dcqcn_protects_the_victims_of_one_congestion_tree() {
    let (none, dcqcn) = (summary("one-tree-none"), summary("one-tree-dcqcn"));
    let victims = |s: &Summary| s.groups["victims"].accepted_load;
    assert!(victims(&none) < 0.5 * none.groups["victims"].offered_load, "PFC alone: {}", victims(&none));
    assert!(victims(&dcqcn) >= 2.0 * victims(&none), "dcqcn {} vs none {}", victims(&dcqcn), victims(&none));
    let ((frames_none, time_none), (frames_dcqcn, time_dcqcn)) = (pauses(&none), pauses(&dcqcn));
    assert!(frames_dcqcn * 4 <= frames_none, "pause frames: dcqcn {frames_dcqcn} vs none {frames_none}");
    assert!(time_dcqcn * 5.0 <= time_none, "paused time: dcqcn {time_dcqcn} vs none {time_none}");
    assert!(dcqcn.counters["cnps_sent"] > 0 && dcqcn.counters["rate_cuts"] > 0);
    readme_says(&format!(
        "keep {:.2} of their links under PFC alone and {:.2} of the {:.2} they offer with DCQCN, with less than a \
         quarter of the pause frames",
        victims(&none),
        victims(&dcqcn),
        dcqcn.groups["victims"].offered_load
    ));
}

/// Four trees: DCQCN leaves (nearly) nothing for PFC to do (measured: 0 pause frames vs
/// 9,922) and the victims get what they offer (within 5%).
#[test]
fn dcqcn_dissolves_four_congestion_trees() {
    let (none, dcqcn) = (summary("four-trees-none"), summary("four-trees-dcqcn"));
    let (frames_none, _) = pauses(&none);
    let (frames_dcqcn, _) = pauses(&dcqcn);
    assert!(frames_dcqcn * 20 <= frames_none, "pause frames: dcqcn {frames_dcqcn} vs none {frames_none}");
    let v = &dcqcn.groups["victims"];
    assert!(v.accepted_load >= 0.95 * v.offered_load, "victims {} of {}", v.accepted_load, v.offered_load);
    assert!(v.accepted_load > none.groups["victims"].accepted_load);
}

/// Google all-RPC flows beside a sustained incast: under PFC alone the victims' median
/// flow takes 13 times its ideal time; DCQCN brings it back to about 1.5 (asserted: at
/// least 4 times better at the median, better at p99, and under 2).
#[test]
fn dcqcn_restores_the_flow_completion_times_of_google_all_traffic() {
    let (none, dcqcn) = (summary("google-all-one-tree-none"), summary("google-all-one-tree-dcqcn"));
    let slowdown = |s: &Summary| s.groups["victims"].slowdown.clone();
    let (a, b) = (slowdown(&none), slowdown(&dcqcn));
    assert!(dcqcn.groups["victims"].flows > 100_000, "{}", dcqcn.groups["victims"].flows);
    assert!(b.p50 * 4.0 <= a.p50 && b.p50 < 2.0, "median slowdown: dcqcn {} vs none {}", b.p50, a.p50);
    assert!(b.p99 < a.p99, "p99 slowdown: dcqcn {} vs none {}", b.p99, a.p99);
}

/// Small, frequent trees (four 5 us bursts; the paper's Section 4.6): DCQCN leaves PFC
/// nothing to do and cuts the tail of the flow completion times, but it costs the
/// victims throughput, as the paper finds: it throttles their flows too and gives the
/// rate back slowly (measured: 0.316 against 0.340 of the 0.367 they offer; p99
/// slowdown 34 against 134; 0 pause frames against 349).
#[test]
fn dcqcn_costs_throughput_under_small_frequent_bursts() {
    let (none, dcqcn) = (summary("google-all-bursts-none"), summary("google-all-bursts-dcqcn"));
    let (a, b) = (&none.groups["victims"], &dcqcn.groups["victims"]);
    assert!(b.accepted_load < a.accepted_load, "victims: dcqcn {} vs none {}", b.accepted_load, a.accepted_load);
    assert!(b.slowdown.p99 * 2.0 < a.slowdown.p99, "p99 slowdown: dcqcn {} vs none {}", b.slowdown.p99, a.slowdown.p99);
    let (frames_none, _) = pauses(&none);
    let (frames_dcqcn, _) = pauses(&dcqcn);
    assert!(frames_dcqcn * 10 <= frames_none, "pause frames: dcqcn {frames_dcqcn} vs none {frames_none}");
}

/// PFC, ECN marking (random), DCQCN and flow-size draws: the same seed gives the same
/// summary and tables, byte for byte; another seed does not.
#[test]
fn lossless_ethernet_runs_are_deterministic() {
    let text = scenario("google-all-one-tree-dcqcn");
    let short = [("simulation.duration", "\"400us\""), ("traffic.phases.1.at", "\"350us\"")];
    let report = |seed: &str| {
        let mut o = short.to_vec();
        o.push(("seed", seed));
        let mut r = run(&text, &o);
        r.summary.wall_seconds = 0.0;
        // Tables as text: empty windows hold NaN latencies, which never compare equal.
        format!("{}\n{:?}", r.summary_json(), r.tables)
    };
    let (a, b, c) = (report("3"), report("3"), report("4"));
    assert!(a == b, "the same seed gave two reports");
    assert!(a != c, "another seed gave the same report");
}

/// The ICI paper's six mechanisms on one of its scenarios: PFC alone, DCQCN, CI, ICI,
/// ICI and DCQCN uncoordinated, and ICI+ (`<scenario>-<mechanism>.toml`).
const SIX: [&str; 6] = ["none", "dcqcn", "ci", "ici", "ici-dcqcn", "ici-plus"];

fn six(scenario: &str, overrides: &[(&str, &str)]) -> std::collections::BTreeMap<&'static str, snarl_core::Report> {
    SIX.iter()
        .map(|m| {
            let report = run(&self::scenario(&format!("{scenario}-{m}")), overrides);
            if let Some(iso) = report.summary.section::<snarl_core::isolation::IsolationSummary>("isolation") {
                assert_eq!(iso.reordered_packets, 0, "{scenario}-{m} reordered packets");
            }
            (*m, report)
        })
        .collect()
}

fn isolation(r: &snarl_core::Report) -> snarl_core::isolation::IsolationSummary {
    r.summary.section("isolation").expect("an isolation run")
}

fn victims(r: &snarl_core::Report) -> &snarl_core::report::GroupSummary {
    &r.summary.groups["victims"]
}

/// Most CNPs in one window, from the `fabric` table (every run with marking has it; 0 without one).
fn peak_cnps(r: &snarl_core::Report) -> u64 {
    let Some(fabric) = r.tables.get("fabric") else { return 0 };
    match fabric.column("cnps") {
        Some(snarl_core::ColumnData::U64(v)) => v.iter().copied().max().unwrap_or(0),
        other => panic!("fabric.cnps: {other:?}"),
    }
}

/// One tree (Section 4.3). The paper: ICI+ sees the tree handled by isolation and sends no
/// ECN marks and no CNPs. snarl: nearly none, at most 2% of DCQCN's (measured 139 marks
/// and 89 CNPs against 16,137 and 9,134): the victims' own bursts, after the tree's onset,
/// make short-lived roots beside the tree's at ports with ICI's two entries, and ICI+
/// marks those that find no entry, as its rule says. Every isolation variant cuts the
/// victims' p99 latency below PFC alone's (measured: CI 422, ICI 780, ICI+ 861 us against
/// 979). Where snarl parts from the paper (ICI's latency against DCQCN's and against the
/// naive combination's) is written in docs/validation.md.
#[test]
fn ici_plus_leaves_one_tree_to_isolation() {
    let runs = six("one-tree", &[]);
    let (dcqcn, plus) = (&runs["dcqcn"].summary, &runs["ici-plus"].summary);
    let (marks, cnps) = (dcqcn.counters["ecn_marks"], dcqcn.counters["cnps_sent"]);
    let iso = isolation(&runs["ici-plus"]);
    assert_eq!(iso.marks_victims, 0, "ICI+ never marks a flow isolation does not point at");
    // Few marks, and some: ICI+'s marking is live (the control, ICI+ with its marking
    // off, marks none and fails here).
    let few = |s: &snarl_core::Summary| {
        let (m, c) = (s.counters["ecn_marks"], s.counters["cnps_sent"]);
        m > 0 && c > 0 && m * 50 <= marks && c * 50 <= cnps
    };
    assert!(
        few(plus),
        "ICI+ marks {} and CNPs {} vs DCQCN {marks} and {cnps}",
        plus.counters["ecn_marks"],
        plus.counters["cnps_sent"]
    );
    let off = [("marking.kmin", "1GB"), ("marking.kmax", "1GB")];
    let unmarked = run(&scenario("one-tree-ici-plus"), &off);
    assert!(!few(&unmarked.summary), "the control (ICI+ without marking) would pass");
    readme_says(&format!("CI keeps {:.2} with no end-to-end control", victims(&runs["ci"]).accepted_load));
    let p99 = |m: &str| victims(&runs[m]).latency.p99;
    for m in ["ci", "ici", "ici-plus"] {
        assert!(p99(m) < p99("none"), "{m}: victims' p99 {} vs PFC alone {}", p99(m), p99("none"));
    }
}

/// Four trees at two entries per port (Section 4.4). ICI runs out of entries: it
/// overflows its tables at least three times as often as with one tree (measured 1,408
/// against 317). ICI+ hands what isolation cannot hold to DCQCN: its victims keep at
/// least the throughput of DCQCN's and of the naive ICI-DCQCN's, within 2% (measured
/// 0.511 against 0.504 and 0.506 of their links), and its peak CNPs per 10 us window are
/// at least 8 times lower than DCQCN's (the paper: up to 32 times).
#[test]
fn ici_plus_keeps_four_trees_victims_with_few_notifications() {
    let one = run(&scenario("one-tree-ici"), &[]);
    let runs = six("four-trees", &[]);
    let (four_ovf, one_ovf) = (isolation(&runs["ici"]).cft_overflows, isolation(&one).cft_overflows);
    assert!(four_ovf >= 3 * one_ovf, "ICI overflows: four trees {four_ovf}, one tree {one_ovf}");
    let load = |m: &str| victims(&runs[m]).accepted_load;
    for m in ["dcqcn", "ici-dcqcn"] {
        assert!(load("ici-plus") >= 0.98 * load(m), "victims: ICI+ {} vs {m} {}", load("ici-plus"), load(m));
    }
    let (plus, dcqcn) = (peak_cnps(&runs["ici-plus"]), peak_cnps(&runs["dcqcn"]));
    // Few notifications, and some: ICI+ hands what its tables cannot hold to DCQCN. The
    // control, plain ICI (no end-to-end control), sends none and fails here.
    let few = |peak: u64| peak > 0 && peak * 8 <= dcqcn;
    assert!(few(plus), "peak CNPs per window: ICI+ {plus} vs DCQCN {dcqcn}");
    assert!(!few(peak_cnps(&runs["ici"])), "the control (ICI) would pass");
    readme_says(&format!(
        "ICI+ keeps the victims' throughput ({:.3}, offered {:.3}) with a peak of {plus} CNPs per 10 us where DCQCN sends {dcqcn}",
        load("ici-plus"),
        victims(&runs["ici-plus"]).offered_load
    ));
    assert_eq!(isolation(&runs["ici-plus"]).peak_cnps_per_window, plus, "the summary's peak is the table's");
}

/// Google_All and one tree that lasts (Section 4.5, Figure 4), here until the victims
/// complete a million messages (4 ms; the scenario's own run stops after two million).
/// ICI+ marks only once the tree's queues have stayed busy for `persist` (2 ms), and sends
/// fewer CNPs than DCQCN and ICI-DCQCN (measured 2,570 against 16,066 and 11,223); its
/// victims' p99 flow completion time is at least 5% below ICI's (measured 22% below; the
/// paper: 23%). The paper's other claims here (p99 below DCQCN's, p50 and p95 no worse
/// than ICI-DCQCN's) snarl does not reproduce: docs/validation.md.
#[test]
fn ici_plus_shortens_the_tail_of_a_lasting_tree_with_few_notifications() {
    let stop = [("simulation.stop_after.messages", "1000000")];
    let runs: std::collections::BTreeMap<&str, snarl_core::Report> = ["dcqcn", "ici", "ici-dcqcn", "ici-plus"]
        .iter()
        .map(|m| (*m, run(&scenario(&format!("google-all-long-tree-{m}")), &stop)))
        .collect();
    let cnps = |m: &str| runs[m].summary.counters["cnps_sent"];
    assert!(cnps("ici-plus") < cnps("dcqcn") && cnps("ici-plus") < cnps("ici-dcqcn"));
    assert!(isolation(&runs["ici-plus"]).marks_isolated > 0, "the lasting tree is marked");
    let p99 = |m: &str| victims(&runs[m]).fct.p99;
    assert!(p99("ici-plus") <= 0.95 * p99("ici"), "victims' p99 FCT: ICI+ {} vs ICI {}", p99("ici-plus"), p99("ici"));
}

/// Google_All and four short bursts (Section 4.6). DCQCN at the paper-like slow settings
/// costs the victims throughput against PFC alone (measured 0.316 against 0.340 of their
/// links). ICI+ gives the victims a p99 flow completion time at least 5% below PFC
/// alone's, CI's and ICI's (measured 45.8 us against 79.4, 53.5 and 49.5); the paper has it
/// the best of the six, snarl has DCQCN's and ICI-DCQCN's lower (docs/validation.md).
#[test]
fn dcqcn_overreacts_to_bursts_and_ici_plus_shortens_their_tail() {
    let runs = six("google-all-bursts", &[]);
    let load = |m: &str| victims(&runs[m]).accepted_load;
    assert!(load("dcqcn") < load("none"), "victims: DCQCN {} vs PFC alone {}", load("dcqcn"), load("none"));
    let p99 = |m: &str| victims(&runs[m]).fct.p99;
    for m in ["none", "ci", "ici"] {
        assert!(p99("ici-plus") <= 0.95 * p99(m), "victims' p99 FCT: ICI+ {} vs {m} {}", p99("ici-plus"), p99(m));
    }
}
