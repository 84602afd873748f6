//! The input-output queued (IOQ) switch, for all switches of a fabric at once.
//!
//! State lives in flat vectors indexed by global port id (`port_base[switch] + port`)
//! and by `port * vcs + vc`, grouped by what the per-packet path touches together (a
//! port's state in one cache line, a queue beside its accounting), so a hop touches few
//! lines and never allocates. A packet's life at a switch:
//!
//! 1. `arrive`: its head enters the input VC queue; at the head of the queue it is
//!    routed and requests its output (one bit in the output's request mask).
//! 2. `try_allocate`: when the output's crossbar side is free, a round-robin arbiter
//!    grants the first requesting input that is itself free and whose packet fits in the
//!    output VC buffer. The transfer takes size / (rate · speedup) but cannot end before
//!    the packet's tail has arrived (cut-through); then the input buffer space is
//!    returned to the upstream sender as credits that travel the link back.
//! 3. `try_transmit`: the output link sends the first ready packet (round robin over
//!    VCs) for which the downstream buffer has room; its output-buffer space is released
//!    when the tail has left.
//!
//! Links are flow-controlled by credits (InfiniBand) or, in a shared-buffer switch, by
//! PFC or nothing at all (Ethernet): the input queues of a port then share the port's
//! ingress share of the packet memory plus a pool common to the switch; a packet that
//! finds no room is dropped, and PFC pauses a priority upstream before that can happen.
//!
//! Wake-ups are scheduled only when something waits: an output that cannot allocate
//! because its crossbar side or the requesting inputs are busy retries when the earliest
//! of them frees (`AllocRetry`); a link wakes at the end of a transmission only if packets
//! or requests wait for it. Released output-buffer space is settled lazily, by whoever
//! next looks at that output.

use super::arbiter::{Arbiter, RoundRobin};
use super::link_timing::{LinkTiming, LinkTimings};
use super::shared_memory::SharedMemory;
use crate::cc::ecn::Ecn;
use crate::flow_control::{CreditReturns, CreditSender, PauseState, PfcFrame, PfcReceiver, UNLIMITED};
use crate::kernel::{Ctx, Event, HOST_TARGET};
use crate::memory::fallible::{collected, filled, with_capacity, zeroed};
use crate::observe::TraceEvent;
use crate::packet::{Fifo, NIL};
use crate::routing::{PortView, Route, RouteQuery, Routing};
use crate::topology::{Endpoint, Topology};

mod inspect;

/// How a fabric's links keep the receivers' input buffers from overflowing.
pub enum LinkControl {
    /// Credits per VC: a packet starts only if the receiver's buffer has room for it.
    Credit,
    /// Shared ingress memory and priority flow control.
    Pfc(PfcReceiver),
    /// Shared ingress memory, and packets that find it full are dropped.
    TailDrop,
}

/// The buffers and timing of every switch of a fabric.
pub struct IoqParams {
    pub vcs: usize,
    /// Credit fabrics: per-VC input buffer. Shared-buffer fabrics: a port's ingress share.
    pub input_capacity: u64,
    /// Per-VC (egress-queue) output buffer.
    pub output_capacity: u64,
    /// Shared-buffer fabrics: memory each switch lends to ingress ports beyond their share.
    pub shared_pool: u64,
    pub speedup: f64,
    pub latency: u64,
    pub control: LinkControl,
    /// Start of the measurement interval (for paused time).
    pub measure_from: u64,
}

/// An input VC queue, with the size and output VC of its head packet's request beside
/// it, so that arbitration, which may look at a waiting request many times, need not read
/// the packet, and finds it in the line it reads the queue from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InputQueue {
    fifo: Fifo,
    request_size: u32,
    request_vc: u8,
}

/// An output VC queue and the output-buffer bytes it accounts for (queued, plus a packet
/// on the wire until its tail has left): read and written together on every grant and
/// transmission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OutputQueue {
    fifo: Fifo,
    used: u64,
}

/// The state of one global port that the per-packet path reads and writes together, in
/// one cache line: its output side (link, crossbar, wake-ups, arbitration) and, as an
/// input, when it is free to send through the crossbar again.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Port {
    link_free_at: u64,
    /// Earliest pending `LinkWake` (0: none).
    wake_at: u64,
    /// Earliest pending allocation retry of the output (0: none).
    retry_at: u64,
    crossbar_free_at: u64,
    input_busy_until: u64,
    /// Output-buffer bytes (and their VC) to release once the current transmission ends.
    releasing_bytes: u32,
    /// Far end: a global input port, `HOST_TARGET | host`, or `NIL` when unwired.
    peer: u32,
    /// The switch the port belongs to.
    owner: u32,
    /// First word of the output's request mask in `IoqFabric::requests`.
    mask_base: u32,
    /// Number of bits set in the output's request mask.
    waiting: u16,
    /// Request bit the round-robin arbiter looks at first.
    grant_next: u16,
    /// Number of words of the output's request mask.
    mask_words: u16,
    releasing_vc: u8,
    /// VC the output link looks at first (round robin over VCs).
    vc_next: u8,
}

/// Most waiting packets one output re-routes at a time.
const MAX_REROUTES: usize = 16;

/// No probe on this queue.
const NO_PROBE: u16 = u16::MAX;

pub struct IoqFabric {
    vcs: usize,
    input_capacity: u64,
    output_capacity: u64,
    latency: u64,
    control: LinkControl,
    /// Shared-buffer fabrics: the ingress side of the packet memory.
    memory: SharedMemory,
    /// Paused priorities of each output (PFC).
    pause: PauseState,
    /// Probe index of each output queue (port * vcs + vc), or `NO_PROBE`.
    probe: Vec<u16>,

    // Per switch.
    port_base: Vec<u32>,
    radix: Vec<u16>,

    // Per global port.
    ports: Vec<Port>,
    /// Serialisation, crossbar transfer and latency of each port's link.
    timing: LinkTimings,

    // Per (global port, VC).
    input: Vec<InputQueue>,
    output: Vec<OutputQueue>,
    credits: CreditSender,
    /// Credits on their way back to each output.
    returns: CreditReturns,

    /// Request masks: bit (input port * vcs + vc) of output port o's words.
    requests: Vec<u64>,
    /// Bit of a request mask -> (input port, VC), precomputed to keep divisions off the
    /// per-packet path.
    bit_input: Vec<u16>,
    bit_vc: Vec<u8>,

    /// ECN marking at the output queues, if configured.
    ecn: Option<Ecn>,
    /// Output queues are watched (ECN marking or a probe): their pushes and pops take the
    /// slower path that informs the watchers.
    watched: bool,
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
    fn has_room(&self, port: u16, vc: u8, bytes: u64) -> bool {
        self.fabric.has_room(self.base + port as usize, vc as usize, bytes, self.now)
    }
}

impl IoqFabric {
    pub fn new(topo: &impl Topology, params: IoqParams) -> crate::Result<IoqFabric> {
        let IoqParams {
            vcs,
            input_capacity,
            output_capacity,
            shared_pool,
            speedup,
            latency,
            mut control,
            measure_from,
        } = params;
        let credit_based = matches!(control, LinkControl::Credit);
        let switches = topo.num_switches();
        let what = "the switch ports";
        let mut port_base = with_capacity(switches, what)?;
        let mut radix = with_capacity(switches, what)?;
        let mut total = 0usize;
        for s in 0..switches {
            port_base.push(total as u32);
            let r = topo.num_ports(s);
            radix.push(r as u16);
            total += r;
        }
        let mut port_state = with_capacity(total, what)?;
        let mut timings = with_capacity(total, what)?;
        let mut credit_capacity = with_capacity(total, what)?;
        let mut words_total = 0usize;
        for (s, &ports) in radix.iter().enumerate() {
            let words = (ports as usize * vcs).div_ceil(64);
            for p in 0..ports as usize {
                let link = topo.link(s, p);
                let (far, capacity) = match topo.peer(s, p) {
                    Endpoint::Switch { switch, port } => {
                        let capacity = if credit_based { input_capacity as i64 } else { UNLIMITED };
                        (port_base[switch as usize] + port as u32, capacity)
                    }
                    Endpoint::Host(h) => (HOST_TARGET | h, UNLIMITED),
                    Endpoint::Unconnected => (NIL, 0),
                };
                credit_capacity.push(capacity);
                timings.push(LinkTiming::new(link, speedup));
                port_state.push(Port {
                    owner: s as u32,
                    peer: far,
                    mask_base: words_total as u32,
                    mask_words: words as u16,
                    ..Port::default()
                });
                words_total += words;
            }
        }
        let max_bits = radix.iter().map(|&r| r as usize * vcs).max().unwrap_or(0);
        if let LinkControl::Pfc(receiver) = &mut control {
            receiver.resize(total)?;
        }
        let queues = "the switch queues";
        Ok(IoqFabric {
            vcs,
            input_capacity,
            output_capacity,
            latency,
            control,
            memory: SharedMemory::new(total, switches, input_capacity, shared_pool)?,
            pause: PauseState::new(total, vcs, measure_from)?,
            probe: filled(total * vcs, NO_PROBE, queues)?,
            timing: LinkTimings::new(total, timings)?,
            credits: CreditSender::new(total, credit_capacity, vcs)?,
            port_base,
            radix,
            ports: port_state,
            input: filled(total * vcs, InputQueue::default(), queues)?,
            output: filled(total * vcs, OutputQueue::default(), queues)?,
            returns: CreditReturns::new(total)?,
            requests: zeroed(words_total, "the switches' request masks")?,
            bit_input: collected(max_bits, (0..max_bits).map(|b| (b / vcs) as u16), what)?,
            bit_vc: collected(max_bits, (0..max_bits).map(|b| (b % vcs) as u8), what)?,
            ecn: None,
            watched: false,
        })
    }

    /// Marks packets at the output queues with `ecn`.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = Some(ecn);
        self.watched = true;
    }

    /// Output queue bytes of global port `gp` plus credits consumed downstream, over its
    /// VCs, as the switch itself can tell at `now`.
    #[inline]
    fn output_occupancy(&self, gp: usize, now: u64) -> u64 {
        let v = self.vcs;
        let (leaving, _) = self.leaving(gp, now);
        let returned = self.returns.arrived(gp, now);
        self.output[gp * v..gp * v + v].iter().map(|q| q.used).sum::<u64>() - leaving + self.credits.in_use(gp)
            - returned
    }

    /// Whether output queue (gp, vc) has room for a packet of `bytes` now (counting the
    /// space of a packet whose tail has left).
    fn has_room(&self, gp: usize, vc: usize, bytes: u64, now: u64) -> bool {
        let (leaving, leaving_vc) = self.leaving(gp, now);
        let freed = if leaving_vc == vc { leaving } else { 0 };
        self.output[gp * self.vcs + vc].used + bytes <= self.output_capacity + freed
    }

    /// Output-buffer bytes of output `gp` whose tail has left by `now` but that are not
    /// settled yet, and their VC (`settle` releases them).
    #[inline]
    fn leaving(&self, gp: usize, now: u64) -> (u64, usize) {
        let (bytes, vc) = (self.ports[gp].releasing_bytes, self.ports[gp].releasing_vc);
        if self.ports[gp].link_free_at <= now {
            (bytes as u64, vc as usize)
        } else {
            (0, 0)
        }
    }

    /// Global id of `port` of `switch`.
    #[inline]
    pub fn global_port(&self, switch: usize, port: usize) -> u32 {
        self.port_base[switch] + port as u32
    }

    /// Records the occupancy of output queue (port, vc) in `probe` from now on.
    pub fn add_probe(&mut self, switch: usize, port: usize, vc: usize, probe: u16) {
        let q = self.global_port(switch, port) as usize * self.vcs + vc;
        self.probe[q] = probe;
        self.watched = true;
    }

    /// The head of `packet` reaches global input port `gp`.
    #[inline]
    pub fn arrive(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) {
        let vc = ctx.packets[packet].vc as usize;
        let q = gp as usize * self.vcs + vc;
        if !matches!(self.control, LinkControl::Credit) && !self.admit(ctx, gp, packet) {
            return;
        }
        let was_empty = self.input[q].fifo.is_empty();
        self.input[q].fifo.push(ctx.packets, packet);
        if let LinkControl::Pfc(receiver) = &mut self.control {
            if let Some(frame) = receiver.on_change(gp as usize, vc, self.input[q].fifo.bytes) {
                self.send_pfc(ctx, gp, vc, frame);
            }
        }
        if was_empty {
            let out = self.route_head(ctx, gp, vc);
            self.try_allocate(ctx, out);
        }
    }

    /// Shared-buffer admission: the packet's bytes come from the port's ingress share,
    /// then from the switch's pool; with neither it is dropped.
    fn admit(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) -> bool {
        let admitted =
            self.memory.admit(gp as usize, self.ports[gp as usize].owner as usize, ctx.packets[packet].size as u64);
        if !admitted {
            ctx.drop_packet(packet);
        }
        admitted
    }

    /// A packet of `bytes` left the ingress queue (gp, vc) of a shared-buffer switch.
    fn release_ingress(&mut self, ctx: &mut Ctx, gp: u32, vc: usize, bytes: u64) {
        let i = gp as usize;
        self.memory.release(i, self.ports[i].owner as usize, bytes);
        if let LinkControl::Pfc(receiver) = &mut self.control {
            if let Some(frame) = receiver.on_change(i, vc, self.input[i * self.vcs + vc].fifo.bytes) {
                self.send_pfc(ctx, gp, vc, frame);
            }
        }
    }

    /// Sends a pause or resume frame for priority `vc` from input `gp` to its upstream
    /// sender. It goes out after the frame on the reverse link (control frames wait for
    /// the wire but not for queued data) and takes effect on arrival.
    fn send_pfc(&mut self, ctx: &mut Ctx, gp: u32, vc: usize, frame: PfcFrame) {
        let upstream = self.ports[gp as usize].peer;
        if upstream == NIL {
            return;
        }
        let on = frame == PfcFrame::Pause;
        ctx.trace(TraceEvent::PauseSent { port: gp, queue: vc as u8, on });
        let at = self.ports[gp as usize].link_free_at.max(ctx.now) + self.timing.of(gp as usize).pause_flight;
        ctx.schedule(at, Event::Pause { target: upstream, vc: vc as u8, on });
    }

    /// A pause (`on`) or resume frame for priority `vc` reached output `port`.
    pub fn pause(&mut self, ctx: &mut Ctx, port: u32, vc: usize, on: bool) {
        if on {
            ctx.trace(TraceEvent::PauseReceived);
        }
        if self.pause.set(port as usize, vc, on, ctx.now) && !on {
            self.try_transmit(ctx, port);
        }
    }

    /// Routes the packet at the head of input (gp, vc) and posts its request.
    #[inline]
    fn route_head(&mut self, ctx: &mut Ctx, gp: u32, vc: usize) -> u32 {
        let route = self.decide(ctx, gp, vc);
        self.post(ctx, gp, vc, route)
    }

    /// The routing's choice for the packet at the head of input (gp, vc).
    #[inline]
    fn decide(&self, ctx: &mut Ctx, gp: u32, vc: usize) -> Route {
        let id = self.input[gp as usize * self.vcs + vc].fifo.head;
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
        };
        let view = SwitchView { fabric: self, base: base as usize, now: ctx.now };
        ctx.routing.route(ctx.topo, &query, &view, ctx.routing_rng)
    }

    /// Records `route` on the head packet of input (gp, vc) and posts its request to the
    /// chosen output, which it returns.
    #[inline]
    fn post(&mut self, ctx: &mut Ctx, gp: u32, vc: usize, route: Route) -> u32 {
        let id = self.input[gp as usize * self.vcs + vc].fifo.head;
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let p = &mut ctx.packets[id];
        p.out_port = route.port;
        p.out_vc = route.vc;
        p.via = route.via;
        let q = gp as usize * self.vcs + vc;
        self.input[q].request_size = p.size;
        self.input[q].request_vc = route.vc;
        let out = base + route.port as u32;
        let bit = (gp - base) as usize * self.vcs + vc;
        self.requests[self.ports[out as usize].mask_base as usize + bit / 64] |= 1 << (bit % 64);
        self.ports[out as usize].waiting += 1;
        out
    }

    /// Source-adaptive routing, output `out` full: the packets waiting for it at their
    /// first switch (and whose input is free to send) are routed again, as a router
    /// re-evaluates the candidates of a waiting head packet; a request moves to an output
    /// with room for its packet, and that output tries to allocate. Moves go only to
    /// outputs with room, which grants use up, so this ends.
    fn reroute_waiting(&mut self, ctx: &mut Ctx, out: u32) {
        let o = out as usize;
        if !ctx.routing.adapts_at_source() || !self.has_requests(o) {
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
    fn may_reroute(&self, ctx: &Ctx, base: usize, bit: usize) -> bool {
        let input = base + self.bit_input[bit] as usize;
        let head = self.input[input * self.vcs + self.bit_vc[bit] as usize].fifo.head;
        self.ports[input].input_busy_until <= ctx.now && ctx.packets[head].hops == 1
    }

    /// Routes the packet of request `bit` of output `out` again; returns the output its
    /// request moved to, if the new choice differs and has room for the packet now.
    fn reroute(&mut self, ctx: &mut Ctx, out: u32, bit: usize) -> Option<u32> {
        let o = out as usize;
        let base = self.port_base[self.ports[o].owner as usize];
        let (input, vc) = (base + self.bit_input[bit] as u32, self.bit_vc[bit] as usize);
        let route = self.decide(ctx, input, vc);
        let moved_to = base + route.port as u32;
        let size = ctx.packets[self.input[input as usize * self.vcs + vc].fifo.head].size as u64;
        if moved_to == out || !self.has_room(moved_to as usize, route.vc as usize, size, ctx.now) {
            return None;
        }
        self.requests[self.ports[o].mask_base as usize + bit / 64] &= !(1 << (bit % 64));
        self.ports[o].waiting -= 1;
        Some(self.post(ctx, input, vc, route))
    }

    /// Grants the crossbar path into output `out` to one eligible request, if any. The
    /// frequent early outs (no request, crossbar side busy) are inlined at the callers.
    #[inline]
    fn try_allocate(&mut self, ctx: &mut Ctx, out: u32) {
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
    fn allocate(&mut self, ctx: &mut Ctx, out: u32) {
        let (o, now) = (out as usize, ctx.now);
        self.settle(o, now);
        let switch = self.ports[o].owner as usize;
        let base = self.port_base[switch] as usize;
        let bits = self.radix[switch] as usize * self.vcs;
        let vcs = self.vcs;
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
            let q = input * vcs + self.bit_vc[bit] as usize;
            let fits = self.output[o * vcs + self.input[q].request_vc as usize].used
                + self.input[q].request_size as u64
                <= self.output_capacity;
            output_full |= !fits;
            fits
        });
        if let Some(bit) = picked {
            let (input, vc) = (base + self.bit_input[bit] as usize, self.bit_vc[bit] as usize);
            self.grant(ctx, input as u32, vc, out, bit);
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

    #[inline]
    fn has_requests(&self, o: usize) -> bool {
        self.ports[o].waiting != 0
    }

    /// Releases the output-buffer space of a packet whose tail has left.
    #[inline]
    fn settle(&mut self, o: usize, now: u64) -> bool {
        let (bytes, vc) = self.leaving(o, now);
        if bytes == 0 {
            return false;
        }
        self.output[o * self.vcs + vc].used -= bytes;
        self.ports[o].releasing_bytes = 0;
        true
    }

    /// Schedules an allocation retry of output `out` at `at` unless one is pending no later.
    fn retry(&mut self, ctx: &mut Ctx, out: u32, at: u64) {
        let pending = self.ports[out as usize].retry_at;
        if pending != 0 && pending >= ctx.now && pending <= at {
            return;
        }
        self.ports[out as usize].retry_at = at;
        ctx.schedule(at, Event::AllocRetry { output: out });
    }

    fn grant(&mut self, ctx: &mut Ctx, input: u32, vc: usize, out: u32, bit: usize) {
        let (i, o, vcs) = (input as usize, out as usize, self.vcs);
        let id = self.input[i * vcs + vc].fifo.pop(ctx.packets);
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
        let out_vc = p.out_vc as usize;
        self.ports[i].input_busy_until = done;
        self.ports[o].crossbar_free_at = done;
        if matches!(self.control, LinkControl::Credit) {
            // The input buffer frees as the tail leaves it: credits travel back upstream.
            let (upstream, at) = (self.ports[i].peer, done + self.timing.of(i).latency);
            if upstream & HOST_TARGET == 0 {
                if !self.returns.push_collecting(upstream as usize, at, vc, size, now, &mut self.credits) {
                    ctx.schedule(at, Event::Credit { target: upstream, vc: vc as u8, bytes: size as u32 });
                } else if self.returns.unblock(upstream as usize) {
                    self.wake(ctx, upstream, at);
                }
            } else {
                let host = upstream & !HOST_TARGET;
                if !ctx.host_returns.push(host as usize, at, vc, size) {
                    ctx.schedule(at, Event::Credit { target: upstream, vc: vc as u8, bytes: size as u32 });
                } else if ctx.host_returns.unblock(host as usize) {
                    ctx.schedule(at, Event::HostWake { host });
                }
            }
        } else {
            self.release_ingress(ctx, input, vc, size);
        }

        let oq = o * vcs + out_vc;
        self.output[oq].used += size;
        if self.watched {
            self.enqueue_watched(ctx, oq, id);
        } else {
            self.output[oq].fifo.push(ctx.packets, id);
        }
        if !self.input[i * vcs + vc].fifo.is_empty() {
            // The next packet of this VC can go once the input is free again.
            let wanted = self.route_head(ctx, input, vc);
            self.retry(ctx, wanted, done);
        }
        self.try_transmit(ctx, out);
    }

    /// Puts `id` into output queue `oq` under the eyes of its watchers: the ECN marker
    /// (at enqueue) and a queue probe.
    #[inline(never)]
    fn enqueue_watched(&mut self, ctx: &mut Ctx, oq: usize, id: u32) {
        if let Some(ecn) = &mut self.ecn {
            if ecn.on_enqueue(self.output[oq].fifo.bytes, &mut ctx.packets[id]) {
                ctx.trace(TraceEvent::EcnMarked);
            }
        }
        self.output[oq].fifo.push(ctx.packets, id);
        if self.probe[oq] != NO_PROBE {
            ctx.trace(TraceEvent::QueueLength { probe: self.probe[oq], bytes: self.output[oq].fifo.bytes });
        }
    }

    /// Takes the head of output queue `oq` for the link under the eyes of its watchers:
    /// the ECN marker (at dequeue) and a queue probe.
    #[inline(never)]
    fn dequeue_watched(&mut self, ctx: &mut Ctx, oq: usize) -> u32 {
        let id = self.output[oq].fifo.pop(ctx.packets);
        if self.probe[oq] != NO_PROBE {
            ctx.trace(TraceEvent::QueueLength { probe: self.probe[oq], bytes: self.output[oq].fifo.bytes });
        }
        if let Some(ecn) = &mut self.ecn {
            if ecn.on_dequeue(self.output[oq].fifo.bytes, &mut ctx.packets[id]) {
                ctx.trace(TraceEvent::EcnMarked);
            }
        }
        id
    }

    /// A crossbar resource that an output was waiting for is free: retry its allocation.
    pub fn alloc_retry(&mut self, ctx: &mut Ctx, out: u32) {
        if self.ports[out as usize].retry_at == ctx.now {
            self.ports[out as usize].retry_at = 0;
        }
        self.try_allocate(ctx, out);
    }

    /// Credits for (`port`, `vc`) came back from downstream.
    pub fn credit(&mut self, ctx: &mut Ctx, port: u32, vc: usize, bytes: u64) {
        self.credits.on_credit(port as usize, vc, bytes);
        self.try_transmit(ctx, port);
    }

    /// The output link of `port` may have finished a packet or have one ready.
    pub fn link_wake(&mut self, ctx: &mut Ctx, port: u32) {
        if self.ports[port as usize].wake_at == ctx.now {
            self.ports[port as usize].wake_at = 0;
        }
        self.try_transmit(ctx, port);
    }

    /// Starts the next transmission of output `port` if its link is free (the frequent
    /// early out, link busy, is inlined at the callers).
    #[inline]
    fn try_transmit(&mut self, ctx: &mut Ctx, port: u32) {
        let o = port as usize;
        if self.ports[o].link_free_at > ctx.now {
            self.wake(ctx, port, self.ports[o].link_free_at);
            return;
        }
        self.transmit(ctx, port);
    }

    /// `try_transmit` with the link free: send the first eligible packet, or wait.
    #[inline(never)]
    fn transmit(&mut self, ctx: &mut Ctx, port: u32) {
        let (o, vcs, now) = (port as usize, self.vcs, ctx.now);
        let released = self.settle(o, now);
        let mut blocked = false;
        let mut chosen = None;
        let mut earliest = u64::MAX;
        let mut earliest_vc = 0;
        let mut nonempty = 0;
        let first = self.ports[o].vc_next as usize;
        for k in 0..vcs {
            let vc = if first + k >= vcs { first + k - vcs } else { first + k };
            let head = self.output[o * vcs + vc].fifo.head;
            if head == NIL {
                continue;
            }
            nonempty += 1;
            let p = &ctx.packets[head];
            if !self.has_credits(o, vc, p.size as u64, now) || self.pause.is_paused(o, vc) {
                blocked = true;
                continue;
            }
            if p.ready_at > now {
                if p.ready_at < earliest {
                    (earliest, earliest_vc) = (p.ready_at, vc);
                }
                continue;
            }
            chosen = Some(vc);
            break;
        }
        if let Some(vc) = chosen {
            self.send(ctx, port, vc, now);
        } else if earliest != u64::MAX {
            let sole = nonempty == 1 && self.output[o * vcs + earliest_vc].fifo.is_single();
            if sole {
                // The only packet for an idle link with credits in hand: nothing can
                // overtake it, so commit its transmission now for when it is ready.
                self.send(ctx, port, earliest_vc, earliest);
            } else {
                self.wake(ctx, port, earliest);
            }
        }
        if blocked && chosen.is_none() {
            // Wake for the next credit return; a return not yet on its way wakes us
            // when it is sent.
            if let Some(at) = self.returns.block(o) {
                self.wake(ctx, port, at);
            }
        }
        if released {
            self.try_allocate(ctx, port);
        }
    }

    /// Puts the head of (port, vc) on the wire from `now` (the current time, or a later
    /// time at which the transmission is committed to start).
    fn send(&mut self, ctx: &mut Ctx, port: u32, vc: usize, now: u64) {
        let (o, vcs) = (port as usize, self.vcs);
        let id = if self.watched {
            self.dequeue_watched(ctx, o * vcs + vc)
        } else {
            self.output[o * vcs + vc].fifo.pop(ctx.packets)
        };
        self.ports[o].vc_next = if vc + 1 == vcs { 0 } else { vc as u8 + 1 };
        let size = ctx.packets[id].size as u64;
        let link = *self.timing.of(o);
        let serialise = link.serializer.time(size);
        let end = now + serialise;
        self.credits.on_send(o, vc, size);
        self.ports[o].link_free_at = end;
        (self.ports[o].releasing_bytes, self.ports[o].releasing_vc) = (size as u32, vc as u8);
        // Wake at the end of the transmission only if someone waits for this output.
        let queued = self.output[o * vcs..o * vcs + vcs].iter().any(|q| !q.fifo.is_empty());
        if queued || self.has_requests(o) {
            self.ports[o].wake_at = end;
            ctx.schedule(end, Event::LinkWake { port });
        }
        let arrival = now + link.latency;
        let p = &mut ctx.packets[id];
        p.tail_at = arrival + serialise;
        p.hops += 1;
        ctx.trace(TraceEvent::Hop);
        *ctx.last_progress = now;
        let far = self.ports[o].peer;
        if far & HOST_TARGET != 0 {
            ctx.send_to_host(arrival + serialise, id);
        } else {
            ctx.schedule(arrival, Event::Arrive { port: far, packet: id });
        }
    }

    /// Whether output `o` holds credits for `bytes` on `vc` at `now`. Returned credits are
    /// collected only when those in hand do not suffice: collecting reads the link's
    /// return ring, and most transmissions find credits in hand (only this output spends
    /// them, so collecting later changes nothing).
    #[inline]
    fn has_credits(&mut self, o: usize, vc: usize, bytes: u64, now: u64) -> bool {
        if self.credits.can_send(o, vc, bytes) {
            return true;
        }
        self.returns.collect(o, now, &mut self.credits);
        self.credits.can_send(o, vc, bytes)
    }

    /// Schedules a `LinkWake` at `at` unless one is already pending no later.
    fn wake(&mut self, ctx: &mut Ctx, port: u32, at: u64) {
        let pending = self.ports[port as usize].wake_at;
        if pending >= ctx.now && pending != 0 && pending <= at {
            return;
        }
        self.ports[port as usize].wake_at = at;
        ctx.schedule(at, Event::LinkWake { port });
    }

    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// What a port's ingress queues hold before borrowing from the pool (shared-buffer
    /// fabrics).
    pub fn ingress_share(&self) -> u64 {
        self.memory.share()
    }

    /// Highest ingress occupancy any port reached (shared-buffer fabrics).
    pub fn max_ingress(&self) -> u64 {
        self.memory.max_used()
    }

    /// The paused priorities of every output (PFC).
    pub fn pause_state(&self) -> &PauseState {
        &self.pause
    }

    /// "switch S port P" for a global port id.
    pub fn port_name(&self, gp: usize) -> String {
        let switch = self.ports[gp].owner;
        format!("switch {switch} port {}", gp as u32 - self.port_base[switch as usize])
    }

    /// Credit counters all within [0, capacity], and output accounting consistent.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.credits.check_bounds()?;
        let credit_based = matches!(self.control, LinkControl::Credit);
        for (port, far) in self.ports.iter().map(|p| p.peer).enumerate().filter(|_| credit_based) {
            for vc in 0..self.vcs {
                let held = self.credits.credits(port, vc) + self.returns.pending(port, vc) as i64;
                if far & HOST_TARGET == 0 && far != NIL && held > self.input_capacity as i64 {
                    return Err(format!("port {port} vc {vc}: {held} credit bytes exceed the buffer"));
                }
            }
        }
        for (i, &OutputQueue { fifo: q, used }) in self.output.iter().enumerate() {
            let port = i / self.vcs;
            let releasing = if self.ports[port].releasing_vc as usize == i % self.vcs {
                self.ports[port].releasing_bytes as u64
            } else {
                0
            };
            if used != q.bytes + releasing || used > self.output_capacity {
                return Err(format!(
                    "output buffer {i}: {used} bytes accounted, {} queued + {releasing} leaving",
                    q.bytes
                ));
            }
        }
        if matches!(self.control, LinkControl::Credit) {
            for (i, q) in self.input.iter().map(|q| &q.fifo).enumerate() {
                if q.bytes > self.input_capacity {
                    return Err(format!("input buffer {i} holds {} bytes > capacity {}", q.bytes, self.input_capacity));
                }
            }
            return Ok(());
        }
        let vcs = self.vcs;
        let queued = |gp: usize| self.input[gp * vcs..(gp + 1) * vcs].iter().map(|q| q.fifo.bytes).sum();
        let ports_of = |s: usize| self.port_base[s] as usize..self.port_base[s] as usize + self.radix[s] as usize;
        self.memory.check(queued, ports_of)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn port_state_fills_one_cache_line() {
        // A field more and every port spans two lines, which the per-packet path touches.
        assert_eq!(std::mem::size_of::<super::Port>(), 64);
        assert_eq!(std::mem::align_of::<super::Port>(), 64);
    }
}
