//! Two-tier leaf-spine fabrics, with parallel links between every leaf and spine and an
//! optional oversubscription, made by slowing the uplinks or by removing some.
//!
//! Switches `0..leaves` are leaves, then come the spines. Leaf ports `0..hosts_per_leaf`
//! lead to its hosts (host h sits on leaf h / hosts_per_leaf), then come its uplinks,
//! spine by spine: with m links from each leaf to spine s (m = links_per_pair, unless
//! uplinks were removed), leaf port `hosts_per_leaf + first(s) + j` is parallel link j to
//! spine s, which sees it at its port `leaf * m + j`; `first(s)` is the number of a
//! leaf's uplinks to the spines before s.
//!
//! Removing uplinks (`oversubscription_by = "links"`) keeps k of each leaf's
//! spines × links_per_pair, dealt round robin over the spines (the first k mod spines
//! spines keep one link more), the same for every leaf, so that every spine reaches
//! every leaf alike and up/down routing stays correct; ECMP and d-mod-k then choose
//! among the k uplinks, and each spine among its links down to a leaf.

use super::limits::{check_nodes, check_ports};
use super::{Endpoint, Link, LinkClasses, PortRange, Topology, UpDown};
use crate::error::{Error, Result};
use crate::units::Rate;

/// How a spine-leaf's uplink capacity is a fraction of its host capacity (an
/// oversubscription "1:f").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Oversubscription {
    /// Every uplink, at the rate that makes a leaf's uplink capacity f times its host
    /// capacity.
    Rate(f64),
    /// f of every leaf's uplinks, at the switch link rate.
    Links(f64),
}

#[derive(Clone, Debug)]
pub struct SpineLeaf {
    leaves: usize,
    spines: usize,
    hosts_per_leaf: usize,
    links_per_pair: usize,
    /// Uplinks of each leaf: spines × links_per_pair, or those kept.
    up_ports: usize,
    /// Links from a leaf to each spine: `per_spine` each, one more for the first
    /// `one_more` spines.
    per_spine: usize,
    one_more: usize,
    host_link: Link,
    uplink: Link,
}

impl SpineLeaf {
    /// `oversubscription = Some(Rate(f))` (from an oversubscription "1:f") sets the uplink
    /// rate so that a leaf's uplink capacity is f times its host capacity; `Links(f)`
    /// keeps f of each leaf's uplinks (a whole number, at least one per spine);
    /// otherwise every uplink runs at the switch link rate.
    pub fn new(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        links_per_pair: u32,
        oversubscription: Option<Oversubscription>,
        links: LinkClasses,
    ) -> Result<SpineLeaf> {
        let name = format!("spine-leaf ({leaves} leaves, {spines} spines, {hosts_per_leaf} hosts per leaf)");
        if leaves == 0 || spines == 0 || hosts_per_leaf == 0 || links_per_pair == 0 {
            return Err(Error::Topology(format!(
                "{name}: leaves, spines, hosts per leaf and links per pair must be positive (links per pair: {links_per_pair})"
            )));
        }
        let (l, s, h, p) = (leaves as u64, spines as u64, hosts_per_leaf as u64, links_per_pair as u64);
        let up_ports = match oversubscription {
            Some(Oversubscription::Links(f)) => super::kept_uplinks(s, s * p, f).ok_or_else(|| {
                Error::Topology(format!(
                    "{name}: keeping {f} of a leaf's {} uplinks leaves no whole number of them, at least one per spine",
                    s * p
                ))
            })?,
            _ => s * p,
        };
        check_ports(&name, "leaf", h + up_ports)?;
        check_ports(&name, "spine", l * up_ports.div_ceil(s))?;
        check_nodes(&name, "hosts", Some(l * h))?;
        check_nodes(&name, "switches", Some(l + s))?;

        let rate = match oversubscription {
            None | Some(Oversubscription::Links(_)) => links.switch.rate,
            Some(Oversubscription::Rate(f)) => {
                let bits = links.host.rate.0 as f64 * h as f64 * f / (s * p) as f64;
                if !(f.is_finite() && f > 0.0 && bits.round() >= 1.0 && bits < u64::MAX as f64) {
                    return Err(Error::Topology(format!(
                        "{name}: an uplink fraction of {f} gives no usable uplink rate ({bits} bits/s)"
                    )));
                }
                Rate(bits.round() as u64)
            }
        };
        Ok(SpineLeaf {
            leaves: leaves as usize,
            spines: spines as usize,
            hosts_per_leaf: hosts_per_leaf as usize,
            links_per_pair: links_per_pair as usize,
            up_ports: up_ports as usize,
            per_spine: (up_ports / s) as usize,
            one_more: (up_ports % s) as usize,
            host_link: links.host,
            uplink: Link { rate, latency: links.switch.latency },
        })
    }

    pub fn leaves(&self) -> usize {
        self.leaves
    }

    pub fn spines(&self) -> usize {
        self.spines
    }

    pub fn hosts_per_leaf(&self) -> usize {
        self.hosts_per_leaf
    }

    pub fn links_per_pair(&self) -> usize {
        self.links_per_pair
    }

    /// The leaf-spine links (all parallel links are alike).
    pub fn uplink(&self) -> Link {
        self.uplink
    }

    /// Uplinks of each leaf (spines × links_per_pair unless some were removed).
    pub fn uplinks_per_leaf(&self) -> usize {
        self.up_ports
    }

    /// E.g. "spine-leaf: 16 leaves of 8 hosts, 4 spines, 1 link per pair at 100Gbps: 128 hosts, 20 switches";
    /// with uplinks removed, "..., 4 links per pair at 800Gbps, 3 of a leaf's 4 uplinks kept: ...".
    pub fn describe(&self) -> String {
        let all = self.spines * self.links_per_pair;
        let kept = if self.up_ports < all {
            format!(", {} of a leaf's {all} uplinks kept", self.up_ports)
        } else {
            String::new()
        };
        format!(
            "spine-leaf: {} leaves of {} hosts, {} spines, {} link{} per pair at {}{kept}: {} hosts, {} switches",
            self.leaves,
            self.hosts_per_leaf,
            self.spines,
            self.links_per_pair,
            if self.links_per_pair == 1 { "" } else { "s" },
            self.uplink.rate,
            self.num_hosts(),
            self.num_switches()
        )
    }

    fn up_ports(&self) -> usize {
        self.up_ports
    }

    /// Links from each leaf to spine `spine` (0-based among the spines).
    #[inline]
    fn links_to(&self, spine: usize) -> usize {
        self.per_spine + (spine < self.one_more) as usize
    }

    /// A leaf's uplinks to the spines before `spine`.
    #[inline]
    fn first_uplink(&self, spine: usize) -> usize {
        spine * self.per_spine + spine.min(self.one_more)
    }

    /// The spine (0-based) and parallel link of a leaf's uplink `up`.
    fn uplink_of(&self, up: usize) -> (usize, usize) {
        let wider = self.one_more * (self.per_spine + 1);
        let spine = if up < wider { up / (self.per_spine + 1) } else { self.one_more + (up - wider) / self.per_spine };
        (spine, up - self.first_uplink(spine))
    }
}

impl Topology for SpineLeaf {
    fn num_switches(&self) -> usize {
        self.leaves + self.spines
    }

    fn num_hosts(&self) -> usize {
        self.leaves * self.hosts_per_leaf
    }

    fn num_ports(&self, switch: usize) -> usize {
        if switch < self.leaves {
            self.hosts_per_leaf + self.up_ports()
        } else {
            self.leaves * self.links_to(switch - self.leaves)
        }
    }

    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        if switch < self.leaves {
            if port < self.hosts_per_leaf {
                return Endpoint::Host((switch * self.hosts_per_leaf + port) as u32);
            }
            let (spine, j) = self.uplink_of(port - self.hosts_per_leaf);
            let m = self.links_to(spine);
            Endpoint::Switch { switch: (self.leaves + spine) as u32, port: (switch * m + j) as u16 }
        } else {
            let spine = switch - self.leaves;
            let m = self.links_to(spine);
            let (leaf, j) = (port / m, port % m);
            Endpoint::Switch { switch: leaf as u32, port: (self.hosts_per_leaf + self.first_uplink(spine) + j) as u16 }
        }
    }

    fn attachment(&self, host: usize) -> Endpoint {
        Endpoint::Switch { switch: (host / self.hosts_per_leaf) as u32, port: (host % self.hosts_per_leaf) as u16 }
    }

    fn link(&self, switch: usize, port: usize) -> Link {
        if switch < self.leaves && port < self.hosts_per_leaf {
            self.host_link
        } else {
            self.uplink
        }
    }

    fn host_link(&self, _host: usize) -> Link {
        self.host_link
    }
}

impl UpDown for SpineLeaf {
    fn next_hops(&self, switch: usize, dst_host: usize) -> PortRange {
        let dst_leaf = dst_host / self.hosts_per_leaf;
        if switch == dst_leaf {
            PortRange { first: (dst_host % self.hosts_per_leaf) as u16, count: 1, dmodk: 0 }
        } else if switch < self.leaves {
            // Up port dst mod (the leaf's uplinks): with every uplink, dst picks spine
            // (dst mod that) / links and parallel link dst mod links, the same link the
            // spine picks on the way down.
            let count = self.up_ports();
            PortRange { first: self.hosts_per_leaf as u16, count: count as u16, dmodk: self.up_digit(switch, dst_host) }
        } else {
            let m = self.links_to(switch - self.leaves);
            PortRange { first: (dst_leaf * m) as u16, count: m as u16, dmodk: self.up_digit(switch, dst_host) }
        }
    }

    /// At a leaf, host mod the up-ports; at a spine, host mod its parallel links to a leaf.
    fn up_digit(&self, switch: usize, host: usize) -> u16 {
        let count = if switch < self.leaves { self.up_ports() } else { self.links_to(switch - self.leaves) };
        (host % count) as u16
    }

    fn level(&self, switch: usize) -> usize {
        if switch < self.leaves {
            1
        } else {
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::Time;
    use std::collections::HashSet;

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(400_000_000_000), latency: Time::from_ns(60) },
        }
    }

    #[test]
    fn counts_and_ports() {
        let t = SpineLeaf::new(16, 4, 8, 1, None, links()).unwrap();
        assert_eq!(
            t.describe(),
            "spine-leaf: 16 leaves of 8 hosts, 4 spines, 1 link per pair at 400Gbps: 128 hosts, 20 switches"
        );
        assert_eq!((t.num_hosts(), t.num_switches()), (128, 20));
        assert_eq!(port_degrees(&t), [vec![12; 16], vec![16; 4]].concat());
        assert_eq!(t.uplink(), links().switch);
        assert_eq!((t.level(15), t.level(16)), (1, 2));
        assert_eq!(diameter(&t), 2);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
    }

    #[test]
    fn parallel_links() {
        let t = SpineLeaf::new(4, 3, 5, 2, None, links()).unwrap();
        assert_eq!(port_degrees(&t), [vec![5 + 6; 4], vec![8; 3]].concat());
        // Leaf 2, spine 1, parallel link 1: leaf port 5 + 1·2 + 1, spine port 2·2 + 1.
        assert_eq!(t.peer(2, 8), Endpoint::Switch { switch: 5, port: 5 });
        assert_eq!(t.peer(5, 5), Endpoint::Switch { switch: 2, port: 8 });
        assert_eq!(t.next_hops(5, 13), PortRange { first: 4, count: 2, dmodk: 1 });
        assert_eq!(t.next_hops(0, 13), PortRange { first: 5, count: 6, dmodk: 1 });
        assert_eq!(t.next_hops(2, 13), PortRange { first: 3, count: 1, dmodk: 0 });
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
    }

    #[test]
    fn oversubscribed_uplink_rates() {
        // 8 hosts of 100 Gb/s per leaf, 4 spines: "1:0.5" leaves 400 Gb/s up, 100 per uplink.
        let half = SpineLeaf::new(8, 4, 8, 1, Some(Oversubscription::Rate(0.5)), links()).unwrap();
        assert_eq!(half.uplink(), Link { rate: Rate(100_000_000_000), latency: Time::from_ns(60) });
        let three_quarters = SpineLeaf::new(8, 4, 8, 1, Some(Oversubscription::Rate(0.75)), links()).unwrap();
        assert_eq!(three_quarters.uplink().rate, Rate(150_000_000_000));
        assert_eq!(three_quarters.link(8, 0).rate, Rate(150_000_000_000));
        assert_eq!(three_quarters.link(0, 7), links().host);
        let parallel = SpineLeaf::new(8, 4, 8, 2, Some(Oversubscription::Rate(1.0)), links()).unwrap();
        assert_eq!(parallel.uplink().rate, Rate(100_000_000_000));
        check_wiring(&three_quarters).unwrap();
    }

    /// The fabric of an NCCL spine-leaf test: 2 leaves of 8 hosts at 400 Gb/s, 1 spine,
    /// 4 links of 800 Gb/s per leaf-spine pair; "1:0.75" by links keeps 3 of them.
    #[test]
    fn oversubscribed_by_removing_uplinks() {
        let links = LinkClasses {
            host: Link { rate: Rate(400_000_000_000), latency: Time::from_ns(15) },
            switch: Link { rate: Rate(800_000_000_000), latency: Time::from_ns(15) },
        };
        let nccl = |f: Option<f64>| SpineLeaf::new(2, 1, 8, 4, f.map(Oversubscription::Links), links).unwrap();
        for (f, kept) in [(None, 4), (Some(1.0), 4), (Some(0.75), 3), (Some(0.5), 2), (Some(0.25), 1)] {
            let t = nccl(f);
            assert_eq!(t.uplinks_per_leaf(), kept, "1:{f:?}");
            assert_eq!(port_degrees(&t), vec![8 + kept, 8 + kept, 2 * kept], "1:{f:?}");
            // The links keep the switch rate: capacity goes with the links.
            assert_eq!(t.uplink(), links.switch);
            assert_eq!(t.next_hops(0, 12), PortRange { first: 8, count: kept as u16, dmodk: (12 % kept) as u16 });
            assert_eq!(
                t.next_hops(2, 12),
                PortRange { first: kept as u16, count: kept as u16, dmodk: (12 % kept) as u16 }
            );
            check_wiring(&t).unwrap();
            up_down_path_ok(&t).unwrap();
            assert!(all_hosts_reachable(&t));
        }
        assert_eq!(
            nccl(Some(0.75)).describe(),
            "spine-leaf: 2 leaves of 8 hosts, 1 spines, 4 links per pair at 800Gbps, 3 of a leaf's 4 uplinks kept: \
             16 hosts, 3 switches"
        );
        // 2 spines of 2 links per pair, 3 uplinks kept: spine 0 keeps two links to every
        // leaf, spine 1 one.
        let t = SpineLeaf::new(3, 2, 4, 2, Some(Oversubscription::Links(0.75)), self::links()).unwrap();
        assert_eq!(port_degrees(&t), [vec![4 + 3; 3], vec![6, 3]].concat());
        assert_eq!(t.peer(1, 6), Endpoint::Switch { switch: 4, port: 1 });
        assert_eq!(t.peer(4, 1), Endpoint::Switch { switch: 1, port: 6 });
        assert_eq!(t.peer(3, 3), Endpoint::Switch { switch: 1, port: 5 });
        assert_eq!(t.next_hops(3, 0), PortRange { first: 0, count: 2, dmodk: 0 });
        assert_eq!(t.next_hops(4, 5), PortRange { first: 1, count: 1, dmodk: 0 });
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
        // Ratios that keep no whole number of uplinks, or leave a spine without one.
        let err = |f: f64| match SpineLeaf::new(3, 2, 4, 2, Some(Oversubscription::Links(f)), self::links()) {
            Err(Error::Topology(message)) => message,
            other => panic!("expected a topology error, got {other:?}"),
        };
        assert!(err(0.6).contains("no whole number"));
        assert!(err(0.25).contains("at least one per spine"));
        assert!(err(1.5).contains("no whole number"));
    }

    #[test]
    fn up_down_and_dmodk() {
        for t in [
            SpineLeaf::new(5, 3, 4, 1, None, links()).unwrap(),
            SpineLeaf::new(3, 2, 6, 3, None, links()).unwrap(),
            SpineLeaf::new(3, 2, 6, 3, Some(Oversubscription::Links(4.0 / 6.0)), links()).unwrap(),
        ] {
            up_down_path_ok(&t).unwrap();
            for dst in 0..t.num_hosts() {
                let mut spine_ports = HashSet::new();
                for src in (0..t.num_hosts()).filter(|&s| s / t.hosts_per_leaf() != dst / t.hosts_per_leaf()) {
                    let path = dmodk_path(&t, src, dst).unwrap();
                    assert_eq!(path.len(), 3);
                    // The spine and its parallel link down to dst are the same for every source.
                    let hops = t.next_hops(path[1], dst);
                    spine_ports.insert((path[1], hops.first + hops.dmodk));
                }
                assert_eq!(spine_ports.len(), 1, "destination {dst}: {spine_ports:?}");
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<SpineLeaf>| match r {
            Err(Error::Topology(message)) => message,
            other => panic!("expected a topology error, got {other:?}"),
        };
        assert!(err(SpineLeaf::new(0, 4, 8, 1, None, links())).contains("must be positive"));
        assert!(err(SpineLeaf::new(4, 4, 8, 0, None, links())).contains("must be positive"));
        assert!(err(SpineLeaf::new(4, 4, 65_535, 1, None, links())).contains("a leaf would have 65539 ports"));
        assert!(err(SpineLeaf::new(40_000, 4, 8, 2, None, links())).contains("a spine would have 80000 ports"));
        assert!(err(SpineLeaf::new(4, 4, 8, 1, Some(Oversubscription::Rate(0.0)), links()))
            .contains("no usable uplink rate"));
        assert!(err(SpineLeaf::new(4, 4, 8, 1, Some(Oversubscription::Rate(f64::NAN)), links()))
            .contains("no usable uplink rate"));
        assert!(err(SpineLeaf::new(4, 4, 8, 1, Some(Oversubscription::Rate(1e300)), links()))
            .contains("no usable uplink rate"));
    }
}
