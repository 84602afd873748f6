//! The size of a fabric computed from its config alone, without building it, so that a
//! fabric too large for the machine is refused before anything is allocated. Every count
//! saturates instead of overflowing: an absurd config gives `u64::MAX`, never a panic.
//! The tests check these numbers against the built fabrics.

use super::limits::{MAX_NODES, MAX_PORTS};
use super::{kept_uplinks, parse_oversubscription};
use crate::config::{OversubscriptionBy, TopologyConfig};

/// Hosts and switches of a fabric, and the bytes of its own tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricSize {
    pub hosts: u64,
    /// (switch count, ports per switch) of each kind of switch (a level of a tree, the
    /// leaves or spines of a group...).
    pub classes: Vec<(u64, u64)>,
    /// Per-switch or per-group tables of the topology itself (XGFT host ranges, the
    /// megafly's group distances).
    pub table_bytes: u64,
}

impl FabricSize {
    pub fn switches(&self) -> u64 {
        self.classes.iter().fold(0u64, |s, &(n, _)| s.saturating_add(n))
    }

    /// Ports summed over the switches (unwired ones included: they have queues too).
    pub fn ports(&self) -> u64 {
        self.classes.iter().fold(0u64, |s, &(n, r)| s.saturating_add(n.saturating_mul(r)))
    }

    /// Ports of the largest switch.
    pub fn max_radix(&self) -> u64 {
        self.classes.iter().filter(|&&(n, _)| n > 0).map(|&(_, r)| r).max().unwrap_or(0)
    }

    /// Request-mask words (64 bits each) summed over the ports: an output port of a
    /// switch of r ports with v VCs has ceil(r · v / 64).
    pub fn mask_words(&self, vcs: u64) -> u64 {
        self.classes.iter().fold(0u64, |sum, &(switches, radix)| {
            let per_port = radix.saturating_mul(vcs).div_ceil(64);
            sum.saturating_add(switches.saturating_mul(radix).saturating_mul(per_port))
        })
    }
}

/// Whether the fabric stays within the node and port limits every fabric checks (see
/// `limits.rs`); beyond them the topology refuses it by name, before allocating.
pub fn within_limits(cfg: &TopologyConfig) -> bool {
    let size = fabric_size(cfg);
    size.hosts <= MAX_NODES && size.switches() <= MAX_NODES && size.max_radix() <= MAX_PORTS
}

fn from_classes(hosts: u64, classes: &[(u64, u64)], table_bytes: u64) -> FabricSize {
    FabricSize { hosts, classes: classes.to_vec(), table_bytes }
}

fn product(factors: impl IntoIterator<Item = u64>) -> u64 {
    factors.into_iter().fold(1u64, |acc, f| acc.saturating_mul(f))
}

/// The size of the fabric `cfg` describes (the config need not describe a buildable one).
pub fn fabric_size(cfg: &TopologyConfig) -> FabricSize {
    let u = |x: u32| x as u64;
    match cfg {
        TopologyConfig::SingleSwitch { hosts } => from_classes(u(*hosts), &[(1, u(*hosts))], 0),
        TopologyConfig::BackToBack {} => from_classes(2, &[], 0),
        TopologyConfig::SpineLeaf {
            leaves,
            spines,
            hosts_per_leaf,
            links_per_pair,
            oversubscription,
            oversubscription_by,
        } => {
            let (l, s, h, p) = (u(*leaves), u(*spines), u(*hosts_per_leaf), u(*links_per_pair));
            let all = s.saturating_mul(p);
            // Uplinks removed: k per leaf, dealt round robin, so k mod s spines have
            // one link more to every leaf than the others.
            let kept = match (oversubscription, oversubscription_by) {
                (Some(text), Some(OversubscriptionBy::Links)) => {
                    parse_oversubscription(text).ok().and_then(|f| kept_uplinks(s, all, f)).unwrap_or(all)
                }
                _ => all,
            };
            let (per_spine, more) = kept.checked_div(s).map_or((0, 0), |q| (q, kept - q * s));
            from_classes(
                l.saturating_mul(h),
                &[
                    (l, h.saturating_add(kept)),
                    (more, l.saturating_mul(per_spine + 1)),
                    (s - more, l.saturating_mul(per_spine)),
                ],
                0,
            )
        }
        TopologyConfig::FatTree { radix, levels } => {
            let (k, half) = (*radix, radix / 2);
            match levels {
                2 => xgft_size(&[half, k], &[1, half]),
                _ => xgft_size(&[half, half, k], &[1, half, half]),
            }
        }
        TopologyConfig::KAryNTree { k, n } => {
            let children = vec![*k; (*n).min(64) as usize];
            let mut parents = children.clone();
            if let Some(first) = parents.first_mut() {
                *first = 1;
            }
            xgft_size(&children, &parents)
        }
        TopologyConfig::Xgft { children, parents } => xgft_size(children, parents),
        TopologyConfig::Dragonfly { hosts_per_switch, switches_per_group, global_links_per_switch, groups, .. } => {
            let (p, a, h) = (u(*hosts_per_switch), u(*switches_per_group), u(*global_links_per_switch));
            let g = groups.map_or(a.saturating_mul(h).saturating_add(1), u);
            let switches = a.saturating_mul(g);
            // The global links of a group, 6 bytes each, and a u32 per group (and one more)
            // locating those that lead to each other group.
            let table = a.saturating_mul(h).saturating_mul(6).saturating_add(g.saturating_add(1).saturating_mul(4));
            from_classes(
                switches.saturating_mul(p),
                &[(switches, p.saturating_add(a.saturating_sub(1)).saturating_add(h))],
                table,
            )
        }
        TopologyConfig::Megafly {
            groups,
            leaves_per_group,
            spines_per_group,
            hosts_per_leaf,
            global_links_per_spine,
            ..
        } => {
            let (l, s) = (u(*leaves_per_group), u(*spines_per_group));
            let (p, h) = (u(*hosts_per_leaf), u(*global_links_per_spine));
            let g = groups.map_or(s.saturating_mul(h).saturating_add(1), u);
            // One byte per (position, group offset, position): see `groups.rs`.
            let table = product([l + s, l + s, g]);
            from_classes(
                product([g, l, p]),
                &[(g.saturating_mul(l), p.saturating_add(s)), (g.saturating_mul(s), l.saturating_add(h))],
                table,
            )
        }
        TopologyConfig::HyperX { sides, hosts_per_switch, links_per_pair } => {
            let switches = product(sides.iter().map(|&s| u(s)));
            let network = sides
                .iter()
                .fold(0u64, |sum, &s| sum.saturating_add(u(s).saturating_sub(1).saturating_mul(u(*links_per_pair))));
            let p = u(*hosts_per_switch);
            // The coordinates of every switch, 2 bytes each.
            let table = product([switches, sides.len() as u64, 2]);
            from_classes(switches.saturating_mul(p), &[(switches, p.saturating_add(network))], table)
        }
        TopologyConfig::Torus { sides, hosts_per_switch } | TopologyConfig::Mesh { sides, hosts_per_switch } => {
            let switches = product(sides.iter().map(|&s| u(s)));
            // Two ports per dimension, one along a side of 2 (see `grid.rs`).
            let network: u64 = sides.iter().map(|&s| if s == 2 { 1 } else { 2 }).sum();
            let p = u(*hosts_per_switch);
            from_classes(switches.saturating_mul(p), &[(switches, p.saturating_add(network))], 0)
        }
    }
}

/// XGFT(h; children; parents) as `Xgft::new` numbers it: level l has
/// W_l · (hosts / M_l) switches of m_l + w_{l+1} ports, and the fabric keeps 12 bytes per
/// switch (its level and the hosts below it).
fn xgft_size(children: &[u32], parents: &[u32]) -> FabricSize {
    let c: Vec<u64> = children.iter().map(|&x| x as u64).collect();
    let w: Vec<u64> = parents.iter().map(|&x| x as u64).collect();
    let hosts = product(c.iter().copied());
    let classes: Vec<(u64, u64)> = (1..=c.len())
        .map(|l| {
            let below = product(c[..l].iter().copied()).max(1);
            let count = product(w[..l.min(w.len())].iter().copied()).saturating_mul(hosts / below);
            (count, c[l - 1].saturating_add(w.get(l).copied().unwrap_or(0)))
        })
        .collect();
    let mut size = FabricSize { hosts, classes, table_bytes: 0 };
    size.table_bytes = size.switches().saturating_mul(12);
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrangement, LinksConfig};
    use crate::topology::{build, Topology};

    #[test]
    fn sizes_match_the_built_fabrics() {
        let dragonfly = |groups| TopologyConfig::Dragonfly {
            hosts_per_switch: 4,
            switches_per_group: 8,
            global_links_per_switch: 4,
            groups,
            arrangement: Arrangement::Palmtree,
        };
        let cases = [
            TopologyConfig::SingleSwitch { hosts: 8 },
            TopologyConfig::BackToBack {},
            TopologyConfig::SpineLeaf {
                leaves: 8,
                spines: 4,
                hosts_per_leaf: 8,
                links_per_pair: 2,
                oversubscription: None,
                oversubscription_by: None,
            },
            TopologyConfig::SpineLeaf {
                leaves: 3,
                spines: 2,
                hosts_per_leaf: 4,
                links_per_pair: 3,
                oversubscription: Some("1:0.5".into()),
                oversubscription_by: Some(OversubscriptionBy::Links),
            },
            TopologyConfig::FatTree { radix: 16, levels: 3 },
            TopologyConfig::FatTree { radix: 36, levels: 2 },
            TopologyConfig::KAryNTree { k: 4, n: 3 },
            TopologyConfig::Xgft { children: vec![20, 12], parents: vec![1, 12] },
            TopologyConfig::Xgft { children: vec![2, 3, 2, 2], parents: vec![1, 2, 3, 2] },
            dragonfly(None),
            dragonfly(Some(17)),
            TopologyConfig::Megafly {
                groups: None,
                leaves_per_group: 6,
                spines_per_group: 6,
                hosts_per_leaf: 6,
                global_links_per_spine: 6,
                arrangement: Arrangement::Palmtree,
            },
            TopologyConfig::HyperX { sides: vec![6, 5, 4], hosts_per_switch: 6, links_per_pair: 2 },
            TopologyConfig::Torus { sides: vec![8, 2, 3], hosts_per_switch: 2 },
            TopologyConfig::Mesh { sides: vec![4, 4, 2], hosts_per_switch: 1 },
        ];
        for cfg in cases {
            let t = build(&cfg, &LinksConfig::default()).unwrap();
            let size = fabric_size(&cfg);
            let radixes: Vec<u64> = (0..t.num_switches()).map(|s| t.num_ports(s) as u64).collect();
            assert_eq!(size.hosts, t.num_hosts() as u64, "{cfg:?}");
            assert_eq!(size.switches(), t.num_switches() as u64, "{cfg:?}");
            assert_eq!(size.ports(), radixes.iter().sum::<u64>(), "{cfg:?}");
            assert_eq!(size.max_radix(), radixes.iter().copied().max().unwrap_or(0), "{cfg:?}");
            for vcs in [1, 4, 16] {
                let words: u64 = radixes.iter().map(|&r| r * (r * vcs).div_ceil(64)).sum();
                assert_eq!(size.mask_words(vcs), words, "{cfg:?} with {vcs} VCs");
            }
        }
    }

    #[test]
    fn absurd_sizes_saturate() {
        let huge = TopologyConfig::Xgft { children: vec![u32::MAX; 8], parents: vec![u32::MAX; 8] };
        let size = fabric_size(&huge);
        assert_eq!(size.hosts, u64::MAX);
        assert_eq!(size.ports(), u64::MAX);
        let k = TopologyConfig::KAryNTree { k: u32::MAX, n: u32::MAX };
        assert_eq!(fabric_size(&k).hosts, u64::MAX);
    }
}
