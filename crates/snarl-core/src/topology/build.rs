//! From a topology config to a fabric.

use super::{
    AnyTopology, BackToBack, Dragonfly, HyperX, Link, LinkClasses, Megafly, Mesh, Oversubscription, SingleSwitch,
    SpineLeaf, Torus, Xgft,
};
use crate::config::{LinkConfig, LinksConfig, OversubscriptionBy, TopologyConfig};
use crate::error::{Error, Result};

impl From<LinkConfig> for Link {
    fn from(link: LinkConfig) -> Link {
        Link { rate: link.rate, latency: link.latency }
    }
}

impl From<&LinksConfig> for LinkClasses {
    fn from(links: &LinksConfig) -> LinkClasses {
        LinkClasses { host: links.host.into(), switch: links.switch.into() }
    }
}

/// Builds the fabric `cfg` describes; impossible fabrics are [`Error::Topology`].
pub fn build(cfg: &TopologyConfig, links: &LinksConfig) -> Result<AnyTopology> {
    let links = LinkClasses::from(links);
    Ok(match cfg {
        TopologyConfig::SingleSwitch { hosts } => AnyTopology::SingleSwitch(SingleSwitch::new(*hosts, links)?),
        TopologyConfig::BackToBack {} => AnyTopology::BackToBack(BackToBack::new(links)),
        TopologyConfig::SpineLeaf {
            leaves,
            spines,
            hosts_per_leaf,
            links_per_pair,
            oversubscription,
            oversubscription_by,
        } => {
            let fraction = oversubscription.as_deref().map(uplink_fraction).transpose()?;
            let oversubscription = fraction.map(|f| match oversubscription_by.unwrap_or_default() {
                OversubscriptionBy::Rate => Oversubscription::Rate(f),
                OversubscriptionBy::Links => Oversubscription::Links(f),
            });
            AnyTopology::SpineLeaf(SpineLeaf::new(
                *leaves,
                *spines,
                *hosts_per_leaf,
                *links_per_pair,
                oversubscription,
                links,
            )?)
        }
        TopologyConfig::FatTree { radix, levels } => AnyTopology::Xgft(Xgft::fat_tree(*radix, *levels, links)?),
        TopologyConfig::KAryNTree { k, n } => AnyTopology::Xgft(Xgft::k_ary_n_tree(*k, *n, links)?),
        TopologyConfig::Xgft { children, parents } => AnyTopology::Xgft(Xgft::new(children, parents, links)?),
        TopologyConfig::Dragonfly {
            hosts_per_switch,
            switches_per_group,
            global_links_per_switch,
            groups,
            arrangement,
        } => AnyTopology::Dragonfly(Dragonfly::new(
            *hosts_per_switch,
            *switches_per_group,
            *global_links_per_switch,
            *groups,
            *arrangement,
            links,
        )?),
        TopologyConfig::Megafly {
            groups,
            leaves_per_group,
            spines_per_group,
            hosts_per_leaf,
            global_links_per_spine,
            arrangement,
        } => AnyTopology::Megafly(Megafly::new(
            *groups,
            *leaves_per_group,
            *spines_per_group,
            *hosts_per_leaf,
            *global_links_per_spine,
            *arrangement,
            links,
        )?),
        TopologyConfig::HyperX { sides, hosts_per_switch, links_per_pair } => {
            AnyTopology::HyperX(HyperX::new(sides, *hosts_per_switch, *links_per_pair, links)?)
        }
        TopologyConfig::Torus { sides, hosts_per_switch } => {
            AnyTopology::Torus(Torus::new(sides, *hosts_per_switch, links)?)
        }
        TopologyConfig::Mesh { sides, hosts_per_switch } => {
            AnyTopology::Mesh(Mesh::new(sides, *hosts_per_switch, links)?)
        }
    })
}

/// "host capacity : uplink capacity", e.g. "1:0.5" -> 0.5 (config validation normally
/// refused bad ratios already).
fn uplink_fraction(text: &str) -> Result<f64> {
    crate::config::parse_oversubscription(text).map_err(Error::Topology)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arrangement;
    use crate::topology::analysis::{check_wiring, minimal_ok};
    use crate::topology::{Minimal, Topology, UpDown};
    use crate::units::Rate;

    fn topo(cfg: TopologyConfig) -> Result<AnyTopology> {
        build(&cfg, &LinksConfig::default())
    }

    #[test]
    fn every_variant_builds() {
        let cases = [
            (TopologyConfig::SingleSwitch { hosts: 8 }, "single switch: 8 hosts"),
            (TopologyConfig::BackToBack {}, "back-to-back: 2 hosts, no switch"),
            (
                TopologyConfig::SpineLeaf {
                    leaves: 8,
                    spines: 4,
                    hosts_per_leaf: 8,
                    links_per_pair: 1,
                    oversubscription: Some("1:0.75".into()),
                    oversubscription_by: None,
                },
                "spine-leaf: 8 leaves of 8 hosts, 4 spines, 1 link per pair at 150Gbps: 64 hosts, 12 switches",
            ),
            (TopologyConfig::FatTree { radix: 16, levels: 3 }, "XGFT(3; 8,8,16; 1,8,8): 1024 hosts, 320 switches"),
            (TopologyConfig::FatTree { radix: 36, levels: 2 }, "XGFT(2; 18,36; 1,18): 648 hosts, 54 switches"),
            (TopologyConfig::KAryNTree { k: 4, n: 3 }, "XGFT(3; 4,4,4; 1,4,4): 64 hosts, 48 switches"),
            (
                TopologyConfig::Xgft { children: vec![20, 12], parents: vec![1, 12] },
                "XGFT(2; 20,12; 1,12): 240 hosts, 24 switches",
            ),
            (dragonfly(None, Arrangement::Palmtree), "dragonfly: 33 groups of 8 switches with 4 hosts and 4 global links each, palmtree: 1056 hosts, 264 switches"),
            (dragonfly(Some(17), Arrangement::Consecutive), "dragonfly: 17 groups of 8 switches with 4 hosts and 4 global links each, consecutive: 544 hosts, 136 switches"),
            (
                TopologyConfig::Megafly {
                    groups: None,
                    leaves_per_group: 6,
                    spines_per_group: 6,
                    hosts_per_leaf: 6,
                    global_links_per_spine: 6,
                    arrangement: Arrangement::Palmtree,
                },
                "megafly: 37 groups of 6 leaves with 6 hosts and 6 spines with 6 global links, palmtree: 1332 hosts, 444 switches",
            ),
            (
                TopologyConfig::HyperX { sides: vec![6, 6, 6], hosts_per_switch: 6, links_per_pair: 1 },
                "HyperX 6x6x6, 6 hosts per switch, 1 link per pair: 1296 hosts, 216 switches",
            ),
            (
                TopologyConfig::Torus { sides: vec![8, 8], hosts_per_switch: 2 },
                "torus 8x8, 2 hosts per switch: 128 hosts, 64 switches",
            ),
            (
                TopologyConfig::Mesh { sides: vec![4, 4, 2], hosts_per_switch: 1 },
                "mesh 4x4x2, 1 host per switch: 32 hosts, 32 switches",
            ),
        ];
        for (cfg, description) in cases {
            let t = topo(cfg).unwrap();
            assert_eq!(t.describe(), description);
            check_wiring(&t).unwrap();
            if t.supports_minimal() {
                assert!(!t.supports_up_down());
                assert_eq!(t.next_hops(0, 0).count, 0);
                // Dragonflies route hierarchically (checked in dragonfly.rs); the others
                // by exact shortest paths.
                if !matches!(t, AnyTopology::Dragonfly(_)) {
                    minimal_ok(&t).unwrap();
                }
            } else {
                assert!(t.supports_up_down());
                let mut out = [0; crate::topology::MAX_MINIMAL];
                assert_eq!(t.minimal_ports(0, 0, &mut out), 0);
            }
        }
    }

    fn dragonfly(groups: Option<u32>, arrangement: Arrangement) -> TopologyConfig {
        TopologyConfig::Dragonfly {
            hosts_per_switch: 4,
            switches_per_group: 8,
            global_links_per_switch: 4,
            groups,
            arrangement,
        }
    }

    #[test]
    fn links_come_from_the_config() {
        let mut links = LinksConfig::default();
        links.switch.rate = Rate(400_000_000_000);
        let t = build(&TopologyConfig::FatTree { radix: 4, levels: 2 }, &links).unwrap();
        assert_eq!(t.host_link(0).rate, Rate(100_000_000_000));
        assert_eq!(t.link(0, 2).rate, Rate(400_000_000_000));
    }

    #[test]
    fn oversubscription_ratios() {
        assert_eq!(uplink_fraction("1:0.5").unwrap(), 0.5);
        assert_eq!(uplink_fraction(" 4 : 3 ").unwrap(), 0.75);
        for bad in ["half", "1:0", "0:1", "1:-2", "1:inf", ":"] {
            assert!(matches!(uplink_fraction(bad), Err(Error::Topology(_))), "{bad}");
        }
    }

    #[test]
    fn impossible_fabrics_are_errors() {
        let spine_leaf = |oversubscription: &str| TopologyConfig::SpineLeaf {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 4,
            links_per_pair: 1,
            oversubscription: Some(oversubscription.into()),
            oversubscription_by: None,
        };
        for cfg in [
            TopologyConfig::SingleSwitch { hosts: 0 },
            TopologyConfig::SingleSwitch { hosts: 100_000 },
            spine_leaf("one to two"),
            TopologyConfig::FatTree { radix: 16, levels: 4 },
            TopologyConfig::FatTree { radix: 15, levels: 2 },
            TopologyConfig::KAryNTree { k: 64, n: 6 },
            TopologyConfig::Xgft { children: vec![4], parents: vec![1, 4] },
            dragonfly(Some(34), Arrangement::Palmtree),
            dragonfly(Some(1), Arrangement::Consecutive),
            TopologyConfig::Megafly {
                groups: Some(8),
                leaves_per_group: 2,
                spines_per_group: 2,
                hosts_per_leaf: 2,
                global_links_per_spine: 3,
                arrangement: Arrangement::Palmtree,
            },
            TopologyConfig::HyperX { sides: vec![6, 1], hosts_per_switch: 1, links_per_pair: 1 },
            TopologyConfig::Torus { sides: vec![], hosts_per_switch: 1 },
            TopologyConfig::Mesh { sides: vec![4, 4], hosts_per_switch: 0 },
        ] {
            let err = topo(cfg.clone()).unwrap_err();
            assert!(matches!(err, Error::Topology(_)), "{cfg:?}: {err}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }
}
