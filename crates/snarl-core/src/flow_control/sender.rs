//! The sender's side of a link's flow control, per (link, queue): the credits in hand,
//! the credits on their way back, the paused flags. It answers "may I send", hears "I
//! sent" and takes the feedback that arrives.

use super::{CreditReturns, CreditSender, Feedback, PauseState};
use crate::error::Result;

/// What became of a credit return handed to [`Sender::return_credit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carried {
    /// In the link's return ring; the sender collects it when it needs it.
    InRing,
    /// In the ring, and the sender was blocked waiting for credits: wake it at arrival.
    InRingWake,
    /// The ring is full of returns still on their way: send it as an event.
    Full,
}

/// The senders of many links (a fabric's switch outputs).
pub struct Sender {
    credits: CreditSender,
    /// Credits on their way back to each link's sender.
    returns: CreditReturns,
    /// Paused priorities of each link (PFC).
    pause: PauseState,
}

impl Sender {
    /// `capacity[link]`: the receiver's buffer per queue (`UNLIMITED` for receivers that
    /// never push back, 0 for unwired links); `queues` per link.
    pub fn new(
        links: usize,
        capacity: impl IntoIterator<Item = i64>,
        queues: usize,
        measure_from: u64,
    ) -> Result<Sender> {
        Ok(Sender {
            credits: CreditSender::new(links, capacity, queues)?,
            returns: CreditReturns::new(links)?,
            pause: PauseState::new(links, queues, measure_from)?,
        })
    }

    /// Prefetches what a send on `link` reads first: its credits in hand.
    #[inline(always)]
    pub fn prefetch(&self, link: usize) {
        self.credits.prefetch(link);
    }

    /// Prefetches the return ring of `link`, which a credit returned to it is put in.
    #[inline(always)]
    pub fn prefetch_returns(&self, link: usize) {
        self.returns.prefetch(link);
    }

    /// Whether (link, queue) may send `bytes` at `now`: credits for all of it, and not
    /// paused. Returned credits are collected only when those in hand do not suffice:
    /// collecting reads the link's return ring, and most transmissions find credits in
    /// hand (only this sender spends them, so collecting later changes nothing).
    #[inline(always)]
    pub fn may_send(&mut self, link: usize, queue: usize, bytes: u64, now: u64) -> bool {
        self.has_credits(link, queue, bytes, now) && !self.pause.is_paused(link, queue)
    }

    #[inline(always)]
    fn has_credits(&mut self, link: usize, queue: usize, bytes: u64, now: u64) -> bool {
        self.credits.can_send(link, queue, bytes) || self.collect_and_check(link, queue, bytes, now)
    }

    /// `has_credits` when those in hand fall short: collect the returns that arrived.
    #[inline(never)]
    fn collect_and_check(&mut self, link: usize, queue: usize, bytes: u64, now: u64) -> bool {
        self.returns.collect(link, now, &mut self.credits);
        self.credits.can_send(link, queue, bytes)
    }

    /// Whether (link, queue) cannot send now: paused, or without credits in hand for a
    /// byte (returns not collected yet aside). Reads only.
    pub fn is_blocked(&self, link: usize, queue: usize) -> bool {
        !self.credits.can_send(link, queue, 1) || self.pause.is_paused(link, queue)
    }

    /// `bytes` went out on (link, queue).
    #[inline]
    pub fn on_send(&mut self, link: usize, queue: usize, bytes: u64) {
        self.credits.on_send(link, queue, bytes);
    }

    /// Feedback for `link` arrived at `now` (as an event); `true` if the sender may now
    /// be able to send what it could not.
    #[inline]
    pub fn on_feedback(&mut self, link: usize, feedback: Feedback, now: u64) -> bool {
        match feedback {
            Feedback::Credit { queue, bytes } => {
                self.credits.on_credit(link, queue as usize, bytes as u64);
                true
            }
            Feedback::Pause { queue, on } => self.pause.set(link, queue as usize, on, now) && !on,
            Feedback::Isolate { .. } => false,
        }
    }

    /// The receiver of `link` returns `bytes` of `queue`, arriving at `at`: into the
    /// link's return ring if it has room (making room from returns that have arrived by
    /// `now` first).
    #[inline(always)]
    pub fn return_credit(&mut self, link: usize, at: u64, queue: usize, bytes: u64, now: u64) -> Carried {
        if !self.returns.push_collecting(link, at, queue, bytes, now, &mut self.credits) {
            Carried::Full
        } else if self.returns.unblock(link) {
            Carried::InRingWake
        } else {
            Carried::InRing
        }
    }

    /// The sender of `link` waits for credits: the next return put in its ring wakes it;
    /// returns already on their way do not, so this gives the first one's arrival.
    #[inline]
    pub fn block(&mut self, link: usize) -> Option<u64> {
        self.returns.block(link)
    }

    /// Bytes sent on `link` (all queues) that the receiver holds as far as the sender can
    /// tell at `now` (returns that have arrived count as back).
    #[inline]
    pub fn held_downstream(&self, link: usize, now: u64) -> u64 {
        self.credits.in_use(link) - self.returns.arrived(link, now)
    }

    /// Credits in hand for (link, queue).
    pub fn credits(&self, link: usize, queue: usize) -> i64 {
        self.credits.credits(link, queue)
    }

    /// Credits of (link, queue) the sender could spend at `now`: in hand, plus returns that
    /// have arrived but are not collected yet. Reads only.
    pub fn credits_at(&self, link: usize, queue: usize, now: u64) -> i64 {
        self.credits.credits(link, queue) + self.returns.arrived_for(link, queue, now) as i64
    }

    /// Credits in hand plus those on their way back, for (link, queue).
    pub fn credits_held(&self, link: usize, queue: usize) -> i64 {
        self.credits.credits(link, queue) + self.returns.pending(link, queue) as i64
    }

    /// Every credit counter within [0, capacity].
    pub fn check_bounds(&self) -> std::result::Result<(), String> {
        self.credits.check_bounds()
    }

    /// The paused priorities of every link.
    pub fn pause_state(&self) -> &PauseState {
        &self.pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_pauses_and_returns_decide_what_may_be_sent() {
        let mut s = Sender::new(2, [1000, 1000], 2, 0).unwrap();
        assert!(s.may_send(0, 1, 1000, 0));
        s.on_send(0, 1, 600);
        assert!(!s.may_send(0, 1, 600, 0), "400 credits left");
        assert_eq!(s.held_downstream(0, 0), 600);
        assert_eq!(s.return_credit(0, 50, 1, 600, 0), Carried::InRing);
        assert_eq!(s.held_downstream(0, 60), 0, "the return has arrived");
        assert!(!s.may_send(0, 1, 600, 40), "not yet");
        assert!(s.may_send(0, 1, 600, 50), "collected on demand");
        assert_eq!(s.credits(0, 1), 1000);
        assert!(!s.on_feedback(0, Feedback::Pause { queue: 0, on: true }, 70), "a pause frees nothing");
        assert!(!s.may_send(0, 0, 1, 70) && s.may_send(0, 1, 1, 70) && s.may_send(1, 0, 1, 70));
        assert!(s.on_feedback(0, Feedback::Pause { queue: 0, on: false }, 80));
        assert!(s.may_send(0, 0, 1, 80));
        s.on_send(1, 0, 1000);
        assert_eq!(s.block(1), None, "nothing on its way");
        assert_eq!(s.return_credit(1, 90, 0, 500, 80), Carried::InRingWake);
        assert!(s.on_feedback(1, Feedback::Credit { queue: 0, bytes: 500 }, 90));
        assert_eq!(s.credits_held(1, 0), 1000);
        assert!(s.check_bounds().is_ok());
    }
}
