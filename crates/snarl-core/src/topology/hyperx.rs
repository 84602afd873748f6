//! HyperX (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009), of which the flattened
//! butterfly (Kim, Dally and Abts, 2007) is the case of equal sides: switches on an
//! n-dimensional grid, every dimension fully connected, with T parallel links (trunking)
//! between two switches that differ in exactly one coordinate. The distance between two
//! switches is the number of coordinates in which they differ.
//!
//! Switch s has coordinates c_i = s / (side_0 · … · side_{i−1}) mod side_i and hosts
//! s·p + j. Ports: `0..p` its hosts; then dimension after dimension, (side_i − 1)·T ports:
//! `p + first_i + x·T + t` is parallel link t to the switch whose coordinate i is x if
//! x < c_i, x + 1 otherwise (every other coordinate, in order), with first_i the ports of
//! the earlier dimensions.

use super::grid::Coords;
use super::host_ports;
use super::limits::{check_nodes, check_ports};
use super::node_divisor::NodeDivisor;
use super::torus::sides_text;
use super::{Endpoint, Link, LinkClasses, Minimal, Topology, MAX_MINIMAL};
use crate::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct HyperX {
    coords: Coords,
    hosts_per_switch: usize,
    per_switch: NodeDivisor,
    /// T, parallel links per pair of switches.
    trunk: usize,
    /// First network port of each dimension, counted after the host ports, and the total.
    first: Vec<usize>,
    /// p + first_i: the port of the first link of dimension i.
    dim_ports: Vec<u16>,
    /// The coordinates of every switch, `dims` per switch: routing compares two switches'
    /// on every packet, and reading them costs less than the two divisions each takes.
    /// Coordinates fit 16 bits: a switch has a port per other coordinate of each side.
    digits: Vec<u16>,
    links: LinkClasses,
}

impl HyperX {
    pub fn new(sides: &[u32], hosts_per_switch: u32, links_per_pair: u32, links: LinkClasses) -> Result<HyperX> {
        let name = format!(
            "HyperX ({}, {hosts_per_switch} hosts per switch, {links_per_pair} links per pair)",
            sides_text(sides)
        );
        if hosts_per_switch == 0 || links_per_pair == 0 {
            return Err(Error::Topology(format!("{name}: hosts per switch and links per pair must be positive")));
        }
        let coords = Coords::new(&name, sides)?;
        let (p, trunk) = (hosts_per_switch as u64, links_per_pair as u64);
        let network: u64 = sides.iter().map(|&side| (side as u64 - 1) * trunk).sum();
        check_ports(&name, "switch", p + network)?;
        check_nodes(&name, "hosts", (coords.switches() as u64).checked_mul(p))?;
        let candidates = coords.dims() as u64 * trunk;
        if candidates > MAX_MINIMAL as u64 {
            return Err(Error::Topology(format!(
                "{name}: up to {candidates} ports would start minimal paths (dimensions × links per pair), \
                 more than {MAX_MINIMAL}"
            )));
        }
        let (p, trunk) = (p as usize, trunk as usize);
        let mut first = vec![0];
        for &side in coords.sides() {
            first.push(first.last().unwrap() + (side - 1) * trunk);
        }
        let dim_ports = first[..coords.dims()].iter().map(|&f| (p + f) as u16).collect();
        let digits = (0..coords.switches())
            .flat_map(|s| (0..coords.dims()).map(move |dim| (s, dim)))
            .map(|(s, dim)| coords.coord(s, dim) as u16)
            .collect();
        Ok(HyperX {
            coords,
            hosts_per_switch: p,
            per_switch: NodeDivisor::new(p),
            trunk,
            first,
            dim_ports,
            digits,
            links,
        })
    }

    /// The coordinates of `switch`.
    #[inline]
    fn digits(&self, switch: usize) -> &[u16] {
        let dims = self.dim_ports.len();
        &self.digits[switch * dims..][..dims]
    }

    /// Switches along each dimension.
    pub fn sides(&self) -> &[usize] {
        self.coords.sides()
    }

    pub fn hosts_per_switch(&self) -> usize {
        self.hosts_per_switch
    }

    pub fn links_per_pair(&self) -> usize {
        self.trunk
    }

    /// Coordinate `dim` of `switch`.
    pub fn coord(&self, switch: usize, dim: usize) -> usize {
        self.coords.coord(switch, dim)
    }

    /// E.g. "HyperX 6x6x6, 6 hosts per switch, 1 link per pair: 1296 hosts, 216 switches".
    pub fn describe(&self) -> String {
        format!(
            "HyperX {}, {} hosts per switch, {} link{} per pair: {} hosts, {} switches",
            self.coords.text(),
            self.hosts_per_switch,
            self.trunk,
            if self.trunk == 1 { "" } else { "s" },
            self.num_hosts(),
            self.num_switches()
        )
    }
}

impl Topology for HyperX {
    fn num_switches(&self) -> usize {
        self.coords.switches()
    }

    fn num_hosts(&self) -> usize {
        self.coords.switches() * self.hosts_per_switch
    }

    fn num_ports(&self, _switch: usize) -> usize {
        self.hosts_per_switch + self.first[self.coords.dims()]
    }

    fn peer(&self, switch: usize, port: usize) -> Endpoint {
        let p = self.hosts_per_switch;
        if port < p {
            return Endpoint::Host((switch * p + port) as u32);
        }
        let q = port - p;
        let dim = self.first.partition_point(|&f| f <= q) - 1;
        debug_assert!(dim < self.coords.dims(), "port {port} out of range on switch {switch}");
        let (x, t) = ((q - self.first[dim]) / self.trunk, (q - self.first[dim]) % self.trunk);
        let c = self.coords.coord(switch, dim);
        let far = if x < c { x } else { x + 1 };
        let back = if c < far { c } else { c - 1 };
        let stride = self.coords.stride(dim);
        Endpoint::Switch {
            switch: (switch - c * stride + far * stride) as u32,
            port: (p + self.first[dim] + back * self.trunk + t) as u16,
        }
    }

    fn attachment(&self, host: usize) -> Endpoint {
        host_ports::attachment(self.per_switch, host)
    }

    fn link(&self, _switch: usize, port: usize) -> Link {
        host_ports::link(self.hosts_per_switch, &self.links, port)
    }

    fn host_link(&self, _host: usize) -> Link {
        self.links.host
    }
}

impl Minimal for HyperX {
    #[inline]
    fn host_switch(&self, host: usize) -> (usize, u16) {
        host_ports::host_switch(self.per_switch, host)
    }

    #[inline]
    fn distance(&self, from: usize, to: usize) -> u32 {
        let (a, b) = (self.digits(from), self.digits(to));
        a.iter().zip(b).map(|(c, target)| u32::from(c != target)).sum()
    }

    #[inline]
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize {
        self.minimal_route(switch, to, out).1
    }

    /// Every parallel link towards `to`'s coordinate, in each dimension where they differ
    /// (as many dimensions as hops).
    #[inline]
    fn minimal_route(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> (u32, usize) {
        let (from, to) = (self.digits(switch), self.digits(to));
        // The first link of each dimension, then (rarely) each spread over its T links:
        // a loop over the T links per dimension costs more than the rest when T = 1.
        let mut hops = 0;
        for ((&c, &target), &dim_port) in from.iter().zip(to).zip(&self.dim_ports) {
            if c != target {
                let x = if target < c { target } else { target - 1 };
                out[hops] = dim_port + x * self.trunk as u16;
                hops += 1;
            }
        }
        if self.trunk > 1 {
            spread_trunks(out, hops, self.trunk);
        }
        (hops as u32, hops * self.trunk)
    }

    fn diameter_hint(&self) -> u32 {
        self.coords.dims() as u32
    }
}

/// Replaces the first `hops` ports of `out`, each the first of T parallel links, by all
/// their links in order. Apart, so that the common T = 1 pays nothing for it.
#[inline(never)]
fn spread_trunks(out: &mut [u16; MAX_MINIMAL], hops: usize, trunk: usize) {
    // Backwards, so that no first link is overwritten before it is spread.
    for i in (0..hops).rev() {
        let first = out[i];
        for t in 0..trunk {
            out[i * trunk + t] = first + t as u16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::analysis::*;
    use crate::units::{Rate, Time};

    fn links() -> LinkClasses {
        LinkClasses {
            host: Link { rate: Rate(100_000_000_000), latency: Time::from_ns(25) },
            switch: Link { rate: Rate(200_000_000_000), latency: Time::from_ns(50) },
        }
    }

    #[test]
    fn the_papers_flattened_butterfly() {
        let t = HyperX::new(&[6, 6, 6], 6, 1, links()).unwrap();
        assert_eq!(t.describe(), "HyperX 6x6x6, 6 hosts per switch, 1 link per pair: 1296 hosts, 216 switches");
        assert_eq!((t.num_switches(), t.num_hosts()), (216, 1296));
        assert!((0..216).all(|s| t.num_ports(s) == 21));
        assert_eq!(port_degrees(&t), vec![21; 216]);
        assert_eq!(diameter(&t), 3);
        assert_eq!(t.diameter_hint(), 3);
        assert!(all_hosts_reachable(&t));
        check_wiring(&t).unwrap();
        minimal_ok(&t).unwrap();
        // Switch 1 + 6·2 + 36·3 = (1, 2, 3); port 6 + 5 + 0 is (1, 0, 3), port 6 + 5 + 2 is
        // (1, 3, 3), which sees it at its port 6 + 5 + 2 too.
        assert_eq!(t.peer(121, 11), Endpoint::Switch { switch: 109, port: 12 });
        assert_eq!(t.peer(121, 13), Endpoint::Switch { switch: 127, port: 13 });
        assert_eq!(t.link(0, 5), links().host);
        assert_eq!(t.link(0, 6), links().switch);
    }

    #[test]
    fn minimal_ports_are_one_per_differing_dimension_and_link() {
        for (sides, trunk) in [(&[3, 4][..], 2), (&[2, 3, 2][..], 1), (&[4][..], 3), (&[3, 3, 3][..], 2)] {
            let t = HyperX::new(sides, 2, trunk, links()).unwrap();
            check_wiring(&t).unwrap();
            assert!(all_hosts_reachable(&t));
            minimal_ok(&t).unwrap_or_else(|e| panic!("{}: {e}", t.describe()));
            assert_eq!(
                port_degrees(&t)[0],
                2 + sides.iter().map(|&s| (s as usize - 1) * trunk as usize).sum::<usize>()
            );
            let mut out = [0; MAX_MINIMAL];
            for from in 0..t.num_switches() {
                for to in (0..t.num_switches()).filter(|&to| to != from) {
                    let differ = (0..sides.len()).filter(|&d| t.coord(from, d) != t.coord(to, d)).count();
                    assert_eq!(t.distance(from, to) as usize, differ);
                    assert_eq!(t.minimal_ports(from, to, &mut out), differ * trunk as usize);
                }
            }
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        let err = |r: Result<HyperX>| match r {
            Err(Error::Topology(message)) => message,
            other => panic!("expected a topology error, got {other:?}"),
        };
        assert!(err(HyperX::new(&[6, 6], 0, 1, links())).contains("must be positive"));
        assert!(err(HyperX::new(&[6, 6], 1, 0, links())).contains("must be positive"));
        assert!(err(HyperX::new(&[], 1, 1, links())).contains("at least one dimension"));
        assert!(err(HyperX::new(&[6, 1], 1, 1, links())).contains("at least 2, found 1 (dimension 1)"));
        assert!(err(HyperX::new(&[40_000, 40_000], 1, 1, links())).contains("more than 65535"));
        assert!(err(HyperX::new(&[4, 4, 4], 1, 11, links())).contains("33 ports would start minimal paths"));
        assert!(err(HyperX::new(&[2048, 2048, 2048], 1, 1, links())).contains("more than 2^31 switches"));
    }
}
