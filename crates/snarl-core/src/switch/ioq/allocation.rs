//! Crossbar allocation: routing the head of an input queue, posting its requests to the
//! outputs on offer, round-robin arbitration, the grant, and asking the routing again for
//! requests whose outputs have filled up.
//!
//! The routing offers candidate routes with weights ([`Candidates`]). The request goes to
//! the lightest routes, those of them whose output queue has room for the packet if any
//! has (a lighter route without room is waited for), all of them at once when several
//! weigh the same, and on any of their VCs: the first of those outputs to arbitrate in
//! the packet's favour takes it, on a VC with room, as an IOQ router's allocator matches a
//! head packet to any free output VC it asked for, and the request is withdrawn from the
//! others. When an output finds that a request posted to it no longer fits, the routing is
//! asked again (with the current occupancies) and the request moves if its preferred
//! route now has room, as a router re-evaluates a waiting head packet's candidates.

use super::discipline::{CrossbarUnit, Fifo, Isolating, Ports, QueueDiscipline, Shared, Vcs, Voq};
use super::queues::{CHOICES, DETOUR, HELD, SEVERAL};
use super::IoqFabric;
use crate::kernel::Event;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::{Packet, NIL};
use crate::routing::{Candidate, Candidates, PortView, RouteQuery, Routing, MAX_CANDIDATES};
use crate::switch::arbiter::{Arbiter, RoundRobin};
use arrayvec::ArrayVec;
use rand::Rng;

/// What arbitration reads and what a grant occupies: the crossbar's unit (ports or VCs)
/// and where requests wait (FIFO input queues or virtual output queues), fixed when the
/// fabric is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arbitration {
    /// FIFO input queues, transfers holding ports.
    FifoPorts,
    /// FIFO input queues, transfers holding VCs.
    FifoVcs,
    /// Virtual output queues, transfers holding ports.
    VoqPorts,
    /// Virtual output queues, transfers holding VCs.
    VoqVcs,
    /// FIFO input queues, transfers holding ports, under congestion isolation (whose
    /// shared-buffer switches have no other kind): the only arbitration that reads and
    /// keeps isolation's state, so that the others pay nothing for it.
    Isolating,
    /// The port-holding kinds above in fabrics with ports faster than others of their
    /// switch, which run several transfers at once (`shares.rs`).
    FifoShared,
    VoqShared,
    IsolatingShared,
}

impl Arbitration {
    /// With `shared` ports (links faster than others of their switch), transfers that
    /// hold ports share those ports' bandwidth; per-VC transfers keep their VC paths.
    pub(super) fn new(per_vc: bool, voq: bool, shared: bool) -> Arbitration {
        match (per_vc, voq, shared) {
            (false, false, false) => Arbitration::FifoPorts,
            (false, false, true) => Arbitration::FifoShared,
            (true, false, _) => Arbitration::FifoVcs,
            (false, true, false) => Arbitration::VoqPorts,
            (false, true, true) => Arbitration::VoqShared,
            (true, true, _) => Arbitration::VoqVcs,
        }
    }

    /// The same crossbar unit under congestion isolation.
    pub(super) fn isolating(self) -> Arbitration {
        match self {
            Arbitration::FifoShared | Arbitration::VoqShared => Arbitration::IsolatingShared,
            _ => Arbitration::Isolating,
        }
    }
}

/// Most waiting requests one output sends back to their routing at a time.
const MAX_RECONSIDERED: usize = 16;

/// The outputs a head packet's request went to.
pub(super) enum Posted {
    /// One output (global port id).
    One(u32),
    /// Several, listed in the input queue's posted-ports mask.
    Several,
    /// None: the head waits for an older packet of its flow (congestion isolation).
    Held,
}

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
    fn credits_in_use(&self, port: u16) -> u64 {
        self.fabric.sender.held_downstream(self.base + port as usize, self.now)
    }

    #[inline]
    fn has_room(&self, port: u16, vc: u8, bytes: u64) -> bool {
        self.fabric.has_room(self.base + port as usize, self.fabric.egress_queue(vc), bytes, self.now)
    }
}

impl IoqFabric {
    /// Routes the packet at the head of input (gp, queue) and posts its request, unless
    /// discipline `D` holds it (isolation: it waits for an older packet of its flow).
    #[inline(always)]
    pub(super) fn route_head<D: QueueDiscipline>(&mut self, ctx: &mut Ctx, gp: u32, queue: usize) -> Posted {
        if D::head_held(self, ctx, gp, queue) {
            self.input[gp as usize * self.queues + queue].request = HELD;
            return Posted::Held;
        }
        let mut offer = Candidates::new();
        self.decide(ctx, gp, self.input[gp as usize * self.queues + queue].fifo.head, &mut offer);
        self.post::<D>(ctx, gp, queue, &offer)
    }

    /// The routes the routing offers for packet `id`, whose head is at input `gp` (the
    /// head of its input queue, or just arrived at a switch with VoQs), in `offer` (which
    /// comes empty: it is large, so it is filled in place, not returned).
    #[inline(never)]
    pub(super) fn decide(&self, ctx: &mut Ctx, gp: u32, id: u32, offer: &mut Candidates) {
        let query = self.route_query(gp as usize, &ctx.packets[id], ctx.now);
        let base = self.port_base[query.switch as usize] as usize;
        let view = SwitchView { fabric: self, base, now: ctx.now };
        self.routing.route(&self.topo, &query, &view, ctx.routing_rng, offer);
    }

    /// What the routing is asked about packet `p` at input `gp`, at `now`.
    #[inline(always)]
    pub(super) fn route_query(&self, gp: usize, p: &Packet, now: u64) -> RouteQuery {
        let switch = self.ports[gp].owner;
        RouteQuery {
            switch,
            src: p.src,
            dst: p.dst,
            qp: p.qp,
            vc: p.vc,
            // Counted as it left the switch before: the hops before this switch.
            hops: p.hops - 1,
            in_port: (gp - self.port_base[switch as usize] as usize) as u16,
            via: p.via,
            size: p.size,
            now,
        }
    }

    /// Posts the request of the head packet of input (gp, queue) to the outputs of the
    /// routes it prefers among `offer`, and records the choice on the packet and the queue.
    #[inline]
    pub(super) fn post<D: QueueDiscipline>(
        &mut self,
        ctx: &mut Ctx,
        gp: u32,
        queue: usize,
        offer: &Candidates,
    ) -> Posted {
        let routes = offer.as_slice();
        if routes.len() > 1 {
            return self.post_several(ctx, gp, queue, offer);
        }
        let route = offer.first();
        let q = gp as usize * self.queues + queue;
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let bit = (gp - base) as usize * self.queues + queue;
        if self.looks_ahead {
            // Read next, each a likely miss: asked for together rather than one by one.
            self.prefetch_request(base as usize + route.port as usize, bit);
        }
        let id = self.input[q].fifo.head;
        let request_queue =
            D::request_queue(self, base as usize + route.port as usize, &ctx.packets[id], route.vc) as u8;
        let p = &mut ctx.packets[id];
        p.out_port = route.port;
        p.out_vc = route.vc;
        p.via = route.via;
        let input = &mut self.input[q];
        input.request_size = p.size;
        input.request_queue = request_queue;
        input.other_queues = 0;
        input.request = if route.via != NIL { DETOUR } else { 0 };
        Posted::One(self.request(base + route.port as u32, bit))
    }

    /// `post` of a choice among several routes.
    #[inline(never)]
    fn post_several(&mut self, ctx: &mut Ctx, gp: u32, queue: usize, offer: &Candidates) -> Posted {
        let q = gp as usize * self.queues + queue;
        let id = self.input[q].fifo.head;
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let bit = (gp - base) as usize * self.queues + queue;
        let routes = offer.as_slice();
        let size = ctx.packets[id].size;
        let (k, roomy) = self.preferred(base, routes, size, ctx.now);
        let chosen = routes[k];
        let p = &mut ctx.packets[id];
        p.out_port = chosen.route.port;
        p.out_vc = chosen.route.vc;
        // Kept while the packet waits, so that asking again offers the same detour.
        p.via = offer.intermediate;
        let request_queue = self.egress_queue(chosen.route.vc) as u8;
        let input = &mut self.input[q];
        input.request_size = size;
        input.request_queue = request_queue;
        input.request = CHOICES | if chosen.route.via != NIL { DETOUR } else { 0 };
        // Every route as light as the chosen one and through its intermediate, and like it
        // with room for the packet or like it without; on any of their VCs.
        let (stride, chosen_room) = (self.posted_words, (roomy >> k) & 1);
        let (mut posted, mut vcs) = (0, 0u8);
        for (k, c) in routes.iter().enumerate() {
            let alike = c.weight == chosen.weight && c.route.via == chosen.route.via;
            if alike && (roomy >> k) & 1 == chosen_room {
                vcs |= 1u8.checked_shl(self.egress_queue(c.route.vc) as u32).unwrap_or(0);
                let (word, mask) = (q * stride + c.route.port as usize / 64, 1 << (c.route.port % 64));
                posted += (self.posted[word] & mask == 0) as usize;
                self.posted[word] |= mask;
            }
        }
        self.input[q].other_queues = vcs & !(1u8.checked_shl(request_queue as u32).unwrap_or(0));
        if posted == 1 {
            self.posted[q * stride..q * stride + stride].fill(0);
            return Posted::One(self.request(base + chosen.route.port as u32, bit));
        }
        // The outputs hear of it when it is tried (`try_several`) or retried.
        self.input[q].request |= SEVERAL;
        Posted::Several
    }

    /// Posts the request of input (gp, queue) to every output listed in its posted-ports
    /// mask (`post_several` lists them).
    fn request_posted(&mut self, gp: u32, queue: usize, ports: &[u16]) {
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let bit = (gp - base) as usize * self.queues + queue;
        for &port in ports {
            self.request(base + port as u32, bit);
        }
    }

    /// Which of several `routes` (of a switch whose ports start at `base`) to request for
    /// a packet of `size`: the lightest, and among the lightest one with room for the
    /// packet if any has; and which have room (bit k: route k). A lighter route without
    /// room is waited for rather than left for a heavier one: the weight already tells
    /// how busy a route is, and taking whatever has room would send packets the long way
    /// whenever the short one is momentarily full, which past saturation feeds on itself
    /// (UGAL's detours then crowd out the minimal traffic).
    pub(super) fn preferred(&self, base: u32, routes: &[Candidate], size: u32, now: u64) -> (usize, u128) {
        let (mut best, mut best_key, mut roomy) = (0, (u64::MAX, true), 0u128);
        for (k, c) in routes.iter().enumerate() {
            let out = (base + c.route.port as u32) as usize;
            let room = self.has_room(out, self.egress_queue(c.route.vc), size as u64, now);
            roomy |= (room as u128) << k;
            if (c.weight, !room) < best_key {
                (best, best_key) = (k, (c.weight, !room));
            }
        }
        (best, roomy)
    }

    /// Sets request mask bit `bit` of output `out`; returns `out`.
    #[inline]
    pub(super) fn request(&mut self, out: u32, bit: usize) -> u32 {
        let word = self.mask_word(out as usize, bit);
        self.requests[word] |= 1 << (bit % 64);
        self.ports[out as usize].waiting += 1;
        out
    }

    /// Clears request mask bit `bit` of output `out`.
    #[inline]
    fn withdraw(&mut self, out: usize, bit: usize) {
        let word = self.mask_word(out, bit);
        self.requests[word] &= !(1 << (bit % 64));
        self.ports[out].waiting -= 1;
    }

    /// The ports (of its switch) that the request of input queue `q` was posted to, when
    /// it went to several.
    fn posted_ports(&self, q: usize) -> ArrayVec<u16, MAX_CANDIDATES> {
        let stride = self.posted_words;
        let mut ports = ArrayVec::new();
        for (w, &word) in self.posted[q * stride..q * stride + stride].iter().enumerate() {
            let mut word = word;
            while word != 0 {
                ports.push((w * 64 + word.trailing_zeros() as usize) as u16);
                word &= word - 1;
            }
        }
        ports
    }

    /// Withdraws the request of input (gp, queue), whose bit is `bit`, from every output
    /// it was posted to but `except` (`usize::MAX`: from all).
    fn withdraw_posted(&mut self, gp: u32, queue: usize, bit: usize, except: usize) {
        let q = gp as usize * self.queues + queue;
        let base = self.port_base[self.ports[gp as usize].owner as usize] as usize;
        for port in self.posted_ports(q) {
            if base + port as usize != except {
                self.withdraw(base + port as usize, bit);
            }
        }
        let stride = self.posted_words;
        self.posted[q * stride..q * stride + stride].fill(0);
        self.input[q].request &= !SEVERAL;
    }

    /// Lets the outputs a request was just posted to arbitrate now (in `Posted::Several`,
    /// in an order starting at random, so that no port is favoured), until one grants it.
    #[inline]
    pub(super) fn try_posted(&mut self, ctx: &mut Ctx, gp: u32, queue: usize, posted: Posted) {
        match posted {
            Posted::One(out) => self.try_allocate(ctx, out),
            Posted::Several => self.try_several(ctx, gp, queue),
            Posted::Held => {}
        }
    }

    fn try_several(&mut self, ctx: &mut Ctx, gp: u32, queue: usize) {
        let (q, stride) = (gp as usize * self.queues + queue, self.posted_words);
        let head = self.input[q].fifo.head;
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let posted = &self.posted[q * stride..q * stride + stride];
        let count = posted.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        let start = ctx.routing_rng.random_range(0..count);
        let first = base + nth_port(posted, start) as u32;
        if self.grants_alone(first as usize, gp as usize, queue, ctx.now) {
            // The first output tried takes the packet at once, before the others could
            // see the request: post it there alone, which grants the same, without
            // posting it to the others only to withdraw it from them.
            self.posted[q * stride..q * stride + stride].fill(0);
            self.input[q].request &= !SEVERAL;
            let bit = (gp - base) as usize * self.queues + queue;
            self.request(first, bit);
            return self.allocate(ctx, first);
        }
        let ports = self.posted_ports(q);
        self.request_posted(gp, queue, &ports);
        for k in 0..ports.len() {
            self.try_allocate(ctx, base + ports[(start + k) % ports.len()] as u32);
            if self.input[q].fifo.head != head || !self.input[q].is(SEVERAL) {
                return; // Granted, or moved by a reconsideration that tried its own outputs.
            }
        }
    }

    /// Schedules allocation retries at `at` for the outputs a request was just posted to
    /// (its input is busy until then).
    #[inline]
    pub(super) fn retry_posted(&mut self, ctx: &mut Ctx, gp: u32, queue: usize, posted: Posted, at: u64) {
        match posted {
            Posted::One(out) => self.retry(ctx, out, at),
            Posted::Held => {}
            Posted::Several => {
                let q = gp as usize * self.queues + queue;
                let ports = self.posted_ports(q);
                self.request_posted(gp, queue, &ports);
                let base = self.port_base[self.ports[gp as usize].owner as usize];
                let start = ctx.routing_rng.random_range(0..ports.len());
                for k in 0..ports.len() {
                    self.retry(ctx, base + ports[(start + k) % ports.len()] as u32, at);
                }
            }
        }
    }

    /// Whether output `o`, with no other request waiting, would grant the request of
    /// input (gp, queue) now, were it posted there alone: the crossbar paths are free,
    /// the request is for one output queue and that has room (as `arbitrate` would find
    /// after settling the output). Plain FIFO arbitration over ports or VCs only; `false`
    /// where unsure, which costs only the shortcut.
    #[inline]
    fn grants_alone(&self, o: usize, gp: usize, queue: usize, now: u64) -> bool {
        let request = &self.input[gp * self.queues + queue];
        let out_queue = request.request_queue as usize;
        matches!(self.arbitration, Arbitration::FifoPorts | Arbitration::FifoVcs)
            && !self.has_requests(o)
            && request.other_queues == 0
            && self.input_free_at(gp, queue) <= now
            && self.output_free_at(o, out_queue) <= now
            && self.has_room(o, out_queue, request.request_size as u64, now)
    }

    /// Output `out` found requests it has no room for: those that had other routes on
    /// offer (and whose input is free to send) go back to their routing, and move to the
    /// outputs of its new choice if any has room (which grants use up, so this ends).
    pub(super) fn reconsider_waiting(&mut self, ctx: &mut Ctx, out: u32) {
        let o = out as usize;
        // Not from within another reconsideration: the outputs a move tries may be full
        // for others, whose turn comes at their next arbitration; this bounds the depth.
        if !self.has_requests(o) || self.reconsidering {
            return;
        }
        self.reconsidering = true;
        let base = self.port_base[self.ports[o].owner as usize] as usize;
        let first_word = self.mask_base(o);
        let mut waiting = [0u16; MAX_RECONSIDERED];
        let mut n = 0;
        'scan: for w in 0..self.ports[o].mask_words as usize {
            let mut word = self.requests[first_word + w];
            while word != 0 {
                let bit = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if self.may_reconsider(ctx, o, base, bit) {
                    waiting[n] = bit as u16;
                    n += 1;
                    if n == MAX_RECONSIDERED {
                        break 'scan;
                    }
                }
            }
        }
        for &bit in &waiting[..n] {
            // An earlier move may have let this request be granted or moved meanwhile.
            let (bit, word) = (bit as usize, first_word + bit as usize / 64);
            if self.requests[word] & (1 << (bit % 64)) == 0 || !self.may_reconsider(ctx, o, base, bit) {
                continue;
            }
            let (input, queue) = ((base + self.bit_input[bit] as usize) as u32, self.bit_queue[bit] as usize);
            let mut offer = Candidates::new();
            self.decide(ctx, input, self.input[input as usize * self.queues + queue].fifo.head, &mut offer);
            let size = self.input[input as usize * self.queues + queue].request_size;
            // Moves only to a preferred route with room.
            let routes = offer.as_slice();
            let (k, roomy) = self.preferred(base as u32, routes, size, ctx.now);
            if (roomy >> k) & 1 == 0 {
                continue;
            }
            if self.input[input as usize * self.queues + queue].is(SEVERAL) {
                self.withdraw_posted(input, queue, bit, usize::MAX);
            } else {
                self.withdraw(o, bit);
            }
            // Routings with choices are not isolated (`IoqFabric::isolate`).
            let posted = self.post::<Fifo>(ctx, input, queue, &offer);
            self.try_posted(ctx, input, queue, posted);
        }
        self.reconsidering = false;
    }

    /// Whether the request `bit` waiting at output `o` (of a switch whose ports start at
    /// `base`) had other routes on offer, does not fit in `o` now, and comes from an input
    /// free to send.
    #[inline]
    fn may_reconsider(&self, ctx: &Ctx, o: usize, base: usize, bit: usize) -> bool {
        let (input, queue) = (base + self.bit_input[bit] as usize, self.bit_queue[bit] as usize);
        let request = &self.input[input * self.queues + queue];
        if !request.is(CHOICES) || self.input_free_at(input, queue) > ctx.now {
            return false;
        }
        let choice = request.other_queues | 1u8.checked_shl(request.request_queue as u32).unwrap_or(0);
        let fits = |q: usize| self.fits(o, q, request.request_size as u64);
        !(0..8).any(|q| choice & (1 << q) != 0 && fits(q))
    }

    /// Grants the crossbar path into output `out` to one eligible request, if any (per-VC
    /// paths: one per free output VC). The frequent early outs (no request, crossbar side
    /// busy) are inlined at the callers.
    #[inline]
    pub(super) fn try_allocate(&mut self, ctx: &mut Ctx, out: u32) {
        let o = out as usize;
        if !self.has_requests(o) {
            return;
        }
        if !self.per_vc() && self.ports[o].crossbar_free_at > ctx.now {
            self.retry(ctx, out, self.ports[o].crossbar_free_at);
            return;
        }
        self.allocate(ctx, out);
    }

    /// `try_allocate` with requests waiting and the crossbar side free: arbitrate.
    #[inline(never)]
    pub(super) fn allocate(&mut self, ctx: &mut Ctx, out: u32) {
        match self.arbitration {
            Arbitration::FifoPorts => self.arbitrate::<Ports, Fifo>(ctx, out),
            Arbitration::FifoVcs => self.arbitrate::<Vcs, Fifo>(ctx, out),
            Arbitration::VoqPorts => self.arbitrate::<Ports, Voq>(ctx, out),
            Arbitration::VoqVcs => self.arbitrate::<Vcs, Voq>(ctx, out),
            Arbitration::Isolating => self.arbitrate::<Ports, Isolating>(ctx, out),
            Arbitration::FifoShared => self.arbitrate::<Shared, Fifo>(ctx, out),
            Arbitration::VoqShared => self.arbitrate::<Shared, Voq>(ctx, out),
            Arbitration::IsolatingShared => self.arbitrate::<Shared, Isolating>(ctx, out),
        }
    }

    /// `allocate` with transfers holding `X` (ports or VCs), requests waiting as
    /// discipline `D` keeps them (FIFO input queues, or virtual output queues: the request
    /// of input queue q at output o is that of VoQ (q, o)).
    #[inline(always)]
    fn arbitrate<X: CrossbarUnit, D: QueueDiscipline>(&mut self, ctx: &mut Ctx, out: u32) {
        let (o, now) = (out as usize, ctx.now);
        self.settle(o, now);
        let switch = self.ports[o].owner as usize;
        let base = self.port_base[switch] as usize;
        let bits = self.radix[switch] as usize * self.queues;
        let words = self.mask_base(o)..self.mask_base(o) + self.ports[o].mask_words as usize;
        loop {
            // The earliest time a path that a request waits for frees.
            let mut paths_free_at = u64::MAX;
            let mut output_full = false;
            // The output queue of the request picked.
            let mut picked_queue = 0;
            let picked =
                RoundRobin.pick(&self.requests[words.clone()], bits, self.ports[o].grant_next as usize, |bit| {
                    self.eligible::<X, D>(o, base, bit, now, &mut picked_queue, &mut paths_free_at, &mut output_full)
                });
            if let Some(bit) = picked {
                let (input, queue) = (base + self.bit_input[bit] as usize, self.bit_queue[bit] as usize);
                self.grant::<X, D>(ctx, input as u32, queue, out, bit, picked_queue);
                if X::may_take_another(self, o) && self.has_requests(o) {
                    continue; // Another VC (or share) of this output may take in a packet too.
                }
                if self.has_requests(o) {
                    // The others wait for this transfer to end.
                    self.retry(ctx, out, self.ports[o].crossbar_free_at);
                }
                return;
            }
            if output_full && self.posted_words != 0 {
                self.reconsider_waiting(ctx, out);
            }
            if paths_free_at != u64::MAX {
                self.retry(ctx, out, paths_free_at);
            }
            if output_full && self.ports[o].link_free_at > now {
                // Space comes back when the packet on the wire has left.
                self.wake(ctx, out, self.ports[o].link_free_at);
            }
            return;
        }
    }

    /// The arbiter's check of request `bit` at output `o` (of a switch whose ports start at
    /// `base`): whether it may be granted now, and if so into which output queue
    /// (`picked_queue`); if not, when the path it waits for frees and whether the output
    /// was full for it. A method the compiler inlines into the arbiter's scan, where a
    /// closure of this size was called once per request looked at.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn eligible<X: CrossbarUnit, D: QueueDiscipline>(
        &self,
        o: usize,
        base: usize,
        bit: usize,
        now: u64,
        picked_queue: &mut usize,
        paths_free_at: &mut u64,
        output_full: &mut bool,
    ) -> bool {
        let input = base + self.bit_input[bit] as usize;
        let queue = self.bit_queue[bit] as usize;
        if let Some(busy_until) = X::input_busy(self, input, now) {
            *paths_free_at = (*paths_free_at).min(busy_until);
            return false;
        }
        let request = D::request(self, input * self.queues + queue, o, base);
        if D::has_queue_choice(request) {
            return self.choose_queue::<X>(o, input, queue, now, picked_queue, paths_free_at, output_full);
        }
        let out_queue = request.request_queue as usize;
        let free_at = X::path_free_at(self, input, queue, o, out_queue, now);
        if free_at > now {
            *paths_free_at = (*paths_free_at).min(free_at);
            return false;
        }
        let fits = D::fits(self, o, out_queue, request.request_size as u64);
        *output_full |= !fits;
        *picked_queue = out_queue;
        fits
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

    /// The arbiter's check of a request that may join any of several output queues of
    /// output `o` (a choice of VCs): the first, from a turn that moves with every grant,
    /// whose crossbar path is free (per-VC paths) and that has room for the packet.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn choose_queue<X: CrossbarUnit>(
        &self,
        o: usize,
        input: usize,
        queue: usize,
        now: u64,
        picked_queue: &mut usize,
        paths_free_at: &mut u64,
        output_full: &mut bool,
    ) -> bool {
        let n = self.queues;
        let request = &self.input[input * n + queue];
        let choice = request.other_queues | 1u8.checked_shl(request.request_queue as u32).unwrap_or(0);
        let turn = self.ports[o].grant_next as u32 % 8;
        for k in 0..8 {
            let out_queue = ((turn + k) % 8) as usize;
            if choice & (1 << out_queue) == 0 {
                continue;
            }
            let free_at = X::path_free_at(self, input, queue, o, out_queue, now);
            if free_at > now {
                *paths_free_at = (*paths_free_at).min(free_at);
                continue;
            }
            if self.fits(o, out_queue, request.request_size as u64) {
                *picked_queue = out_queue;
                return true;
            }
            *output_full = true;
        }
        false
    }

    /// The packet `id` of input (input, queue), which had a choice of routes, is granted
    /// output `o` (request bit `bit`): its request leaves the other outputs, and the route
    /// taken decides its output port and whether it keeps its detour.
    #[inline(never)]
    fn take_route(&mut self, ctx: &mut Ctx, input: u32, queue: usize, o: usize, bit: usize, id: u32) {
        let request = self.input[input as usize * self.queues + queue];
        if request.is(SEVERAL) {
            self.withdraw_posted(input, queue, bit, o);
        }
        let p = &mut ctx.packets[id];
        p.out_port = (o - self.port_base[self.ports[o].owner as usize] as usize) as u16;
        if !request.is(DETOUR) {
            p.via = NIL;
        }
    }

    /// Moves the head of input queue (`input`, `queue`), or under `Voq` of its virtual
    /// output queue for `out`, through the crossbar into the output queue of `out` that
    /// it requested (request mask bit `bit`).
    #[inline(always)]
    fn grant<X: CrossbarUnit, D: QueueDiscipline>(
        &mut self,
        ctx: &mut Ctx,
        input: u32,
        queue: usize,
        out: u32,
        bit: usize,
        out_queue: usize,
    ) {
        let (i, o, n) = (input as usize, out as usize, self.queues);
        let id = D::pop_granted(self, ctx.packets, i, queue, o);
        self.withdraw(o, bit);
        self.ports[o].grant_next = (bit + 1) as u16;
        // The queue chosen among several VCs is the packet's VC from here (queue ids of
        // the VCs are the VCs). VoQ requests have one route, chosen at arrival.
        let (request_vcs_chosen, route_chosen) = D::granted_choices(self, i * n + queue);
        if route_chosen {
            self.take_route(ctx, input, queue, o, bit, id);
        }

        let now = ctx.now;
        let p = &mut ctx.packets[id];
        if p.hops == 1 && p.via != NIL {
            ctx.stats.trace(now, TraceEvent::NonMinimal);
        }
        let size = p.size as u64;
        let done = (now + X::transfer_time(self, i, o, size, now)).max(p.tail_at);
        // Cut-through: the output may start once the head is through the switch, but must
        // not finish before the tail has crossed the crossbar.
        let serialise = self.link(o).serializer.time(size);
        p.ready_at = (now + self.latency).max((done + self.latency).saturating_sub(serialise));
        p.vc = if request_vcs_chosen { out_queue as u8 } else { p.out_vc };
        X::occupy(self, i, queue, o, out_queue, done, now);
        // The input buffer frees as the tail leaves it: the receiver's side reacts
        // (credits travel back upstream, or the ingress share is released).
        D::leave_ingress(self, ctx, i, queue, id, o, out_queue, size, done);

        let oq = o * n + out_queue;
        self.output[oq].used += size;
        if self.watched {
            self.enqueue_watched(ctx, oq, id);
        } else {
            self.output[oq].fifo.push(ctx.packets, id);
        }
        // The next packet of this queue (or VoQ) can go once the input is free again.
        let next_at = X::input_next_at(self, i, done, now);
        D::next_request(self, ctx, i, queue, out, bit, next_at);
        D::after_grant(self, ctx, input);
        self.try_transmit(ctx, out);
    }
}

/// The port of the `n`th bit set (from 0, lowest first) in a posted-ports mask: the
/// `n`th of `IoqFabric::posted_ports`.
fn nth_port(mask: &[u64], mut n: usize) -> u16 {
    for (w, &word) in mask.iter().enumerate() {
        let ones = word.count_ones() as usize;
        if n < ones {
            let mut word = word;
            for _ in 0..n {
                word &= word - 1;
            }
            return (w * 64 + word.trailing_zeros() as usize) as u16;
        }
        n -= ones;
    }
    unreachable!("a posted-ports mask with fewer bits than asked for")
}

#[cfg(test)]
mod tests {
    use super::nth_port;

    #[test]
    fn nth_port_counts_set_bits_across_words() {
        let mask = [0b1010_0100u64, 1 << 3];
        assert_eq!(nth_port(&mask, 0), 2);
        assert_eq!(nth_port(&mask, 1), 5);
        assert_eq!(nth_port(&mask, 2), 7);
        assert_eq!(nth_port(&mask, 3), 64 + 3);
    }
}
