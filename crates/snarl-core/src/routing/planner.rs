//! A per-QP path planner, in the manner of switch-resident planners for RDMA fabrics:
//! each switch gives a QP (a flow: source, destination, queue pair, as its 5-tuple shows
//! it) a port the first time it sees it, and keeps it there. The planned port is the one
//! with the fewest active QPs among the equal next hops (ties: the lowest port), so
//! concurrent QPs leaving a switch take distinct ports while a free one exists. A QP that
//! has sent nothing through the switch for longer than `idle` has ended: its port counts
//! it no more, and its next packet, if any, is planned as a new QP's. Planning happens
//! only where there is a choice (the up-ports of a tree, a spine's parallel links down to
//! a leaf); each switch plans its own ports, knowing nothing of the others'.
//!
//! Each switch keeps a QP table of fixed size, sized at build time: a QP's entry is among
//! the `WAYS` entries after its hash (modulo the size), so a packet looks at one window
//! and allocates nothing. A new QP takes a free entry of its window, else the least
//! recently active one (released first; a live QP evicted so is planned anew when it
//! next sends, as on a switch whose table is full).
//!
//! Ended QPs are released lazily, without scanning the table: every port keeps its QPs in
//! a list ordered by their last packet (each packet moves its QP to the end, a few index
//! writes), so the QPs that ended are at the front. Before choosing, a plan releases the
//! ended QPs at the front of the list of every candidate port, which makes their counts
//! exact when they are compared; counts of other ports may still include ended QPs until
//! a plan looks at them. Each QP is released once, so this costs O(1) per QP amortised,
//! plus a look at each candidate port per plan.

use super::{Candidates, PerSwitch, PortView, Route, RouteQuery, Routing};
use crate::error::Result;
use crate::memory::fallible::{self, Zero};
use crate::packet::NIL;
use crate::topology::{AnyTopology, PortRange, Topology};
use rand_pcg::Pcg64Mcg;
use strength_reduce::StrengthReducedU64;

/// The entries a QP may occupy from its hash on: 128 bytes, two or three cache lines.
const WAYS: usize = 4;
/// No entry (the ends of a port's list).
const NONE: u32 = u32::MAX;

/// A QP's entry: zero bytes are a free entry.
#[derive(Clone, Copy, Default, Debug)]
struct Qp {
    /// The QP's 5-tuple hash (0: a free entry).
    key: u64,
    /// The time of its last packet at this switch.
    last: u64,
    /// Its neighbours in its port's list (`NONE` at the ends).
    prev: u32,
    next: u32,
    port: u16,
}

impl Zero for Qp {}

/// A switch's QPs and its ports' lists and counts.
struct Table {
    qps: Vec<Qp>,
    /// Per port: its QPs, least recently active first (first and last entry).
    head: Vec<u32>,
    tail: Vec<u32>,
    /// Per port: its QPs (those that ended included, until a plan releases them).
    active: Vec<u32>,
}

pub struct Planner {
    /// How long a QP may be idle at a switch and still hold its port (ps).
    idle: u64,
    entries: StrengthReducedU64,
    tables: PerSwitch<Table>,
}

impl Planner {
    /// A QP table of `entries` per switch and a list and a count per port, allocated now
    /// (the per-packet path allocates nothing).
    pub fn new(idle: u64, entries: u32, topo: &AnyTopology) -> Result<Planner> {
        let entries = entries.max(1);
        let tables = PerSwitch::try_new(topo.num_switches(), |s| {
            let ports = topo.num_ports(s);
            Ok(Table {
                qps: fallible::zeroed(entries as usize, "the planner's QP tables")?,
                head: fallible::filled(ports, NONE, "the planner's port lists")?,
                tail: fallible::filled(ports, NONE, "the planner's port lists")?,
                active: fallible::zeroed(ports, "the planner's port counts")?,
            })
        })?;
        Ok(Planner { idle, entries: StrengthReducedU64::new(entries as u64), tables })
    }
}

impl Routing for Planner {
    #[inline]
    fn route(
        &self,
        topo: &AnyTopology,
        q: &RouteQuery,
        _view: &impl PortView,
        _rng: &mut Pcg64Mcg,
        out: &mut Candidates,
    ) {
        let Some(hops) = out.choice_of_hops(topo, q) else { return };
        // 0 marks a free entry.
        let key = q.flow_hash().max(1);
        let start = (key % self.entries) as usize;
        let port = self.tables.with(q.switch, |table| table.port(key, start, q.now, hops, self.idle));
        out.only(Route { port, vc: q.vc, via: NIL });
    }
}

impl Table {
    /// The port of QP `key` (whose window starts at entry `start`) at time `now`: its
    /// planned one, or a new plan.
    fn port(&mut self, key: u64, start: usize, now: u64, hops: PortRange, idle: u64) -> u16 {
        let n = self.qps.len();
        let (mut free, mut oldest) = (None, None);
        for w in 0..WAYS.min(n) {
            let i = if start + w >= n { start + w - n } else { start + w };
            let qp = self.qps[i];
            if qp.key == key {
                debug_assert!(qp.port >= hops.first && qp.port - hops.first < hops.count);
                if now - qp.last <= idle {
                    self.touch(i, now);
                    return qp.port;
                }
                // It ended; the flow starts again as a new QP.
                self.release(i);
                return self.plan(i, key, now, hops, idle);
            }
            if qp.key == 0 {
                free = free.or(Some(i));
            } else if oldest.is_none_or(|o: usize| qp.last < self.qps[o].last) {
                oldest = Some(i);
            }
        }
        let i = match (free, oldest) {
            (Some(i), _) => i,
            (None, Some(i)) => {
                self.release(i);
                i
            }
            (None, None) => unreachable!("a window of at least one entry"),
        };
        self.plan(i, key, now, hops, idle)
    }

    /// Plans QP `key` in free entry `i`: on the candidate port with the fewest QPs, once
    /// those that ended are released from the candidates' counts; ties to the lowest.
    fn plan(&mut self, i: usize, key: u64, now: u64, hops: PortRange, idle: u64) -> u16 {
        let (mut best, mut fewest) = (hops.first, u32::MAX);
        for port in hops.first..hops.first + hops.count {
            self.expire(port as usize, now, idle);
            if self.active[port as usize] < fewest {
                (best, fewest) = (port, self.active[port as usize]);
            }
        }
        self.qps[i] = Qp { key, last: now, prev: NONE, next: NONE, port: best };
        self.push(i);
        self.active[best as usize] += 1;
        best
    }

    /// Releases the QPs of `port` idle for longer than `idle`: the front of its list.
    fn expire(&mut self, port: usize, now: u64, idle: u64) {
        while self.head[port] != NONE && now - self.qps[self.head[port] as usize].last > idle {
            self.release(self.head[port] as usize);
        }
    }

    /// A packet of QP `i` at `now`: it moves to the end of its port's list.
    #[inline]
    fn touch(&mut self, i: usize, now: u64) {
        self.qps[i].last = now;
        if self.tail[self.qps[i].port as usize] != i as u32 {
            self.unlink(i);
            self.push(i);
        }
    }

    /// Frees entry `i` and its port's count of it.
    fn release(&mut self, i: usize) {
        self.unlink(i);
        self.active[self.qps[i].port as usize] -= 1;
        self.qps[i].key = 0;
    }

    /// Appends entry `i` to its port's list.
    fn push(&mut self, i: usize) {
        let port = self.qps[i].port as usize;
        let tail = self.tail[port];
        self.qps[i].prev = tail;
        self.qps[i].next = NONE;
        match tail {
            NONE => self.head[port] = i as u32,
            t => self.qps[t as usize].next = i as u32,
        }
        self.tail[port] = i as u32;
    }

    /// Takes entry `i` out of its port's list.
    fn unlink(&mut self, i: usize) {
        let Qp { prev, next, port, .. } = self.qps[i];
        match prev {
            NONE => self.head[port as usize] = next,
            p => self.qps[p as usize].next = next,
        }
        match next {
            NONE => self.tail[port as usize] = prev,
            n => self.qps[n as usize].prev = prev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LinksConfig, TopologyConfig};
    use crate::routing::stateful_test::{at_leaf, only_route};
    use crate::topology;
    use rand::{Rng, SeedableRng};

    /// Two leaves of eight hosts, one spine, four links between each leaf and the spine:
    /// leaf 0's up-ports are 8..12.
    fn spine_leaf() -> AnyTopology {
        let t = TopologyConfig::SpineLeaf {
            leaves: 2,
            spines: 1,
            hosts_per_leaf: 8,
            links_per_pair: 4,
            oversubscription: None,
            oversubscription_by: None,
        };
        topology::build(&t, &LinksConfig::default()).unwrap()
    }

    const US: u64 = 1_000_000;

    fn planner(topo: &AnyTopology, entries: u32) -> Planner {
        Planner::new(100 * US, entries, topo).unwrap()
    }

    /// The port `p` gives a packet of QP (src, dst, 0) at leaf 0 at `now` (in µs).
    fn port(p: &Planner, topo: &AnyTopology, src: u32, dst: u32, now: u64) -> u16 {
        only_route(p, topo, &at_leaf(topo, src, dst, 0, now * US), &mut Pcg64Mcg::seed_from_u64(1)).port
    }

    /// Every port's count is the length of its list, the lists hold the live entries,
    /// each once, least recently active first.
    fn check(table: &mut Table) {
        let mut listed = 0;
        for port in 0..table.head.len() {
            let (mut i, mut prev, mut len, mut last) = (table.head[port], NONE, 0, 0);
            while i != NONE {
                let qp = table.qps[i as usize];
                assert!(qp.key != 0 && qp.port as usize == port && qp.prev == prev && qp.last >= last, "{qp:?}");
                (prev, last, i, len) = (i, qp.last, qp.next, len + 1);
            }
            assert_eq!(table.tail[port], prev);
            assert_eq!(table.active[port], len, "port {port}");
            listed += len;
        }
        assert_eq!(listed as usize, table.qps.iter().filter(|qp| qp.key != 0).count());
    }

    #[test]
    fn concurrent_qps_take_distinct_ports_while_one_is_free() {
        let topo = spine_leaf();
        let p = planner(&topo, 4096);
        let ports: Vec<u16> = (0..4).map(|src| port(&p, &topo, src, 8 + src, 0)).collect();
        assert_eq!(ports, [8, 9, 10, 11]);
        // Every QP keeps its port.
        for t in 1..50 {
            for src in 0..4 {
                assert_eq!(port(&p, &topo, src, 8 + src, t), ports[src as usize]);
            }
        }
        // None free: the fewest QPs, the lowest port among equals; then the next.
        assert_eq!(port(&p, &topo, 4, 12, 50), 8);
        assert_eq!(port(&p, &topo, 5, 13, 50), 9);
        assert_eq!(port(&p, &topo, 4, 12, 51), 8);
        // The spine plans its parallel links down to leaf 1 the same way.
        let spine =
            |src: u32| RouteQuery { switch: 2, hops: 1, in_port: 0, ..at_leaf(&topo, src, 8 + src, 0, 60 * US) };
        let down: Vec<u16> =
            (0..4).map(|src| only_route(&p, &topo, &spine(src), &mut Pcg64Mcg::seed_from_u64(1)).port).collect();
        assert_eq!(down, [4, 5, 6, 7]);
        p.tables.with(0, check);
        assert_eq!(p.tables.with(0, |t| t.active[8..12].to_vec()), [2, 2, 1, 1]);
    }

    #[test]
    fn a_qp_idle_for_longer_than_idle_frees_its_port() {
        let topo = spine_leaf();
        let p = planner(&topo, 4096);
        for src in 0..4 {
            port(&p, &topo, src, 8 + src, 0);
        }
        // Only the QP on port 8 keeps sending.
        for t in [50, 100, 150] {
            assert_eq!(port(&p, &topo, 0, 8, t), 8);
        }
        // At 150 us the others have been idle for 150 us: a new QP finds their ports free
        // and takes the lowest (with them still counted, all four would tie and it would
        // join the QP on port 8).
        assert_eq!(port(&p, &topo, 4, 12, 150), 9);
        assert_eq!(p.tables.with(0, |t| t.active[8..12].to_vec()), [1, 1, 0, 0]);
        // A released QP that sends again is a new QP: planned on a free port.
        assert_eq!(port(&p, &topo, 1, 9, 151), 10);
        // Within `idle` a QP keeps its port, however long it is (exactly idle is not longer).
        assert_eq!(port(&p, &topo, 0, 8, 250), 8);
        // A QP that ends and sends again before any plan released it is a new QP too;
        // its plan releases every QP that ended meanwhile.
        assert_eq!(port(&p, &topo, 4, 12, 400), 8);
        assert_eq!(p.tables.with(0, |t| t.active[8..12].to_vec()), [1, 0, 0, 0]);
        p.tables.with(0, check);
    }

    #[test]
    fn a_full_window_evicts_its_least_recently_active_qp() {
        let topo = spine_leaf();
        // As many entries as a window: every QP shares it.
        let p = planner(&topo, WAYS as u32);
        for src in 0..WAYS as u32 {
            port(&p, &topo, src, 8 + src, src as u64);
        }
        // A fifth QP: QP 0, least recently active, is evicted, and the newcomer takes its
        // freed port.
        assert_eq!(port(&p, &topo, 7, 15, 10), 8);
        p.tables.with(0, check);
        assert_eq!(p.tables.with(0, |t| t.active[8..12].to_vec()), [1, 1, 1, 1]);
        // QP 0 comes back as a new QP and evicts QP 1 (now the least recent).
        assert_eq!(port(&p, &topo, 0, 8, 11), 9);
        p.tables.with(0, check);
    }

    #[test]
    fn an_entry_takes_the_bytes_the_memory_estimate_counts() {
        assert_eq!(size_of::<Qp>(), 32);
    }

    #[test]
    fn counts_and_lists_stay_exact_under_random_traffic() {
        let topo = spine_leaf();
        let p = planner(&topo, 64);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut now = 0;
        for k in 0..20_000 {
            now += rng.random_range(0..5 * US);
            let (src, dst, qp) = (rng.random_range(0..8), rng.random_range(8..16), rng.random_range(0..8));
            let q = at_leaf(&topo, src, dst, qp, now);
            only_route(&p, &topo, &q, &mut rng);
            if k % 97 == 0 {
                p.tables.with(0, check);
            }
        }
        p.tables.with(0, check);
    }
}
