//! Congestion isolation in the switch pipeline (CI, ICI; the tables are in
//! `crate::isolation::state`).
//!
//! Queue ids: each priority d has, beside its normal queue d, `cfqs_per_port`
//! congested-flow queues (CFQs) `vcs + d * N + k` at every egress. On the wire a packet
//! from any of them travels in the congested-flow class c(d) = `vcs + d * N`, which is
//! also the ingress queue it joins downstream: the ingress accounts c(d) apart from d, so
//! PFC pauses them independently (`isolation.cfq_xoff`, `cfq_xon`), and the sender's
//! pause flag for a CFQ is c(d)'s.
//!
//! A packet's life under isolation, at a switch:
//! - it arrives in the class it was sent in; a mirror of its key at this ingress counts
//!   it, and signals upstream once `propagate` of them wait here (again later if the
//!   key's packets still come in the normal class);
//! - its head requests the egress queue its key's entry says (the CFQ of the entry, or
//!   its priority's normal queue), after any older packet of its flow in the ingress
//!   queue of the other kind has gone;
//! - entering a normal egress queue that holds `detect` packets or more, it makes its key
//!   a candidate: allocated if the rules allow (ICI: confirmed, not paused downstream)
//!   and an entry is free, counted as an overflow otherwise;
//! - a CFQ's head leaves after any older packet of its flow in the normal queue;
//! - when an entry's CFQ holds none of its packets and it has lived `min_residency`
//!   (ICI: and the port has drained below `release`), it is released.
//!
//! An upstream switch that receives an isolation message allocates the key at its egress
//! toward the sender; a NIC sends the key's flows in the class c(d) for `nic_isolation`.

use super::discipline::Isolating;
use super::queues::HELD;
use super::IoqFabric;
use crate::cc::FlowKey;
use crate::config::IsolationKeyKind;
use crate::flow_control::Feedback;
use crate::isolation::state::{bucket, IsolationKey, IsolationState, Side, ARRIVED_ISOLATED};
use crate::kernel::{Event, Peer, Timer, TimerKind};
use crate::model::Ctx;
use crate::observe::{IsolationEvent, TraceEvent};
use crate::packet::{Packet, NIL};

/// `Packet::isolation`: counted by a mirror at the ingress it waits at.
pub(crate) const MIRRORED: u8 = 1;
/// `Packet::isolation`: a detected root's packet that found no free entry (this hop).
pub(crate) const CANDIDATE: u8 = 2;
/// `Packet::isolation`: it left a congested-flow queue somewhere.
pub(crate) const PASSED_CFQ: u8 = 4;

/// No entry.
const NONE: u32 = u32::MAX;

/// Whether a packet is control (CNPs, BECNs, acknowledgements), never isolated.
#[inline]
fn control(p: &Packet) -> bool {
    p.kind.is_control() || p.message == NIL
}

/// The fabric's timer code for the release check of a congested-flow table entry (owner:
/// the entry's global index).
pub const RELEASE_CHECK: u8 = 0;

impl IoqFabric {
    /// Isolates congested flows with `state` from now on.
    fn set_isolation(&mut self, state: IsolationState) {
        self.isolation = Some(Box::new(state));
        self.watched = true;
        self.arbitration = self.arbitration.isolating();
    }

    /// Isolates congested flows with `params` from now on; congestion isolation needs a
    /// routing that offers one route per packet (each flow keeps its path, so a key's
    /// packets leave a switch by one port).
    pub fn isolate(&mut self, params: crate::config::Isolation) -> crate::Result<()> {
        if self.routing.offers_choices() || self.per_vc() || self.voqs.on() {
            return Err(crate::Error::config(
                "isolation.type",
                "congestion isolation needs a routing that gives every packet one route (dmodk, ecmp, \
                 flowlet, spray, planner, updown) and FIFO input queues with per-port crossbar transfers: \
                 its entries follow a flow's path",
            ));
        }
        let state = IsolationState::new(params, self.ports.len(), self.vcs, self.queues)?;
        self.set_isolation(state);
        Ok(())
    }

    /// The hosts the workload aims congestion at, for counting false positives.
    pub fn set_declared_hotspots(&mut self, hosts: usize, hotspots: &[u32]) -> crate::Result<()> {
        if let Some(iso) = self.isolation.as_deref_mut() {
            iso.hotspot = crate::memory::fallible::filled(hosts, false, "the declared hotspots")?;
            for &h in hotspots {
                if let Some(flag) = iso.hotspot.get_mut(h as usize) {
                    *flag = true;
                }
            }
        }
        Ok(())
    }

    /// Congested-flow queues per priority.
    #[inline]
    fn cfqs(&self) -> usize {
        self.isolation.as_ref().map_or(1, |i| i.params.cfqs_per_port as usize)
    }

    /// The priority of queue `q`.
    #[inline]
    pub(super) fn priority_of(&self, q: usize) -> usize {
        if q < self.vcs {
            q
        } else {
            (q - self.vcs) / self.cfqs()
        }
    }

    /// The class queue `q`'s packets travel in on the wire (and join downstream).
    #[inline]
    pub(super) fn wire_class(&self, q: usize) -> usize {
        if q < self.vcs {
            q
        } else {
            self.cfq_queue(self.priority_of(q), 0)
        }
    }

    /// CFQ `k` of priority `d`.
    #[inline]
    fn cfq_queue(&self, d: usize, k: usize) -> usize {
        self.vcs + d * self.cfqs() + k
    }

    /// The egress queue of output `out` that packet `p`, routed onto VC `vc`, joins: its
    /// key's CFQ if the port isolates it, else the VC's own.
    #[inline(never)]
    pub(super) fn isolated_queue(&self, out: usize, p: &Packet, vc: u8) -> usize {
        let iso = self.isolation.as_deref().expect("isolating");
        if control(p) {
            return vc as usize;
        }
        match iso.entry_of(out, p) {
            Some(e) => self.cfq_queue(vc as usize, iso.cft[e].cfq as usize),
            None => vc as usize,
        }
    }

    /// Whether egress queue `q` of output `o` has room for `bytes` more under isolation:
    /// a normal queue has its egress cap, and the CFQs of a priority together hold at
    /// most `cfq_egress_cap`, a budget of their own, so that isolated flows never take the
    /// room of the flows they would block.
    #[inline(never)]
    pub(super) fn fits_isolated(&self, o: usize, q: usize, bytes: u64) -> bool {
        let n = self.queues;
        if q < self.vcs {
            return self.output[o * n + q].used + bytes <= self.output_capacity;
        }
        let (d, k) = (self.priority_of(q), self.cfqs());
        let cfqs = o * n + self.vcs + d * k..o * n + self.vcs + (d + 1) * k;
        let isolated: u64 = self.output[cfqs].iter().map(|q| q.used).sum();
        isolated + bytes <= self.isolation.as_ref().map_or(u64::MAX, |i| i.params.cfq_egress_cap)
    }

    /// A packet was admitted at ingress `gp` in the class it travelled in: it joins the
    /// ingress queue of that class, or, if a mirror here isolates its key, the
    /// congested-flow class's queue, so that it never holds up the normal queue (PFC
    /// still counts it in the class it arrived in, the one upstream can pause); it is
    /// counted for order, and the mirror counts it (and signals upstream if due).
    #[inline(never)]
    pub(super) fn isolation_arrive(&mut self, ctx: &mut Ctx, gp: u32, id: u32) {
        let vcs = self.vcs;
        let p = &mut ctx.packets[id];
        let arrived = p.class as usize;
        p.isolation = (p.isolation & PASSED_CFQ) | if arrived >= vcs { ARRIVED_ISOLATED } else { 0 };
        let d = p.vc as usize;
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let mirror = if control(p) { None } else { iso.mirror_of(gp as usize, p) };
        let queue = if mirror.is_some() { iso.class_of(d) } else { arrived };
        p.class = queue as u8;
        let side = if queue < vcs { Side::IngressNormal } else { Side::IngressIsolated };
        iso.count(gp as usize, d, side, bucket(p), true);
        if let Some(m) = mirror {
            p.isolation |= MIRRORED;
            iso.mirrors[m].held += 1;
            self.maybe_signal(ctx, gp, m, arrived < vcs);
        }
    }

    /// The class a packet that waits in ingress queue `queue` arrived in.
    #[inline]
    pub(super) fn arrival_class(&self, isolation: u8, queue: usize) -> usize {
        let d = self.priority_of(queue);
        if isolation & ARRIVED_ISOLATED != 0 {
            self.cfq_queue(d, 0)
        } else {
            d
        }
    }

    /// Whether the head of ingress queue (gp, queue) must wait for an older packet of its
    /// flow in the ingress queue of the other kind.
    #[inline(never)]
    pub(super) fn ingress_held(&self, ctx: &Ctx, gp: u32, queue: usize) -> bool {
        let iso = self.isolation.as_deref().expect("isolating");
        let head = self.input[gp as usize * self.queues + queue].fifo.head;
        let p = &ctx.packets[head];
        let d = self.priority_of(queue);
        let side = if queue < self.vcs { Side::IngressNormal } else { Side::IngressIsolated };
        if iso.counted(gp as usize, d, side.other(), bucket(p)) == 0 {
            return false;
        }
        let other = if queue < self.vcs { self.cfq_queue(d, 0) } else { d };
        self.older_of_flow(ctx, self.input[gp as usize * self.queues + other].fifo.head, p)
    }

    /// Whether the FIFO starting at `first` holds a packet of `p`'s flow that reached
    /// this switch before it.
    fn older_of_flow(&self, ctx: &Ctx, first: u32, p: &Packet) -> bool {
        let mut id = first;
        while id != NIL {
            let q = &ctx.packets[id];
            if q.src == p.src && q.dst == p.dst && q.qp == p.qp && q.tail_at < p.tail_at {
                return true;
            }
            id = q.next;
        }
        false
    }

    /// Whether the head `id` of congested-flow queue `queue` of output `o` must wait for
    /// an older packet of its flow in the normal queue.
    #[inline(never)]
    pub(super) fn egress_held(&self, ctx: &Ctx, o: usize, queue: usize, id: u32) -> bool {
        let iso = self.isolation.as_deref().expect("isolating");
        let (p, d) = (&ctx.packets[id], self.priority_of(queue));
        if iso.counted(o, d, Side::EgressNormal, bucket(p)) == 0 {
            return false;
        }
        self.older_of_flow(ctx, self.output[o * self.queues + d].fifo.head, p)
    }

    /// Packet `id` left ingress queue (i, queue) for egress queue `out_queue` of output
    /// `o`: it no longer counts at this ingress; entering a CFQ, it has its key mirrored
    /// here.
    #[inline(never)]
    pub(super) fn isolation_leave_ingress(
        &mut self,
        ctx: &mut Ctx,
        i: usize,
        queue: usize,
        id: u32,
        o: usize,
        out_queue: usize,
    ) {
        let vcs = self.vcs;
        let d = self.priority_of(queue);
        let p = ctx.packets[id];
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let side = if queue < vcs { Side::IngressNormal } else { Side::IngressIsolated };
        iso.count(i, d, side, bucket(&p), false);
        if p.isolation & MIRRORED != 0 {
            ctx.packets[id].isolation &= !MIRRORED;
            if let Some(m) = iso.mirror_of(i, &p) {
                iso.mirrors[m].held -= 1;
                if iso.mirrors[m].held == 0 && iso.mirrors[m].entry == NONE {
                    iso.mirrors[m].live = false;
                }
            }
        }
        if out_queue < vcs || control(&p) || iso.mirror_of(i, &p).is_some() {
            return;
        }
        let Some(e) = iso.entry_of(o, &p) else { return };
        match iso.mirror(i, e) {
            Some(m) => self.maybe_signal(ctx, i as u32, m, true),
            None => ctx.trace(TraceEvent::Isolation(IsolationEvent::MirrorOverflow)),
        }
    }

    /// Signals upstream from ingress `gp` for mirror `m` if due: once `propagate` of its
    /// packets wait here, and again, `min_residency` after the last time, while they
    /// still arrive in the normal class (`arrived_normal`).
    fn maybe_signal(&mut self, ctx: &mut Ctx, gp: u32, m: usize, arrived_normal: bool) {
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let (mirror, params) = (&mut iso.mirrors[m], &iso.params);
        if mirror.held < params.propagate {
            return;
        }
        let due = mirror.signalled_at == u64::MAX
            || (arrived_normal && ctx.now.saturating_sub(mirror.signalled_at) >= params.min_residency);
        let upstream = self.ports[gp as usize].peer;
        if !due || upstream == Peer::NONE || (upstream.host().is_some() && params.nic_isolation == 0) {
            return;
        }
        mirror.signalled_at = ctx.now;
        // Sent like a pause frame: after the frame on the reverse wire.
        let at = self.ports[gp as usize].link_free_at.max(ctx.now) + self.timing.pause_flight(gp as usize);
        ctx.schedule(at, upstream.feedback_event(Feedback::Isolate { mirror: m as u32 }));
        ctx.trace(TraceEvent::Isolation(IsolationEvent::MessageSent));
    }

    /// The key that mirror `m` signalled upstream.
    pub fn isolation_key(&self, m: u32) -> IsolationKey {
        self.isolation.as_ref().map_or_else(IsolationKey::default, |i| i.mirrors[m as usize].key)
    }

    /// An isolation message from downstream reached output `o`: it isolates the key too.
    pub(super) fn isolation_message(&mut self, ctx: &mut Ctx, o: u32, m: u32) {
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let key = iso.mirrors[m as usize].key;
        if iso.entry_overlapping(o as usize, &key).is_some() {
            return;
        }
        match iso.allocate(o as usize, key, ctx.now) {
            Some(e) => self.allocated(ctx, o as usize, e, true),
            None => ctx.trace(TraceEvent::Isolation(IsolationEvent::CftOverflow)),
        }
    }

    /// Packet `id` enters egress queue `oq`: counted for order; in a normal queue at or
    /// above `detect`, its key is a candidate; in a CFQ, its entry counts it.
    #[inline(never)]
    pub(super) fn isolation_enqueue(&mut self, ctx: &mut Ctx, oq: usize, id: u32) {
        let (n, vcs, now) = (self.queues, self.vcs, ctx.now);
        let (o, q) = (oq / n, oq % n);
        let d = self.priority_of(q);
        let p = ctx.packets[id];
        let wire = self.wire_class(q);
        let paused = self.sender.is_blocked(o, wire);
        let full = q >= vcs && !self.fits_isolated(o, q, p.size as u64);
        let bytes = self.output[oq].fifo.bytes + p.size as u64;
        let iso = self.isolation.as_deref_mut().expect("isolating");
        if q < vcs {
            iso.count(o, d, Side::EgressNormal, bucket(&p), true);
            if bytes < iso.params.detect_bytes {
                return;
            }
            let since = &mut iso.above_since[o * vcs + d];
            if *since == u64::MAX {
                *since = now;
            }
            if !control(&p) && iso.entry_of(o, &p).is_none() {
                self.detect(ctx, o, d, id);
            }
            return;
        }
        iso.count(o, d, Side::EgressIsolated, bucket(&p), true);
        let e = iso.entry_of(o, &p).expect("a packet in a congested-flow queue has its entry");
        iso.cft[e].cfq_packets += 1;
        if iso.cft[e].cfq_packets > iso.params.release {
            iso.cft[e].cool_since = u64::MAX;
        }
        if iso.busy_since[oq] == u64::MAX {
            iso.busy_since[oq] = now;
        }
        if paused || full {
            iso.pressed[oq] = true;
        }
        ctx.trace(TraceEvent::Isolation(IsolationEvent::PacketIsolated));
    }

    /// Packet `id` entering normal queue (o, d) found it at or above `detect`: allocate
    /// its key if the rules allow, or note the overflow.
    fn detect(&mut self, ctx: &mut Ctx, o: usize, d: usize, id: u32) {
        let (vcs, now) = (self.vcs, ctx.now);
        let paused = self.sender.is_blocked(o, d);
        let iso = self.isolation.as_deref().expect("isolating");
        let params = &iso.params;
        // A port paused downstream is a branch of a tree, not its root.
        if params.roots_only && paused {
            return;
        }
        let key = IsolationKey::of(params.key, &ctx.packets[id], o as u32);
        let recurs = iso.recurs(o, &key, now);
        if params.confirm > 0 && !recurs && now - iso.above_since[o * vcs + d] < params.confirm {
            return;
        }
        // A root is the destination that fills the queue: a packet of another one found
        // the queue long, but is not what makes it so.
        if params.key == IsolationKeyKind::Root && self.dominant_destination(ctx, o * self.queues + d) != key.dst {
            return;
        }
        let iso = self.isolation.as_deref_mut().expect("isolating");
        match iso.allocate(o, key, now) {
            Some(e) => {
                if recurs {
                    ctx.trace(TraceEvent::Isolation(IsolationEvent::Recurrence));
                }
                self.allocated(ctx, o, e, false);
            }
            None => {
                ctx.packets[id].isolation |= CANDIDATE;
                ctx.trace(TraceEvent::Isolation(IsolationEvent::CftOverflow));
            }
        }
    }

    /// Entry `e` of output `o` was just allocated: requests waiting at `o` for its key
    /// move to its CFQ, and its release is checked once it has lived `min_residency`
    /// (it may never hold a packet).
    fn allocated(&mut self, ctx: &mut Ctx, o: usize, e: usize, by_message: bool) {
        ctx.trace(TraceEvent::Isolation(IsolationEvent::Allocated { by_message }));
        self.point_requests(ctx, o, e, true);
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let entry = &mut iso.cft[e];
        entry.timer_at = ctx.now + iso.params.min_residency;
        let timer = Timer { owner: e as u32, epoch: entry.epoch, kind: TimerKind::Fabric(RELEASE_CHECK) };
        ctx.schedule(entry.timer_at, Event::Timer(timer));
    }

    /// The destination with the most bytes in egress queue `oq` (among the first few
    /// destinations found, which in a congestion tree's queue the root's is).
    fn dominant_destination(&self, ctx: &Ctx, oq: usize) -> u32 {
        let mut seen: [(u32, u64); 8] = [(NIL, 0); 8];
        let mut id = self.output[oq].fifo.head;
        while id != NIL {
            let p = &ctx.packets[id];
            if let Some(slot) = seen.iter_mut().find(|(d, _)| *d == p.dst || *d == NIL) {
                *slot = (p.dst, slot.1 + p.size as u64);
            }
            id = p.next;
        }
        seen.iter().max_by_key(|(_, bytes)| *bytes).map_or(NIL, |(d, _)| *d)
    }

    /// Packet `id` left egress queue `oq` for the link (after the marking policy saw it).
    #[inline(never)]
    pub(super) fn isolation_dequeue(&mut self, ctx: &mut Ctx, oq: usize, id: u32) {
        let (n, vcs) = (self.queues, self.vcs);
        let (o, q) = (oq / n, oq % n);
        let d = self.priority_of(q);
        ctx.packets[id].isolation &= !CANDIDATE;
        let p = ctx.packets[id];
        let (empty, bytes) = (self.output[oq].fifo.is_empty(), self.output[oq].fifo.bytes);
        let iso = self.isolation.as_deref_mut().expect("isolating");
        if q < vcs {
            iso.count(o, d, Side::EgressNormal, bucket(&p), false);
            if bytes < iso.params.detect_bytes {
                iso.above_since[o * vcs + d] = u64::MAX;
            }
            return;
        }
        ctx.packets[id].isolation |= PASSED_CFQ;
        iso.count(o, d, Side::EgressIsolated, bucket(&p), false);
        if empty {
            (iso.busy_since[oq], iso.pressed[oq]) = (u64::MAX, false);
        }
        let e = iso.entry_of(o, &p).expect("a packet in a congested-flow queue has its entry");
        iso.cft[e].cfq_packets -= 1;
        if iso.cft[e].cfq_packets <= iso.params.release && iso.cft[e].cool_since == u64::MAX {
            iso.cft[e].cool_since = ctx.now;
        }
        if iso.cft[e].cfq_packets == 0 {
            self.try_release(ctx, o, e);
        }
    }

    /// Releases entry `e` of output `o` if it may go now (no packet of its key in the
    /// CFQs, `min_residency` lived, and with ICI's hysteresis `min_residency` at or below
    /// `release` packets); otherwise checks again when it may.
    fn try_release(&mut self, ctx: &mut Ctx, o: usize, e: usize) {
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let entry = iso.cft[e];
        let mut due = entry.allocated_at + iso.params.min_residency;
        if iso.params.release > 0 {
            due = due.max(entry.cool_since.saturating_add(iso.params.min_residency));
        }
        if ctx.now >= due {
            return self.release(ctx, o, e);
        }
        if entry.timer_at >= ctx.now && entry.timer_at != 0 && entry.timer_at <= due {
            return;
        }
        let at = due;
        iso.cft[e].timer_at = at;
        let timer = Timer { owner: e as u32, epoch: entry.epoch, kind: TimerKind::Fabric(RELEASE_CHECK) };
        ctx.schedule(at, Event::Timer(timer));
    }

    /// One of the fabric's timers fired (`TimerKind::Fabric(code)`).
    pub fn timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        if timer.kind == TimerKind::Fabric(RELEASE_CHECK) {
            self.isolation_timer(ctx, timer);
        }
    }

    /// A release check of an entry is due.
    fn isolation_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        let Some(iso) = self.isolation.as_deref_mut() else { return };
        let e = timer.owner as usize;
        let entry = &mut iso.cft[e];
        if !entry.live || entry.epoch != timer.epoch {
            return;
        }
        entry.timer_at = 0;
        if entry.cfq_packets == 0 {
            let o = e / iso.per_port();
            self.try_release(ctx, o, e);
        }
    }

    /// Frees entry `e` of output `o`: requests waiting for its CFQ go to the normal queue,
    /// and the mirrors of its key at this switch's ingresses go once empty.
    fn release(&mut self, ctx: &mut Ctx, o: usize, e: usize) {
        let iso = self.isolation.as_deref_mut().expect("isolating");
        iso.release(o, e, ctx.now);
        ctx.trace(TraceEvent::Isolation(IsolationEvent::Released));
        let switch = self.ports[o].owner as usize;
        let (base, radix) = (self.port_base[switch] as usize, self.radix[switch] as usize);
        let per = iso.per_port();
        for m in base * per..(base + radix) * per {
            let mirror = &mut iso.mirrors[m];
            if mirror.live && mirror.entry == e as u32 {
                mirror.entry = NONE;
                if mirror.held == 0 {
                    mirror.live = false;
                }
            }
        }
        self.point_requests(ctx, o, e, false);
    }

    /// Points the requests waiting at output `o` whose head belongs to entry `e`'s key at
    /// its CFQ (`to_cfq`: the entry was just allocated) or back at the normal queue (it
    /// was released).
    fn point_requests(&mut self, ctx: &Ctx, o: usize, e: usize, to_cfq: bool) {
        let iso = self.isolation.as_deref().expect("isolating");
        let (key, k) = (iso.cft[e].key, iso.cft[e].cfq as usize);
        let base = self.port_base[self.ports[o].owner as usize] as usize;
        let first = self.mask_base(o);
        for w in 0..self.ports[o].mask_words as usize {
            let mut word = self.requests[first + w];
            while word != 0 {
                let bit = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let q = (base + self.bit_input[bit] as usize) * self.queues + self.bit_queue[bit] as usize;
                let p = &ctx.packets[self.input[q].fifo.head];
                if control(p) || !key.matches_packet(p) {
                    continue;
                }
                let d = self.priority_of(self.input[q].request_queue as usize);
                self.input[q].request_queue = if to_cfq { self.cfq_queue(d, k) } else { d } as u8;
            }
        }
    }

    /// A pause frame for class `class` reached output `o`: a paused priority is a branch,
    /// whose confirmation as a root starts over (`roots_only`); a paused congested-flow
    /// class presses its non-empty CFQs (ICI+).
    pub(super) fn isolation_paused(&mut self, o: usize, class: usize) {
        let (n, k, vcs) = (self.queues, self.cfqs(), self.vcs);
        let Some(iso) = self.isolation.as_deref_mut() else { return };
        if class < vcs {
            if iso.params.roots_only {
                iso.above_since[o * vcs + class] = u64::MAX;
            }
            return;
        }
        for oq in o * n + class..o * n + class + k {
            if iso.busy_since[oq] != u64::MAX {
                iso.pressed[oq] = true;
            }
        }
    }

    /// Whether ICI+ may mark packet `p` leaving (or entering) egress queue `oq`: a
    /// detected root's packet without a free entry, or a CFQ busy for `persist` and paused
    /// or full meanwhile.
    #[inline(never)]
    pub(super) fn isolation_points_at(&self, oq: usize, p: &Packet, now: u64) -> bool {
        let Some(iso) = self.isolation.as_deref() else { return true };
        if p.isolation & CANDIDATE != 0 {
            return true;
        }
        oq % self.queues >= self.vcs
            && iso.pressed[oq]
            && iso.busy_since[oq] != u64::MAX
            && now - iso.busy_since[oq] >= iso.params.persist
    }

    /// Data packet `id` is on its way to its host: check its flow's order, and count it as
    /// a false positive if it went through a CFQ though no hotspot receives it.
    #[inline(never)]
    pub(super) fn isolation_deliver(&mut self, ctx: &mut Ctx, id: u32) {
        let p = ctx.packets[id];
        if control(&p) {
            return;
        }
        let iso = self.isolation.as_deref_mut().expect("isolating");
        let last = iso.delivered.entry(FlowKey { src: p.src, dst: p.dst, qp: p.qp }).or_insert(0);
        if p.injected < *last {
            ctx.trace(TraceEvent::Isolation(IsolationEvent::Reordered));
        } else {
            *last = p.injected;
        }
        if p.isolation & PASSED_CFQ != 0 && !iso.hotspot.get(p.dst as usize).copied().unwrap_or(false) {
            ctx.trace(TraceEvent::Isolation(IsolationEvent::FalsePositive));
        }
    }

    /// Lets the heads of input port `i` that waited for an older packet of their flow in
    /// the other ingress queue request again, if that packet has gone.
    #[inline(never)]
    pub(super) fn release_held(&mut self, ctx: &mut Ctx, i: u32) {
        let n = self.queues;
        for queue in 0..n {
            let q = i as usize * n + queue;
            if self.input[q].request & HELD == 0 || self.input[q].fifo.is_empty() {
                continue;
            }
            if self.ingress_held(ctx, i, queue) {
                continue;
            }
            let posted = self.route_head::<Isolating>(ctx, i, queue);
            self.retry_posted(ctx, i, queue, posted, ctx.now);
        }
    }

    /// The first queue output `o` offers the link: round robin over its queues, normal
    /// queues first, or by weight the kind whose share of the bytes sent lags.
    #[inline(never)]
    pub(super) fn isolation_first_queue(&self, o: usize) -> usize {
        use crate::config::{CfqOrder, CfqScheduler};
        let iso = self.isolation.as_deref().expect("isolating");
        match iso.params.scheduler {
            CfqScheduler::Named(CfqOrder::RoundRobin) => self.ports[o].queue_next as usize,
            CfqScheduler::Named(CfqOrder::NormalFirst) => 0,
            CfqScheduler::Weight(w) => {
                let [normal, isolated] = iso.sent[o];
                if (isolated as f64) * (1.0 - w) < (normal as f64) * w {
                    self.vcs
                } else {
                    0
                }
            }
        }
    }

    /// `bytes` leave output `o` from queue `queue` (weighted selection's account): the
    /// class they travel in.
    #[inline(never)]
    pub(super) fn isolation_sent(&mut self, o: usize, queue: usize, bytes: u64) -> usize {
        let (vcs, class) = (self.vcs, self.wire_class(queue));
        if let Some(iso) = self.isolation.as_deref_mut() {
            iso.sent[o][(queue >= vcs) as usize] += bytes;
        }
        class
    }

    /// Checks the isolation accounts: every entry's count is the packets of its key in
    /// its port's CFQs, and a port's CFQs hold no packet without a live entry.
    pub(super) fn check_isolation(&self, packets: &crate::packet::PacketSlab) -> Result<(), String> {
        let Some(iso) = self.isolation.as_deref() else { return Ok(()) };
        let (n, per) = (self.queues, iso.per_port());
        for o in 0..self.ports.len() {
            let queued: usize = (self.vcs..n).map(|q| self.output[o * n + q].fifo.count(packets) as usize).sum();
            let counted: u32 = iso.cft[o * per..(o + 1) * per].iter().filter(|e| e.live).map(|e| e.cfq_packets).sum();
            if queued != counted as usize {
                return Err(format!(
                    "port {o}: {queued} packets in congested-flow queues, {counted} counted by entries"
                ));
            }
            for e in o * per..(o + 1) * per {
                let entry = &iso.cft[e];
                if !entry.live {
                    continue;
                }
                let mut held = 0;
                for q in self.vcs..n {
                    let mut id = self.output[o * n + q].fifo.head;
                    while id != NIL {
                        held += entry.key.matches_packet(&packets[id]) as u32;
                        id = packets[id].next;
                    }
                }
                if held != entry.cfq_packets {
                    return Err(format!(
                        "port {o}: isolation entry counts {} packets in its queues, {held} there",
                        entry.cfq_packets
                    ));
                }
            }
        }
        Ok(())
    }
}
