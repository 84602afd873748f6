//! The traffic of Gran et al. (InfiniBand congestion control under dynamic traffic):
//! shared hotspots that may move, mixed sources whose streams are independent (B nodes),
//! and the summary's receive rates of hotspots and non-hotspots, total throughput and
//! tmax.

use crate::common::*;
use snarl_core::observe::ReceiveRate;
use snarl_core::{ColumnData, Report};

/// A B node (host 0) sends 30% of what it may inject (cap 0.675, load 0.675) to the
/// shared hotspot (host 16) and the rest uniformly to the 8 hosts of group `u`, which
/// nobody else sends to. Fifteen C nodes (hosts 1 to 15) send to the hotspot at line
/// rate. DCQCN throttles every flow into the hotspot to about 1/16 of its link, a third
/// of what the B node's hotspot stream offers, and the NIC's round robin skips a flow
/// its rate does not allow to send. The switch's output buffer (1 MiB) stays far above
/// the queue DCQCN keeps, so the hotspot's traffic never blocks the B node's input
/// queue (no head-of-line blocking in the switch): what is left to test is the NIC.
const B_NODE: &str = r#"
[simulation]
duration = "3ms"
warmup = "1ms"

[topology]
type = "single_switch"
hosts = 25

[links]
host = { rate = "100Gbps", latency = "1us" }

[switch]
output_buffer = "1MiB"
speedup = 2.0

[nic]
mtu = "4KiB"
scheduling = "round_robin"

[congestion_control]
type = "dcqcn"
rate_ai = "2Gbps"
rate_hai = "10Gbps"
byte_counter = "1MB"

[traffic]
load = 1.0
message_size = "4KiB"
process = "periodic"

[traffic.hotspots]
count = 1
among = "hs"

[[traffic.groups]]
name = "b"
hosts = [0]
load = 0.675
cap = 0.675
pattern = { type = "mix", parts = [{ share = 0.3, pattern = { type = "hotspots" } }, { pattern = { type = "uniform", among = "u" } }] }

[[traffic.groups]]
name = "c"
hosts = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
pattern = { type = "hotspots" }

[[traffic.groups]]
name = "hs"
hosts = [16]
pattern = { type = "silent" }

[[traffic.groups]]
name = "u"
rest = true
pattern = { type = "silent" }
"#;

/// Gb/s a group received in total (its per-host rate times its hosts).
fn received(report: &Report, group: &str) -> f64 {
    let g = &report.summary.groups[group];
    g.received_gbps * g.hosts as f64
}

/// Gb/s a group's hosts had delivered, in total.
fn accepted(report: &Report, group: &str) -> f64 {
    let g = &report.summary.groups[group];
    g.accepted_gbps * g.hosts as f64
}

/// (a) Frame I: a B node's streams are independent. Its hotspot stream is held back to
/// a fraction of its share (measured: 5.2 of 20.25 Gb/s), yet its uniform stream sends
/// its full 70% of the node's injection rate, and no more: it neither waits behind the
/// hotspot stream in the NIC nor loses its room in the source queue to the hotspot
/// stream's backlog (each stream has its own `nic.source_queue` messages; with one
/// bound shared by both, the uniform stream got 0.08 of the injection rate).
///
/// The paper's setting throttles with InfiniBand congestion control behind switches
/// with virtual output queues; with those, the same check belongs on its 648-host
/// fat-tree, where the hotspot's congestion tree, not only a NIC's rate, holds the
/// hotspot stream back.
#[test]
fn a_b_node_keeps_sending_its_uniform_share_while_its_hotspot_stream_is_held_back() {
    let r = run(B_NODE, &[]);
    let injection = 0.675 * 100.0;
    let uniform = received(&r, "u");
    let to_hotspot = received(&r, "hs") - accepted(&r, "c");
    assert_close("uniform stream / injection rate", uniform / injection, 0.7, 0.02);
    assert!(
        to_hotspot < 0.5 * 0.3 * injection,
        "the hotspot stream was not held back: {to_hotspot:.2} Gb/s of its {:.2}",
        0.3 * injection
    );
    assert!(r.summary.counters["rate_cuts"] > 0);
}

/// Ten hosts on one switch: 4 targets (`t`, hosts 0 to 3) of which 2 are the shared
/// hotspots, moving every 100 us; 4 C nodes (`c`, hosts 4 to 7) send 15 Gb/s each to the
/// hotspots (two to each), 2 V nodes (`v`, hosts 8 and 9) 30 Gb/s each uniformly to
/// the targets (15 Gb/s to each target). Periodic sources, so rates are exact.
const MOVING: &str = r#"
[simulation]
duration = "5050us"
warmup = "150us"

[topology]
type = "single_switch"
hosts = 10

[links]
host = { rate = "100Gbps", latency = "25ns" }

[traffic]
load = 0.15
process = "periodic"

[traffic.hotspots]
count = 2
among = "t"
lifetime = "100us"

[[traffic.groups]]
name = "t"
count = 4
pattern = { type = "silent" }

[[traffic.groups]]
name = "c"
count = 4
pattern = { type = "hotspots" }

[[traffic.groups]]
name = "v"
rest = true
load = 0.3
pattern = { type = "uniform", among = "t" }
"#;

/// The `hotspots` table: (host, start, end) rows, times in ns.
fn intervals(report: &Report) -> Vec<(u64, f64, f64)> {
    let table = report.table("hotspots").expect("a run with [traffic.hotspots] has the table");
    let (Some(ColumnData::U64(host)), Some(ColumnData::F64(start)), Some(ColumnData::F64(end))) =
        (table.column("host"), table.column("start"), table.column("end"))
    else {
        panic!("hotspots table columns: {table:?}")
    };
    host.iter().zip(start).zip(end).map(|((&h, &s), &e)| (h, s, e)).collect()
}

/// (b) Moving hotspots move every lifetime, and receive rates count a host as a hotspot
/// while it is one. By hand: a hotspot receives 2 x 15 Gb/s from the C nodes and
/// 15 Gb/s from the V nodes, 45 Gb/s; the two other targets 15 Gb/s each and the six
/// senders nothing, so non-hotspots get 30 Gb/s over 8 hosts, 3.75 Gb/s; all hosts
/// 120 Gb/s over 10, 12 Gb/s. The measurement starts mid-lifetime (150 us). Counting
/// every host that was ever a hotspot as one would give 120 / 4 = 30 Gb/s instead.
/// (The V nodes draw their destinations at random: over the 4.9 ms measured, a
/// hotspot's share of theirs varies by about 0.15 Gb/s, one standard deviation.)
#[test]
fn moving_hotspots_change_every_lifetime_and_rates_follow_host_time() {
    let r = run(MOVING, &[]);
    let rows = intervals(&r);
    // 51 lifetimes (the last cut by the end of the run) of 2 hotspots.
    assert_eq!(rows.len(), 102, "{rows:?}");
    for (k, pair) in rows.chunks(2).enumerate() {
        let start = k as f64 * 100_000.0;
        let end = (start + 100_000.0).min(5_050_000.0);
        for &(host, s, e) in pair {
            assert!(host < 4, "hotspot {host} is not a target");
            assert_eq!((s, e), (start, end), "lifetime {k}: {pair:?}");
        }
        assert_ne!(pair[0].0, pair[1].0);
        if k > 0 {
            let before = [rows[2 * k - 2].0, rows[2 * k - 1].0];
            assert!(!before.contains(&pair[0].0) && !before.contains(&pair[1].0), "lifetime {k} kept a hotspot");
        }
    }
    let rate: ReceiveRate = r.summary.section("receive_rate").expect("receive_rate");
    assert_close("hotspots (Gb/s)", rate.hotspots, 45.0, 0.45);
    assert_close("non-hotspots (Gb/s)", rate.non_hotspots, 3.75, 0.04);
    assert_close("all (Gb/s)", rate.all, 12.0, 0.12);
    // Host-time weighs the two kinds: 2 hosts are hotspots and 8 are not at any time.
    assert_close("host-time weights", 2.0 * rate.hotspots + 8.0 * rate.non_hotspots, 10.0 * rate.all, 1e-9);
    // The groups' received bytes agree: the targets got all of it.
    assert_close("targets' received (Gb/s)", received(&r, "t"), 120.0, 1.2);
    // (d) The total throughput is the sum of the hosts' receive rates.
    assert_close("total_throughput", r.summary.section::<f64>("total_throughput").unwrap(), rate.all * 10.0, 1e-9);
    // Only the V nodes offer traffic to other destinations than the hotspots: 60 Gb/s.
    assert_close("tmax", r.summary.section::<f64>("tmax").unwrap(), 6.0, 1e-9);
    // The moves draw from the traffic stream: a seed gives one answer. (Among the 4
    // targets, 2 hotspots can only alternate with the other 2; among all hosts they
    // wander.)
    let again = run(MOVING, &[]);
    assert_eq!(intervals(&again), rows);
    assert_eq!(again.summary.sections.get("receive_rate"), r.summary.sections.get("receive_rate"));
    let wander = |seed: &str| intervals(&run(MOVING, &[("traffic.hotspots.among", "all"), ("seed", seed)]));
    assert_eq!(wander("1"), wander("1"));
    assert_ne!(wander("1"), wander("2"), "the hotspots ignore the seed");
}

/// Hotspots that never move hold for the whole run; a sender that is a hotspot itself
/// sends nothing to itself.
#[test]
fn hotspots_without_lifetime_stay_and_senders_skip_themselves() {
    let r = run(MOVING, &[("traffic.hotspots", "{ count = 2, among = \"all\" }")]);
    let rows = intervals(&r);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|&(_, s, e)| s == 0.0 && e == 5_050_000.0), "{rows:?}");
    assert!(r.summary.section::<ReceiveRate>("receive_rate").unwrap().hotspots > 0.0);
}

/// The paper's fat-tree: 648 hosts (36-port switches, two levels), 20 Gb/s links, every
/// node injecting at most 13.5 Gb/s (cap 0.675) and trying to inject more (load 1), 8
/// hotspots. 25% B nodes; of the rest, 80% C nodes and 20% V nodes, placed at random.
const FOREST: &str = r#"
[simulation]
duration = "10us"

[topology]
type = "fat_tree"
radix = 36
levels = 2

[links]
host = { rate = "20Gbps", latency = "20ns" }
switch = { rate = "20Gbps", latency = "20ns" }

[nic]
mtu = "2KiB"
scheduling = "round_robin"

[traffic]
load = 1.0
message_size = "4KiB"

[traffic.hotspots]
count = 8

[[traffic.groups]]
name = "b"
count = 162
placement = "random"
cap = 0.675
pattern = { type = "mix", parts = [{ share = 0.5, pattern = { type = "hotspots" } }, { pattern = { type = "uniform" } }] }

[[traffic.groups]]
name = "c"
count = 389
placement = "random"
cap = 0.675
pattern = { type = "hotspots" }

[[traffic.groups]]
name = "v"
rest = true
placement = "random"
cap = 0.675
pattern = { type = "uniform" }
"#;

/// (c) tmax is what the paper plots: (N_V + N_B (1 - p)) x 13.5 Gb/s / N, from the
/// config alone; p is set the way a sweep sets it, `--set` on the first part's share
/// (at p = 0 the paper gives 5.4 Gb/s for 25% B nodes).
#[test]
fn tmax_is_the_papers_for_a_v_c_b_mix_and_sweeps_set_the_share() {
    for p in [0.0, 0.1, 0.6, 1.0] {
        let share = p.to_string();
        let r = run(FOREST, &[("traffic.groups.0.pattern.parts.0.share", &share)]);
        assert_eq!(r.summary.groups["v"].hosts, 97);
        let want = (97.0 + 162.0 * (1.0 - p)) * 13.5 / 648.0;
        assert_close(&format!("tmax at p = {p}"), r.summary.section::<f64>("tmax").unwrap(), want, 1e-9);
    }
    let config =
        snarl_core::load_config(FOREST, &[("traffic.groups.0.pattern.parts.0.share".into(), "0.3".into())], None)
            .unwrap();
    let snarl_core::config::PatternConfig::Mix { parts } = &config.traffic.groups[0].pattern else { panic!() };
    assert_eq!((parts[0].share, parts[1].share), (Some(0.3), None));
}

/// (d) With shared hotspots that nothing sends to, hotspots receive what any host does:
/// uniform traffic at half load on a 128-host fat-tree, 8 hotspots moving every 50 us.
/// All hosts receive about what they offer, which is also tmax.
#[test]
fn hotspots_without_hotspot_traffic_receive_like_everyone() {
    let text = r#"
[simulation]
duration = "1ms"
warmup = "100us"

[topology]
type = "fat_tree"
radix = 16
levels = 2

[traffic]
load = 0.5
message_size = "4KiB"

[traffic.hotspots]
count = 8
lifetime = "50us"
"#;
    let r = run(text, &[]);
    let rate: ReceiveRate = r.summary.section("receive_rate").unwrap();
    assert_close("hotspots / non-hotspots", rate.hotspots / rate.non_hotspots, 1.0, 0.03);
    assert_close("all / tmax", rate.all / r.summary.section::<f64>("tmax").unwrap(), 1.0, 0.02);
    assert_close("tmax (Gb/s)", r.summary.section::<f64>("tmax").unwrap(), 50.0, 1e-9);
    assert_close("total_throughput", r.summary.section::<f64>("total_throughput").unwrap(), rate.all * 128.0, 1e-6);
    // The receive rates agree with the groups' received loads.
    assert_close("all vs the group", rate.all, r.summary.groups["default"].received_gbps, 1e-6);
}

/// Runs without `[traffic.hotspots]` have none of the keys, nor the table.
#[test]
fn runs_without_shared_hotspots_have_no_hotspot_keys() {
    let r = run(SINGLE_SWITCH, &[]);
    let json = r.summary_json();
    for key in ["receive_rate", "total_throughput", "tmax"] {
        assert!(!json.contains(key), "{key} in {json}");
    }
    assert!(r.table("hotspots").is_none());
}

/// A mix of a uniform and a silent part offers exactly its share; the parts' queue pairs
/// are distinct, and a run is deterministic.
#[test]
fn mix_parts_offer_their_share_of_the_load() {
    let mix = "{ type = \"mix\", parts = [{ share = 0.25, pattern = { type = \"uniform\" } }, { pattern = { type = \"silent\" } }] }";
    let o = [("traffic.pattern", mix), ("traffic.process", "\"periodic\""), ("nic.qps_per_destination", "2")];
    let summary = || {
        let mut r = run(SINGLE_SWITCH, &o);
        r.summary.wall_seconds = 0.0;
        r.summary
    };
    let first = summary();
    assert_close("offered", first.offered_load, 0.5 * 0.25, 0.002);
    assert_close("accepted", first.accepted_load, 0.5 * 0.25, 0.005);
    assert_eq!(summary(), first);
}

fn config_error(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match snarl_core::load_config(text, &o, None).and_then(|c| snarl_core::run(&c)) {
        Err(snarl_core::Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {:?}", other.map(|r| r.summary)),
    }
}

/// (e) Bad input names its key path.
#[test]
fn bad_hotspot_and_mix_input_names_its_key() {
    let hotspots = "{ type = \"hotspots\" }";
    let (path, message) = config_error(SINGLE_SWITCH, &[("traffic.pattern", hotspots)]);
    assert_eq!(path, "traffic.pattern");
    assert!(message.contains("[traffic.hotspots]"), "{message}");
    let mixed = format!("{{ type = \"mix\", parts = [{{ share = 0.3, pattern = {hotspots} }}, {{ pattern = {{ type = \"uniform\" }} }}] }}");
    let (path, _) = config_error(SINGLE_SWITCH, &[("traffic.pattern", &mixed)]);
    assert_eq!(path, "traffic.pattern.parts.0.pattern");

    // In the forest: B nodes are group 0.
    let share = "traffic.groups.0.pattern.parts.0.share";
    let (path, message) = config_error(FOREST, &[(share, "1.5")]);
    assert_eq!(path, share);
    assert!(message.contains("[0, 1]"), "{message}");
    let (path, _) = config_error(FOREST, &[(share, "-0.1")]);
    assert_eq!(path, share);
    let both =
        "[{ share = 0.3, pattern = { type = \"hotspots\" } }, { share = 0.3, pattern = { type = \"uniform\" } }]";
    let (path, message) = config_error(FOREST, &[("traffic.groups.0.pattern.parts", both)]);
    assert_eq!(path, "traffic.groups.0.pattern.parts");
    assert!(message.contains("sum to 1"), "{message}");
    let first_open = "[{ pattern = { type = \"hotspots\" } }, { share = 0.3, pattern = { type = \"uniform\" } }]";
    let (path, message) = config_error(FOREST, &[("traffic.groups.0.pattern.parts", first_open)]);
    assert_eq!(path, share);
    assert!(message.contains("only the last"), "{message}");
    let nested = format!("[{{ share = 0.3, pattern = {hotspots} }}, {{ pattern = {mixed} }}]");
    let (path, message) = config_error(FOREST, &[("traffic.groups.0.pattern.parts", &nested)]);
    assert_eq!(path, "traffic.groups.0.pattern.parts.1.pattern");
    assert!(message.contains("mix"), "{message}");
    let (path, message) = config_error(FOREST, &[("traffic.groups.0.pattern.parts.0.shar", "0.3")]);
    assert_eq!(path, "traffic.groups.0.pattern.parts.0.shar");
    assert!(message.contains("did you mean `share`"), "{message}");
    let (path, message) = config_error(FOREST, &[("traffic.groups.0.pattern.parts.2.share", "0.3")]);
    assert_eq!(path, "traffic.groups.0.pattern.parts");
    assert!(message.contains("out of range"), "{message}");

    // The hotspots themselves.
    let (path, message) = config_error(FOREST, &[("traffic.hotspots.among", "cc")]);
    assert_eq!(path, "traffic.hotspots.among");
    assert!(message.contains("did you mean `c`"), "{message}");
    let (path, _) = config_error(FOREST, &[("traffic.hotspots.count", "0")]);
    assert_eq!(path, "traffic.hotspots.count");
    let (path, _) = config_error(FOREST, &[("traffic.hotspots.lifetime", "\"0ns\"")]);
    assert_eq!(path, "traffic.hotspots.lifetime");
    let (path, message) = config_error(MOVING, &[("traffic.hotspots.count", "5")]);
    assert_eq!(path, "traffic.hotspots.count");
    assert!(message.contains("only 4"), "{message}");
    let (path, message) = config_error(FOREST, &[("traffic.hotspots.cont", "5")]);
    assert_eq!(path, "traffic.hotspots.cont");
    assert!(message.contains("did you mean `count`"), "{message}");

    // A part that leaves every sender without a destination.
    let alone =
        "[{ share = 0.5, pattern = { type = \"uniform\", among = \"group\" } }, { pattern = { type = \"uniform\" } }]";
    let text = format!("{SINGLE_SWITCH}\n[[traffic.groups]]\nname = \"one\"\ncount = 1\npattern = {{ type = \"mix\", parts = {alone} }}\n");
    let (path, message) = config_error(&text, &[]);
    assert_eq!(path, "traffic.groups.0.pattern.parts.0.pattern");
    assert!(message.contains("no host of group `one`"), "{message}");
}

/// A delivery counts for what its host is when the packet arrives, not when its last
/// link starts sending it. With 5 us host links a message takes D ≈ 10 us from its
/// generation to its arrival, so after a move the new hotspots receive the C nodes'
/// traffic only from D on, and the old ones keep receiving it for D: a hotspot gets
/// 15 + 30 (1 - D / L) Gb/s, and the non-hotspots the 2 x 30 D / L Gb/s more. (Counted
/// at the last link's start, the packets arriving in the first 5 us after a move would
/// go to the old hotspots' side: 1.5 Gb/s more for the hotspots.)
#[test]
fn deliveries_count_for_what_their_host_is_when_they_arrive() {
    // Input buffers that cover the credit loop of the long links.
    let long = [("links.host", "{ rate = \"100Gbps\", latency = \"5us\" }"), ("switch.input_buffer", "\"1MiB\"")];
    let r = run(MOVING, &long);
    let delay = r.summary.groups["c"].latency.mean; // ns
    assert!((10_000.0..11_000.0).contains(&delay), "D = {delay} ns");
    let moved = delay / 100_000.0;
    let rate: ReceiveRate = r.summary.section("receive_rate").unwrap();
    assert_close("all (Gb/s)", rate.all, 12.0, 0.12);
    assert_close("hotspots (Gb/s)", rate.hotspots, 15.0 + 30.0 * (1.0 - moved), 0.45);
    assert_close("non-hotspots (Gb/s)", rate.non_hotspots, (30.0 + 60.0 * moved) / 8.0, 0.06);
}
