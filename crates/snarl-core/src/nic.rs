//! Endpoints: a bounded source queue of messages the workload posts (`Nics::post`),
//! segmentation into packets, per-host injection caps (set by the workload) and the
//! flow-control view of the host link (credits, or the priorities PFC has paused).
//!
//! The source queue is bounded as on a real NIC: a message posted to a full queue is
//! counted (`source_queue_full`) and dropped at the source, never stored, so memory
//! stays bounded at and beyond saturation.
//!
//! By default a host sends its queued messages in strict FIFO order. With
//! `nic.scheduling = "round_robin"`, or with per-flow congestion control (DCQCN), the NIC
//! schedules its queued messages round robin by flow: it sends the next packet of the
//! first queued message (starting after the one served last) whose flow's rate allows it
//! now and whose VC has credits, only the oldest queued message of a flow being eligible
//! (per-flow order); it wakes at the earliest next-send time otherwise. A slow or
//! throttled flow thus never blocks the other flows of its host. With DCQCN it also sends
//! congestion notification packets (CNPs) from a small per-host queue, ahead of data.

use crate::cc::{AnyCongestionControl, CongestionControl, FlowKey};
use crate::flow_control::{CreditReturns, CreditSender, PauseState, UNLIMITED};
use crate::kernel::{Ctx, Event, Timer, HOST_TARGET};
use crate::memory::fallible::{collected, filled, with_capacity, zeroed};
use crate::observe::TraceEvent;
use crate::packet::{Message, Packet, Tag, CNP, ECN_MARKED, NIL};
use crate::routing::hash::qp_number;
use crate::topology::{Endpoint, Topology};
use crate::units::{Rate, SerialTime};
use std::collections::VecDeque;
use strength_reduce::StrengthReducedUsize;

pub struct Nics {
    vcs: usize,
    /// `vcs` as a divisor: a flow's VC is a hash modulo `vcs`, once per message.
    vc_divisor: StrengthReducedUsize,
    mtu: u64,
    queue_capacity: usize,
    /// Far end of each host link: a global switch input port or `HOST_TARGET | host`.
    peer: Vec<u32>,
    rate: Vec<Rate>,
    serializer: Vec<SerialTime>,
    latency: Vec<u64>,
    link_free_at: Vec<u64>,
    /// Injection cap of each host as a fraction of its link (1.0: uncapped).
    cap: Vec<f64>,
    /// Earliest time the host's injection cap allows its next packet.
    next_allowed: Vec<u64>,
    wake_at: Vec<u64>,
    credits: CreditSender,
    pause: PauseState,
    /// Ring buffers of message handles, `queue_capacity` slots per host.
    queue: Vec<u32>,
    queue_head: Vec<u32>,
    queue_len: Vec<u32>,
    /// The per-flow scheduler (and congestion control), if configured.
    scheduler: Option<Box<FlowScheduler>>,
}

/// Size of a congestion notification packet on the wire.
pub const CNP_BYTES: u64 = 64;

/// A CNP waiting at its NIC: back to the sender `dst` for flow (dst, this host, qp).
#[derive(Clone, Copy, Debug)]
struct CnpRequest {
    dst: u32,
    qp: u32,
    vc: u8,
}

/// The flow scheduler's state and, with DCQCN, its flows and CNP queues.
struct FlowScheduler {
    cc: Option<AnyCongestionControl>,
    cnps: Vec<VecDeque<CnpRequest>>,
    /// Per host: position in the source queue (from its head) where the scheduler's next
    /// round-robin scan starts.
    next_position: Vec<u32>,
    /// Per source-queue slot (as `Nics::queue`): whether its message is the oldest queued
    /// one of its flow, the only one of the flow that may send (per-flow order).
    flow_head: Vec<bool>,
}

impl Nics {
    /// `port_of(switch, port)` gives the global id of a switch port;
    /// `switch_input_capacity` is the credit budget per VC of a host link (`None`: the
    /// link is not credit-controlled).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topo: &impl Topology,
        port_of: impl Fn(usize, usize) -> u32,
        vcs: usize,
        switch_input_capacity: Option<u64>,
        mtu: u64,
        queue_capacity: usize,
        measure_from: u64,
    ) -> crate::Result<Nics> {
        let hosts = topo.num_hosts();
        let what = "the NICs";
        let mut peer = with_capacity(hosts, what)?;
        let mut rate = with_capacity(hosts, what)?;
        let mut latency = with_capacity(hosts, what)?;
        for h in 0..hosts {
            peer.push(match topo.attachment(h) {
                Endpoint::Switch { switch, port } => port_of(switch as usize, port as usize),
                Endpoint::Host(other) => HOST_TARGET | other,
                Endpoint::Unconnected => NIL,
            });
            let link = topo.host_link(h);
            rate.push(link.rate);
            latency.push(link.latency.0);
        }
        let capacity = (0..hosts).map(|h| match topo.attachment(h) {
            Endpoint::Switch { .. } => switch_input_capacity.map_or(UNLIMITED, |c| c as i64),
            Endpoint::Host(_) => UNLIMITED,
            Endpoint::Unconnected => 0,
        });
        Ok(Nics {
            vcs,
            vc_divisor: StrengthReducedUsize::new(vcs.max(1)),
            mtu,
            queue_capacity,
            peer,
            serializer: collected(hosts, rate.iter().map(|&r| SerialTime::new(r)), what)?,
            rate,
            latency,
            link_free_at: zeroed(hosts, what)?,
            cap: filled(hosts, 1.0, what)?,
            next_allowed: zeroed(hosts, what)?,
            wake_at: zeroed(hosts, what)?,
            credits: CreditSender::new(hosts, capacity, vcs)?,
            pause: PauseState::new(hosts, vcs, measure_from)?,
            queue: filled(hosts * queue_capacity, NIL, "the NICs' source queues")?,
            queue_head: zeroed(hosts, what)?,
            queue_len: zeroed(hosts, what)?,
            scheduler: None,
        })
    }

    /// Schedules queued messages round robin by flow instead of FIFO.
    pub fn enable_flow_scheduling(&mut self) -> crate::Result<()> {
        let hosts = self.peer.len();
        if self.scheduler.is_none() {
            let what = "the NICs' flow scheduler";
            self.scheduler = Some(Box::new(FlowScheduler {
                cc: None,
                cnps: filled(hosts, VecDeque::new(), what)?,
                next_position: zeroed(hosts, what)?,
                flow_head: zeroed(hosts * self.queue_capacity, what)?,
            }));
        }
        Ok(())
    }

    /// Congestion control `cc` at every NIC (with flow scheduling).
    pub fn enable_congestion_control(&mut self, cc: AnyCongestionControl) -> crate::Result<()> {
        self.enable_flow_scheduling()?;
        if let Some(scheduler) = self.scheduler.as_deref_mut() {
            scheduler.cc = Some(cc);
        }
        Ok(())
    }

    pub fn rate(&self, host: usize) -> Rate {
        self.rate[host]
    }

    /// Caps the injection of `host` at `cap` (a fraction of its link, in (0, 1]; 1.0:
    /// uncapped) from its next packet on.
    pub fn set_cap(&mut self, host: u32, cap: f64) {
        self.cap[host as usize] = cap;
    }

    /// Whether the source queue of `host` has room for another message.
    #[inline]
    pub fn has_room(&self, host: u32) -> bool {
        (self.queue_len[host as usize] as usize) < self.queue_capacity
    }

    /// Queues a message of `size` bytes from `host` to `dst` on queue pair `qp` (its VC
    /// is a hash of the flow) and sends if it can. Returns `false` when the source queue
    /// was full: the message is counted (`source_queue_full`) and dropped.
    pub fn post(&mut self, ctx: &mut Ctx, host: u32, dst: u32, size: u64, qp: u32, tag: Tag) -> bool {
        let h = host as usize;
        let accepted = self.has_room(host);
        if accepted {
            let vc = (qp_number(host, dst, qp) as usize % self.vc_divisor) as u8;
            let id = ctx.messages.alloc(Message {
                src: host,
                dst,
                tag,
                qp,
                created: ctx.now,
                size,
                unsent: size,
                outstanding: 1,
                vc,
                next_free: NIL,
            });
            let slot = self.slot_after_head(h, self.queue_len[h] as usize);
            self.queue[h * self.queue_capacity + slot] = id;
            if let Some(scheduler) = &mut self.scheduler {
                let (base, head, capacity) =
                    (h * self.queue_capacity, self.queue_head[h] as usize, self.queue_capacity);
                let older = (0..self.queue_len[h] as usize).any(|j| {
                    let other = &ctx.messages[self.queue[base + (head + j) % capacity]];
                    other.dst == dst && other.qp == qp
                });
                scheduler.flow_head[base + slot] = !older;
            }
            self.queue_len[h] += 1;
        }
        let group = ctx.stats.host_group[h];
        ctx.trace(TraceEvent::Generated { group, bytes: size, accepted });
        self.try_inject(ctx, host);
        accepted
    }

    /// Sends the next packet of the head message if the link, the cap and the credits
    /// allow it.
    pub fn try_inject(&mut self, ctx: &mut Ctx, host: u32) {
        if let Some(mut scheduler) = self.scheduler.take() {
            self.try_inject_by_flow(ctx, host, &mut scheduler);
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
        let m = ctx.messages[mid];
        let size = self.mtu.min(m.unsent);
        if !self.credits.can_send(h, m.vc as usize, size) {
            self.wait_for_credits(ctx, host);
            return;
        }
        if self.pause.is_paused(h, m.vc as usize) {
            return; // The resume frame will retry.
        }
        let message = &mut ctx.messages[mid];
        message.unsent -= size;
        message.outstanding += 1;
        if message.unsent == 0 {
            message.outstanding -= 1; // The message is fully segmented.
            self.queue_head[h] = self.slot_after_head(h, 1) as u32;
            self.queue_len[h] -= 1;
        }
        let serialise = self.launch_data(ctx, host, m, mid, size);
        if self.queue_len[h] > 0 {
            self.wake_at[h] = now + serialise;
            ctx.schedule(now + serialise, Event::HostWake { host });
        }
    }

    /// `try_inject` under per-flow congestion control: a CNP if one waits, else the next
    /// packet of the first eligible flow (see the module documentation).
    fn try_inject_by_flow(&mut self, ctx: &mut Ctx, host: u32, scheduler: &mut FlowScheduler) {
        let (h, now) = (host as usize, ctx.now);
        if self.queue_len[h] == 0 && scheduler.cnps[h].is_empty() {
            return;
        }
        if self.link_free_at[h] > now {
            self.wake(ctx, host, self.link_free_at[h]);
            return;
        }
        ctx.host_returns.collect(h, now, &mut self.credits);
        let mut credit_blocked = false;
        if let Some(&cnp) = scheduler.cnps[h].front() {
            credit_blocked = !self.credits.can_send(h, cnp.vc as usize, CNP_BYTES);
            if !credit_blocked && !self.pause.is_paused(h, cnp.vc as usize) {
                scheduler.cnps[h].pop_front();
                let group = ctx.stats.host_group[h];
                let serialise = self.launch(ctx, host, cnp.dst, CNP_BYTES, cnp.qp, NIL, group, cnp.vc, CNP);
                ctx.trace(TraceEvent::CnpSent { group });
                if self.queue_len[h] > 0 || !scheduler.cnps[h].is_empty() {
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
        let mut earliest = u64::MAX;
        let mut chosen = None;
        for k in 0..len {
            let pos = if start + k >= len { start + k - len } else { start + k };
            if !scheduler.flow_head[slot(pos)] {
                continue; // An older message of its flow goes first.
            }
            let m = &ctx.messages[self.queue[slot(pos)]];
            let at = scheduler.cc.as_ref().map_or(0, |cc| cc.next_send(&FlowKey { src: host, dst: m.dst, qp: m.qp }));
            if at > now {
                earliest = earliest.min(at);
                continue;
            }
            if !self.credits.can_send(h, m.vc as usize, self.mtu.min(m.unsent)) {
                credit_blocked = true;
                continue;
            }
            if self.pause.is_paused(h, m.vc as usize) {
                continue; // The resume frame will retry.
            }
            chosen = Some(pos);
            break;
        }
        let Some(pos) = chosen else {
            if earliest != u64::MAX {
                self.wake(ctx, host, earliest);
            }
            if credit_blocked {
                self.wait_for_credits(ctx, host);
            }
            return;
        };
        let mid = self.queue[slot(pos)];
        let m = ctx.messages[mid];
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
            self.queue_len[h] -= 1;
            scheduler.next_position[h] = pos as u32;
        } else {
            scheduler.next_position[h] = pos as u32 + 1;
        }
        let serialise = self.launch_data(ctx, host, m, mid, size);
        if let Some(cc) = scheduler.cc.as_mut() {
            cc.on_sent(ctx, &FlowKey { src: host, dst: m.dst, qp: m.qp }, size);
        }
        if self.queue_len[h] > 0 || !scheduler.cnps[h].is_empty() {
            self.wake(ctx, host, now + serialise);
        }
    }

    /// Puts the next `size` bytes of message `mid` (`m`) on host `host`'s link: launches
    /// the packet, paces a capped group, and counts the injection. Returns the
    /// serialisation time.
    fn launch_data(&mut self, ctx: &mut Ctx, host: u32, m: Message, mid: u32, size: u64) -> u64 {
        let group = ctx.stats.host_group[host as usize];
        let serialise = self.launch(ctx, host, m.dst, size, m.qp, mid, group, m.vc, 0);
        let cap = self.cap[host as usize];
        if cap < 1.0 {
            self.next_allowed[host as usize] = ctx.now + (serialise as f64 / cap).round() as u64;
        }
        ctx.trace(TraceEvent::Injected { group });
        serialise
    }

    /// Puts a packet of `host` on its link now; returns its serialisation time.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        ctx: &mut Ctx,
        host: u32,
        dst: u32,
        size: u64,
        qp: u32,
        message: u32,
        group: u16,
        vc: u8,
        flags: u8,
    ) -> u64 {
        let (h, now) = (host as usize, ctx.now);
        let serialise = self.serializer[h].time(size);
        let arrival = now + self.latency[h];
        let packet = ctx.packets.alloc(Packet {
            next: NIL,
            src: host,
            dst,
            size: size as u32,
            qp,
            message,
            group,
            vc,
            out_vc: vc,
            out_port: 0,
            hops: 1,
            via: NIL,
            flags,
            injected: now,
            tail_at: arrival + serialise,
            ready_at: 0,
        });
        self.credits.on_send(h, vc as usize, size);
        self.link_free_at[h] = now + serialise;
        ctx.trace(TraceEvent::Hop);
        *ctx.last_progress = now;
        let far = self.peer[h];
        if far & HOST_TARGET != 0 {
            ctx.send_to_host(arrival + serialise, packet);
        } else {
            ctx.schedule(arrival, Event::Arrive { port: far, packet });
        }
        serialise
    }

    /// The tail of `packet` reached its destination NIC, which decides what its flags
    /// mean: a CNP goes to the sender's congestion control, a marked data packet to the
    /// receiver's (notification point) before it is delivered.
    pub fn receive(&mut self, ctx: &mut Ctx, packet: u32) {
        let flags = ctx.packets[packet].flags;
        if flags & CNP != 0 {
            self.receive_cnp(ctx, packet);
            return;
        }
        if flags & ECN_MARKED != 0 {
            self.notify(ctx, packet);
        }
        ctx.deliver(ctx.now, packet);
    }

    /// Notification point: the marked data packet `packet` is being delivered. Its
    /// destination queues a CNP for the flow if the congestion control asks for one
    /// (DCQCN: unless one went out less than the CNP interval ago).
    fn notify(&mut self, ctx: &mut Ctx, packet: u32) {
        let Some(scheduler) = self.scheduler.as_deref_mut() else { return };
        let Some(cc) = scheduler.cc.as_mut() else { return };
        let p = ctx.packets[packet];
        let (src, dst, qp) = (p.src, p.dst, p.qp);
        if !cc.on_marked(ctx, FlowKey { src, dst, qp }) {
            return;
        }
        // On the flow's (injection) VC.
        let vc = ctx.messages[p.message].vc;
        scheduler.cnps[dst as usize].push_back(CnpRequest { dst: src, qp, vc });
        self.try_inject(ctx, dst);
    }

    /// Reaction point: the CNP `packet` reached the sender of its flow.
    fn receive_cnp(&mut self, ctx: &mut Ctx, packet: u32) {
        let p = ctx.packets[packet];
        ctx.trace(TraceEvent::CnpDelivered { group: p.group });
        *ctx.last_progress = ctx.now;
        ctx.packets.release(packet);
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            let line = self.rate[p.dst as usize].0 as f64;
            cc.on_notification(ctx, FlowKey { src: p.dst, dst: p.src, qp: p.qp }, line);
        }
    }

    /// A congestion-control timer fired.
    pub fn cc_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            cc.on_timer(ctx, timer);
        }
    }

    pub fn wake_event(&mut self, ctx: &mut Ctx, host: u32) {
        if self.wake_at[host as usize] == ctx.now {
            self.wake_at[host as usize] = 0;
        }
        self.try_inject(ctx, host);
    }

    pub fn credit(&mut self, ctx: &mut Ctx, host: u32, vc: usize, bytes: u64) {
        self.credits.on_credit(host as usize, vc, bytes);
        self.try_inject(ctx, host);
    }

    /// A PFC pause (`on`) or resume frame for priority `vc` reached `host`.
    pub fn pause(&mut self, ctx: &mut Ctx, host: u32, vc: usize, on: bool) {
        if on {
            ctx.trace(TraceEvent::PauseReceived);
        }
        if self.pause.set(host as usize, vc, on, ctx.now) && !on {
            self.try_inject(ctx, host);
        }
    }

    /// The paused priorities of every host link.
    pub fn pause_state(&self) -> &PauseState {
        &self.pause
    }

    /// Source-queue slot `offset` places after the head of host `h`'s queue (`offset` at
    /// most the capacity; no division on the per-packet path).
    #[inline]
    fn slot_after_head(&self, h: usize, offset: usize) -> usize {
        let slot = self.queue_head[h] as usize + offset;
        if slot >= self.queue_capacity {
            slot - self.queue_capacity
        } else {
            slot
        }
    }

    /// A packet of `host` waits for credits: the next return wakes the NIC, whether on
    /// its way already or sent later.
    fn wait_for_credits(&mut self, ctx: &mut Ctx, host: u32) {
        if let Some(at) = ctx.host_returns.block(host as usize) {
            self.wake(ctx, host, at);
        }
    }

    fn wake(&mut self, ctx: &mut Ctx, host: u32, at: u64) {
        let pending = self.wake_at[host as usize];
        if pending != 0 && pending >= ctx.now && pending <= at {
            return;
        }
        self.wake_at[host as usize] = at;
        ctx.schedule(at, Event::HostWake { host });
    }

    /// Credit counters within [0, capacity], also counting the credits on their way back.
    pub fn check_invariants(&self, returns: &CreditReturns) -> Result<(), String> {
        self.credits.check_bounds().map_err(|e| format!("host {e}"))?;
        for host in 0..self.peer.len() {
            for vc in 0..self.vcs {
                let held = self.credits.credits(host, vc) + returns.pending(host, vc) as i64;
                if held > self.credits.capacity(host, vc) {
                    return Err(format!("host {host} vc {vc}: {held} credit bytes exceed the buffer"));
                }
            }
        }
        Ok(())
    }
}
