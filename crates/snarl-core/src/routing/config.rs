//! `[routing]`: the routing algorithm and its choices.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

fn yes() -> bool {
    true
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
