//! n-dimensional mesh: a torus without wraparound links. Every switch has the same ports
//! as in the torus of the same sides (`0..p` its hosts, then for each dimension i the
//! port to c_i + 1 and the port to c_i − 1, or a single port along a side of 2); the ports
//! that would leave the grid at its borders are unconnected.

use super::grid::{grid_fabric, Grid};
use super::torus::sides_text;
use super::LinkClasses;
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct Mesh(Grid);

impl Mesh {
    pub fn new(sides: &[u32], hosts_per_switch: u32, links: LinkClasses) -> Result<Mesh> {
        let name = format!("mesh ({}, {hosts_per_switch} hosts per switch)", sides_text(sides));
        Ok(Mesh(Grid::new(&name, sides, hosts_per_switch, false, links)?))
    }

    /// Switches along each dimension.
    pub fn sides(&self) -> &[usize] {
        self.0.coords().sides()
    }

    pub fn hosts_per_switch(&self) -> usize {
        self.0.hosts_per_switch()
    }

    /// Coordinate `dim` of `switch`.
    pub fn coord(&self, switch: usize, dim: usize) -> usize {
        self.0.coords().coord(switch, dim)
    }

    /// E.g. "mesh 4x4, 1 host per switch: 16 hosts, 16 switches".
    pub fn describe(&self) -> String {
        self.0.describe("mesh")
    }
}

grid_fabric!(Mesh);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::topology::analysis::*;
    use crate::topology::{Endpoint, Link, Minimal, Topology, MAX_MINIMAL};
    use crate::units::{Rate, Time};

    fn links() -> LinkClasses {
        let link = Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) };
        LinkClasses { host: link, switch: link }
    }

    #[test]
    fn mesh_4x4() {
        let t = Mesh::new(&[4, 4], 1, links()).unwrap();
        assert_eq!(t.describe(), "mesh 4x4, 1 host per switch: 16 hosts, 16 switches");
        assert_eq!((t.num_switches(), t.num_hosts(), t.num_ports(0)), (16, 16, 5));
        // Corners have 2 switch links, border switches 3, inner switches 4.
        let degrees = port_degrees(&t);
        assert_eq!(degrees[0], 3);
        assert_eq!(degrees[1], 4);
        assert_eq!(degrees[5], 5);
        assert_eq!(degrees.iter().sum::<usize>(), 16 + 2 * 24);
        assert_eq!(t.peer(0, 2), Endpoint::Unconnected);
        assert_eq!(t.peer(3, 1), Endpoint::Unconnected);
        assert_eq!(t.peer(0, 1), Endpoint::Switch { switch: 1, port: 2 });
        assert_eq!(t.peer(5, 3), Endpoint::Switch { switch: 9, port: 4 });
        assert_eq!(diameter(&t), 6);
        assert_eq!(t.diameter_hint(), 6);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        minimal_ok(&t).unwrap();
        let mut out = [0; MAX_MINIMAL];
        assert_eq!((t.distance(15, 0), t.minimal_ports(15, 0, &mut out)), (6, 2));
        assert_eq!(out[..2], [2, 4]);
    }

    #[test]
    fn minimal_ports_are_exact() {
        for sides in [&[5][..], &[2], &[3, 3], &[2, 4], &[2, 2, 2], &[3, 2, 4], &[2, 3, 2, 3]] {
            let t = Mesh::new(sides, 2, links()).unwrap();
            check_wiring(&t).unwrap();
            assert!(all_hosts_reachable(&t));
            minimal_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
        }
        // Sides of 2 have one, always connected, port.
        let t = Mesh::new(&[2, 3], 1, links()).unwrap();
        assert_eq!(port_degrees(&t), vec![3, 3, 4, 4, 3, 3]);
        assert_eq!(diameter(&t), 3);
    }

    #[test]
    fn bad_sizes_are_errors() {
        for r in [Mesh::new(&[], 1, links()), Mesh::new(&[3, 0], 1, links()), Mesh::new(&[3, 3], 0, links())] {
            let Err(Error::Topology(message)) = r else { panic!("expected a topology error") };
            assert!(message.starts_with("mesh ("), "{message}");
        }
    }
}
