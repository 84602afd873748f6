//! From a topology config to a fabric.

use super::{AnyTopology, BackToBack, Link, LinkClasses, SingleSwitch, SpineLeaf, Xgft};
use crate::config::{LinkConfig, LinksConfig, TopologyConfig};
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
        TopologyConfig::SpineLeaf { leaves, spines, hosts_per_leaf, links_per_pair, oversubscription } => {
            let fraction = oversubscription.as_deref().map(uplink_fraction).transpose()?;
            AnyTopology::SpineLeaf(SpineLeaf::new(*leaves, *spines, *hosts_per_leaf, *links_per_pair, fraction, links)?)
        }
        TopologyConfig::FatTree { radix, levels } => AnyTopology::Xgft(Xgft::fat_tree(*radix, *levels, links)?),
        TopologyConfig::KAryNTree { k, n } => AnyTopology::Xgft(Xgft::k_ary_n_tree(*k, *n, links)?),
        TopologyConfig::Xgft { children, parents } => AnyTopology::Xgft(Xgft::new(children, parents, links)?),
    })
}

/// "host capacity : uplink capacity", e.g. "1:0.5" -> 0.5; the same reading as config
/// validation, which has normally refused bad ratios already.
fn uplink_fraction(text: &str) -> Result<f64> {
    let bad = || Error::Topology(format!("oversubscription must be a ratio such as \"1:0.5\", found \"{text}\""));
    let (down, up) = text.split_once(':').ok_or_else(bad)?;
    let down: f64 = down.trim().parse().map_err(|_| bad())?;
    let up: f64 = up.trim().parse().map_err(|_| bad())?;
    if down > 0.0 && up > 0.0 && down.is_finite() && up.is_finite() {
        Ok(up / down)
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::check_wiring;
    use crate::topology::Topology;
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
        ];
        for (cfg, description) in cases {
            let t = topo(cfg).unwrap();
            assert_eq!(t.describe(), description);
            check_wiring(&t).unwrap();
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
        };
        for cfg in [
            TopologyConfig::SingleSwitch { hosts: 0 },
            TopologyConfig::SingleSwitch { hosts: 100_000 },
            spine_leaf("one to two"),
            TopologyConfig::FatTree { radix: 16, levels: 4 },
            TopologyConfig::FatTree { radix: 15, levels: 2 },
            TopologyConfig::KAryNTree { k: 64, n: 6 },
            TopologyConfig::Xgft { children: vec![4], parents: vec![1, 4] },
        ] {
            let err = topo(cfg.clone()).unwrap_err();
            assert!(matches!(err, Error::Topology(_)), "{cfg:?}: {err}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }
}
