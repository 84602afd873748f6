//! Canonical dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): g groups of a switches,
//! each group a complete graph; every switch has p hosts and h global links to other
//! groups, wired by a global [`Arrangement`] (see `arrangement.rs`). The balanced
//! dragonfly has a = 2p = 2h and g = a·h + 1 groups, one global link between every pair.
//!
//! Switch `G·a + r` is switch r of group G, and its hosts are `(G·a + r)·p + i`, i < p.
//! Ports of switch r: `0..p` its hosts (port i to host i); then `p + j` for j < a − 1 the
//! local link to switch j of the group if j < r, to switch j + 1 otherwise (every switch
//! but itself, in order); then `p + a − 1 + j` for j < h the global port numbered
//! k = r·h + j within the group. Wiring is computed from these coordinates.
//!
//! Routes are hierarchical, as in Kim et al.: a minimal path is local-global-local
//! through one of the global links that join the two groups (shorter shortcuts through
//! a third group are not minimal routes). Which global ports of a group lead to the group
//! Δ further on does not depend on the group, so one list per Δ serves every switch.

use super::arrangement::GlobalLinks;
use super::host_ports;
use super::limits::{check_nodes, check_ports};
use super::node_divisor::NodeDivisor;
use super::{Endpoint, Link, LinkClasses, Minimal, Topology, MAX_MINIMAL};
use crate::config::Arrangement;
use crate::error::{Error, Result};

/// A global link from any group to the group Δ further on, as routing weighs it: the
/// position in the group of the switch that holds it, its port there, and the position
/// of the switch it lands on. Positions and ports are below 2^16 (a switch has a port to
/// every other of its group).
#[derive(Clone, Copy, Debug)]
struct Exit {
    leave: u16,
    port: u16,
    landing: u16,
}

#[derive(Clone, Debug)]
pub struct Dragonfly {
    /// p
    hosts_per_switch: usize,
    /// a
    group_size: usize,
    /// h
    global_per_switch: usize,
    groups: usize,
    arrangement: Arrangement,
    global: GlobalLinks,
    /// The global links of any group to the group Δ further on, by global port number
    /// (k = r·h + j): `exits[first[Δ]..first[Δ + 1]]`.
    exits: Vec<Exit>,
    first: Vec<u32>,
    links: LinkClasses,
    /// p and a as divisors: routing divides by them on every packet.
    per_switch: NodeDivisor,
    per_group: NodeDivisor,
}

impl Dragonfly {
    /// `groups` defaults to a·h + 1, the most that a·h global ports per group can join.
    pub fn new(
        hosts_per_switch: u32,
        switches_per_group: u32,
        global_links_per_switch: u32,
        groups: Option<u32>,
        arrangement: Arrangement,
        links: LinkClasses,
    ) -> Result<Dragonfly> {
        let (p, a, h) = (hosts_per_switch as u64, switches_per_group as u64, global_links_per_switch as u64);
        let g = groups.map_or(a * h + 1, u64::from);
        let name = format!("dragonfly ({g} groups of {a} switches, {p} hosts and {h} global links per switch)");
        if p == 0 || a == 0 || h == 0 {
            return Err(Error::Topology(format!(
                "{name}: hosts per switch, switches per group and global links per switch must be positive"
            )));
        }
        check_ports(&name, "switch", p + (a - 1) + h)?;
        let global = GlobalLinks::new(&name, g, a * h, arrangement)?;
        let switches = check_nodes(&name, "switches", a.checked_mul(g))?;
        check_nodes(&name, "hosts", (switches as u64).checked_mul(p))?;

        let (p, a, h, g) = (p as usize, a as usize, h as usize, g as usize);
        let mut by_offset: Vec<Vec<u32>> = vec![Vec::new(); g];
        for k in 0..a * h {
            by_offset[global.target(k).0].push(k as u32);
        }
        let mut first = Vec::with_capacity(g + 1);
        let mut exits = Vec::with_capacity(a * h);
        for ks in &by_offset {
            first.push(exits.len() as u32);
            exits.extend(ks.iter().map(|&k| {
                let k = k as usize;
                let landing = global.target(k).1 / h;
                Exit { leave: (k / h) as u16, port: (p + a - 1 + k % h) as u16, landing: landing as u16 }
            }));
        }
        first.push(exits.len() as u32);
        Ok(Dragonfly {
            hosts_per_switch: p,
            group_size: a,
            global_per_switch: h,
            groups: g,
            arrangement,
            global,
            exits,
            first,
            links,
            per_switch: NodeDivisor::new(p),
            per_group: NodeDivisor::new(a),
        })
    }

    pub fn groups(&self) -> usize {
        self.groups
    }

    pub fn switches_per_group(&self) -> usize {
        self.group_size
    }

    pub fn hosts_per_switch(&self) -> usize {
        self.hosts_per_switch
    }

    pub fn global_links_per_switch(&self) -> usize {
        self.global_per_switch
    }

    /// The group of a switch.
    pub fn group(&self, switch: usize) -> usize {
        self.per_group.div(switch)
    }

    /// Most global links joining two groups (1 with a·h + 1 groups).
    pub fn max_links_per_pair(&self) -> usize {
        self.global.max_links_per_pair()
    }

    /// The most ports of one switch that start minimal paths to another: one per
    /// global link between the two groups at most.
    pub fn max_minimal_ports(&self) -> usize {
        self.max_links_per_pair().max(1)
    }

    /// Bytes of the per-offset lists of global links behind [`Minimal`].
    pub fn table_bytes(&self) -> usize {
        self.exits.len() * std::mem::size_of::<Exit>() + self.first.len() * std::mem::size_of::<u32>()
    }

    /// Whether `port` (of any switch) is a global link.
    #[inline]
    pub fn is_global(&self, port: u16) -> bool {
        port as usize >= self.hosts_per_switch + self.group_size - 1
    }

    /// Local port of switch position `r` to position `to` (`to != r`).
    #[inline]
    fn local_port(&self, r: usize, to: usize) -> u16 {
        (self.hosts_per_switch + if to < r { to } else { to - 1 }) as u16
    }

    /// Hierarchical minimal routes from `switch` to `to`: their length, and (when `out`
    /// is given) their distinct first ports.
    #[inline]
    fn routes(&self, switch: usize, to: usize, mut out: Option<&mut [u16; MAX_MINIMAL]>) -> (u32, usize) {
        let ((group, r), (to_group, to_r)) = (self.per_group.div_rem(switch), self.per_group.div_rem(to));
        if group == to_group {
            if r == to_r {
                return (0, 0);
            }
            if let Some(out) = out {
                out[0] = self.local_port(r, to_r);
            }
            return (1, 1);
        }
        // Δ = to_group − group, modulo the groups.
        let offset = if to_group > group { to_group - group } else { to_group + self.groups - group };
        let exits = &self.exits[self.first[offset] as usize..self.first[offset + 1] as usize];
        let cost = |exit: &Exit| u32::from(exit.leave as usize != r) + 1 + u32::from(exit.landing as usize != to_r);
        let port =
            |exit: &Exit| if exit.leave as usize == r { exit.port } else { self.local_port(r, exit.leave as usize) };
        if let [exit] = exits {
            // One link joins the two groups (as with a·h + 1 groups): one route.
            let Some(out) = out else { return (cost(exit), 0) };
            out[0] = port(exit);
            return (cost(exit), 1);
        }
        let (mut best, mut n) = (u32::MAX, 0);
        for exit in exits {
            let cost = cost(exit);
            if cost > best {
                continue;
            }
            if cost < best {
                (best, n) = (cost, 0);
            }
            if let Some(out) = out.as_deref_mut() {
                let port = port(exit);
                if !out[..n].contains(&port) {
                    out[n] = port;
                    n += 1;
                }
            }
        }
        (best, n)
    }

    /// E.g. "dragonfly: 33 groups of 8 switches with 4 hosts and 4 global links each, palmtree: 1056 hosts, 264 switches".
    pub fn describe(&self) -> String {
        format!(
            "dragonfly: {} groups of {} switches with {} hosts and {} global links each, {}: {} hosts, {} switches",
            self.groups,
            self.group_size,
            self.hosts_per_switch,
            self.global_per_switch,
            arrangement_name(self.arrangement),
            self.num_hosts(),
            self.num_switches()
        )
    }
}

pub(super) fn arrangement_name(arrangement: Arrangement) -> &'static str {
    match arrangement {
        Arrangement::Palmtree => "palmtree",
        Arrangement::Consecutive => "consecutive",
    }
}

impl Topology for Dragonfly {
    fn num_switches(&self) -> usize {
        self.groups * self.group_size
    }

    fn num_hosts(&self) -> usize {
        self.num_switches() * self.hosts_per_switch
    }

    fn num_ports(&self, _switch: usize) -> usize {
        self.hosts_per_switch + self.group_size - 1 + self.global_per_switch
    }

    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        let (p, a, h) = (self.hosts_per_switch, self.group_size, self.global_per_switch);
        if port < p {
            return Endpoint::Host((switch * p + port) as u32);
        }
        let (group, r) = (switch / a, switch % a);
        let j = port - p;
        if j < a - 1 {
            let to = if j < r { j } else { j + 1 };
            let back = if r < to { r } else { r - 1 };
            Endpoint::Switch { switch: (group * a + to) as u32, port: (p + back) as u16 }
        } else {
            debug_assert!(j - (a - 1) < h, "port {port} out of range on switch {switch}");
            let (offset, peer) = self.global.target(r * h + j - (a - 1));
            let far = (group + offset) % self.groups;
            Endpoint::Switch { switch: (far * a + peer / h) as u32, port: (p + a - 1 + peer % h) as u16 }
        }
    }

    fn attachment(&self, host: usize) -> Endpoint {
        host_ports::attachment(self.per_switch, host)
    }

    fn link(&self, _switch: usize, port: usize) -> Link {
        host_ports::link(self.hosts_per_switch, &self.links, port)
    }

    fn host_link(&self, _host: usize) -> Link {
        self.links.host
    }
}

impl Minimal for Dragonfly {
    #[inline]
    fn host_switch(&self, host: usize) -> (usize, u16) {
        host_ports::host_switch(self.per_switch, host)
    }

    #[inline]
    fn distance(&self, from: usize, to: usize) -> u32 {
        self.routes(from, to, None).0
    }

    #[inline]
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize {
        self.routes(switch, to, Some(out)).1
    }

    #[inline]
    fn minimal_route(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> (u32, usize) {
        self.routes(switch, to, Some(out))
    }

    /// Local-global-local.
    fn diameter_hint(&self) -> u32 {
        if self.group_size > 1 {
            3
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};
    use std::collections::HashSet;

    /// Hierarchical routes: never shorter than breadth-first distances, at most
    /// local-global-local, and every returned first port leads one hop closer.
    fn hierarchical_ok(t: &Dragonfly) -> Result<()> {
        let mut out = [0; MAX_MINIMAL];
        for from in 0..t.num_switches() {
            let bfs = switch_distances(t, from);
            for (to, &shortest) in bfs.iter().enumerate() {
                let d = t.distance(from, to);
                if d < shortest || d > t.diameter_hint() {
                    return Err(Error::Topology(format!("{from} -> {to}: route of {d} hops, {shortest} by BFS")));
                }
                let n = t.minimal_ports(from, to, &mut out);
                let mut together = [0; MAX_MINIMAL];
                if t.minimal_route(from, to, &mut together) != (d, n) || together[..n] != out[..n] {
                    return Err(Error::Topology(format!("{from} -> {to}: minimal_route disagrees")));
                }
                if (n == 0) != (from == to) {
                    return Err(Error::Topology(format!("{from} -> {to}: {n} first hops")));
                }
                for &port in &out[..n] {
                    let Endpoint::Switch { switch, .. } = t.peer(from, port as usize) else {
                        return Err(Error::Topology(format!("{from} -> {to}: port {port} is not a switch link")));
                    };
                    if t.distance(switch as usize, to) + 1 != d {
                        return Err(Error::Topology(format!("{from} -> {to}: port {port} does not get closer")));
                    }
                }
            }
        }
        Ok(())
    }

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(200_000_000_000), latency: Time::from_ns(50) },
        }
    }

    /// Global links between each pair of groups, from the wiring.
    fn group_links(t: &Dragonfly) -> Vec<Vec<usize>> {
        let mut count = vec![vec![0; t.groups()]; t.groups()];
        for s in 0..t.num_switches() {
            for port in 0..t.num_ports(s) {
                if let Endpoint::Switch { switch, .. } = t.peer(s, port) {
                    if t.group(s) != t.group(switch as usize) {
                        count[t.group(s)][t.group(switch as usize)] += 1;
                    }
                }
            }
        }
        count
    }

    #[test]
    fn the_papers_dragonfly() {
        let t = Dragonfly::new(4, 8, 4, None, Arrangement::Palmtree, links()).unwrap();
        assert_eq!(
            t.describe(),
            "dragonfly: 33 groups of 8 switches with 4 hosts and 4 global links each, palmtree: 1056 hosts, 264 switches"
        );
        assert_eq!((t.num_switches(), t.num_hosts(), t.groups()), (264, 1056, 33));
        assert!((0..264).all(|s| t.num_ports(s) == 15));
        assert_eq!(port_degrees(&t), vec![15; 264]);
        assert_eq!(diameter(&t), 3);
        assert_eq!(t.diameter_hint(), 3);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        let count = group_links(&t);
        assert!((0..33).all(|a| (0..33).all(|b| count[a][b] == usize::from(a != b))));
        assert_eq!(t.link(0, 3), links().host);
        assert_eq!(t.link(0, 4), links().switch);
        assert_eq!(t.link(0, 14), links().switch);
        assert_eq!(t.max_minimal_ports(), 1);
        assert_eq!(t.max_links_per_pair(), 1);
    }

    #[test]
    fn coordinates() {
        let t = Dragonfly::new(4, 8, 4, None, Arrangement::Palmtree, links()).unwrap();
        // Host 45 is host 1 of switch 11, switch 3 of group 1.
        assert_eq!(t.attachment(45), Endpoint::Switch { switch: 11, port: 1 });
        assert_eq!(t.host_switch(45), (11, 1));
        assert_eq!(t.peer(11, 1), Endpoint::Host(45));
        // Local ports of switch 3: 4, 5, 6 to switches 0, 1, 2, then 7.. to switches 4...
        assert_eq!(t.peer(11, 4), Endpoint::Switch { switch: 8, port: 6 });
        assert_eq!(t.peer(11, 7), Endpoint::Switch { switch: 12, port: 7 });
        assert_eq!(t.peer(11, 10), Endpoint::Switch { switch: 15, port: 7 });
        // Global port k = 0 of group 0 (switch 0, port 11) leads to group 32 at its port
        // k = 31 (switch 7, port 11 + 3); k = 13 (switch 3, port 12) to group 33 − 14 = 19.
        assert_eq!(t.peer(0, 11), Endpoint::Switch { switch: 32 * 8 + 7, port: 14 });
        assert_eq!(t.peer(3, 12), Endpoint::Switch { switch: 19 * 8 + 4, port: 13 });
        let c = Dragonfly::new(4, 8, 4, None, Arrangement::Consecutive, links()).unwrap();
        assert_eq!(c.peer(0, 11), Endpoint::Switch { switch: 8 + 7, port: 14 });
        assert_eq!(c.peer(3, 12), Endpoint::Switch { switch: 14 * 8 + 4, port: 13 });
    }

    #[test]
    fn palmtree_and_consecutive_differ() {
        let palm = Dragonfly::new(2, 4, 2, None, Arrangement::Palmtree, links()).unwrap();
        let cons = Dragonfly::new(2, 4, 2, None, Arrangement::Consecutive, links()).unwrap();
        let mut differ = 0;
        for t in [&palm, &cons] {
            check_wiring(t).unwrap();
            let count = group_links(t);
            assert!((0..9).all(|a| (0..9).all(|b| count[a][b] == usize::from(a != b))));
            assert_eq!(diameter(t), 3);
            hierarchical_ok(t).unwrap();
        }
        for s in 0..palm.num_switches() {
            for port in 0..palm.num_ports(s) {
                differ += usize::from(palm.peer(s, port) != cons.peer(s, port));
            }
        }
        // Every global port leads to another group: G − k − 1 = G + k + 1 (mod 9) never holds.
        assert_eq!(differ, 9 * 8);
    }

    #[test]
    fn fewer_groups_have_several_links_per_pair() {
        // 8 global ports per group over 4 other groups: 2 links per pair.
        let t = Dragonfly::new(2, 4, 2, Some(5), Arrangement::Palmtree, links()).unwrap();
        assert_eq!((t.num_switches(), t.num_hosts(), t.max_links_per_pair()), (20, 40, 2));
        let count = group_links(&t);
        assert!((0..5).all(|a| (0..5).all(|b| count[a][b] == if a == b { 0 } else { 2 })));
        check_wiring(&t).unwrap();
        hierarchical_ok(&t).unwrap();
        // 12 ports over 5 other groups: 2 or 3 links per pair.
        let t = Dragonfly::new(1, 4, 3, Some(6), Arrangement::Consecutive, links()).unwrap();
        let count = group_links(&t);
        let sizes: HashSet<usize> = (0..6)
            .flat_map(|a| (0..6).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| count[a][b])
            .collect();
        assert_eq!(sizes, HashSet::from([2, 3]));
        assert_eq!(t.max_links_per_pair(), 3);
        check_wiring(&t).unwrap();
        hierarchical_ok(&t).unwrap();
    }

    #[test]
    fn minimal_ports_are_exact() {
        for (p, a, h, g) in [
            (2, 4, 2, None),
            (1, 3, 2, Some(4)),
            (1, 4, 3, Some(6)),
            (1, 2, 3, Some(4)),
            (1, 5, 1, Some(6)),
            (1, 3, 3, Some(8)),
            (1, 4, 1, Some(4)),
            (1, 2, 2, Some(2)),
            (1, 1, 3, None),
            (1, 6, 3, None),
        ] {
            for arrangement in [Arrangement::Palmtree, Arrangement::Consecutive] {
                let t = Dragonfly::new(p, a, h, g, arrangement, links()).unwrap();
                check_wiring(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
                hierarchical_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
                assert!(t.diameter_hint() <= 3, "{}", t.describe());
            }
        }
    }

    #[test]
    fn paper_minimal_paths() {
        let t = Dragonfly::new(4, 8, 4, None, Arrangement::Palmtree, links()).unwrap();
        hierarchical_ok(&t).unwrap();
        let mut out = [0; MAX_MINIMAL];
        // Same group: the one local port.
        assert_eq!(t.minimal_ports(11, 8, &mut out), 1);
        assert_eq!(out[0], 4);
        // Switch 0 holds the global link to group 32: one global hop.
        assert_eq!((t.distance(0, 32 * 8 + 7), t.minimal_ports(0, 32 * 8 + 7, &mut out)), (1, 1));
        assert_eq!(out[0], 11);
    }

    #[test]
    fn balanced_dragonfly_of_262656_hosts() {
        let t = Dragonfly::new(16, 32, 16, None, Arrangement::Palmtree, links()).unwrap();
        assert_eq!((t.groups(), t.num_switches(), t.num_hosts()), (513, 16_416, 262_656));
        assert!((0..t.num_switches()).all(|s| t.num_ports(s) == 16 + 31 + 16));
        assert!(t.table_bytes() < 1 << 20, "{} bytes", t.table_bytes());
        assert!(std::mem::size_of::<Dragonfly>() < 512);
        check_wiring(&t).unwrap();
        assert!(port_degrees(&t).iter().all(|&d| d == 63));
        assert_eq!(t.diameter_hint(), 3);
        // One global link joins each pair of groups: one minimal first hop.
        assert_eq!(t.max_minimal_ports(), 1);
        // Routes from a few switches: never shorter than breadth-first search, each hop closer.
        let mut out = [0; MAX_MINIMAL];
        for from in [0, 5_000, 16_415] {
            let bfs = switch_distances(&t, from);
            assert_eq!(bfs.iter().max(), Some(&3));
            for to in (0..t.num_switches()).step_by(7) {
                assert!(t.distance(from, to) >= bfs[to] && t.distance(from, to) <= 3, "{from} -> {to}");
                if to != from {
                    let n = t.minimal_ports(from, to, &mut out);
                    assert!(n >= 1);
                    for &port in &out[..n] {
                        let Endpoint::Switch { switch, .. } = t.peer(from, port as usize) else { panic!() };
                        assert_eq!(t.distance(switch as usize, to) + 1, t.distance(from, to));
                    }
                }
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<Dragonfly>| match r {
            Err(Error::Topology(message)) => {
                assert!(!message.contains('\n'));
                message
            }
            other => panic!("expected a topology error, got {other:?}"),
        };
        let df = |p, a, h, g| Dragonfly::new(p, a, h, g, Arrangement::Palmtree, links());
        assert!(err(df(0, 8, 4, None)).contains("must be positive"));
        assert!(err(df(4, 0, 4, None)).contains("must be positive"));
        assert!(err(df(4, 8, 0, None)).contains("must be positive"));
        assert!(err(df(4, 8, 4, Some(34))).contains("at most 33 groups"));
        assert!(err(df(4, 8, 4, Some(1))).contains("at least 2 groups"));
        assert!(err(df(1, 3, 1, Some(3))).contains("must be even"));
        assert!(err(df(60_000, 8, 6_000, None)).contains("more than 65535"));
        assert!(err(df(20_000, 200, 200, None)).contains("more than 2^31 hosts"));
    }
}
