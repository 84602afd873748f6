//! Routing: at each switch, pick the output port (and VC) for the packet at the head of
//! an input queue. Routings see the switch only through a read-only [`PortView`].

mod dmodk;
mod ecmp;
pub mod hash;
mod updown;

pub use dmodk::DModK;
pub use ecmp::Ecmp;
pub use updown::UpDownRouting;

use crate::config::RoutingConfig;
use crate::error::Result;
use crate::topology::AnyTopology;
use rand_pcg::Pcg64Mcg;

/// What a routing decision may depend on.
#[derive(Clone, Copy, Debug)]
pub struct RouteQuery {
    pub switch: u32,
    pub src: u32,
    pub dst: u32,
    /// Queue pair of the flow within (src, dst).
    pub qp: u32,
    /// VC the packet arrived on.
    pub vc: u8,
}

/// The decision: output port and output VC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub port: u16,
    pub vc: u8,
}

/// Read-only state of the switch doing the routing.
pub trait PortView {
    /// Bytes waiting at, or in flight from, the output side of `port` of this switch:
    /// output queue occupancy plus credits consumed downstream, summed over VCs.
    fn occupancy(&self, port: u16) -> u64;
}

pub trait Routing {
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route;
}

/// The built-in routings, dispatched statically.
pub enum AnyRouting {
    UpDown(UpDownRouting),
    DModK(DModK),
    Ecmp(Ecmp),
}

impl Routing for AnyRouting {
    #[inline]
    fn route(&self, topo: &AnyTopology, q: &RouteQuery, view: &impl PortView, rng: &mut Pcg64Mcg) -> Route {
        match self {
            AnyRouting::UpDown(r) => r.route(topo, q, view, rng),
            AnyRouting::DModK(r) => r.route(topo, q, view, rng),
            AnyRouting::Ecmp(r) => r.route(topo, q, view, rng),
        }
    }
}

impl AnyRouting {
    /// Builds the routing for `topo`; refuses combinations that cannot work.
    pub fn build(config: &RoutingConfig, _topo: &AnyTopology) -> Result<AnyRouting> {
        Ok(match config {
            RoutingConfig::Updown { select } => AnyRouting::UpDown(UpDownRouting { select: *select }),
            RoutingConfig::Dmodk => AnyRouting::DModK(DModK),
            RoutingConfig::Ecmp { hash } => AnyRouting::Ecmp(Ecmp { hash: *hash }),
        })
    }
}
