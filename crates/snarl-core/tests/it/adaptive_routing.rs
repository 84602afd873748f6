//! Adaptive routing driven by telemetry (`[routing] type = "adaptive"`, CONGA-like) on the
//! fabric of the NCCL spine-leaf test report: two leaves of eight 400 Gb/s hosts, one
//! spine, four 800 Gb/s links between each leaf and the spine, 560 ns switches. The
//! routing of a run is watched from outside the crate: the routing its config builds,
//! wrapped in a custom routing that notes where every packet leaves each switch (the
//! wrapper decides nothing: the run is the config's own, summary for summary).

use rand_pcg::Pcg64Mcg;
use snarl_core::routing::{AnyRouting, Candidates, CustomRouting, Departure, PortView, RouteQuery, Routing};
use snarl_core::sim::Components;
use snarl_core::topology::AnyTopology;
use snarl_core::traffic::jobs::JobSummary;
use snarl_core::{load_config, Report, Simulation, ValidConfig};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Leaf 0's up-ports.
const UPLINKS: std::ops::Range<u16> = 8..12;

/// The report's fabric (as `wire.rs` models it), without traffic.
const FABRIC: &str = r#"
seed = 1

[simulation]
duration = "300us"
warmup = "50us"

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

[nic]
mtu = "4KiB"
"#;

/// A cross-leaf permutation of long flows: every host sends to the host 8 places on,
/// back to back (64 KiB messages at load 1.0), so host i of leaf 0 sends to host i of
/// leaf 1 and back: 8 flows each way over 4 uplinks of twice the host rate.
const PERMUTATION: &str = r#"
[traffic]
load = 1.0
message_size = "64KiB"
pattern = { type = "shift", offset = 8 }
"#;

/// `FABRIC` with `routing` (the keys of `[routing]`), `traffic` and `overrides`.
fn config(routing: &str, traffic: &str, overrides: &[(&str, &str)]) -> ValidConfig {
    let text = format!("{FABRIC}\n[routing]\n{routing}\n{traffic}");
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load_config(&text, &o, None).unwrap_or_else(|e| panic!("config: {e}"))
}

/// NCCL's AllReduce between the two nodes, one ring per GPU pair: 8 jobs of two ranks,
/// host i and host i + 8, each step both ranks sending to each other at once, a barrier
/// between iterations. A flow pauses at every step's end (the next starts once the
/// step's messages are delivered), where a new flowlet may take another path.
fn all_reduce_pairs(size: &str) -> String {
    let mut text = String::from("[workload]\ntype = \"jobs\"\n");
    for i in 0..8 {
        text += &format!(
            "[[workload.jobs]]\nname = \"pair{i}\"\ncollective = \"allreduce\"\nsize = \"{size}\"\nnodes = [{i}, {}]\niterations = 12\nwarmup = 2\n",
            i + 8
        );
    }
    text
}

/// Where packets left the switches, and how many reached their host out of order.
#[derive(Default)]
struct Log {
    /// (switch, port, source, destination) of every departure, in order.
    departures: Vec<(u32, u16, u32, u32)>,
    /// Per flow (source, destination): the packets that left the source leaf and have not
    /// yet left for the host, in the order they left.
    on_the_way: HashMap<(u32, u32), VecDeque<u32>>,
    reordered: u64,
}

/// The routing `inner`, noting what it hears of departures.
struct Watched {
    inner: AnyRouting,
    log: Arc<Mutex<Log>>,
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
    }

    fn offers_choices(&self) -> bool {
        self.inner.offers_choices()
    }

    /// It hears of every departure, whether its routing does or not.
    fn measures(&self) -> bool {
        true
    }

    fn departed(&mut self, topo: &AnyTopology, d: &Departure) {
        self.inner.departed(topo, d);
        let mut log = self.log.lock().unwrap();
        log.departures.push((d.switch, d.port, d.src, d.dst));
        let flow = log.on_the_way.entry((d.src, d.dst)).or_default();
        if d.hops == 0 && !d.to_host {
            flow.push_back(d.packet);
        } else if d.to_host && d.hops > 0 {
            let at = flow.iter().position(|&id| id == d.packet).expect("a packet that left its source leaf");
            flow.remove(at);
            log.reordered += (at != 0) as u64;
        }
    }
}

/// Runs `config` with its routing watched: the report (its packets conserved, nothing
/// dropped) and the log.
fn watched(config: &ValidConfig) -> (Report, Log) {
    let topo = snarl_core::topology::build(&config.topology.shape, &config.links).unwrap();
    let inner = AnyRouting::build(&config.routing, &topo, config.switch.vcs() as usize, config.nic.frame()).unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let routing = AnyRouting::Custom(Box::new(Watched { inner, log: log.clone() }));
    let sim = Simulation::with_components(config, Components::default().routing(routing)).unwrap();
    let report = sim.run(&mut |_| true).unwrap_or_else(|e| panic!("run: {e}"));
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped, "packet conservation");
    assert_eq!(p.dropped, 0);
    assert!(p.delivered > 1000, "{p:?}");
    let log = std::mem::take(&mut *log.lock().unwrap());
    (report, log)
}

/// The summary as JSON, wall time aside.
fn summary(mut report: Report) -> String {
    report.summary.wall_seconds = 0.0;
    report.summary_json()
}

/// Per flow leaving leaf 0 (source, destination): the uplinks its packets took.
fn uplinks_of_leaf_0(log: &Log) -> BTreeMap<(u32, u32), BTreeSet<u16>> {
    let mut flows: BTreeMap<(u32, u32), BTreeSet<u16>> = BTreeMap::new();
    for &(switch, port, src, dst) in &log.departures {
        if switch == 0 && UPLINKS.contains(&port) {
            flows.entry((src, dst)).or_default().insert(port);
        }
    }
    flows
}

/// The mean bus bandwidth of the jobs of a run (GB/s).
fn busbw(report: &Report) -> f64 {
    let jobs: BTreeMap<String, JobSummary> = report.summary.section("jobs").expect("a jobs section");
    jobs.values().map(|j| j.busbw.expect("measured iterations")).sum::<f64>() / jobs.len() as f64
}

#[test]
fn the_watched_routing_is_the_configs_own() {
    for routing in ["type = \"adaptive\"", "type = \"adaptive\"\nmode = \"packet\""] {
        let config = config(routing, PERMUTATION, &[("simulation.duration", "\"100us\"")]);
        let (report, _) = watched(&config);
        assert_eq!(summary(report), summary(snarl_core::run(&config).unwrap()), "{routing}");
    }
}

/// The cross-leaf permutation of long flows. ECMP's hash puts three of leaf 0's eight
/// flows on one uplink and one on another (the control: 0.60 of the load crosses);
/// adaptive routing per packet carries all of it. Per flowlet it cannot: flows that
/// never pause never start a new flowlet, so each keeps the uplink its first packet
/// took, drawn at random among the idle uplinks, which collide as ECMP's do (0.56).
#[test]
fn per_packet_adaptive_routing_carries_a_permutation_ecmp_cannot() {
    let run = |routing: &str| watched(&config(routing, PERMUTATION, &[]));
    let (ecmp, ecmp_log) = run("type = \"ecmp\"");
    let per_uplink = |log: &Log| {
        let flows = uplinks_of_leaf_0(log);
        UPLINKS.map(|p| flows.values().filter(|ports| ports.contains(&p)).count()).collect::<Vec<_>>()
    };
    let ecmp_flows = per_uplink(&ecmp_log);
    assert!(ecmp_flows.iter().max() >= Some(&3), "ECMP collides: {ecmp_flows:?}");
    let s = &ecmp.summary;
    assert!(s.accepted_load < 0.7 * s.offered_load, "ECMP: {} of {}", s.accepted_load, s.offered_load);

    let (packet, packet_log) = run("type = \"adaptive\"\nmode = \"packet\"");
    let s = &packet.summary;
    assert!(s.accepted_load >= 0.97 * s.offered_load, "per packet: {} of {}", s.accepted_load, s.offered_load);
    assert!(uplinks_of_leaf_0(&packet_log).values().all(|ports| ports.len() == 4), "every flow on every uplink");

    let (flowlet, flowlet_log) = run("type = \"adaptive\"");
    assert!(uplinks_of_leaf_0(&flowlet_log).values().all(|ports| ports.len() == 1), "one uplink per flow");
    let collided = per_uplink(&flowlet_log);
    assert!(collided.iter().max() >= Some(&3), "{collided:?}");
    let s = &flowlet.summary;
    assert!(s.accepted_load < 0.7 * s.offered_load, "per flowlet: {} of {}", s.accepted_load, s.offered_load);
}

/// Per packet, a flow's packets take every uplink and some arrive out of order (the
/// receiver places them: nothing is lost, every packet is delivered or still on its way;
/// the run checks the invariants). At load 0.6 (Bernoulli arrivals) the uplinks' queues
/// differ and a packet now and then overtakes an earlier one of its flow; at load 1.0 the
/// eight flows keep all four uplinks evenly busy and none does. With a gap longer than
/// the run a flow never changes paths, and its packets arrive in order.
#[test]
fn per_packet_mode_delivers_everything_and_reorders() {
    let traffic = PERMUTATION.replace("load = 1.0", "load = 0.6");
    let (packet, log) = watched(&config("type = \"adaptive\"\nmode = \"packet\"", &traffic, &[]));
    let s = &packet.summary;
    assert!(s.accepted_load > 0.97 * s.offered_load, "{} of {}", s.accepted_load, s.offered_load);
    assert!(uplinks_of_leaf_0(&log).values().all(|ports| ports.len() == 4), "every flow on every uplink");
    let p = &s.packets;
    assert!(log.reordered > 10 && log.reordered < p.delivered / 10, "{} of {p:?} out of order", log.reordered);
    let (_, pinned) = watched(&config("type = \"adaptive\"\ngap = \"1ms\"", &traffic, &[]));
    assert_eq!(pinned.reordered, 0);
}

/// Feedback rides on the traffic going back: a destination leaf tells a source leaf
/// what its packets met only on packets to that leaf. With leaf 1's hosts silent, leaf
/// 0 never hears anything and routes as it does on its own links' utilisation alone,
/// summary for summary; with traffic back, what it hears changes its choices.
#[test]
fn feedback_needs_traffic_back() {
    let one_way = r#"
[traffic]
load = 1.0
message_size = "64KiB"
pattern = { type = "silent" }

[[traffic.groups]]
name = "leaf0"
count = 8
placement = "contiguous"
load = 0.9
pattern = { type = "shift", offset = 8, among = "all" }
"#;
    let run = |telemetry: &str, traffic: &str| {
        let routing = format!("type = \"adaptive\"\ngap = \"1us\"\ntelemetry = \"{telemetry}\"");
        summary(snarl_core::run(&config(&routing, traffic, &[])).unwrap())
    };
    assert_eq!(run("feedback", one_way), run("local", one_way));
    let both_ways = one_way.replace("pattern = { type = \"silent\" }", "pattern = { type = \"shift\", offset = 8 }");
    assert_ne!(run("feedback", &both_ways), run("local", &both_ways));
}

/// The report's AllReduce, a ring per GPU pair. Flows pause at the end of every step, and
/// a new flowlet takes the least congested path: adaptive routing moves flows off the
/// uplinks ECMP's hash makes them share and carries more. With a gap longer than the
/// run no flow ever changes paths: each keeps its first uplink, drawn at random among
/// idle ones, and the pairs get what ECMP gives them.
#[test]
fn flowlets_at_step_ends_let_adaptive_routing_beat_ecmp_and_a_gap_longer_than_the_run_does_not() {
    let run = |routing: &str| {
        let c = config(routing, &all_reduce_pairs("4MiB"), &[("simulation.duration", "\"20ms\"")]);
        watched(&c)
    };
    let (ecmp, _) = run("type = \"ecmp\"");
    let (adaptive, moving) = run("type = \"adaptive\"");
    let (pinned, still) = run("type = \"adaptive\"\ngap = \"1ms\"");
    let (ecmp, adaptive, pinned) = (busbw(&ecmp), busbw(&adaptive), busbw(&pinned));
    assert!(adaptive > 1.15 * ecmp, "adaptive {adaptive:.1} GB/s, ECMP {ecmp:.1}");
    assert!(uplinks_of_leaf_0(&moving).values().any(|ports| ports.len() > 1));
    assert!(uplinks_of_leaf_0(&still).values().all(|ports| ports.len() == 1));
    assert!((pinned / ecmp - 1.0).abs() < 0.15, "one path per flow {pinned:.1} GB/s, ECMP {ecmp:.1}");
    assert!(adaptive > 1.15 * pinned, "adaptive {adaptive:.1} GB/s, one path per flow {pinned:.1}");
}

/// What only telemetry from beyond the source leaf can tell: three leaves of four hosts
/// under two spines, one 800 Gb/s link per leaf and spine. A host of leaf 2 sends to
/// host 4 (leaf 1) without pause, through one spine; three hosts of leaf 0 send to the
/// other three of leaf 1 (0.8 of their links, back to back) and leaf 1's hosts answer
/// at 0.2. Leaf 1's links from the spines carry 1.6 Tb/s: room for all of it only if one
/// of leaf 0's flows, no more, crosses the spine leaf 2's flow takes. Leaf 0's own links
/// cannot tell the spines apart; with `instant` telemetry it sees that spine's link to
/// leaf 1 loaded, and carries all it offers. Its flows never pause, so each decides
/// once, at its first packet, before any feedback has come back: with `feedback`
/// telemetry the run is `local`'s, summary for summary, and with this seed two of its
/// flows share the loaded spine (with seed 2 the draw happens to be right for all three).
#[test]
fn knowing_the_path_beyond_the_leaf_matters_and_feedback_comes_too_late_for_flows_that_never_pause() {
    let text = r#"
seed = 1

[simulation]
duration = "1ms"
warmup = "100us"

[topology]
type = "spine_leaf"
leaves = 3
spines = 2
hosts_per_leaf = 4
links_per_pair = 1

[links]
host = { rate = "400Gbps", latency = "15ns" }
switch = { rate = "800Gbps", latency = "15ns" }

[switch]
type = "ioq"
input_buffer = "256KiB"
output_buffer = "256KiB"
latency = "560ns"

[nic]
mtu = "4KiB"

[traffic]
load = 0.3
message_size = "64KiB"
process = "periodic"
pattern = { type = "silent" }

[[traffic.groups]]
name = "a"
hosts = [0, 1, 2]
load = 0.8
message_size = "256KiB"
pattern = { type = "shift", offset = 5, among = "all" }

[[traffic.groups]]
name = "c"
hosts = [8]
load = 1.0
message_size = "1MiB"
pattern = { type = "incast", destination = 4 }

[[traffic.groups]]
name = "back"
hosts = [5, 6, 7]
load = 0.2
pattern = { type = "shift", offset = 7, among = "all" }
"#;
    let a = |telemetry: &str| {
        let o = [("routing".to_string(), format!("{{ type = \"adaptive\", telemetry = \"{telemetry}\" }}"))];
        let report = snarl_core::run(&load_config(text, &o, None).unwrap()).unwrap();
        let g = &report.summary.groups["a"];
        let c = &report.summary.groups["c"];
        assert!(c.accepted_load > 0.99 * c.offered_load, "leaf 2's flow: {c:?}");
        (g.accepted_load / g.offered_load, summary(report))
    };
    let (instant, _) = a("instant");
    let (local, local_run) = a("local");
    let (feedback, feedback_run) = a("feedback");
    assert!(instant > 0.99, "instant: {instant}");
    assert!(local < 0.8, "local: {local}");
    assert!(feedback == local && feedback_run == local_run, "feedback: {feedback}, local {local}");
}

#[test]
fn the_same_seed_gives_the_same_summary() {
    for routing in ["type = \"adaptive\"\ngap = \"1us\"", "type = \"adaptive\"\nmode = \"packet\""] {
        let once = |seed: &str| {
            let c = config(routing, PERMUTATION, &[("seed", seed), ("simulation.duration", "\"100us\"")]);
            summary(snarl_core::run(&c).unwrap())
        };
        assert_eq!(once("1"), once("1"), "{routing}");
        // Ties are drawn from the routing's random stream, which the seed sets.
        assert_ne!(once("1"), once("2"), "{routing}");
    }
}
