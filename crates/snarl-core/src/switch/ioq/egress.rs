//! The output side: output queues under their watchers (ECN or FECN marking, probes), the link's
//! choice of the next packet, transmission and link wake-ups, and the hosts that drain
//! slower than their link (`nic.receive_cap`).

use super::discipline::{Fifo, Isolating, QueueDiscipline};
use super::ports::Port;
use super::queues::NO_PROBE;
use super::IoqFabric;
use crate::cc::{Marking, QueueState};
use crate::flow_control::{Carried, Feedback, Sender, UNLIMITED};
use crate::kernel::Event;
use crate::memory::fallible::zeroed;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::NIL;
use crate::routing::Departure;
use crate::units::{Rate, SerialTime};

/// Hosts that drain their input slower than their link (`nic.receive_cap`), modelled at
/// the switch output that faces each host, without events of their own. That output holds
/// credits for the host's receive buffer, taken to be one switch input buffer per queue
/// (`switch.input_buffer`): an InfiniBand host adapter advertises credits for its receive
/// buffer as a switch input port does, and sizing it so gives the last link the credit
/// loop of every other link, so that a slow host backs traffic up into the fabric as a
/// congested switch port would (snarl has no key of its own for it). A packet sent to the
/// host drains from the end of the previous one's drain, or from its head's arrival if
/// later, at the cap, and never ends before its tail has arrived; then it is delivered,
/// and its credits travel back to the output in one link latency, through the output's
/// return ring as a switch's credits do.
#[derive(Default)]
pub(super) struct HostDrain {
    /// Time to drain a byte at the cap.
    time: Option<SerialTime>,
    /// Per host: when the drain of what it has received ends (empty: no cap).
    until: Vec<u64>,
}

impl HostDrain {
    /// Drains at `cap` for `hosts` hosts, or none without a cap.
    pub(super) fn new(cap: Option<Rate>, hosts: usize) -> crate::Result<HostDrain> {
        let Some(cap) = cap else { return Ok(HostDrain::default()) };
        Ok(HostDrain { time: Some(SerialTime::new(cap)), until: zeroed(hosts, "the hosts' receive drains")? })
    }

    /// Whether hosts drain slower than their links.
    #[inline]
    pub(super) fn on(&self) -> bool {
        !self.until.is_empty()
    }

    /// A packet of `size` bytes whose head reaches `host` at `arrival` and whose tail at
    /// `tail_at`: when it has drained (the tail's arrival, for no host or no cap).
    fn drain(&mut self, host: Option<u32>, arrival: u64, size: u64, tail_at: u64) -> u64 {
        let (Some(host), Some(time)) = (host, self.time) else { return tail_at };
        let until = &mut self.until[host as usize];
        *until = (arrival.max(*until) + time.time(size)).max(tail_at);
        *until
    }
}

/// What a marking policy sees of an egress queue: its bytes, and its port's state, worked
/// out only if the policy asks.
struct MarkedQueue<'a> {
    bytes: u64,
    /// Bytes waiting for each output queue in its switch's VoQs (empty without VoQs).
    waiting: &'a [u64],
    /// The queue (`port * queues + queue`) and the queues per port.
    queue: usize,
    queues: usize,
    ports: &'a [Port],
    sender: &'a Sender,
    now: u64,
    /// Whether congestion isolation points at the packet (true without isolation).
    isolation_points_here: bool,
}

impl QueueState for MarkedQueue<'_> {
    #[inline]
    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn blocked(&self) -> bool {
        self.sender.is_blocked(self.queue / self.queues, self.queue % self.queues)
    }

    fn faces_host(&self) -> bool {
        self.ports[self.queue / self.queues].peer.host().is_some()
    }

    fn waiting(&self) -> u64 {
        self.waiting.get(self.queue).copied().unwrap_or(0)
    }

    fn credits(&self) -> u64 {
        let credits = self.sender.credits_at(self.queue / self.queues, self.queue % self.queues, self.now);
        if credits >= UNLIMITED / 2 {
            u64::MAX
        } else {
            credits.max(0) as u64
        }
    }

    fn isolation_points_here(&self) -> bool {
        self.isolation_points_here
    }
}

impl IoqFabric {
    /// What a marking policy sees waiting for output queue (`gp`, `queue`).
    #[cfg(test)]
    pub(super) fn marked_waiting(&self, gp: usize, queue: usize) -> u64 {
        self.marked_queue(gp * self.queues + queue, 0, true).waiting()
    }

    /// Releases the output-buffer space of a packet whose tail has left.
    #[inline]
    pub(super) fn settle(&mut self, o: usize, now: u64) -> bool {
        let (bytes, queue) = self.leaving(o, now);
        if bytes == 0 {
            return false;
        }
        self.output[o * self.queues + queue].used -= bytes;
        self.ports[o].releasing_bytes = 0;
        true
    }

    /// Puts `id` into output queue `oq` under the eyes of its watchers: the marking
    /// policy (at enqueue) and a queue probe.
    #[inline(never)]
    pub(super) fn enqueue_watched(&mut self, ctx: &mut Ctx, oq: usize, id: u32) {
        if self.isolation.is_some() {
            self.isolation_enqueue(ctx, oq, id);
        }
        self.consult_marking(ctx, oq, id, true);
        self.output[oq].fifo.push(ctx.packets, id);
        if self.probe[oq] != NO_PROBE {
            ctx.trace(TraceEvent::QueueLength { probe: self.probe[oq], bytes: self.output[oq].fifo.bytes });
        }
    }

    /// Takes the head of output queue `oq` for the link under the eyes of its watchers:
    /// the marking policy (at dequeue) and a queue probe.
    #[inline(never)]
    pub(super) fn dequeue_watched(&mut self, ctx: &mut Ctx, oq: usize) -> u32 {
        let id = self.output[oq].fifo.pop(ctx.packets);
        if self.probe[oq] != NO_PROBE {
            ctx.trace(TraceEvent::QueueLength { probe: self.probe[oq], bytes: self.output[oq].fifo.bytes });
        }
        self.consult_marking(ctx, oq, id, false);
        if self.isolation.is_some() {
            self.isolation_dequeue(ctx, oq, id);
        }
        id
    }

    /// What a marking policy sees of output queue `oq` at `now`.
    fn marked_queue(&self, oq: usize, now: u64, isolation_points_here: bool) -> MarkedQueue<'_> {
        MarkedQueue {
            isolation_points_here,
            bytes: self.output[oq].fifo.bytes,
            waiting: &self.voqs.waiting,
            queue: oq,
            queues: self.queues,
            ports: &self.ports,
            sender: &self.sender,
            now,
        }
    }

    /// Lets the marking policy, if any, judge packet `id` as it enters (`entering`) or
    /// leaves output queue `oq`, and reports a mark.
    #[inline]
    fn consult_marking(&mut self, ctx: &mut Ctx, oq: usize, id: u32, entering: bool) {
        if self.isolation.is_some() {
            return self.consult::<Isolating>(ctx, oq, id, entering);
        }
        self.consult::<Fifo>(ctx, oq, id, entering)
    }

    /// `consult_marking` under discipline `D` (under congestion isolation the policy
    /// learns whether isolation points at the packet, and a mark says whether it did).
    #[inline(always)]
    fn consult<D: QueueDiscipline>(&mut self, ctx: &mut Ctx, oq: usize, id: u32, entering: bool) {
        // Taken out while it judges: the policy is mutable, the queue's view borrows the rest.
        let Some(mut marking) = self.marking.take() else { return };
        let points = D::marking_points(self, oq, &ctx.packets[id], ctx.now);
        let (queue, packet) = (self.marked_queue(oq, ctx.now, points), &mut ctx.packets[id]);
        let marked = if entering { marking.on_enqueue(&queue, packet) } else { marking.on_dequeue(&queue, packet) };
        self.marking = Some(marking);
        if marked {
            let queues = self.queues;
            let isolated = D::marked_isolated(self, oq, &ctx.packets[id]);
            ctx.trace(TraceEvent::EcnMarked { port: (oq / queues) as u32, queue: (oq % queues) as u8, isolated });
        }
    }

    /// Starts the next transmission of output `port` if its link is free (the frequent
    /// early out, link busy, is inlined at the callers).
    #[inline]
    pub(super) fn try_transmit(&mut self, ctx: &mut Ctx, port: u32) {
        let o = port as usize;
        if self.ports[o].link_free_at > ctx.now {
            self.wake(ctx, port, self.ports[o].link_free_at);
            return;
        }
        self.transmit(ctx, port);
    }

    /// `try_transmit` with the link free: send the first eligible packet, or wait.
    #[inline]
    pub(super) fn transmit(&mut self, ctx: &mut Ctx, port: u32) {
        if self.isolation.is_some() {
            return self.transmit_from::<Isolating>(ctx, port);
        }
        self.transmit_from::<Fifo>(ctx, port)
    }

    /// `transmit` under discipline `D`.
    #[inline(never)]
    fn transmit_from<D: QueueDiscipline>(&mut self, ctx: &mut Ctx, port: u32) {
        let (o, n, now) = (port as usize, self.queues, ctx.now);
        let released = self.settle(o, now);
        let mut blocked = false;
        let mut chosen = None;
        let mut earliest = u64::MAX;
        let mut earliest_queue = 0;
        let mut nonempty = 0;
        let first = D::first_queue(self, o);
        for k in 0..n {
            let queue = if first + k >= n { first + k - n } else { first + k };
            let head = self.output[o * n + queue].fifo.head;
            if head == NIL {
                continue;
            }
            nonempty += 1;
            // A congested-flow queue sends in its class, once older packets of its head's
            // flow have left the normal queue.
            let class = D::wire_class(self, queue);
            if D::egress_held(self, ctx, o, queue, head) {
                continue;
            }
            let p = &ctx.packets[head];
            if !self.sender.may_send(o, class, p.size as u64, now) {
                blocked = true;
                continue;
            }
            if p.ready_at > now {
                if p.ready_at < earliest {
                    (earliest, earliest_queue) = (p.ready_at, queue);
                }
                continue;
            }
            chosen = Some(queue);
            break;
        }
        if let Some(queue) = chosen {
            self.send::<D>(ctx, port, queue, now);
        } else if earliest != u64::MAX {
            let sole = nonempty == 1 && self.output[o * n + earliest_queue].fifo.is_single();
            if sole {
                // The only packet for an idle link with credits in hand: nothing can
                // overtake it, so commit its transmission now for when it is ready.
                self.send::<D>(ctx, port, earliest_queue, earliest);
            } else {
                self.wake(ctx, port, earliest);
            }
        }
        if blocked && chosen.is_none() {
            // Wake for the next credit return; a return not yet on its way wakes us
            // when it is sent.
            if let Some(at) = self.sender.block(o) {
                self.wake(ctx, port, at);
            }
        }
        if released {
            self.try_allocate(ctx, port);
        }
    }

    /// Puts the head of (port, queue) on the wire from `now` (the current time, or a later
    /// time at which the transmission is committed to start).
    pub(super) fn send<D: QueueDiscipline>(&mut self, ctx: &mut Ctx, port: u32, queue: usize, now: u64) {
        let (o, n) = (port as usize, self.queues);
        let id = if self.watched {
            self.dequeue_watched(ctx, o * n + queue)
        } else {
            self.output[o * n + queue].fifo.pop(ctx.packets)
        };
        self.ports[o].queue_next = if queue + 1 == n { 0 } else { queue as u8 + 1 };
        if self.measured {
            self.departed(ctx, o, id, now);
        }
        let size = ctx.packets[id].size as u64;
        let link = *self.link(o);
        let serialise = link.serializer.time(size);
        let end = now + serialise;
        let class = D::sent(self, o, queue, size);
        self.sender.on_send(o, class, size);
        self.ports[o].link_free_at = end;
        (self.ports[o].releasing_bytes, self.ports[o].releasing_queue) = (size as u32, queue as u8);
        // Wake at the end of the transmission only if someone waits for this output.
        let queued = self.output[o * n..o * n + n].iter().any(|q| !q.fifo.is_empty());
        if queued || self.has_requests(o) {
            self.ports[o].wake_at = end;
            ctx.schedule(end, Event::LinkWake { port });
        }
        let arrival = now + link.latency;
        let p = &mut ctx.packets[id];
        p.tail_at = arrival + serialise;
        p.hops += 1;
        p.class = class as u8;
        // At the (possibly committed, later) start of the transmission.
        ctx.stats.trace(now, TraceEvent::Hop);
        if let Some(far) = self.ports[o].peer.port() {
            ctx.schedule(arrival, Event::Arrive { port: far, packet: id });
            return;
        }
        D::leaving_for_host(self, ctx, id);
        if !self.drain.on() {
            ctx.send_to_host(arrival + serialise, id);
        } else {
            self.drain_into_host(ctx, port, queue, id, arrival);
        }
    }

    /// Tells the routing that packet `id` leaves output `o`, its transmission starting at
    /// `at`.
    #[inline(never)]
    fn departed(&mut self, ctx: &Ctx, o: usize, id: u32, at: u64) {
        let (p, switch) = (&ctx.packets[id], self.ports[o].owner);
        let departure = Departure {
            switch,
            port: (o as u32 - self.port_base[switch as usize]) as u16,
            packet: id,
            src: p.src,
            dst: p.dst,
            size: p.size,
            hops: p.hops - 1,
            to_host: self.ports[o].peer.host().is_some(),
            at,
        };
        self.routing.departed(&self.topo, &departure);
    }

    /// Packet `id`, sent from output queue (`port`, `queue`) to the host at its far end,
    /// reaches the host from `arrival` on: it drains at the host's receive cap (see
    /// `HostDrain`), is delivered when it has drained, and its credits travel back.
    #[inline(never)]
    fn drain_into_host(&mut self, ctx: &mut Ctx, port: u32, queue: usize, id: u32, arrival: u64) {
        let o = port as usize;
        let (size, tail_at) = (ctx.packets[id].size, ctx.packets[id].tail_at);
        let drained = self.drain.drain(self.ports[o].peer.host(), arrival, size as u64, tail_at);
        let at = drained + self.link(o).latency;
        match self.sender.return_credit(o, at, queue, size as u64, ctx.now) {
            Carried::InRing => {}
            Carried::InRingWake => self.wake(ctx, port, at),
            Carried::Full => {
                let feedback = Feedback::Credit { queue: queue as u8, bytes: size };
                ctx.schedule(at, Event::FeedbackToSwitch { port, feedback });
            }
        }
        ctx.send_to_host(drained, id);
    }

    /// Schedules a `LinkWake` at `at` unless one is already pending no later.
    pub(super) fn wake(&mut self, ctx: &mut Ctx, port: u32, at: u64) {
        let pending = self.ports[port as usize].wake_at;
        if pending >= ctx.now && pending != 0 && pending <= at {
            return;
        }
        self.ports[port as usize].wake_at = at;
        ctx.schedule(at, Event::LinkWake { port });
    }
}
