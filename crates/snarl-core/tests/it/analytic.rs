//! Results checked against closed-form analysis.

use crate::common::*;

#[test]
fn single_switch_uniform_half_load() {
    let r = run(SINGLE_SWITCH, &[]);
    let s = &r.summary;
    assert_close("offered", s.offered_load, 0.5, 0.02);
    assert_close("accepted", s.accepted_load, 0.5, 0.01);
}

/// 7 senders at line rate into one receiver: the receiver link runs full and round-robin
/// arbitration gives each sender 1/7 of it.
#[test]
fn incast_seven_to_one_shares_the_receiver_fairly() {
    let mut text = SINGLE_SWITCH.replace("load = 0.5", "load = 1.0");
    text.push_str("[[traffic.groups]]\nname = \"sink\"\nhosts = [0]\npattern = { type = \"silent\" }\n");
    for s in 1..8 {
        text.push_str(&format!(
            "[[traffic.groups]]\nname = \"s{s}\"\nhosts = [{s}]\npattern = {{ type = \"incast\", destination = 0 }}\n"
        ));
    }
    let r = run(&text, &[]);
    let g = &r.summary.groups;
    assert_close("receiver link", g["sink"].received_load, 1.0, 0.02);
    for s in 1..8 {
        assert_close(&format!("sender {s}"), g[&format!("s{s}")].accepted_load, 1.0 / 7.0, 0.01);
    }
}

/// At 2% load, latency is the zero-load latency: per link its propagation, per switch
/// its traversal latency, and one serialisation (cut-through pipelines the rest).
#[test]
fn low_load_latency_matches_zero_load_formula() {
    let r = run(SINGLE_SWITCH, &[("traffic.load", "0.02"), ("simulation.duration", "2ms")]);
    let serialise = 4096.0 * 8.0 / 100e9 * 1e9; // ns
    let zero_load = 2.0 * 25.0 + 100.0 + serialise;
    let got = r.summary.latency.mean;
    assert!((got / zero_load - 1.0).abs() < 0.05, "latency {got} ns vs zero-load {zero_load} ns");
    assert!(r.summary.network_latency.p50 >= zero_load * 0.999, "nothing beats the zero-load latency");
}

/// Input-queued FIFO switch under saturating uniform traffic: head-of-line blocking caps
/// throughput near Karol's 0.618 for 8 ports (0.586 for large N).
#[test]
fn head_of_line_blocking_caps_single_switch_saturation() {
    let r = run(SINGLE_SWITCH, &[("traffic.load", "1.0")]);
    assert_close("saturation throughput", r.summary.accepted_load, 0.618, 0.03);
}

/// Two hosts wired to each other, both offering more than their link: each link is busy
/// all the time, so exactly one link's worth of bytes arrives in any window, wherever
/// its edges fall within a packet. Packets crossing the measurement start and the end of
/// the run count by the part of their bytes inside (whole, they made the load swing from
/// 0.985 to 1.0003 with the warm-up). Tolerance: 1e-4, the rounding of serialisation
/// times.
#[test]
fn a_link_busy_all_the_time_carries_exactly_its_capacity() {
    let text = "[simulation]\nduration = \"20us\"\n[topology]\ntype = \"back_to_back\"\n[traffic]\nload = 1.0\n";
    for warmup in ["1000ns", "1400ns", "1700ns"] {
        let s = run(text, &[("simulation.warmup", &format!("\"{warmup}\""))]).summary;
        assert!((0.9999..=1.0).contains(&s.accepted_load), "warm-up {warmup}: accepted {}", s.accepted_load);
        assert!((0.9999..=1.0).contains(&s.received_load), "warm-up {warmup}: received {}", s.received_load);
    }
}
