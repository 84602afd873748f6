//! Queue disciplines and crossbar units as types, not flags.
//!
//! The switch's per-packet paths (arrival, routing the head, posting a request,
//! arbitration, the grant, transmission) are generic over a [`QueueDiscipline`], which
//! says what happens at the points where switches differ: where a request waits (a FIFO
//! input queue or a virtual output queue), which output queue a packet joins and whether
//! it fits there, what the ingress does as a packet leaves, what the egress sends next and
//! in which class. Arbitration is also generic over a [`CrossbarUnit`]: what one transfer
//! holds (ports or VCs). Each implementation is a zero-sized type and every hook is
//! inlined, so a fabric pays only for the discipline it has: `Fifo` is the plain switch,
//! and its hooks compile to what the code did before there were others.
//!
//! A new discipline is a new implementation of [`QueueDiscipline`] (overriding the hooks
//! it changes), one arm in [`Arbitration`](super::allocation::Arbitration) and in the
//! places that pick the instantiation (`IoqFabric::allocate`, `arrive_other`, `transmit`,
//! `consult_marking`).

use super::queues::InputQueue;
use super::shares::Side;
use super::IoqFabric;
use crate::model::Ctx;
use crate::packet::{Packet, PacketSlab};

/// What a queue discipline changes in the switch's paths. Every hook has the plain
/// (FIFO input queues, one class per priority) behaviour as its default.
pub(super) trait QueueDiscipline {
    /// Whether the head of input (gp, queue) must wait before it is routed (for an older
    /// packet of its flow elsewhere).
    #[inline(always)]
    fn head_held(_fabric: &IoqFabric, _ctx: &Ctx, _gp: u32, _queue: usize) -> bool {
        false
    }

    /// The output queue of output `out` that packet `p`, routed onto VC `vc`, joins.
    #[inline(always)]
    fn request_queue(fabric: &IoqFabric, _out: usize, _p: &Packet, vc: u8) -> usize {
        fabric.egress_queue(vc)
    }

    /// What arriving packet `packet` counts for in PFC at ingress (gp, queue): its class,
    /// and the bytes held in that class.
    #[inline(always)]
    fn arrived_class(fabric: &mut IoqFabric, gp: u32, queue: usize, _packet: &Packet) -> (usize, u64) {
        (queue, fabric.input[gp as usize * fabric.queues + queue].fifo.bytes)
    }

    /// The request of input queue `q` (global index) at output `o` of a switch whose
    /// ports start at `base`.
    #[inline(always)]
    fn request(fabric: &IoqFabric, q: usize, _o: usize, _base: usize) -> &InputQueue {
        &fabric.input[q]
    }

    /// Whether a request may join any of several output queues (a choice of VCs).
    #[inline(always)]
    fn has_queue_choice(request: &InputQueue) -> bool {
        request.other_queues != 0
    }

    /// Whether output queue (o, q) has room for `bytes` more.
    #[inline(always)]
    fn fits(fabric: &IoqFabric, o: usize, q: usize, bytes: u64) -> bool {
        fabric.output[o * fabric.queues + q].used + bytes <= fabric.output_capacity
    }

    /// Takes the granted packet from input (i, queue) for output `o`.
    #[inline(always)]
    fn pop_granted(fabric: &mut IoqFabric, packets: &PacketSlab, i: usize, queue: usize, _o: usize) -> u32 {
        fabric.input[i * fabric.queues + queue].fifo.pop(packets)
    }

    /// Whether the granted request of input queue `q` chose among several VCs, and among
    /// several routes.
    #[inline(always)]
    fn granted_choices(fabric: &IoqFabric, q: usize) -> (bool, bool) {
        let input = &fabric.input[q];
        (input.other_queues != 0, input.is(super::queues::CHOICES))
    }

    /// Packet `id` of input (i, queue) leaves the ingress through the crossbar into
    /// output queue (o, out_queue), its input buffer free from `done`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn leave_ingress(
        fabric: &mut IoqFabric,
        ctx: &mut Ctx,
        i: usize,
        queue: usize,
        _id: u32,
        _o: usize,
        _out_queue: usize,
        size: u64,
        done: u64,
    ) {
        fabric.leave_ingress(ctx, i as u32, queue, size, done);
    }

    /// After a grant from input (i, queue) to `out` (request bit `bit`) whose transfer
    /// holds the input until `done`: the queue's next head requests its output.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn next_request(fabric: &mut IoqFabric, ctx: &mut Ctx, i: usize, queue: usize, _out: u32, _bit: usize, done: u64)
    where
        Self: Sized,
    {
        if !fabric.input[i * fabric.queues + queue].fifo.is_empty() {
            let posted = fabric.route_head::<Self>(ctx, i as u32, queue);
            fabric.retry_posted(ctx, i as u32, queue, posted, done);
        }
    }

    /// After a grant from input `i`, once the granted packet is in its output queue.
    #[inline(always)]
    fn after_grant(_fabric: &mut IoqFabric, _ctx: &mut Ctx, _i: u32) {}

    /// The output queue of output `o` that transmission looks at first.
    #[inline(always)]
    fn first_queue(fabric: &IoqFabric, o: usize) -> usize {
        fabric.ports[o].queue_next as usize
    }

    /// The class on the wire (what the link's flow control counts) of output queue `q`.
    #[inline(always)]
    fn wire_class(_fabric: &IoqFabric, q: usize) -> usize {
        q
    }

    /// Whether the head `id` of output queue (o, queue) must wait (for an older packet
    /// of its flow in another queue).
    #[inline(always)]
    fn egress_held(_fabric: &IoqFabric, _ctx: &Ctx, _o: usize, _queue: usize, _id: u32) -> bool {
        false
    }

    /// A packet of `bytes` leaves output queue (o, queue) on the wire: its class there.
    #[inline(always)]
    fn sent(_fabric: &mut IoqFabric, _o: usize, queue: usize, _bytes: u64) -> usize {
        queue
    }

    /// Packet `id` leaves the fabric for its host.
    #[inline(always)]
    fn leaving_for_host(_fabric: &mut IoqFabric, _ctx: &mut Ctx, _id: u32) {}

    /// Whether the marking policy may mark packet `p` in output queue `oq` (whether the
    /// discipline points at it).
    #[inline(always)]
    fn marking_points(_fabric: &IoqFabric, _oq: usize, _p: &Packet, _now: u64) -> bool {
        true
    }

    /// Whether a mark on packet `p` in output queue `oq` counts as a mark on an isolated
    /// packet.
    #[inline(always)]
    fn marked_isolated(_fabric: &IoqFabric, _oq: usize, _p: &Packet) -> bool {
        false
    }
}

/// FIFO input queues, one class per priority: the plain switch.
pub(super) struct Fifo;

impl QueueDiscipline for Fifo {}

/// Virtual output queues at the inputs: a packet requests its output at arrival, from the
/// VoQ of its input queue and output, so a full output blocks only its own VoQ.
pub(super) struct Voq;

impl QueueDiscipline for Voq {
    #[inline(always)]
    fn request(fabric: &IoqFabric, q: usize, o: usize, base: usize) -> &InputQueue {
        &fabric.voqs.queues[fabric.voqs.index(q, o - base)]
    }

    /// A VoQ's request has one route and one output queue, chosen at arrival.
    #[inline(always)]
    fn has_queue_choice(_request: &InputQueue) -> bool {
        false
    }

    #[inline(always)]
    fn pop_granted(fabric: &mut IoqFabric, packets: &PacketSlab, i: usize, queue: usize, o: usize) -> u32 {
        fabric.voq_pop(packets, i, queue, o)
    }

    #[inline(always)]
    fn granted_choices(_fabric: &IoqFabric, _q: usize) -> (bool, bool) {
        (false, false)
    }

    #[inline(always)]
    fn next_request(fabric: &mut IoqFabric, ctx: &mut Ctx, i: usize, queue: usize, out: u32, bit: usize, done: u64) {
        fabric.voq_next(ctx, i, queue, out, bit, done);
    }
}

/// Congestion isolation (`isolating.rs`): congested flows in queues of their own, each
/// priority's congested-flow class counted apart by PFC, and order kept per flow between
/// the two kinds of queue.
pub(super) struct Isolating;

impl QueueDiscipline for Isolating {
    #[inline(always)]
    fn head_held(fabric: &IoqFabric, ctx: &Ctx, gp: u32, queue: usize) -> bool {
        fabric.ingress_held(ctx, gp, queue)
    }

    #[inline(always)]
    fn request_queue(fabric: &IoqFabric, out: usize, p: &Packet, vc: u8) -> usize {
        fabric.isolated_queue(out, p, vc)
    }

    /// A queue may hold packets of two classes: PFC counts each class apart, by the class
    /// it arrived in (the one upstream can pause).
    #[inline(always)]
    fn arrived_class(fabric: &mut IoqFabric, gp: u32, queue: usize, packet: &Packet) -> (usize, u64) {
        match fabric.isolation.as_deref_mut() {
            Some(iso) => iso.pfc_arrived(gp as usize, packet),
            None => (queue, fabric.input[gp as usize * fabric.queues + queue].fifo.bytes),
        }
    }

    #[inline(always)]
    fn fits(fabric: &IoqFabric, o: usize, q: usize, bytes: u64) -> bool {
        fabric.fits_isolated(o, q, bytes)
    }

    #[inline(always)]
    fn leave_ingress(
        fabric: &mut IoqFabric,
        ctx: &mut Ctx,
        i: usize,
        queue: usize,
        id: u32,
        o: usize,
        out_queue: usize,
        size: u64,
        done: u64,
    ) {
        fabric.isolation_leave_ingress(ctx, i, queue, id, o, out_queue);
        let class = fabric.arrival_class(ctx.packets[id].isolation, queue);
        fabric.leave_ingress_isolated(ctx, i as u32, class, size, done);
    }

    #[inline(always)]
    fn after_grant(fabric: &mut IoqFabric, ctx: &mut Ctx, i: u32) {
        fabric.release_held(ctx, i);
    }

    #[inline(always)]
    fn first_queue(fabric: &IoqFabric, o: usize) -> usize {
        fabric.isolation_first_queue(o)
    }

    #[inline(always)]
    fn wire_class(fabric: &IoqFabric, q: usize) -> usize {
        fabric.wire_class(q)
    }

    /// A congested-flow queue sends once older packets of its head's flow have left the
    /// normal queue.
    #[inline(always)]
    fn egress_held(fabric: &IoqFabric, ctx: &Ctx, o: usize, queue: usize, id: u32) -> bool {
        queue >= fabric.vcs && fabric.egress_held(ctx, o, queue, id)
    }

    #[inline(always)]
    fn sent(fabric: &mut IoqFabric, o: usize, queue: usize, bytes: u64) -> usize {
        fabric.isolation_sent(o, queue, bytes)
    }

    #[inline(always)]
    fn leaving_for_host(fabric: &mut IoqFabric, ctx: &mut Ctx, id: u32) {
        fabric.isolation_deliver(ctx, id);
    }

    /// ICI+'s marking judges only what isolation points at.
    #[inline(always)]
    fn marking_points(fabric: &IoqFabric, oq: usize, p: &Packet, now: u64) -> bool {
        fabric.isolation_points_at(oq, p, now)
    }

    /// A mark on a packet in a congested-flow queue, or on a detected root's.
    #[inline(always)]
    fn marked_isolated(fabric: &IoqFabric, oq: usize, p: &Packet) -> bool {
        oq % fabric.queues >= fabric.vcs || p.isolation & super::isolating::CANDIDATE != 0
    }
}

/// What one transfer through the crossbar holds (`crossbar.rs`).
pub(super) trait CrossbarUnit {
    /// Whether an output may take in another packet (on another VC) at once after a grant.
    const SEVERAL_AT_ONCE: bool;

    /// Whether output `o` may take in another packet at once after a grant.
    #[inline(always)]
    fn may_take_another(_fabric: &IoqFabric, _o: usize) -> bool {
        Self::SEVERAL_AT_ONCE
    }

    /// When input port `input` is busy with another transfer until a later time, that
    /// time (transfers holding ports); `None` if it may start one now.
    #[inline(always)]
    fn input_busy(_fabric: &IoqFabric, _input: usize, _now: u64) -> Option<u64> {
        None
    }

    /// When the path from input queue (input, queue) into output queue (o, out_queue)
    /// frees (transfers holding VCs, or sharing a fast port; 0 when the port-level
    /// checks cover it).
    #[inline(always)]
    fn path_free_at(_fabric: &IoqFabric, _input: usize, _queue: usize, _o: usize, _out_queue: usize, _now: u64) -> u64 {
        0
    }

    /// How long moving `bytes` from input `i` into output `o` takes: at the output's
    /// crossbar rate (speedup x its link rate).
    #[inline(always)]
    fn transfer_time(fabric: &IoqFabric, _i: usize, o: usize, bytes: u64, _now: u64) -> u64 {
        fabric.link(o).crossbar.time(bytes)
    }

    /// A transfer from input queue (i, queue) into output queue (o, out_queue) holds
    /// their paths until `done`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn occupy(fabric: &mut IoqFabric, i: usize, queue: usize, o: usize, out_queue: usize, done: u64, _now: u64) {
        fabric.occupy(i, queue, o, out_queue, done);
    }

    /// When input `i`, which started a transfer that ends at `done`, may start its next.
    #[inline(always)]
    fn input_next_at(_fabric: &IoqFabric, _i: usize, done: u64, _now: u64) -> u64 {
        done
    }
}

/// Transfers hold their input port and output port (the default).
pub(super) struct Ports;

impl CrossbarUnit for Ports {
    const SEVERAL_AT_ONCE: bool = false;

    #[inline(always)]
    fn input_busy(fabric: &IoqFabric, input: usize, now: u64) -> Option<u64> {
        let until = fabric.ports[input].input_busy_until;
        (until > now).then_some(until)
    }
}

/// Transfers hold only their input queue and output queue (`switch.crossbar = "per_vc"`).
pub(super) struct Vcs;

impl CrossbarUnit for Vcs {
    const SEVERAL_AT_ONCE: bool = true;

    #[inline(always)]
    fn path_free_at(fabric: &IoqFabric, input: usize, queue: usize, o: usize, out_queue: usize, _now: u64) -> u64 {
        fabric.input_free_at(input, queue).max(fabric.output_free_at(o, out_queue))
    }
}

/// Transfers hold ports, and ports whose link is faster than others of their switch run
/// several at once, up to their link rate (`shares.rs`); a transfer runs at the slower
/// of its two ports' rates, or slower where a port has less left. Fabrics whose switches
/// have such ports only.
pub(super) struct Shared;

impl Shared {
    /// The rate a transfer from `i` to `o` would hold at both ports if it started `now`
    /// (before speedup), or, if it may not start, when to look again.
    #[inline(always)]
    fn admitted(fabric: &IoqFabric, i: usize, o: usize, now: u64) -> Result<u64, u64> {
        let (shares, timing) = (&fabric.shares, &fabric.timing);
        let full = timing.rate(i).min(timing.rate(o));
        let (mut rate, mut next_end) = (full, u64::MAX);
        for (side, port) in [(Side::Output, o), (Side::Input, i)] {
            if shares.shared(port) {
                let (left, end) = shares.available(side, port, timing.rate(port), now);
                rate = rate.min(left);
                next_end = next_end.min(end);
            }
        }
        // Less than half its rate left: wait for a transfer to end rather than crawl.
        if 2 * rate >= full && rate > 0 {
            Ok(rate)
        } else {
            Err(next_end)
        }
    }
}

impl CrossbarUnit for Shared {
    const SEVERAL_AT_ONCE: bool = true;

    #[inline(always)]
    fn may_take_another(fabric: &IoqFabric, o: usize) -> bool {
        fabric.shares.shared(o)
    }

    #[inline(always)]
    fn input_busy(fabric: &IoqFabric, input: usize, now: u64) -> Option<u64> {
        if fabric.shares.shared(input) {
            return None; // Checked against the transfer's rate in `path_free_at`.
        }
        Ports::input_busy(fabric, input, now)
    }

    #[inline(always)]
    fn path_free_at(fabric: &IoqFabric, input: usize, _queue: usize, o: usize, _out_queue: usize, now: u64) -> u64 {
        if !fabric.shares.shared(o) && fabric.ports[o].crossbar_free_at > now {
            return fabric.ports[o].crossbar_free_at;
        }
        Shared::admitted(fabric, input, o, now).map_or_else(|again| again, |_| now)
    }

    #[inline(always)]
    fn transfer_time(fabric: &IoqFabric, i: usize, o: usize, bytes: u64, now: u64) -> u64 {
        let (rate_i, rate_o) = (fabric.timing.rate(i), fabric.timing.rate(o));
        let (slower, full) = if rate_i < rate_o { (i, rate_i) } else { (o, rate_o) };
        let time = fabric.timing.of(slower).crossbar.time(bytes);
        match Shared::admitted(fabric, i, o, now) {
            Ok(rate) if rate < full => (time as u128 * full as u128).div_ceil(rate as u128) as u64,
            _ => time,
        }
    }

    #[inline(always)]
    fn occupy(fabric: &mut IoqFabric, i: usize, _queue: usize, o: usize, _out_queue: usize, done: u64, now: u64) {
        let full = fabric.timing.rate(i).min(fabric.timing.rate(o));
        let rate = Shared::admitted(fabric, i, o, now).unwrap_or(full);
        if fabric.shares.shared(i) {
            fabric.shares.take(Side::Input, i, rate, done, now);
        } else {
            fabric.ports[i].input_busy_until = done;
        }
        if fabric.shares.shared(o) {
            fabric.shares.take(Side::Output, o, rate, done, now);
            // When the output may look at a request again (`try_allocate`'s early out):
            // now while a slot is idle, else when the first transfer ends.
            let (left, end) = fabric.shares.available(Side::Output, o, fabric.timing.rate(o), now);
            fabric.ports[o].crossbar_free_at = if left > 0 { now } else { end };
        } else {
            fabric.ports[o].crossbar_free_at = done;
        }
    }

    #[inline(always)]
    fn input_next_at(fabric: &IoqFabric, i: usize, done: u64, now: u64) -> u64 {
        if fabric.shares.shared(i) {
            now
        } else {
            done
        }
    }
}
