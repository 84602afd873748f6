//! Credit-based lossless flow control (InfiniBand style): a sender holds one credit
//! counter, in bytes, per (link, queue); a packet may start only if the whole packet fits
//! in the receiver's buffer (virtual cut-through), so nothing is ever dropped.

use crate::memory::fallible::{collected, with_capacity};
use crate::memory::prefetch::prefetch_at;

/// Credit counters of many senders, indexed by `link * queues + queue`; the receiver's
/// buffer is the same for every queue of a link, so it is kept once per link (a quarter
/// of the bytes with four VCs: `in_use`, which UGAL asks for every candidate port, reads
/// the link's counters and a table small enough to stay in cache).
///
/// The counters start on a cache line (`start` counters into their vector): a link's
/// four VCs are then one line, not two for every other link, wherever the heap put them.
pub struct CreditSender {
    credits: Vec<i64>,
    capacity: Vec<i64>,
    queues: usize,
    start: usize,
}

/// Counters per cache line.
const PER_LINE: usize = 64 / size_of::<i64>();

/// Receivers that never apply backpressure (hosts draining at line rate).
pub const UNLIMITED: i64 = i64::MAX / 4;

impl CreditSender {
    /// `capacity[link]` is the receiver's per-queue buffer in bytes, for `links` links.
    pub fn new(links: usize, capacity: impl IntoIterator<Item = i64>, queues: usize) -> crate::Result<CreditSender> {
        let n = links * queues;
        let what = "the credit counters";
        let capacity = collected(links, capacity, what)?;
        let mut credits: Vec<i64> = with_capacity(n + PER_LINE - 1, what)?;
        let start = credits.as_ptr().align_offset(64).min(PER_LINE - 1);
        credits.resize(start, 0);
        credits.extend(capacity.iter().flat_map(|&c| std::iter::repeat_n(c, queues)));
        Ok(CreditSender { credits, capacity, queues, start })
    }

    #[inline]
    fn index(&self, link: usize, queue: usize) -> usize {
        self.start + link * self.queues + queue
    }

    /// Prefetches the counters of `link` and its receiver's buffer (`memory::prefetch`):
    /// `in_use` reads both.
    #[inline(always)]
    pub fn prefetch(&self, link: usize) {
        prefetch_at(&self.credits, self.index(link, 0));
        prefetch_at(&self.capacity, link);
    }

    #[inline]
    pub fn can_send(&self, link: usize, queue: usize, bytes: u64) -> bool {
        self.credits[self.index(link, queue)] >= bytes as i64
    }

    /// Unlimited receivers are charged too: their budget outlasts any run (about 2^61
    /// bytes, years at terabits per second), and the send path reads one array, not two.
    #[inline]
    pub fn on_send(&mut self, link: usize, queue: usize, bytes: u64) {
        let i = self.index(link, queue);
        self.credits[i] -= bytes as i64;
    }

    #[inline]
    pub fn on_credit(&mut self, link: usize, queue: usize, bytes: u64) {
        let i = self.index(link, queue);
        self.credits[i] += bytes as i64;
        debug_assert!(self.credits[i] <= self.capacity[link], "more credits returned than sent");
    }

    /// Bytes sent on (link, all queues) that the receiver still holds (none for unlimited
    /// receivers, which drain at once).
    #[inline]
    pub fn in_use(&self, link: usize) -> u64 {
        let capacity = self.capacity[link];
        if capacity == UNLIMITED {
            return 0;
        }
        let start = self.index(link, 0);
        let in_hand: i64 = self.credits[start..start + self.queues].iter().sum();
        (capacity * self.queues as i64 - in_hand) as u64
    }

    /// Checks every counter lies in [0, capacity]; returns the first violation.
    pub fn check_bounds(&self) -> Result<(), String> {
        for (i, &c) in self.credits[self.start..].iter().enumerate() {
            let cap = self.capacity[i / self.queues];
            if c < 0 || c > cap {
                return Err(format!(
                    "link {} queue {}: {} credits outside [0, {}]",
                    i / self.queues,
                    i % self.queues,
                    c,
                    cap
                ));
            }
        }
        Ok(())
    }

    /// The receiver's buffer for (link, queue), in bytes.
    pub fn capacity(&self, link: usize, queue: usize) -> i64 {
        debug_assert!(queue < self.queues);
        self.capacity[link]
    }

    /// Remaining credits of (link, queue).
    pub fn credits(&self, link: usize, queue: usize) -> i64 {
        self.credits[self.index(link, queue)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_waits_for_whole_buffer_space() {
        let mut s = CreditSender::new(2, [100, UNLIMITED], 2).unwrap();
        assert!(s.can_send(0, 1, 100));
        s.on_send(0, 1, 60);
        assert!(!s.can_send(0, 1, 60));
        assert!(s.can_send(0, 0, 100), "VCs have their own credits");
        assert_eq!(s.in_use(0), 60);
        s.on_credit(0, 1, 60);
        assert!(s.can_send(0, 1, 100));
        s.on_send(1, 0, 1 << 40);
        assert!(s.can_send(1, 0, 1 << 40), "hosts never run out");
        assert_eq!(s.in_use(1), 0, "nor hold anything");
        assert!(s.check_bounds().is_ok());
    }
}
