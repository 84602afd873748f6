//! Nodes: the servers that hold the fabric's endpoints. An AI server attaches each of its
//! G GPUs to a NIC and a switch port of its own (a "rail"), so a fabric's hosts are
//! endpoints and a node is G consecutive ones: node n owns endpoints n·G to n·G + G − 1.
//! Consecutive hosts sit under the same switches in every fabric (see the module
//! documentation), so a node fills its leaf's ports before the next node's begin. With
//! G = 1 (the default) every endpoint is a node, as fabrics have always been.
//!
//! The map is arithmetic, not a table: an endpoint's node is a division, a node's
//! endpoints a range.

use crate::config::Problems;
use std::ops::Range;

/// How a fabric's endpoints group into nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nodes {
    per_node: u32,
    count: u32,
}

impl Nodes {
    /// `endpoints` grouped `gpus_per_node` to a node (which the config check has made a
    /// divisor of `endpoints`; a remainder would be left out).
    pub fn new(endpoints: usize, gpus_per_node: u32) -> Nodes {
        let per_node = gpus_per_node.max(1);
        Nodes { per_node, count: (endpoints / per_node as usize) as u32 }
    }

    /// Every endpoint a node of its own.
    pub fn single(endpoints: usize) -> Nodes {
        Nodes::new(endpoints, 1)
    }

    /// How many nodes the fabric has.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Endpoints (GPUs) per node.
    pub fn gpus_per_node(&self) -> u32 {
        self.per_node
    }

    /// The node endpoint `endpoint` belongs to.
    #[inline]
    pub fn node_of(&self, endpoint: u32) -> u32 {
        endpoint / self.per_node
    }

    /// The endpoint's index within its node (its local GPU).
    #[inline]
    pub fn local_index(&self, endpoint: u32) -> u32 {
        endpoint % self.per_node
    }

    /// The endpoints of node `node`.
    #[inline]
    pub fn endpoints_of(&self, node: u32) -> Range<u32> {
        node * self.per_node..(node + 1) * self.per_node
    }

    /// Whether endpoints `a` and `b` are in the same node.
    #[inline]
    pub fn same_node(&self, a: u32, b: u32) -> bool {
        self.node_of(a) == self.node_of(b)
    }
}

/// Checks `gpus_per_node` (at `key`) against a fabric of `hosts` hosts: positive, and a
/// divisor of the hosts, since every node has all its endpoints; a value that is not
/// one is told the divisors on either side of it.
pub(crate) fn validate_gpus_per_node(p: &mut Problems, key: &str, gpus_per_node: u32, hosts: u64) {
    let g = gpus_per_node as u64;
    if g == 0 {
        p.add(key, "must be positive, found 0");
        return;
    }
    if hosts == 0 || hosts.is_multiple_of(g) {
        return;
    }
    let mut message = format!("{g} does not divide the fabric's {hosts} hosts into whole nodes");
    if let Some((below, above)) = nearest_divisors(hosts, g) {
        match above {
            Some(above) => message.push_str(&format!("; the nearest divisors are {below} and {above}")),
            None => message.push_str(&format!("; the largest divisor is {below}")),
        }
    }
    p.add(key, message);
}

/// The largest divisor of `n` below `g` and the smallest above it (none above `n`), for
/// fabrics small enough to build (beyond, the fabric is refused by its size anyway).
fn nearest_divisors(n: u64, g: u64) -> Option<(u64, Option<u64>)> {
    if n > super::limits::MAX_NODES {
        return None;
    }
    let (mut below, mut above) = (1, None::<u64>);
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            for divisor in [d, n / d] {
                if divisor < g {
                    below = below.max(divisor);
                } else if divisor > g {
                    above = Some(above.map_or(divisor, |a| a.min(divisor)));
                }
            }
        }
        d += 1;
    }
    Some((below, above))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spine-leaf of 2 leaves with 8 hosts each (16 endpoints): 2 nodes of 8 GPUs fill
    /// one leaf each, 4 of 4 two per leaf, 8 of 2 four per leaf.
    #[test]
    fn nodes_of_a_spine_leaf_are_consecutive_hosts() {
        use crate::config::{LinksConfig, TopologyConfig};
        use crate::topology::{build, Endpoint, Topology};
        let cfg = TopologyConfig::SpineLeaf {
            leaves: 2,
            spines: 2,
            hosts_per_leaf: 8,
            links_per_pair: 1,
            oversubscription: None,
            oversubscription_by: Default::default(),
        };
        let topo = build(&cfg, &LinksConfig::default()).unwrap();
        let leaf = |h: u32| match topo.attachment(h as usize) {
            Endpoint::Switch { switch, .. } => switch,
            other => panic!("host {h} on {other:?}"),
        };
        for (g, nodes_per_leaf) in [(8, 1), (4, 2), (2, 4)] {
            let nodes = Nodes::new(topo.num_hosts(), g);
            assert_eq!(nodes.count(), 16 / g as usize);
            assert_eq!(nodes.gpus_per_node(), g);
            for n in 0..nodes.count() as u32 {
                let mine = nodes.endpoints_of(n);
                assert_eq!(mine, n * g..(n + 1) * g, "{g} GPUs: node {n}");
                for e in mine.clone() {
                    assert_eq!(nodes.node_of(e), n);
                    assert_eq!(nodes.local_index(e), e - n * g);
                    assert_eq!(leaf(e), leaf(mine.start), "a node sits under one leaf");
                }
            }
            // Which nodes share the first leaf.
            let on_first: Vec<u32> = (0..nodes.count() as u32).filter(|&n| leaf(n * g) == leaf(0)).collect();
            assert_eq!(on_first.len(), nodes_per_leaf, "{g} GPUs per node");
            assert!(nodes.same_node(0, g - 1) && !nodes.same_node(g - 1, g));
        }
        let single = Nodes::single(16);
        assert_eq!((single.count(), single.node_of(7), single.endpoints_of(7)), (16, 7, 7..8));
    }

    #[test]
    fn gpus_per_node_must_divide_the_hosts() {
        let check = |g: u32, hosts: u64| {
            let mut p = Problems::default();
            validate_gpus_per_node(&mut p, "topology.gpus_per_node", g, hosts);
            p.into_result().err().map(|e| e.to_string())
        };
        for (g, hosts) in [(1, 7), (8, 16), (16, 16), (3, 1056)] {
            assert_eq!(check(g, hosts), None, "{g} of {hosts}");
        }
        let e = check(0, 16).unwrap();
        assert!(e.contains("topology.gpus_per_node") && e.contains("positive"), "{e}");
        let e = check(3, 16).unwrap();
        assert!(e.contains("16 hosts") && e.contains("nearest divisors are 2 and 4"), "{e}");
        let e = check(7, 48).unwrap();
        assert!(e.contains("nearest divisors are 6 and 8"), "{e}");
        let e = check(40, 16).unwrap();
        assert!(e.contains("largest divisor is 16"), "{e}");
        assert_eq!(nearest_divisors(1 << 40, 3), None, "beyond any buildable fabric");
    }
}
