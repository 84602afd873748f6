//! Crossbar allocation: routing the head of an input queue, posting its request to the
//! output, round-robin arbitration, the grant, and re-routing waiting packets.

use super::IoqFabric;
use crate::kernel::{Ctx, Event};
use crate::observe::TraceEvent;
use crate::packet::NIL;
use crate::routing::{PortView, Route, RouteQuery, Routing};
use crate::switch::arbiter::{Arbiter, RoundRobin};

/// Most waiting packets one output re-routes at a time.
const MAX_REROUTES: usize = 16;

/// The read-only view a routing gets of one switch.
struct SwitchView<'a> {
    fabric: &'a IoqFabric,
    base: usize,
    now: u64,
}

impl PortView for SwitchView<'_> {
    #[inline]
    fn occupancy(&self, port: u16) -> u64 {
        self.fabric.output_occupancy(self.base + port as usize, self.now)
    }

    fn occupancy_at(&self, switch: usize, port: u16) -> u64 {
        self.fabric.output_occupancy(self.fabric.port_base[switch] as usize + port as usize, self.now)
    }

    #[inline]
    fn has_room(&self, port: u16, vc: u8, bytes: u64) -> bool {
        self.fabric.has_room(self.base + port as usize, self.fabric.egress_queue(vc), bytes, self.now)
    }
}

impl IoqFabric {
    /// Routes the packet at the head of input (gp, queue) and posts its request.
    #[inline]
    pub(super) fn route_head(&mut self, ctx: &mut Ctx, gp: u32, queue: usize) -> u32 {
        let route = self.decide(ctx, gp, queue);
        self.post(ctx, gp, queue, route)
    }

    /// The routing's choice for the packet at the head of input (gp, queue).
    #[inline]
    pub(super) fn decide(&self, ctx: &mut Ctx, gp: u32, queue: usize) -> Route {
        let id = self.input[gp as usize * self.queues + queue].fifo.head;
        let switch = self.ports[gp as usize].owner;
        let base = self.port_base[switch as usize];
        let p = &ctx.packets[id];
        let query = RouteQuery {
            switch,
            src: p.src,
            dst: p.dst,
            qp: p.qp,
            vc: p.vc,
            hops: p.hops - 1,
            in_port: (gp - base) as u16,
            via: p.via,
            size: p.size,
            now: ctx.now,
        };
        let view = SwitchView { fabric: self, base: base as usize, now: ctx.now };
        self.routing.route(&self.topo, &query, &view, ctx.routing_rng)
    }

    /// Records `route` on the head packet of input (gp, queue) and posts its request to
    /// the chosen output queue, whose port it returns.
    #[inline]
    pub(super) fn post(&mut self, ctx: &mut Ctx, gp: u32, queue: usize, route: Route) -> u32 {
        let id = self.input[gp as usize * self.queues + queue].fifo.head;
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let p = &mut ctx.packets[id];
        p.out_port = route.port;
        p.out_vc = route.vc;
        p.via = route.via;
        let q = gp as usize * self.queues + queue;
        self.input[q].request_size = p.size;
        self.input[q].request_queue = self.egress_queue(route.vc) as u8;
        let out = base + route.port as u32;
        let bit = (gp - base) as usize * self.queues + queue;
        self.requests[self.ports[out as usize].mask_base as usize + bit / 64] |= 1 << (bit % 64);
        self.ports[out as usize].waiting += 1;
        out
    }

    /// Source-adaptive routing, output `out` full: the packets waiting for it at their
    /// first switch (and whose input is free to send) are routed again, as a router
    /// re-evaluates the candidates of a waiting head packet; a request moves to an output
    /// with room for its packet, and that output tries to allocate. Moves go only to
    /// outputs with room, which grants use up, so this ends.
    pub(super) fn reroute_waiting(&mut self, ctx: &mut Ctx, out: u32) {
        let o = out as usize;
        if !self.routing.adapts_at_source() || !self.has_requests(o) {
            return;
        }
        let base = self.port_base[self.ports[o].owner as usize] as usize;
        let first_word = self.ports[o].mask_base as usize;
        let mut waiting = [0u16; MAX_REROUTES];
        let mut n = 0;
        'scan: for w in 0..self.ports[o].mask_words as usize {
            let mut word = self.requests[first_word + w];
            while word != 0 {
                let bit = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if self.may_reroute(ctx, base, bit) {
                    waiting[n] = bit as u16;
                    n += 1;
                    if n == MAX_REROUTES {
                        break 'scan;
                    }
                }
            }
        }
        for &bit in &waiting[..n] {
            // An earlier move may have let this request be granted meanwhile.
            let (bit, word) = (bit as usize, first_word + bit as usize / 64);
            if self.requests[word] & (1 << (bit % 64)) == 0 || !self.may_reroute(ctx, base, bit) {
                continue;
            }
            if let Some(moved_to) = self.reroute(ctx, out, bit) {
                self.try_allocate(ctx, moved_to);
            }
        }
    }

    /// Whether the packet behind request `bit` (of a switch whose ports start at `base`)
    /// is at its first switch with its input free to send.
    #[inline]
    pub(super) fn may_reroute(&self, ctx: &Ctx, base: usize, bit: usize) -> bool {
        let input = base + self.bit_input[bit] as usize;
        let head = self.input[input * self.queues + self.bit_queue[bit] as usize].fifo.head;
        self.ports[input].input_busy_until <= ctx.now && ctx.packets[head].hops == 1
    }

    /// Routes the packet of request `bit` of output `out` again; returns the output its
    /// request moved to, if the new choice differs and has room for the packet now.
    pub(super) fn reroute(&mut self, ctx: &mut Ctx, out: u32, bit: usize) -> Option<u32> {
        let o = out as usize;
        let base = self.port_base[self.ports[o].owner as usize];
        let (input, queue) = (base + self.bit_input[bit] as u32, self.bit_queue[bit] as usize);
        let route = self.decide(ctx, input, queue);
        let moved_to = base + route.port as u32;
        let size = ctx.packets[self.input[input as usize * self.queues + queue].fifo.head].size as u64;
        if moved_to == out || !self.has_room(moved_to as usize, self.egress_queue(route.vc), size, ctx.now) {
            return None;
        }
        self.requests[self.ports[o].mask_base as usize + bit / 64] &= !(1 << (bit % 64));
        self.ports[o].waiting -= 1;
        Some(self.post(ctx, input, queue, route))
    }

    /// Grants the crossbar path into output `out` to one eligible request, if any. The
    /// frequent early outs (no request, crossbar side busy) are inlined at the callers.
    #[inline]
    pub(super) fn try_allocate(&mut self, ctx: &mut Ctx, out: u32) {
        let o = out as usize;
        if !self.has_requests(o) {
            return;
        }
        if self.ports[o].crossbar_free_at > ctx.now {
            self.retry(ctx, out, self.ports[o].crossbar_free_at);
            return;
        }
        self.allocate(ctx, out);
    }

    /// `try_allocate` with requests waiting and the crossbar side free: arbitrate.
    #[inline(never)]
    pub(super) fn allocate(&mut self, ctx: &mut Ctx, out: u32) {
        let (o, now) = (out as usize, ctx.now);
        self.settle(o, now);
        let switch = self.ports[o].owner as usize;
        let base = self.port_base[switch] as usize;
        let bits = self.radix[switch] as usize * self.queues;
        let n = self.queues;
        let words =
            self.ports[o].mask_base as usize..self.ports[o].mask_base as usize + self.ports[o].mask_words as usize;
        let mut inputs_free_at = u64::MAX;
        let mut output_full = false;
        let picked = RoundRobin.pick(&self.requests[words], bits, self.ports[o].grant_next as usize, |bit| {
            let input = base + self.bit_input[bit] as usize;
            if self.ports[input].input_busy_until > now {
                inputs_free_at = inputs_free_at.min(self.ports[input].input_busy_until);
                return false;
            }
            let q = input * n + self.bit_queue[bit] as usize;
            let fits = self.output[o * n + self.input[q].request_queue as usize].used
                + self.input[q].request_size as u64
                <= self.output_capacity;
            output_full |= !fits;
            fits
        });
        if let Some(bit) = picked {
            let (input, queue) = (base + self.bit_input[bit] as usize, self.bit_queue[bit] as usize);
            self.grant(ctx, input as u32, queue, out, bit);
            if self.has_requests(o) {
                // The others wait for this transfer to end.
                self.retry(ctx, out, self.ports[o].crossbar_free_at);
            }
            return;
        }
        if output_full {
            self.reroute_waiting(ctx, out);
        }
        if inputs_free_at != u64::MAX {
            self.retry(ctx, out, inputs_free_at);
        }
        if output_full && self.ports[o].link_free_at > now {
            // Space comes back when the packet on the wire has left.
            self.wake(ctx, out, self.ports[o].link_free_at);
        }
    }

    /// Schedules an allocation retry of output `out` at `at` unless one is pending no later.
    pub(super) fn retry(&mut self, ctx: &mut Ctx, out: u32, at: u64) {
        let pending = self.ports[out as usize].retry_at;
        if pending != 0 && pending >= ctx.now && pending <= at {
            return;
        }
        self.ports[out as usize].retry_at = at;
        ctx.schedule(at, Event::AllocRetry { output: out });
    }

    /// Moves the head of input queue (`input`, `queue`) through the crossbar into the
    /// output queue of `out` that it requested (request mask bit `bit`).
    pub(super) fn grant(&mut self, ctx: &mut Ctx, input: u32, queue: usize, out: u32, bit: usize) {
        let (i, o, n) = (input as usize, out as usize, self.queues);
        let out_queue = self.input[i * n + queue].request_queue as usize;
        let id = self.input[i * n + queue].fifo.pop(ctx.packets);
        self.requests[self.ports[o].mask_base as usize + bit / 64] &= !(1 << (bit % 64));
        self.ports[o].waiting -= 1;
        self.ports[o].grant_next = (bit + 1) as u16;

        let now = ctx.now;
        let p = &mut ctx.packets[id];
        if p.hops == 1 && p.via != NIL {
            ctx.stats.trace(now, TraceEvent::NonMinimal);
        }
        let size = p.size as u64;
        let out_link = self.timing.of(o);
        let done = (now + out_link.crossbar.time(size)).max(p.tail_at);
        // Cut-through: the output may start once the head is through the switch, but must
        // not finish before the tail has crossed the crossbar.
        let serialise = out_link.serializer.time(size);
        p.ready_at = (now + self.latency).max((done + self.latency).saturating_sub(serialise));
        p.vc = p.out_vc;
        self.ports[i].input_busy_until = done;
        self.ports[o].crossbar_free_at = done;
        // The input buffer frees as the tail leaves it: the receiver's side reacts
        // (credits travel back upstream, or the ingress share is released).
        self.leave_ingress(ctx, input, queue, size, done);

        let oq = o * n + out_queue;
        self.output[oq].used += size;
        if self.watched {
            self.enqueue_watched(ctx, oq, id);
        } else {
            self.output[oq].fifo.push(ctx.packets, id);
        }
        if !self.input[i * n + queue].fifo.is_empty() {
            // The next packet of this queue can go once the input is free again.
            let wanted = self.route_head(ctx, input, queue);
            self.retry(ctx, wanted, done);
        }
        self.try_transmit(ctx, out);
    }
}
