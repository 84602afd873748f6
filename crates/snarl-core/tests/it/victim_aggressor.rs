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
/// the victim more at 64 nodes than at 16 (medians 0.30 against 0.50 measured; snarl's
/// 16-node cell is lower than the study's, docs/validation.md).
#[test]
fn cresco8_like_suffers_the_alltoall_more_at_64_nodes_than_at_16() {
    let at = |nodes: &str| median(perf_ratios("cresco8-allgather-alltoall", &[("workload.allocation.nodes", nodes)]));
    let (small, large) = (at("16"), at("64"));
    eprintln!("CRESCO8-like beside an AlltoAll: median perf_ratio {small:.3} at 16 nodes, {large:.3} at 64");
    assert!(large < small, "16 nodes {small}, 64 nodes {large}");
}
