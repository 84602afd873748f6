//! The flowlet table a switch keeps in fixed size, as switch hardware does: an entry per
//! flow hash (modulo the size) holding the time of its last packet and a value of the
//! routing's (a flowlet counter, a port). Flows that collide share an entry: the packets
//! of one keep the other's flowlet alive, and a new flowlet of either is one of both.
//! Sized once, at build time, so that timing a packet allocates nothing.

use super::PerSwitch;
use crate::error::Result;
use crate::memory::fallible::{self, Zero};
use strength_reduce::StrengthReducedU64;

/// Where a packet falls in its entry's flowlets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Since {
    /// The entry's first packet: no flowlet before it.
    First,
    /// Within `gap` of the entry's last packet: the same flowlet.
    Within,
    /// After a pause longer than `gap`: a new flowlet.
    Pause,
}

/// An entry: zero bytes are an entry no packet has used.
#[derive(Clone, Copy, Default)]
pub(super) struct Slot<V> {
    /// The time of the entry's last packet, plus one (0: none yet).
    last: u64,
    value: V,
}

impl<V: Zero> Zero for Slot<V> {}

pub(super) struct FlowletTables<V> {
    /// Longest gap within a flowlet (ps).
    gap: u64,
    /// Entries per table.
    entries: StrengthReducedU64,
    tables: PerSwitch<Vec<Slot<V>>>,
}

impl<V: Zero> FlowletTables<V> {
    /// A table of `entries` per switch, allocated now: zeroed pages, resident only where
    /// flows hash to. `what` names them in an out-of-memory error.
    pub(super) fn new(gap: u64, entries: u32, switches: usize, what: &'static str) -> Result<FlowletTables<V>> {
        let entries = entries.max(1);
        let tables = PerSwitch::try_new(switches, |_| fallible::zeroed(entries as usize, what))?;
        Ok(FlowletTables { gap, entries: StrengthReducedU64::new(entries as u64), tables })
    }

    /// Times a packet of flow `key` at `switch` at `now` in its entry, and runs `f` on the
    /// entry's value with where the packet falls.
    #[inline]
    pub(super) fn touch<R>(&self, switch: u32, key: u64, now: u64, f: impl FnOnce(&mut V, Since) -> R) -> R {
        self.tables.with(switch, |table| {
            let slot = &mut table[(key % self.entries) as usize];
            let since = if slot.last == 0 {
                Since::First
            } else if now.saturating_sub(slot.last - 1) > self.gap {
                Since::Pause
            } else {
                Since::Within
            };
            slot.last = now + 1;
            f(&mut slot.value, since)
        })
    }

    /// The value of entry `index` of `switch` (for the tests).
    #[cfg(test)]
    pub(super) fn value(&self, switch: u32, index: usize) -> V {
        self.tables.with(switch, |t| t[index].value)
    }

    /// Whether no packet has used any entry of `switch` (for the tests).
    #[cfg(test)]
    pub(super) fn untouched(&self, switch: u32) -> bool {
        self.tables.with(switch, |t| t.iter().all(|s| s.last == 0))
    }
}
