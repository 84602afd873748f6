//! The NCCL engine against the NCCL spine-leaf test report: bus bandwidth as NCCL-tests
//! defines it, the back-to-back rate and fixed overhead, the single switch's rings, the
//! spine-leaf under each load balancing against the balls-into-bins expectation of ECMP,
//! oversubscription, flow completion times, and the Nanjing experiment with the planner.
//! Runs use the scenarios of `scenarios/nccl-spine-leaf/` with smaller vectors.

use crate::common::*;
use snarl_core::traffic::jobs::NcclSummary;
use snarl_core::Report;

/// A scenario of `scenarios/nccl-spine-leaf/`, run with `overrides`.
fn nccl_run(name: &str, overrides: &[(&str, &str)]) -> Report {
    nccl_seeded(name, overrides, None)
}

fn nccl_seeded(name: &str, overrides: &[(&str, &str)], seed: Option<u64>) -> Report {
    run_scenario(&format!("nccl-spine-leaf/{name}"), overrides, seed)
}

/// The NCCL figures of the run's job `name`.
fn nccl(report: &Report, name: &str) -> NcclSummary {
    job(report, name).nccl.expect("an NCCL-engine job")
}

/// Bus bandwidth of a scenario at `size`, seed `seed`.
fn busbw(name: &str, size: &str, seed: u64, extra: &[(&str, &str)]) -> f64 {
    let mut o = vec![("workload.jobs.0.size", size)];
    o.extend_from_slice(extra);
    nccl(&nccl_seeded(name, &o, Some(seed)), "nccl").busbw_gbps.unwrap()
}

#[test]
fn bus_over_algorithm_bandwidth_is_nccl_tests_factor_exactly() {
    for (name, factor) in [
        ("single-switch-4x4-allreduce-uni", 2.0 * 15.0 / 16.0),
        ("single-switch-4x4-allreduce-hd", 2.0 * 15.0 / 16.0),
        ("single-switch-4x4-alltoall-pxn", 15.0 / 16.0),
    ] {
        let n = nccl(&nccl_run(name, &[("workload.jobs.0.size", "4MiB")]), "nccl");
        assert_eq!(n.busbw_gbps.unwrap() / n.algbw_gbps.unwrap(), factor, "{name}");
    }
}

/// Back to back with 62-byte headers the NICs carry 50 GB/s x 4096 / 4158 = 49.25 GB/s of
/// payload; a large AllReduce gets within 2% of it (the report: 47.84-48.35), and its
/// time is the fixed overhead plus size over a rate, linear within 2%.
#[test]
fn back_to_back_reaches_the_payload_rate_and_time_is_linear_in_size() {
    let report = nccl_run("back-to-back-2x1-allreduce-bidir", &[]);
    let n = nccl(&report, "nccl");
    assert_close("busbw, 2 GiB (GB/s)", n.busbw_gbps.unwrap(), 49.25, 0.02 * 49.25);
    assert_close("ideal", n.ideal_gbps.unwrap(), 49.25, 0.01);
    let time = |size: &str| {
        let r = nccl_run("back-to-back-2x1-allreduce-bidir", &[("workload.jobs.0.size", size)]);
        nccl(&r, "nccl").time_ns.unwrap()
    };
    let (s1, s2, s3) = (256.0 * 1048576.0, 512.0 * 1048576.0, 1024.0 * 1048576.0);
    let (t1, t2, t3) = (time("256MiB"), time("512MiB"), time("1GiB"));
    // The line through the smallest and largest sizes: its slope is a rate, its intercept
    // the overhead of 570 us; the middle size lies on it.
    let rate = (s3 - s1) / (t3 - t1);
    let overhead = t1 - s1 / rate;
    assert_close("rate (GB/s)", rate, 49.25, 0.02 * 49.25);
    assert_close("overhead (ns)", overhead, 570_000.0, 0.02 * 570_000.0);
    assert_close("middle size on the line", t2 / (overhead + s2 / rate), 1.0, 0.02);
}

/// One switch: the bidirectional ring doubles the unidirectional one (each NIC carries
/// both ways), the unidirectional ring of 2 x 8 doubles that of 4 x 4 (G/2 NICs a node),
/// and every NIC runs within 5% of its line rate.
#[test]
fn single_switch_rings_use_every_nic() {
    let size = [("workload.jobs.0.size", "64MiB")];
    let uni = nccl(&nccl_run("single-switch-2x8-allreduce-uni", &size), "nccl");
    let bidir = nccl(&nccl_run("single-switch-2x8-allreduce-bidir", &size), "nccl");
    let uni4 = nccl(&nccl_run("single-switch-4x4-allreduce-uni", &size), "nccl");
    let bw = |n: &NcclSummary| n.busbw_gbps.unwrap();
    assert_close("bidirectional / unidirectional", bw(&bidir) / bw(&uni), 2.0, 0.05);
    assert_close("unidirectional 2x8 / 4x4", bw(&uni) / bw(&uni4) / 2.0, 1.0, 0.03);
    for (what, n) in [("uni 2x8", &uni), ("bidir 2x8", &bidir), ("uni 4x4", &uni4)] {
        assert!(n.ideal_raw_pct.unwrap() >= 95.0, "{what}: {:.2}% of line rate", n.ideal_raw_pct.unwrap());
    }
}

/// Flows F = 8 edges x `qps` per direction, hashed twice per direction (the leaf's 4
/// uplinks, the spine's 4 links down): the collective runs at the mean load over the
/// most loaded of the 16 links, at most 1. Mean, 5th and 95th percentile over draws.
fn balls_into_bins(qps: usize) -> (f64, f64, f64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    let (flows, bins) = (8 * qps, 4);
    let mut draws: Vec<f64> = (0..20_000)
        .map(|_| {
            let mut most = 0;
            for _ in 0..4 {
                let mut load = [0usize; 4];
                for _ in 0..flows {
                    load[rng.random_range(0..bins)] += 1;
                }
                most = most.max(*load.iter().max().unwrap());
            }
            (flows as f64 / bins as f64 / most as f64).min(1.0)
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let mean = draws.iter().sum::<f64>() / draws.len() as f64;
    (mean, draws[draws.len() / 20], draws[draws.len() * 19 / 20])
}

/// ECMP over 20 seeds (each a draw of the NICs' QP numbers) against balls into bins:
/// its mean within 0.05 of the expectation and inside the expectation's 5-95% band;
/// more QPs hash better; adaptive routing and the planner run within 5% of one switch.
#[test]
fn ecmp_efficiency_is_balls_into_bins_and_adaptive_routing_beats_it() {
    let size = "256MiB";
    let ideal = busbw("single-switch-2x8-allreduce-bidir", size, 1, &[]);
    let efficiency = |lb: &str, seeds: u64| {
        let name = format!("spine-leaf-2x8-allreduce-bidir-{lb}");
        (1..=seeds).map(|s| busbw(&name, size, s, &[]) / ideal).sum::<f64>() / seeds as f64
    };
    let (mut means, mut bands) = (Vec::new(), Vec::new());
    for (lb, qps) in [("ecmp5", 16), ("qp8", 8), ("qp16", 16)] {
        let mean = efficiency(lb, 20);
        let (expected, low, high) = balls_into_bins(qps);
        assert_close(&format!("{lb}: mean efficiency against balls into bins"), mean, expected, 0.05);
        assert!((low..=high).contains(&mean), "{lb}: {mean:.3} outside the band {low:.3}-{high:.3}");
        means.push(mean);
        bands.push((expected, low, high));
    }
    let adaptive = efficiency("adaptive", 3);
    let planner = efficiency("planner", 3);
    assert!(
        adaptive > means[2] && means[2] > means[1],
        "adaptive {adaptive:.3} > qp16 {:.3} > qp8 {:.3}",
        means[2],
        means[1]
    );
    assert!(adaptive >= 0.95 && planner >= 0.95, "adaptive {adaptive:.3}, planner {planner:.3}");
}

/// Spine-leaf under adaptive routing keeps 97% of the single switch's bus bandwidth;
/// with uplinks removed to 1:0.75 and 1:0.5 it keeps that share (+- 0.03).
#[test]
fn adaptive_routing_keeps_the_single_switch_and_oversubscription_costs_its_share() {
    let size = "256MiB";
    let single = busbw("single-switch-2x8-allreduce-bidir", size, 1, &[]);
    let full = busbw("spine-leaf-2x8-allreduce-bidir-oversub-1to1", size, 1, &[]);
    assert!(full >= 0.97 * single, "spine-leaf {full:.1} against one switch {single:.1} GB/s");
    let adaptive = busbw("spine-leaf-2x8-allreduce-bidir-adaptive", size, 1, &[]);
    assert_close("the adaptive scenario is the 1:1 one", adaptive, full, 1e-9);
    for (name, share) in [("1to0.75", 0.75), ("1to0.5", 0.5)] {
        let bw = busbw(&format!("spine-leaf-2x8-allreduce-bidir-oversub-{name}"), size, 1, &[]);
        assert_close(&format!("1:{share} against 1:1"), bw / full, share, 0.03);
    }
}

/// The tail of the flows: adaptive routing's p95 flow completion time is under 0.95 of
/// ECMP's and within [0.98, 1.05] of one switch's.
#[test]
fn adaptive_routing_cuts_the_flow_completion_tail() {
    let p95 = |name: &str| nccl(&nccl_run(name, &[]), "nccl").fct_p95_ns.unwrap();
    let (adaptive, ecmp, single) = (
        p95("spine-leaf-2x8-allreduce-bidir-adaptive"),
        p95("spine-leaf-2x8-allreduce-bidir-ecmp5"),
        p95("single-switch-2x8-allreduce-bidir"),
    );
    assert!(adaptive / ecmp < 0.95, "adaptive {adaptive:.0} ns against ECMP {ecmp:.0} ns");
    let ratio = adaptive / single;
    assert!((0.98..=1.05).contains(&ratio), "adaptive / single switch {ratio:.3}");
}

/// Nanjing: beside the aggressor the planner keeps the victim within 5% of its time
/// alone; ECMP, over three seeds, does not.
#[test]
fn the_planner_keeps_nanjings_victim_whole_and_ecmp_does_not() {
    let ratio = |name: &str, seed: u64| {
        let r = nccl_seeded(name, &[("workload.jobs.0.iterations", "4")], Some(seed));
        job(&r, "victim").perf_ratio.unwrap()
    };
    for seed in [1, 2, 3] {
        let planner = ratio("nanjing-alltoall-planner", seed);
        assert!(planner >= 0.95, "seed {seed}: planner perf_ratio {planner:.3}");
    }
    let ecmp: f64 = [1, 2, 3].iter().map(|&s| ratio("nanjing-alltoall-ecmp", s)).sum::<f64>() / 3.0;
    assert!(ecmp < 0.95, "ECMP's mean perf_ratio {ecmp:.3}");
}

/// Bad NCCL-engine input is refused at its key, with the reason.
#[test]
fn the_engines_keys_are_checked_where_they_are_written() {
    let refused = |overrides: &[(&str, &str)]| {
        let path = std::path::PathBuf::from(format!(
            "{}/../../scenarios/nccl-spine-leaf/single-switch-4x4-allreduce-uni.toml",
            env!("CARGO_MANIFEST_DIR")
        ));
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let text = scenario_file("nccl-spine-leaf/single-switch-4x4-allreduce-uni");
        match snarl_core::load_config_in(&text, path.parent(), &o, None) {
            Err(snarl_core::Error::Config { path, message }) => (path, message),
            other => panic!("expected a config error for {overrides:?}, got {other:?}"),
        }
    };
    let (path, message) = refused(&[("workload.jobs.0.engine", "mpi")]);
    assert_eq!(path, "workload.jobs.0.overhead");
    assert!(message.contains("engine = \"nccl\""), "{message}");
    let (path, message) = refused(&[("workload.jobs.0.depth", "1")]);
    assert_eq!(path, "workload.jobs.0.depth");
    assert!(message.contains("2 to 1024"), "{message}");
    let (path, message) = refused(&[("workload.jobs.0.collective", "allgather")]);
    assert_eq!(path, "workload.jobs.0.collective");
    assert!(message.contains("alltoall_pxn"), "{message}");
    let (path, _) = refused(&[("workload.jobs.0.barrier", "true")]);
    assert_eq!(path, "workload.jobs.0.barrier");
    let (path, _) = refused(&[("workload.jobs.0.channels", "0")]);
    assert_eq!(path, "workload.jobs.0.channels");
    let (path, _) = refused(&[("workload.jobs.0.chunk", "0B")]);
    assert_eq!(path, "workload.jobs.0.chunk");
    let (path, message) = refused(&[
        ("workload.jobs.0.engine", "mpi"),
        ("workload.jobs.0.overhead", "0us"),
        ("workload.jobs.0.collective", "alltoall_pxn"),
    ]);
    assert!(path == "workload.jobs.0.overhead" || path == "workload.jobs.0.collective", "{path}: {message}");
}

/// A run's NCCL figures are the same for the same seed, and ECMP's differ with it.
#[test]
fn nccl_runs_are_deterministic_per_seed() {
    let summary = |seed| {
        let mut r =
            nccl_seeded("spine-leaf-2x8-allreduce-bidir-ecmp5", &[("workload.jobs.0.size", "16MiB")], Some(seed));
        r.summary.wall_seconds = 0.0;
        r.summary_json()
    };
    assert_eq!(summary(1), summary(1));
    assert_ne!(summary(1), summary(2), "the QP numbers ECMP hashes are drawn per seed");
}

/// Queue probes on a leaf's uplinks count the bytes each carried: under the planner the
/// four uplinks of leaf 0 carry equal shares of what node 0 sends node 1 (2(n-1)/n of
/// the vector per collective, 62 bytes of headers on every 4 KiB), under ECMP (on the
/// QP number, 8 QPs) the same total, unevenly.
#[test]
fn probes_count_the_bytes_each_uplink_carried() {
    let probes = "[observe]\nqueues = [{ switch = 0, port = 8 }, { switch = 0, port = 9 }, { switch = 0, port = 10 }, \
                  { switch = 0, port = 11 }]\n";
    let uplinks = |lb: &str| {
        let name = format!("nccl-spine-leaf/spine-leaf-2x8-allreduce-bidir-{lb}");
        let path = std::path::PathBuf::from(format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR")));
        let text = format!("{}\n{probes}", scenario_file(&name));
        let o = [("workload.jobs.0.size".to_string(), "16MiB".to_string())];
        let config = snarl_core::load_config_in(&text, path.parent(), &o, None).unwrap();
        let report = snarl_core::run(&config).unwrap();
        let queues: Vec<snarl_core::observe::QueueSummary> = report.summary.section("queues").unwrap();
        queues.iter().map(|q| q.sent_bytes as f64).collect::<Vec<_>>()
    };
    // Three collectives of 16 MiB over 16 ranks, each packet 4,096 + 62 bytes.
    let expected = 3.0 * 2.0 * 15.0 / 16.0 * 16.0 * 1048576.0 * 4158.0 / 4096.0;
    let planner = uplinks("planner");
    for (i, &b) in planner.iter().enumerate() {
        assert_close(&format!("planner, uplink {i} (share of the total)"), b / expected, 0.25, 0.01);
    }
    let ecmp = uplinks("qp8");
    assert_close("ECMP, all uplinks", ecmp.iter().sum::<f64>() / expected, 1.0, 0.01);
    let spread = ecmp.iter().cloned().fold(0.0, f64::max) / ecmp.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 1.2, "ECMP's uplinks {ecmp:?}");
}
