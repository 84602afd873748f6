//! Nodes of several GPUs (`topology.gpus_per_node`): the node -> endpoints map, the
//! intra-node link (messages between GPUs of one node never enter the network, and take
//! size / rate + latency on it), jobs whose ranks are GPUs numbered node-major, and bad
//! input refused at its key.

use crate::common::*;
use snarl_core::kernel::Timer;
use snarl_core::packet::Tag;
use snarl_core::topology::{self, Endpoint, Topology};
use snarl_core::traffic::{AnyWorkload, Env, GroupView, MessageDone, Workload};
use snarl_core::{load_config, Error, Report, Simulation};
use std::sync::{Arc, Mutex};

/// A spine-leaf of 2 leaves with 8 hosts each, `gpus` endpoints per node.
fn spine_leaf(gpus: u32) -> String {
    format!(
        "[simulation]\nduration = \"100us\"\n[topology]\ntype = \"spine_leaf\"\nleaves = 2\nspines = 2\n\
         hosts_per_leaf = 8\ngpus_per_node = {gpus}\n[traffic]\nload = 0.5\n"
    )
}

/// "2 nodes x 8 GPUs" puts one node on each leaf, "4 x 4" two per leaf, "8 x 2" four.
#[test]
fn nodes_are_consecutive_endpoints_under_one_leaf() {
    for (nodes_count, gpus, per_leaf) in [(2, 8, 1), (4, 4, 2), (8, 2, 4)] {
        let config = load_config(&spine_leaf(gpus), &[], None).unwrap();
        let nodes = config.topology.nodes();
        assert_eq!((nodes.count(), nodes.gpus_per_node()), (nodes_count, gpus));
        let fabric = topology::build(&config.topology.shape, &config.links).unwrap();
        let leaf = |e: u32| match fabric.attachment(e as usize) {
            Endpoint::Switch { switch, .. } => switch,
            other => panic!("endpoint {e} on {other:?}"),
        };
        let mut nodes_on_leaf = [0; 2];
        for node in 0..nodes.count() as u32 {
            let endpoints: Vec<u32> = nodes.endpoints_of(node).collect();
            assert_eq!(endpoints, (node * gpus..(node + 1) * gpus).collect::<Vec<_>>());
            assert!(endpoints.iter().all(|&e| nodes.node_of(e) == node && leaf(e) == leaf(endpoints[0])));
            nodes_on_leaf[leaf(endpoints[0]) as usize] += 1;
        }
        assert_eq!(nodes_on_leaf, [per_leaf; 2], "{nodes_count} x {gpus}");
    }
}

/// Every fabric type takes `gpus_per_node`: open-loop uniform traffic among all
/// endpoints sends some messages inside nodes, over the intra-node link, the rest over
/// the network; every message is accounted for (the run's end checks conservation),
/// and a seed gives one summary.
#[test]
fn every_fabric_type_has_gpu_nodes() {
    let fabrics = [
        "type = \"back_to_back\"",
        "type = \"single_switch\"\nhosts = 8",
        "type = \"spine_leaf\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4",
        "type = \"fat_tree\"\nradix = 4\nlevels = 2",
        "type = \"k_ary_n_tree\"\nk = 2\nn = 3",
        "type = \"xgft\"\nchildren = [4, 2]\nparents = [1, 2]",
        "type = \"dragonfly\"\nhosts_per_switch = 2\nswitches_per_group = 2\nglobal_links_per_switch = 1",
        "type = \"megafly\"\nleaves_per_group = 2\nspines_per_group = 1\nhosts_per_leaf = 2\nglobal_links_per_spine = 2",
        "type = \"hyperx\"\nsides = [2, 2]\nhosts_per_switch = 2",
        "type = \"torus\"\nsides = [3]\nhosts_per_switch = 2",
        "type = \"mesh\"\nsides = [2, 2]\nhosts_per_switch = 2",
    ];
    for fabric in fabrics {
        let direct = !fabric.contains("single")
            && !fabric.contains("back")
            && !fabric.contains("tree")
            && !fabric.contains("spine_leaf")
            && !fabric.contains("xgft");
        let routing = if direct { "[routing]\ntype = \"minimal\"\n[switch]\nvcs = 4\n" } else { "" };
        let text = format!(
            "[simulation]\nduration = \"20us\"\n[topology]\n{fabric}\ngpus_per_node = 2\n{routing}\
             [traffic]\nload = 0.5\n"
        );
        let config = load_config(&text, &[], None).unwrap_or_else(|e| panic!("{fabric}: {e}"));
        let mut report = snarl_core::run(&config).unwrap_or_else(|e| panic!("{fabric}: {e}"));
        let c = &report.summary.counters;
        assert!(c["intra_node_messages"] > 0, "{fabric}: {c:?}");
        let p = &report.summary.packets;
        assert_eq!((p.injected, p.dropped), (p.delivered + p.in_flight, 0), "{fabric}");
        if fabric.contains("back_to_back") {
            assert_eq!(p.injected, 0, "two GPUs of one node: nothing enters the network");
        } else {
            assert!(p.delivered > 0, "{fabric}: the network carried the rest");
        }
        let mut again = snarl_core::run(&config).unwrap();
        report.summary.wall_seconds = 0.0;
        again.summary.wall_seconds = 0.0;
        assert_eq!(report.summary_json(), again.summary_json(), "{fabric}: one seed, one summary");
    }
}

/// Posts `(at, src, dst, bytes)` messages at their times and records what completes.
struct Script {
    posts: Vec<(u64, u32, u32, u64)>,
    hosts: Vec<u32>,
    host_group: Vec<u16>,
    seen: Arc<Mutex<Vec<MessageDone>>>,
}

impl Workload for Script {
    fn start(&mut self, env: &mut Env) {
        for (i, &(at, ..)) in self.posts.iter().enumerate() {
            env.set_timer(at, i as u32, 0, 0);
        }
    }

    fn timer(&mut self, env: &mut Env, timer: Timer) {
        let (_, src, dst, bytes) = self.posts[timer.owner as usize];
        assert!(env.post(src, dst, bytes, 0, Tag { job: timer.owner as u16, step: 0 }, 0));
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn message_done(&mut self, env: &mut Env, done: MessageDone) {
        assert_eq!(done.at, env.now(), "a completion is handed over at its time");
        self.seen.lock().unwrap().push(done);
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        vec![GroupView { name: "all", hosts: &self.hosts }]
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }
}

/// Runs `posts` on `text`'s fabric; the report and the completions by tag (post index).
fn script(text: &str, hosts: u32, posts: &[(u64, u32, u32, u64)]) -> (Report, Vec<MessageDone>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let work = Script {
        posts: posts.to_vec(),
        hosts: (0..hosts).collect(),
        host_group: vec![0; hosts as usize],
        seen: seen.clone(),
    };
    let config = load_config(text, &[], None).unwrap();
    let simulation = Simulation::with_workload(&config, AnyWorkload::Custom(Box::new(work))).unwrap();
    let report = simulation.run(&mut |_| true).unwrap();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_by_key(|d| d.tag.job);
    (report, seen)
}

const US: u64 = 1_000_000;

/// One node of 8 GPUs on a switch, with an intra-node link of 400 GB/s and 500 ns.
fn one_node() -> String {
    "[simulation]\nduration = \"100us\"\n[topology]\ntype = \"single_switch\"\nhosts = 8\ngpus_per_node = 8\n\
     [links]\nintra_node = { rate = \"400GB/s\", latency = \"500ns\" }\n[traffic]\nload = 0.5\n"
        .to_string()
}

/// A message alone takes size / rate + latency, whole; a second one from the same GPU
/// waits for the first on the sender's port, and one from another GPU to the same
/// receiver waits on the receiver's port. None of them touches the network.
#[test]
fn an_intra_node_message_takes_size_over_rate_plus_latency() {
    let mib = 1 << 20;
    // 1 MiB at 400 GB/s: 8,388,608 bits / 3.2 Tb/s = 2,621,440 ps exactly.
    let serial = 2_621_440;
    let latency = 500_000;
    let posts = [(US, 0, 1, mib), (US, 0, 2, mib), (US, 3, 1, mib), (20 * US, 4, 5, 1000), (20 * US, 6, 6, 4096)];
    let (report, seen) = script(&one_node(), 8, &posts);
    let at: Vec<u64> = seen.iter().map(|d| d.at).collect();
    // 1000 B at 400 GB/s: 2.5 ns.
    let small = 2_500;
    assert_eq!(
        at[..4],
        [US + serial + latency, US + 2 * serial + latency, US + 2 * serial + latency, 20 * US + small + latency],
        "{seen:?}"
    );
    for (d, &(created, src, dst, size)) in seen.iter().zip(&posts) {
        assert_eq!((d.created, d.src, d.dst, d.size), (created, src, dst, size));
    }
    let c = &report.summary.counters;
    assert_eq!((c["intra_node_messages"], c["intra_node_bytes"]), (4, 3 * mib + 1000));
    // A GPU's message to itself is no intra-node message: it takes the network, as with
    // one GPU per node.
    assert_eq!(report.summary.packets.injected, 1);
    assert_eq!((c["messages_generated"], c["messages_delivered"]), (5, 5));
    assert_eq!(report.summary.packet_hops, 2, "only the self-addressed packet crossed links");
}

/// With one GPU per node the same messages take the network and the summary has no
/// intra-node keys (every existing summary keeps its keys).
#[test]
fn one_gpu_per_node_keeps_the_network_and_the_summary() {
    let text = one_node().replace("gpus_per_node = 8", "gpus_per_node = 1");
    let (report, seen) = script(&text, 8, &[(US, 0, 1, 1 << 20), (US, 3, 1, 4096)]);
    assert_eq!(seen.len(), 2);
    let c = &report.summary.counters;
    assert!(!c.contains_key("intra_node_messages") && !c.contains_key("intra_node_bytes"), "{c:?}");
    assert_eq!(report.summary.packets.delivered, 257, "256 + 1 packets of 4 KiB");
}

/// `hosts` endpoints on one switch, `gpus` to a node, running one victim job of
/// `collective` over `size` on `nodes` (its nodes; ranks are their GPUs).
fn job_on_one_switch(hosts: u32, gpus: u32, collective: &str, size: &str, nodes: &str) -> String {
    format!(
        "[simulation]\nduration = \"100ms\"\n[topology]\ntype = \"single_switch\"\nhosts = {hosts}\n\
         gpus_per_node = {gpus}\n[workload]\ntype = \"jobs\"\n[[workload.jobs]]\nname = \"job\"\n\
         collective = \"{collective}\"\nsize = \"{size}\"\nnodes = {nodes}\niterations = 3\nwarmup = 1\n"
    )
}

/// One node of 8 GPUs runs a ring AllGather: every message stays on the intra-node link
/// (no packet enters the network), and each of the 7 steps takes exactly one block's
/// serialisation at 450 GB/s plus the link's 300 ns.
#[test]
fn a_ring_allgather_inside_one_node_never_touches_the_network() {
    let config = load_config(&job_on_one_switch(8, 8, "allgather", "8MiB", "\"all\""), &[], None).unwrap();
    let report = snarl_core::run(&config).unwrap();
    let s = &report.summary;
    assert_eq!((s.packet_hops, s.packets.injected), (0, 0), "nothing entered the network");
    let j = job(&report, "job");
    assert_eq!((j.ranks, j.iterations), (8, 2));
    // A block of 1 MiB at 3.6 Tb/s, rounded up to the picosecond as the link does.
    let block_ps = ((1u128 << 20) * 8 * 1_000_000_000_000).div_ceil(3_600_000_000_000) as u64;
    let want_ns = 7.0 * (block_ps + 300_000) as f64 / 1000.0;
    for (what, got) in [("time", j.time), ("fastest", j.time_min), ("slowest", j.time_max)] {
        assert_close(what, got.unwrap(), want_ns, 1e-6);
    }
    assert_close("busbw (GB/s)", j.busbw.unwrap(), 7.0 / 8.0 * (8 << 20) as f64 / want_ns, 1e-9);
    // Three iterations of a barrier (3 dissemination steps of 8 messages) and 7 steps.
    let c = &s.counters;
    assert_eq!(c["intra_node_messages"], 3 * (3 * 8 + 7 * 8));
    assert_eq!(c["intra_node_bytes"], 3 * (3 * 8 * 8 + 7 * 8 * (1 << 20)));
    assert_eq!((c["messages_generated"], c["messages_delivered"]), (240, 240));
}

/// "2x8": a ring AllReduce over 2 nodes of 8 GPUs on one switch. Ranks are node-major,
/// so 14 of the ring's 16 links are inside a node and 2 cross the network; every
/// message is accounted for and nothing is left behind.
#[test]
fn a_2x8_ring_allreduce_takes_the_intra_node_link_inside_nodes() {
    let report = run(&job_on_one_switch(16, 8, "allreduce", "1MiB", "\"all\""), &[]);
    let j = job(&report, "job");
    assert_eq!((j.ranks, j.iterations), (16, 2));
    // Per iteration: a barrier of 4 steps, rank r to r + 2^k, of which 14 + 12 + 8 + 0
    // stay inside a node; then 2(n - 1) = 30 ring steps, 14 inside, 2 across.
    let (barrier_inside, ring_inside) = (14 + 12 + 8, 30 * 14);
    let (barrier_across, ring_across) = (4 * 16 - barrier_inside, 30 * 2);
    let c = &report.summary.counters;
    assert_eq!(c["intra_node_messages"], 3 * (barrier_inside + ring_inside));
    assert_eq!(c["intra_node_bytes"], 3 * (barrier_inside * 8 + ring_inside * (1 << 16)));
    let messages = 3 * (barrier_inside + ring_inside + barrier_across + ring_across);
    assert_eq!((c["messages_generated"], c["messages_delivered"]), (messages, messages));
    // Across the network: blocks of 64 KiB in 16 packets of 4 KiB, barriers in one.
    let p = &report.summary.packets;
    assert_eq!((p.injected, p.delivered, p.in_flight), (3 * (ring_across * 16 + barrier_across), p.injected, 0));
    // The same job on 16 single-GPU nodes sends the same messages, all of them as packets.
    let single = run(&job_on_one_switch(16, 1, "allreduce", "1MiB", "\"all\""), &[]);
    let c1 = &single.summary.counters;
    assert!(!c1.contains_key("intra_node_messages"));
    assert_eq!(c1["messages_delivered"], messages);
    assert_eq!(single.summary.packets.injected, 3 * (30 * 16 * 16 + 4 * 16));
}

/// Jobs place whole nodes, and their errors speak of nodes; `gpus_per_node` must divide
/// the hosts and be positive.
#[test]
fn bad_gpu_nodes_are_refused_at_their_key() {
    let error = |text: &str, overrides: &[(&str, &str)]| {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        match load_config(text, &o, None) {
            Err(Error::Config { path, message }) => (path, message),
            other => panic!("not refused: {:?}", other.map(|_| ())),
        }
    };
    let two_nodes = job_on_one_switch(16, 8, "allgather", "1MiB", "\"all\"");
    let (path, message) = error(&two_nodes, &[("topology.gpus_per_node", "3")]);
    assert_eq!(path, "topology.gpus_per_node");
    assert!(message.contains("16 hosts") && message.contains("nearest divisors are 2 and 4"), "{message}");
    let (path, message) = error(&two_nodes, &[("topology.gpus_per_node", "0")]);
    assert_eq!(path, "topology.gpus_per_node");
    assert!(message.contains("positive"), "{message}");
    let (path, message) = error(&two_nodes, &[("workload.allocation", "{ nodes = 3 }")]);
    assert_eq!(path, "workload.allocation.nodes");
    assert!(message.contains("asks for 3 nodes; the fabric has 2 nodes of 8 GPUs (16 hosts)"), "{message}");
    let (path, message) = error(&job_on_one_switch(16, 8, "allgather", "1MiB", "[0, 2]"), &[]);
    assert_eq!(path, "workload.jobs.0.nodes");
    assert!(message.contains("node 2 is beyond the 2 nodes"), "{message}");
    // The same fabric holds 16 single-GPU nodes.
    assert!(load_config(&two_nodes, &[("topology.gpus_per_node".into(), "1".into())], None).is_ok());
    // One node of 8 GPUs is 8 ranks, enough for any collective; halving-doubling still
    // needs a power of two of them.
    let (path, message) = error(&job_on_one_switch(12, 6, "allreduce_halving_doubling", "1MiB", "[0]"), &[]);
    assert_eq!(path, "workload.jobs.0.nodes");
    assert!(message.contains("found 6"), "{message}");
}
