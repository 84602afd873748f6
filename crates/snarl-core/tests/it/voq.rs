//! The InfiniBand switch and host models. Virtual output queues (`switch.input_queuing =
//! "voq"`): a packet for a free output does not wait behind one for a congested output;
//! adaptive routings choose at arrival; fabrics below saturation carry what FIFO input
//! queues carry; the watchdog follows waits through VoQs; runs are deterministic. Hosts
//! slower than their links (`nic.receive_cap`): a hotspot receives at its cap, and each
//! packet is delivered when it has drained.

use crate::common::*;
use snarl_core::kernel::Timer;
use snarl_core::packet::Tag;
use snarl_core::traffic::{AnyWorkload, Env, GroupView, MessageDone, Workload};
use snarl_core::{load_config, Report, Simulation};

/// Serialisation of one 4 KiB packet at 100 Gb/s, in ps.
const PACKET_TIME: u64 = 327_680;

/// Hosts that each post one MTU-sized message per packet time (when their source queue
/// has room), cycling through their list of destinations, so that a host sends to each
/// destination the share of its traffic that the destination has in its list.
struct Cycles {
    /// (host, its destinations in the order it cycles through them, next position).
    senders: Vec<(u32, Vec<u32>, usize)>,
    hosts: Vec<Vec<u32>>,
    names: Vec<&'static str>,
    host_group: Vec<u16>,
}

impl Cycles {
    /// `groups`: (name, hosts) covering every host of the fabric once.
    fn new(senders: Vec<(u32, Vec<u32>)>, groups: &[(&'static str, Vec<u32>)]) -> Cycles {
        let count: usize = groups.iter().map(|(_, hosts)| hosts.len()).sum();
        let mut host_group = vec![0; count];
        for (g, (_, hosts)) in groups.iter().enumerate() {
            for &h in hosts {
                host_group[h as usize] = g as u16;
            }
        }
        Cycles {
            senders: senders.into_iter().map(|(h, d)| (h, d, 0)).collect(),
            hosts: groups.iter().map(|(_, hosts)| hosts.clone()).collect(),
            names: groups.iter().map(|(name, _)| *name).collect(),
            host_group,
        }
    }
}

impl Workload for Cycles {
    fn start(&mut self, env: &mut Env) {
        for s in 0..self.senders.len() as u32 {
            env.set_timer(0, s, 0, 0);
        }
    }

    fn timer(&mut self, env: &mut Env, timer: Timer) {
        let (host, destinations, next) = &mut self.senders[timer.owner as usize];
        if env.nics.has_room(*host, 0) {
            let dst = destinations[*next % destinations.len()];
            *next += 1;
            env.post(*host, dst, 4096, 0, Tag::default(), 0);
        }
        env.set_timer(env.now() + PACKET_TIME, timer.owner, 0, 0);
    }

    fn wants_completions(&self) -> bool {
        false
    }

    fn message_done(&mut self, _: &mut Env, _: MessageDone) {}

    fn groups(&self) -> Vec<GroupView<'_>> {
        self.names.iter().zip(&self.hosts).map(|(&name, hosts)| GroupView { name, hosts }).collect()
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }
}

/// Runs `work` on `text` with `overrides`, checking the invariants before and after.
fn run_cycles(text: &str, overrides: &[(&str, &str)], work: Cycles) -> Report {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap_or_else(|e| panic!("config: {e}"));
    let simulation = Simulation::with_workload(&config, AnyWorkload::Custom(Box::new(work))).unwrap();
    simulation.check_invariants().unwrap();
    // `run` checks the invariants (conservation among them) again at the end.
    let mut report = simulation.run(&mut |_| true).unwrap_or_else(|e| panic!("run: {e}"));
    report.summary.wall_seconds = 0.0;
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight, "packet conservation: {p:?}");
    assert_eq!(p.dropped, 0);
    report
}

const ONE_SWITCH: &str = r#"
[simulation]
duration = "400us"
warmup = "50us"

[topology]
type = "single_switch"
hosts = 10

[links]
host = { rate = "100Gbps", latency = "25ns" }

[traffic]
load = 1.0
"#;

/// Host 0 sends 9 packets in 10 to host 1, whose output is free, and 1 in 10 to host 2,
/// whose output hosts 3..=9 saturate. Round robin at host 2's output gives each of its 8
/// inputs an eighth of it, more than host 0's tenth, so nothing keeps host 0 from sending
/// at its link rate but its own input queue: with virtual output queues host 1 receives
/// 0.9 of its link. With one FIFO per input, each packet for host 2 waits at the head of
/// host 0's input for its turn (about half the others' packets, 3.5 packet times), and
/// the packets for host 1 behind it wait with it.
fn free_flow(queuing: &str) -> Report {
    let mut to_free = vec![1; 9];
    to_free.push(2);
    let mut senders = vec![(0, to_free)];
    senders.extend((3..10).map(|h| (h, vec![2])));
    let groups = [("mixed", vec![0]), ("free", vec![1]), ("congested", vec![2]), ("others", (3..10).collect())];
    run_cycles(ONE_SWITCH, &[("switch.input_queuing", queuing)], Cycles::new(senders, &groups))
}

#[test]
fn voq_lets_a_flow_to_a_free_output_pass_one_to_a_congested_output() {
    let (voq, fifo) = (free_flow("voq"), free_flow("fifo"));
    let received = |r: &Report, g: &str| r.summary.groups[g].received_load;
    // Offered: 0.9 of the link to the free output. Tolerance: 2% of it.
    let (with_voq, with_fifo) = (received(&voq, "free"), received(&fifo, "free"));
    assert!(with_voq >= 0.98 * 0.9, "VoQ: the free flow receives {with_voq:.4} of its link, offered 0.9");
    assert!(with_fifo < 0.8 * 0.9, "FIFO: the free flow receives {with_fifo:.4}, not visibly less than 0.9");
    // The congested output is busy all the time either way, and host 0 gets its tenth.
    for r in [&voq, &fifo] {
        assert!(received(r, "congested") > 0.99, "{}", received(r, "congested"));
    }
    assert!(voq.summary.groups["mixed"].accepted_load >= 0.98, "{}", voq.summary.groups["mixed"].accepted_load);
}

/// A 128-host, three-level fat-tree of radix-8 switches.
const FAT_TREE: &str = r#"
[simulation]
duration = "100us"
warmup = "20us"

[topology]
type = "fat_tree"
radix = 8
levels = 3

[routing]
type = "dmodk"

[traffic]
load = 0.5
"#;

#[test]
fn voq_below_saturation_carries_what_fifo_input_queues_carry() {
    let accepted = |queuing: &str| run(FAT_TREE, &[("switch.input_queuing", queuing)]).summary.accepted_load;
    let (voq, fifo) = (accepted("voq"), accepted("fifo"));
    assert_close("accepted load, VoQ against FIFO", voq, fifo, 0.005);
    assert_close("accepted load, VoQ against offered", voq, 0.5, 0.01);
}

#[test]
fn voq_removes_head_of_line_blocking_in_a_fat_tree_past_fifo_saturation() {
    // D-mod-K funnels each destination through one root; FIFO inputs saturate near 0.65
    // of uniform traffic as heads for busy outputs hold back the rest.
    let overrides = |queuing| [("switch.input_queuing", queuing), ("traffic.load", "0.9")];
    let voq = run(FAT_TREE, &overrides("voq")).summary.accepted_load;
    let fifo = run(FAT_TREE, &overrides("fifo")).summary.accepted_load;
    assert!(fifo < 0.75 && voq > 0.85, "accepted load: FIFO {fifo:.3}, VoQ {voq:.3}");
}

#[test]
fn voq_with_adaptive_routings_runs_and_conserves_packets() {
    // Adaptive up-ports on the fat-tree: every up-port is offered, the lightest taken at
    // arrival. `run` checks conservation and the invariants (VoQs consistent with their
    // input buffers and their outputs' waiting bytes).
    for (queuing, crossbar) in [("voq", "per_port"), ("voq", "per_vc")] {
        let o = [
            ("switch.input_queuing", queuing),
            ("switch.crossbar", crossbar),
            ("switch.vcs", "2"),
            ("nic.qps_per_destination", "2"),
            ("routing.select", "adaptive"),
            ("routing.type", "updown"),
            ("traffic.load", "0.8"),
        ];
        let accepted = run(FAT_TREE, &o).summary.accepted_load;
        assert_close(&format!("{crossbar} crossbar, accepted load"), accepted, 0.8, 0.02);
    }
    // UGAL on a small dragonfly under an adversarial shift (every group sends to the next,
    // which minimal routes carry over one global link): detours are chosen at the first
    // switch, on four VC classes. VoQs carry at least what FIFO inputs carry.
    let dragonfly = r#"
        [simulation]
        duration = "3000cycles"
        warmup = "1000cycles"
        time_unit = "cycles"
        [topology]
        type = "dragonfly"
        hosts_per_switch = 2
        switches_per_group = 4
        global_links_per_switch = 2
        [links]
        host = { rate = "1phit/cycle", latency = "1cycle" }
        switch = { rate = "1phit/cycle", latency = "1cycle" }
        [switch]
        vcs = 4
        input_buffer = "64phits"
        output_buffer = "64phits"
        crossbar = "per_vc"
        latency = "1cycle"
        [routing]
        type = "ugal"
        [nic]
        mtu = "8phits"
        [traffic]
        load = 0.6
        message_size = "8phits"
        pattern = { type = "shift", offset = 8 }
    "#;
    let voq = run(dragonfly, &[("switch.input_queuing", "voq")]);
    let fifo = run(dragonfly, &[]).summary.accepted_load;
    assert!(voq.summary.counters["nonminimal_packets"] > 0, "{:?}", voq.summary.counters);
    let accepted = voq.summary.accepted_load;
    assert!(accepted > 0.4 && accepted >= fifo - 0.02, "UGAL accepted load: VoQ {accepted:.3}, FIFO {fifo:.3}");
}

#[test]
fn voq_runs_are_deterministic() {
    let o = [("switch.input_queuing", "voq"), ("traffic.load", "0.9"), ("routing.type", "updown")];
    let o = [&o[..], &[("routing.select", "adaptive")]].concat();
    let summary = || {
        let mut report = run(FAT_TREE, &o);
        report.summary.wall_seconds = 0.0;
        report.summary_json()
    };
    assert_eq!(summary(), summary());
}

#[test]
fn the_watchdog_follows_waits_through_voqs_to_a_deadlock() {
    // The ring of the watchdog tests, whose clockwise channels close a cycle and jam: with
    // VoQs, each switch's output waits for the VoQ toward the next clockwise output.
    let ring = include_str!("../configs/ring-deadlock.toml");
    let o = vec![("switch.input_queuing".to_string(), "voq".to_string())];
    let config = load_config(ring, &o, None).unwrap();
    let Err(snarl_core::Error::Deadlock(found)) = snarl_core::run(&config) else { panic!("expected a deadlock") };
    assert_eq!(found.cycles, 1, "{found}");
    assert_eq!(found.queues_on_cycles, 16, "a VoQ and an output per switch: {found}");
    let voqs: Vec<_> = found.blocked.iter().filter(|q| q.toward.is_some()).collect();
    assert!(!voqs.is_empty() && voqs.iter().all(|q| q.side == "input" && q.on_cycle), "{found}");
    assert!(found.to_string().contains("toward port"), "{found}");
}

// Hosts slower than their links (`nic.receive_cap`), the other half of the InfiniBand
// model: a host drains at most at its cap and returns credits accordingly.

/// Eight hosts on 20 Gb/s links; host 0 receives, the others send to it.
const INCAST: &str = r#"
[simulation]
duration = "1ms"
warmup = "100us"

[topology]
type = "single_switch"
hosts = 8

[links]
host = { rate = "20Gbps", latency = "100ns" }

[traffic]
load = 0.5

[[traffic.groups]]
name = "hot"
hosts = [0]
pattern = { type = "silent" }

[[traffic.groups]]
name = "senders"
rest = true
pattern = { type = "incast", destination = 0 }
"#;

#[test]
fn a_host_with_a_receive_cap_receives_at_the_cap_from_several_senders() {
    // The paper's hotspots: 13.6 Gb/s on 20 Gb/s links. `run` checks conservation and that
    // the credits of the port facing each host stay within its receive buffer.
    let capped = run(INCAST, &[("nic.receive_cap", "13.6Gbps")]);
    let hot = &capped.summary.groups["hot"];
    assert_close("received load at the cap (13.6 / 20)", hot.received_load, 0.68, 0.0068);
    assert_close("received Gb/s", hot.received_gbps, 13.6, 0.136);
    let uncapped = run(INCAST, &[]);
    assert!(uncapped.summary.groups["hot"].received_load > 0.99, "{}", uncapped.summary.groups["hot"].received_load);
    // With VoQs too, and with a cap on the senders' side of the switch as well.
    let voq = run(INCAST, &[("nic.receive_cap", "13.6Gbps"), ("switch.input_queuing", "voq")]);
    assert_close("received load at the cap, VoQ", voq.summary.groups["hot"].received_load, 0.68, 0.0068);
}

#[test]
fn a_host_with_a_receive_cap_delivers_each_packet_when_it_has_drained() {
    // Each host receives from one sender, evenly spaced packets at 5% of its link: they
    // never overlap, so a packet is delivered one drain time at the cap after its head
    // arrives instead of one serialisation: 4096 B at 13.6 Gb/s (2409.4 ns) rather than
    // 20 Gb/s (1638.4 ns).
    let light = [
        ("traffic.groups.0.pattern", "{ type = \"shift\", offset = 1 }"),
        ("traffic.load", "0.05"),
        ("traffic.process", "periodic"),
    ];
    let light =
        [&light[..], &[("traffic.groups.1.pattern", "{ type = \"shift\", offset = 1, among = \"all\" }")]].concat();
    let latency = |cap: Option<&str>| {
        let o = [&light[..], cap.map(|c| ("nic.receive_cap", c)).as_slice()].concat();
        let report = run(INCAST, &o);
        assert_close("accepted load", report.summary.accepted_load, 0.05, 0.005);
        report.summary.network_latency.mean
    };
    let extra = latency(Some("13.6Gbps")) - latency(None);
    assert_close("extra latency (ns)", extra, 2409.4 - 1638.4, 1.0);
    // A host that receives less than its cap is not slowed at all.
    assert_close("no extra latency at the link rate (ns)", latency(Some("20Gbps")) - latency(None), 0.0, 0.01);
}
