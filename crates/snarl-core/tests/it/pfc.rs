//! Shared-buffer switches with priority flow control: lossless by construction, fair
//! under incast, and dropping (visibly) without it.

use crate::common::*;
use snarl_core::config::pfc_headroom;
use snarl_core::load_config;

/// 8 hosts on one shared-buffer switch with the ICI paper's buffers and PFC thresholds.
const SHARED_SWITCH: &str = r#"
[simulation]
duration = "300us"
warmup = "50us"

[topology]
type = "single_switch"
hosts = 8

[links]
host = { rate = "100Gbps", latency = "25ns" }

[switch]
type = "shared_buffer"
port_buffer = "512KiB"
egress_cap = "256KiB"
speedup = 2.0

[flow_control]
type = "pfc"
xoff = 50
xon = 45

[traffic]
load = 1.0
"#;

fn incast(base: &str, senders: u32) -> String {
    let mut text = base.to_string();
    text.push_str("[[traffic.groups]]\nname = \"sink\"\nhosts = [0]\npattern = { type = \"silent\" }\n");
    text.push_str(&format!(
        "[[traffic.groups]]\nname = \"senders\"\nhosts = {:?}\npattern = {{ type = \"incast\", destination = 0 }}\n",
        (1..=senders).collect::<Vec<_>>()
    ));
    if senders < 7 {
        text.push_str("[[traffic.groups]]\nname = \"idle\"\nrest = true\npattern = { type = \"silent\" }\n");
    }
    text
}

/// 7 senders at line rate into one receiver: the receiver link runs full, each sender
/// gets 1/7 of it, and PFC holds each sender's link paused 6/7 of the time.
#[test]
fn pfc_incast_is_lossless_fair_and_pauses_the_senders() {
    let r = run(&incast(SHARED_SWITCH, 7), &[]);
    let s = &r.summary;
    assert_close("receiver link", s.groups["sink"].received_load, 1.0, 0.01);
    assert_close("each sender", s.groups["senders"].accepted_load, 1.0 / 7.0, 0.005);
    let pfc: snarl_core::observe::PfcSummary = s.section("pfc").expect("a PFC run reports pfc");
    assert!(pfc.pause_frames_sent > 0 && pfc.resume_frames_sent > 0);
    assert!(pfc.pause_frames_received <= pfc.pause_frames_sent);
    assert!(pfc.max_ingress_bytes >= 50 * 4096, "the ingress queues reach xoff");
    assert!(pfc.max_ingress_bytes <= 50 * 4096 + pfc.headroom_bytes, "and stay within the headroom");
    let hosts: Vec<_> = pfc.most_paused.iter().filter(|l| l.node.starts_with("host")).collect();
    assert_eq!(hosts.len(), 7, "every sender's link was paused: {:?}", pfc.most_paused);
    for link in hosts {
        assert_close(&format!("{} paused fraction", link.node), link.paused_fraction, 6.0 / 7.0, 0.03);
    }
}

/// The largest xoff the validator accepts leaves exactly the headroom above it; heavy
/// incast and uniform traffic through a fat-tree then push ingress queues into that
/// headroom, and still nothing is dropped.
#[test]
fn pfc_buffers_driven_to_their_limit_drop_nothing() {
    let config = load_config(SHARED_SWITCH, &[], None).unwrap();
    let headroom = pfc_headroom(&config.links, 4096);
    let share = 48 * 1024;
    let xoff = share - headroom;
    let text = format!(
        r#"
[simulation]
duration = "200us"
warmup = "20us"

[topology]
type = "k_ary_n_tree"
k = 4
n = 2

[switch]
type = "shared_buffer"
port_buffer = "64KiB"
egress_cap = "16KiB"
speedup = 1.0

[flow_control]
type = "pfc"
xoff = "{xoff}B"
xon = "{xon}B"

[routing]
type = "dmodk"

[traffic]
load = 1.0

[[traffic.groups]]
name = "aggressors"
fraction = 0.5
placement = "interleaved"
pattern = {{ type = "incast", destination = 0 }}

[[traffic.groups]]
name = "others"
rest = true
"#,
        xon = xoff - 4096
    );
    let r = run(&text, &[]);
    let pfc: snarl_core::observe::PfcSummary = r.summary.section("pfc").unwrap();
    assert!(pfc.max_ingress_bytes > xoff, "ingress queues went past xoff into the headroom");
    assert!(pfc.max_ingress_bytes <= share, "{} > share {share}", pfc.max_ingress_bytes);
    assert_eq!(r.summary.counters["packets_dropped"], 0);
    // One byte more of xoff and PFC could no longer guarantee the headroom.
    let e = load_config(&text.replace(&format!("xoff = \"{xoff}B\""), &format!("xoff = \"{}B\"", xoff + 1)), &[], None)
        .unwrap_err();
    assert!(e.to_string().contains("flow_control.xoff") && e.to_string().contains("headroom"), "{e}");
}

/// Without flow control the same incast overflows the ingress share: the drops are
/// counted, per group and in total, and conservation still holds.
#[test]
fn without_pfc_a_full_buffer_drops_and_counts() {
    let text = incast(SHARED_SWITCH, 7).replace("type = \"pfc\"\nxoff = 50\nxon = 45", "type = \"none\"");
    let r = run_lossy(&text, &[]);
    let s = &r.summary;
    assert!(s.packets.dropped > 1000, "dropped {}", s.packets.dropped);
    assert_eq!(s.counters["packets_dropped"], s.packets.dropped);
    assert_eq!(s.groups["senders"].packets.dropped, s.packets.dropped);
    assert!(s.sections.get("pfc").is_none(), "no PFC section without PFC");
    assert_close("receiver link", s.groups["sink"].received_load, 1.0, 0.01);
}

/// A shared pool lends memory to the congested ports: without flow control, fewer drops.
#[test]
fn shared_pool_absorbs_more_before_dropping() {
    let text = incast(SHARED_SWITCH, 7).replace("type = \"pfc\"\nxoff = 50\nxon = 45", "type = \"none\"");
    let without = run_lossy(&text, &[]).summary.packets.dropped;
    let with = run_lossy(&text, &[("switch.shared_pool", "\"4MiB\"")]).summary.packets.dropped;
    assert!(with < without, "pool: {with} drops, none: {without}");
}

/// Priorities are paused independently: a congested priority does not stop another.
#[test]
fn pfc_pauses_only_the_congested_priority() {
    let mut text = SHARED_SWITCH.replace("speedup = 2.0", "speedup = 2.0\npriorities = 2");
    text = text.replace("xoff = 50\nxon = 45", "xoff = [22, 17]\nxon = [20, 15]");
    text.push_str("[nic]\nqps_per_destination = 2\n");
    let r = run(&incast(&text, 7), &[]);
    let pfc: snarl_core::observe::PfcSummary = r.summary.section("pfc").unwrap();
    assert!(pfc.pause_frames_sent > 0);
    assert!(pfc.most_paused.iter().any(|l| l.priority == 0) && pfc.most_paused.iter().any(|l| l.priority == 1));
    assert_close("receiver link", r.summary.groups["sink"].received_load, 1.0, 0.01);
}

/// Time-weighted occupancy of the congested egress queue: full (to the egress cap) most
/// of the time; an idle queue reads empty.
#[test]
fn queue_probe_reads_the_congested_egress_queue() {
    let mut text = incast(SHARED_SWITCH, 2);
    text.push_str("[observe]\nqueues = [{ switch = 0, port = 0 }, { switch = 0, port = 5 }]\n");
    let r = run(&text, &[]);
    let q: Vec<snarl_core::observe::QueueSummary> = r.summary.section("queues").unwrap();
    assert_eq!(q.len(), 2);
    let cap = 256 * 1024;
    assert!(q[0].p25_bytes as f64 >= 0.97 * (cap - 4096) as f64, "{:?}", q[0]);
    assert!(q[0].max_bytes <= cap + cap / 100, "{:?}", q[0]);
    assert!(q[1].max_bytes <= 1, "{:?}", q[1]);
}

/// The probes' per-window pause and mark counts: on a spine-leaf under a PFC incast with
/// RED marking, the port to the receiver marks, the ports whose ingress fills pause their
/// upstream, and the spine's output to the receiver's leaf is paused; each count is at
/// most the fabric's in every window, and a run without probes has no such columns.
#[test]
fn queue_probes_count_their_ports_pauses_and_marks() {
    let fabric = SHARED_SWITCH
        .replace(
            "[topology]\ntype = \"single_switch\"\nhosts = 8\n",
            "[topology]\ntype = \"spine_leaf\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\n",
        )
        .replace(
            "latency = \"25ns\" }\n",
            "latency = \"25ns\" }\nswitch = { rate = \"100Gbps\", latency = \"25ns\" }\n",
        )
        + "[[traffic.groups]]\nname = \"sink\"\nhosts = [4]\npattern = { type = \"silent\" }\n"
        + "[[traffic.groups]]\nname = \"senders\"\nrest = true\npattern = { type = \"incast\", destination = 4 }\n";
    let marking = "[marking]\ntype = \"red\"\nkmin = \"20KiB\"\nkmax = \"200KiB\"\npmax = 0.1\n";
    // Leaf 1 (switch 1): port 0 to the receiver, port 4 up to the spine; the spine
    // (switch 2): port 1 down to leaf 1; leaf 0: port 1 to sender host 1.
    let probes = "[observe]\nqueues = [{ switch = 1, port = 0 }, { switch = 1, port = 4 }, \
                  { switch = 2, port = 1 }, { switch = 0, port = 1 }]\n";
    let r = run(&format!("{fabric}{marking}{probes}"), &[]);
    let (queues, series) = (r.table("queues").unwrap(), r.table("fabric").unwrap());
    let (sent, received, marks) =
        (u64s(queues, "pause_frames_sent"), u64s(queues, "pause_frames_received"), u64s(queues, "ecn_marks"));
    let probes_n = 4;
    let per_probe = |column: &[u64], probe: usize| column.iter().skip(probe).step_by(probes_n).sum::<u64>();
    assert!(per_probe(&marks, 0) > 0, "the port to the receiver marks");
    assert!(per_probe(&sent, 1) > 0, "leaf 1's ingress from the spine pauses the spine");
    assert!(per_probe(&received, 2) > 0, "the spine's output to leaf 1 is paused");
    assert!(per_probe(&sent, 3) > 0, "leaf 0's ingress from a sender pauses its NIC");
    assert_eq!(per_probe(&received, 0), 0, "a host never pauses the switch");
    // Window by window, the probes' counts add up to at most the fabric's.
    let (fabric_pauses, fabric_marks) = (u64s(series, "pause_frames"), u64s(series, "ecn_marks"));
    assert_eq!(queues.rows(), probes_n * series.rows());
    for w in 0..series.rows() {
        let window = |column: &[u64]| column[w * probes_n..(w + 1) * probes_n].iter().sum::<u64>();
        assert!(window(&sent) <= fabric_pauses[w], "window {w}");
        assert!(window(&marks) <= fabric_marks[w], "window {w}");
    }
    let pfc: snarl_core::observe::PfcSummary = r.summary.section("pfc").unwrap();
    assert!(received.iter().sum::<u64>() <= pfc.pause_frames_received);
    // Without marking the table counts pauses only; without probes there is no table.
    let unmarked = run(&format!("{fabric}{probes}"), &[]);
    let queues = unmarked.table("queues").unwrap();
    assert!(queues.column("pause_frames_sent").is_some() && queues.column("ecn_marks").is_none());
    assert!(run(&format!("{fabric}{marking}"), &[]).table("queues").is_none());
}

fn u64s(table: &snarl_core::report::Table, name: &str) -> Vec<u64> {
    match table.column(name) {
        Some(snarl_core::report::ColumnData::U64(v)) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn bad_lossless_configs_name_their_key() {
    // (config, overrides, the key path the error must name)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let credits = SHARED_SWITCH.replace("type = \"pfc\"\nxoff = 50\nxon = 45", "type = \"credit\"");
    let cases: [Case; 6] = [
        (&credits, &[], "flow_control.type"),
        (
            SINGLE_SWITCH,
            &[("flow_control.type", "pfc"), ("flow_control.xoff", "5"), ("flow_control.xon", "4")],
            "flow_control.type",
        ),
        (SHARED_SWITCH, &[("flow_control.xon", "60")], "flow_control.xon"),
        (SHARED_SWITCH, &[("flow_control.xoff", "[50, 40, 30]")], "flow_control.xoff"),
        (SHARED_SWITCH, &[("flow_control.xoff", "\"50 parcels\"")], "\"50 parcels\""),
        (SHARED_SWITCH, &[("switch.egress_cap", "\"600KiB\"")], "switch.port_buffer"),
    ];
    for (text, overrides, key) in cases {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let e = load_config(text, &o, None).expect_err(key);
        assert!(e.to_string().contains(key), "{overrides:?}: {e}");
    }
    // A key that the chosen variant does not take is refused, even for variants
    // without parameters.
    for (key, value) in [("flow_control.type", "none"), ("congestion_control.type", "none")] {
        let o = vec![(key.to_string(), value.to_string())];
        let text = format!("{SHARED_SWITCH}[congestion_control]\ntype = \"dcqcn\"\ncnp_interval = \"4us\"\n");
        let e = load_config(&text, &o, None).expect_err(key);
        assert!(e.to_string().contains("unknown key"), "{key}: {e}");
    }
    let probe = format!("{SHARED_SWITCH}[observe]\nqueues = [{{ switch = 0, port = 9 }}]\n");
    let config = load_config(&probe, &[], None).unwrap();
    let e = snarl_core::run(&config).unwrap_err();
    assert!(e.to_string().contains("observe.queues.0.port"), "{e}");
}
