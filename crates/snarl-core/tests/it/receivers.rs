//! Receivers that accept a flow's packets out of order, or only in order with go-back-N,
//! on a spine-leaf of two leaves of eight hosts under one spine, four links between each
//! leaf and the spine: packet spraying reorders a flow's packets over paths of different
//! queueing, ECMP (the control) keeps each flow on one path.

use crate::common::SINGLE_SWITCH;
use snarl_core::observe::{Collector, ReceiverEvent, ReceiverSummary, TraceEvent};
use snarl_core::{load_config, Error, Report, Simulation, ValidConfig};
use std::sync::{Arc, Mutex};

/// The spine-leaf under a cross-leaf permutation (host i sends to host i + 8 mod 16),
/// 16 KiB messages, with `routing` (TOML keys of `[routing]`), `receiver` (`nic.receiver`,
/// if any) and `overrides` (dotted keys and TOML values).
fn config(routing: &str, receiver: Option<&str>, load: f64, overrides: &[(&str, &str)]) -> ValidConfig {
    let receiver = receiver.map_or(String::new(), |r| format!("receiver = \"{r}\""));
    let text = format!(
        r#"
seed = 1

[simulation]
duration = "300us"
warmup = "30us"

[topology]
type = "spine_leaf"
leaves = 2
spines = 1
hosts_per_leaf = 8
links_per_pair = 4

[links]
host = {{ rate = "100Gbps", latency = "50ns" }}
switch = {{ rate = "100Gbps", latency = "50ns" }}

[routing]
{routing}

[nic]
mtu = "4KiB"
{receiver}

[traffic]
load = {load}
message_size = "16KiB"
pattern = {{ type = "shift", offset = 8 }}
"#
    );
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load_config(&text, &o, None).unwrap_or_else(|e| panic!("config: {e}"))
}

const SPRAY: &str = "type = \"spray\"";
const ECMP: &str = "type = \"ecmp\"";

/// Runs `config`: the report, its packets conserved (discards counted) and nothing lost
/// in the fabric.
fn run(config: &ValidConfig) -> Report {
    let report = snarl_core::run(config).unwrap_or_else(|e| panic!("run: {e}"));
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped + p.discarded, "packet conservation: {p:?}");
    assert_eq!(p.dropped, 0, "a lossless fabric dropped packets");
    assert!(p.delivered > 500, "{p:?}");
    report
}

/// The run's `receiver` section.
fn receiver(report: &Report) -> ReceiverSummary {
    report.summary.section("receiver").expect("a receiver section")
}

/// The summary as JSON, wall time aside.
fn summary(mut report: Report) -> String {
    report.summary.wall_seconds = 0.0;
    report.summary_json()
}

/// The summary as JSON without the receiver's section and the event count (a receiver
/// has every data packet arrive as an event of its own).
fn summary_but_receiver(report: Report) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&summary(report)).unwrap();
    let map = value.as_object_mut().unwrap();
    map.shift_remove("receiver");
    map.shift_remove("events");
    value.to_string()
}

#[test]
fn out_of_order_receivers_count_the_reordering_of_spraying_and_none_under_ecmp() {
    let sprayed = run(&config(SPRAY, Some("out_of_order"), 0.5, &[]));
    let r = receiver(&sprayed);
    let delivered = sprayed.summary.packets.delivered;
    assert_eq!(r.receiver, "out_of_order");
    // Spraying at random over four uplinks of unequal queues reorders about half the
    // packets, a few transmissions deep.
    assert!(r.reordered_packets > delivered / 4, "{r:?} of {delivered}");
    assert!(r.reorder_depth_max > 4 && r.reorder_depth_mean > 1.0 && r.reorder_depth_mean < 10.0, "{r:?}");
    assert!(r.reorder_depth_mean <= r.reorder_depth_max as f64);
    // Nothing is discarded, nothing is sent again.
    assert_eq!((r.out_of_sequence_drops, r.duplicate_drops, r.naks_sent, r.retransmitted_packets), (0, 0, 0, 0));
    assert_eq!(sprayed.summary.packets.discarded, 0);
    // ECMP keeps a flow on one path: nothing arrives out of order.
    let ecmp = run(&config(ECMP, Some("out_of_order"), 0.5, &[]));
    let r = receiver(&ecmp);
    assert_eq!((r.reordered_packets, r.reorder_depth_max, r.reorder_depth_mean), (0, 0, 0.0), "{r:?}");
}

/// Spraying implies the out-of-order receiver and its counts; other routings report
/// them when `nic.receiver` is set; counting changes nothing else: the same run, packet
/// for packet, with more events (every data packet arrives as one).
#[test]
fn counting_the_reordering_changes_nothing_else() {
    let implied = run(&config(SPRAY, None, 0.5, &[]));
    assert_eq!(receiver(&implied).receiver, "out_of_order");
    assert_eq!(summary(implied), summary(run(&config(SPRAY, Some("out_of_order"), 0.5, &[]))));
    // Up/down's random choice moves a flow's packets between uplinks too.
    let random = "type = \"updown\"\nselect = \"random\"";
    let plain = run(&config(random, None, 0.5, &[]));
    assert!(plain.summary.sections.get("receiver").is_none(), "no receiver in force, no section");
    let counted = run(&config(random, Some("out_of_order"), 0.5, &[]));
    assert!(receiver(&counted).reordered_packets > 1000, "{:?}", receiver(&counted));
    assert!(counted.summary.events > plain.summary.events);
    assert_eq!(summary_but_receiver(counted), summary_but_receiver(plain));
}

#[test]
fn in_order_receivers_go_back_n_under_spraying_and_never_under_ecmp() {
    let out_of_order = run(&config(SPRAY, Some("out_of_order"), 0.5, &[]));
    let in_order = run(&config(SPRAY, Some("in_order"), 0.5, &[]));
    let r = receiver(&in_order);
    let p = &in_order.summary.packets;
    assert_eq!(r.receiver, "in_order");
    assert!(r.reordered_packets > 1000, "{r:?}");
    assert!(r.out_of_sequence_drops > 1000 && r.duplicate_drops > 100, "{r:?}");
    assert!(r.naks_sent > 100 && r.naks_sent < r.out_of_sequence_drops, "one NAK per gap: {r:?}");
    assert!(r.retransmitted_packets > r.naks_sent, "a go-back resends every packet from the gap on: {r:?}");
    assert_eq!(p.discarded, r.out_of_sequence_drops + r.duplicate_drops, "{p:?}");
    // What is discarded is link time spent for nothing: goodput falls (0.05 of 0.31).
    let (goodput, ooo) = (in_order.summary.accepted_load, out_of_order.summary.accepted_load);
    assert!(goodput < 0.5 * ooo, "in order {goodput}, out of order {ooo}");
    assert_eq!(in_order.summary.offered_load, out_of_order.summary.offered_load);
    // Under ECMP the in-order receiver never sees a gap: the run is the out-of-order one.
    let ecmp = run(&config(ECMP, Some("in_order"), 0.5, &[]));
    let r = receiver(&ecmp);
    assert_eq!((r.out_of_sequence_drops, r.duplicate_drops, r.naks_sent, r.retransmitted_packets), (0, 0, 0, 0));
    let same = summary(run(&config(ECMP, Some("out_of_order"), 0.5, &[])));
    assert_eq!(summary(ecmp).replace("\"in_order\"", "\"out_of_order\""), same);
}

/// A permutation that stops at 100 us, in a run of 2 ms: every message generated is
/// delivered in the end, in order or not, and nothing is left in flight.
#[test]
fn in_order_receivers_deliver_everything_in_the_end() {
    let stop = [
        ("simulation.duration", "\"2ms\""),
        ("traffic.phases", "[{ at = \"100us\", group = \"all\", pattern = { type = \"silent\" } }]"),
    ];
    for receiver_kind in ["out_of_order", "in_order"] {
        let report = run(&config(SPRAY, Some(receiver_kind), 0.5, &stop));
        let (s, r) = (&report.summary, receiver(&report));
        let c = &s.counters;
        assert_eq!(s.packets.in_flight, 0, "{receiver_kind}: {:?}", s.packets);
        assert!(c["messages_generated"] > 300, "{c:?}");
        assert_eq!(c["messages_delivered"], c["messages_generated"], "{receiver_kind}: {c:?}");
        let expected_retransmissions = receiver_kind == "in_order";
        assert_eq!(r.retransmitted_packets > 0, expected_retransmissions, "{receiver_kind}: {r:?}");
        // Every packet sent reached its host, accepted once per PSN or discarded.
        let p = &s.packets;
        assert_eq!(p.injected, p.delivered + p.discarded);
    }
}

/// The payload of a run, from its trace: the bytes of the messages its sources had
/// accepted, the bytes its deliveries carried, the bytes of the messages completed; and
/// the packets sent again after a NAK.
#[derive(Default, Debug)]
struct Payload {
    generated: u64,
    delivered: u64,
    completed: u64,
    retransmitted: u64,
}

struct Tally(Arc<Mutex<Payload>>);

impl Collector for Tally {
    fn on(&mut self, _now: u64, event: &TraceEvent) {
        let mut t = self.0.lock().unwrap();
        match *event {
            TraceEvent::Generated { bytes, accepted: true, .. } => t.generated += bytes,
            TraceEvent::Delivered { bytes, .. } => t.delivered += bytes,
            TraceEvent::MessageDone { bytes, .. } => t.completed += bytes,
            TraceEvent::Receiver(ReceiverEvent::Retransmitted) => t.retransmitted += 1,
            _ => {}
        }
    }
}

/// Retransmissions are frames as new data is: with 62 bytes of header on every packet,
/// go-back-N still delivers each byte of payload exactly once. The permutation stops at
/// 100 us in a run of 2 ms: what was generated is what was delivered, to the byte, every
/// message completes, and every packet sent reached its host, accepted once or discarded
/// (a discarded packet delivers nothing).
#[test]
fn go_back_n_with_headers_delivers_every_payload_byte_once() {
    let overrides = [
        ("simulation.duration", "\"2ms\""),
        ("simulation.warmup", "\"0us\""),
        ("traffic.phases", "[{ at = \"100us\", group = \"all\", pattern = { type = \"silent\" } }]"),
        ("nic.header", "\"62B\""),
    ];
    let config = config(SPRAY, Some("in_order"), 0.5, &overrides);
    let tally = Arc::new(Mutex::new(Payload::default()));
    let mut simulation = Simulation::new(&config).unwrap();
    simulation.add_collector(Tally(tally.clone()));
    let report = simulation.run(&mut |_| true).unwrap_or_else(|e| panic!("run: {e}"));
    let t = std::mem::take(&mut *tally.lock().unwrap());
    let (s, r) = (&report.summary, receiver(&report));
    let (p, c) = (&s.packets, &s.counters);
    // Go-back-N was at work, on frames with the header.
    assert!(r.retransmitted_packets > 100 && r.naks_sent > 10, "{r:?}");
    assert_eq!(t.retransmitted, r.retransmitted_packets);
    assert!(p.discarded > 100, "{p:?}");
    // Every payload byte generated was delivered, once: bytes, messages and packets.
    assert!(c["messages_generated"] > 300, "{c:?}");
    assert_eq!(t.generated, c["messages_generated"] * 16 * 1024, "{t:?}");
    assert_eq!(t.delivered, t.generated, "payload delivered against generated: {t:?}");
    assert_eq!(t.completed, t.generated, "{t:?}");
    assert_eq!(c["messages_delivered"], c["messages_generated"], "{c:?}");
    // Four packets of 4 KiB per message; the NAKs count as injected and as delivered.
    assert_eq!(p.delivered, 4 * c["messages_generated"] + r.naks_sent, "{p:?}");
    // Conservation: nothing left in flight, nothing lost; what was not delivered was
    // discarded at its host.
    assert_eq!((p.in_flight, p.dropped), (0, 0), "{p:?}");
    assert_eq!(p.injected, p.delivered + p.discarded, "{p:?}");
    assert_eq!(p.discarded, r.out_of_sequence_drops + r.duplicate_drops, "{p:?}");
    let injected_data = p.injected - r.naks_sent;
    assert_eq!(injected_data, 4 * c["messages_generated"] + r.retransmitted_packets, "{p:?} {r:?}");
}

/// Go-back-N under the NICs' other mechanisms: several flows per host, round-robin
/// scheduling, DCQCN on PFC and the per-pair control pacing the retransmissions, flowlet
/// switching, messages of two and a half packets. Every packet is accounted for, and the
/// in-order receiver carries less than the out-of-order one each time.
#[test]
fn go_back_n_keeps_every_packet_under_other_mechanisms() {
    let uniform = [("nic.qps_per_destination", "4"), ("traffic.pattern", "{ type = \"uniform\" }")];
    let pfc = "{ type = \"shared_buffer\", port_buffer = \"512KiB\", egress_cap = \"256KiB\", speedup = 2.0 }";
    let cases: [(&str, &[(&str, &str)]); 6] = [
        (SPRAY, &uniform),
        (SPRAY, &[uniform[0], uniform[1], ("nic.scheduling", "\"round_robin\"")]),
        (
            SPRAY,
            &[
                ("switch", pfc),
                ("flow_control", "{ type = \"pfc\", xoff = 50, xon = 45 }"),
                ("congestion_control", "{ type = \"dcqcn\" }"),
            ],
        ),
        (SPRAY, &[("congestion_control", "{ type = \"per_pair\" }")]),
        ("type = \"flowlet\"\ngap = \"1us\"", &[]),
        (SPRAY, &[("traffic.message_size", "10000B")]),
    ];
    for (routing, overrides) in cases {
        let report = run(&config(routing, Some("in_order"), 0.5, overrides));
        let r = receiver(&report);
        assert!(r.retransmitted_packets > 100 && r.naks_sent > 10, "{routing} {overrides:?}: {r:?}");
        assert_eq!(report.summary.packets.discarded, r.out_of_sequence_drops + r.duplicate_drops);
        let out_of_order = run(&config(routing, Some("out_of_order"), 0.5, overrides)).summary.accepted_load;
        let in_order = report.summary.accepted_load;
        assert!(in_order < 0.9 * out_of_order, "{routing} {overrides:?}: {in_order} against {out_of_order}");
    }
}

#[test]
fn the_printout_says_what_the_receivers_did() {
    let report = run(&config(SPRAY, Some("in_order"), 0.5, &[]));
    let r = receiver(&report);
    let lines: Vec<&String> =
        report.notes.iter().filter(|n| n.starts_with("Receiver") || n.starts_with("Go-back-N")).collect();
    assert_eq!(lines.len(), 2, "{:?}", report.notes);
    assert!(lines[0].starts_with("Receiver (in order): "), "{}", lines[0]);
    let retx = snarl_core::report::text::int(r.retransmitted_packets);
    assert!(lines[1].ends_with(&format!("{retx} Frames ReTx")), "{}", lines[1]);
    let report = run(&config(SPRAY, Some("out_of_order"), 0.5, &[]));
    assert!(!report.notes.iter().any(|n| n.starts_with("Go-back-N")), "{:?}", report.notes);
}

#[test]
fn same_config_and_seed_same_summary() {
    let once = summary(run(&config(SPRAY, Some("in_order"), 0.5, &[])));
    assert_eq!(once, summary(run(&config(SPRAY, Some("in_order"), 0.5, &[]))));
    // The comparison can fail: another seed sprays otherwise.
    assert_ne!(once, summary(run(&config(SPRAY, Some("in_order"), 0.5, &[("seed", "2")]))));
}

#[test]
fn bad_receivers_are_refused_at_their_key() {
    let error = |receiver: &str, overrides: &[(&str, &str)]| {
        let mut o = vec![("nic.receiver".to_string(), receiver.to_string())];
        o.extend(overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        match load_config(SINGLE_SWITCH, &o, None) {
            Err(Error::Config { path, message }) => (path, message),
            other => panic!("expected a config error, got {other:?}"),
        }
    };
    let (path, message) = error("\"inorder\"", &[]);
    assert_eq!(path, "nic.receiver");
    assert!(message.contains("`in_order`"), "{message}");
    let lossy = [("switch.type", "\"shared_buffer\""), ("flow_control.type", "\"none\"")];
    let (path, message) = error("\"in_order\"", &lossy);
    assert_eq!(path, "nic.receiver");
    assert!(message.contains("lossless"), "{message}");
    // Out of order, a lossy fabric is fine: nothing waits for a NAK.
    let mut o = vec![("nic.receiver".to_string(), "\"out_of_order\"".to_string())];
    o.extend(lossy.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    assert!(load_config(SINGLE_SWITCH, &o, None).is_ok());
}
