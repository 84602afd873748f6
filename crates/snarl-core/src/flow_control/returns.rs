//! Credit messages travelling back along links. They are held per link, in arrival order
//! (a link returns credits in the order its receiver freed the space), instead of as
//! events: a sender collects the ones that have arrived when it next looks at its
//! credits, and is woken for one only when it is blocked waiting for it.

use super::CreditSender;
use crate::error::Result;
use crate::memory::fallible::filled;
use crate::memory::prefetch::prefetch_at;

/// Returns in flight on one link, oldest first from `head`, with the flag of a sender
/// waiting for them: one cache line, so a look at a link's credits touches one line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Ring {
    at: [u64; SLOTS],
    bytes: [u32; SLOTS],
    queue: [u8; SLOTS],
    head: u8,
    len: u8,
    /// The sender waits for credits: the next return pushed for it must wake it.
    blocked: bool,
}

/// Returns in flight, a small ring per link. A full ring refuses a return; the caller
/// then sends it as an event instead.
pub struct CreditReturns {
    rings: Vec<Ring>,
}

/// Returns a ring holds: a link rarely has more on their way (a return travels one link
/// latency, far less than a packet takes to cross the crossbar).
const SLOTS: usize = 4;

impl CreditReturns {
    pub fn new(links: usize) -> Result<CreditReturns> {
        Ok(CreditReturns { rings: filled(links, Ring::default(), "the credit-return rings")? })
    }

    /// Prefetches the ring of `link` (`memory::prefetch`).
    #[inline(always)]
    pub fn prefetch(&self, link: usize) {
        prefetch_at(&self.rings, link);
    }

    /// Queues `bytes` of credit for (link, queue) arriving at `at`; `false` if the ring is full.
    #[inline]
    pub fn push(&mut self, link: usize, at: u64, queue: usize, bytes: u64) -> bool {
        let ring = &mut self.rings[link];
        let len = ring.len as usize;
        if len == SLOTS {
            return false;
        }
        let slot = (ring.head as usize + len) % SLOTS;
        debug_assert!(len == 0 || ring.at[(slot + SLOTS - 1) % SLOTS] <= at, "out of order");
        ring.at[slot] = at;
        ring.bytes[slot] = bytes as u32;
        ring.queue[slot] = queue as u8;
        ring.len += 1;
        true
    }

    /// `push`, first handing the returns that have arrived by `now` to `credits` if the
    /// ring is full (a sender that collects lazily leaves them there).
    #[inline]
    pub fn push_collecting(
        &mut self,
        link: usize,
        at: u64,
        queue: usize,
        bytes: u64,
        now: u64,
        credits: &mut CreditSender,
    ) -> bool {
        if self.rings[link].len as usize == SLOTS {
            self.collect(link, now, credits);
        }
        self.push(link, at, queue, bytes)
    }

    /// The sender of `link` waits for credits: returns on their way will not wake it,
    /// so this wakes it at the first, if any. A later `push` reports that it waits.
    #[inline]
    pub fn block(&mut self, link: usize) -> Option<u64> {
        self.rings[link].blocked = true;
        self.next_at(link)
    }

    /// Whether the sender of `link` was waiting for credits (and no longer is).
    #[inline]
    pub fn unblock(&mut self, link: usize) -> bool {
        std::mem::take(&mut self.rings[link].blocked)
    }

    /// Arrival time of the next return on `link`.
    #[inline]
    pub fn next_at(&self, link: usize) -> Option<u64> {
        let ring = &self.rings[link];
        (ring.len > 0).then(|| ring.at[ring.head as usize])
    }

    /// Hands every return that has arrived by `now` to `credits`.
    #[inline]
    pub fn collect(&mut self, link: usize, now: u64, credits: &mut CreditSender) {
        let ring = &mut self.rings[link];
        while ring.len > 0 {
            let head = ring.head as usize;
            if ring.at[head] > now {
                break;
            }
            credits.on_credit(link, ring.queue[head] as usize, ring.bytes[head] as u64);
            ring.head = ((head + 1) % SLOTS) as u8;
            ring.len -= 1;
        }
    }

    /// Bytes on `link` that have arrived by `now` but are not collected yet.
    #[inline]
    pub fn arrived(&self, link: usize, now: u64) -> u64 {
        // In arrival order: the first still on its way ends the count.
        let ring = &self.rings[link];
        let mut bytes = 0;
        for k in 0..ring.len as usize {
            let slot = (ring.head as usize + k) % SLOTS;
            if ring.at[slot] > now {
                break;
            }
            bytes += ring.bytes[slot] as u64;
        }
        bytes
    }

    /// Bytes of (link, queue) that have arrived by `now` but are not collected yet.
    pub fn arrived_for(&self, link: usize, queue: usize, now: u64) -> u64 {
        self.iter(link).filter(|&(at, _, v)| at <= now && v as usize == queue).map(|(_, bytes, _)| bytes as u64).sum()
    }

    /// Bytes of (link, queue) still travelling or uncollected.
    pub fn pending(&self, link: usize, queue: usize) -> u64 {
        self.iter(link).filter(|&(_, _, v)| v as usize == queue).map(|(_, bytes, _)| bytes as u64).sum()
    }

    /// (arrival, bytes, queue) of the returns on `link`, oldest first.
    fn iter(&self, link: usize) -> impl Iterator<Item = (u64, u32, u8)> + '_ {
        let ring = &self.rings[link];
        (0..ring.len as usize).map(move |k| {
            let slot = (ring.head as usize + k) % SLOTS;
            (ring.at[slot], ring.bytes[slot], ring.queue[slot])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sender of `sent` bytes on a link with a 1000-byte buffer, and its ring full of
    /// returns of 100 bytes arriving at 10, 20, 30, ...
    fn full_ring(sent: u64) -> (CreditSender, CreditReturns) {
        let mut credits = CreditSender::new(1, [1000], 1).unwrap();
        credits.on_send(0, 0, sent);
        let mut r = CreditReturns::new(1).unwrap();
        for k in 0..SLOTS as u64 {
            assert!(r.push(0, 10 * (k + 1), 0, 100));
        }
        (credits, r)
    }

    #[test]
    fn returns_arrive_in_order_and_overflow_is_refused() {
        let (mut credits, mut r) = full_ring(900);
        assert!(!r.push(0, 1000, 0, 100), "a full ring refuses");
        assert_eq!(r.next_at(0), Some(10));
        assert_eq!(r.arrived(0, 25), 200);
        r.collect(0, 25, &mut credits);
        assert_eq!(credits.credits(0, 0), 100 + 200);
        assert_eq!(r.pending(0, 0), 100 * (SLOTS as u64 - 2));
        assert!(r.push(0, 2000, 0, 100), "collecting made room");
        assert!(r.push(0, 2000, 0, 100));
        assert!(!r.push(0, 2000, 0, 100), "the ring wraps around and is full again");
        assert_eq!(r.next_at(0), Some(30));
        r.collect(0, u64::MAX, &mut credits);
        assert_eq!(credits.credits(0, 0), 100 + 100 * (SLOTS as u64 + 2) as i64);
        assert_eq!(r.next_at(0), None);
    }

    #[test]
    fn a_full_ring_makes_room_from_returns_that_have_arrived() {
        let (mut credits, mut r) = full_ring(1000);
        assert!(!r.push_collecting(0, 100, 0, 100, 5, &mut credits), "none has arrived: still full");
        assert!(r.push_collecting(0, 100, 0, 100, 25, &mut credits));
        assert_eq!(credits.credits(0, 0), 200, "the two that had arrived were collected");
        assert_eq!(r.pending(0, 0), 100 * (SLOTS as u64 - 1));
    }

    #[test]
    fn a_blocked_sender_is_reported_once() {
        let mut r = CreditReturns::new(2).unwrap();
        assert!(!r.unblock(0), "nobody waits yet");
        assert_eq!(r.block(0), None, "nothing on its way: the next push must wake it");
        assert!(r.push(0, 50, 0, 100));
        assert!(r.unblock(0));
        assert!(!r.unblock(0), "woken once");
        assert_eq!(r.block(1), None);
        assert!(r.push(1, 70, 0, 100));
        assert_eq!(r.block(1), Some(70), "a return on its way wakes it at its arrival");
    }
}
