//! A Slingshot-like per-pair congestion control (`congestion_control.type = "per_pair"`).
//!
//! HPE Slingshot is published to track congestion per pair of endpoints and to throttle
//! only the pairs that contribute to a congested point, leaving the others of the same
//! hosts and links at their rate. This is a model of that behaviour, not the vendor's
//! algorithm (which is not public): a window of bytes in flight per pair, cut by marked
//! acknowledgements and grown by unmarked ones.
//!
//! * **Switch.** A data packet leaving an output queue that still holds more than
//!   `threshold` bytes behind it is marked. This is the marking the control implies
//!   (`PerPairConfig::marking`): RED at dequeue with Kmin = Kmax = `threshold`, which
//!   marks every packet above the threshold and never draws (there is nothing between).
//! * **Destination.** Every data packet is acknowledged at once with a 64-byte ACK (the
//!   receive path), which echoes the packet's mark ([`Acknowledgement::AckMarked`]): the
//!   marked ACK is the notification, and no separate one is sent.
//! * **Source.** Each (source host, destination host) pair holds a window: the bytes it may
//!   have unacknowledged, shared by every queue pair between the two hosts. A flow may
//!   send its next packet while its pair's bytes in flight plus an MTU fit the window
//!   (else `cc::BLOCKED`: its pair's next ACK wakes the NIC).
//!   - A marked ACK cuts the window to `cut_factor` of itself, never below one MTU, at
//!     most once per round trip: after a cut, marked ACKs of the packets sent before it
//!     are ignored, and the next cut waits for the ACK of a packet sent after it.
//!   - Unmarked ACKs worth a whole window (counted since the window last changed or a
//!     marked ACK came) add one MTU (additive increase).
//!   - The window never exceeds its cap, 2 × the host link's rate × `base_rtt` (at least
//!     one MTU), and a pair starts at the cap: line rate from the first packet, without
//!     slow start, as Slingshot sends.
//!   - Every window is a whole number of MTUs (the cap and the cuts round down to one):
//!     a window holds as many MTU packets as it says. Windows of a few packets are the
//!     rule in a fabric of short round trips, and there a fraction would decide the
//!     share: two pairs with windows of 3.99 and 4.01 MTUs would send 3 and 4 packets a
//!     round trip, and fall into step so, one always cut more than the other.
//!   - A pair with nothing in flight for `idle_reset` is forgotten, and starts at the cap
//!     again; one with nothing in flight and its window at the cap is forgotten at once
//!     (it holds nothing a fresh pair would not).
//!
//! ACKs are matched with the pair's packets in the order these were sent (a ring of their
//! sizes). A pair's packets of one size (every packet but a message's last, of an MTU),
//! or arriving in order, are matched exactly; otherwise an ACK overtaking an older one
//! of another size is counted as that size, and the bytes in flight are exact again once
//! both have come back.
//!
//! State: a [`FlowTable`] of the pairs that have any (packets in flight, or a window
//! below its cap); an idle pair below its cap has one `IDLE_TIMER` pending, owned by its
//! slot, whose epoch makes it stale once the pair is forgotten. Every window change is
//! reported (`TraceEvent::WindowChanged`; a cut counts as the run's `window_cuts`).

use super::{Acknowledgement, CongestionControl, FlowKey, FlowTable, BLOCKED};
use crate::config::{Config, PerPairConfig};
use crate::kernel::{Event, Timer, TimerKind};
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::Packet;
use std::collections::VecDeque;

/// The code of the idle timer (`TimerKind::CongestionControl`); its owner is the pair's
/// slot.
pub const IDLE_TIMER: u8 = 0;

/// What every pair's window obeys, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub mtu: u64,
    /// The window's cap, and a new pair's window.
    pub cap: u64,
    /// The share of its window a cut keeps.
    pub cut_factor: f64,
}

/// One pair's window and what it has in flight: the state machine, without time.
#[derive(Clone, Debug, PartialEq)]
pub struct PairWindow {
    window: u64,
    in_flight: u64,
    /// Sizes of the unacknowledged packets, oldest first.
    sizes: VecDeque<u32>,
    /// Packets sent, and ACKs received.
    sent: u64,
    acked: u64,
    /// `sent` at the last cut: a marked ACK cuts again only once `acked` exceeds it, i.e.
    /// once a packet sent after the cut has been acknowledged (a round trip later).
    guard: u64,
    /// Bytes acknowledged unmarked since the window last changed or a marked ACK came.
    run: u64,
}

impl PairWindow {
    /// A new pair: its window at the cap, nothing in flight.
    pub fn new(cap: u64) -> PairWindow {
        PairWindow { window: cap, in_flight: 0, sizes: VecDeque::new(), sent: 0, acked: 0, guard: 0, run: 0 }
    }

    /// Back to a new pair's state, keeping the ring's room.
    pub fn reset(&mut self, cap: u64) {
        self.sizes.clear();
        let sizes = std::mem::take(&mut self.sizes);
        *self = PairWindow { sizes, ..PairWindow::new(cap) };
    }

    /// The bytes the pair may have unacknowledged.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// The bytes it has unacknowledged.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Whether a packet of up to `mtu` bytes fits the window now.
    #[inline]
    pub fn fits(&self, mtu: u64) -> bool {
        self.in_flight + mtu <= self.window
    }

    /// A packet of `bytes` left.
    pub fn on_sent(&mut self, bytes: u64) {
        self.in_flight += bytes;
        self.sizes.push_back(bytes as u32);
        self.sent += 1;
    }

    /// The ACK of the pair's oldest unacknowledged packet came back, echoing a mark or
    /// not. Returns the new window if it changed.
    pub fn on_ack(&mut self, marked: bool, p: &Params) -> Option<u64> {
        let bytes = self.sizes.pop_front().map_or(0, u64::from);
        self.in_flight = self.in_flight.saturating_sub(bytes);
        self.acked += 1;
        let from = self.window;
        if marked {
            self.run = 0;
            if self.acked <= self.guard {
                return None; // sent before the last cut: this round trip was cut already
            }
            self.guard = self.sent;
            // Whole MTUs: a window of 3.99 MTUs holds 3 packets, one of 4.01 four, and two
            // pairs whose windows straddled a multiple so would share a link 3 to 4.
            let cut = (from as f64 * p.cut_factor) as u64;
            self.window = (cut / p.mtu * p.mtu).max(p.mtu).min(from);
        } else {
            self.run += bytes;
            if self.run < from {
                return None;
            }
            self.run = 0;
            self.window = (from + p.mtu).min(p.cap);
        }
        (self.window != from).then_some(self.window)
    }
}

/// A pair with state: its window, and since when it has had nothing in flight.
struct Pair {
    window: PairWindow,
    idle_since: u64,
    timer_set: bool,
}

/// The per-pair control at every NIC.
pub struct PerPair {
    params: Params,
    idle_reset: u64,
    /// By (source host, destination host).
    pairs: FlowTable<(u32, u32), Pair>,
}

impl PerPair {
    /// The control of `config`'s `per_pair` section in `config`'s fabric (its host link
    /// rate and MTU size the cap).
    pub fn new(per_pair: &PerPairConfig, config: &Config) -> PerPair {
        let params = Params { mtu: config.nic.mtu.0, cap: per_pair.cap(config), cut_factor: per_pair.cut_factor };
        PerPair::with(params, per_pair.idle_reset.0)
    }

    /// The control with `params`, forgetting pairs idle for `idle_reset` ps.
    pub fn with(params: Params, idle_reset: u64) -> PerPair {
        PerPair { params, idle_reset: idle_reset.max(1), pairs: FlowTable::default() }
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// The window of `flow`'s pair (the cap for a pair without state).
    pub fn window(&self, flow: &FlowKey) -> u64 {
        self.pairs.find(&(flow.src, flow.dst)).map_or(self.params.cap, |p| self.pairs.state(p).window.window())
    }

    /// Forgets the pair in `slot`, whose window goes back to the cap.
    fn forget(&mut self, ctx: &mut Ctx, slot: u32) {
        let ((src, dst), from) = (self.pairs.key(slot), self.pairs.state(slot).window.window());
        self.pairs.release(slot);
        if from != self.params.cap {
            ctx.trace(TraceEvent::WindowChanged { src, dst, window: self.params.cap, cut: false });
        }
    }
}

impl CongestionControl for PerPair {
    /// 0 while the pair's window has room for a packet, else `BLOCKED`.
    #[inline(always)]
    fn next_send(&self, flow: &FlowKey) -> u64 {
        if self.pairs.is_empty() {
            return 0;
        }
        match self.pairs.find(&(flow.src, flow.dst)) {
            Some(p) if !self.pairs.state(p).window.fits(self.params.mtu) => BLOCKED,
            _ => 0,
        }
    }

    /// The packet counts against its pair's window until its ACK comes back.
    #[inline]
    fn on_sent(&mut self, _ctx: &mut Ctx, flow: &FlowKey, bytes: u64, _serialise: u64) {
        let cap = self.params.cap;
        let slot = self.pairs.find_or_reset(
            (flow.src, flow.dst),
            || Pair { window: PairWindow::new(cap), idle_since: 0, timer_set: false },
            |pair| {
                pair.window.reset(cap);
                (pair.idle_since, pair.timer_set) = (0, false);
            },
        );
        self.pairs.state_mut(slot).window.on_sent(bytes);
    }

    /// The mark travels back in the packet's ACK (`on_data`): no notification.
    fn on_marked(&mut self, _ctx: &mut Ctx, _flow: FlowKey) -> bool {
        false
    }

    /// Never called: the control sends no notification.
    fn on_notification(&mut self, _ctx: &mut Ctx, _flow: FlowKey, _line: f64) {}

    /// The idle timer of the pair in slot `timer.owner`: forgets the pair if it has had
    /// nothing in flight for `idle_reset`; looks again when it will have, if it is idle
    /// since later; a pair sending again sets a new timer when it is next idle.
    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        let idle_reset = self.idle_reset;
        let Some(pair) = self.pairs.current(timer.owner, timer.epoch) else { return };
        pair.timer_set = false;
        if pair.window.in_flight() > 0 {
            return;
        }
        let due = pair.idle_since + idle_reset;
        if ctx.now < due {
            pair.timer_set = true;
            ctx.schedule(due, Event::Timer(timer));
            return;
        }
        self.forget(ctx, timer.owner);
    }

    fn wants_receipts(&self) -> bool {
        true
    }

    /// Every data packet is acknowledged, its mark echoed.
    fn on_data(&mut self, _ctx: &mut Ctx, _flow: FlowKey, packet: &Packet) -> Option<Acknowledgement> {
        Some(if packet.kind.is_marked() { Acknowledgement::AckMarked } else { Acknowledgement::Ack })
    }

    /// The pair's window hears the ACK; a pair left with nothing in flight is forgotten
    /// at once at its cap, else once it has stayed idle for `idle_reset`.
    fn on_ack(&mut self, ctx: &mut Ctx, flow: FlowKey, ack: Acknowledgement) {
        let Some(slot) = self.pairs.find(&(flow.src, flow.dst)) else { return };
        let (params, idle_reset) = (self.params, self.idle_reset);
        let epoch = self.pairs.epoch(slot);
        let pair = self.pairs.state_mut(slot);
        let from = pair.window.window();
        if let Some(to) = pair.window.on_ack(ack == Acknowledgement::AckMarked, &params) {
            let (src, dst, cut) = (flow.src, flow.dst, to < from);
            ctx.trace(TraceEvent::WindowChanged { src, dst, window: to, cut });
        }
        if pair.window.in_flight() > 0 {
            return;
        }
        if pair.window.window() == params.cap {
            self.pairs.release(slot);
            return;
        }
        pair.idle_since = ctx.now;
        if !pair.timer_set {
            pair.timer_set = true;
            let timer = Timer { owner: slot, epoch, kind: TimerKind::CongestionControl(IDLE_TIMER) };
            ctx.schedule(ctx.now + idle_reset, Event::Timer(timer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_world::World;

    const MTU: u64 = 4096;
    /// 12 MTUs, as `PerPairConfig::cap` rounds it.
    const CAP: u64 = 49_152;

    fn params() -> Params {
        Params { mtu: MTU, cap: CAP, cut_factor: 0.5 }
    }

    /// A window that has sent `n` MTU packets.
    fn sent(n: usize) -> PairWindow {
        let mut w = PairWindow::new(CAP);
        (0..n).for_each(|_| w.on_sent(MTU));
        w
    }

    #[test]
    fn a_new_pair_starts_at_the_cap_and_fills_it() {
        let mut w = PairWindow::new(CAP);
        assert_eq!((w.window(), w.in_flight()), (CAP, 0));
        let mut packets = 0;
        while w.fits(MTU) {
            w.on_sent(MTU);
            packets += 1;
        }
        assert_eq!(packets, 12, "12 packets of 4 KiB fill the cap");
        assert!(w.in_flight() <= w.window());
        assert_eq!(w.on_ack(false, &params()), None, "an unmarked ACK at the cap changes nothing");
        assert!(w.fits(MTU), "and frees a packet's room");
    }

    #[test]
    fn a_marked_ack_cuts_once_per_round_trip() {
        let p = params();
        let mut w = sent(10);
        assert_eq!(w.on_ack(true, &p), Some(CAP / 2), "the first marked ACK halves the window");
        // The nine other packets were sent before the cut: their marks are the same
        // congestion, already answered.
        for _ in 0..9 {
            assert_eq!(w.on_ack(true, &p), None);
        }
        assert_eq!(w.window(), CAP / 2);
        // A packet sent after the cut comes back marked: a round trip later, a new cut.
        w.on_sent(MTU);
        w.on_sent(MTU);
        assert_eq!(w.on_ack(true, &p), Some(CAP / 4));
        assert_eq!(w.on_ack(true, &p), None, "its companion, sent before this cut");
        assert_eq!(w.in_flight(), 0);
    }

    #[test]
    fn cuts_never_go_below_one_mtu() {
        let p = params();
        let mut w = PairWindow::new(CAP);
        let mut windows = vec![];
        for _ in 0..10 {
            w.on_sent(MTU);
            if let Some(to) = w.on_ack(true, &p) {
                windows.push(to);
            }
        }
        assert_eq!(windows, vec![6 * MTU, 3 * MTU, MTU], "halved (1.5 MTUs rounds down), then held at the floor");
        assert_eq!(w.window(), MTU);
        assert!(w.fits(MTU), "one packet may always be in flight");
        let factor = Params { cut_factor: 0.01, ..p };
        let mut w = sent(1);
        assert_eq!(w.on_ack(true, &factor), Some(MTU), "a deep cut stops at the floor");
    }

    #[test]
    fn cuts_keep_whole_mtus() {
        let mut w = PairWindow::new(CAP);
        w.on_sent(MTU);
        assert_eq!(w.on_ack(true, &Params { cut_factor: 0.7, ..params() }), Some(8 * MTU), "8.4 MTUs: 8");
        let mut w = PairWindow { window: 5 * MTU, ..sent(1) };
        assert_eq!(w.on_ack(true, &params()), Some(2 * MTU), "2.5 MTUs: 2");
    }

    #[test]
    fn a_reset_window_is_a_new_one() {
        let p = params();
        let mut w = sent(5);
        w.on_ack(true, &p);
        (0..4).for_each(|_| {
            w.on_ack(false, &p);
        });
        w.reset(CAP);
        assert_eq!(w, PairWindow::new(CAP));
    }

    #[test]
    fn a_window_of_unmarked_acks_adds_one_mtu() {
        let p = params();
        let mut w = sent(1);
        w.on_ack(true, &p);
        let low = CAP / 2;
        assert_eq!(w.window(), low);
        // Six packets of 4 KiB complete a window of 6 MTUs.
        for _ in 0..6 {
            w.on_sent(MTU);
        }
        for _ in 0..5 {
            assert_eq!(w.on_ack(false, &p), None);
        }
        assert_eq!(w.on_ack(false, &p), Some(low + MTU));
    }

    #[test]
    fn a_marked_ack_restarts_the_run_even_when_it_does_not_cut() {
        let p = params();
        let mut w = sent(7);
        assert_eq!(w.on_ack(true, &p), Some(CAP / 2));
        for _ in 0..5 {
            assert_eq!(w.on_ack(false, &p), None);
        }
        // Five of the six MTUs are in; the last packet sent before the cut comes back
        // marked: no cut, but the run of unmarked ACKs is broken.
        assert_eq!(w.on_ack(true, &p), None);
        for _ in 0..6 {
            w.on_sent(MTU);
        }
        for _ in 0..5 {
            assert_eq!(w.on_ack(false, &p), None, "a whole window again, from the marked ACK on");
        }
        assert_eq!(w.on_ack(false, &p), Some(CAP / 2 + MTU));
    }

    #[test]
    fn growth_stops_at_the_cap() {
        let p = params();
        let mut w = sent(1);
        w.on_ack(true, &p);
        let mut highest = 0;
        for _ in 0..2_000 {
            w.on_sent(MTU);
            w.on_ack(false, &p);
            highest = highest.max(w.window());
        }
        assert_eq!(highest, CAP, "back at the cap, and never above");
        assert_eq!(w.window(), CAP);
    }

    #[test]
    fn acks_take_back_the_sizes_in_sending_order() {
        let p = params();
        let mut w = PairWindow::new(CAP);
        w.on_sent(MTU);
        w.on_sent(100);
        w.on_sent(MTU);
        assert_eq!(w.in_flight(), 2 * MTU + 100);
        w.on_ack(false, &p);
        assert_eq!(w.in_flight(), MTU + 100);
        w.on_ack(false, &p);
        assert_eq!(w.in_flight(), MTU);
        w.on_ack(false, &p);
        assert_eq!(w.in_flight(), 0);
        assert_eq!(w.on_ack(false, &p), None, "an ACK for nothing takes nothing");
        assert_eq!(w.in_flight(), 0);
    }

    #[test]
    fn the_window_stays_within_its_bounds_under_random_acks() {
        use rand::{Rng, SeedableRng};
        let p = Params { mtu: MTU, cap: CAP, cut_factor: 0.7 };
        let mut w = PairWindow::new(CAP);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut cuts = 0;
        for _ in 0..100_000 {
            if w.fits(MTU) && rng.random_bool(0.6) {
                w.on_sent(rng.random_range(1..=MTU));
            } else if w.in_flight() > 0 {
                let from = w.window();
                if let Some(to) = w.on_ack(rng.random_bool(0.1), &p) {
                    cuts += (to < from) as u32;
                }
            }
            assert!((MTU..=CAP).contains(&w.window()), "{}", w.window());
        }
        assert!(cuts > 100, "{cuts}");
    }

    const FLOW: FlowKey = FlowKey { src: 1, dst: 2, qp: 0 };
    const IDLE: u64 = 10_000_000;

    #[test]
    fn the_queue_pairs_of_two_hosts_share_one_window() {
        let mut cc = PerPair::with(params(), IDLE);
        let mut w = World::new();
        let other_qp = FlowKey { qp: 3, ..FLOW };
        for i in 0..CAP / MTU {
            let flow = if i % 2 == 0 { FLOW } else { other_qp };
            assert_eq!(cc.next_send(&flow), 0);
            cc.on_sent(&mut w.ctx(0), &flow, MTU, 1);
        }
        assert_eq!(cc.next_send(&FLOW), BLOCKED, "the pair's window is full");
        assert_eq!(cc.next_send(&other_qp), BLOCKED, "for every queue pair of it");
        assert_eq!(cc.next_send(&FlowKey { dst: 3, ..FLOW }), 0, "another destination is another pair");
        assert_eq!(cc.next_send(&FlowKey { src: 0, ..FLOW }), 0, "another source too");
        cc.on_ack(&mut w.ctx(10), other_qp, Acknowledgement::Ack);
        assert_eq!(cc.next_send(&FLOW), 0, "an ACK of either queue pair frees room for both");
    }

    #[test]
    fn the_destination_echoes_the_mark() {
        let mut cc = PerPair::with(params(), IDLE);
        let mut w = World::new();
        let plain = Packet { kind: crate::packet::PacketKind::DATA, ..Default::default() };
        let marked = Packet { kind: crate::packet::PacketKind::ECN_MARKED, ..Default::default() };
        assert_eq!(cc.on_data(&mut w.ctx(0), FLOW, &plain), Some(Acknowledgement::Ack));
        assert_eq!(cc.on_data(&mut w.ctx(0), FLOW, &marked), Some(Acknowledgement::AckMarked));
        assert!(!cc.on_marked(&mut w.ctx(0), FLOW), "no separate notification");
        assert!(cc.wants_receipts());
    }

    #[test]
    fn an_idle_pair_is_forgotten_after_idle_reset_and_one_at_its_cap_at_once() {
        let mut cc = PerPair::with(params(), IDLE);
        let mut w = World::new();
        cc.on_sent(&mut w.ctx(0), &FLOW, MTU, 1);
        cc.on_ack(&mut w.ctx(100), FLOW, Acknowledgement::Ack);
        assert!(cc.pairs.is_empty(), "nothing in flight at the cap: nothing to remember");
        assert!(w.queue.pop().is_none(), "and no timer");
        cc.on_sent(&mut w.ctx(200), &FLOW, MTU, 1);
        cc.on_ack(&mut w.ctx(300), FLOW, Acknowledgement::AckMarked);
        assert_eq!(cc.window(&FLOW), CAP / 2, "idle below its cap: remembered");
        // Busy again before the timer, and idle again later: the timer looks again then.
        cc.on_sent(&mut w.ctx(1_000), &FLOW, MTU, 1);
        assert_eq!(w.run_timers(&mut cc, 300 + IDLE), 1);
        assert_eq!(cc.window(&FLOW), CAP / 2, "busy when the timer fired");
        cc.on_ack(&mut w.ctx(2_000_000 + IDLE), FLOW, Acknowledgement::Ack);
        assert_eq!(w.run_timers(&mut cc, 2_000_000 + 2 * IDLE - 1), 0);
        assert_eq!(cc.window(&FLOW), CAP / 2);
        assert_eq!(w.run_timers(&mut cc, 2_000_000 + 2 * IDLE), 1);
        assert_eq!(cc.window(&FLOW), CAP, "forgotten: back at the cap");
        assert!(cc.pairs.is_empty());
        assert!(w.queue.pop().is_none());
    }

    #[test]
    fn an_ack_rescheduling_idleness_moves_the_timer_on() {
        let mut cc = PerPair::with(params(), IDLE);
        let mut w = World::new();
        cc.on_sent(&mut w.ctx(0), &FLOW, MTU, 1);
        cc.on_ack(&mut w.ctx(100), FLOW, Acknowledgement::AckMarked);
        cc.on_sent(&mut w.ctx(200), &FLOW, MTU, 1);
        cc.on_ack(&mut w.ctx(5_000_000), FLOW, Acknowledgement::Ack);
        // The timer set at 100 fires at 100 + IDLE, finds the pair idle since 5 us and
        // looks again at 5 us + IDLE.
        assert_eq!(w.run_timers(&mut cc, 100 + IDLE), 1);
        assert_eq!(cc.window(&FLOW), CAP / 2);
        assert_eq!(w.run_timers(&mut cc, 5_000_000 + IDLE), 1);
        assert_eq!(cc.window(&FLOW), CAP);
    }
}
