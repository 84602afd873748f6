//! Every fabric behind one type, dispatched statically by `match`.

use super::{
    BackToBack, Dragonfly, Endpoint, HyperX, Link, Megafly, Mesh, Minimal, PortRange, SingleSwitch, SpineLeaf,
    Topology, Torus, UpDown, Xgft, MAX_MINIMAL,
};

/// One of the fabrics; fat-trees and k-ary n-trees are [`Xgft`]s.
///
/// Tagged by a byte of its own: routing matches on the fabric several times a packet,
/// and a niche in a fabric's fields would take several instructions to decode each time.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum AnyTopology {
    SingleSwitch(SingleSwitch),
    BackToBack(BackToBack),
    SpineLeaf(SpineLeaf),
    Xgft(Xgft),
    Dragonfly(Dragonfly),
    Megafly(Megafly),
    HyperX(HyperX),
    Torus(Torus),
    Mesh(Mesh),
}

/// Runs `$body` with `$t` bound to the fabric inside `$self`.
macro_rules! each {
    ($self:expr, $t:ident => $body:expr) => {
        match $self {
            AnyTopology::SingleSwitch($t) => $body,
            AnyTopology::BackToBack($t) => $body,
            AnyTopology::SpineLeaf($t) => $body,
            AnyTopology::Xgft($t) => $body,
            AnyTopology::Dragonfly($t) => $body,
            AnyTopology::Megafly($t) => $body,
            AnyTopology::HyperX($t) => $body,
            AnyTopology::Torus($t) => $body,
            AnyTopology::Mesh($t) => $body,
        }
    };
}

/// Runs `$body` with `$t` bound to a fabric that implements [`Minimal`], or evaluates
/// `$other` for the tree fabrics.
macro_rules! minimal {
    ($self:expr, $t:ident => $body:expr, _ => $other:expr) => {
        match $self {
            AnyTopology::Dragonfly($t) => $body,
            AnyTopology::Megafly($t) => $body,
            AnyTopology::HyperX($t) => $body,
            AnyTopology::Torus($t) => $body,
            AnyTopology::Mesh($t) => $body,
            AnyTopology::SingleSwitch(_)
            | AnyTopology::BackToBack(_)
            | AnyTopology::SpineLeaf(_)
            | AnyTopology::Xgft(_) => $other,
        }
    };
}

impl AnyTopology {
    /// One line naming the fabric and its size, e.g.
    /// "XGFT(3; 8,8,16; 1,8,8): 1024 hosts, 320 switches".
    pub fn describe(&self) -> String {
        each!(self, t => t.describe())
    }

    /// Whether the fabric is tree-like and answers [`UpDown`] (single switch, back-to-back,
    /// spine-leaf, XGFT). Direct and hierarchical fabrics answer empty port ranges.
    pub fn supports_up_down(&self) -> bool {
        minimal!(self, _t => false, _ => true)
    }

    /// Whether the fabric answers [`Minimal`] (dragonfly, megafly, HyperX, torus, mesh).
    /// Tree fabrics answer no candidates and distance 0; route them with [`UpDown`].
    pub fn supports_minimal(&self) -> bool {
        minimal!(self, _t => true, _ => false)
    }

    /// VC classes for deadlock avoidance on distance-routed fabrics: how much the class
    /// of a packet grows at a switch it reached by `in_port` from another switch
    /// (the first hop is class 0 whatever it arrived by). Flat fabrics (HyperX, torus,
    /// mesh) take one class per switch-to-switch hop. A dragonfly takes one per global
    /// hop (its local links carry packets both before and after a global hop: at most one
    /// local hop per class and group, after Kim et al.). A megafly takes none: a minimal
    /// route is up (leaf to spine), global, down (spine to leaf), and up, global and down
    /// links are distinct channels used in that order, so one class is acyclic. Both add
    /// one at an intermediate switch (see `routing::minimal`): a Valiant route is two
    /// minimal ones.
    #[inline]
    pub fn class_step(&self, in_port: u16) -> u8 {
        match self {
            AnyTopology::Dragonfly(t) => u8::from(t.is_global(in_port)),
            AnyTopology::Megafly(_) => 0,
            // Every hop after the first arrives from a switch.
            _ => 1,
        }
    }

    /// Whether `port` of `switch` is a global link (between groups of a dragonfly or
    /// megafly); flat fabrics have none.
    #[inline]
    pub fn is_global_port(&self, switch: usize, port: u16) -> bool {
        match self {
            AnyTopology::Dragonfly(t) => t.is_global(port),
            AnyTopology::Megafly(t) => t.is_global(switch, port),
            _ => false,
        }
    }

    /// Whether every host hangs off one switch, leaving no other switch with hosts.
    #[inline]
    pub fn hosts_on_one_switch(&self) -> bool {
        match self {
            // At least two groups, or a side of two or more switches, each with hosts.
            AnyTopology::Dragonfly(_)
            | AnyTopology::Megafly(_)
            | AnyTopology::HyperX(_)
            | AnyTopology::Torus(_)
            | AnyTopology::Mesh(_) => false,
            _ => self.host_switch(0).0 == self.host_switch(self.num_hosts() - 1).0,
        }
    }

    /// The group of `switch` on hierarchical fabrics (dragonfly, megafly); `None` on
    /// flat ones.
    #[inline]
    pub fn group_of(&self, switch: usize) -> Option<usize> {
        match self {
            AnyTopology::Dragonfly(t) => Some(t.group(switch)),
            AnyTopology::Megafly(t) => Some(t.group(switch)),
            _ => None,
        }
    }

    /// Whether reaching an intermediate switch starts a new VC class.
    #[inline]
    /// Whether a minimal route may take any VC (from its class up) without risk of
    /// deadlock: on a megafly, whose minimal routes go up, across one global link and
    /// down, channels no cycle of one VC can close.
    pub fn minimal_routes_take_any_vc(&self) -> bool {
        matches!(self, AnyTopology::Megafly(_))
    }

    pub fn class_at_intermediate(&self) -> bool {
        matches!(self, AnyTopology::Dragonfly(_) | AnyTopology::Megafly(_))
    }

    /// VC classes a route may need: direct (`false`) or through an intermediate switch.
    pub fn classes(&self, through_intermediate: bool) -> usize {
        match (self, through_intermediate) {
            (AnyTopology::Dragonfly(_), false) => 2,
            (AnyTopology::Dragonfly(_), true) => 4,
            (AnyTopology::Megafly(_), false) => 1,
            (AnyTopology::Megafly(_), true) => 2,
            (_, false) => self.diameter_hint() as usize,
            (_, true) => 2 * self.diameter_hint() as usize,
        }
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

/// Tree fabrics only (see [`AnyTopology::supports_up_down`]).
impl UpDown for AnyTopology {
    #[inline]
    fn next_hops(&self, switch: usize, dst_host: usize) -> PortRange {
        match self {
            AnyTopology::SingleSwitch(t) => t.next_hops(switch, dst_host),
            AnyTopology::BackToBack(t) => t.next_hops(switch, dst_host),
            AnyTopology::SpineLeaf(t) => t.next_hops(switch, dst_host),
            AnyTopology::Xgft(t) => t.next_hops(switch, dst_host),
            _ => PortRange { first: 0, count: 0, dmodk: 0 },
        }
    }

    #[inline]
    fn level(&self, switch: usize) -> usize {
        match self {
            AnyTopology::SingleSwitch(t) => t.level(switch),
            AnyTopology::BackToBack(t) => t.level(switch),
            AnyTopology::SpineLeaf(t) => t.level(switch),
            AnyTopology::Xgft(t) => t.level(switch),
            _ => 0,
        }
    }

    #[inline]
    fn up_digit(&self, switch: usize, host: usize) -> u16 {
        match self {
            AnyTopology::SpineLeaf(t) => t.up_digit(switch, host),
            AnyTopology::Xgft(t) => t.up_digit(switch, host),
            _ => 0,
        }
    }
}

/// Direct and hierarchical fabrics only (see [`AnyTopology::supports_minimal`]).
impl Minimal for AnyTopology {
    /// Answered by every fabric whose hosts sit on switches.
    #[inline]
    fn host_switch(&self, host: usize) -> (usize, u16) {
        minimal!(self, t => t.host_switch(host), _ => match self.attachment(host) {
            Endpoint::Switch { switch, port } => (switch as usize, port),
            _ => (0, 0),
        })
    }

    #[inline]
    fn distance(&self, from: usize, to: usize) -> u32 {
        minimal!(self, t => t.distance(from, to), _ => 0)
    }

    #[inline]
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize {
        minimal!(self, t => t.minimal_ports(switch, to, out), _ => 0)
    }

    #[inline]
    fn minimal_route(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> (u32, usize) {
        minimal!(self, t => t.minimal_route(switch, to, out), _ => (0, 0))
    }

    fn diameter_hint(&self) -> u32 {
        minimal!(self, t => t.diameter_hint(), _ => 0)
    }
}
