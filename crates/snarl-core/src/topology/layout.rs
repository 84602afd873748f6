//! Where a drawing of a fabric places its switches: by level on trees, by group on
//! hierarchical and flat fabrics. Reports that draw the fabric (the congestion trees'
//! `topology` table) read it, so that no drawing recomputes the wiring.

use super::{AnyTopology, UpDown};

/// Where switch `switch` of `topo` is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// 1 for the leaves of a tree (fat-tree, k-ary n-tree, spine-leaf, single switch),
    /// growing toward its roots; on a megafly 1 for leaves and 2 for spines; on a
    /// dragonfly 1; on a HyperX 1 + the switch's first coordinate; 0 on tori and meshes.
    pub level: u32,
    /// The switch's group: a dragonfly's or megafly's group, a HyperX's line of switches
    /// that differ only in their first coordinate (fully connected along it); `None` on
    /// trees, tori and meshes.
    pub group: Option<u32>,
}

/// Where switch `switch` of `topo` is drawn.
pub fn place(topo: &AnyTopology, switch: usize) -> Place {
    match topo {
        AnyTopology::SingleSwitch(_)
        | AnyTopology::BackToBack(_)
        | AnyTopology::SpineLeaf(_)
        | AnyTopology::Xgft(_) => Place { level: topo.level(switch) as u32, group: None },
        AnyTopology::Dragonfly(t) => Place { level: 1, group: Some(t.group(switch) as u32) },
        AnyTopology::Megafly(t) => {
            let (group, position) = t.locate(switch);
            Place { level: if position < t.leaves_per_group() { 1 } else { 2 }, group: Some(group as u32) }
        }
        AnyTopology::HyperX(t) => {
            let sides = t.sides();
            // The other coordinates, mixed radix: the line of switches along the first.
            let (mut group, mut scale) = (0, 1);
            for (dim, &side) in sides.iter().enumerate().skip(1) {
                group += t.coord(switch, dim) * scale;
                scale *= side;
            }
            Place { level: 1 + t.coord(switch, 0) as u32, group: Some(group as u32) }
        }
        AnyTopology::Torus(_) | AnyTopology::Mesh(_) => Place { level: 0, group: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinksConfig;
    use crate::topology::{build, Topology, TopologyConfig};

    fn fabric(toml: &str) -> AnyTopology {
        let shape: TopologyConfig = toml::from_str(toml).unwrap();
        build(&shape, &LinksConfig::default()).unwrap()
    }

    #[test]
    fn trees_place_by_level_and_hierarchies_by_group() {
        let tree = fabric("type = \"fat_tree\"\nradix = 4\nlevels = 2");
        let levels: Vec<u32> = (0..tree.num_switches()).map(|s| place(&tree, s).level).collect();
        assert_eq!(levels, vec![1, 1, 1, 1, 2, 2]);
        assert!((0..tree.num_switches()).all(|s| place(&tree, s).group.is_none()));

        let dragonfly = fabric(
            "type = \"dragonfly\"\nhosts_per_switch = 2\nswitches_per_group = 4\nglobal_links_per_switch = 2\ngroups = 9",
        );
        let groups: Vec<Option<u32>> = (0..8).map(|s| place(&dragonfly, s).group).collect();
        assert_eq!(groups, vec![Some(0), Some(0), Some(0), Some(0), Some(1), Some(1), Some(1), Some(1)]);

        let hyperx = fabric("type = \"hyperx\"\nsides = [3, 2]\nhosts_per_switch = 1");
        let places: Vec<(u32, Option<u32>)> = (0..6).map(|s| place(&hyperx, s)).map(|p| (p.level, p.group)).collect();
        // Switches along the first coordinate share a group.
        let mut groups: Vec<Option<u32>> = places.iter().map(|p| p.1).collect();
        groups.sort();
        groups.dedup();
        assert_eq!(groups.len(), 2);
        assert!(places.iter().all(|p| (1..=3).contains(&p.0)));
    }
}
