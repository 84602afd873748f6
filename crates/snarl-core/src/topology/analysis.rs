//! Graph checks over any fabric: wiring consistency, switch-to-switch distances, diameter,
//! reachability and the minimality of up/down next hops. They are meant for tests,
//! set-up sanity checks and reports, never for the simulation's hot path.

use super::{Endpoint, Minimal, Topology, UpDown, MAX_MINIMAL};
use crate::error::{Error, Result};
use std::collections::VecDeque;

fn wiring_error(message: String) -> Error {
    Error::Topology(format!("inconsistent wiring: {message}"))
}

/// Checks that every connection is symmetric: the peer of a switch port leads back to it,
/// host attachments agree with the switch ports they name, and both ends of every link
/// have the same rate and latency. O(ports + hosts).
pub fn check_wiring<T: Topology + ?Sized>(t: &T) -> Result<()> {
    let (switches, hosts) = (t.num_switches(), t.num_hosts());
    for s in 0..switches {
        for port in 0..t.num_ports(s) {
            let here = Endpoint::Switch { switch: s as u32, port: port as u16 };
            match t.peer(s, port) {
                Endpoint::Switch { switch, port: far } => {
                    let (n, far) = (switch as usize, far as usize);
                    if n >= switches || far >= t.num_ports(n) {
                        return Err(wiring_error(format!(
                            "switch {s} port {port} leads to missing switch {n} port {far}"
                        )));
                    }
                    if (n, far) == (s, port) {
                        return Err(wiring_error(format!("switch {s} port {port} is wired to itself")));
                    }
                    let back = t.peer(n, far);
                    if back != here {
                        return Err(wiring_error(format!(
                            "switch {s} port {port} leads to switch {n} port {far}, which leads to {back:?}"
                        )));
                    }
                    if t.link(s, port) != t.link(n, far) {
                        return Err(wiring_error(format!(
                            "the link of switch {s} port {port} differs at its far end (switch {n} port {far})"
                        )));
                    }
                }
                Endpoint::Host(h) => {
                    let h = h as usize;
                    if h >= hosts {
                        return Err(wiring_error(format!("switch {s} port {port} leads to missing host {h}")));
                    }
                    if t.attachment(h) != here {
                        return Err(wiring_error(format!(
                            "switch {s} port {port} leads to host {h}, which is attached to {:?}",
                            t.attachment(h)
                        )));
                    }
                    if t.link(s, port) != t.host_link(h) {
                        return Err(wiring_error(format!("the link of host {h} differs at switch {s} port {port}")));
                    }
                }
                Endpoint::Unconnected => {}
            }
        }
    }
    for h in 0..hosts {
        match t.attachment(h) {
            Endpoint::Switch { switch, port } => {
                let (s, port) = (switch as usize, port as usize);
                if s >= switches || port >= t.num_ports(s) || t.peer(s, port) != Endpoint::Host(h as u32) {
                    return Err(wiring_error(format!(
                        "host {h} is attached to switch {s} port {port}, which does not lead back"
                    )));
                }
            }
            Endpoint::Host(other) => {
                let other = other as usize;
                if other == h || other >= hosts || t.attachment(other) != Endpoint::Host(h as u32) {
                    return Err(wiring_error(format!("host {h} is wired to host {other}, which does not lead back")));
                }
                if t.host_link(h) != t.host_link(other) {
                    return Err(wiring_error(format!("hosts {h} and {other} disagree on their link")));
                }
            }
            Endpoint::Unconnected => return Err(wiring_error(format!("host {h} is not connected"))),
        }
    }
    Ok(())
}

/// Switch-to-switch hop counts from switch `from` (BFS over switch links only);
/// `u32::MAX` marks unreachable switches. O(switches + ports).
pub fn switch_distances<T: Topology + ?Sized>(t: &T, from: usize) -> Vec<u32> {
    let mut dist = vec![u32::MAX; t.num_switches()];
    let mut queue = VecDeque::from([from]);
    dist[from] = 0;
    while let Some(s) = queue.pop_front() {
        for port in 0..t.num_ports(s) {
            if let Endpoint::Switch { switch, .. } = t.peer(s, port) {
                let n = switch as usize;
                if dist[n] == u32::MAX {
                    dist[n] = dist[s] + 1;
                    queue.push_back(n);
                }
            }
        }
    }
    dist
}

/// The largest switch-to-switch distance; `u32::MAX` if the switches are not all
/// connected, 0 without switches. One BFS per switch, O(switches · (switches + ports)):
/// instant for thousands of hosts, too slow for the largest fabrics.
pub fn diameter<T: Topology + ?Sized>(t: &T) -> u32 {
    (0..t.num_switches()).map(|s| switch_distances(t, s).into_iter().max().unwrap_or(0)).max().unwrap_or(0)
}

/// Whether every host can reach every other host through the fabric. O(nodes + ports).
pub fn all_hosts_reachable<T: Topology + ?Sized>(t: &T) -> bool {
    let (switches, hosts) = (t.num_switches(), t.num_hosts());
    if hosts == 0 {
        return true;
    }
    // Nodes: switches first, then hosts.
    let node = |e: Endpoint| match e {
        Endpoint::Switch { switch, .. } => Some(switch as usize),
        Endpoint::Host(h) => Some(switches + h as usize),
        Endpoint::Unconnected => None,
    };
    let mut seen = vec![false; switches + hosts];
    let mut stack = vec![switches];
    seen[switches] = true;
    while let Some(n) = stack.pop() {
        let mut visit = |e: Endpoint| {
            if let Some(m) = node(e) {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        };
        if n < switches {
            (0..t.num_ports(n)).for_each(|port| visit(t.peer(n, port)));
        } else {
            visit(t.attachment(n - switches));
        }
    }
    seen[switches..].iter().all(|&s| s)
}

/// The number of connected ports of each switch.
pub fn port_degrees<T: Topology + ?Sized>(t: &T) -> Vec<usize> {
    (0..t.num_switches())
        .map(|s| (0..t.num_ports(s)).filter(|&port| t.peer(s, port) != Endpoint::Unconnected).count())
        .collect()
}

/// Checks that up/down next hops reach every destination minimally: from every leaf,
/// following any candidate port at every hop reaches the destination's leaf in exactly
/// the BFS distance, then the destination itself, with no dead end and no detour.
///
/// Per destination it checks every switch reachable from a leaf once: each candidate must
/// lead one hop closer to the destination's leaf (so every path terminates and is
/// minimal), or to the destination from its own leaf. O(hosts · (switches + ports)): for
/// small fabrics.
pub fn up_down_path_ok<T: Topology + UpDown + ?Sized>(t: &T) -> Result<()> {
    let (switches, hosts) = (t.num_switches(), t.num_hosts());
    let fail = |message: String| Err(Error::Topology(format!("up/down next hops: {message}")));
    let mut leaves = Vec::new();
    let mut is_leaf = vec![false; switches];
    for h in 0..hosts {
        match t.attachment(h) {
            Endpoint::Switch { switch, .. } => {
                if !std::mem::replace(&mut is_leaf[switch as usize], true) {
                    leaves.push(switch as usize);
                }
            }
            // Wired straight to another host: only that host is reachable.
            Endpoint::Host(other) if hosts <= 2 && other as usize != h => {}
            other => return fail(format!("host {h} is attached to {other:?}, so it cannot reach every host")),
        }
    }

    let mut reached = vec![false; switches];
    let mut stack = Vec::new();
    for dst in 0..hosts {
        let Endpoint::Switch { switch: dst_leaf, .. } = t.attachment(dst) else { continue };
        let dst_leaf = dst_leaf as usize;
        let dist = switch_distances(t, dst_leaf);
        reached.iter_mut().for_each(|r| *r = false);
        for &leaf in &leaves {
            if dist[leaf] == u32::MAX {
                return fail(format!("leaf {leaf} is not connected to leaf {dst_leaf} of host {dst}"));
            }
            reached[leaf] = true;
            stack.push(leaf);
        }
        while let Some(s) = stack.pop() {
            let hops = t.next_hops(s, dst);
            let (first, count) = (hops.first as usize, hops.count as usize);
            if count == 0 || hops.dmodk >= hops.count || first + count > t.num_ports(s) {
                return fail(format!("switch {s} offers {hops:?} towards host {dst}"));
            }
            for port in first..first + count {
                match t.peer(s, port) {
                    Endpoint::Host(h) if h as usize == dst && s == dst_leaf => {}
                    Endpoint::Switch { switch, .. } if dist[switch as usize].wrapping_add(1) == dist[s] => {
                        let n = switch as usize;
                        if !std::mem::replace(&mut reached[n], true) {
                            stack.push(n);
                        }
                    }
                    other => {
                        return fail(format!(
                            "switch {s} port {port} towards host {dst} leads to {other:?}, not one hop closer"
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

/// The switches a packet from `src` to `dst` crosses when every hop takes the D-mod-K
/// choice, from `src`'s leaf to `dst`'s. Fails on a dead end or after more hops than
/// there are switches (a loop).
pub fn dmodk_path<T: Topology + UpDown + ?Sized>(t: &T, src: usize, dst: usize) -> Result<Vec<usize>> {
    let fail = |message: String| Err(Error::Topology(format!("D-mod-K path from host {src} to host {dst}: {message}")));
    let mut at = t.attachment(src);
    let mut path = Vec::new();
    while let Endpoint::Switch { switch, .. } = at {
        let s = switch as usize;
        if path.len() > t.num_switches() {
            return fail(format!("no arrival after {} hops", path.len()));
        }
        path.push(s);
        let hops = t.next_hops(s, dst);
        if hops.count == 0 {
            return fail(format!("no next hop at switch {s}"));
        }
        at = t.peer(s, (hops.first + hops.dmodk) as usize);
    }
    match at {
        Endpoint::Host(h) if h as usize == dst => Ok(path),
        other => fail(format!("ends at {other:?}")),
    }
}

/// Checks a [`Minimal`] fabric against breadth-first search over every pair of switches:
/// `distance` is the BFS distance, `minimal_ports` returns exactly the ports that lead one
/// hop closer (each once), `host_switch` agrees with the attachments, and `diameter_hint`
/// is the largest distance between switches with hosts. O(switches · (switches + ports)):
/// for small fabrics.
pub fn minimal_ok<T: Topology + Minimal + ?Sized>(t: &T) -> Result<()> {
    let fail = |message: String| Err(Error::Topology(format!("minimal ports: {message}")));
    let switches = t.num_switches();
    let mut has_hosts = vec![false; switches];
    for h in 0..t.num_hosts() {
        let (s, port) = t.host_switch(h);
        if s >= switches || t.attachment(h) != (Endpoint::Switch { switch: s as u32, port }) {
            return fail(format!("host {h} is on switch {s} port {port}, but attached to {:?}", t.attachment(h)));
        }
        has_hosts[s] = true;
    }
    // BFS distances towards each destination (links are symmetric).
    let to_dist: Vec<Vec<u32>> = (0..switches).map(|to| switch_distances(t, to)).collect();
    let mut diameter = 0;
    let mut out = [0u16; MAX_MINIMAL];
    for s in 0..switches {
        for (to, dist) in to_dist.iter().enumerate() {
            let d = dist[s];
            if d == u32::MAX {
                return fail(format!("switch {s} cannot reach switch {to}"));
            }
            if t.distance(s, to) != d {
                return fail(format!("distance from switch {s} to {to} is {}, BFS says {d}", t.distance(s, to)));
            }
            if has_hosts[s] && has_hosts[to] {
                diameter = diameter.max(d);
            }
            if s == to {
                continue;
            }
            let closer: Vec<u16> = (0..t.num_ports(s))
                .filter(|&port| match t.peer(s, port) {
                    Endpoint::Switch { switch, .. } => dist[switch as usize] + 1 == d,
                    _ => false,
                })
                .map(|port| port as u16)
                .collect();
            let n = t.minimal_ports(s, to, &mut out);
            let mut got = out[..n].to_vec();
            got.sort_unstable();
            if got != closer {
                return fail(format!("from switch {s} to {to} (distance {d}): {got:?}, but {closer:?} lead closer"));
            }
        }
    }
    if t.diameter_hint() != diameter {
        return fail(format!(
            "diameter hint {}, but switches with hosts are up to {diameter} apart",
            t.diameter_hint()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Link, PortRange};
    use crate::units::{Rate, Time};

    const LINK: Link = Link { rate: Rate(1_000_000_000), latency: Time(1_000) };

    /// A ring of `n` two-port switches, one host on each, optionally with one bad wire.
    struct Ring {
        n: usize,
        miswired: bool,
        /// next_hops always goes clockwise, a detour for half the destinations.
        clockwise: bool,
    }

    impl Topology for Ring {
        fn num_switches(&self) -> usize {
            self.n
        }
        fn num_hosts(&self) -> usize {
            self.n
        }
        fn num_ports(&self, _: usize) -> usize {
            3
        }
        fn peer(&self, s: usize, port: usize) -> Endpoint {
            match port {
                0 => Endpoint::Host(s as u32),
                1 if self.miswired && s == 0 => Endpoint::Switch { switch: 2, port: 2 },
                1 => Endpoint::Switch { switch: ((s + 1) % self.n) as u32, port: 2 },
                _ => Endpoint::Switch { switch: ((s + self.n - 1) % self.n) as u32, port: 1 },
            }
        }
        fn attachment(&self, h: usize) -> Endpoint {
            Endpoint::Switch { switch: h as u32, port: 0 }
        }
        fn link(&self, _: usize, _: usize) -> Link {
            LINK
        }
        fn host_link(&self, _: usize) -> Link {
            LINK
        }
    }

    impl UpDown for Ring {
        fn next_hops(&self, s: usize, dst: usize) -> PortRange {
            let clockwise = (dst + self.n - s) % self.n;
            let port = match clockwise {
                0 => 0,
                c if self.clockwise || c <= self.n / 2 => 1,
                _ => 2,
            };
            PortRange { first: port, count: 1, dmodk: 0 }
        }
        fn level(&self, _: usize) -> usize {
            1
        }

        fn up_digit(&self, _switch: usize, _host: usize) -> u16 {
            0
        }
    }

    #[test]
    fn ring_measurements() {
        let ring = Ring { n: 6, miswired: false, clockwise: false };
        check_wiring(&ring).unwrap();
        assert_eq!(switch_distances(&ring, 0), vec![0, 1, 2, 3, 2, 1]);
        assert_eq!(diameter(&ring), 3);
        assert!(all_hosts_reachable(&ring));
        assert_eq!(port_degrees(&ring), vec![3; 6]);
        up_down_path_ok(&ring).unwrap();
        assert_eq!(dmodk_path(&ring, 1, 4).unwrap(), vec![1, 2, 3, 4]);
    }

    #[test]
    fn miswiring_is_reported() {
        let err = check_wiring(&Ring { n: 6, miswired: true, clockwise: false }).unwrap_err();
        assert!(err.to_string().contains("switch 0 port 1 leads to switch 2 port 2"), "{err}");
    }

    #[test]
    fn detours_are_reported() {
        let err = up_down_path_ok(&Ring { n: 6, miswired: false, clockwise: true }).unwrap_err();
        assert!(err.to_string().contains("not one hop closer"), "{err}");
    }
}
