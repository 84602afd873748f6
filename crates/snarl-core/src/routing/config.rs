//! `[routing]`: the routing algorithm and its choices.

use crate::config::Problems;
use crate::memory::{bytes_of, mul, sum};
use crate::topology::FabricSize;
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn yes() -> bool {
    true
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UpSelect {
    /// Uniformly random among the minimal up-ports, per packet.
    #[default]
    Random,
    /// A fixed choice per source host (S-mod-K: at every level a digit of the source, as
    /// D-mod-K takes one of the destination): one path per (source, destination).
    Deterministic,
    /// Every minimal up-port is offered; the allocator takes one with room (see
    /// `routing::updown`).
    Adaptive,
}

/// The VCs an up/down packet may take at each hop.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UpDownVcs {
    /// The VC it was injected on, to its destination.
    #[default]
    Keep,
    /// Any: every VC of each port on offer is offered, and the allocator takes one with
    /// room (CAMINOS's up/down). Deadlock-free on any VC: every route climbs, then
    /// descends, so channel dependencies follow one order whatever the VCs.
    Any,
}

impl UpDownVcs {
    fn is_keep(&self) -> bool {
        *self == UpDownVcs::Keep
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcmpHash {
    /// Hash of (source, destination, source port, destination port, protocol); the
    /// source port is derived from the flow's queue pair.
    #[default]
    FiveTuple,
    /// Hash of the queue-pair number alone.
    Qp,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RoutingConfig {
    /// Up/down (minimal) routing on tree-like fabrics.
    Updown {
        #[serde(default)]
        select: UpSelect,
        /// The VCs a packet may take at each hop: the one it was injected on, or any.
        #[serde(default, skip_serializing_if = "UpDownVcs::is_keep")]
        vcs: UpDownVcs,
    },
    /// Destination-mod-k: the up-port is a function of the destination, so every
    /// destination has one root and down-paths never collide.
    Dmodk {},
    /// Equal-cost multipath: the up-port is a hash of the flow, salted per switch.
    Ecmp {
        #[serde(default)]
        hash: EcmpHash,
    },
    /// Flowlet switching (LetFlow): a flow keeps its port while the gaps between its
    /// packets at a switch stay within `gap`, and takes a new pseudo-random one after a
    /// longer pause. Timed in a fixed table per switch, shared by the flows that collide.
    Flowlet {
        /// Longest pause within a flowlet (default: 10 µs; see `docs/config.md`).
        #[serde(default = "default_gap")]
        gap: Time,
        /// The flow identifier the table and the port hash use (as ECMP's).
        #[serde(default)]
        hash: EcmpHash,
        /// Entries of each switch's flowlet table.
        #[serde(default = "default_table")]
        table: u32,
    },
    /// Packet spraying: every packet picks its port among the equal next hops.
    Spray {
        #[serde(default)]
        mode: SprayMode,
    },
    /// A per-QP path planner: each switch gives a QP its port when it first sees it, the
    /// one with the fewest active QPs, and frees it once the QP has been idle for longer
    /// than `idle`.
    Planner {
        /// How long a QP may send nothing through a switch before that switch takes it to
        /// have ended (default: 100 µs; see `docs/config.md`).
        #[serde(default = "default_idle")]
        idle: Time,
        /// Entries of each switch's QP table.
        #[serde(default = "default_table")]
        table: u32,
    },
    /// Adaptive routing driven by telemetry (CONGA): switches measure their links'
    /// utilisation, packets carry the most utilised one of their path to the destination
    /// leaf, which feeds it back to the source leaf; a new flowlet (or every packet)
    /// leaves the source leaf by the least congested path.
    Adaptive {
        /// Longest pause within a flowlet (default: 10 µs, as `flowlet`'s).
        #[serde(default = "default_gap")]
        gap: Time,
        /// When a flow may change paths: at a new flowlet, or at every packet.
        #[serde(default)]
        mode: AdaptiveMode,
        /// What the source leaf decides on: its own links and the feedback of the
        /// destination leaf, its own links alone, or (idealised) the paths' links now.
        #[serde(default)]
        telemetry: Telemetry,
        /// Period of the rate estimators' decay (default: 1 µs; see `docs/config.md`).
        #[serde(default = "default_period")]
        period: Time,
        /// The estimators' decay per period: they remember about `period / alpha`.
        #[serde(default = "default_alpha")]
        alpha: f64,
        /// Longest a source leaf believes what it heard of a path (default: 10 µs, the
        /// estimators' memory).
        #[serde(default = "default_age")]
        age: Time,
        /// Entries of each switch's flowlet table.
        #[serde(default = "default_table")]
        table: u32,
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

/// How a sprayed packet picks its port.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SprayMode {
    /// Uniformly at random, from the routing's random stream.
    #[default]
    Random,
    /// The next port in turn, one turn per switch and group of equal ports.
    RoundRobin,
}

/// When an adaptive routing's flow may change paths.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveMode {
    /// At a new flowlet: after a pause longer than `gap`.
    #[default]
    Flowlet,
    /// At every packet (spraying guided by telemetry).
    Packet,
}

/// What an adaptive routing's source leaf decides on.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Telemetry {
    /// Its own links' utilisation and the congestion of each path that the destination
    /// leaf fed back (CONGA's loop).
    #[default]
    Feedback,
    /// Its own links' utilisation alone.
    Local,
    /// The utilisation of every link of each path as it is now (an idealised bound).
    Instant,
}

/// Most entries of a flowlet or QP table per switch (2^24).
pub const MAX_TABLE: u32 = 1 << 24;

fn default_gap() -> Time {
    Time::from_ns(10_000)
}
fn default_idle() -> Time {
    Time::from_ns(100_000)
}
fn default_table() -> u32 {
    4096
}
fn default_period() -> Time {
    Time::from_ns(1_000)
}
fn default_alpha() -> f64 {
    0.1
}
fn default_age() -> Time {
    Time::from_ns(10_000)
}

impl RoutingConfig {
    /// The checks of `[routing]` that serde cannot express (what needs the fabric is
    /// checked as the routing is built: `AnyRouting::build`).
    pub(crate) fn validate(&self, p: &mut Problems) {
        let table = |p: &mut Problems, table: u32| {
            if !(1..=MAX_TABLE).contains(&table) {
                p.add("routing.table", format!("must be 1 to {MAX_TABLE} entries, found {table}"));
            }
        };
        match self {
            RoutingConfig::Flowlet { gap, table: entries, .. } => {
                p.positive("routing.gap", gap.0);
                table(p, *entries);
            }
            RoutingConfig::Planner { idle, table: entries } => {
                p.positive("routing.idle", idle.0);
                table(p, *entries);
            }
            RoutingConfig::Adaptive { gap, period, alpha, age, table: entries, .. } => {
                p.positive("routing.gap", gap.0);
                p.positive("routing.period", period.0);
                p.fraction("routing.alpha", *alpha, false);
                p.positive("routing.age", age.0);
                table(p, *entries);
            }
            _ => {}
        }
    }

    /// The routing's part of the memory estimate (`memory::estimate`): per switch, a
    /// flowlet table of `table` entries of 16 bytes, or a QP table of `table` entries of
    /// 32 bytes and 12 bytes per port (the ports' lists and counts); round-robin spraying
    /// keeps a turn of 2 bytes per port. `adaptive` keeps a flowlet table per switch (in
    /// `flowlet` mode), a rate estimator of 17 bytes per port, 4 bytes per switch and per
    /// host (where its ports start, its leaf), and with `feedback` telemetry its leaf
    /// tables: for L leaves of U up-ports, L² · U entries of 9 bytes (Congestion-To-Leaf
    /// and -From-Leaf) and L² · (8 ⌈U / 64⌉ + 2) for the feedback's round robins (its
    /// notes on packets are counted with the packets: `per_packet`). The others keep
    /// nothing.
    pub(crate) fn memory(&self, size: &FabricSize) -> u64 {
        let (switches, ports) = (size.switches(), size.ports());
        match self {
            RoutingConfig::Adaptive { table, telemetry, mode, .. } => {
                let (leaves, radix) = size.classes.first().copied().unwrap_or((0, 0));
                let paths = radix.saturating_sub(size.hosts.checked_div(leaves).unwrap_or(0));
                let pairs = if *telemetry == Telemetry::Feedback { mul(&[leaves, leaves]) } else { 0 };
                sum(&[
                    mul(&[if *mode == AdaptiveMode::Flowlet { switches } else { 0 }, *table as u64, 16]),
                    mul(&[ports, 17]),
                    mul(&[sum(&[switches, size.hosts]), 4]),
                    mul(&[pairs, paths, 9]),
                    mul(&[pairs, sum(&[mul(&[paths.div_ceil(64), 8]), 2])]),
                ])
            }
            RoutingConfig::Flowlet { table, .. } => mul(&[switches, *table as u64, 16]),
            RoutingConfig::Planner { table, .. } => sum(&[mul(&[switches, *table as u64, 32]), mul(&[ports, 12])]),
            RoutingConfig::Spray { mode: SprayMode::RoundRobin } => mul(&[ports, bytes_of::<u16>()]),
            _ => 0,
        }
    }

    /// Whether a flow's packets may take different paths one by one (and so arrive out
    /// of order): spraying, and adaptive routing per packet.
    pub fn sprays(&self) -> bool {
        matches!(self, RoutingConfig::Spray { .. } | RoutingConfig::Adaptive { mode: AdaptiveMode::Packet, .. })
    }

    /// Bytes the routing keeps beside every packet in flight: `adaptive` with `feedback`
    /// telemetry, what the packet carries (its path, CE and a feedback entry).
    pub(crate) fn per_packet(&self) -> u64 {
        match self {
            RoutingConfig::Adaptive { telemetry: Telemetry::Feedback, .. } => 6,
            _ => 0,
        }
    }
}

/// The VCs a packet on a minimal route may take.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
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
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
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
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
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
        RoutingConfig::Updown { select: UpSelect::Random, vcs: UpDownVcs::Keep }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_config;

    const SPINE_LEAF: &str = r#"
        [simulation]
        duration = "10us"
        [topology]
        type = "spine_leaf"
        leaves = 2
        spines = 1
        hosts_per_leaf = 2
        [traffic]
        load = 0.5
    "#;

    /// The error of `SPINE_LEAF` with `overrides`, as text.
    fn problem(overrides: &[(&str, &str)]) -> String {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        load_config(SPINE_LEAF, &o, None).unwrap_err().to_string()
    }

    #[test]
    fn load_balancing_defaults_resolve() {
        let o = |t: &str| vec![("routing.type".to_string(), t.to_string())];
        let resolved = |t: &str| load_config(SPINE_LEAF, &o(t), None).unwrap().to_toml();
        let flowlet = resolved("flowlet");
        assert!(flowlet.contains("gap = \"10us\"") && flowlet.contains("hash = \"five_tuple\""), "{flowlet}");
        assert!(flowlet.contains("table = 4096"), "{flowlet}");
        assert!(resolved("spray").contains("mode = \"random\""));
        let planner = resolved("planner");
        assert!(planner.contains("idle = \"100us\"") && planner.contains("table = 4096"), "{planner}");
        let adaptive = resolved("adaptive");
        for key in [
            "gap = \"10us\"",
            "mode = \"flowlet\"",
            "telemetry = \"feedback\"",
            "period = \"1us\"",
            "alpha = 0.1",
            "age = \"10us\"",
            "table = 4096",
        ] {
            assert!(adaptive.contains(key), "{key} in {adaptive}");
        }
    }

    #[test]
    fn the_tables_are_in_the_memory_estimate() {
        let part = |routing: &str| {
            let o = [("routing.type".to_string(), routing.to_string()), ("routing.table".to_string(), "100".into())];
            let o = if routing == "spray" {
                vec![o[0].clone(), ("routing.mode".into(), "round_robin".into())]
            } else {
                o.to_vec()
            };
            crate::memory::estimate(&load_config(SPINE_LEAF, &o, None).unwrap()).part("routing tables")
        };
        // Three switches: two leaves of 2 + 1 ports, a spine of 2; 8 ports.
        assert_eq!(part("flowlet"), 3 * 100 * 16);
        assert_eq!(part("planner"), 3 * 100 * 32 + 8 * 12);
        assert_eq!(part("spray"), 8 * 2);
        // Flowlet tables, an estimator per port, 4 bytes per switch and host (4 hosts)
        // and, for two leaves of one up-port each, 4 leaf pairs of 1 entry and a round
        // robin.
        assert_eq!(part("adaptive"), 3 * 100 * 16 + 8 * 17 + (3 + 4) * 4 + 4 * 9 + 4 * (8 + 2));
        let ecmp = load_config(SPINE_LEAF, &[("routing.type".into(), "ecmp".into())], None).unwrap();
        assert_eq!(crate::memory::estimate(&ecmp).part("routing tables"), 0);
    }

    #[test]
    fn times_and_tables_must_be_positive() {
        let e = problem(&[("routing.type", "flowlet"), ("routing.gap", "0ns"), ("routing.table", "0")]);
        assert!(e.contains("`routing.gap`") && e.contains("positive") && e.contains("`routing.table`"), "{e}");
        let e = problem(&[("routing.type", "planner"), ("routing.idle", "0us")]);
        assert!(e.contains("`routing.idle`") && e.contains("positive"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.alpha", "1.5"), ("routing.period", "0ns")]);
        assert!(e.contains("`routing.period`") && e.contains("`routing.alpha`") && e.contains("(0, 1]"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.age", "0us")]);
        assert!(e.contains("`routing.age`") && e.contains("positive"), "{e}");
        let e = problem(&[("routing.type", "planner"), ("routing.table", "16777217")]);
        assert!(e.contains("`routing.table`") && e.contains("1 to 16777216"), "{e}");
    }

    #[test]
    fn misspelt_names_get_the_closest() {
        let e = problem(&[("routing.type", "spray"), ("routing.mode", "round_robbin")]);
        assert!(e.contains("routing.mode") && e.contains("`round_robin`"), "{e}");
        let e = problem(&[("routing.type", "flowlett")]);
        assert!(e.contains("routing.type") && e.contains("`flowlet`"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.telemetry", "feedbak")]);
        assert!(e.contains("routing.telemetry") && e.contains("`feedback`"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.mode", "packets")]);
        assert!(e.contains("routing.mode") && e.contains("`packet`"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.perod", "1us")]);
        assert!(e.contains("routing.perod") && e.contains("did you mean `period`"), "{e}");
        let e = problem(&[("routing.type", "adaptive"), ("routing.idle", "1us")]);
        assert!(
            e.contains("routing.idle") && e.contains("valid: gap, mode, telemetry, period, alpha, age, table"),
            "{e}"
        );
        let e = problem(&[("routing.type", "planner"), ("routing.gap", "1us")]);
        assert!(e.contains("routing.gap") && e.contains("valid: idle, table"), "{e}");
    }
}
