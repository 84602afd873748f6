//! Bytes on the wire that are not goodput (`[nic] header`, `framing`): they take link
//! time on every link, so a saturated link delivers payload at rate × mtu / (mtu +
//! header + framing), while every payload figure (loads, delivered bytes, message sizes)
//! counts the payload alone. Each check stands beside a control run without them.

use crate::common::*;
use snarl_core::kernel::Timer;
use snarl_core::packet::Tag;
use snarl_core::topology::Topology;
use snarl_core::traffic::{AnyWorkload, Env, GroupView, MessageDone, Workload};
use snarl_core::{load_config, Report, Simulation};
use std::sync::{Arc, Mutex};

/// Two hosts at 400 Gb/s with 4 KiB packets, each sending 64 KiB messages to the other
/// back to back, more than its link carries: a long transfer each way.
const SATURATED: &str = r#"
[simulation]
duration = "60us"
warmup = "10us"

[topology]
type = "back_to_back"

[links]
host = { rate = "400Gbps", latency = "25ns" }
switch = { rate = "400Gbps", latency = "25ns" }

[switch]
input_buffer = "256KiB"
output_buffer = "256KiB"

[nic]
mtu = "4KiB"

[traffic]
load = 1.0
message_size = "64KiB"
"#;

/// The same two hosts on one switch (every packet serialised twice: host link, then the
/// switch's output).
const SINGLE_SWITCH_TOPOLOGY: (&str, &str) = ("type = \"back_to_back\"", "type = \"single_switch\"\nhosts = 2");

fn saturated(topology: &str, overrides: &[(&str, &str)]) -> Report {
    run(&SATURATED.replace(SINGLE_SWITCH_TOPOLOGY.0, topology), overrides)
}

#[test]
fn headers_and_framing_take_wire_time_from_goodput() {
    for topology in [SINGLE_SWITCH_TOPOLOGY.0, SINGLE_SWITCH_TOPOLOGY.1] {
        let control = saturated(topology, &[]).summary;
        let header = saturated(topology, &[("nic.header", "62B")]).summary;
        let framed = saturated(topology, &[("nic.header", "62B"), ("nic.framing", "20B")]).summary;
        // The control carries the full rate of payload.
        assert_close(&format!("{topology}: control"), control.accepted_load, 1.0, 0.005);
        assert_close(&format!("{topology}: control, Gb/s"), control.accepted_gbps, 400.0, 2.0);
        // 62 bytes of header per 4 KiB: 4096 / 4158 of the rate is payload.
        let want = 4096.0 / (4096.0 + 62.0);
        assert!((header.accepted_load / want - 1.0).abs() <= 0.005, "{topology}: header: {}", header.accepted_load);
        assert!((header.received_load / want - 1.0).abs() <= 0.005, "{topology}: {}", header.received_load);
        assert!((header.accepted_gbps / (400.0 * want) - 1.0).abs() <= 0.005, "{}", header.accepted_gbps);
        // With Ethernet's 20 bytes of preamble and gap besides.
        let want = 4096.0 / (4096.0 + 62.0 + 20.0);
        assert!((framed.accepted_load / want - 1.0).abs() <= 0.005, "{topology}: framing: {}", framed.accepted_load);
        // Offered load is payload too: the sources offer their full rate of it, of which
        // the wire carries less.
        assert_close(&format!("{topology}: offered"), framed.offered_load, control.offered_load, 1e-9);
        // Not a packet more or less than the wire allows: fewer packets in the same time.
        assert!(framed.packets.delivered < header.packets.delivered, "{topology}");
        assert!(header.packets.delivered < control.packets.delivered, "{topology}");
    }
}

/// Posts one message of `size` bytes from `src` to `dst` at 1 us and records its
/// completion.
struct OneMessage {
    src: u32,
    dst: u32,
    size: u64,
    hosts: Vec<u32>,
    host_group: Vec<u16>,
    done: Arc<Mutex<Vec<MessageDone>>>,
}

/// When `OneMessage` posts its message, ps.
const POSTED_AT: u64 = 1_000_000;

impl Workload for OneMessage {
    fn start(&mut self, env: &mut Env) {
        env.set_timer(POSTED_AT, 0, 0, 0);
    }

    fn timer(&mut self, env: &mut Env, _timer: Timer) {
        assert!(env.post(self.src, self.dst, self.size, 0, Tag::default(), 0));
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn message_done(&mut self, _env: &mut Env, done: MessageDone) {
        self.done.lock().unwrap().push(done);
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        vec![GroupView { name: "all", hosts: &self.hosts }]
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }
}

/// Runs `text` with one message of `size` from `src` to `dst`: the report and the
/// message's completion.
fn one_message(text: &str, overrides: &[(&str, &str)], src: u32, dst: u32, size: u64) -> (Report, MessageDone) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap_or_else(|e| panic!("config: {e}"));
    let hosts = snarl_core::topology::build(&config.topology.shape, &config.links).unwrap().num_hosts() as u32;
    let done = Arc::new(Mutex::new(Vec::new()));
    let work = OneMessage {
        src,
        dst,
        size,
        hosts: (0..hosts).collect(),
        host_group: vec![0; hosts as usize],
        done: done.clone(),
    };
    let simulation = Simulation::with_workload(&config, AnyWorkload::Custom(Box::new(work))).unwrap();
    let report = simulation.run(&mut |_| true).unwrap();
    let p = &report.summary.packets;
    assert_eq!((p.in_flight, p.dropped), (0, 0), "{p:?}");
    assert_eq!(p.injected, p.delivered);
    let done = done.lock().unwrap().clone();
    assert_eq!(done.len(), 1, "one message completes");
    (report, done[0])
}

/// A lone 1 MiB message back to back: its bytes delivered are its payload, with or
/// without headers, and its completion time is its 256 frames' wire time (header and
/// framing included) plus the link's latency.
#[test]
fn delivered_bytes_are_payload_and_the_wire_time_is_the_frames() {
    let text = SATURATED.replace("warmup = \"10us\"", "warmup = \"0us\"");
    let size = 1 << 20;
    for (header, framing) in [(0u64, 0u64), (62, 0), (62, 20)] {
        let (h, f) = (format!("{header}B"), format!("{framing}B"));
        let (report, done) = one_message(&text, &[("nic.header", &h), ("nic.framing", &f)], 0, 1, size);
        let s = &report.summary;
        assert_eq!(done.size, size);
        assert_eq!(s.packets.delivered, 256, "4 KiB of payload per packet");
        // Delivered payload over the measured 60 us (the rate is per host, of 2).
        let delivered = 2.0 * s.accepted_gbps * 1e9 * 60e-6 / 8.0;
        assert!((delivered / size as f64 - 1.0).abs() < 1e-9, "header {header}: {delivered} bytes delivered");
        // 400 Gb/s is 20 ps a byte.
        let wire = 256 * (4096 + header + framing) * 20;
        assert_eq!(done.at - done.created, wire + 25_000, "header {header}, framing {framing}");
    }
}

/// Control packets are frames too: under the per-pair control every data packet is
/// acknowledged by a 64-byte ACK on the reverse link, which carries the header and the
/// framing as data does. Both directions saturated, each link carries a data frame and an
/// ACK frame per 4 KiB of payload.
#[test]
fn acknowledgements_carry_the_header_and_framing() {
    let text = SATURATED.replace(SINGLE_SWITCH_TOPOLOGY.0, SINGLE_SWITCH_TOPOLOGY.1)
        + "\n[congestion_control]\ntype = \"per_pair\"\n";
    let goodput = |overrides: &[(&str, &str)]| run(&text, overrides).summary.accepted_load;
    let control = goodput(&[]);
    let framed = goodput(&[("nic.header", "62B"), ("nic.framing", "20B")]);
    let want = |extra: f64| 4096.0 / (4096.0 + 64.0 + 2.0 * extra);
    assert!((control / want(0.0) - 1.0).abs() <= 0.005, "control: {control} vs {}", want(0.0));
    assert!((framed / want(82.0) - 1.0).abs() <= 0.005, "framed: {framed} vs {}", want(82.0));
}

/// The config error of `text` with `overrides`: its key path and message.
fn config_error(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match load_config(text, &o, None) {
        Err(snarl_core::Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn frames_beyond_32_bits_or_larger_than_the_buffers_are_refused() {
    let text = SATURATED.replace(SINGLE_SWITCH_TOPOLOGY.0, SINGLE_SWITCH_TOPOLOGY.1);
    // An MTU within the limit whose header takes the frame beyond it.
    let big =
        [("nic.mtu", "1GiB"), ("nic.header", "62B"), ("switch.input_buffer", "2GiB"), ("switch.output_buffer", "2GiB")];
    let (path, message) = config_error(&text, &big);
    assert_eq!(path, "nic.header");
    assert!(message.contains("at most 1GiB on the wire"), "{message}");
    // A buffer that holds an MTU of payload but not the frame that carries it.
    let (path, message) = config_error(&text, &[("nic.header", "62B"), ("switch.input_buffer", "4KiB")]);
    assert_eq!(path, "switch.input_buffer");
    assert!(message.contains("4158 B (4KiB and a 62B header)"), "{message}");
    let loads = |overrides: &[(&str, &str)]| {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        load_config(&text, &o, None).is_ok()
    };
    assert!(loads(&[("nic.header", "62B"), ("switch.input_buffer", "4158B")]));
    // Framing is link time, never buffered: it does not count against the buffers.
    assert!(loads(&[("nic.framing", "20B"), ("switch.input_buffer", "4KiB")]));
    let (path, message) = config_error(&text, &[("nic.hedaer", "62B")]);
    assert_eq!(path, "nic.hedaer");
    assert!(message.contains("`header`"), "{message}");
}

/// The fabric of an NCCL spine-leaf test report: 2 leaves of 8 hosts at 400 Gb/s, 1
/// spine, 4 links of 800 Gb/s per leaf-spine pair (1:1), 560 ns through each switch.
/// Cables of 3 m at 5 ns/m: 15 ns a link. Buffers cover an 800 Gb/s link's credit loop
/// through a 560 ns switch. Every host sends to the host 8 places on, on the other leaf:
/// all traffic crosses the spine, and d-mod-k spreads it over a leaf's uplinks by
/// destination.
const NCCL_SPINE_LEAF: &str = r#"
[simulation]
duration = "60us"
warmup = "20us"

[topology]
type = "spine_leaf"
leaves = 2
spines = 1
hosts_per_leaf = 8
links_per_pair = 4

[links]
host = { rate = "400Gbps", latency = "15ns" }
switch = { rate = "800Gbps", latency = "15ns" }

[switch]
type = "ioq"
input_buffer = "256KiB"
output_buffer = "256KiB"
latency = "560ns"

[routing]
type = "dmodk"

[nic]
mtu = "4KiB"

[traffic]
load = 1.0
message_size = "64KiB"
pattern = { type = "shift", offset = 8 }
"#;

/// Removing uplinks caps what crosses the spine at the links kept: 4 uplinks of 800 Gb/s
/// carry the 8 hosts' 3.2 Tb/s in full, 3 carry 3/4 of it, 2 half (8 flows on k links,
/// d-mod-k by destination, every link kept runs full).
#[test]
fn removing_uplinks_scales_what_crosses_the_spine() {
    let by_links = |ratio: &str| {
        let o = [("topology.oversubscription", ratio), ("topology.oversubscription_by", "links")];
        run(NCCL_SPINE_LEAF, &o).summary.accepted_load
    };
    let control = run(NCCL_SPINE_LEAF, &[]).summary.accepted_load;
    let (full, three, two) = (by_links("1:1"), by_links("1:0.75"), by_links("1:0.5"));
    assert_close("every uplink", control, 1.0, 0.02);
    assert_eq!(full, control, "1:1 by links is the fabric as cabled");
    assert_close("3 of 4 uplinks", three / full, 0.75, 0.02);
    assert_close("2 of 4 uplinks", two / full, 0.5, 0.02);
}

/// A ratio that keeps no whole number of uplinks is refused at its key, in one line that
/// says which ratios the uplinks allow.
#[test]
fn a_ratio_between_uplink_counts_is_refused_at_its_key() {
    let by_links = [("topology.oversubscription", "1:0.6"), ("topology.oversubscription_by", "links")];
    let (path, message) = config_error(NCCL_SPINE_LEAF, &by_links);
    assert_eq!(path, "topology.oversubscription");
    assert!(message.contains("1:0.25, 1:0.5, 1:0.75 or 1:1"), "{message}");
    assert!(message.contains("found \"1:0.6\" (2.4 uplinks)"), "{message}");
    assert!(!message.contains('\n'), "{message}");
    // By rate, the same ratio slows the four uplinks instead.
    let o = [("topology.oversubscription".to_string(), "1:0.6".to_string())];
    assert!(load_config(NCCL_SPINE_LEAF, &o, None).is_ok());
    // The mode alone would change nothing.
    let (path, _) = config_error(NCCL_SPINE_LEAF, &[("topology.oversubscription_by", "links")]);
    assert_eq!(path, "topology.oversubscription_by");
    let (path, message) = config_error(NCCL_SPINE_LEAF, &[("topology.oversubscription_by", "link")]);
    assert_eq!(path, "topology.oversubscription_by");
    assert!(message.contains("`links`"), "{message}");
}

/// Zero-load latency across the spine: one 64 B message from a host of one leaf to a host
/// of the other crosses 3 switches and 4 links. The report says "as low as 2 us"; the
/// closed form is 3 × 560 ns of switches, 4 × 15 ns of cables and the frame's
/// serialisation on each link (a 64 B payload in a 62 B RoCEv2 header, 20 B of
/// Ethernet framing: 146 B, 2.92 ns at 400 Gb/s and 1.46 ns at 800 Gb/s).
#[test]
fn zero_load_latency_across_the_spine() {
    let ethernet = [("nic.header", "62B"), ("nic.framing", "20B")];
    let (_, done) = one_message(NCCL_SPINE_LEAF, &ethernet, 0, 8, 64);
    let latency = done.at - done.created;
    let (switch, cable, host_link, uplink) = (560_000, 15_000, 2_920, 1_460);
    let closed_form = 3 * switch + 4 * cable + 2 * host_link + 2 * uplink;
    assert!((1_000_000..=3_000_000).contains(&latency), "{latency} ps");
    assert!((latency as f64 / closed_form as f64 - 1.0).abs() < 0.01, "{latency} ps vs {closed_form} ps");
    // Virtual cut-through forwards a packet as its head arrives: of the four
    // serialisations, one on the slowest link and the rate change onto it are paid,
    // 4.38 ns in all, not 8.76.
    assert_eq!(latency, 3 * switch + 4 * cable + host_link + uplink);
    // Without the header and framing the frame is the 64 B payload alone: the header
    // and framing cost their 82 B at 400 and at 800 Gb/s.
    let (_, bare) = one_message(NCCL_SPINE_LEAF, &[], 0, 8, 64);
    assert_eq!(latency - (bare.at - bare.created), 82 * 20 + 82 * 10);
}
