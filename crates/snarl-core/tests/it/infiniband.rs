//! The InfiniBand congestion-control study (Gran et al., "Exploring the scope of the
//! InfiniBand congestion control mechanism", IPDPS 2012) on the scenarios of
//! `scenarios/infiniband-cc/`: the 648-host fat-tree of 36-port switches with virtual
//! output queues, 20 Gb/s links, hosts that send 13.5 and receive 13.6 Gb/s, Table I.
//! Each test gives the paper's value, snarl's, and its tolerance; `docs/validation.md`
//! explains where they differ.

use crate::common::*;
use snarl_core::Report;

fn ib(scenario: &str, overrides: &[(&str, &str)]) -> Report {
    run(&scenario_file(&format!("infiniband-cc/{scenario}")), overrides)
}

/// A figure of the summary by its dotted key (`receive_rate.non_hotspots`).
fn figure(r: &Report, key: &str) -> f64 {
    let summary = serde_json::to_value(&r.summary).unwrap();
    let value = key.split('.').fold(&summary, |v, k| &v[k]);
    value.as_f64().unwrap_or_else(|| panic!("no figure `{key}` in the summary"))
}

/// The runs of `scenario` with CC off and on, side by side (two threads).
fn off_and_on(scenario: &str, overrides: &[(&str, &str)]) -> (Report, Report) {
    std::thread::scope(|s| {
        let off = s.spawn(|| ib(&format!("{scenario}-cc-off"), overrides));
        let on = ib(&format!("{scenario}-cc-on"), overrides);
        (off.join().unwrap(), on)
    })
}

/// Table II, first part: only the V nodes send. Analysis: 130 x 13.5 / 648 = 2.708 Gb/s
/// per host (paper 2.699 without CC, 2.701 with); snarl 2.708 both. Tolerance 2%, and
/// CC changes it by less than 2%.
#[test]
fn without_hotspots_every_host_receives_what_the_victims_offer() {
    let (off, on) = off_and_on("no-hotspots", &[]);
    let want = 130.0 * 13.5 / 648.0;
    let (all_off, all_on) = (figure(&off, "receive_rate.all"), figure(&on, "receive_rate.all"));
    assert_close("receive rate, CC off", all_off, want, 0.02 * want);
    assert!((all_on - all_off).abs() < 0.02 * all_off, "CC changes {all_off} to {all_on}");
    assert_close("tmax", figure(&off, "tmax"), want, 1e-9);
}

/// Table II: the silent forest. Paper, CC off -> on: non-hotspots 0.168 -> 2.246 Gb/s
/// (13x), hotspots 13.602 -> 13.279, total 216 -> 1544 Gb/s (7.1x). snarl (30-50 ms,
/// seed 1): 0.212 -> 2.452 (11.6x), 13.600 -> 13.549, 244 -> 1678 (6.9x). Asserted: the
/// non-hotspots gain at least 5x, the hotspots lose less than 5% and receive within 3%
/// of the receive cap, the total rises at least 4x.
#[test]
fn the_silent_forest_frees_its_victims_with_ib_cc() {
    let (off, on) = off_and_on("silent-forest", &[]);
    let non = (figure(&off, "receive_rate.non_hotspots"), figure(&on, "receive_rate.non_hotspots"));
    let hot = (figure(&off, "receive_rate.hotspots"), figure(&on, "receive_rate.hotspots"));
    let total = (figure(&off, "total_throughput"), figure(&on, "total_throughput"));
    assert!(non.1 >= 5.0 * non.0, "non-hotspots {non:?}");
    assert!(hot.1 >= 0.95 * hot.0, "hotspots {hot:?}");
    for (what, rate) in [("CC off", hot.0), ("CC on", hot.1)] {
        assert_close(&format!("hotspots, {what}"), rate, 13.6, 0.03 * 13.6);
    }
    assert!(total.1 >= 4.0 * total.0, "total {total:?}");
    readme_says(&format!(
        "IB CC lifts the victims from {:.2} to {:.2} Gb/s (paper: 0.17 to 2.25) and the total from {:.0} to {:.0} Gb/s",
        non.0, non.1, total.0, total.1
    ));
    assert!(figure(&on, "ibcc.fecn_marks") > 0.0 && figure(&on, "ibcc.becns") > 0.0);
    assert!(figure(&on, "ibcc.ccti_max") <= 127.0);
}

/// Figure 8: the windy forest of 100% B nodes. The gain of CC in total throughput is
/// highest at an intermediate p (the paper's peak, 17x, is at p = 60%) and CC costs at
/// most 5% where there is nothing to gain: p = 0 (uniform traffic; paper -3% on the
/// non-hotspots) and p = 100% (all traffic to the hotspots). snarl (seed 1): 1.0, 5.5,
/// 5.7, 5.7, 3.5 and 1.0 at p = 0, 10, 30, 60, 90 and 100%; with Table I's timer a
/// contributor cannot be held below about one packet per timer period, so below p = 93%
/// the 81 contributors of each hotspot are not throttled enough and the gain stays below
/// the paper's (`docs/validation.md`).
#[test]
fn the_windy_forest_gains_most_at_intermediate_p() {
    let share = "traffic.groups.0.pattern.parts.0.share";
    let gain = |p: &str| {
        // Nothing to settle without hotspot traffic: a short run is its steady state.
        let short: &[(&str, &str)] =
            if p == "0.0" { &[("simulation.duration", "\"6ms\""), ("simulation.warmup", "\"2ms\"")] } else { &[] };
        let overrides: Vec<(&str, &str)> = [(share, p)].into_iter().chain(short.iter().copied()).collect();
        let (off, on) = off_and_on("windy-forest-100", &overrides);
        figure(&on, "total_throughput") / figure(&off, "total_throughput")
    };
    let shares = ["0.0", "0.1", "0.3", "0.6", "0.9", "1.0"];
    let gains: Vec<f64> = shares.iter().map(|p| gain(p)).collect();
    let inside = &gains[1..5];
    let peak = inside.iter().copied().fold(f64::MIN, f64::max);
    let at = shares[1 + inside.iter().position(|&g| g == peak).unwrap()];
    assert!(["0.3", "0.6", "0.9"].contains(&at), "the gain peaks at p = {at}: {gains:?}");
    assert!(peak >= 4.0, "CC gains only {peak}x: {gains:?}");
    assert!(gains[0] >= 0.95 && gains[5] >= 0.95, "CC costs more than 5% at p = 0 or 100%: {gains:?}");
}

/// Figure 9(a): moving silent trees, 20% V and 80% C nodes. Paper: all hosts receive
/// 467 -> 723 Mb/s (+55%) with hotspots that live 10 ms, +4% at 1 ms. snarl (10-60 ms,
/// seed 1): 618 -> 836 (+35%) at 10 ms, 1308 -> 1310 (+0.2%) at 1 ms. Asserted: CC
/// gains at least 20% at 10 ms, less at 1 ms, and costs at most 3% there.
#[test]
fn the_gain_of_ib_cc_shrinks_as_hotspots_move_faster() {
    let gain = |lifetime: &str| {
        let (off, on) = off_and_on("moving-20v80c", &[("traffic.hotspots.lifetime", lifetime)]);
        figure(&on, "receive_rate.all") / figure(&off, "receive_rate.all")
    };
    let (slow, fast) = (gain("\"10ms\""), gain("\"1ms\""));
    assert!(slow >= 1.2, "CC gains {slow} with 10 ms hotspots");
    assert!(fast < slow, "CC gains {fast} with 1 ms hotspots, {slow} with 10 ms ones");
    assert!(fast >= 0.97, "CC costs {fast} with 1 ms hotspots");
}

/// Frame I: a B node's two streams are independent. One switch with the paper's
/// hosts and VoQs: 19 C nodes and a B node (p = 0.3) send to one hotspot, the B node's
/// uniform stream to three sinks of its own. IB CC throttles the hotspot stream to a
/// share of the hotspot's 13.6 Gb/s (about a twentieth); the uniform stream still sends
/// its 0.7 of the cap, within 0.02. Without CC the hotspot stream's packets fill the
/// B node's input buffer and the uniform stream gets a packet in only as one of them
/// leaves: well below. snarl (seed 1): 0.700 with IB CC (the hotspot stream sends
/// 0.39 Gb/s of the 4.05 it offers), 0.050 without.
#[test]
fn a_b_node_keeps_its_uniform_share_while_ib_cc_throttles_its_hotspot_stream() {
    let text = r#"
        [simulation]
        duration = "12ms"
        warmup = "4ms"
        [topology]
        type = "single_switch"
        hosts = 24
        [links]
        host = { rate = "20Gbps", latency = "5ns" }
        [switch]
        type = "ioq"
        input_buffer = "64KiB"
        output_buffer = "4KiB"
        input_queuing = "voq"
        [nic]
        mtu = "2KiB"
        scheduling = "round_robin"
        receive_cap = "13.6Gbps"
        [traffic]
        load = 0.675
        process = "periodic"
        message_size = "4KiB"
        [traffic.hotspots]
        count = 1
        among = "hot"
        [[traffic.groups]]
        name = "hot"
        hosts = [0]
        pattern = { type = "silent" }
        [[traffic.groups]]
        name = "sinks"
        hosts = [1, 2, 3]
        pattern = { type = "silent" }
        [[traffic.groups]]
        name = "b"
        hosts = [4]
        cap = 0.675
        pattern = { type = "mix", parts = [{ share = 0.3, pattern = { type = "hotspots" } }, { pattern = { type = "uniform", among = "sinks" } }] }
        [[traffic.groups]]
        name = "c"
        rest = true
        cap = 0.675
        pattern = { type = "hotspots" }
    "#;
    let uniform_share = |r: &Report| {
        let sinks = &r.summary.groups["sinks"];
        // Bytes the sinks received, as a fraction of the B node's cap (13.5 Gb/s).
        sinks.received_gbps * sinks.hosts as f64 / 13.5
    };
    let on = run(text, &[("congestion_control.type", "\"ibcc\"")]);
    let off = run(text, &[]);
    assert_close("uniform stream with IB CC, of the cap", uniform_share(&on), 0.7, 0.02);
    let b = &on.summary.groups["b"];
    assert!(b.accepted_gbps < 0.7 * 13.5 + 0.1 * 0.3 * 13.5, "the hotspot stream is not throttled: {b:?}");
    assert!(uniform_share(&off) < 0.35, "without CC the uniform stream gets {}", uniform_share(&off));
}
