//! The state of congestion isolation (CI, ICI) in the switches of a fabric, apart from
//! the queues themselves: each egress port's congested-flow table (CFT), each ingress
//! port's mirror table, the memory of recent roots, and counts that keep packets in
//! order. What the switch does with it is in `ioq::isolating`.
//!
//! Keys: an entry isolates one flow, every flow to a destination, or a congestion root
//! (the egress port where it was detected, and the destination). Under deterministic
//! routing every packet to a destination leaves a switch by one port, so at a port a root
//! key matches by destination; the root travels upstream with the entry, which
//! identifies it for the memory of recent roots.
//!
//! Order: a flow's packets may sit both in a normal queue and in a congested-flow queue
//! of the same port (isolated after some of its packets had queued, or released while
//! some still travel in the congested-flow class). A head may leave only if no older
//! packet of its flow waits in the other queue. Each (port, priority) keeps, for its
//! ingress and egress queues of both kinds, counts of the packets it holds per bucket of
//! flow hash, so that the common case (no packet of the bucket in the other queue) costs
//! one look-up; only a shared bucket makes the switch walk the other queue.

use crate::cc::FlowMap;
use crate::config::{Isolation, IsolationKeyKind};
use crate::memory::fallible::{filled, zeroed};
use crate::packet::Packet;

/// `Packet::isolation`: it arrived at its current switch in the congested-flow class.
pub const ARRIVED_ISOLATED: u8 = 8;

/// Matches any source or queue pair.
const ANY: u32 = u32::MAX;

/// What an entry isolates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsolationKey {
    /// The flow's source, or `ANY`.
    pub src: u32,
    pub dst: u32,
    /// The flow's queue pair; for a root key, the root's global port id.
    pub qp: u32,
}

impl IsolationKey {
    /// The key of `p` under `kind`, detected at global port `root`.
    pub fn of(kind: IsolationKeyKind, p: &Packet, root: u32) -> IsolationKey {
        match kind {
            IsolationKeyKind::Flow => IsolationKey { src: p.src, dst: p.dst, qp: p.qp },
            IsolationKeyKind::Destination => IsolationKey { src: ANY, dst: p.dst, qp: ANY },
            IsolationKeyKind::Root => IsolationKey { src: ANY, dst: p.dst, qp: root },
        }
    }

    /// Whether a packet from `src` to `dst` on queue pair `qp` belongs to this key.
    #[inline]
    pub fn matches(&self, src: u32, dst: u32, qp: u32) -> bool {
        self.dst == dst && (self.src == ANY || (self.src == src && self.qp == qp))
    }

    /// Whether the two keys match packets in common.
    pub fn overlaps(&self, other: &IsolationKey) -> bool {
        self.dst == other.dst && (self.src == ANY || other.src == ANY || (self.src == other.src && self.qp == other.qp))
    }

    #[inline]
    pub fn matches_packet(&self, p: &Packet) -> bool {
        self.matches(p.src, p.dst, p.qp)
    }
}

/// An entry of an egress port's congested-flow table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    pub key: IsolationKey,
    pub live: bool,
    /// Which of the port's congested-flow queues (per priority) it uses.
    pub cfq: u8,
    /// Packets of the key in the port's congested-flow queues.
    pub cfq_packets: u32,
    /// Since when they have held at most `release` packets of the key (`u64::MAX`: more).
    pub cool_since: u64,
    pub allocated_at: u64,
    /// Bumped at every release: a release timer of an older epoch is stale.
    pub epoch: u32,
    /// When a release check is pending (0: none).
    pub timer_at: u64,
}

/// An entry of an ingress port's mirror table: a key isolated at one of the switch's
/// egress ports, whose packets arrive here.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mirror {
    pub key: IsolationKey,
    pub live: bool,
    /// The egress entry it mirrors (global entry index), or `u32::MAX` once released.
    pub entry: u32,
    /// Packets of the key at this ingress (marked `MIRRORED`).
    pub held: u32,
    /// When it last signalled upstream (`u64::MAX`: never).
    pub signalled_at: u64,
}

/// A root released at a port, remembered for `history`.
#[derive(Clone, Copy, Debug, Default)]
struct Released {
    key: IsolationKey,
    at: u64,
    valid: bool,
}

/// Sides of a (port, priority) whose packets are counted per flow-hash bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    IngressNormal = 0,
    IngressIsolated = 1,
    EgressNormal = 2,
    EgressIsolated = 3,
}

impl Side {
    /// The queue of the other kind on the same side of the switch.
    pub fn other(self) -> Side {
        match self {
            Side::IngressNormal => Side::IngressIsolated,
            Side::IngressIsolated => Side::IngressNormal,
            Side::EgressNormal => Side::EgressIsolated,
            Side::EgressIsolated => Side::EgressNormal,
        }
    }
}

const BUCKETS: usize = 64;

/// The bucket of a flow.
#[inline]
pub fn bucket(p: &Packet) -> usize {
    let h = (p.src as u64) << 40 ^ (p.dst as u64) << 16 ^ p.qp as u64;
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// Isolation's tables for every port of a fabric.
pub struct IsolationState {
    pub params: Isolation,
    pub vcs: usize,
    /// Queues per port (priorities and congested-flow queues).
    queues: usize,
    entries: usize,
    pub cft: Vec<Entry>,
    pub mirrors: Vec<Mirror>,
    history: Vec<Released>,
    /// Per (port, priority): since when its normal egress queue has held `detect` or more
    /// (`u64::MAX`: it does not).
    pub above_since: Vec<u64>,
    /// Per (port, output queue): since when a congested-flow queue has been non-empty
    /// (`u64::MAX`: empty), and whether it was paused or full meanwhile.
    pub busy_since: Vec<u64>,
    pub pressed: Vec<bool>,
    /// Per port: bytes sent from normal and from congested-flow queues (weighted
    /// transmission selection).
    pub sent: Vec<[u64; 2]>,
    /// Per (port, priority, side, bucket): packets held.
    order: Vec<u16>,
    /// Per (ingress port, class): bytes held that arrived in the class, which PFC counts.
    pfc_bytes: Vec<u64>,
    /// Per flow (source, destination, queue pair): the injection time of the last packet
    /// sent to its host, to count packets out of order (looked up per delivery: a cheap
    /// hasher, not SipHash).
    pub delivered: FlowMap<u64>,
    /// Per host: whether the scenario declares it a hotspot (false positives).
    pub hotspot: Vec<bool>,
}

impl IsolationState {
    pub fn new(params: Isolation, ports: usize, vcs: usize, queues: usize) -> crate::Result<IsolationState> {
        let entries = params.cft_entries as usize;
        let what = "the congestion isolation tables";
        Ok(IsolationState {
            vcs,
            queues,
            entries,
            cft: filled(ports * entries, Entry::default(), what)?,
            mirrors: filled(ports * entries, Mirror::default(), what)?,
            history: filled(ports * entries, Released::default(), what)?,
            above_since: filled(ports * vcs, u64::MAX, what)?,
            busy_since: filled(ports * queues, u64::MAX, what)?,
            pressed: filled(ports * queues, false, what)?,
            sent: filled(ports, [0; 2], what)?,
            order: zeroed(ports * vcs * 4 * BUCKETS, what)?,
            pfc_bytes: zeroed(ports * queues, what)?,
            delivered: FlowMap::default(),
            hotspot: Vec::new(),
            params,
        })
    }

    /// Packet `p` joined an ingress queue of port `gp`: the class PFC counts it in (the
    /// one it arrived in, `p.class` at arrival, noted in `ARRIVED_ISOLATED`) and that
    /// class's bytes now.
    #[inline]
    pub fn pfc_arrived(&mut self, gp: usize, p: &Packet) -> (usize, u64) {
        let priority = p.vc as usize;
        let class = if p.isolation & ARRIVED_ISOLATED != 0 { self.class_of(priority) } else { priority };
        let held = &mut self.pfc_bytes[gp * self.queues + class];
        *held += p.size as u64;
        (class, *held)
    }

    /// `bytes` that arrived in class `class` left ingress port `gp`: the class's bytes now.
    #[inline]
    pub fn pfc_left(&mut self, gp: usize, class: usize, bytes: u64) -> u64 {
        let held = &mut self.pfc_bytes[gp * self.queues + class];
        *held -= bytes;
        *held
    }

    /// The congested-flow class of priority `priority`.
    #[inline]
    pub fn class_of(&self, priority: usize) -> usize {
        self.vcs + priority * self.params.cfqs_per_port as usize
    }

    /// Entries (and mirrors) per port.
    pub fn per_port(&self) -> usize {
        self.entries
    }

    /// The live entry of port `gp` whose key `p` belongs to, as a global entry index.
    #[inline]
    pub fn entry_of(&self, gp: usize, p: &Packet) -> Option<usize> {
        let base = gp * self.entries;
        (base..base + self.entries).find(|&e| self.cft[e].live && self.cft[e].key.matches_packet(p))
    }

    /// The live entry of port `gp` that isolates packets `key` covers (the same key, or,
    /// for destination and root keys, one of the same destination: at a port, every
    /// packet to a destination is the same root's).
    pub fn entry_overlapping(&self, gp: usize, key: &IsolationKey) -> Option<usize> {
        let base = gp * self.entries;
        (base..base + self.entries).find(|&e| self.cft[e].live && self.cft[e].key.overlaps(key))
    }

    /// Takes a free entry of port `gp` for `key`; `None` if the table is full.
    pub fn allocate(&mut self, gp: usize, key: IsolationKey, now: u64) -> Option<usize> {
        let base = gp * self.entries;
        let e = (base..base + self.entries).find(|&e| !self.cft[e].live)?;
        let cfq = if self.params.cfqs_per_port > 1 { (e - base) as u8 } else { 0 };
        let epoch = self.cft[e].epoch;
        self.cft[e] =
            Entry { key, live: true, cfq, cfq_packets: 0, cool_since: now, allocated_at: now, epoch, timer_at: 0 };
        Some(e)
    }

    /// Frees entry `e` (of port `gp`) and remembers its key as a recent root.
    pub fn release(&mut self, gp: usize, e: usize, now: u64) {
        let entry = &mut self.cft[e];
        entry.live = false;
        entry.epoch = entry.epoch.wrapping_add(1);
        entry.timer_at = 0;
        let key = entry.key;
        if self.params.history > 0 {
            let base = gp * self.entries;
            let slot = (base..base + self.entries)
                .find(|&s| !self.history[s].valid || self.history[s].key == key)
                .unwrap_or_else(|| (base..base + self.entries).min_by_key(|&s| self.history[s].at).unwrap_or(base));
            self.history[slot] = Released { key, at: now, valid: true };
        }
    }

    /// Whether `key` was released at port `gp` within `history` of `now`.
    pub fn recurs(&self, gp: usize, key: &IsolationKey, now: u64) -> bool {
        if self.params.history == 0 {
            return false;
        }
        let base = gp * self.entries;
        self.history[base..base + self.entries]
            .iter()
            .any(|r| r.valid && r.key == *key && now.saturating_sub(r.at) <= self.params.history)
    }

    /// The live mirror of ingress port `gp` whose key `p` belongs to (global index).
    #[inline]
    pub fn mirror_of(&self, gp: usize, p: &Packet) -> Option<usize> {
        let base = gp * self.entries;
        (base..base + self.entries).find(|&m| self.mirrors[m].live && self.mirrors[m].key.matches_packet(p))
    }

    /// Takes a free mirror of ingress port `gp` for egress entry `entry`.
    pub fn mirror(&mut self, gp: usize, entry: usize) -> Option<usize> {
        let base = gp * self.entries;
        let m = (base..base + self.entries).find(|&m| !self.mirrors[m].live)?;
        self.mirrors[m] =
            Mirror { key: self.cft[entry].key, live: true, entry: entry as u32, held: 0, signalled_at: u64::MAX };
        Some(m)
    }

    /// Entries in use at port `gp`.
    pub fn occupancy(&self, gp: usize) -> usize {
        self.cft[gp * self.entries..(gp + 1) * self.entries].iter().filter(|e| e.live).count()
    }

    #[inline]
    fn order_index(&self, gp: usize, priority: usize, side: Side, bucket: usize) -> usize {
        ((gp * self.vcs + priority) * 4 + side as usize) * BUCKETS + bucket
    }

    /// A packet of `bucket` joined (`+1`) or left (`-1`) `side` of (gp, priority).
    #[inline]
    pub fn count(&mut self, gp: usize, priority: usize, side: Side, bucket: usize, joined: bool) {
        let i = self.order_index(gp, priority, side, bucket);
        if joined {
            self.order[i] += 1;
        } else {
            self.order[i] -= 1;
        }
    }

    /// Packets of `bucket` on `side` of (gp, priority).
    #[inline]
    pub fn counted(&self, gp: usize, priority: usize, side: Side, bucket: usize) -> u16 {
        self.order[self.order_index(gp, priority, side, bucket)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{IsolationConfig, IsolationKnobs};

    fn state(kind: &str, entries: u32) -> IsolationState {
        let knobs = IsolationKnobs { cft_entries: Some(entries), ..Default::default() };
        let config = if kind == "ici" { IsolationConfig::Ici(knobs) } else { IsolationConfig::Ci(knobs) };
        IsolationState::new(config.resolve(256 * 1024, 4096), 4, 1, 2).unwrap()
    }

    fn packet(src: u32, dst: u32, qp: u32) -> Packet {
        Packet { src, dst, qp, ..Packet::default() }
    }

    #[test]
    fn keys_match_their_flow_destination_or_root() {
        let p = packet(3, 7, 1);
        let flow = IsolationKey::of(IsolationKeyKind::Flow, &p, 9);
        assert!(
            flow.matches_packet(&p) && !flow.matches_packet(&packet(4, 7, 1)) && !flow.matches_packet(&packet(3, 7, 2))
        );
        let dst = IsolationKey::of(IsolationKeyKind::Destination, &p, 9);
        assert!(dst.matches_packet(&packet(4, 7, 5)) && !dst.matches_packet(&packet(3, 8, 1)));
        let root = IsolationKey::of(IsolationKeyKind::Root, &p, 9);
        assert!(root.matches_packet(&packet(4, 7, 5)));
        assert_ne!(root, IsolationKey::of(IsolationKeyKind::Root, &p, 10), "roots differ by port");
    }

    #[test]
    fn a_full_table_refuses_and_a_release_frees_and_is_remembered() {
        let mut s = state("ici", 2);
        let (a, b, c) = (packet(0, 1, 0), packet(0, 2, 0), packet(0, 3, 0));
        let key = |p: &Packet| IsolationKey::of(IsolationKeyKind::Root, p, 5);
        let ea = s.allocate(1, key(&a), 10).unwrap();
        assert!(s.allocate(1, key(&b), 10).is_some());
        assert!(s.allocate(1, key(&c), 10).is_none(), "two entries per port");
        assert!(s.allocate(2, key(&c), 10).is_some(), "ports have their own tables");
        assert_eq!(s.entry_of(1, &a), Some(ea));
        assert_eq!(s.occupancy(1), 2);
        s.release(1, ea, 100);
        assert_eq!(s.entry_of(1, &a), None);
        assert!(s.recurs(1, &key(&a), 100 + 100_000_000), "within the 100 us history");
        assert!(!s.recurs(1, &key(&a), 100 + 100_000_001));
        assert!(!s.recurs(2, &key(&a), 200), "history is per port");
        assert!(s.allocate(1, key(&c), 200).is_some());
    }

    #[test]
    fn buckets_count_per_side_and_priority() {
        let mut s = state("ci", 8);
        let b = bucket(&packet(1, 2, 0));
        s.count(3, 0, Side::EgressNormal, b, true);
        s.count(3, 0, Side::EgressNormal, b, true);
        assert_eq!(s.counted(3, 0, Side::EgressNormal, b), 2);
        assert_eq!(s.counted(3, 0, Side::EgressIsolated, b), 0);
        s.count(3, 0, Side::EgressNormal, b, false);
        assert_eq!(s.counted(3, 0, Side::EgressNormal, b), 1);
        assert_eq!(Side::IngressNormal.other(), Side::IngressIsolated);
    }
}
