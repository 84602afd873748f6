//! Per-flow state for NIC-side congestion control: a table of slots reached through a map
//! keyed by the flow, with an epoch per slot so timers of a released or reset flow are
//! recognised as stale. Generic over the key: a queue pair ([`FlowKey`]), or a source and
//! service level, as a congestion control keys its state.

use crate::routing::hash::mix64;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A flow: (source host, destination host, queue pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub qp: u32,
}

/// A cheap deterministic hasher for small integer keys (SplitMix64 over each word). Maps
/// keyed by it are never iterated by anything that affects results.
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0 = mix64(self.0.rotate_left(21) ^ x as u64);
    }
}

pub type FlowMap<V> = HashMap<FlowKey, V, BuildHasherDefault<MixHasher>>;

struct Slot<K, S> {
    key: K,
    /// Bumped whenever the flow's pending timers must be ignored (a reset, a release).
    epoch: u32,
    state: S,
}

/// The state `S` of the flows that have any, by key `K`. Only flows a congestion control
/// acts on are here (throttled ones, say): a flow without state is at its default.
pub struct FlowTable<K, S> {
    slots: Vec<Slot<K, S>>,
    free: Vec<u32>,
    index: HashMap<K, u32, BuildHasherDefault<MixHasher>>,
}

impl<K: Copy + Eq + Hash, S> Default for FlowTable<K, S> {
    fn default() -> Self {
        FlowTable { slots: Vec::new(), free: Vec::new(), index: HashMap::default() }
    }
}

impl<K: Copy + Eq + Hash, S> FlowTable<K, S> {
    /// Whether no flow has state (the common case the per-packet path checks first).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The slot of `key`, if it has state.
    #[inline]
    pub fn find(&self, key: &K) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The slot of `key`, created with `state` if it has none. A reused slot keeps its
    /// epoch, so timers of its former flow stay stale.
    pub fn find_or_insert(&mut self, key: K, state: impl FnOnce() -> S) -> u32 {
        if let Some(&slot) = self.index.get(&key) {
            return slot;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                let reused = &mut self.slots[slot as usize];
                (reused.key, reused.state) = (key, state());
                slot
            }
            None => {
                self.slots.push(Slot { key, epoch: 0, state: state() });
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, slot);
        slot
    }

    /// The slot of `key`, created if it has none: a new slot's state is `new()`, a reused
    /// one's is reset in place by `reset`, so that what its state allocated (a ring, say)
    /// serves the next flow and a flow that comes and goes allocates nothing. A reused
    /// slot keeps its epoch, as in `find_or_insert`.
    pub fn find_or_reset(&mut self, key: K, new: impl FnOnce() -> S, reset: impl FnOnce(&mut S)) -> u32 {
        if let Some(&slot) = self.index.get(&key) {
            return slot;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                let reused = &mut self.slots[slot as usize];
                reused.key = key;
                reset(&mut reused.state);
                slot
            }
            None => {
                self.slots.push(Slot { key, epoch: 0, state: new() });
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, slot);
        slot
    }

    #[inline]
    pub fn key(&self, slot: u32) -> K {
        self.slots[slot as usize].key
    }

    #[inline]
    pub fn state(&self, slot: u32) -> &S {
        &self.slots[slot as usize].state
    }

    #[inline]
    pub fn state_mut(&mut self, slot: u32) -> &mut S {
        &mut self.slots[slot as usize].state
    }

    #[inline]
    pub fn epoch(&self, slot: u32) -> u32 {
        self.slots[slot as usize].epoch
    }

    /// Makes the slot's pending timers stale; returns its new epoch.
    pub fn bump_epoch(&mut self, slot: u32) -> u32 {
        let s = &mut self.slots[slot as usize];
        s.epoch = s.epoch.wrapping_add(1);
        s.epoch
    }

    /// The state of `slot` if a timer of epoch `epoch` is still current for it.
    pub fn current(&mut self, slot: u32, epoch: u32) -> Option<&mut S> {
        self.slots.get_mut(slot as usize).filter(|s| s.epoch == epoch).map(|s| &mut s.state)
    }

    /// The flows with state: slot, key and state, in no particular order (for checks,
    /// never for anything that affects results).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &K, &S)> {
        self.index.iter().map(|(key, &slot)| (slot, key, &self.slots[slot as usize].state))
    }

    /// Drops the flow's state (its timers become stale); the slot is reused.
    pub fn release(&mut self, slot: u32) {
        self.bump_epoch(slot);
        let key = self.slots[slot as usize].key;
        self.index.remove(&key);
        self.free.push(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_their_timers_stay_stale() {
        let mut t: FlowTable<(u32, u8), u64> = FlowTable::default();
        assert!(t.is_empty());
        let a = t.find_or_insert((1, 0), || 10);
        assert_eq!(t.find_or_insert((1, 0), || 99), a, "an existing flow keeps its slot");
        let epoch = t.bump_epoch(a);
        assert_eq!(t.current(a, epoch).copied(), Some(10));
        t.release(a);
        assert_eq!(t.find(&(1, 0)), None);
        assert!(t.current(a, epoch).is_none(), "a released flow's timers are stale");
        let b = t.find_or_insert((2, 3), || 20);
        assert_eq!(b, a, "the slot is reused");
        assert!(t.current(b, epoch).is_none(), "and its former flow's timers stay stale");
        assert_eq!((t.key(b), *t.state(b)), ((2, 3), 20));
    }

    #[test]
    fn a_reused_slot_is_reset_in_place() {
        let mut t: FlowTable<u32, Vec<u32>> = FlowTable::default();
        let a = t.find_or_reset(1, || Vec::with_capacity(8), |v| v.clear());
        t.state_mut(a).extend([1, 2, 3]);
        assert_eq!(t.find_or_reset(1, Vec::new, |_| panic!("an existing flow is not reset")), a);
        t.release(a);
        let b = t.find_or_reset(2, || panic!("a free slot is reused"), |v| v.clear());
        assert_eq!(b, a);
        assert!(t.state(b).is_empty() && t.state(b).capacity() >= 8, "emptied, its room kept");
    }
}
