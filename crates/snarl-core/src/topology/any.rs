//! Every fabric behind one type, dispatched statically by `match`.

use super::{BackToBack, Endpoint, Link, PortRange, SingleSwitch, SpineLeaf, Topology, UpDown, Xgft};

/// One of the fabrics; fat-trees and k-ary n-trees are [`Xgft`]s.
#[derive(Clone, Debug)]
pub enum AnyTopology {
    SingleSwitch(SingleSwitch),
    BackToBack(BackToBack),
    SpineLeaf(SpineLeaf),
    Xgft(Xgft),
}

/// Runs `$body` with `$t` bound to the fabric inside `$self`.
macro_rules! each {
    ($self:expr, $t:ident => $body:expr) => {
        match $self {
            AnyTopology::SingleSwitch($t) => $body,
            AnyTopology::BackToBack($t) => $body,
            AnyTopology::SpineLeaf($t) => $body,
            AnyTopology::Xgft($t) => $body,
        }
    };
}

impl AnyTopology {
    /// One line naming the fabric and its size, e.g.
    /// "XGFT(3; 8,8,16; 1,8,8): 1024 hosts, 320 switches".
    pub fn describe(&self) -> String {
        each!(self, t => t.describe())
    }
}

impl Topology for AnyTopology {
    fn num_switches(&self) -> usize {
        each!(self, t => t.num_switches())
    }

    fn num_hosts(&self) -> usize {
        each!(self, t => t.num_hosts())
    }

    #[inline]
    fn num_ports(&self, switch: usize) -> usize {
        each!(self, t => t.num_ports(switch))
    }

    #[inline]
    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        each!(self, t => t.peer(switch, port))
    }

    #[inline]
    fn attachment(&self, host: usize) -> Endpoint {
        each!(self, t => t.attachment(host))
    }

    #[inline]
    fn link(&self, switch: usize, port: usize) -> Link {
        each!(self, t => t.link(switch, port))
    }

    #[inline]
    fn host_link(&self, host: usize) -> Link {
        each!(self, t => t.host_link(host))
    }
}

impl UpDown for AnyTopology {
    #[inline]
    fn next_hops(&self, switch: usize, dst_host: usize) -> PortRange {
        each!(self, t => t.next_hops(switch, dst_host))
    }

    #[inline]
    fn level(&self, switch: usize) -> usize {
        each!(self, t => t.level(switch))
    }
}
