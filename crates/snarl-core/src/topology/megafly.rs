//! Megafly, also known as Dragonfly+ (Shpiner, Haramaty, Eliad, Zdornov, Gafni and
//! Zahavi, 2017; Flajslik, Borch and Parker, 2018): g groups, each a complete bipartite
//! graph of L leaves and S spines. Hosts sit on the leaves (p each), global links on the
//! spines (h each), wired by a global [`Arrangement`] (see `arrangement.rs`) over the S·h
//! global ports of a group. Leaves are three hops apart across groups
//! (leaf-spine-spine-leaf) when g <= S·h + 1.
//!
//! Leaves come first: leaf ℓ of group G is switch `G·L + ℓ`, with hosts `(G·L + ℓ)·p + i`;
//! spine σ of group G is switch `g·L + G·S + σ`. Leaf ports: `0..p` its hosts, then
//! `p + σ` to spine σ of its group. Spine ports: `0..L`, port ℓ to leaf ℓ of its group,
//! then `L + j` for j < h the global port numbered k = σ·h + j within the group.

use super::arrangement::GlobalLinks;
use super::dragonfly::arrangement_name;
use super::groups::{GroupDistances, Hop};
use super::limits::{check_nodes, check_ports};
use super::{Endpoint, Link, LinkClasses, Minimal, Topology, MAX_MINIMAL};
use crate::config::Arrangement;
use crate::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct Megafly {
    groups: usize,
    /// L
    leaves: usize,
    /// S
    spines: usize,
    /// p
    hosts_per_leaf: usize,
    /// h
    global_per_spine: usize,
    arrangement: Arrangement,
    global: GlobalLinks,
    /// Positions in a group: leaves 0..L, then spines L..L + S.
    table: GroupDistances,
    diameter: u32,
    links: LinkClasses,
}

impl Megafly {
    /// `groups` defaults to S·h + 1, the most that S·h global ports per group can join.
    pub fn new(
        groups: Option<u32>,
        leaves_per_group: u32,
        spines_per_group: u32,
        hosts_per_leaf: u32,
        global_links_per_spine: u32,
        arrangement: Arrangement,
        links: LinkClasses,
    ) -> Result<Megafly> {
        let (l, s) = (leaves_per_group as u64, spines_per_group as u64);
        let (p, h) = (hosts_per_leaf as u64, global_links_per_spine as u64);
        let g = groups.map_or(s * h + 1, u64::from);
        let name = format!("megafly ({g} groups of {l} leaves with {p} hosts and {s} spines with {h} global links)");
        if l == 0 || s == 0 || p == 0 || h == 0 {
            return Err(Error::Topology(format!(
                "{name}: leaves, spines, hosts per leaf and global links per spine must be positive"
            )));
        }
        check_ports(&name, "leaf", p + s)?;
        check_ports(&name, "spine", l + h)?;
        let global = GlobalLinks::new(&name, g, s * h, arrangement)?;
        check_nodes(&name, "switches", (l + s).checked_mul(g))?;
        check_nodes(&name, "hosts", (l * p).checked_mul(g))?;

        let (l, s, p, h, g) = (l as usize, s as usize, p as usize, h as usize, g as usize);
        let table = GroupDistances::new(&name, g, l + s, |x, out: &mut Vec<Hop>| {
            if x < l {
                out.extend((0..s).map(|spine| Hop { port: (p + spine) as u16, offset: 0, to: (l + spine) as u32 }));
            } else {
                let spine = x - l;
                out.extend((0..l).map(|leaf| Hop { port: leaf as u16, offset: 0, to: leaf as u32 }));
                for j in 0..h {
                    let (offset, peer) = global.target(spine * h + j);
                    out.push(Hop { port: (l + j) as u16, offset: offset as u32, to: (l + peer / h) as u32 });
                }
            }
        })?;
        let diameter = table.max_distance(0..l);
        Ok(Megafly {
            groups: g,
            leaves: l,
            spines: s,
            hosts_per_leaf: p,
            global_per_spine: h,
            arrangement,
            global,
            table,
            diameter,
            links,
        })
    }

    pub fn groups(&self) -> usize {
        self.groups
    }

    pub fn leaves_per_group(&self) -> usize {
        self.leaves
    }

    pub fn spines_per_group(&self) -> usize {
        self.spines
    }

    pub fn hosts_per_leaf(&self) -> usize {
        self.hosts_per_leaf
    }

    /// Switches `0..leaves()` are the leaves, the rest the spines.
    pub fn leaves(&self) -> usize {
        self.groups * self.leaves
    }

    /// (group, position in the group): leaves at positions 0..L, spines L..L + S.
    #[inline]
    pub fn locate(&self, switch: usize) -> (usize, usize) {
        let all_leaves = self.groups * self.leaves;
        if switch < all_leaves {
            (switch / self.leaves, switch % self.leaves)
        } else {
            let spine = switch - all_leaves;
            (spine / self.spines, self.leaves + spine % self.spines)
        }
    }

    /// Whether `port` of `switch` is a global link (spines only, after their leaf ports).
    #[inline]
    pub fn is_global(&self, switch: usize, port: u16) -> bool {
        switch >= self.leaves() && port as usize >= self.leaves
    }

    /// The group of a switch.
    pub fn group(&self, switch: usize) -> usize {
        self.locate(switch).0
    }

    /// Most global links joining two groups (1 with S·h + 1 groups).
    pub fn max_links_per_pair(&self) -> usize {
        self.global.max_links_per_pair()
    }

    /// The most ports of one switch that start minimal paths to another (at most
    /// [`MAX_MINIMAL`]).
    pub fn max_minimal_ports(&self) -> usize {
        self.table.most_minimal()
    }

    /// E.g. "megafly: 37 groups of 6 leaves with 6 hosts and 6 spines with 6 global links, palmtree: 1332 hosts, 444 switches".
    pub fn describe(&self) -> String {
        format!(
            "megafly: {} groups of {} leaves with {} hosts and {} spines with {} global links, {}: {} hosts, {} switches",
            self.groups,
            self.leaves,
            self.hosts_per_leaf,
            self.spines,
            self.global_per_spine,
            arrangement_name(self.arrangement),
            self.num_hosts(),
            self.num_switches()
        )
    }
}

impl Topology for Megafly {
    fn num_switches(&self) -> usize {
        self.groups * (self.leaves + self.spines)
    }

    fn num_hosts(&self) -> usize {
        self.groups * self.leaves * self.hosts_per_leaf
    }

    fn num_ports(&self, switch: usize) -> usize {
        if switch < self.groups * self.leaves {
            self.hosts_per_leaf + self.spines
        } else {
            self.leaves + self.global_per_spine
        }
    }

    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        let (l, s, p, h) = (self.leaves, self.spines, self.hosts_per_leaf, self.global_per_spine);
        let all_leaves = self.groups * l;
        let (group, x) = self.locate(switch);
        if x < l {
            if port < p {
                return Endpoint::Host((switch * p + port) as u32);
            }
            Endpoint::Switch { switch: (all_leaves + group * s + port - p) as u32, port: x as u16 }
        } else if port < l {
            Endpoint::Switch { switch: (group * l + port) as u32, port: (p + x - l) as u16 }
        } else {
            debug_assert!(port - l < h, "port {port} out of range on switch {switch}");
            let (offset, peer) = self.global.target((x - l) * h + port - l);
            let far = (group + offset) % self.groups;
            Endpoint::Switch { switch: (all_leaves + far * s + peer / h) as u32, port: (l + peer % h) as u16 }
        }
    }

    fn attachment(&self, host: usize) -> Endpoint {
        let p = self.hosts_per_leaf;
        Endpoint::Switch { switch: (host / p) as u32, port: (host % p) as u16 }
    }

    fn link(&self, switch: usize, port: usize) -> Link {
        if switch < self.groups * self.leaves && port < self.hosts_per_leaf {
            self.links.host
        } else {
            self.links.switch
        }
    }

    fn host_link(&self, _host: usize) -> Link {
        self.links.host
    }
}

impl Minimal for Megafly {
    #[inline]
    fn host_switch(&self, host: usize) -> (usize, u16) {
        let p = self.hosts_per_leaf;
        (host / p, (host % p) as u16)
    }

    #[inline]
    fn distance(&self, from: usize, to: usize) -> u32 {
        let ((fg, fx), (tg, tx)) = (self.locate(from), self.locate(to));
        self.table.distance(fg, fx, tg, tx)
    }

    #[inline]
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize {
        let ((fg, fx), (tg, tx)) = (self.locate(switch), self.locate(to));
        self.table.minimal(fg, fx, tg, tx, out)
    }

    /// Between leaves: 3 (leaf-spine-spine-leaf) across groups.
    fn diameter_hint(&self) -> u32 {
        self.diameter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(200_000_000_000), latency: Time::from_ns(50) },
        }
    }

    fn leaf_diameter(t: &Megafly) -> u32 {
        (0..t.leaves()).map(|s| switch_distances(t, s)[..t.leaves()].iter().copied().max().unwrap()).max().unwrap()
    }

    #[test]
    fn the_papers_megafly() {
        let t = Megafly::new(None, 6, 6, 6, 6, Arrangement::Palmtree, links()).unwrap();
        assert_eq!(
            t.describe(),
            "megafly: 37 groups of 6 leaves with 6 hosts and 6 spines with 6 global links, palmtree: 1332 hosts, 444 switches"
        );
        assert_eq!((t.groups(), t.num_switches(), t.num_hosts(), t.leaves()), (37, 444, 1332, 222));
        assert!((0..444).all(|s| t.num_ports(s) == 12));
        assert_eq!(port_degrees(&t), vec![12; 444]);
        assert_eq!(leaf_diameter(&t), 3);
        assert_eq!(t.diameter_hint(), 3);
        // Spines without a global link to each other's groups are further apart.
        assert_eq!(diameter(&t), 5);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        // One global link between every pair of groups.
        let mut count = vec![vec![0; 37]; 37];
        for s in t.leaves()..t.num_switches() {
            for port in 6..12 {
                let Endpoint::Switch { switch, .. } = t.peer(s, port) else { panic!() };
                count[t.group(s)][t.group(switch as usize)] += 1;
            }
        }
        assert!((0..37).all(|a| (0..37).all(|b| count[a][b] == usize::from(a != b))));
        minimal_ok(&t).unwrap();
        assert_eq!(t.max_minimal_ports(), 12);
    }

    #[test]
    fn coordinates() {
        let t = Megafly::new(None, 6, 6, 6, 6, Arrangement::Palmtree, links()).unwrap();
        // Host 40 is host 4 of leaf 6, leaf 0 of group 1.
        assert_eq!(t.attachment(40), Endpoint::Switch { switch: 6, port: 4 });
        assert_eq!(t.host_switch(40), (6, 4));
        assert_eq!(t.peer(6, 4), Endpoint::Host(40));
        // Leaf 6 port 6 + 2 goes to spine 2 of group 1, switch 222 + 6 + 2, at its port 0.
        assert_eq!(t.peer(6, 8), Endpoint::Switch { switch: 230, port: 0 });
        assert_eq!(t.peer(230, 0), Endpoint::Switch { switch: 6, port: 8 });
        assert_eq!(t.locate(230), (1, 8));
        // Spine 0 of group 0, global port k = 0, leads to group 36, global port 35
        // (spine 5, port 6 + 5).
        assert_eq!(t.peer(222, 6), Endpoint::Switch { switch: (222 + 36 * 6 + 5) as u32, port: 11 });
        assert_eq!(t.link(0, 5), links().host);
        assert_eq!(t.link(0, 6), links().switch);
        assert_eq!(t.link(222, 0), links().switch);
        let mut out = [0; MAX_MINIMAL];
        // From a leaf to a leaf of another group: through the one spine linked to that group.
        assert_eq!(t.distance(0, 6), 3);
        assert_eq!(t.minimal_ports(0, 6, &mut out), 1);
        // From a leaf to a leaf of its own group: any spine.
        assert_eq!((t.distance(0, 1), t.minimal_ports(0, 1, &mut out)), (2, 6));
        assert_eq!(out[..6], [6, 7, 8, 9, 10, 11]);
    }

    #[test]
    fn minimal_ports_are_exact() {
        for (g, l, s, p, h) in [
            (None, 2, 2, 1, 1),
            (Some(3), 2, 3, 1, 2),
            (None, 3, 2, 2, 2),
            (Some(4), 1, 2, 1, 2),
            (Some(2), 2, 2, 1, 1),
            (Some(6), 2, 3, 1, 3),
        ] {
            for arrangement in [Arrangement::Palmtree, Arrangement::Consecutive] {
                let t = Megafly::new(g, l, s, p, h, arrangement, links()).unwrap();
                check_wiring(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
                assert!(all_hosts_reachable(&t));
                minimal_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
                assert_eq!(leaf_diameter(&t), t.diameter_hint());
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<Megafly>| match r {
            Err(Error::Topology(message)) => {
                assert!(!message.contains('\n'));
                message
            }
            other => panic!("expected a topology error, got {other:?}"),
        };
        let mf = |g, l, s, p, h| Megafly::new(g, l, s, p, h, Arrangement::Consecutive, links());
        assert!(err(mf(None, 0, 6, 6, 6)).contains("must be positive"));
        assert!(err(mf(None, 6, 6, 6, 0)).contains("must be positive"));
        assert!(err(mf(Some(38), 6, 6, 6, 6)).contains("at most 37 groups"));
        assert!(err(mf(Some(3), 6, 1, 6, 1)).contains("at most 2 groups"));
        assert!(err(mf(Some(3), 2, 1, 1, 3)).contains("must be even"));
        assert!(err(mf(None, 6, 6, 65_535, 6)).contains("a leaf would have"));
        assert!(err(mf(None, 60_000, 6, 1, 6_000)).contains("a spine would have"));
        assert!(err(mf(None, 1_000, 64, 1_000, 64)).contains("more than 2^31 hosts"));
    }
}
