//! Extended generalised fat-trees XGFT(h; m₁..m_h; w₁..w_h) (Öhring, Ibel, Das and Kumar,
//! 1995): every level-l switch has m_l children and every level-(l-1) node w_l parents.
//! Fat-trees of Al-Fares et al. and k-ary n-trees are special cases.
//!
//! A level-l node is labelled (a_h..a_{l+1}; b_l..b_1) with a_i < m_i and b_i < w_i. Its
//! index within its level is `A * W_l + B`, where A is the a-digits in mixed radix with
//! a_{l+1} least significant, B the b-digits with b_l most significant, and
//! W_l = w₁·…·w_l; hosts are level 0, so the hosts of one leaf are consecutive. Switch ids
//! number the leaves first, then level 2, and so on.
//!
//! Level-l switch ports: `0..m_l` go down (port c to the child with a_l = c), then
//! `m_l..m_l + w_{l+1}` go up (port m_l + p to the parent with b_{l+1} = p); top
//! switches only have down ports. Everything is computed from these coordinates, so the
//! structure holds a few numbers per level, plus, for the routing done on every packet,
//! the level and the range of hosts below each switch (12 bytes a switch).

use super::limits::{check_nodes, check_ports};
use super::{Endpoint, Link, LinkClasses, PortRange, Topology, UpDown};
use crate::error::{Error, Result};
use crate::memory::fallible::collected;
use std::ops::Range;
use strength_reduce::StrengthReducedUsize as Divisor;

#[derive(Clone, Debug)]
pub struct Xgft {
    /// Index 0 describes the hosts, index l the switches of level l.
    levels: Vec<Level>,
    switches: usize,
    links: LinkClasses,
    /// Per switch: its level and the hosts below it, so that routing decides "down or up"
    /// by a subtraction and a comparison instead of locating the switch.
    below: Vec<HostsBelow>,
}

/// The consecutive hosts `first..first + count` below a switch of level `level`.
#[derive(Clone, Copy, Debug)]
struct HostsBelow {
    first: u32,
    count: u32,
    level: u32,
}

/// The numbers of one level l that the coordinate arithmetic needs.
#[derive(Clone, Copy, Debug)]
struct Level {
    /// m_l: children (down ports) of each node; 0 for hosts.
    down: usize,
    /// w_{l+1}: parents (up ports) of each node; 0 at the top.
    up: usize,
    /// W_l = w₁·…·w_l: the number of distinct b-labels.
    width: usize,
    /// Global id of the level's first switch (0 for hosts).
    first: usize,
    /// Number of nodes at this level.
    count: usize,
    // Divisors for the arithmetic routing does on every packet, which they turn into
    // multiplications (0 stands in as 1; it is never divided by).
    /// M_l = m₁·…·m_l: the hosts below one node, whose ids are consecutive.
    per_hosts_below: Divisor,
    /// W_l and `up`.
    per_width: Divisor,
    per_up: Divisor,
}

impl Xgft {
    /// XGFT(h; children; parents): `children[i]` = m_{i+1}, `parents[i]` = w_{i+1}.
    pub fn new(children: &[u32], parents: &[u32], links: LinkClasses) -> Result<Xgft> {
        let name = signature(children, parents);
        if children.is_empty() || children.len() != parents.len() {
            return Err(Error::Topology(format!(
                "{name}: children and parents need the same, non-zero number of levels (found {} and {})",
                children.len(),
                parents.len()
            )));
        }
        if children.contains(&0) || parents.contains(&0) {
            return Err(Error::Topology(format!("{name}: every children and parents count must be positive")));
        }
        if parents[0] != 1 {
            return Err(Error::Topology(format!("{name}: hosts have a single port, so parents[0] must be 1")));
        }
        let height = children.len();

        let product = |factors: &[u32]| factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f as u64));
        let hosts = check_nodes(&name, "hosts", product(children))?;
        let mut levels = Vec::with_capacity(height + 1);
        let mut first = 0u64;
        for l in 0..=height {
            // A level-l node has one label per (a-digits above l, b-digits up to l).
            let hosts_below = product(&children[..l]).expect("a factor of the host count");
            let width = product(&parents[..l]);
            let what = if l == 0 { "hosts".to_string() } else { format!("level-{l} switches") };
            let count = check_nodes(&name, &what, width.and_then(|w| w.checked_mul(hosts as u64 / hosts_below)))?;
            let down = if l == 0 { 0 } else { children[l - 1] as u64 };
            let up = parents.get(l).map_or(0, |&w| w as u64);
            if l > 0 {
                check_ports(&name, &format!("level-{l} switch"), down + up)?;
            }
            let width = width.expect("checked with the count") as usize;
            let divisor = |d: usize| Divisor::new(d.max(1));
            levels.push(Level {
                down: down as usize,
                up: up as usize,
                width,
                first: first as usize,
                count,
                per_hosts_below: divisor(hosts_below as usize),
                per_width: divisor(width),
                per_up: divisor(up as usize),
            });
            if l > 0 {
                first += count as u64;
            }
        }
        let switches = check_nodes(&name, "switches", Some(first))?;
        let mut xgft = Xgft { levels, switches, links, below: Vec::new() };
        let below = (0..switches).map(|switch| {
            let (level, a, _) = xgft.locate(switch);
            let count = xgft.levels[level].per_hosts_below.get();
            // Host ids fit in u32 (check_nodes), and so do the ranges below switches.
            HostsBelow { first: (a * count) as u32, count: count as u32, level: level as u32 }
        });
        xgft.below = collected(switches, below, "the fat-tree's switch table")?;
        Ok(xgft)
    }

    /// Folded Clos of radix-`radix` switches: 2 levels give XGFT(2; k/2, k; 1, k/2) with
    /// k²/2 hosts and 3k/2 switches; 3 levels give the k-ary fat-tree of Al-Fares et al.,
    /// XGFT(3; k/2, k/2, k; 1, k/2, k/2), with k³/4 hosts and 5k²/4 switches.
    pub fn fat_tree(radix: u32, levels: u32, links: LinkClasses) -> Result<Xgft> {
        if radix < 2 || !radix.is_multiple_of(2) {
            return Err(Error::Topology(format!("fat-tree radix must be an even number >= 2, found {radix}")));
        }
        let (k, half) = (radix, radix / 2);
        match levels {
            2 => Xgft::new(&[half, k], &[1, half], links),
            3 => Xgft::new(&[half, half, k], &[1, half, half], links),
            _ => Err(Error::Topology(format!("a fat-tree has 2 or 3 levels (use an XGFT otherwise), found {levels}"))),
        }
    }

    /// The k-ary n-tree of Petrini and Vanneschi, XGFT(n; k..k; 1, k..k): kⁿ hosts and
    /// n·kⁿ⁻¹ switches of 2k ports (k at the top).
    pub fn k_ary_n_tree(k: u32, n: u32, links: LinkClasses) -> Result<Xgft> {
        if k < 2 || n == 0 {
            return Err(Error::Topology(format!("a k-ary n-tree needs k >= 2 and n >= 1, found k = {k}, n = {n}")));
        }
        // kⁿ hosts: beyond 31 levels there are more than 2^31 of them anyway.
        if n > 31 {
            return Err(Error::Topology(format!("{k}-ary {n}-tree: more than 2^31 hosts")));
        }
        let children = vec![k; n as usize];
        let mut parents = vec![k; n as usize];
        parents[0] = 1;
        Xgft::new(&children, &parents, links)
    }

    /// Number of switch levels h.
    pub fn height(&self) -> usize {
        self.levels.len() - 1
    }

    /// The ids of the switches at `level` (1 = leaves, `height()` = roots).
    pub fn switches_at(&self, level: usize) -> Range<usize> {
        assert!(level >= 1, "level 0 holds the hosts, not switches");
        let lv = &self.levels[level];
        lv.first..lv.first + lv.count
    }

    /// E.g. "XGFT(3; 8,8,16; 1,8,8): 1024 hosts, 320 switches".
    pub fn describe(&self) -> String {
        let children: Vec<u32> = self.levels[1..].iter().map(|lv| lv.down as u32).collect();
        let parents: Vec<u32> = self.levels[..self.height()].iter().map(|lv| lv.up as u32).collect();
        format!("{}: {} hosts, {} switches", signature(&children, &parents), self.num_hosts(), self.switches)
    }

    /// (level, A, B) of a switch.
    #[inline]
    fn locate(&self, switch: usize) -> (usize, usize, usize) {
        debug_assert!(switch < self.switches, "switch {switch} out of range");
        // levels[1].first == 0, so the count of levels starting at or before `switch` is its level.
        let l = self.levels[1..].partition_point(|lv| lv.first <= switch);
        let lv = &self.levels[l];
        let (a, b) = Divisor::div_rem(switch - lv.first, lv.per_width);
        (l, a, b)
    }
}

fn signature(children: &[u32], parents: &[u32]) -> String {
    let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    format!("XGFT({}; {}; {})", children.len(), join(children), join(parents))
}

impl Topology for Xgft {
    fn num_switches(&self) -> usize {
        self.switches
    }

    fn num_hosts(&self) -> usize {
        self.levels[0].count
    }

    fn num_ports(&self, switch: usize) -> usize {
        let lv = &self.levels[self.locate(switch).0];
        lv.down + lv.up
    }

    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        let (l, a, b) = self.locate(switch);
        let lv = &self.levels[l];
        if port < lv.down {
            let child = &self.levels[l - 1];
            let child_a = a * lv.down + port;
            if l == 1 {
                return Endpoint::Host(child_a as u32);
            }
            // The child keeps the low b-digits; the dropped digit b_l is its up port.
            Endpoint::Switch {
                switch: (child.first + child_a * child.width + b % child.width) as u32,
                port: (child.down + b / child.width) as u16,
            }
        } else {
            let p = port - lv.down;
            debug_assert!(p < lv.up, "port {port} out of range on switch {switch}");
            let parent = &self.levels[l + 1];
            Endpoint::Switch {
                switch: (parent.first + (a / parent.down) * parent.width + b + p * lv.width) as u32,
                port: (a % parent.down) as u16,
            }
        }
    }

    fn attachment(&self, host: usize) -> Endpoint {
        let m1 = self.levels[1].down;
        Endpoint::Switch { switch: (host / m1) as u32, port: (host % m1) as u16 }
    }

    fn link(&self, switch: usize, port: usize) -> Link {
        if switch < self.levels[1].count && port < self.levels[1].down {
            self.links.host
        } else {
            self.links.switch
        }
    }

    fn host_link(&self, _host: usize) -> Link {
        self.links.host
    }
}

impl UpDown for Xgft {
    #[inline]
    fn next_hops(&self, switch: usize, dst_host: usize) -> PortRange {
        let span = self.below[switch];
        let l = span.level as usize;
        let lv = &self.levels[l];
        let offset = (dst_host as u32).wrapping_sub(span.first);
        if offset < span.count {
            // An ancestor: the child towards dst is dst's digit a_l, the offset of dst
            // below this switch in units of the hosts below one child.
            let below = self.levels[l - 1].per_hosts_below;
            PortRange { first: (offset as usize / below) as u16, count: 1, dmodk: 0 }
        } else {
            // D-mod-K: the up choice at level l is digit l of dst in radix (w₂, w₃, ...), so
            // the b-label reached at each level, and hence the root, depends on dst alone,
            // and consecutive destinations are spread over consecutive parents.
            PortRange { first: lv.down as u16, count: lv.up as u16, dmodk: self.up_digit(switch, dst_host) }
        }
    }

    fn level(&self, switch: usize) -> usize {
        self.locate(switch).0
    }

    #[inline]
    fn up_digit(&self, switch: usize, host: usize) -> u16 {
        let lv = &self.levels[self.below[switch].level as usize];
        ((host / lv.per_width) % lv.per_up) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};
    use std::collections::HashSet;

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(200_000_000_000), latency: Time::from_ns(50) },
        }
    }

    fn hosts_per_leaf(t: &Xgft) -> Vec<usize> {
        let mut count = vec![0; t.switches_at(1).len()];
        for h in 0..t.num_hosts() {
            let Endpoint::Switch { switch, .. } = t.attachment(h) else { panic!("host {h} not on a switch") };
            count[switch as usize] += 1;
        }
        count
    }

    #[test]
    fn fat_tree_radix_16_three_levels() {
        let t = Xgft::fat_tree(16, 3, links()).unwrap();
        assert_eq!(t.describe(), "XGFT(3; 8,8,16; 1,8,8): 1024 hosts, 320 switches");
        assert_eq!((t.num_hosts(), t.num_switches(), t.height()), (1024, 320, 3));
        assert_eq!(t.switches_at(1), 0..128);
        assert_eq!(t.switches_at(2), 128..256);
        assert_eq!(t.switches_at(3), 256..320);
        assert_eq!(hosts_per_leaf(&t), vec![8; 128]);
        assert!(port_degrees(&t).iter().all(|&d| d == 16));
        assert!((0..320).all(|s| t.num_ports(s) == 16));
        assert!(t.switches_at(3).all(|s| t.next_hops(s, 0).count == 1 && t.level(s) == 3));
        assert_eq!(diameter(&t), 4);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
    }

    #[test]
    fn fat_tree_648_hosts() {
        let t = Xgft::fat_tree(36, 2, links()).unwrap();
        assert_eq!((t.num_hosts(), t.num_switches()), (648, 54));
        assert!((0..54).all(|s| t.num_ports(s) == 36));
        assert!(port_degrees(&t).iter().all(|&d| d == 36));
        assert_eq!(hosts_per_leaf(&t), vec![18; 36]);
        assert_eq!(diameter(&t), 2);
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
    }

    #[test]
    fn xgft_64_hosts_two_levels() {
        let t = Xgft::new(&[8, 8], &[1, 8], links()).unwrap();
        assert_eq!((t.num_hosts(), t.num_switches()), (64, 16));
        assert_eq!(port_degrees(&t), [vec![16; 8], vec![8; 8]].concat());
        assert_eq!(diameter(&t), 2);
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
    }

    #[test]
    fn tapered_xgft() {
        // 20 hosts down and 12 links up per leaf: 1.67:1 at the leaves.
        let t = Xgft::new(&[20, 12], &[1, 12], links()).unwrap();
        assert_eq!((t.num_hosts(), t.num_switches()), (240, 24));
        assert_eq!(t.switches_at(1).len(), 12);
        assert_eq!(hosts_per_leaf(&t), vec![20; 12]);
        assert_eq!(port_degrees(&t), [vec![32; 12], vec![12; 12]].concat());
        assert_eq!(t.link(0, 19), links().host);
        assert_eq!(t.link(0, 20), links().switch);
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
    }

    #[test]
    fn k64_fat_tree_is_computed_from_coordinates() {
        let t = Xgft::fat_tree(64, 3, links()).unwrap();
        assert_eq!((t.num_hosts(), t.num_switches()), (65_536, 5_120));
        assert_eq!(t.switches_at(1).len(), 2048);
        assert_eq!(t.switches_at(3).len(), 1024);
        assert!(std::mem::size_of_val(t.levels.as_slice()) < 1024);
        check_wiring(&t).unwrap();
        assert!(port_degrees(&t).iter().all(|&d| d == 64));
    }

    #[test]
    fn k_ary_n_tree_counts() {
        let t = Xgft::k_ary_n_tree(4, 3, links()).unwrap();
        assert_eq!((t.num_hosts(), t.num_switches()), (64, 48));
        assert!((1..=3).all(|l| t.switches_at(l).len() == 16));
        assert_eq!(port_degrees(&t), [vec![8; 32], vec![4; 16]].concat());
        assert_eq!(diameter(&t), 4);
        check_wiring(&t).unwrap();
        up_down_path_ok(&t).unwrap();
        let one = Xgft::k_ary_n_tree(5, 1, links()).unwrap();
        assert_eq!((one.num_hosts(), one.num_switches(), one.num_ports(0)), (5, 1, 5));
    }

    #[test]
    fn coordinates() {
        // XGFT(2; 2,3; 1,2): 6 hosts, 3 leaves, 2 roots.
        let t = Xgft::new(&[2, 3], &[1, 2], links()).unwrap();
        assert_eq!(t.attachment(3), Endpoint::Switch { switch: 1, port: 1 });
        assert_eq!(t.peer(1, 1), Endpoint::Host(3));
        // Leaf 1 up port 1 reaches root b = 1 (switch 3 + 1) at its down port a₂ = 1.
        assert_eq!(t.peer(1, 3), Endpoint::Switch { switch: 4, port: 1 });
        assert_eq!(t.peer(4, 2), Endpoint::Switch { switch: 2, port: 3 });
        assert_eq!((t.level(2), t.level(3)), (1, 2));
        assert_eq!(t.next_hops(1, 3), PortRange { first: 1, count: 1, dmodk: 0 });
        assert_eq!(t.next_hops(1, 5), PortRange { first: 2, count: 2, dmodk: 1 });
        assert_eq!(t.next_hops(3, 5), PortRange { first: 2, count: 1, dmodk: 0 });
    }

    #[test]
    fn up_down_paths_are_minimal() {
        for (m, w) in [
            (&[4, 4][..], &[1, 2][..]),
            (&[2, 2, 4], &[1, 2, 2]),
            (&[3, 2, 4], &[1, 2, 3]),
            (&[2, 3, 2, 2], &[1, 3, 1, 2]),
            (&[1, 2, 1], &[1, 1, 2]),
        ] {
            let t = Xgft::new(m, w, links()).unwrap();
            check_wiring(&t).unwrap();
            up_down_path_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
        }
    }

    #[test]
    fn up_digits_spread_hosts_over_the_up_ports_of_every_level() {
        // k = 8, three levels: four hosts and four up-ports per leaf. The hosts of a leaf
        // take one up-port each; at level 2, the hosts that take up-port 0 at their leaf
        // spread over all of its up-ports (src mod k took the same index at both levels).
        let t = Xgft::fat_tree(8, 3, links()).unwrap();
        let leaf = match t.attachment(0) {
            Endpoint::Switch { switch, .. } => switch as usize,
            _ => unreachable!(),
        };
        let up = t.next_hops(leaf, t.num_hosts() - 1).count;
        let mut at_leaf = vec![0; up as usize];
        for h in 0..4 {
            at_leaf[t.up_digit(leaf, h) as usize] += 1;
        }
        assert!(at_leaf.iter().all(|&n| n == 1), "{at_leaf:?}");
        let parent = match t.peer(leaf, t.next_hops(leaf, t.num_hosts() - 1).first as usize) {
            Endpoint::Switch { switch, .. } => switch as usize,
            _ => unreachable!(),
        };
        let mut at_parent = std::collections::BTreeSet::new();
        for h in (0..t.num_hosts()).filter(|&h| t.up_digit(leaf, h) == 0) {
            at_parent.insert(t.up_digit(parent, h));
        }
        assert_eq!(at_parent.len(), t.next_hops(parent, t.num_hosts() - 1).count as usize);
    }

    #[test]
    fn dmodk_uses_one_root_per_destination() {
        for t in [
            Xgft::fat_tree(8, 3, links()).unwrap(),
            Xgft::k_ary_n_tree(3, 3, links()).unwrap(),
            Xgft::new(&[3, 2, 4], &[1, 2, 3], links()).unwrap(),
        ] {
            let top = t.height();
            let mut per_root = vec![0; t.switches_at(top).len()];
            for dst in 0..t.num_hosts() {
                let mut roots = HashSet::new();
                for src in (0..t.num_hosts()).filter(|&s| s != dst) {
                    let path = dmodk_path(&t, src, dst).unwrap();
                    // Every (sub)tree turn is unique too: one switch per level and ancestor.
                    roots.extend(path.iter().copied().filter(|&s| t.level(s) == top));
                }
                assert_eq!(roots.len(), 1, "{}: destination {dst} uses roots {roots:?}", t.describe());
                per_root[roots.into_iter().next().unwrap() - t.switches_at(top).start] += 1;
            }
            // Destinations are spread evenly over the roots.
            assert_eq!(per_root, vec![t.num_hosts() / per_root.len(); per_root.len()], "{}", t.describe());
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<Xgft>| match r {
            Err(Error::Topology(message)) => message,
            other => panic!("expected a topology error, got {other:?}"),
        };
        assert!(err(Xgft::new(&[], &[], links())).contains("same, non-zero number"));
        assert!(err(Xgft::new(&[4, 4], &[1], links())).contains("found 2 and 1"));
        assert!(err(Xgft::new(&[4, 0], &[1, 2], links())).contains("positive"));
        assert!(err(Xgft::new(&[4, 4], &[2, 2], links())).contains("parents[0] must be 1"));
        assert!(err(Xgft::new(&[60_000, 6], &[1, 6_000], links()))
            .contains("level-1 switch would have 66000 ports, more than 65535"));
        assert!(err(Xgft::new(&[2048, 2048, 2048], &[1, 2, 2], links())).contains("more than 2^31 hosts"));
        assert!(err(Xgft::new(&[u32::MAX; 6], &[1; 6], links())).contains("more than 2^31 hosts"));
        assert!(err(Xgft::new(&[2, 2, 2], &[1, 50_000, 50_000], links())).contains("more than 2^31 level-3 switches"));
        assert!(err(Xgft::fat_tree(7, 3, links())).contains("even"));
        assert!(err(Xgft::fat_tree(0, 2, links())).contains("even"));
        assert!(err(Xgft::fat_tree(8, 4, links())).contains("2 or 3 levels"));
        assert!(err(Xgft::fat_tree(70_000, 2, links())).contains("more than 2^31 hosts"));
        assert!(err(Xgft::k_ary_n_tree(1, 3, links())).contains("k >= 2"));
        assert!(err(Xgft::k_ary_n_tree(4, 0, links())).contains("n >= 1"));
        assert!(err(Xgft::k_ary_n_tree(2, 1_000_000, links())).contains("2^31 hosts"));
        assert!(err(Xgft::k_ary_n_tree(2, 31, links())).contains("2^31"));
    }
}
