//! Load balancing on a spine-leaf of two leaves of eight hosts under one spine, four
//! links between each leaf and the spine: flowlet switching, packet spraying and the
//! per-QP planner against ECMP. The routing of a run is watched from outside the crate:
//! the routing its config builds, wrapped in a custom routing that notes every decision
//! (the wrapper decides nothing: the run is the config's own, summary for summary).

use rand_pcg::Pcg64Mcg;
use snarl_core::routing::{AnyRouting, Candidates, CustomRouting, PortView, RouteQuery, Routing};
use snarl_core::sim::Components;
use snarl_core::topology::AnyTopology;
use snarl_core::{load_config, Report, Simulation, ValidConfig};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// Leaf 0's up-ports.
const UPLINKS: std::ops::Range<u16> = 8..12;

/// The spine-leaf under a cross-leaf permutation (host i sends to host i + 8 mod 16),
/// 16 KiB messages, with `routing` (TOML keys of `[routing]`), `extra` sections and
/// `overrides` (dotted keys and TOML values).
fn config(routing: &str, load: f64, extra: &str, overrides: &[(&str, &str)]) -> ValidConfig {
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

[traffic]
load = {load}
message_size = "16KiB"
pattern = {{ type = "shift", offset = 8 }}
{extra}
"#
    );
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load_config(&text, &o, None).unwrap_or_else(|e| panic!("config: {e}"))
}

/// A decision: where a packet of which flow left which switch, when.
#[derive(Clone, Copy, Debug)]
struct Decision {
    switch: u32,
    flow: Flow,
    port: u16,
    size: u32,
}

/// The routing `inner`, noting its decisions.
struct Watched {
    inner: AnyRouting,
    log: Arc<Mutex<Vec<Decision>>>,
}

/// The switch's view, passed on to a statically dispatched routing.
struct View<'a>(&'a dyn PortView);

impl PortView for View<'_> {
    fn occupancy(&self, port: u16) -> u64 {
        self.0.occupancy(port)
    }
    fn occupancy_at(&self, switch: usize, port: u16) -> u64 {
        self.0.occupancy_at(switch, port)
    }
    fn credits_in_use(&self, port: u16) -> u64 {
        self.0.credits_in_use(port)
    }
    fn has_room(&self, port: u16, vc: u8, bytes: u64) -> bool {
        self.0.has_room(port, vc, bytes)
    }
}

impl CustomRouting for Watched {
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &dyn PortView, rng: &mut Pcg64Mcg, out: &mut Candidates) {
        self.inner.route(topo, q, &View(view), rng, out);
        assert_eq!(out.len(), 1, "one route per packet");
        let port = out.first().port;
        let d = Decision { switch: q.switch, flow: (q.src, q.dst, q.qp), port, size: q.size };
        self.log.lock().unwrap().push(d);
    }
}

/// Runs `config` with its routing watched: the report (its packets conserved, nothing
/// dropped) and every routing decision, in order.
fn watched(config: &ValidConfig) -> (Report, Vec<Decision>) {
    let topo = snarl_core::topology::build(&config.topology.shape, &config.links).unwrap();
    let inner = AnyRouting::build(&config.routing, &topo, config.switch.vcs() as usize, config.nic.mtu.0).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let routing = AnyRouting::Custom(Box::new(Watched { inner, log: log.clone() }));
    let sim = Simulation::with_components(config, Components::default().routing(routing)).unwrap();
    let report = sim.run(&mut |_| true).unwrap_or_else(|e| panic!("run: {e}"));
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped, "packet conservation");
    assert_eq!(p.dropped, 0);
    assert!(p.delivered > 1000, "{p:?}");
    let decisions = log.lock().unwrap().clone();
    (report, decisions)
}

/// The summary as JSON, wall time aside.
fn summary(mut report: Report) -> String {
    report.summary.wall_seconds = 0.0;
    report.summary_json()
}

/// Bytes and packets routed to each of `ports` of `switch`.
fn loads(decisions: &[Decision], switch: u32, ports: std::ops::Range<u16>) -> Vec<(u64, u64)> {
    ports
        .map(|port| {
            let mine = decisions.iter().filter(|d| d.switch == switch && d.port == port);
            mine.fold((0, 0), |(bytes, packets), d| (bytes + d.size as u64, packets + 1))
        })
        .collect()
}

/// Largest over smallest.
fn spread(values: &[u64]) -> f64 {
    *values.iter().max().unwrap() as f64 / *values.iter().min().unwrap().max(&1) as f64
}

/// A flow: source, destination, queue pair.
type Flow = (u32, u32, u32);

/// The up-ports of leaf 0 a flow's packets took, and how often its port changed from one
/// packet to the next.
#[derive(Debug, Default)]
struct Uplinks {
    ports: BTreeSet<u16>,
    changes: u32,
    last: Option<u16>,
}

/// The flows leaving leaf 0, and their uplinks.
fn flows_at_leaf_0(decisions: &[Decision]) -> BTreeMap<Flow, Uplinks> {
    let mut flows: BTreeMap<Flow, Uplinks> = BTreeMap::new();
    for d in decisions.iter().filter(|d| d.switch == 0 && UPLINKS.contains(&d.port)) {
        let flow = flows.entry(d.flow).or_default();
        flow.changes += flow.last.is_some_and(|last| last != d.port) as u32;
        flow.last = Some(d.port);
        flow.ports.insert(d.port);
    }
    flows
}

#[test]
fn the_watched_routing_is_the_configs_own() {
    let config = config("type = \"flowlet\"\ngap = \"2us\"", 0.5, "", &[]);
    let (report, _) = watched(&config);
    assert_eq!(summary(report), summary(snarl_core::run(&config).unwrap()));
}

/// A gap longer than the run never ends a flowlet: every packet takes ECMP's port, and
/// no random number is drawn, so the whole run is ECMP's, byte for byte. A shorter gap
/// changes it.
#[test]
fn flowlet_with_a_gap_longer_than_the_run_is_ecmp() {
    for hash in ["five_tuple", "qp"] {
        let ecmp =
            summary(snarl_core::run(&config(&format!("type = \"ecmp\"\nhash = \"{hash}\""), 0.5, "", &[])).unwrap());
        let long = config(&format!("type = \"flowlet\"\ngap = \"1ms\"\nhash = \"{hash}\""), 0.5, "", &[]);
        assert_eq!(summary(snarl_core::run(&long).unwrap()), ecmp, "hash {hash}");
        let short = config(&format!("type = \"flowlet\"\ngap = \"1us\"\nhash = \"{hash}\""), 0.5, "", &[]);
        assert_ne!(summary(snarl_core::run(&short).unwrap()), ecmp, "hash {hash}");
    }
}

/// At load 0.3 a source pauses between its messages (a Bernoulli slot of one message
/// time, 1.3 us, is empty 7 times in 10): with a 1 us gap every flow of leaf 0 moves
/// between up-ports at its pauses (339 changes over 531 messages); with a gap longer
/// than the run none ever does.
#[test]
fn flowlet_moves_flows_at_their_pauses() {
    let (_, short) = watched(&config("type = \"flowlet\"\ngap = \"1us\"", 0.3, "", &[]));
    let flows = flows_at_leaf_0(&short);
    assert_eq!(flows.len(), 8);
    let changes: u32 = flows.values().map(|f| f.changes).sum();
    let messages = short.iter().filter(|d| d.switch == 0 && UPLINKS.contains(&d.port)).count() as u32 / 4;
    // A new flowlet takes a port at random, a different one three times in four; most
    // messages follow a pause, and a message's packets delayed in a queue on their way
    // may start a flowlet too.
    assert!(changes > messages / 4 && changes < messages, "{changes} changes over {messages} messages");
    assert!(flows.values().all(|f| f.ports.len() == 4), "{flows:?}");
    let (_, long) = watched(&config("type = \"flowlet\"\ngap = \"1ms\"", 0.3, "", &[]));
    assert!(flows_at_leaf_0(&long).values().all(|f| f.ports.len() == 1 && f.changes == 0));
}

/// Random spraying spreads a permutation's packets over every uplink of both leaves and
/// every link down from the spine, within 5% of each other, where ECMP's hash puts
/// several flows on some uplinks and one on others; round robin balances them exactly
/// (packet counts within one).
#[test]
fn spraying_spreads_a_permutation_over_every_link() {
    // 2 ms on uplinks of 200 Gb/s: every flow gets what it offers, and each link
    // carries over ten thousand packets.
    let run = |routing: &str| {
        let fast = [("links.switch", "{ rate = \"200Gbps\", latency = \"50ns\" }"), ("simulation.duration", "\"2ms\"")];
        watched(&config(routing, 0.9, "", &fast))
    };
    let (_, ecmp) = run("type = \"ecmp\"");
    let ecmp_bytes: Vec<u64> = loads(&ecmp, 0, UPLINKS).iter().map(|l| l.0).collect();
    let flows: Vec<usize> =
        UPLINKS.map(|p| flows_at_leaf_0(&ecmp).values().filter(|f| f.ports.contains(&p)).count()).collect();
    assert!(spread(&ecmp_bytes) > 1.5 && flows.iter().max() > Some(&2), "ECMP: {ecmp_bytes:?}, flows {flows:?}");
    let (random_report, random) = run("type = \"spray\"\nmode = \"random\"");
    let (robin_report, robin) = run("type = \"spray\"\nmode = \"round_robin\"");
    // Leaf 0 and leaf 1 up; the spine (switch 2) down to leaf 0 and to leaf 1.
    for (switch, ports) in [(0, UPLINKS), (1, UPLINKS), (2, 0..4), (2, 4..8)] {
        let bytes: Vec<u64> = loads(&random, switch, ports.clone()).iter().map(|l| l.0).collect();
        assert!(spread(&bytes) < 1.05, "random, switch {switch}: {bytes:?}");
        let packets: Vec<u64> = loads(&robin, switch, ports.clone()).iter().map(|l| l.1).collect();
        let (most, least) = (packets.iter().max().unwrap(), packets.iter().min().unwrap());
        assert!(most - least <= 1 && *least > 10_000, "round robin, switch {switch}: {packets:?}");
    }
    // Every flow's packets took every uplink.
    assert!(flows_at_leaf_0(&robin).values().all(|f| f.ports.len() == 4));
    // Round robin carries all that is offered. Random choices queue up on one uplink now
    // and then, and a FIFO input whose head waits for it holds up the packets behind
    // (0.56 of 0.91 here; VoQ switches carry 0.88).
    let s = &robin_report.summary;
    assert!(s.accepted_load > 0.99 * s.offered_load, "{} of {}", s.accepted_load, s.offered_load);
    assert!(random_report.summary.accepted_load > 0.5, "{}", random_report.summary.accepted_load);
}

/// Random spraying draws as up/down's random choice does: the same run, summary for
/// summary (spraying counts the receivers' reordering: up/down is asked to count it too).
#[test]
fn random_spraying_is_updowns_random_choice() {
    let spray = summary(snarl_core::run(&config("type = \"spray\"\nmode = \"random\"", 0.9, "", &[])).unwrap());
    let counted = [("nic.receiver", "\"out_of_order\"")];
    let updown =
        summary(snarl_core::run(&config("type = \"updown\"\nselect = \"random\"", 0.9, "", &counted)).unwrap());
    assert_eq!(spray, updown);
}

/// Four long flows from leaf 0 to leaf 1, from hosts 0 to 3 to hosts 8 to 11. ECMP's hash
/// puts three of them on one uplink (the control: they share it, and the group carries
/// 0.5); the planner gives each its own uplink and its own link down from the spine, and
/// each flow its link rate.
#[test]
fn the_planner_gives_concurrent_qps_distinct_uplinks() {
    let four = r#"
[[traffic.groups]]
name = "long"
count = 4
placement = "contiguous"
load = 1.0
message_size = "64KiB"
pattern = { type = "shift", offset = 8 }
"#;
    // The default group (the other hosts) sends nothing.
    let silent = |routing: &str| config(routing, 1.0, four, &[("traffic.pattern", "{ type = \"silent\" }")]);
    let (ecmp_report, ecmp) = watched(&silent("type = \"ecmp\""));
    let (planner_report, planner) = watched(&silent("type = \"planner\""));
    let ecmp_flows = flows_at_leaf_0(&ecmp);
    let planner_flows = flows_at_leaf_0(&planner);
    assert_eq!(ecmp_flows.len(), 4, "{ecmp_flows:?}");
    let used =
        |flows: &BTreeMap<Flow, Uplinks>| flows.values().flat_map(|f| f.ports.clone()).collect::<BTreeSet<u16>>();
    assert!(used(&ecmp_flows).len() < 4, "ECMP collides: {ecmp_flows:?}");
    assert!(planner_flows.values().all(|f| f.ports.len() == 1 && f.changes == 0), "{planner_flows:?}");
    assert_eq!(used(&planner_flows).len(), 4, "{planner_flows:?}");
    let down: BTreeSet<u16> = planner.iter().filter(|d| d.switch == 2).map(|d| d.port).collect();
    assert_eq!(down, (4..8).collect(), "the spine plans its links down to leaf 1");
    let group = |r: &Report| r.summary.groups["long"].accepted_load;
    assert!(group(&planner_report) > 0.95, "planner: {}", group(&planner_report));
    assert!(group(&ecmp_report) < 0.9, "ECMP: {}", group(&ecmp_report));
}

/// A cross-leaf permutation on uplinks fast enough to carry it (200 Gb/s: a leaf's four
/// carry its eight hosts): the planner spreads each leaf's eight flows two per uplink and
/// two per link down, and carries all of it; ECMP's collisions cap it at 0.6.
#[test]
fn the_planner_carries_a_permutation_ecmp_cannot() {
    let fast = |routing: &str| {
        let c = config(routing, 1.0, "", &[("links.switch", "{ rate = \"200Gbps\", latency = \"50ns\" }")]);
        let (report, decisions) = watched(&c);
        (report.summary.accepted_load, decisions)
    };
    let (ecmp, _) = fast("type = \"ecmp\"");
    let (planner, decisions) = fast("type = \"planner\"");
    for (switch, ports) in [(0, UPLINKS), (1, UPLINKS), (2, 0..4), (2, 4..8)] {
        let per_port: Vec<usize> = ports
            .map(|p| {
                let flows: BTreeSet<_> =
                    decisions.iter().filter(|d| d.switch == switch && d.port == p).map(|d| d.flow).collect();
                flows.len()
            })
            .collect();
        assert_eq!(per_port, [2, 2, 2, 2], "switch {switch}");
    }
    assert!(planner > 0.9 && planner > ecmp + 0.1, "planner {planner}, ECMP {ecmp}");
}
