//! The fabric as a table, for drawings of it (`snarl plot tree`): one row per wired port
//! of every switch, with where the switch is drawn (`topology::layout`) and what the port
//! leads to, so that no drawing recomputes the wiring.

use crate::report::{Column, ColumnData, Table};
use crate::topology::layout::place;
use crate::topology::{AnyTopology, Endpoint, Topology};

/// The `topology` table of `topo`: `switch`, `port`, `level`, `group` (fabrics with
/// groups only), `peer_kind` ("switch" or "host"), `peer` (the switch or host at the far
/// end), `peer_port` (its port, for a switch; 0 for a host) and `host_group` (the traffic
/// group of a host at the far end, by `host_groups` and `group_names`; "" for a switch).
pub fn topology_table(topo: &AnyTopology, host_groups: &[u16], group_names: &[String]) -> Table {
    let (mut switch, mut port, mut level, mut group) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut kind, mut peer, mut peer_port, mut host_group) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut grouped = false;
    for s in 0..topo.num_switches() {
        let at = place(topo, s);
        grouped |= at.group.is_some();
        for p in 0..topo.num_ports(s) {
            let (k, far, far_port, hg) = match topo.peer(s, p) {
                Endpoint::Switch { switch, port } => ("switch", switch as u64, port as u64, String::new()),
                Endpoint::Host(h) => {
                    let name = host_groups.get(h as usize).and_then(|&g| group_names.get(g as usize));
                    ("host", h as u64, 0, name.cloned().unwrap_or_default())
                }
                Endpoint::Unconnected => continue,
            };
            switch.push(s as u64);
            port.push(p as u64);
            level.push(at.level as u64);
            group.push(at.group.unwrap_or(0) as u64);
            kind.push(k.to_string());
            peer.push(far);
            peer_port.push(far_port);
            host_group.push(hg);
        }
    }
    let col = |name: &str, data| Column { name: name.to_string(), data };
    let mut columns = vec![col("switch", ColumnData::U64(switch)), col("port", ColumnData::U64(port))];
    columns.push(col("level", ColumnData::U64(level)));
    if grouped {
        columns.push(col("group", ColumnData::U64(group)));
    }
    columns.extend([
        col("peer_kind", ColumnData::Str(kind)),
        col("peer", ColumnData::U64(peer)),
        col("peer_port", ColumnData::U64(peer_port)),
        col("host_group", ColumnData::Str(host_group)),
    ]);
    Table { columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinksConfig;
    use crate::topology::{build, TopologyConfig};

    #[test]
    fn every_wired_port_is_a_row_with_its_far_end() {
        let shape: TopologyConfig = toml::from_str("type = \"fat_tree\"\nradix = 4\nlevels = 2").unwrap();
        let topo = build(&shape, &LinksConfig::default()).unwrap();
        let groups = vec![0u16, 1, 1, 1, 0, 0, 0, 0];
        let t = topology_table(&topo, &groups, &["hot".to_string(), "rest".to_string()]);
        // 4 leaves of 2 hosts and 2 uplinks, 2 spines of 4 downlinks.
        assert_eq!(t.rows(), 4 * 4 + 2 * 4);
        assert!(t.column("group").is_none(), "a fat-tree has levels, not groups");
        let ColumnData::Str(kinds) = t.column("peer_kind").unwrap() else { panic!() };
        assert_eq!(kinds.iter().filter(|k| *k == "host").count(), 8);
        let ColumnData::Str(names) = t.column("host_group").unwrap() else { panic!() };
        assert_eq!(names[0], "hot");
        assert_eq!(names[1], "rest");
    }
}
