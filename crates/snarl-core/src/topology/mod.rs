//! Fabrics: who is wired to whom, at what rate and latency. Topologies know nothing of
//! routing; the up/down structure that tree routings need is exposed by [`UpDown`].
//! Graph algorithms (BFS, diameter, reachability) are free functions in [`analysis`].

pub mod analysis;
mod any;
mod back_to_back;
mod build;
mod limits;
mod single_switch;
mod spine_leaf;
mod xgft;

pub use any::AnyTopology;
pub use back_to_back::BackToBack;
pub use build::build;
pub use single_switch::SingleSwitch;
pub use spine_leaf::SpineLeaf;
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
}
