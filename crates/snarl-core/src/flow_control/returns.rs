//! Credit messages travelling back along links. They are held per link, in arrival order
//! (a link returns credits in the order its receiver freed the space), instead of as
//! events: a sender collects the ones that have arrived when it next looks at its
//! credits, and is woken for one only when it is blocked waiting for it.

use super::CreditSender;

#[derive(Clone, Copy, Debug, Default)]
struct Return {
    at: u64,
    bytes: u32,
    vc: u8,
}

/// Returns in flight, a small ring per link. A full ring refuses a return; the caller
/// then sends it as an event instead.
pub struct CreditReturns {
    ring: Vec<Return>,
    head: Vec<u8>,
    len: Vec<u8>,
    /// Senders waiting for credits: the next return pushed for them must wake them.
    blocked: Vec<bool>,
}

const SLOTS: usize = 8;

impl CreditReturns {
    pub fn new(links: usize) -> CreditReturns {
        CreditReturns {
            ring: vec![Return::default(); links * SLOTS],
            head: vec![0; links],
            len: vec![0; links],
            blocked: vec![false; links],
        }
    }

    /// Queues `bytes` of credit for (link, vc) arriving at `at`; `false` if the ring is full.
    #[inline]
    pub fn push(&mut self, link: usize, at: u64, vc: usize, bytes: u64) -> bool {
        let len = self.len[link] as usize;
        if len == SLOTS {
            return false;
        }
        let slot = (self.head[link] as usize + len) % SLOTS;
        debug_assert!(len == 0 || self.ring[link * SLOTS + (slot + SLOTS - 1) % SLOTS].at <= at, "out of order");
        self.ring[link * SLOTS + slot] = Return { at, bytes: bytes as u32, vc: vc as u8 };
        self.len[link] += 1;
        true
    }

    /// The sender of `link` waits for credits: returns on their way will not wake it,
    /// so this wakes it at the first, if any. A later `push` reports that it waits.
    #[inline]
    pub fn block(&mut self, link: usize) -> Option<u64> {
        self.blocked[link] = true;
        self.next_at(link)
    }

    /// Whether the sender of `link` was waiting for credits (and no longer is).
    #[inline]
    pub fn unblock(&mut self, link: usize) -> bool {
        std::mem::take(&mut self.blocked[link])
    }

    /// Arrival time of the next return on `link`.
    #[inline]
    pub fn next_at(&self, link: usize) -> Option<u64> {
        (self.len[link] > 0).then(|| self.ring[link * SLOTS + self.head[link] as usize].at)
    }

    /// Hands every return that has arrived by `now` to `credits`.
    #[inline]
    pub fn collect(&mut self, link: usize, now: u64, credits: &mut CreditSender) {
        while self.len[link] > 0 {
            let r = self.ring[link * SLOTS + self.head[link] as usize];
            if r.at > now {
                break;
            }
            credits.on_credit(link, r.vc as usize, r.bytes as u64);
            self.head[link] = ((self.head[link] as usize + 1) % SLOTS) as u8;
            self.len[link] -= 1;
        }
    }

    /// Bytes on `link` that have arrived by `now` but are not collected yet.
    #[inline]
    pub fn arrived(&self, link: usize, now: u64) -> u64 {
        self.iter(link).filter(|r| r.at <= now).map(|r| r.bytes as u64).sum()
    }

    /// Bytes of (link, vc) still travelling or uncollected.
    pub fn pending(&self, link: usize, vc: usize) -> u64 {
        self.iter(link).filter(|r| r.vc as usize == vc).map(|r| r.bytes as u64).sum()
    }

    fn iter(&self, link: usize) -> impl Iterator<Item = Return> + '_ {
        let (head, len) = (self.head[link] as usize, self.len[link] as usize);
        (0..len).map(move |k| self.ring[link * SLOTS + (head + k) % SLOTS])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_arrive_in_order_and_overflow_is_refused() {
        let mut credits = CreditSender::new([1000], 1);
        credits.on_send(0, 0, 900);
        let mut r = CreditReturns::new(1);
        for k in 0..SLOTS as u64 {
            assert!(r.push(0, 10 * (k + 1), 0, 100));
        }
        assert!(!r.push(0, 1000, 0, 100), "a full ring refuses");
        assert_eq!(r.next_at(0), Some(10));
        assert_eq!(r.arrived(0, 25), 200);
        r.collect(0, 25, &mut credits);
        assert_eq!(credits.credits(0, 0), 300);
        assert_eq!(r.pending(0, 0), 600);
        assert_eq!(r.next_at(0), Some(30));
        r.collect(0, u64::MAX, &mut credits);
        assert_eq!(credits.credits(0, 0), 900);
        assert_eq!(r.next_at(0), None);
    }

    #[test]
    fn a_blocked_sender_is_reported_once() {
        let mut r = CreditReturns::new(2);
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
