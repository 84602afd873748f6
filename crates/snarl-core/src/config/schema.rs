//! Config structs. Defaults are those of a 100 Gb/s InfiniBand-like fabric.

use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random choice in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Free-form description of the experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub simulation: SimulationConfig,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub links: LinksConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub flow_control: FlowControlConfig,
    #[serde(default)]
    pub routing: RoutingConfig,
    #[serde(default)]
    pub nic: NicConfig,
    pub traffic: TrafficConfig,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnit {
    /// Report times in nanoseconds.
    #[default]
    Ns,
    /// Report times in abstract cycles (1 cycle = 1 ns internally).
    Cycles,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Total simulated time.
    pub duration: Time,
    /// Statistics are collected from this time on.
    #[serde(default)]
    pub warmup: Time,
    /// Width of the throughput time-series windows (default: duration / 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Time>,
    /// Unit of reported times.
    #[serde(default)]
    pub time_unit: TimeUnit,
    /// Stop with a deadlock error if packets are in flight but none moved for this long.
    #[serde(default = "default_watchdog")]
    pub watchdog: Time,
}

fn default_watchdog() -> Time {
    Time(1_000_000_000) // 1 ms
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// N hosts on one switch.
    SingleSwitch { hosts: u32 },
    /// Two hosts wired to each other, no switch.
    BackToBack {},
    /// Two-tier leaf-spine. `oversubscription = "1:0.5"` scales the uplink rate so that
    /// a leaf's uplink capacity is that fraction of its host capacity.
    SpineLeaf {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        #[serde(default = "one")]
        links_per_pair: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oversubscription: Option<String>,
    },
    /// Folded Clos built from switches of `radix` ports: 2 levels give radix²/2 hosts,
    /// 3 levels give radix³/4 hosts (the "k-ary fat-tree").
    FatTree { radix: u32, levels: u32 },
    /// The k-ary n-tree of Petrini and Vanneschi: kⁿ hosts, n·kⁿ⁻¹ switches.
    KAryNTree { k: u32, n: u32 },
    /// Extended generalised fat-tree XGFT(h; m₁..m_h; w₁..w_h): `children[i]` is the
    /// number of children of a level-(i+1) node, `parents[i]` the number of parents of a
    /// level-i node (parents[0] = 1: hosts have one port). Tapering is written directly.
    Xgft { children: Vec<u32>, parents: Vec<u32> },
    /// Canonical dragonfly (Kim, Dally, Scott and Abts, 2008): `groups` groups of
    /// `switches_per_group` switches, fully connected inside each group; every switch has
    /// `hosts_per_switch` hosts and `global_links_per_switch` links to other groups.
    /// `groups` defaults to, and may not exceed, switches_per_group · global_links_per_switch + 1
    /// (one global link between every pair of groups); with fewer groups some pairs of
    /// groups are joined by several global links.
    Dragonfly {
        hosts_per_switch: u32,
        switches_per_group: u32,
        global_links_per_switch: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<u32>,
        #[serde(default)]
        arrangement: Arrangement,
    },
    /// Megafly, also known as Dragonfly+ (Shpiner et al., 2017; Flajslik et al., 2018):
    /// every group is a complete bipartite graph of `leaves_per_group` leaves and
    /// `spines_per_group` spines; hosts sit on the leaves, global links on the spines.
    /// `groups` defaults to, and may not exceed, spines_per_group · global_links_per_spine + 1.
    Megafly {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<u32>,
        leaves_per_group: u32,
        spines_per_group: u32,
        hosts_per_leaf: u32,
        global_links_per_spine: u32,
        #[serde(default)]
        arrangement: Arrangement,
    },
    /// HyperX, or flattened butterfly (Ahn et al., 2009): switches on an n-dimensional grid
    /// with `sides[i]` switches along dimension i, every dimension fully connected, with
    /// `links_per_pair` parallel links between two switches that differ in one coordinate.
    #[serde(rename = "hyperx")]
    HyperX {
        sides: Vec<u32>,
        hosts_per_switch: u32,
        #[serde(default = "one")]
        links_per_pair: u32,
    },
    /// n-dimensional torus: every switch is linked to its two neighbours along each
    /// dimension, with wraparound; along a side of 2 the two neighbours coincide and are
    /// joined by one link.
    Torus { sides: Vec<u32>, hosts_per_switch: u32 },
    /// n-dimensional mesh: a torus without the wraparound links.
    Mesh { sides: Vec<u32>, hosts_per_switch: u32 },
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// Which group each global port of a dragonfly-like fabric leads to (Camarero, Vallejo and
/// Beivide, ACM TACO 2014; Hastings et al., 2015). Global ports k = 0..a·h are numbered in
/// switch order within a group; with g = a·h + 1 groups (with fewer, the ports are dealt
/// in blocks of g − 1 the same way):
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Arrangement {
    /// Global port k of group G leads to group G − k − 1 (mod g), at its port a·h − 1 − k.
    #[default]
    Palmtree,
    /// Global port k of group G leads to group G + k + 1 (mod g), at its port a·h − 1 − k.
    Consecutive,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate: Rate,
    pub latency: Time,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinksConfig {
    /// Host-to-switch links.
    #[serde(default = "default_link")]
    pub host: LinkConfig,
    /// Switch-to-switch links.
    #[serde(default = "default_link")]
    pub switch: LinkConfig,
}

fn default_link() -> LinkConfig {
    LinkConfig { rate: Rate(100_000_000_000), latency: Time::from_ns(25) }
}

impl Default for LinksConfig {
    fn default() -> Self {
        LinksConfig { host: default_link(), switch: default_link() }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArbiterKind {
    #[default]
    RoundRobin,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SwitchConfig {
    /// Input-output queued switch with per-VC input and output buffers.
    Ioq {
        #[serde(default = "default_vcs")]
        vcs: u32,
        /// Per-VC input buffer.
        #[serde(default = "default_buffer")]
        input_buffer: Bytes,
        /// Per-VC output buffer.
        #[serde(default = "default_buffer")]
        output_buffer: Bytes,
        /// Internal crossbar speedup over the output link rate.
        #[serde(default = "default_speedup")]
        speedup: f64,
        /// Traversal latency (routing, allocation, crossbar).
        #[serde(default = "default_switch_latency")]
        latency: Time,
        #[serde(default)]
        arbiter: ArbiterKind,
    },
}

fn default_vcs() -> u32 {
    1
}
fn default_buffer() -> Bytes {
    Bytes(32 * 1024)
}
fn default_speedup() -> f64 {
    1.0
}
fn default_switch_latency() -> Time {
    Time::from_ns(100)
}

impl SwitchConfig {
    /// Traversal latency of a switch (routing, allocation, crossbar), whatever its model.
    pub fn latency(&self) -> Time {
        match self {
            SwitchConfig::Ioq { latency, .. } => *latency,
        }
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig::Ioq {
            vcs: default_vcs(),
            input_buffer: default_buffer(),
            output_buffer: default_buffer(),
            speedup: default_speedup(),
            latency: default_switch_latency(),
            arbiter: ArbiterKind::default(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowControlConfig {
    /// Credit-based lossless link-level flow control (InfiniBand style).
    #[default]
    Credit,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UpSelect {
    /// Uniformly random among the minimal up-ports, per packet.
    #[default]
    Random,
    /// A fixed choice per source host (source-mod-k): one path per (source, destination).
    Deterministic,
    /// The minimal up-port whose queues hold the fewest bytes (ties: lowest port).
    Adaptive,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcmpHash {
    /// Hash of (source, destination, source port, destination port, protocol); the
    /// source port is derived from the flow's queue pair.
    #[default]
    FiveTuple,
    /// Hash of the queue-pair number alone.
    Qp,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RoutingConfig {
    /// Up/down (minimal) routing on tree-like fabrics.
    Updown {
        #[serde(default)]
        select: UpSelect,
    },
    /// Destination-mod-k: the up-port is a function of the destination, so every
    /// destination has one root and down-paths never collide.
    Dmodk,
    /// Equal-cost multipath: the up-port is a hash of the flow, salted per switch.
    Ecmp {
        #[serde(default)]
        hash: EcmpHash,
    },
    /// Minimal routing on distance-based fabrics (Dragonfly, Megafly, HyperX, tori), with
    /// VCs by hop class.
    Minimal {
        #[serde(default)]
        select: MinimalSelect,
        /// `false` keeps every packet on the VC it was injected on: cyclic channel
        /// dependencies can then deadlock the fabric (for studying deadlock itself).
        #[serde(default = "yes")]
        deadlock_avoidance: bool,
    },
    /// Valiant: minimal to a random intermediate switch, then minimal to the destination.
    Valiant,
    /// UGAL, source-adaptive: minimal unless a Valiant route through a random intermediate
    /// weighs less (occupancy x remaining hops) by more than `threshold`.
    Ugal {
        /// In bytes x hops (default: two MTUs x one hop).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<Bytes>,
    },
}

/// Choice among equally short next hops.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MinimalSelect {
    /// Uniformly random, per packet.
    #[default]
    Random,
    /// The least occupied output (queued bytes plus credits in use).
    Adaptive,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig::Updown { select: UpSelect::Random }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Largest packet; messages are segmented into packets of at most this size.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Messages a host can hold waiting for injection; generations that find it full are
    /// counted (`source_queue_full`) and discarded, as on a real NIC.
    #[serde(default = "default_source_queue")]
    pub source_queue: u32,
    /// Queue pairs per (source, destination); a message picks one at random. ECMP by QP
    /// hashes this number.
    #[serde(default = "one")]
    pub qps_per_destination: u32,
}

fn default_mtu() -> Bytes {
    Bytes(4096)
}
fn default_source_queue() -> u32 {
    16
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig { mtu: default_mtu(), source_queue: default_source_queue(), qps_per_destination: 1 }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    /// One message per slot with probability load·slot/message-time (geometric gaps).
    #[default]
    Bernoulli,
    /// Exponential gaps in continuous time.
    Poisson,
    /// Evenly spaced messages.
    Periodic,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The next free hosts in index order.
    #[default]
    Contiguous,
    /// Evenly spread over the free hosts (e.g. every tenth host for 10%).
    Interleaved,
    /// A random choice among the free hosts (seeded).
    Random,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HotspotAssign {
    /// Senders are split evenly over the hotspots; each always sends to its own.
    #[default]
    Partition,
    /// Each message picks one of the hotspots at random.
    Random,
}

/// Destination patterns. `among` names the hosts destinations are drawn from: "all"
/// hosts, the sender's own "group", or the name of another group.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PatternConfig {
    /// Uniformly random destination other than the sender.
    Uniform {
        #[serde(default = "all")]
        among: String,
    },
    /// A fixed random permutation without fixed points.
    Permutation {
        #[serde(default = "all")]
        among: String,
    },
    /// Destination = the host `offset` places further on in the `among` list.
    Shift {
        offset: i64,
        #[serde(default = "all")]
        among: String,
    },
    /// All traffic goes to `hotspots` destinations drawn at random from `among`.
    Hotspot {
        #[serde(default = "one")]
        hotspots: u32,
        #[serde(default = "all")]
        among: String,
        #[serde(default)]
        assign: HotspotAssign,
    },
    /// Every sender sends to one destination host.
    Incast { destination: u32 },
    /// The group does not send.
    Silent,
}

fn all() -> String {
    "all".to_string()
}

impl Default for PatternConfig {
    fn default() -> Self {
        PatternConfig::Uniform { among: all() }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    pub name: String,
    /// How many hosts: give exactly one of `count`, `fraction`, `hosts` or `rest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Explicit host indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<u32>>,
    /// `rest = true`: every host that no other group takes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rest: bool,
    #[serde(default)]
    pub placement: Placement,
    #[serde(default)]
    pub pattern: PatternConfig,
    /// Offered load of each host of the group (default: `traffic.load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Static injection cap as a fraction of the host link (default: uncapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Bytes>,
    /// Flow-size CDF of the group's messages (default: as `traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_distribution: Option<String>,
}

/// A change at a point of the timeline: from `at` on, `group` uses these settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    pub at: Time,
    /// A group name, or "all" for every group.
    pub group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<PatternConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// New injection cap; 1.0 removes the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    /// Optional label shown on plots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// Offered load per endpoint, as a fraction of its link (groups inherit it).
    pub load: f64,
    /// Message size (default: one MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Bytes>,
    /// Draw each message's size from a built-in flow-size CDF (`web_search`,
    /// `google_all`, `hadoop`, `fb_hadoop`) instead of a fixed `message_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_distribution: Option<String>,
    #[serde(default)]
    pub process: ProcessKind,
    /// Slot of the Bernoulli process (default: the serialisation time of one message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Time>,
    /// Pattern of the hosts in no group (they form the group "default").
    #[serde(default)]
    pub pattern: PatternConfig,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseConfig>,
}
