//! n-dimensional torus: switches on a grid of `sides`, each linked to its two neighbours
//! along every dimension, with wraparound. Along a side of 2 the two neighbours are the
//! same switch, joined by one link (one port), not two.
//!
//! Switch s has coordinates c_i = s / (side_0 · … · side_{i−1}) mod side_i and hosts
//! s·p + j. Ports: `0..p` its hosts, then for each dimension i in order, two ports (to
//! c_i + 1, then to c_i − 1, modulo side_i), or one for a side of 2.

use super::grid::{grid_fabric, Grid};
use super::LinkClasses;
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct Torus(Grid);

impl Torus {
    pub fn new(sides: &[u32], hosts_per_switch: u32, links: LinkClasses) -> Result<Torus> {
        let name = format!("torus ({}, {hosts_per_switch} hosts per switch)", sides_text(sides));
        Ok(Torus(Grid::new(&name, sides, hosts_per_switch, true, links)?))
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

    /// E.g. "torus 4x4x4, 2 hosts per switch: 128 hosts, 64 switches".
    pub fn describe(&self) -> String {
        self.0.describe("torus")
    }
}

/// "4x4x4" for error messages, before the sides are checked.
pub(super) fn sides_text(sides: &[u32]) -> String {
    sides.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

grid_fabric!(Torus);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::topology::analysis::*;
    use crate::topology::{Endpoint, Link, Minimal, Topology, MAX_MINIMAL};
    use crate::units::{Rate, Time};

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(200_000_000_000), latency: Time::from_ns(50) },
        }
    }

    #[test]
    fn torus_4x4x4() {
        let t = Torus::new(&[4, 4, 4], 2, links()).unwrap();
        assert_eq!(t.describe(), "torus 4x4x4, 2 hosts per switch: 128 hosts, 64 switches");
        assert_eq!((t.num_switches(), t.num_hosts()), (64, 128));
        assert_eq!(port_degrees(&t), vec![8; 64]);
        assert_eq!(diameter(&t), 6);
        assert_eq!(t.diameter_hint(), 6);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        minimal_ok(&t).unwrap();
        // Switch 0 + 3·4 = (0, 3, 0): + in dimension 1 wraps round to (0, 0, 0).
        assert_eq!(t.peer(12, 4), Endpoint::Switch { switch: 0, port: 5 });
        assert_eq!(t.peer(12, 5), Endpoint::Switch { switch: 8, port: 4 });
        assert_eq!(t.peer(0, 3), Endpoint::Switch { switch: 3, port: 2 });
        assert_eq!(t.link(0, 1), links().host);
        assert_eq!(t.link(0, 2), links().switch);
        // Halfway round a ring of 4 both directions are minimal.
        let mut out = [0; MAX_MINIMAL];
        assert_eq!(t.minimal_ports(0, 2 + 2 * 16, &mut out), 4);
        assert_eq!(out[..4], [2, 3, 6, 7]);
        assert_eq!(t.minimal_ports(0, 3 + 4, &mut out), 2);
        assert_eq!(out[..2], [3, 4]);
    }

    #[test]
    fn sides_of_two_have_one_link() {
        let t = Torus::new(&[2, 3, 4], 1, links()).unwrap();
        // 1 host, 1 port along the side of 2, 2 along each other dimension.
        assert_eq!(port_degrees(&t), vec![6; 24]);
        assert_eq!(t.peer(0, 1), Endpoint::Switch { switch: 1, port: 1 });
        assert_eq!(t.peer(1, 1), Endpoint::Switch { switch: 0, port: 1 });
        assert_eq!(diameter(&t), 1 + 1 + 2);
        check_wiring(&t).unwrap();
        minimal_ok(&t).unwrap();
        let ring = Torus::new(&[2], 3, links()).unwrap();
        assert_eq!((ring.num_switches(), ring.num_hosts(), ring.num_ports(0)), (2, 6, 4));
        check_wiring(&ring).unwrap();
        minimal_ok(&ring).unwrap();
    }

    #[test]
    fn minimal_ports_are_exact() {
        for sides in [&[5][..], &[6], &[3, 3], &[4, 5], &[2, 2, 2], &[3, 4, 2], &[2, 3, 2, 3]] {
            let t = Torus::new(sides, 1, links()).unwrap();
            check_wiring(&t).unwrap();
            minimal_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<Torus>| match r {
            Err(Error::Topology(message)) => message,
            other => panic!("expected a topology error, got {other:?}"),
        };
        assert!(err(Torus::new(&[], 1, links())).contains("at least one dimension"));
        assert!(err(Torus::new(&[4, 1], 1, links())).contains("at least 2, found 1 (dimension 1)"));
        assert!(err(Torus::new(&[4, 4], 0, links())).contains("must be positive"));
        assert!(err(Torus::new(&[65_536, 65_536], 1, links())).contains("more than 2^31 switches"));
        assert!(err(Torus::new(&[u32::MAX; 3], 1, links())).contains("more than 2^31 switches"));
        assert!(err(Torus::new(&[4, 4], 65_532, links())).contains("more than 65535"));
        assert!(err(Torus::new(&[1024, 1024], 4096, links())).contains("more than 2^31 hosts"));
    }
}
