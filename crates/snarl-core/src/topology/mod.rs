//! Fabrics: who is wired to whom, at what rate and latency. Topologies know nothing of
//! routing; the up/down structure that tree routings need is exposed by [`UpDown`], the
//! distances that minimal, Valiant and UGAL routings need by [`Minimal`].
//! Graph algorithms (BFS, diameter, reachability) are free functions in [`analysis`].
//!
//! Every fabric numbers switches and hosts by mixed-radix coordinates, so the hosts of one
//! switch are consecutive, and numbers the ports of a switch with its hosts first
//! (ports `0..hosts per switch`), then its switch-to-switch ports.

pub mod analysis;
mod any;
mod arrangement;
mod back_to_back;
mod build;
mod config;
mod dragonfly;
mod grid;
mod groups;
mod host_ports;
mod hyperx;
pub mod layout;
mod limits;
mod megafly;
mod mesh;
mod node_divisor;
mod nodes;
mod single_switch;
mod size;
mod spine_leaf;
mod torus;
mod xgft;

pub use any::AnyTopology;
pub use back_to_back::BackToBack;
pub use build::build;
pub use config::{
    kept_uplinks, parse_oversubscription, Arrangement, LinkConfig, LinksConfig, OversubscriptionBy, TopologyConfig,
    TopologySection,
};
pub use dragonfly::Dragonfly;
pub use hyperx::HyperX;
pub use megafly::Megafly;
pub use mesh::Mesh;
pub use nodes::Nodes;
pub use single_switch::SingleSwitch;
pub use size::{fabric_size, within_limits, FabricSize};
pub use spine_leaf::{Oversubscription, SpineLeaf};
pub use torus::Torus;
pub use xgft::Xgft;

use crate::units::{Rate, Time};

/// What sits at the far end of a port or host link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Switch {
        switch: u32,
        port: u16,
    },
    Host(u32),
    /// An unwired port (e.g. spare ports of a radix-k switch).
    Unconnected,
}

/// A physical link: serialisation rate and one-way propagation latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub rate: Rate,
    pub latency: Time,
}

/// The two link classes every fabric is described with: host-to-switch links and
/// switch-to-switch links. Topologies may derive further rates from these (e.g. the
/// uplinks of an oversubscribed spine-leaf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkClasses {
    pub host: Link,
    pub switch: Link,
}

/// A fabric. Switches, hosts and ports are small dense indices.
pub trait Topology {
    fn num_switches(&self) -> usize;
    fn num_hosts(&self) -> usize;
    fn num_ports(&self, switch: usize) -> usize;
    /// The far end of `port` of `switch`.
    fn peer(&self, switch: usize, port: usize) -> Endpoint;
    /// Where `host`'s single network port is plugged in.
    fn attachment(&self, host: usize) -> Endpoint;
    /// The link at `port` of `switch` (meaningless for unconnected ports).
    fn link(&self, switch: usize, port: usize) -> Link;
    /// The link between `host` and its attachment.
    fn host_link(&self, host: usize) -> Link;
}

/// A contiguous range of candidate output ports that are equally good next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub first: u16,
    pub count: u16,
    /// The index in `0..count` that D-mod-K routing picks for this destination.
    pub dmodk: u16,
}

/// Tree-like fabrics (fat-trees, spine-leaf, single switches): at every switch the
/// destination is either below (go down a determined port range) or not (go up, any of a
/// port range). This is all that up/down, D-mod-K and ECMP need.
pub trait UpDown {
    /// The minimal next-hop ports from `switch` towards `dst_host`.
    fn next_hops(&self, switch: usize, dst_host: usize) -> PortRange;
    /// Level of a switch: 1 for leaves, growing towards the roots.
    fn level(&self, switch: usize) -> usize;
    /// The up-port index (in `0..count` of `next_hops` where it goes up) that spreads
    /// hosts over the up-ports as D-mod-K spreads destinations: a digit of `host` chosen
    /// by the switch's level, so that at every level consecutive hosts take consecutive
    /// ports. D-mod-K's choice is `up_digit(switch, dst)`; a source-based deterministic
    /// routing's is `up_digit(switch, src)`.
    fn up_digit(&self, switch: usize, host: usize) -> u16;
}

/// Most candidate ports any fabric offers for one minimal hop. Fabrics that would offer
/// more somewhere refuse to be built. The balanced dragonfly of 262,656 hosts
/// (p = h = 16, a = 32) needs 18: besides its local-global-local paths, a switch may start
/// equally short paths through a third group.
pub const MAX_MINIMAL: usize = 32;

/// Direct and hierarchical fabrics (dragonfly, megafly, HyperX, torus, mesh): exact
/// switch-to-switch distances and the ports that start shortest paths, for distance-based
/// routings (minimal, Valiant, UGAL). Every method is a few arithmetic steps or table
/// reads (at most one per port of the switch), with no allocation.
pub trait Minimal {
    /// Switch a host is attached to, and the port it uses there.
    fn host_switch(&self, host: usize) -> (usize, u16);
    /// Fewest switch-to-switch hops between two switches (0 for the same switch).
    fn distance(&self, from: usize, to: usize) -> u32;
    /// Ports of `switch` that start a minimal path to switch `to` (`to != switch`);
    /// writes them to `out` and returns how many.
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize;
    /// `distance` and `minimal_ports` at once, for fabrics that find both in one pass.
    #[inline]
    fn minimal_route(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> (u32, usize) {
        (self.distance(switch, to), self.minimal_ports(switch, to, out))
    }
    /// Largest `distance` between two switches that hosts are attached to.
    fn diameter_hint(&self) -> u32;
}
