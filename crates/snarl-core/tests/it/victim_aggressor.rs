//! The victim/aggressor method on the fabric presets (`scenarios/victim-aggressor/`):
//! what the congestion characterization study finds, where snarl's presets already
//! agree with it. Medians over 5 placements (seeds 1-5), as a study of a busy machine
//! reports a typical allocation rather than one.

use crate::common::job;
use std::path::Path;

/// The victim's perf ratio in `scenario` (a file of `scenarios/victim-aggressor/`) with
/// `overrides`, for each seed 1-5 (two runs each: the baseline and the congested one).
fn perf_ratios(scenario: &str, overrides: &[(&str, &str)]) -> Vec<f64> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/victim-aggressor");
    let text = std::fs::read_to_string(dir.join(format!("{scenario}.toml"))).unwrap();
    std::thread::scope(|scope| {
        let runs: Vec<_> = (1..=5)
            .map(|seed| {
                let (dir, text) = (&dir, &text);
                scope.spawn(move || {
                    let mut o: Vec<(String, String)> =
                        overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
                    o.push(("seed".into(), seed.to_string()));
                    let config = snarl_core::load_config_in(text, Some(dir), &o, None).unwrap();
                    let report = snarl_core::run(&config).unwrap();
                    let p = &report.summary.packets;
                    assert_eq!(p.injected, p.delivered + p.in_flight, "packet conservation");
                    job(&report, "victim").perf_ratio.expect("a perf ratio")
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// LUMI (the study, Section V-C): within 5% of the baseline under steady AlltoAll and
/// Incast aggressors. LUMI-like, 64 nodes: medians 0.995 and 1.000 measured, asserted
/// at least 0.95.
#[test]
fn lumi_like_keeps_the_victim_within_five_percent() {
    for aggressor in ["alltoall", "incast"] {
        let ratios =
            perf_ratios("lumi-allgather-alltoall", &[("workload.jobs.1.collective", &format!("\"{aggressor}\""))]);
        let m = median(ratios.clone());
        eprintln!("LUMI-like beside {aggressor}: perf_ratio {ratios:?}, median {m:.3}");
        assert!(m >= 0.95, "beside {aggressor}: median perf_ratio {m} ({ratios:?})");
    }
}

/// CRESCO8 (the study, Section V-A): close to the baseline under a steady AlltoAll up
/// to 32 nodes, degraded from 64 on (down to 0.45). CRESCO8-like: the AlltoAll harms
/// the victim more at 64 nodes than at 16 (medians 0.48 against 0.65 measured; snarl's
/// 16-node cell is lower than the study's, docs/validation.md).
#[test]
fn cresco8_like_suffers_the_alltoall_more_at_64_nodes_than_at_16() {
    let at = |nodes: &str| median(perf_ratios("cresco8-allgather-alltoall", &[("workload.allocation.nodes", nodes)]));
    let (small, large) = (at("16"), at("64"));
    eprintln!("CRESCO8-like beside an AlltoAll: median perf_ratio {small:.3} at 16 nodes, {large:.3} at 64");
    assert!(large < small, "16 nodes {small}, 64 nodes {large}");
}

/// Leonardo (the study, Section V-B): an AlltoAll aggressor leaves the victim at about
/// 0.95-1.05, an Incast collapses it to about 0.2 at 32-64 nodes, which the study traces
/// to congestion control. Leonardo-like (no congestion control), 64 nodes: medians 0.981
/// beside the AlltoAll and 0.312 beside the Incast measured; asserted: the Incast harms
/// the victim more, and by a margin (at least 0.2) no placement noise explains. The
/// control: with IB CC (Gran et al.'s Table I) the Incast leaves the victim alone
/// (median 1.000 measured, asserted at least 0.95).
#[test]
fn leonardo_like_suffers_the_incast_more_than_the_alltoall() {
    let beside = |aggressor: &str, cc: &str| {
        let collective = format!("\"{aggressor}\"");
        let overrides = [("workload.jobs.1.collective", collective.as_str()), ("congestion_control", cc)];
        let ratios = perf_ratios("leonardo-allgather-alltoall", &overrides);
        let m = median(ratios.clone());
        eprintln!("Leonardo-like beside {aggressor}, congestion control {cc}: perf_ratio {ratios:?}, median {m:.3}");
        m
    };
    let none = "{ type = \"none\" }";
    let (alltoall, incast) = (beside("alltoall", none), beside("incast", none));
    assert!(incast < alltoall - 0.2, "beside the AlltoAll {alltoall}, beside the Incast {incast}");
    let with_ibcc = beside("incast", "{ type = \"ibcc\" }");
    assert!(with_ibcc >= 0.95, "IB CC protects the victim from the Incast: {with_ibcc}");
}
