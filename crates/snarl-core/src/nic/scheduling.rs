//! Which packet a NIC sends next: its source queue in FIFO order, or, under congestion
//! control (or `nic.scheduling = "round_robin"`), round robin by flow with the flow's
//! rate (or window), credits and pauses deciding who may go, and control packets (CNPs,
//! BECNs, ACKs, NACKs) ahead of data.

use super::policy::{ByDcqcn, ByIbcc, ByPriority, Isolating, Opaque, Pacing, SendClass};
use super::Nics;
use crate::cc::{AnyCongestionControl, CongestionControl, FlowKey};
use crate::kernel::Event;
use crate::memory::prefetch::prefetch_at;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::{PacketKind, NIL};
use std::collections::VecDeque;

/// A control packet waiting at its NIC (a CNP, BECN, ACK or NACK): back to the sender
/// `dst` for flow (dst, this host, qp).
#[derive(Clone, Copy, Debug)]
pub(super) struct ControlRequest {
    pub(super) dst: u32,
    pub(super) qp: u32,
    pub(super) vc: u8,
    pub(super) kind: PacketKind,
}

/// The flow scheduler's state and, under congestion control, the control and the
/// per-host queues of control packets.
pub(super) struct FlowScheduler {
    pub(super) cc: Option<AnyCongestionControl>,
    pub(super) control: Vec<VecDeque<ControlRequest>>,
    /// Per host: position in the source queue (from its head) where the scheduler's next
    /// round-robin scan starts.
    pub(super) next_position: Vec<u32>,
    /// Per host, with several streams: the stream whose turn comes next (empty with one).
    pub(super) next_stream: Vec<u8>,
    /// Per source-queue slot (as `Nics::queue`): whether its message is the oldest queued
    /// one of its flow, the only one of the flow that may send (per-flow order).
    pub(super) flow_head: Vec<bool>,
}

impl Nics {
    /// Sends the next packet of the head message if the link, the cap and the credits
    /// allow it.
    pub fn try_inject(&mut self, ctx: &mut Ctx, host: u32) {
        // What an in-order receiver's NAKs ask for goes first (go-back-N).
        if self.sequence.as_deref().is_some_and(|s| s.has_work(host as usize)) && self.try_resend(ctx, host) {
            return;
        }
        if let Some(mut scheduler) = self.scheduler.take() {
            let iso = self.isolation.is_some();
            match (iso, scheduler.cc.as_ref()) {
                (false, Some(AnyCongestionControl::Dcqcn(_))) => {
                    self.try_inject_by_flow::<ByPriority, ByDcqcn>(ctx, host, &mut scheduler)
                }
                (false, Some(AnyCongestionControl::Ibcc(_))) => {
                    self.try_inject_by_flow::<ByPriority, ByIbcc>(ctx, host, &mut scheduler)
                }
                (false, _) => self.try_inject_by_flow::<ByPriority, Opaque>(ctx, host, &mut scheduler),
                (true, Some(AnyCongestionControl::Dcqcn(_))) => {
                    self.try_inject_by_flow::<Isolating, ByDcqcn>(ctx, host, &mut scheduler)
                }
                (true, Some(AnyCongestionControl::Ibcc(_))) => {
                    self.try_inject_by_flow::<Isolating, ByIbcc>(ctx, host, &mut scheduler)
                }
                (true, _) => self.try_inject_by_flow::<Isolating, Opaque>(ctx, host, &mut scheduler),
            }
            self.scheduler = Some(scheduler);
            return;
        }
        let (h, now) = (host as usize, ctx.now);
        if self.queue_len[h] == 0 {
            return;
        }
        if self.link_free_at[h] > now {
            self.wake(ctx, host, self.link_free_at[h]);
            return;
        }
        if self.next_allowed[h] > now {
            self.wake(ctx, host, self.next_allowed[h]);
            return;
        }
        ctx.host_returns.collect(h, now, &mut self.credits);
        let slot = h * self.queue_capacity + self.queue_head[h] as usize;
        let mid = self.queue[slot];
        let mut m = ctx.messages[mid];
        if self.sequence.as_deref().is_some_and(|s| s.holds(host, m.dst, m.qp)) {
            return; // Its flow goes back first; its last retransmission wakes the NIC.
        }
        let size = self.mtu.min(m.unsent);
        m.vc = self.injection_vc(h, m.vc, size + self.wire.header);
        if !self.credits.can_send(h, m.vc as usize, size + self.wire.header) {
            self.wait_for_credits(ctx, host);
            return;
        }
        let class = self.class_of(h, m.dst, m.qp, m.vc, now);
        if self.pause.is_paused(h, class as usize) {
            return; // The resume frame will retry.
        }
        let message = &mut ctx.messages[mid];
        message.unsent -= size;
        message.outstanding += 1;
        if message.unsent == 0 {
            message.outstanding -= 1; // The message is fully segmented.
            self.queue_head[h] = self.slot_after_head(h, 1) as u32;
            self.left_queue(h, m.stream);
        }
        let serialise = self.launch_data(ctx, host, m, mid, size, class);
        if self.queue_len[h] > 0 {
            self.wake_at[h] = now + serialise;
            ctx.schedule(now + serialise, Event::HostWake { host });
        }
    }

    /// `try_inject` under per-flow congestion control: a control packet if one waits
    /// (CNP, BECN, ACK, NACK), else the next
    /// packet of the first eligible flow (see the module documentation).
    /// (`C`: the class each flow goes in, a congested-flow class under isolation; `P`:
    /// how the congestion control is asked, inlined for the built-in ones.)
    fn try_inject_by_flow<C: SendClass, P: Pacing>(&mut self, ctx: &mut Ctx, host: u32, scheduler: &mut FlowScheduler) {
        let (h, now) = (host as usize, ctx.now);
        if self.queue_len[h] == 0 && scheduler.control[h].is_empty() {
            return;
        }
        if self.link_free_at[h] > now {
            self.wake(ctx, host, self.link_free_at[h]);
            return;
        }
        ctx.host_returns.collect(h, now, &mut self.credits);
        let mut credit_blocked = false;
        if let Some(&cnp) = scheduler.control[h].front() {
            credit_blocked = !self.credits.can_send(h, cnp.vc as usize, self.control_frame);
            if !credit_blocked && !self.pause.is_paused(h, cnp.vc as usize) {
                scheduler.control[h].pop_front();
                let group = ctx.stats.host_group[h];
                let (serialise, _) =
                    self.launch(ctx, host, cnp.dst, self.control_frame, cnp.qp, NIL, group, cnp.vc, cnp.vc, cnp.kind);
                if cnp.kind.notifies_congestion() {
                    ctx.trace(TraceEvent::CnpSent { group });
                } else {
                    ctx.trace(TraceEvent::Acknowledgement { group, delivered: false });
                }
                if self.queue_len[h] > 0 || !scheduler.control[h].is_empty() {
                    self.wake(ctx, host, now + serialise);
                }
                return;
            }
            // Blocked on credits or paused on its VC: data on other VCs may go meanwhile.
        }
        let len = self.queue_len[h] as usize;
        if len == 0 {
            if credit_blocked {
                self.wait_for_credits(ctx, host);
            }
            return;
        }
        if self.next_allowed[h] > now {
            self.wake(ctx, host, self.next_allowed[h]);
            return;
        }
        let (capacity, head) = (self.queue_capacity, self.queue_head[h] as usize);
        let base = h * capacity;
        let slot = |pos: usize| base + (head + pos) % capacity;
        let start = scheduler.next_position[h] as usize % len;
        let control = P::control(scheduler.cc.as_ref());
        let mut earliest = u64::MAX;
        let mut chosen = None;
        // With several streams (the parts of a mix), the streams take turns, a packet
        // each, as a generator of independent streams hands them to the adapter: a
        // stream of many flows (uniform) gets no more of the link than one of a single
        // flow (to a hotspot). Within a stream, its flows go round robin.
        let streams = self.streams;
        let first_stream = scheduler.next_stream.get(h).map_or(0, |&s| s as usize);
        'streams: for turn in 0..streams {
            let stream = (first_stream + turn) % streams;
            // Positions from `start` round to `start - 1`, and their slots, stepped
            // without a division: most are skipped at once, behind their flow's head.
            let (mut next_pos, mut next_slot) = (start, slot(start));
            for _ in 0..len {
                let (pos, at) = (next_pos, next_slot);
                if pos + 1 == len {
                    (next_pos, next_slot) = (0, slot(0));
                } else {
                    next_pos = pos + 1;
                    next_slot = if at + 1 == base + capacity { base } else { at + 1 };
                }
                if !scheduler.flow_head[at] {
                    continue; // An older message of its flow goes first.
                }
                let m = &ctx.messages[self.queue[at]];
                if streams > 1 && (m.stream as usize).min(streams - 1) != stream {
                    continue;
                }
                let flow = FlowKey { src: host, dst: m.dst, qp: m.qp };
                let at = control.map_or(0, |c| P::next_send(c, &flow));
                if at > now {
                    earliest = earliest.min(at);
                    continue;
                }
                let frame = self.mtu.min(m.unsent) + self.wire.header;
                let vc = self.injection_vc(h, m.vc, frame);
                if !self.credits.can_send(h, vc as usize, frame) {
                    credit_blocked = true;
                    continue;
                }
                let class = C::class(self, h, m.dst, m.qp, vc, now);
                if self.pause.is_paused(h, class as usize) {
                    continue; // The resume frame will retry.
                }
                chosen = Some((pos, vc));
                if streams > 1 {
                    scheduler.next_stream[h] = ((stream + 1) % streams) as u8;
                }
                break 'streams;
            }
        }
        let Some((pos, vc)) = chosen else {
            if earliest != u64::MAX {
                self.wake(ctx, host, earliest);
            }
            if credit_blocked {
                self.wait_for_credits(ctx, host);
            }
            return;
        };
        let mid = self.queue[slot(pos)];
        let mut m = ctx.messages[mid];
        m.vc = vc;
        let size = self.mtu.min(m.unsent);
        let message = &mut ctx.messages[mid];
        message.unsent -= size;
        message.outstanding += 1;
        if message.unsent == 0 {
            // The message is fully segmented; the next message of its flow, if any,
            // becomes the flow's head.
            message.outstanding -= 1;
            if let Some(next) = (pos + 1..len).find(|&j| {
                let other = &ctx.messages[self.queue[slot(j)]];
                other.dst == m.dst && other.qp == m.qp
            }) {
                scheduler.flow_head[slot(next)] = true;
            }
            for j in pos..len - 1 {
                self.queue[slot(j)] = self.queue[slot(j + 1)];
                scheduler.flow_head[slot(j)] = scheduler.flow_head[slot(j + 1)];
            }
            self.left_queue(h, m.stream);
            scheduler.next_position[h] = pos as u32;
        } else {
            scheduler.next_position[h] = pos as u32 + 1;
        }
        let class = C::class(self, h, m.dst, m.qp, m.vc, now);
        let serialise = self.launch_data_apart(ctx, host, m, mid, size, class);
        if let Some(cc) = scheduler.cc.as_mut() {
            cc.on_sent(ctx, &FlowKey { src: host, dst: m.dst, qp: m.qp }, size, serialise);
        }
        if self.queue_len[h] > 0 || !scheduler.control[h].is_empty() {
            self.wake(ctx, host, now + serialise);
        }
    }

    /// Prefetches what an injection attempt of `host` reads first: its source queue's
    /// length, its link and cap, its credits.
    #[inline(always)]
    pub fn prefetch(&self, host: u32) {
        let h = host as usize;
        prefetch_at(&self.queue_len, h);
        prefetch_at(&self.link_free_at, h);
        prefetch_at(&self.next_allowed, h);
        self.credits.prefetch(h);
    }

    /// Once the first lines of `host` are cached: prefetches the message at the head of
    /// its source queue and the return ring its credits come back by.
    #[inline(always)]
    pub fn prefetch_dependent(&self, ctx: &Ctx, host: u32) {
        let h = host as usize;
        ctx.host_returns.prefetch(h);
        if self.queue_len.get(h).is_some_and(|&len| len > 0) {
            if let Some(&head) = self.queue_head.get(h) {
                if let Some(&message) = self.queue.get(h * self.queue_capacity + head as usize) {
                    ctx.messages.prefetch(message);
                }
            }
        }
    }

    pub fn wake_event(&mut self, ctx: &mut Ctx, host: u32) {
        if self.wake_at[host as usize] == ctx.now {
            self.wake_at[host as usize] = 0;
        }
        self.try_inject(ctx, host);
    }

    /// A packet of `host` waits for credits: the next return wakes the NIC, whether on
    /// its way already or sent later.
    pub(super) fn wait_for_credits(&mut self, ctx: &mut Ctx, host: u32) {
        if let Some(at) = ctx.host_returns.block(host as usize) {
            self.wake(ctx, host, at);
        }
    }

    pub(super) fn wake(&mut self, ctx: &mut Ctx, host: u32, at: u64) {
        let pending = self.wake_at[host as usize];
        if pending != 0 && pending >= ctx.now && pending <= at {
            return;
        }
        self.wake_at[host as usize] = at;
        ctx.schedule(at, Event::HostWake { host });
    }
}
