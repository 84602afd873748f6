//! The ICI paper's lossless Ethernet experiments (Section 4). The paper's findings, and
//! the control runs that show each can fail, are data in
//! `scenarios/lossless-ethernet/findings.toml`, run by
//! `bindings/python/tests/test_reproductions.py` (`snarl findings --controls`): a finding
//! is written once. Here: what the findings do not state: determinism, the README's
//! figures, isolation's own invariants.

use crate::common::*;
use snarl_core::Summary;

fn scenario(name: &str) -> String {
    scenario_file(&format!("lossless-ethernet/{name}"))
}

fn summary(name: &str) -> Summary {
    run(&scenario(name), &[]).summary
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

fn isolation(r: &snarl_core::Report) -> snarl_core::isolation::IsolationSummary {
    r.summary.section("isolation").expect("an isolation run")
}

/// Most CNPs in one window, from the `fabric` table (every run with marking has it; 0 without one).
fn peak_cnps(r: &snarl_core::Report) -> u64 {
    let Some(fabric) = r.tables.get("fabric") else { return 0 };
    match fabric.column("cnps") {
        Some(snarl_core::ColumnData::U64(v)) => v.iter().copied().max().unwrap_or(0),
        other => panic!("fabric.cnps: {other:?}"),
    }
}

/// The README quotes these runs: the victims of one tree under PFC alone and DCQCN
/// (with a quarter of the pause frames), CI's, and ICI+ on four trees. ICI+ never
/// reorders a flow, and its summary's peak CNPs per window is its `fabric` table's.
#[test]
fn the_readme_quotes_the_lossless_ethernet_runs() {
    let (none, dcqcn, ci) = (summary("one-tree-none"), summary("one-tree-dcqcn"), summary("one-tree-ci"));
    let victims = |s: &Summary| s.groups["victims"].accepted_load;
    readme_says(&format!(
        "keep {:.2} of their links under PFC alone and {:.2} of the {:.2} they offer with DCQCN, with less than a \
         quarter of the pause frames",
        victims(&none),
        victims(&dcqcn),
        dcqcn.groups["victims"].offered_load
    ));
    readme_says(&format!("CI keeps {:.2} with no end-to-end control", victims(&ci)));
    let plus = run(&scenario("four-trees-ici-plus"), &[]);
    let peak = peak_cnps(&plus);
    readme_says(&format!(
        "ICI+ keeps the victims' throughput ({:.3}, offered {:.3}) with a peak of {peak} CNPs per 10 us where DCQCN sends {}",
        victims(&plus.summary),
        plus.summary.groups["victims"].offered_load,
        peak_cnps(&run(&scenario("four-trees-dcqcn"), &[]))
    ));
    let iso = isolation(&plus);
    assert_eq!(iso.peak_cnps_per_window, peak, "the summary's peak is the table's");
    assert_eq!(iso.reordered_packets, 0, "ICI+ reordered packets");
}
