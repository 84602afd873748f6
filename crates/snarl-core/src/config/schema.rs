//! Config structs. Defaults are those of a 100 Gb/s InfiniBand-like fabric.

use super::isolation::IsolationConfig;
use crate::traffic::WorkloadConfig;
use crate::units::{Bytes, Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random choice in the run, any u64 (see `seed.rs` for TOML's limit).
    #[serde(default = "default_seed", with = "super::seed")]
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
    /// The workload (absent: open-loop traffic described by `[traffic]`).
    #[serde(default, skip_serializing_if = "WorkloadConfig::is_default")]
    pub workload: WorkloadConfig,
    pub traffic: TrafficConfig,
    /// Congestion marking at switch egress queues (absent: no marking, unless the
    /// congestion control implies its own). `[ecn]` is read as `[marking]` of type `red`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marking: Option<MarkingConfig>,
    #[serde(default, skip_serializing_if = "CongestionControlConfig::is_none")]
    pub congestion_control: CongestionControlConfig,
    /// Congestion isolation at the switches (CI, ICI): congested flows in queues of their
    /// own (shared-buffer switches with PFC only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationConfig>,
    #[serde(default, skip_serializing_if = "ObserveConfig::is_empty")]
    pub observe: ObserveConfig,
}

/// Optional observers beyond the standard counters and series.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ObserveConfig {
    /// Egress queues whose occupancy is recorded over time (time-weighted distribution
    /// in the summary, windowed mean and maximum in the `queues` table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueProbeConfig>,
}

impl ObserveConfig {
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }
}

/// One egress queue: output `port` of `switch`, priority (VC) `priority`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QueueProbeConfig {
    pub switch: u32,
    pub port: u32,
    #[serde(default)]
    pub priority: u32,
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
    /// Stop with a deadlock error if packets are in flight but none moved for this long,
    /// or a switch queue's head did not move for this long (default: scaled to the
    /// fabric's slowest hop, see `sim::WATCHDOG_HOPS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watchdog: Option<Time>,
    /// Most memory the run may need by its estimate (default: what the machine has
    /// available); a larger fabric is refused before it is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<Bytes>,
    /// End the run once a traffic group has completed this many messages (the duration
    /// stays the upper bound). Left out of the resolved config unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_after: Option<StopAfterConfig>,
}

/// `simulation.stop_after`: the run ends at the instant the `messages`-th message sent by
/// a host of `group` completes (its last packet reaches its destination).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StopAfterConfig {
    /// A group of `[[traffic.groups]]`.
    pub group: String,
    /// Completed messages of the group (at least 1).
    pub messages: u64,
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
        /// What one crossbar transfer occupies: a whole input and output port, or only the
        /// input VC and the output VC it connects.
        #[serde(default, skip_serializing_if = "Crossbar::is_per_port")]
        crossbar: Crossbar,
        /// How an input VC's buffer is queued: one FIFO, or one virtual output queue per
        /// output port of the switch.
        #[serde(default, skip_serializing_if = "InputQueuing::is_fifo")]
        input_queuing: InputQueuing,
        /// Traversal latency (routing, allocation, crossbar).
        #[serde(default = "default_switch_latency")]
        latency: Time,
    },
    /// Shared-memory switch of a lossless Ethernet fabric: every port owns `port_buffer`
    /// of the packet memory, of which each of its egress queues may hold at most
    /// `egress_cap`; the rest is the port's ingress share, used by all its priorities and
    /// topped up from a `shared_pool` common to the switch. Speedup moves contention to
    /// the egress.
    SharedBuffer {
        /// Priorities (traffic classes), each with its own ingress and egress queues.
        #[serde(default = "default_vcs")]
        priorities: u32,
        /// Memory guaranteed to each port (ingress share + egress cap).
        #[serde(default = "default_port_buffer")]
        port_buffer: Bytes,
        /// Most one egress queue (port, priority) may hold.
        #[serde(default = "default_egress_cap")]
        egress_cap: Bytes,
        /// Memory on top of the ports' shares, lent to any ingress port that needs it.
        #[serde(default)]
        shared_pool: Bytes,
        #[serde(default = "default_shared_speedup")]
        speedup: f64,
        #[serde(default = "default_switch_latency")]
        latency: Time,
    },
}

/// The crossbar's unit of allocation.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Crossbar {
    /// A transfer occupies its input port and its output port: each port takes part in
    /// one transfer at a time.
    #[default]
    PerPort,
    /// A transfer occupies only its input VC and its output VC, as in an IOQ router
    /// whose allocator matches input VCs to output VCs (CAMINOS's, the simulator of
    /// Postigo et al.): an output port may take in a packet on each of its VCs at once,
    /// and an input port send one from each of its VCs.
    PerVc,
}

impl Crossbar {
    fn is_per_port(&self) -> bool {
        *self == Crossbar::PerPort
    }
}

/// How the packets in an input VC's buffer wait for the crossbar.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum InputQueuing {
    /// One FIFO per input VC: only its head packet is routed and requests an output, so a
    /// packet for a free output waits behind one for a congested output (head-of-line
    /// blocking).
    #[default]
    Fifo,
    /// Virtual output queues: the input VC's buffer is shared by one queue per output port
    /// of the switch; a packet is routed as it arrives and joins the queue of its output,
    /// and the head of every non-empty queue requests its output at once (the InfiniBand
    /// switch model of the OMNeT++ IB simulator).
    Voq,
}

impl InputQueuing {
    pub fn is_fifo(&self) -> bool {
        *self == InputQueuing::Fifo
    }
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
fn default_port_buffer() -> Bytes {
    Bytes(512 * 1024)
}
fn default_egress_cap() -> Bytes {
    Bytes(256 * 1024)
}
fn default_shared_speedup() -> f64 {
    2.0
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig::Ioq {
            vcs: default_vcs(),
            input_buffer: default_buffer(),
            output_buffer: default_buffer(),
            speedup: default_speedup(),
            crossbar: Crossbar::PerPort,
            input_queuing: InputQueuing::Fifo,
            latency: default_switch_latency(),
        }
    }
}

impl SwitchConfig {
    /// Virtual channels (IOQ) or priorities (shared buffer) per port.
    pub fn vcs(&self) -> u32 {
        match self {
            SwitchConfig::Ioq { vcs, .. } => *vcs,
            SwitchConfig::SharedBuffer { priorities, .. } => *priorities,
        }
    }

    /// How input VCs queue their packets (shared-buffer switches: one FIFO per priority).
    pub fn input_queuing(&self) -> InputQueuing {
        match self {
            SwitchConfig::Ioq { input_queuing, .. } => *input_queuing,
            SwitchConfig::SharedBuffer { .. } => InputQueuing::Fifo,
        }
    }

    /// Traversal latency.
    pub fn latency(&self) -> Time {
        match self {
            SwitchConfig::Ioq { latency, .. } | SwitchConfig::SharedBuffer { latency, .. } => *latency,
        }
    }
}

// Variants without parameters are written `Name {}`: serde refuses unknown keys only in
// struct variants, and a stray key must never pass silently.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowControlConfig {
    /// Credit-based lossless link-level flow control (InfiniBand style).
    Credit {},
    /// Priority flow control (IEEE 802.1Qbb): an ingress queue above `xoff` pauses its
    /// priority on the upstream link, and resumes it once back at `xon`. Thresholds are a
    /// number of MTU-sized packets or a size; one value for every priority or a list with
    /// one per priority.
    Pfc { xoff: Thresholds, xon: Thresholds },
    /// No link-level flow control: a packet that finds its ingress share (and the shared
    /// pool) full is dropped, and counted.
    None {},
}

impl Default for FlowControlConfig {
    fn default() -> Self {
        FlowControlConfig::Credit {}
    }
}

/// A buffer threshold: a bare integer is a number of MTU-sized packets, a string a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    Packets(u64),
    Size(Bytes),
}

impl Threshold {
    pub fn bytes(self, mtu: u64) -> u64 {
        match self {
            Threshold::Packets(n) => n.saturating_mul(mtu),
            Threshold::Size(b) => b.0,
        }
    }
}

/// One threshold for every priority, or one per priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thresholds(pub Vec<Threshold>);

impl Thresholds {
    /// Threshold of `priority` in bytes (a single value applies to every priority).
    pub fn bytes(&self, priority: usize, mtu: u64) -> u64 {
        self.0[priority.min(self.0.len() - 1)].bytes(mtu)
    }
}

mod threshold_serde {
    use super::{Threshold, Thresholds};
    use crate::units::Bytes;
    use serde::de::{self, Deserializer, SeqAccess, Visitor};
    use serde::ser::{SerializeSeq, Serializer};
    use serde::{Deserialize, Serialize};
    use std::fmt;

    const EXPECTED: &str =
        "a number of packets (e.g. 50), a size (e.g. \"200KiB\") or a list of them, one per priority";

    fn packets<E: de::Error>(n: i64) -> Result<Threshold, E> {
        u64::try_from(n).map(Threshold::Packets).map_err(|_| E::custom(format!("expected {EXPECTED}, found {n}")))
    }

    fn text<E: de::Error>(s: &str) -> Result<Threshold, E> {
        let t = s.trim();
        match t.strip_suffix("packets").or_else(|| t.strip_suffix("packet")) {
            Some(n) => n
                .trim()
                .parse()
                .map(Threshold::Packets)
                .map_err(|_| E::custom(format!("expected {EXPECTED}, found \"{s}\""))),
            None => t.parse::<Bytes>().map(Threshold::Size).map_err(E::custom),
        }
    }

    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Thresholds;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Thresholds, E> {
            Ok(Thresholds(vec![packets(v)?]))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Thresholds, E> {
            self.visit_i64(v.min(i64::MAX as u64) as i64)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Thresholds, E> {
            Ok(Thresholds(vec![text(v)?]))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Thresholds, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element::<Item>()? {
                out.push(item.0);
            }
            if out.is_empty() {
                return Err(de::Error::custom(format!("expected {EXPECTED}, found an empty list")));
            }
            Ok(Thresholds(out))
        }
    }

    struct Item(Threshold);
    impl<'de> Deserialize<'de> for Item {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
            let t = d.deserialize_any(V)?;
            match t.0.as_slice() {
                [one] => Ok(Item(*one)),
                _ => Err(de::Error::custom(format!("expected {EXPECTED}, found a nested list"))),
            }
        }
    }

    impl<'de> Deserialize<'de> for Thresholds {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Thresholds, D::Error> {
            d.deserialize_any(V)
        }
    }

    fn write_one<S: Serializer>(t: &Threshold, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Threshold::Packets(n) => s.serialize_u64(*n),
            Threshold::Size(b) => b.serialize(s),
        }
    }

    struct One<'a>(&'a Threshold);
    impl Serialize for One<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            write_one(self.0, s)
        }
    }

    impl Serialize for Thresholds {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if let [only] = self.0.as_slice() {
                return write_one(only, s);
            }
            let mut seq = s.serialize_seq(Some(self.0.len()))?;
            for t in &self.0 {
                seq.serialize_element(&One(t))?;
            }
            seq.end()
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UpSelect {
    /// Uniformly random among the minimal up-ports, per packet.
    #[default]
    Random,
    /// A fixed choice per source host (S-mod-K: at every level a digit of the source, as
    /// D-mod-K takes one of the destination): one path per (source, destination).
    Deterministic,
    /// The minimal up-port whose queues hold the fewest bytes (ties: at random).
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
    Dmodk {},
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
    Valiant {},
    /// UGAL, source-adaptive: minimal unless a Valiant route through a random intermediate
    /// weighs less (occupancy x remaining hops) by more than `threshold`.
    Ugal {
        /// In bytes x hops (default: two MTUs x one hop).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<Bytes>,
        /// What a route's weight is measured on.
        #[serde(default)]
        information: UgalInformation,
        /// Draw a new intermediate each time a waiting packet's routes are reconsidered
        /// at its first switch, rather than once per packet (an extension of the paper's
        /// UGAL; off by default).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redraw: bool,
        /// The VCs a packet on a minimal route takes: its hop class, or (`any`, megafly
        /// only) whichever VC has room at its first switch, kept to the destination.
        #[serde(default, skip_serializing_if = "MinimalVcs::is_class")]
        minimal_vcs: MinimalVcs,
    },
}

/// The VCs a packet on a minimal route may take.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MinimalVcs {
    /// Its hop class (the VC deadlock avoidance assigns).
    #[default]
    Class,
    /// Any VC, whichever has room at the first switch, kept to the destination: on a
    /// megafly, whose minimal routes (up, global, down) cannot close a cycle on one VC.
    Any,
}

impl MinimalVcs {
    fn is_class(&self) -> bool {
        *self == MinimalVcs::Class
    }
}

/// What UGAL weighs a route by (Kim et al., ISCA 2008).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UgalInformation {
    /// UGAL-L: the occupancy of the route's first output port at the deciding switch,
    /// as real source-adaptive routers measure it.
    #[default]
    Local,
    /// UGAL-G, the idealised variant: the occupancies of every output the route takes in
    /// the source group, up to and including its first global link (on flat fabrics, the
    /// whole route), read from the other switches as if their queues were known.
    Global,
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
    /// Order in which a host serves its queued messages (default: FIFO, or round robin
    /// by flow under per-flow congestion control, which requires it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<NicScheduling>,
    /// Most a host drains of its input (absent: the host link's rate). A slower host
    /// returns the credits of its receive buffer (the switches' `input_buffer` per VC) at
    /// this rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_cap: Option<Rate>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NicScheduling {
    /// One message after the other, in order of generation.
    Fifo,
    /// Round robin over flows (source, destination, queue pair), one packet at a time;
    /// messages of one flow in order.
    RoundRobin,
}

fn default_mtu() -> Bytes {
    Bytes(4096)
}
fn default_source_queue() -> u32 {
    16
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: default_mtu(),
            source_queue: default_source_queue(),
            qps_per_destination: 1,
            scheduling: None,
            receive_cap: None,
        }
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
        /// Splits the group, in host order, into `hotspots` contiguous regions of sizes
        /// differing by at most one, each with a random member as its hotspot; the other
        /// members send to their own region's (`among = "group"` only).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        regions: bool,
    },
    /// Every sender sends to one destination host.
    Incast { destination: u32 },
    /// The run's shared hotspots (`[traffic.hotspots]`): the senders are split evenly
    /// over them (sender k of the group, in host order, to hotspot k mod count), and
    /// each follows its hotspot when it moves.
    Hotspots {},
    /// Independent streams of each sender, each with its pattern, its share of the
    /// group's load, its own queue pairs and its own bound in the source queue.
    Mix { parts: Vec<MixPart> },
    /// The group does not send.
    Silent {},
}

/// One stream of a `mix` pattern.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MixPart {
    /// Fraction of the group's load in [0, 1]; the last part may leave it out: the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Any pattern but a mix.
    pub pattern: PatternConfig,
}

impl PatternConfig {
    /// The patterns it is made of: a mix's parts, or itself.
    pub fn parts(&self) -> Vec<(f64, &PatternConfig)> {
        match self {
            PatternConfig::Mix { parts } => {
                let given: f64 = parts.iter().filter_map(|p| p.share).sum();
                parts.iter().map(|p| (p.share.unwrap_or((1.0 - given).max(0.0)), &p.pattern)).collect()
            }
            other => vec![(1.0, other)],
        }
    }

    /// Streams a sender of this pattern has: a mix's parts, or one.
    pub fn streams(&self) -> usize {
        match self {
            PatternConfig::Mix { parts } => parts.len().max(1),
            _ => 1,
        }
    }

    /// Whether it (or a part of it) sends to the run's shared hotspots.
    pub fn uses_hotspots(&self) -> bool {
        self.parts().iter().any(|(_, p)| matches!(p, PatternConfig::Hotspots {}))
    }
}

/// The run's shared hotspots, which `hotspots` patterns send to.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HotspotsConfig {
    /// How many hotspots.
    pub count: u32,
    /// The hosts they are drawn from: "all", or a group name.
    #[serde(default = "all")]
    pub among: String,
    /// The hotspots move to new random hosts every `lifetime` (absent: they stay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<Time>,
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
    /// How many hosts: give exactly one of `count`, `fraction`, `hosts` or `rest` (`count = 0`: an
    /// empty group).
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
    /// Shared, optionally moving hotspots for `hotspots` patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotspots: Option<HotspotsConfig>,
}

impl TrafficConfig {
    /// Every pattern of the traffic: the default group's, the groups', the phases'.
    pub fn patterns(&self) -> impl Iterator<Item = &PatternConfig> {
        std::iter::once(&self.pattern)
            .chain(self.groups.iter().map(|g| &g.pattern))
            .chain(self.phases.iter().filter_map(|p| p.pattern.as_ref()))
    }

    /// The most streams any sender has (the most parts of a mix; 1 without mixes): each
    /// has its own bound in the source queue.
    pub fn streams(&self) -> usize {
        self.patterns().map(PatternConfig::streams).max().unwrap_or(1)
    }
}

/// How switches mark packets of congested queues, for the NICs' congestion control.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MarkingConfig {
    /// RED-style ECN marking on the egress queue's occupancy (the default type).
    Red(RedConfig),
    /// InfiniBand congestion control's switch half: FECN marking of packets leaving a
    /// port-VL in the congestion state (the default type under `ibcc`).
    Fecn(FecnConfig),
}

impl MarkingConfig {
    /// The RED thresholds (Kmin, Kmax), for the queue probes' bands.
    pub fn red_thresholds(&self) -> Option<(u64, u64)> {
        match self {
            MarkingConfig::Red(red) => Some((red.kmin.0, red.kmax.0)),
            MarkingConfig::Fecn(_) => None,
        }
    }

    /// Whether this marking can mark anything (FECN with threshold 0 never does).
    pub fn marks(&self) -> bool {
        match self {
            MarkingConfig::Red(_) => true,
            MarkingConfig::Fecn(fecn) => fecn.threshold > 0,
        }
    }
}

/// InfiniBand FECN marking (InfiniBand Architecture Specification 1.2.1, as Gran et al.
/// describe it): a port-VL whose queued bytes exceed the threshold and that
/// has credits to send is in the congestion state, and packets leaving it are marked.
/// Defaults: Table I of Gran et al. (threshold 15, marking rate 0, packet size 0).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FecnConfig {
    /// Weight 0..15: 0 never marks, 1 the highest threshold, 15 the lowest; the threshold
    /// is (16 - weight)/16 of the port-VL buffer (`cc::fecn`).
    #[serde(default = "default_fecn_threshold")]
    pub threshold: u32,
    /// Mean number of eligible packets left unmarked between two marked ones (0: mark
    /// every eligible packet).
    #[serde(default)]
    pub marking_rate: u32,
    /// Packets smaller than this are never marked (0: every packet is eligible).
    #[serde(default)]
    pub packet_size: Bytes,
    /// Ports whose port-VLs enter the congestion state even without credits.
    #[serde(default)]
    pub victim_mask: VictimMask,
}

fn default_fecn_threshold() -> u32 {
    15
}

impl Default for FecnConfig {
    fn default() -> Self {
        FecnConfig {
            threshold: default_fecn_threshold(),
            marking_rate: 0,
            packet_size: Bytes(0),
            victim_mask: VictimMask::default(),
        }
    }
}

/// The ports whose victim mask is set: their port-VLs may enter the congestion state
/// while short of credits (a victim of back-pressure rather than a root).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VictimMask {
    /// Ports facing hosts (a host never detects congestion itself).
    #[default]
    HostPorts,
    /// No port: only roots mark.
    None,
    /// Every port: the credit check is off.
    All,
}

/// When a switch evaluates the marking probability of a packet.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnMarkAt {
    /// As the packet enters the output queue, on the bytes queued ahead of it (RED).
    #[default]
    Enqueue,
    /// As the packet leaves the output queue for the link, on the bytes queued behind it.
    Dequeue,
}

/// RED-style ECN marking on an output (port, VC) queue's occupancy: probability 0 up to
/// `kmin`, rising linearly to `pmax` at `kmax`, 1 above `kmax`. Defaults: the DCQCN
/// paper's (Zhu et al., SIGCOMM 2015: Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    #[serde(default = "default_kmin")]
    pub kmin: Bytes,
    #[serde(default = "default_kmax")]
    pub kmax: Bytes,
    #[serde(default = "default_pmax")]
    pub pmax: f64,
    #[serde(default)]
    pub mark: EcnMarkAt,
    /// Which packets may be marked: any (`all`), or with congestion isolation only those
    /// isolation points at (`ici_plus`).
    #[serde(default, skip_serializing_if = "EcnPolicy::is_all")]
    pub policy: EcnPolicy,
}

/// Which packets RED may mark.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnPolicy {
    /// Every data packet, on its queue's occupancy (DCQCN's marking).
    #[default]
    All,
    /// ICI+ (Merino et al.): only packets of detected congestion roots that found no free
    /// isolation entry, and packets leaving a congested-flow queue that has been busy for
    /// `isolation.persist` and paused or full meanwhile; never a flow never isolated.
    IciPlus,
}

impl EcnPolicy {
    fn is_all(&self) -> bool {
        *self == EcnPolicy::All
    }
}

fn default_kmin() -> Bytes {
    Bytes(5_000)
}
fn default_kmax() -> Bytes {
    Bytes(200_000)
}
fn default_pmax() -> f64 {
    0.01
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            kmin: default_kmin(),
            kmax: default_kmax(),
            pmax: default_pmax(),
            mark: EcnMarkAt::default(),
            policy: EcnPolicy::All,
        }
    }
}

/// End-to-end congestion control at the NICs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CongestionControlConfig {
    /// Hosts send at line rate (or their static cap).
    None {},
    /// DCQCN (Zhu et al., SIGCOMM 2015): per-flow rate control driven by CNPs.
    Dcqcn(DcqcnConfig),
    /// InfiniBand congestion control's NIC half: BECNs raise a flow's index into the
    /// congestion control table, a timer lowers it (`cc::ibcc`).
    Ibcc(IbccConfig),
}

impl Default for CongestionControlConfig {
    fn default() -> Self {
        CongestionControlConfig::None {}
    }
}

impl CongestionControlConfig {
    pub fn is_none(&self) -> bool {
        matches!(self, CongestionControlConfig::None {})
    }
}

/// DCQCN parameters; every default is cited in `cc::dcqcn`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcqcnConfig {
    /// Gain of the alpha moving average (g).
    #[serde(default = "default_g")]
    pub g: f64,
    /// Least time between two CNPs of one flow at the receiver (N).
    #[serde(default = "default_cnp_interval")]
    pub cnp_interval: Time,
    /// Alpha decays when no CNP arrived for this long (K).
    #[serde(default = "default_alpha_timer")]
    pub alpha_timer: Time,
    /// Period of the rate-increase timer (T).
    #[serde(default = "default_rate_timer")]
    pub rate_timer: Time,
    /// Bytes sent between two byte-counter rate increases (B).
    #[serde(default = "default_byte_counter")]
    pub byte_counter: Bytes,
    /// Timer and byte-counter events of fast recovery after a cut (F).
    #[serde(default = "default_fast_recovery_steps")]
    pub fast_recovery_steps: u32,
    /// Additive increase of the target rate (R_AI).
    #[serde(default = "default_rate_ai")]
    pub rate_ai: Rate,
    /// Hyper increase step of the target rate (R_HAI).
    #[serde(default = "default_rate_hai")]
    pub rate_hai: Rate,
    /// No cut takes a flow below this rate.
    #[serde(default = "default_min_rate")]
    pub min_rate: Rate,
    /// Record every rate change of every flow (the report's `rates` table).
    #[serde(default)]
    pub rate_series: bool,
}

fn default_g() -> f64 {
    1.0 / 256.0
}
fn default_cnp_interval() -> Time {
    Time(50_000_000)
}
fn default_alpha_timer() -> Time {
    Time(55_000_000)
}
fn default_rate_timer() -> Time {
    Time(55_000_000)
}
fn default_byte_counter() -> Bytes {
    Bytes(10_000_000)
}
fn default_fast_recovery_steps() -> u32 {
    5
}
fn default_rate_ai() -> Rate {
    Rate(40_000_000)
}
fn default_rate_hai() -> Rate {
    Rate(400_000_000)
}
fn default_min_rate() -> Rate {
    Rate(100_000_000)
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: default_g(),
            cnp_interval: default_cnp_interval(),
            alpha_timer: default_alpha_timer(),
            rate_timer: default_rate_timer(),
            byte_counter: default_byte_counter(),
            fast_recovery_steps: default_fast_recovery_steps(),
            rate_ai: default_rate_ai(),
            rate_hai: default_rate_hai(),
            min_rate: default_min_rate(),
            rate_series: false,
        }
    }
}

/// InfiniBand congestion control at the NICs (Gran et al., section II; defaults: their
/// Table I). Every key is documented in `docs/config.md` and `cc::ibcc`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IbccConfig {
    /// CCTI added per BECN (0: IB CC is off).
    #[serde(default = "one")]
    pub ccti_increase: u32,
    /// Highest CCTI.
    #[serde(default = "default_ccti_limit")]
    pub ccti_limit: u32,
    /// Lowest CCTI, where every flow starts.
    #[serde(default)]
    pub ccti_min: u32,
    /// Period of the timer that lowers every CCTI of a host port and SL by one.
    #[serde(default)]
    pub ccti_timer: CctiTimer,
    /// What holds a CCTI: each queue pair, or each source host and service level.
    #[serde(default)]
    pub ccti_scope: CctiScope,
    /// The congestion control table: CCTI -> inter-packet delay.
    #[serde(default)]
    pub cct: Cct,
}

fn default_ccti_limit() -> u32 {
    127
}

impl Default for IbccConfig {
    fn default() -> Self {
        IbccConfig {
            ccti_increase: 1,
            ccti_limit: default_ccti_limit(),
            ccti_min: 0,
            ccti_timer: CctiTimer::default(),
            ccti_scope: CctiScope::default(),
            cct: Cct::default(),
        }
    }
}

/// What one CCTI throttles.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CctiScope {
    /// One CCTI per queue pair (flow: source, destination, queue pair).
    #[default]
    Qp,
    /// One CCTI per source host and service level (the flow's VC): a BECN slows every
    /// flow of the host on that SL.
    Sl,
}

/// The specification's unit of `CCTI_Timer`: 1.024 µs, in picoseconds.
pub const CCTI_TIMER_UNIT_PS: u64 = 1_024_000;

/// The CCTI timer's period: written as an integer number of the specification's units
/// of 1.024 µs (150 = 153.6 µs) or as a duration (`"150us"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CctiTimer(pub Time);

impl Default for CctiTimer {
    fn default() -> Self {
        CctiTimer(Time(150 * CCTI_TIMER_UNIT_PS))
    }
}

impl Serialize for CctiTimer {
    /// An integer of units when the period is a whole number of them, else a duration.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ps = self.0 .0;
        if ps.is_multiple_of(CCTI_TIMER_UNIT_PS) {
            s.serialize_u64(ps / CCTI_TIMER_UNIT_PS)
        } else {
            self.0.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for CctiTimer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CctiTimer, D::Error> {
        use serde::de::{self, Visitor};
        struct V;
        impl Visitor<'_> for V {
            type Value = CctiTimer;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of 1.024 µs units (e.g. 150) or a duration (e.g. \"150us\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CctiTimer, E> {
                let units = u64::try_from(v)
                    .map_err(|_| E::custom(format!("expected a number of 1.024 µs units or a duration, found {v}")))?;
                units
                    .checked_mul(CCTI_TIMER_UNIT_PS)
                    .filter(|ps| *ps <= u64::MAX / 2)
                    .map(|ps| CctiTimer(Time(ps)))
                    .ok_or_else(|| E::custom(format!("{units} units of 1.024 µs is too long")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CctiTimer, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CctiTimer, E> {
                v.parse::<Time>().map(CctiTimer).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// The congestion control table: entry i is (shift, multiplier), and a flow at CCTI i
/// waits (packet time >> shift) x multiplier after each packet's serialisation.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Cct {
    /// Entry i = (0, i): a flow at CCTI i sends at 1/(1 + i) of its link.
    #[default]
    Linear,
    /// Entry i = (3, round(i²/16)): a delay of about i²/128 packet times (126 at i = 127).
    Quadratic,
    /// Explicit entries `[shift, multiplier]`, at least `ccti_limit + 1` of them.
    Table(Vec<(u64, u64)>),
}

impl Cct {
    /// The names of the built-in tables.
    pub const NAMES: [&'static str; 2] = ["linear", "quadratic"];
}

impl Serialize for Cct {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cct::Linear => s.serialize_str("linear"),
            Cct::Quadratic => s.serialize_str("quadratic"),
            Cct::Table(entries) => entries.iter().map(|&(shift, m)| [shift, m]).collect::<Vec<_>>().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Cct {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Cct, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        const EXPECTED: &str = "\"linear\", \"quadratic\" or a list of [shift, multiplier] pairs";
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cct;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Cct, E> {
                match v {
                    "linear" => Ok(Cct::Linear),
                    "quadratic" => Ok(Cct::Quadratic),
                    _ => {
                        let hint = crate::error::closest(v, Cct::NAMES)
                            .map(|n| format!("; did you mean `{n}`?"))
                            .unwrap_or_default();
                        Err(E::custom(format!("unknown table `{v}`{hint} (valid: {EXPECTED})")))
                    }
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cct, A::Error> {
                let mut entries = Vec::new();
                while let Some(pair) = seq.next_element::<Vec<u64>>()? {
                    match pair.as_slice() {
                        [shift, multiplier] => entries.push((*shift, *multiplier)),
                        _ => {
                            return Err(de::Error::custom(format!(
                                "entry {} of the table: expected [shift, multiplier], found {} numbers",
                                entries.len(),
                                pair.len()
                            )))
                        }
                    }
                }
                Ok(Cct::Table(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Config {
    /// The marking in force: the `[marking]` section, or the marking the congestion
    /// control implies when there is none (DCQCN: the DCQCN paper's RED marking; IB CC:
    /// FECN with the defaults of Gran et al.'s Table I).
    pub fn effective_marking(&self) -> Option<MarkingConfig> {
        match (&self.marking, &self.congestion_control) {
            (Some(marking), _) => Some(marking.clone()),
            (None, CongestionControlConfig::Dcqcn(_)) => Some(MarkingConfig::Red(RedConfig::default())),
            (None, CongestionControlConfig::Ibcc(_)) => Some(MarkingConfig::Fecn(FecnConfig::default())),
            (None, CongestionControlConfig::None {}) => None,
        }
    }

    /// Whether IB CC is configured but can never act: `ccti_increase = 0`, or an FECN
    /// marking of threshold 0. Such a run is a run without congestion control (its flows
    /// are still served round robin).
    pub fn ibcc_inert(&self) -> bool {
        let CongestionControlConfig::Ibcc(ibcc) = &self.congestion_control else { return false };
        ibcc.ccti_increase == 0 || self.effective_marking().is_some_and(|m| !m.marks())
    }

    /// The marking the switches apply: the effective marking, unless it never marks or
    /// the IB CC it serves is inert (then nothing is installed, as without marking).
    pub fn marking_in_force(&self) -> Option<MarkingConfig> {
        self.effective_marking().filter(|m| m.marks() && !self.ibcc_inert())
    }

    /// Whether the NICs' congestion control can act (configured, and not inert IB CC).
    pub fn congestion_control_acts(&self) -> bool {
        !self.congestion_control.is_none() && !self.ibcc_inert()
    }

    /// The buffer an FECN threshold is a fraction of: a port-VL's per-VL input buffer on
    /// IOQ switches (InfiniBand's), the egress cap on shared-buffer switches, where
    /// packets queue at egress.
    pub fn port_vl_buffer(&self) -> u64 {
        match &self.switch {
            SwitchConfig::Ioq { input_buffer, .. } => input_buffer.0,
            SwitchConfig::SharedBuffer { egress_cap, .. } => egress_cap.0,
        }
    }
}
