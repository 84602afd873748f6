//! Nodes of several GPUs (`topology.gpus_per_node`): the node -> endpoints map, the
//! intra-node link (messages between GPUs of one node never enter the network, and take
//! size / rate + latency on it), jobs whose ranks are GPUs numbered node-major, and bad
//! input refused at its key.

use snarl_core::kernel::Timer;
use snarl_core::packet::Tag;
use snarl_core::topology::{self, Endpoint, Topology};
use snarl_core::traffic::{AnyWorkload, Env, GroupView, MessageDone, Workload};
use snarl_core::{load_config, Report, Simulation};
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
