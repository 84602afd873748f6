//! Switches on an n-dimensional grid, shared by HyperX, torus and mesh: switch
//! s = Σ c_i · side_0 · … · side_{i−1} (dimension 0 varies fastest) for coordinates
//! c_i < side_i, and its p hosts are s·p + j, j < p.
//!
//! [`Grid`] is the torus and the mesh: after the host ports `0..p`, dimension i has two
//! ports, `p + first_i` to the neighbour at c_i + 1 and `p + first_i + 1` to the one at
//! c_i − 1 (wrapping around in a torus, unconnected at the borders of a mesh), or a single
//! port `p + first_i` to the other switch when side_i = 2 (the two neighbours coincide,
//! and one link joins them).

use super::host_ports;
use super::limits::{check_nodes, check_ports};
use super::node_divisor::NodeDivisor;
use super::{Endpoint, Link, LinkClasses, Minimal, Topology, MAX_MINIMAL};
use crate::error::{Error, Result};

/// Mixed-radix coordinates of the switches.
#[derive(Clone, Debug)]
pub(super) struct Coords {
    sides: Vec<usize>,
    strides: Vec<usize>,
    switches: usize,
}

impl Coords {
    pub(super) fn new(fabric: &str, sides: &[u32]) -> Result<Coords> {
        if sides.is_empty() {
            return Err(Error::Topology(format!("{fabric}: needs at least one dimension")));
        }
        if let Some((i, side)) = sides.iter().enumerate().find(|(_, &side)| side < 2) {
            return Err(Error::Topology(format!(
                "{fabric}: every side must be at least 2, found {side} (dimension {i})"
            )));
        }
        let product = sides.iter().try_fold(1u64, |acc, &side| acc.checked_mul(side as u64).filter(|&n| n < 1 << 32));
        let switches = check_nodes(fabric, "switches", product)?;
        let mut strides = Vec::with_capacity(sides.len());
        let mut stride = 1;
        for &side in sides {
            strides.push(stride);
            stride *= side as usize;
        }
        Ok(Coords { sides: sides.iter().map(|&s| s as usize).collect(), strides, switches })
    }

    pub(super) fn dims(&self) -> usize {
        self.sides.len()
    }

    pub(super) fn sides(&self) -> &[usize] {
        &self.sides
    }

    pub(super) fn switches(&self) -> usize {
        self.switches
    }

    #[inline]
    pub(super) fn stride(&self, dim: usize) -> usize {
        self.strides[dim]
    }

    /// Coordinate `dim` of `switch`.
    #[inline]
    pub(super) fn coord(&self, switch: usize, dim: usize) -> usize {
        switch / self.strides[dim] % self.sides[dim]
    }

    /// E.g. "6x6x6".
    pub(super) fn text(&self) -> String {
        self.sides.iter().map(usize::to_string).collect::<Vec<_>>().join("x")
    }
}

/// A torus (`wrap`) or mesh.
#[derive(Clone, Debug)]
pub(super) struct Grid {
    coords: Coords,
    hosts_per_switch: usize,
    per_switch: NodeDivisor,
    wrap: bool,
    /// First network port of each dimension, counted after the host ports, and the total.
    first: Vec<usize>,
    links: LinkClasses,
}

impl Grid {
    pub(super) fn new(
        fabric: &str,
        sides: &[u32],
        hosts_per_switch: u32,
        wrap: bool,
        links: LinkClasses,
    ) -> Result<Grid> {
        if hosts_per_switch == 0 {
            return Err(Error::Topology(format!("{fabric}: hosts per switch must be positive")));
        }
        let coords = Coords::new(fabric, sides)?;
        let p = hosts_per_switch as usize;
        let mut first = vec![0];
        let mut candidates = 0;
        for &side in coords.sides() {
            let width = if side == 2 { 1 } else { 2 };
            first.push(first.last().unwrap() + width);
            // Both directions are minimal halfway round an even ring.
            candidates += if wrap && side % 2 == 0 && side > 2 { 2 } else { 1 };
        }
        check_ports(fabric, "switch", (p + first.last().unwrap()) as u64)?;
        check_nodes(fabric, "hosts", (coords.switches() as u64).checked_mul(p as u64))?;
        if candidates > MAX_MINIMAL {
            return Err(Error::Topology(format!(
                "{fabric}: up to {candidates} ports would start minimal paths, more than {MAX_MINIMAL}"
            )));
        }
        Ok(Grid { coords, hosts_per_switch: p, per_switch: NodeDivisor::new(p), wrap, first, links })
    }

    pub(super) fn coords(&self) -> &Coords {
        &self.coords
    }

    pub(super) fn hosts_per_switch(&self) -> usize {
        self.hosts_per_switch
    }

    /// "torus 4x4, 2 hosts per switch: 32 hosts, 16 switches".
    pub(super) fn describe(&self, kind: &str) -> String {
        let p = self.hosts_per_switch;
        format!(
            "{kind} {}, {p} host{} per switch: {} hosts, {} switches",
            self.coords.text(),
            if p == 1 { "" } else { "s" },
            self.num_hosts(),
            self.num_switches()
        )
    }
}

impl Topology for Grid {
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
        let (side, stride, c) = (self.coords.sides()[dim], self.coords.stride(dim), self.coords.coord(switch, dim));
        let base = p + self.first[dim];
        let at = |c2: usize, port: usize| Endpoint::Switch {
            switch: (switch - c * stride + c2 * stride) as u32,
            port: port as u16,
        };
        if side == 2 {
            at(1 - c, base)
        } else if q == self.first[dim] {
            match c + 1 {
                up if up < side => at(up, base + 1),
                _ if self.wrap => at(0, base + 1),
                _ => Endpoint::Unconnected,
            }
        } else {
            match c {
                0 if self.wrap => at(side - 1, base),
                0 => Endpoint::Unconnected,
                _ => at(c - 1, base),
            }
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

impl Minimal for Grid {
    #[inline]
    fn host_switch(&self, host: usize) -> (usize, u16) {
        host_ports::host_switch(self.per_switch, host)
    }

    #[inline]
    fn distance(&self, from: usize, to: usize) -> u32 {
        let mut d = 0;
        for (dim, &side) in self.coords.sides().iter().enumerate() {
            let (a, b) = (self.coords.coord(from, dim), self.coords.coord(to, dim));
            d += if self.wrap {
                let forward = (b + side - a) % side;
                forward.min(side - forward)
            } else {
                a.abs_diff(b)
            };
        }
        d as u32
    }

    /// One port per dimension in which the coordinates differ, in the shorter direction;
    /// both ports when the destination is halfway round an even ring.
    #[inline]
    fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; MAX_MINIMAL]) -> usize {
        let mut n = 0;
        for (dim, &side) in self.coords.sides().iter().enumerate() {
            let (a, b) = (self.coords.coord(switch, dim), self.coords.coord(to, dim));
            if a == b {
                continue;
            }
            let base = (self.hosts_per_switch + self.first[dim]) as u16;
            if side == 2 {
                out[n] = base;
                n += 1;
            } else if self.wrap {
                let forward = (b + side - a) % side;
                if 2 * forward <= side {
                    out[n] = base;
                    n += 1;
                }
                if 2 * forward >= side {
                    out[n] = base + 1;
                    n += 1;
                }
            } else {
                out[n] = if b > a { base } else { base + 1 };
                n += 1;
            }
        }
        n
    }

    fn diameter_hint(&self) -> u32 {
        let sides = self.coords.sides().iter();
        sides.map(|&side| if self.wrap { side / 2 } else { side - 1 }).sum::<usize>() as u32
    }
}

/// Implements [`Topology`] and [`Minimal`] for a newtype around [`Grid`].
macro_rules! grid_fabric {
    ($t:ident) => {
        impl $crate::topology::Topology for $t {
            fn num_switches(&self) -> usize {
                self.0.num_switches()
            }
            fn num_hosts(&self) -> usize {
                self.0.num_hosts()
            }
            fn num_ports(&self, switch: usize) -> usize {
                self.0.num_ports(switch)
            }
            #[inline]
            fn peer(&self, switch: usize, port: usize) -> $crate::topology::Endpoint {
                self.0.peer(switch, port)
            }
            fn attachment(&self, host: usize) -> $crate::topology::Endpoint {
                self.0.attachment(host)
            }
            #[inline]
            fn link(&self, switch: usize, port: usize) -> $crate::topology::Link {
                self.0.link(switch, port)
            }
            fn host_link(&self, host: usize) -> $crate::topology::Link {
                self.0.host_link(host)
            }
        }

        impl $crate::topology::Minimal for $t {
            #[inline]
            fn host_switch(&self, host: usize) -> (usize, u16) {
                self.0.host_switch(host)
            }
            #[inline]
            fn distance(&self, from: usize, to: usize) -> u32 {
                self.0.distance(from, to)
            }
            #[inline]
            fn minimal_ports(&self, switch: usize, to: usize, out: &mut [u16; $crate::topology::MAX_MINIMAL]) -> usize {
                self.0.minimal_ports(switch, to, out)
            }
            fn diameter_hint(&self) -> u32 {
                self.0.diameter_hint()
            }
        }
    };
}
pub(super) use grid_fabric;
