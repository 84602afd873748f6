//! `[topology]` and `[links]`: the fabric's shape, how its endpoints group into nodes,
//! its links, and their checks.

use crate::config::Problems;
use crate::units::{Rate, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[topology]`: the fabric's shape (`type` and its keys) and `gpus_per_node`.
///
/// The shape is flattened into the same table: serde hands it every key but
/// `gpus_per_node`, and its variants refuse unknown ones (`deny_unknown_fields`), so the
/// table as a whole refuses them too.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
pub struct TopologySection {
    #[serde(flatten)]
    pub shape: TopologyConfig,
    /// Endpoints per node: the fabric's hosts are endpoints (a NIC and a switch port
    /// each, a GPU's rail), and node n owns endpoints n·G to n·G + G − 1. Endpoints of
    /// one node talk over the intra-node link (`[links] intra_node`), never the network.
    #[serde(default = "crate::config::one", skip_serializing_if = "is_one")]
    pub gpus_per_node: u32,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl From<TopologyConfig> for TopologySection {
    /// A fabric of single-endpoint nodes.
    fn from(shape: TopologyConfig) -> TopologySection {
        TopologySection { shape, gpus_per_node: 1 }
    }
}

impl TopologySection {
    /// `[topology]`: the shape's sizes, and nodes that divide its hosts.
    pub(crate) fn validate(&self, p: &mut Problems) {
        self.shape.validate(p);
        let hosts = super::fabric_size(&self.shape).hosts;
        super::nodes::validate_gpus_per_node(p, "topology.gpus_per_node", self.gpus_per_node, hosts);
    }

    /// The fabric's nodes, for a config whose `gpus_per_node` divides its hosts (a
    /// validated one).
    pub fn nodes(&self) -> super::Nodes {
        let hosts = super::fabric_size(&self.shape).hosts;
        super::Nodes::new(hosts as usize, self.gpus_per_node)
    }
}

/// The fabric's shape: `[topology]`'s `type` and the keys of that type.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// N hosts on one switch.
    SingleSwitch { hosts: u32 },
    /// Two hosts wired to each other, no switch.
    BackToBack {},
    /// Two-tier leaf-spine. `oversubscription = "1:0.5"` scales the uplink rate so that
    /// a leaf's uplink capacity is that fraction of its host capacity, or with
    /// `oversubscription_by = "links"` keeps that fraction of each leaf's uplinks.
    SpineLeaf {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        #[serde(default = "crate::config::one")]
        links_per_pair: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oversubscription: Option<String>,
        /// How `oversubscription` makes its ratio (absent: by rate).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oversubscription_by: Option<OversubscriptionBy>,
    },
    /// Folded Clos built from switches of `radix` ports: 2 levels give radix²/2 hosts,
    /// 3 levels give radix³/4 hosts (the "k-ary fat-tree").
    FatTree { radix: u32, levels: u32 },
    /// The k-ary n-tree of Petrini and Vanneschi: kⁿ hosts, n·kⁿ⁻¹ switches.
    KAryNTree { k: u32, n: u32 },
    /// Extended generalised fat-tree XGFT(h; m₁..m_h; w₁..w_h): `children[i]` is the
    /// number of children of a level-(i+1) node, `parents[i]` the number of parents of a
    /// level-i node (parents[0] = 1: hosts have one port). Tapering is written directly.
    Xgft { children: Vec<u32>, parents: Vec<u32> },
    /// Canonical dragonfly (Kim, Dally, Scott and Abts, 2008): `groups` groups of
    /// `switches_per_group` switches, fully connected inside each group; every switch has
    /// `hosts_per_switch` hosts and `global_links_per_switch` links to other groups.
    /// `groups` defaults to, and may not exceed, switches_per_group · global_links_per_switch + 1
    /// (one global link between every pair of groups); with fewer groups some pairs of
    /// groups are joined by several global links.
    Dragonfly {
        hosts_per_switch: u32,
        switches_per_group: u32,
        global_links_per_switch: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<u32>,
        #[serde(default)]
        arrangement: Arrangement,
    },
    /// Megafly, also known as Dragonfly+ (Shpiner et al., 2017; Flajslik et al., 2018):
    /// every group is a complete bipartite graph of `leaves_per_group` leaves and
    /// `spines_per_group` spines; hosts sit on the leaves, global links on the spines.
    /// `groups` defaults to, and may not exceed, spines_per_group · global_links_per_spine + 1.
    Megafly {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<u32>,
        leaves_per_group: u32,
        spines_per_group: u32,
        hosts_per_leaf: u32,
        global_links_per_spine: u32,
        #[serde(default)]
        arrangement: Arrangement,
    },
    /// HyperX, or flattened butterfly (Ahn et al., 2009): switches on an n-dimensional grid
    /// with `sides[i]` switches along dimension i, every dimension fully connected, with
    /// `links_per_pair` parallel links between two switches that differ in one coordinate.
    #[serde(rename = "hyperx")]
    HyperX {
        sides: Vec<u32>,
        hosts_per_switch: u32,
        #[serde(default = "crate::config::one")]
        links_per_pair: u32,
    },
    /// n-dimensional torus: every switch is linked to its two neighbours along each
    /// dimension, with wraparound; along a side of 2 the two neighbours coincide and are
    /// joined by one link.
    Torus { sides: Vec<u32>, hosts_per_switch: u32 },
    /// n-dimensional mesh: a torus without the wraparound links.
    Mesh { sides: Vec<u32>, hosts_per_switch: u32 },
}

/// Which group each global port of a dragonfly-like fabric leads to (Camarero, Vallejo and
/// Beivide, ACM TACO 2014; Hastings et al., 2015). Global ports k = 0..a·h are numbered in
/// switch order within a group; with g = a·h + 1 groups (with fewer, the ports are dealt
/// in blocks of g − 1 the same way):
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Arrangement {
    /// Global port k of group G leads to group G − k − 1 (mod g), at its port a·h − 1 − k.
    #[default]
    Palmtree,
    /// Global port k of group G leads to group G + k + 1 (mod g), at its port a·h − 1 − k.
    Consecutive,
}

/// How a spine-leaf's `oversubscription` makes its ratio.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OversubscriptionBy {
    /// Every uplink stays, slowed so that a leaf's uplink capacity is the ratio of its
    /// host capacity.
    #[default]
    Rate,
    /// Uplinks are removed: a leaf keeps the ratio of its spines × links_per_pair
    /// uplinks, at the switch link rate. ECMP and d-mod-k then spread over fewer links,
    /// as on a fabric cabled so.
    Links,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate: Rate,
    pub latency: Time,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinksConfig {
    /// Host-to-switch links.
    #[serde(default = "default_link")]
    pub host: LinkConfig,
    /// Switch-to-switch links.
    #[serde(default = "default_link")]
    pub switch: LinkConfig,
    /// The link between the endpoints of one node (`topology.gpus_per_node` > 1): each
    /// endpoint's own port, per direction. Left out of the resolved config unless changed.
    #[serde(default = "default_intra_node", skip_serializing_if = "is_default_intra_node")]
    pub intra_node: LinkConfig,
}

fn default_link() -> LinkConfig {
    LinkConfig { rate: Rate(100_000_000_000), latency: Time::from_ns(25) }
}

/// NVLink 4 class: 450 GB/s per GPU and direction (18 links of 25 GB/s), and 300 ns,
/// the order of a GPU's write reaching another through the node's NVSwitch in hardware
/// (software start-up is not modelled, as it is not for network messages).
fn default_intra_node() -> LinkConfig {
    LinkConfig { rate: Rate(3_600_000_000_000), latency: Time::from_ns(300) }
}

fn is_default_intra_node(link: &LinkConfig) -> bool {
    *link == default_intra_node()
}

impl Default for LinksConfig {
    fn default() -> Self {
        LinksConfig { host: default_link(), switch: default_link(), intra_node: default_intra_node() }
    }
}

impl TopologyConfig {
    /// `[topology]`: sizes that make a fabric (whether it can be built is checked when it is).
    pub(crate) fn validate(&self, p: &mut Problems) {
        match self {
            TopologyConfig::SingleSwitch { hosts } => {
                if *hosts < 2 {
                    p.add("topology.hosts", format!("a single switch needs at least 2 hosts, found {hosts}"));
                }
            }
            TopologyConfig::BackToBack {} => {}
            TopologyConfig::SpineLeaf {
                leaves,
                spines,
                hosts_per_leaf,
                links_per_pair,
                oversubscription,
                oversubscription_by,
            } => {
                p.positive("topology.leaves", *leaves as u64);
                p.positive("topology.spines", *spines as u64);
                p.positive("topology.hosts_per_leaf", *hosts_per_leaf as u64);
                p.positive("topology.links_per_pair", *links_per_pair as u64);
                let by_links = *oversubscription_by == Some(OversubscriptionBy::Links);
                match (oversubscription, oversubscription_by) {
                    (Some(text), _) => match parse_oversubscription(text) {
                        Err(message) => p.add("topology.oversubscription", message),
                        Ok(fraction) if by_links && *spines > 0 && *links_per_pair > 0 => {
                            let (spines, uplinks) = (*spines as u64, *spines as u64 * *links_per_pair as u64);
                            if kept_uplinks(spines, uplinks, fraction).is_none() {
                                p.add("topology.oversubscription", uplink_ratios(text, fraction, spines, uplinks));
                            }
                        }
                        Ok(_) => {}
                    },
                    // A key that cannot act is refused, not ignored.
                    (None, Some(_)) => p.add(
                        "topology.oversubscription_by",
                        "has no effect without `oversubscription`: give the ratio, e.g. oversubscription = \"1:0.5\"",
                    ),
                    (None, None) => {}
                }
            }
            TopologyConfig::FatTree { radix, levels } => {
                if *radix < 2 || radix % 2 != 0 {
                    p.add("topology.radix", format!("must be an even number of ports >= 2, found {radix}"));
                }
                if !(2..=3).contains(levels) {
                    p.add("topology.levels", format!("must be 2 or 3 (use xgft for other shapes), found {levels}"));
                }
            }
            TopologyConfig::KAryNTree { k, n } => {
                if *k < 2 {
                    p.add("topology.k", format!("must be at least 2, found {k}"));
                }
                if !(1..=6).contains(n) {
                    p.add("topology.n", format!("must be between 1 and 6, found {n}"));
                }
            }
            TopologyConfig::Xgft { children, parents } => {
                if children.is_empty() || children.len() != parents.len() {
                    p.add(
                        "topology.parents",
                        format!(
                            "children and parents must be non-empty lists of the same length (found {} and {})",
                            children.len(),
                            parents.len()
                        ),
                    );
                }
                for (i, m) in children.iter().enumerate() {
                    p.positive(&format!("topology.children.{i}"), *m as u64);
                }
                for (i, w) in parents.iter().enumerate() {
                    p.positive(&format!("topology.parents.{i}"), *w as u64);
                }
                if parents.first().is_some_and(|w| *w != 1) {
                    p.add("topology.parents.0", "hosts have a single port: parents[0] must be 1");
                }
            }
            TopologyConfig::Dragonfly {
                hosts_per_switch,
                switches_per_group,
                global_links_per_switch,
                groups,
                arrangement: _,
            } => {
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
                p.positive("topology.switches_per_group", *switches_per_group as u64);
                p.positive("topology.global_links_per_switch", *global_links_per_switch as u64);
                let ports = *switches_per_group as u64 * *global_links_per_switch as u64;
                if let (Some(groups), true) = (groups, ports > 0) {
                    global_groups(p, *groups, ports, "switches_per_group · global_links_per_switch");
                }
            }
            TopologyConfig::Megafly {
                groups,
                leaves_per_group,
                spines_per_group,
                hosts_per_leaf,
                global_links_per_spine,
                arrangement: _,
            } => {
                p.positive("topology.leaves_per_group", *leaves_per_group as u64);
                p.positive("topology.spines_per_group", *spines_per_group as u64);
                p.positive("topology.hosts_per_leaf", *hosts_per_leaf as u64);
                p.positive("topology.global_links_per_spine", *global_links_per_spine as u64);
                let ports = *spines_per_group as u64 * *global_links_per_spine as u64;
                if let (Some(groups), true) = (groups, ports > 0) {
                    global_groups(p, *groups, ports, "spines_per_group · global_links_per_spine");
                }
            }
            TopologyConfig::HyperX { sides, hosts_per_switch, links_per_pair } => {
                grid_sides(p, sides);
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
                p.positive("topology.links_per_pair", *links_per_pair as u64);
            }
            TopologyConfig::Torus { sides, hosts_per_switch } | TopologyConfig::Mesh { sides, hosts_per_switch } => {
                grid_sides(p, sides);
                p.positive("topology.hosts_per_switch", *hosts_per_switch as u64);
            }
        }
    }
}

/// Most dimensions of a HyperX, torus or mesh.
const MAX_DIMENSIONS: usize = 6;

/// `topology.groups` of a dragonfly-like fabric with `ports` (> 0) global ports per group.
fn global_groups(p: &mut Problems, groups: u32, ports: u64, product: &str) {
    if groups < 2 {
        p.add("topology.groups", format!("must be at least 2, found {groups}"));
    } else if groups as u64 > ports + 1 {
        p.add("topology.groups", format!("must be at most {product} + 1 = {}, found {groups}", ports + 1));
    } else if groups % 2 == 1 && ports % 2 == 1 {
        p.add(
            "topology.groups",
            format!("{groups} groups of {ports} global ports leave one port unpaired: the product must be even"),
        );
    }
}

/// `topology.sides` of a HyperX, torus or mesh.
fn grid_sides(p: &mut Problems, sides: &[u32]) {
    if sides.is_empty() || sides.len() > MAX_DIMENSIONS {
        p.add("topology.sides", format!("must list 1 to {MAX_DIMENSIONS} dimensions, found {}", sides.len()));
    }
    for (i, side) in sides.iter().enumerate() {
        if *side < 2 {
            p.add(format!("topology.sides.{i}"), format!("must be at least 2, found {side}"));
        }
    }
}

/// "1:0.5" -> 0.5: uplink capacity as a fraction of the leaf's host capacity.
pub fn parse_oversubscription(text: &str) -> std::result::Result<f64, String> {
    let bad = || format!("expected a ratio such as \"1:0.5\" (host capacity : uplink capacity), found \"{text}\"");
    let (down, up) = text.split_once(':').ok_or_else(bad)?;
    let down: f64 = down.trim().parse().map_err(|_| bad())?;
    let up: f64 = up.trim().parse().map_err(|_| bad())?;
    if !(down > 0.0 && up > 0.0 && down.is_finite() && up.is_finite()) {
        return Err(bad());
    }
    Ok(up / down)
}

/// With `oversubscription_by = "links"`: the uplinks a leaf keeps of its `uplinks`
/// (spines × links_per_pair) when its uplink capacity is `fraction` of the full set's,
/// if that is a whole number and leaves every one of the `spines` a link (a spine
/// without one would be a switch cut off from the fabric: fewer spines say that).
pub fn kept_uplinks(spines: u64, uplinks: u64, fraction: f64) -> Option<u64> {
    let kept = uplinks as f64 * fraction;
    let whole = kept.round();
    let exact = (kept - whole).abs() <= 1e-9 * whole.max(1.0);
    (exact && whole >= spines.max(1) as f64 && whole <= uplinks as f64).then_some(whole as u64)
}

/// The one line refusing the ratio `text` (`fraction`), which keeps no whole number of
/// the `uplinks`: the ratios they allow.
fn uplink_ratios(text: &str, fraction: f64, spines: u64, uplinks: u64) -> String {
    let ratio = |k: u64| {
        // "1:0.75" where four decimals say it exactly, "3:1" otherwise.
        if (k * 10_000).is_multiple_of(uplinks) {
            let f = k as f64 / uplinks as f64;
            format!("1:{}", (f * 10_000.0).round() / 10_000.0)
        } else {
            format!("{uplinks}:{k}")
        }
    };
    let allowed = if uplinks - spines < 8 {
        let list: Vec<String> = (spines..=uplinks).map(ratio).collect();
        match list.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => list.join(""),
        }
    } else {
        format!(
            "{uplinks}:k for a whole k from {spines} to {uplinks} (e.g. {}, {})",
            ratio(uplinks / 2),
            ratio(uplinks)
        )
    };
    format!(
        "with oversubscription_by = \"links\" a leaf keeps a whole number of its {uplinks} uplinks (spines x \
         links_per_pair), at least one per spine, so the ratio must be {allowed}; found \"{text}\" ({} uplinks)",
        (uplinks as f64 * fraction * 1000.0).round() / 1000.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uplinks_kept_by_links() {
        // The NCCL test fabric: 1 spine, 4 links per leaf-spine pair.
        let kept = |ratio: &str| kept_uplinks(1, 4, parse_oversubscription(ratio).unwrap());
        assert_eq!((kept("1:1"), kept("1:0.75"), kept("1:0.5"), kept("1:0.25")), (Some(4), Some(3), Some(2), Some(1)));
        assert_eq!((kept("4:3"), kept("1:0.6"), kept("1:1.25"), kept("1:0.1")), (Some(3), None, None, None));
        // 3 uplinks: a third is "3:1", which a decimal cannot say exactly.
        assert_eq!(kept_uplinks(1, 3, parse_oversubscription("3:1").unwrap()), Some(1));
        // Every spine keeps a link.
        assert_eq!(kept_uplinks(4, 8, 0.5), Some(4));
        assert_eq!(kept_uplinks(4, 8, 0.25), None);
        let line = uplink_ratios("1:0.6", 0.6, 1, 4);
        assert_eq!(
            line,
            "with oversubscription_by = \"links\" a leaf keeps a whole number of its 4 uplinks (spines x \
             links_per_pair), at least one per spine, so the ratio must be 1:0.25, 1:0.5, 1:0.75 or 1:1; found \
             \"1:0.6\" (2.4 uplinks)"
        );
        assert!(uplink_ratios("1:0.5", 0.5, 1, 3).contains("3:1, 3:2 or 1:1"));
        assert!(uplink_ratios("1:0.3", 0.3, 2, 64).contains("64:k for a whole k from 2 to 64 (e.g. 1:0.5, 1:1)"));
    }

    #[test]
    fn oversubscription_ratios() {
        assert_eq!(parse_oversubscription("1:0.5").unwrap(), 0.5);
        assert_eq!(parse_oversubscription("4:3").unwrap(), 0.75);
        assert!(parse_oversubscription("half").is_err());
    }
}
