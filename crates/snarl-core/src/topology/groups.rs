//! Switch distances in fabrics of identical groups whose global links do not change when
//! the groups are rotated (dragonflies and megaflies with the arrangements of
//! [`GlobalLinks`](super::arrangement::GlobalLinks)): the distance from the switch at
//! position x of group G to the switch at position y of group G + Δ depends on (x, Δ, y)
//! alone. One table of g·A² bytes (A switches per group) holds every distance; it is
//! filled at construction by one breadth-first search per position of group 0, and its
//! size is the only memory that grows faster than the number of groups (0.5 MB for the
//! dragonfly of 262,656 hosts).
//!
//! Distances are exact (breadth-first). Megafly routes by them; the dragonfly routes
//! hierarchically instead (see `dragonfly.rs`).

use super::limits::MAX_PORTS;
use super::MAX_MINIMAL;
use crate::error::{Error, Result};
use crate::memory::fallible::filled;
use std::fmt;
use std::ops::Range;

/// A switch-to-switch port of the switch at some position of a group: it leads to the
/// switch at position `to` of the group `offset` groups further on (0: the same group).
#[derive(Clone, Copy, Debug)]
pub(super) struct Hop {
    pub port: u16,
    pub offset: u32,
    pub to: u32,
}

/// The most table entries (bytes) and search steps construction may take.
const MAX_TABLE: u64 = 1 << 28;
const MAX_STEPS: u64 = 1 << 31;

#[derive(Clone)]
pub(super) struct GroupDistances {
    groups: usize,
    /// Switches per group, A.
    size: usize,
    /// The switch-to-switch ports of every position, in port order: those of position x
    /// are `hops[first[x]..first[x + 1]]`.
    hops: Vec<Hop>,
    first: Vec<usize>,
    /// `dist[(x · g + Δ) · A + y]`: hops from position x of any group G to position y of
    /// group G + Δ.
    dist: Vec<u8>,
    /// The most ports that start minimal paths from one switch to another.
    most_minimal: usize,
}

impl fmt::Debug for GroupDistances {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GroupDistances {{ groups: {}, size: {}, table: {} bytes }}", self.groups, self.size, self.dist.len())
    }
}

impl GroupDistances {
    /// `hops_of(x, out)` appends the switch-to-switch ports of position x, in port order.
    /// Fails, naming `fabric`, if the table would be too large, some switches cannot reach
    /// each other, or some pair of switches has more than [`MAX_MINIMAL`] minimal first hops.
    pub(super) fn new(
        fabric: &str,
        groups: usize,
        size: usize,
        mut hops_of: impl FnMut(usize, &mut Vec<Hop>),
    ) -> Result<GroupDistances> {
        let mut hops = Vec::new();
        let mut first = Vec::with_capacity(size + 1);
        for x in 0..size {
            first.push(hops.len());
            hops_of(x, &mut hops);
        }
        first.push(hops.len());

        let (g, a) = (groups as u64, size as u64);
        let table = a * a * g;
        let steps = a * g * (hops.len() as u64).max(1);
        if table > MAX_TABLE || steps > MAX_STEPS {
            return Err(Error::Topology(format!(
                "{fabric}: too large for the group distance table ({table} entries, {steps} search steps; \
                 at most 2^28 and 2^31)"
            )));
        }
        debug_assert!(hops.iter().all(|h| (h.port as u64) < MAX_PORTS && (h.offset as usize) < groups));

        let dist = filled(table as usize, u8::MAX, "the group distance table")?;
        let mut t = GroupDistances { groups, size, hops, first, dist, most_minimal: 0 };
        t.search(fabric)?;
        t.most_minimal = t.count_minimal();
        if t.most_minimal > MAX_MINIMAL {
            return Err(Error::Topology(format!(
                "{fabric}: some switch has {} ports starting minimal paths to another, more than {MAX_MINIMAL}",
                t.most_minimal
            )));
        }
        Ok(t)
    }

    fn hops(&self, x: usize) -> &[Hop] {
        &self.hops[self.first[x]..self.first[x + 1]]
    }

    /// One breadth-first search over (group offset, position) from each position of group 0.
    fn search(&mut self, fabric: &str) -> Result<()> {
        let (g, a) = (self.groups, self.size);
        let n = g * a;
        let mut queue: Vec<(u32, u32)> = Vec::with_capacity(n);
        for x in 0..a {
            let mut row = std::mem::take(&mut self.dist);
            let dist = &mut row[x * n..(x + 1) * n];
            queue.clear();
            queue.push((0, x as u32));
            dist[x] = 0;
            let mut head = 0;
            while let Some(&(offset, y)) = queue.get(head) {
                head += 1;
                let here = dist[offset as usize * a + y as usize];
                for hop in self.hops(y as usize) {
                    let mut next = offset as usize + hop.offset as usize;
                    if next >= g {
                        next -= g;
                    }
                    let at = next * a + hop.to as usize;
                    if dist[at] == u8::MAX {
                        if here >= u8::MAX - 1 {
                            return Err(Error::Topology(format!("{fabric}: a distance exceeds 254 hops")));
                        }
                        dist[at] = here + 1;
                        queue.push((next as u32, hop.to));
                    }
                }
            }
            self.dist = row;
            if queue.len() != n {
                return Err(Error::Topology(format!("{fabric}: some switches cannot reach each other")));
            }
        }
        Ok(())
    }

    /// The most ports of one switch that lead one hop closer to another switch.
    fn count_minimal(&self) -> usize {
        let (g, a) = (self.groups, self.size);
        let n = g * a;
        let mut count = vec![0u16; n];
        let mut most = 0;
        for x in 0..a {
            count.iter_mut().for_each(|c| *c = 0);
            let from = &self.dist[x * n..(x + 1) * n];
            for hop in self.hops(x) {
                let via = &self.dist[hop.to as usize * n..(hop.to as usize + 1) * n];
                for delta in 0..g {
                    let rest = (delta + g - hop.offset as usize) % g;
                    let (from, via) = (&from[delta * a..(delta + 1) * a], &via[rest * a..(rest + 1) * a]);
                    for (c, (&d, &v)) in count[delta * a..(delta + 1) * a].iter_mut().zip(from.iter().zip(via)) {
                        *c += u16::from(v as u16 + 1 == d as u16);
                    }
                }
            }
            most = most.max(count.iter().copied().max().unwrap_or(0) as usize);
        }
        most
    }

    #[inline]
    fn entry(&self, from: usize, offset: usize, to: usize) -> u8 {
        self.dist[(from * self.groups + offset) * self.size + to]
    }

    #[inline]
    fn offset(&self, from_group: usize, to_group: usize) -> usize {
        if to_group >= from_group {
            to_group - from_group
        } else {
            to_group + self.groups - from_group
        }
    }

    /// Hops from position `from` of group `from_group` to position `to` of `to_group`.
    #[inline]
    pub(super) fn distance(&self, from_group: usize, from: usize, to_group: usize, to: usize) -> u32 {
        self.entry(from, self.offset(from_group, to_group), to) as u32
    }

    /// The ports of the first switch that lead one hop closer to the second, in port order.
    #[inline]
    pub(super) fn minimal(
        &self,
        from_group: usize,
        from: usize,
        to_group: usize,
        to: usize,
        out: &mut [u16; MAX_MINIMAL],
    ) -> usize {
        let offset = self.offset(from_group, to_group);
        let d = self.entry(from, offset, to);
        let mut n = 0;
        if d == 0 {
            return 0;
        }
        for hop in self.hops(from) {
            let mut rest = offset + self.groups - hop.offset as usize;
            if rest >= self.groups {
                rest -= self.groups;
            }
            if self.entry(hop.to as usize, rest, to) + 1 == d {
                out[n] = hop.port;
                n += 1;
            }
        }
        n
    }

    /// The largest distance between two switches whose positions are in `positions`.
    pub(super) fn max_distance(&self, positions: Range<usize>) -> u32 {
        let mut most = 0;
        for x in positions.clone() {
            for delta in 0..self.groups {
                for y in positions.clone() {
                    most = most.max(self.entry(x, delta, y));
                }
            }
        }
        most as u32
    }

    /// The most ports that start minimal paths from one switch to another.
    pub(super) fn most_minimal(&self) -> usize {
        self.most_minimal
    }
}
