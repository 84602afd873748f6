//! Collectives as jobs (`[workload] type = "jobs"`): their times against the textbook
//! formulas on an uncongested switch, their step dependencies on the per-rank timeline,
//! and NCCL-tests' bandwidths.

use crate::common::*;
use snarl_core::ColumnData;

/// Host links of 100 Gb/s and 100 ns, one switch of 100 ns, 4 KiB packets.
const RATE_BPS: f64 = 100e9;
const LINK_NS: f64 = 100.0;
const SWITCH_NS: f64 = 100.0;
const MTU: f64 = 4096.0;

/// One switch of `n` hosts running `jobs` (TOML of `[[workload.jobs]]` tables).
fn on_one_switch(n: usize, jobs: &str) -> String {
    format!(
        r#"
[simulation]
duration = "100ms"

[topology]
type = "single_switch"
hosts = {n}

[links]
host = {{ rate = "100Gbps", latency = "100ns" }}

[switch]
latency = "100ns"

[nic]
mtu = "4KiB"

[workload]
type = "jobs"
{jobs}
"#
    )
}

/// One step of a ring passes a block of `block` bytes to the next rank: its packets
/// leave back to back at the line rate, and the last one then crosses the switch (two
/// links, the switch, and its serialisation on the second link).
fn ring_step_ns(block: f64) -> f64 {
    block * 8.0 / RATE_BPS * 1e9 + 2.0 * LINK_NS + SWITCH_NS + MTU.min(block) * 8.0 / RATE_BPS * 1e9
}

/// Ring AllGather and AllReduce on 8 ranks of one uncongested switch, 8 MiB: the mean
/// iteration takes (n-1) and 2(n-1) ring steps of S/n bytes, within 3% (the per-step
/// terms are estimated: the step's latency and the last packet's second hop); busbw is
/// at least 0.95 of the link, and busbw / algbw is NCCL-tests' factor exactly.
#[test]
fn ring_collectives_take_the_textbook_time_on_one_switch() {
    let (n, size) = (8usize, 8u64 << 20);
    for (collective, steps, factor) in [("allgather", n - 1, 7.0 / 8.0), ("allreduce", 2 * (n - 1), 2.0 * 7.0 / 8.0)] {
        let text = on_one_switch(
            n,
            &format!(
                "[[workload.jobs]]\nname = \"ring\"\ncollective = \"{collective}\"\nsize = \"8MiB\"\nnodes = \"all\"\niterations = 4\nwarmup = 1\n"
            ),
        );
        let r = run(&text, &[]);
        let j = job(&r, "ring");
        assert_eq!(j.iterations, 3, "{collective}");
        let want = steps as f64 * ring_step_ns(size as f64 / n as f64);
        let got = j.time.expect("a mean time");
        eprintln!("{collective}: {got:.0} ns (formula {want:.0}), busbw {:.3} GB/s", j.busbw.unwrap());
        assert_close(&format!("{collective} time (ns)"), got, want, 0.03 * want);
        let (algbw, busbw) = (j.algbw.unwrap(), j.busbw.unwrap());
        assert_close(&format!("{collective}: busbw / algbw"), busbw / algbw, factor, 1e-12);
        assert!(busbw / (RATE_BPS / 8e9) >= 0.95, "{collective}: busbw {busbw} GB/s of 12.5");
        // Every measured iteration is in the table, with the summary's mean.
        let table = r.table("iterations").expect("an iterations table");
        let Some(ColumnData::F64(times)) = table.column("time") else { panic!("iterations.time") };
        assert_eq!(times.len(), 4);
        assert_close("table mean", times[1..].iter().sum::<f64>() / 3.0, got, 1e-6 * got);
    }
}

/// The per-rank timeline of a ring AllGather: a rank posts step k+1 only after its
/// step k completed, and completes step k only after its predecessor posted the block
/// it receives then (plus at least the block's time on the link); the collective begins
/// after the barrier, which is not timed.
#[test]
fn ring_steps_wait_for_their_block_and_their_send() {
    let n = 6usize;
    let text = on_one_switch(
        n,
        "[[workload.jobs]]\nname = \"ring\"\ncollective = \"allgather\"\nsize = \"600KiB\"\nnodes = \"all\"\niterations = 3\nwarmup = 1\n",
    );
    let r = run(&text, &[]);
    let table = r.table("steps").expect("a steps table");
    let (
        Some(ColumnData::U64(rank)),
        Some(ColumnData::U64(step)),
        Some(ColumnData::F64(start)),
        Some(ColumnData::F64(end)),
        Some(ColumnData::U64(iteration)),
    ) = (
        table.column("rank"),
        table.column("step"),
        table.column("start"),
        table.column("end"),
        table.column("iteration"),
    )
    else {
        panic!("steps columns")
    };
    assert!(iteration.iter().all(|&i| i == 1), "the first measured iteration only");
    // Barrier steps (3 for 6 ranks), then the ring's 5.
    let barrier = 3;
    assert_eq!(rank.len(), n * (barrier + n - 1));
    let at = |r: u64, k: u64| (0..rank.len()).find(|&i| rank[i] == r && step[i] == k).expect("a step row");
    let block_ns = 600.0 * 1024.0 / n as f64 * 8.0 / RATE_BPS * 1e9;
    for r in 0..n as u64 {
        for k in 0..(barrier + n - 1) as u64 {
            let i = at(r, k);
            assert!(end[i] >= start[i], "rank {r} step {k}");
            if k + 1 < (barrier + n - 1) as u64 {
                assert!(start[at(r, k + 1)] >= end[i], "rank {r} posts step {} before step {k} completed", k + 1);
            }
            if k >= barrier as u64 {
                let from = (r + n as u64 - 1) % n as u64;
                assert!(
                    end[i] >= start[at(from, k)] + block_ns,
                    "rank {r} completes step {k} before its predecessor's block could arrive"
                );
            }
        }
    }
}

/// A linear AlltoAll of 8 ranks, and the same with the shifted order: each moves n-1
/// messages of `size` per rank; shifted, no rank is incast at the start, so it is no
/// slower. busbw / algbw = (n-1)/n.
#[test]
fn alltoall_orders_and_bandwidth() {
    let time = |order: &str| {
        let text = on_one_switch(
            8,
            &format!("[[workload.jobs]]\nname = \"a2a\"\ncollective = \"alltoall\"\nsize = \"256KiB\"\nnodes = \"all\"\norder = \"{order}\"\niterations = 4\nwarmup = 1\n"),
        );
        job(&run(&text, &[]), "a2a")
    };
    let (linear, shifted) = (time("linear"), time("shifted"));
    eprintln!("alltoall: linear {:?} ns, shifted {:?} ns", linear.time, shifted.time);
    assert_close("busbw / algbw", linear.busbw.unwrap() / linear.algbw.unwrap(), 7.0 / 8.0, 1e-12);
    // Seven messages of 256 KiB leave each rank's link: at least 7 x 21 us.
    let floor = 7.0 * 256.0 * 1024.0 * 8.0 / RATE_BPS * 1e9;
    assert!(linear.time.unwrap() >= floor && shifted.time.unwrap() >= floor);
    assert!(shifted.time.unwrap() <= linear.time.unwrap() * 1.001, "shifted {shifted:?} vs linear {linear:?}");
}

/// A victim beside an aggressor that has not started (it would at 1 s) runs as alone on
/// the same nodes: the same times, and perf_ratio exactly 1 against the baseline the run
/// computes (the victims alone); beside an aggressor that only runs barriers (a few
/// bytes now and then) 1.00 +- 0.02; beside an AlltoAll aggressor, on two leaves whose
/// one uplink each they share, far below (measured 0.30), and slowdown is its inverse.
/// The run ends when the victim is done, long before its duration.
#[test]
fn an_idle_aggressor_leaves_the_victim_its_baseline() {
    let victim = |nodes: &str| {
        format!("[[workload.jobs]]\nname = \"victim\"\ncollective = \"allgather\"\nsize = \"1MiB\"\nnodes = {nodes}\niterations = 6\nwarmup = 2\n")
    };
    let aggressor = |collective: &str, start: &str| {
        format!("[[workload.jobs]]\nname = \"aggressor\"\ncollective = \"{collective}\"\nsize = \"1MiB\"\nnodes = \"interleaved\"\nrole = \"aggressor\"\nstart = \"{start}\"\n")
    };
    let two_leaves = |jobs: &str| {
        on_one_switch(8, jobs).replace(
            "type = \"single_switch\"\nhosts = 8",
            "type = \"spine_leaf\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\noversubscription = \"1:0.25\"",
        )
    };
    let beside = |a: String| job(&run(&two_leaves(&(victim("\"interleaved\"") + &a)), &[]), "victim");
    // Interleaved, the victim has nodes 0, 2, 4 and 6.
    let alone = run(&two_leaves(&victim("[0, 2, 4, 6]")), &[]);
    let alone = job(&alone, "victim");
    assert_eq!(alone.perf_ratio, None, "no aggressor, no baseline");
    let idle = run(&two_leaves(&(victim("\"interleaved\"") + &aggressor("alltoall", "1s"))), &[]);
    assert!(idle.summary.sim_time < 1e6, "the run ends with the victim: {} ns", idle.summary.sim_time);
    let idle = job(&idle, "victim");
    assert_eq!((idle.time, idle.baseline_time, idle.perf_ratio), (alone.time, alone.time, Some(1.0)));
    let barriers = beside(aggressor("barrier", "0s"));
    assert_close("perf_ratio beside barriers", barriers.perf_ratio.unwrap(), 1.0, 0.02);
    let busy = beside(aggressor("alltoall", "0s"));
    let ratio = busy.perf_ratio.unwrap();
    eprintln!("victim alone {:?} ns, beside an AlltoAll {:?} ns: perf_ratio {ratio:.3}", alone.time, busy.time);
    assert!(ratio < 0.8, "the aggressor slows the victim: perf_ratio {ratio}");
    assert_close("slowdown", busy.slowdown.unwrap(), 1.0 / ratio, 1e-12);
    assert_eq!(busy.baseline_time, alone.time, "the baseline is the victim alone on the same nodes");
}

/// An aggressor in bursts of `length` with `pause` between them, beside an AllGather
/// victim, 8 of the 16 hosts of four leaves (1:0.5) drawn at random per seed: each
/// burst holds at least one whole AlltoAll. At each burst length, the victim's perf
/// ratio does not fall as the pause grows (medians over 5 placements; a tolerance of
/// 0.02 for the noise of single runs).
#[test]
fn longer_pauses_between_bursts_harm_the_victim_less() {
    let text = |length: &str, pause: &str| {
        on_one_switch(
            16,
            &format!(
                "allocation = {{ nodes = 8, policy = \"random\" }}\n\
                 [[workload.jobs]]\nname = \"victim\"\ncollective = \"allgather\"\nsize = \"256KiB\"\nnodes = \"interleaved\"\niterations = 12\nwarmup = 2\n\
                 [[workload.jobs]]\nname = \"aggressor\"\ncollective = \"alltoall\"\nsize = \"64KiB\"\nnodes = \"interleaved\"\nrole = \"aggressor\"\n\
                 burst = {{ length = \"{length}\", pause = \"{pause}\" }}\n"
            ),
        )
        .replace(
            "type = \"single_switch\"\nhosts = 16",
            "type = \"spine_leaf\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\noversubscription = \"1:0.5\"",
        )
    };
    let median = |length: &str, pause: &str| {
        let mut ratios: Vec<f64> = (1..=5)
            .map(|seed| {
                let r = run(&text(length, pause), &[("seed", &seed.to_string())]);
                job(&r, "victim").perf_ratio.expect("a perf ratio")
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios[2]
    };
    for length in ["10us", "100us"] {
        let ratios: Vec<f64> = ["1us", "20us", "200us"].iter().map(|pause| median(length, pause)).collect();
        eprintln!("burst {length}: perf_ratio {ratios:?} for pauses 1, 20, 200 us");
        assert!(ratios.windows(2).all(|w| w[1] >= w[0] - 0.02), "burst {length}: {ratios:?}");
        assert!(ratios[0] < 0.95, "the bursts harm the victim: {ratios:?}");
    }
}

/// Bad job definitions are refused at their key path, naming what is wrong.
#[test]
fn bad_jobs_are_refused_at_their_key() {
    let job = |name: &str, nodes: &str, extra: &str| {
        format!("[[workload.jobs]]\nname = \"{name}\"\ncollective = \"allgather\"\nsize = \"1MiB\"\nnodes = {nodes}\n{extra}")
    };
    let error = |jobs: String| {
        let e = snarl_core::load_config(&on_one_switch(8, &jobs), &[], None).expect_err("refused");
        match e {
            snarl_core::Error::Config { path, message } => (path, message),
            other => panic!("not a config error: {other}"),
        }
    };
    let (path, message) = error(job("a", "[0, 1, 2]", "") + &job("b", "[2, 3]", ""));
    assert_eq!(path, "workload.jobs.1.nodes");
    assert!(message.contains("node 2 is given to another job"), "{message}");
    let (path, message) = error(format!("allocation = {{ nodes = 9 }}\n{}", job("a", "\"all\"", "")));
    assert_eq!(path, "workload.allocation.nodes");
    assert!(message.contains("the fabric has 8 hosts"), "{message}");
    let (path, message) = error(job("a", "\"all\"", "").replace("allgather", "allgahter"));
    assert_eq!(path, "workload.jobs.0.collective");
    assert!(message.contains("allgather"), "{message}");
    let (path, _) = error(job("a", "[0]", ""));
    assert_eq!(path, "workload.jobs.0.nodes", "one rank cannot run a collective");
    let (path, _) = error(job("a", "\"all\"", "warmup = 20\niterations = 20\n"));
    assert_eq!(path, "workload.jobs.0.warmup");
    let (path, _) = error(job("a", "\"all\"", "burst = { length = \"1ms\", pause = \"1ms\" }\n"));
    assert_eq!(path, "workload.jobs.0.burst");
    let (path, _) = error(
        job("a", "\"all\"", "").replace("allgather", "allreduce_halving_doubling").replace("\"all\"", "[0, 1, 2]"),
    );
    assert_eq!(path, "workload.jobs.0.nodes", "halving-doubling on 3 ranks");
    let (path, _) = error(job("a", "[0, 1]", "") + &job("a", "[2, 3]", ""));
    assert_eq!(path, "workload.jobs.1.name");
    let (path, message) = error(job("a", "\"everywhere\"", ""));
    assert_eq!(path, "workload.jobs.0.nodes");
    assert!(message.contains("interleaved"), "{message}");
}
