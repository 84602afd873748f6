//! Crossbar bandwidth shared by concurrent transfers, at ports whose link is faster than
//! other ports of their switch.
//!
//! A transfer from input i to output o runs at speedup x min(rate(i), rate(o)): the
//! crossbar moves a packet at the slower of its two ports' rates, as a real switch's
//! internal paths are provisioned per port. A port's crossbar side carries speedup x its
//! own link rate, so an output whose link is k times faster than the inputs feeding it
//! takes in k transfers at once, and an input k times faster than its outputs sends k
//! (so a 1.6 Tb/s uplink carries four 400 Gb/s hosts' streams, and brings four back).
//! Speedup scales both sides alike, so admission compares link rates: the transfers in
//! progress at a port, plus the new one, may not exceed its link rate. A transfer that
//! finds less than its rate left at a port runs slower, at what is left, if that is at
//! least half its rate (so a 600 Gb/s port fed at 400 Gb/s runs one transfer at 400 and
//! one at 200, not one alone); with less left it waits for a transfer to end.
//!
//! A port's two sides are apart: what it takes in as an output and what it sends as an
//! input share nothing ([`Side`]).
//!
//! Only such ports ("shared") keep slots here; every other port takes one transfer at a
//! time, as in a fabric whose links are all equal (where this table is empty and the
//! switch pays nothing for it: `Arbitration` picks the `Shared` unit only when a fabric
//! has a shared port).

use crate::memory::fallible::{filled, with_capacity};

/// No slots: the port takes one transfer at a time.
const UNSHARED: u32 = u32::MAX;

/// Most transfers one port runs at once (a link 64 times faster than the slowest port
/// of its switch carries 64 of its streams; beyond that the model caps it).
pub(super) const MAX_SLOTS: usize = 64;

/// The side of a port a transfer holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Side {
    /// The port as an output: transfers into its output queues.
    Output = 0,
    /// The port as an input: transfers out of its input queues.
    Input = 1,
}

/// A transfer in progress at a shared port: until when, and the rate it holds (bits/s,
/// before speedup).
#[derive(Clone, Copy, Default)]
struct Slot {
    until: u64,
    rate: u64,
}

/// The shared ports of a fabric and their transfers in progress.
#[derive(Default)]
pub(super) struct Shares {
    /// Per global port: its first slot, or `UNSHARED`; its output side's slots come
    /// first, then as many for its input side.
    first: Vec<u32>,
    /// Per global port: its number of slots per side.
    count: Vec<u8>,
    slots: Vec<Slot>,
}

impl Shares {
    /// The shares of a fabric whose ports have link rates `rates` (by global port) and
    /// belong to the switches `owner` (by global port); empty when every switch's ports
    /// are equally fast.
    pub(super) fn new(rates: &[u64], owner: &[u32], switches: usize) -> crate::Result<Shares> {
        let what = "the crossbar shares of fast ports";
        let mut slowest = filled(switches, u64::MAX, what)?;
        for (&rate, &s) in rates.iter().zip(owner) {
            slowest[s as usize] = slowest[s as usize].min(rate.max(1));
        }
        let slots_of = |p: usize| -> usize {
            let min = slowest[owner[p] as usize];
            if rates[p] > min {
                (rates[p].div_ceil(min) as usize).min(MAX_SLOTS)
            } else {
                0
            }
        };
        let total: usize = 2 * (0..rates.len()).map(slots_of).sum::<usize>();
        if total == 0 {
            return Ok(Shares::default());
        }
        let (mut first, mut count) = (with_capacity(rates.len(), what)?, with_capacity(rates.len(), what)?);
        let mut next = 0usize;
        for p in 0..rates.len() {
            let n = slots_of(p);
            first.push(if n == 0 { UNSHARED } else { next as u32 });
            count.push(n as u8);
            next += 2 * n;
        }
        Ok(Shares { first, count, slots: filled(total, Slot::default(), what)? })
    }

    /// Whether any port is shared.
    #[inline]
    pub(super) fn on(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Whether port `gp` runs several transfers at once.
    #[inline]
    pub(super) fn shared(&self, gp: usize) -> bool {
        self.first[gp] != UNSHARED
    }

    /// The slots of `side` of shared port `gp`, where they start in `slots`.
    #[inline]
    fn range(&self, side: Side, gp: usize) -> std::ops::Range<usize> {
        let n = self.count[gp] as usize;
        let first = self.first[gp] as usize + side as usize * n;
        first..first + n
    }

    /// What `side` of shared port `gp`, of link rate `capacity`, has left at `now`: the
    /// rate not held by transfers in progress (0 when every slot is busy), and when the
    /// earliest of them ends (`u64::MAX`: none in progress).
    #[inline]
    pub(super) fn available(&self, side: Side, gp: usize, capacity: u64, now: u64) -> (u64, u64) {
        let (mut used, mut idle, mut next_end) = (0u64, false, u64::MAX);
        for slot in &self.slots[self.range(side, gp)] {
            if slot.until > now {
                used += slot.rate;
                next_end = next_end.min(slot.until);
            } else {
                idle = true;
            }
        }
        (if idle { capacity.saturating_sub(used) } else { 0 }, next_end)
    }

    /// `side` of shared port `gp` starts a transfer of `rate` that lasts until `until`
    /// (it may: `free_at` said so).
    #[inline]
    pub(super) fn take(&mut self, side: Side, gp: usize, rate: u64, until: u64, now: u64) {
        let range = self.range(side, gp);
        if let Some(slot) = self.slots[range].iter_mut().find(|s| s.until <= now) {
            *slot = Slot { until, rate };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1_000_000_000;

    #[test]
    fn a_port_four_times_faster_than_its_switch_slowest_takes_four_transfers() {
        // Switch 0: three 400G ports and a 1.6T one; switch 1: two equal ports.
        let rates = [400 * G, 400 * G, 400 * G, 1600 * G, 100 * G, 100 * G];
        let owner = [0, 0, 0, 0, 1, 1];
        let mut shares = Shares::new(&rates, &owner, 2).unwrap();
        assert!(shares.on());
        assert!(!shares.shared(0) && shares.shared(3) && !shares.shared(4));
        for k in 0..4 {
            assert_eq!(shares.available(Side::Output, 3, 1600 * G, 10).0, (4 - k) * 400 * G);
            shares.take(Side::Output, 3, 400 * G, 100 + k, 10);
        }
        // Full: nothing left until the first ends.
        assert_eq!(shares.available(Side::Output, 3, 1600 * G, 10), (0, 100));
        assert_eq!(shares.available(Side::Output, 3, 1600 * G, 100), (400 * G, 101));
        // Its input side is apart: idle all along.
        assert_eq!(shares.available(Side::Input, 3, 1600 * G, 10), (1600 * G, u64::MAX));
    }

    #[test]
    fn equal_ports_share_nothing() {
        let shares = Shares::new(&[100 * G; 4], &[0, 0, 1, 1], 2).unwrap();
        assert!(!shares.on());
    }
}
