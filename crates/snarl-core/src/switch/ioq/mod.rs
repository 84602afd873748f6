//! The input-output queued (IOQ) switch, for all switches of a fabric at once.
//!
//! State lives in flat vectors indexed by global port id (`port_base[switch] + port`)
//! and by queue, `port * queues + queue` (see `queues` for the queue-id space), grouped
//! by what the per-packet path touches together (a port's state in one cache line, a
//! queue beside its accounting), so a hop touches few lines and never allocates. A packet's life at a switch:
//!
//! 1. `arrive`: its head enters its input queue (its VC's); at the head of the queue it is
//!    routed and requests the outputs of the routes it prefers among those the routing
//!    offers (one bit in each output's request mask; see `allocation`).
//! 2. `try_allocate`: when an output's crossbar side is free, a round-robin arbiter
//!    grants the first requesting input that is itself free and whose packet fits in the
//!    output queue's buffer; the request is withdrawn from the other outputs. The transfer takes size / (rate · speedup) but cannot end before
//!    the packet's tail has arrived (cut-through); then the receiver's side of flow
//!    control reacts to the freed input buffer space (credits travel the link back to
//!    the upstream sender, or the shared ingress memory is released).
//! 3. `try_transmit`: the output link sends the first ready packet (round robin over
//!    queues) that the sender's side of flow control lets go (credits, not paused); its output-buffer space is released
//!    when the tail has left.
//!
//! With virtual output queues (`switch.input_queuing = "voq"`, see `voq`), an input
//! queue's buffer is shared by one queue per output port: a packet is routed as it
//! arrives and joins the queue of its output, and the head of every such queue requests
//! its output at once (steps 1 and 2 per VoQ rather than per input queue); credits and
//! the crossbar's unit stay per input port or queue.
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
//!
//! The code is split by stage: `ports` (the per-port line and its far end), `queues`
//! (the input and output queues, their accounting and the queue-id space), `allocation` (routing the head of an
//! input queue, requests, arbitration, grants, re-routing), `egress` (transmission, link
//! wakes, watched queues with ECN marking and probes, hosts that drain slower than their
//! links), `voq` (virtual output queues), `lookahead` (what the event loop prefetches), `inspect` (what the watchdog, the reports and
//! the invariant checks read). This module holds the fabric's state, its
//! construction, the entry points the kernel calls, and the ingress side (admission,
//! sending flow-control feedback upstream).

use super::link_timing::LinkTimings;
use super::shared_memory::SharedMemory;
use crate::cc::AnyMarking;
use crate::flow_control::{Carried, Feedback, PauseState, Sender, UNLIMITED};
use crate::kernel::Event;
use crate::memory::fallible::{collected, filled, with_capacity, zeroed};
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::routing::AnyRouting;
use crate::topology::{AnyTopology, Endpoint, Topology};
use crate::units::Rate;

mod allocation;
mod crossbar;
mod discipline;
mod egress;
mod inspect;
mod isolating;
mod limits;
mod lookahead;
mod ports;
mod queues;
mod shares;
#[cfg(test)]
mod tests;
mod voq;

/// How a fabric's links keep the receivers' input buffers from overflowing: the
/// receiver's side of flow control.
pub use crate::flow_control::Receiver as LinkControl;
use crate::kernel::Peer;
use allocation::Arbitration;
use crossbar::VcPaths;
use discipline::{Fifo, Isolating, QueueDiscipline};
use egress::HostDrain;
pub(crate) use ports::Port;
use queues::NO_PROBE;
pub(crate) use queues::{InputQueue, OutputQueue};
use voq::Voqs;

/// The buffers and timing of every switch of a fabric.
pub struct IoqParams {
    pub vcs: usize,
    /// Queues per port beyond the VCs' own (ids `vcs..vcs + extra_queues`), for
    /// mechanisms that place packets apart from their VC's queue; they stay empty
    /// unless one does.
    pub extra_queues: usize,
    /// Credit fabrics: per-VC input buffer. Shared-buffer fabrics: a port's ingress share.
    pub input_capacity: u64,
    /// Per-VC (egress-queue) output buffer.
    pub output_capacity: u64,
    /// Shared-buffer fabrics: memory each switch lends to ingress ports beyond their share.
    pub shared_pool: u64,
    pub speedup: f64,
    /// Crossbar transfers hold their input and output VCs, not whole ports.
    pub per_vc_crossbar: bool,
    /// Input queues are split into virtual output queues (credit fabrics only).
    pub voq: bool,
    /// Hosts drain their input at most at this rate (credit fabrics only): the ports that
    /// face them hold credits for an input buffer per queue, returned as they drain.
    pub receive_cap: Option<Rate>,
    pub latency: u64,
    /// Link time each packet takes beyond its frame (`nic.framing`), in bytes: in the
    /// links' serialisation, never in buffers or credits.
    pub framing: u64,
    pub control: LinkControl,
    /// Start of the measurement interval (for paused time).
    pub measure_from: u64,
}

pub struct IoqFabric {
    /// The fabric's wiring, which the routing reads.
    topo: AnyTopology,
    /// Chooses each packet's output at each switch; it may keep state of its own.
    routing: AnyRouting,
    vcs: usize,
    /// Queues per port: the VCs' then the extra queues (the multiplier of every
    /// per-queue table).
    queues: usize,
    input_capacity: u64,
    output_capacity: u64,
    latency: u64,
    control: LinkControl,
    /// Shared-buffer fabrics: the ingress side of the packet memory.
    memory: SharedMemory,
    /// Arrivals take the plain path: credit flow control into FIFO input queues (not
    /// shared-buffer admission, not virtual output queues).
    plain_arrival: bool,
    /// The virtual output queues (empty with FIFO input queues).
    voqs: Voqs,
    /// The crossbar's unit and where requests wait, for arbitration.
    arbitration: Arbitration,
    /// Hosts that drain slower than their link (`nic.receive_cap`), if any.
    drain: HostDrain,
    /// Probe index of each output queue (port * queues + queue), or `NO_PROBE`.
    probe: Vec<u16>,

    // Per switch.
    port_base: Vec<u32>,
    radix: Vec<u16>,

    // Per global port.
    ports: Vec<Port>,
    /// Serialisation, crossbar transfer and latency of each port's link.
    timing: LinkTimings,

    // Per (global port, queue).
    input: Vec<InputQueue>,
    output: Vec<OutputQueue>,
    /// The sender's side of each output's flow control: credits in hand and on their
    /// way back, paused flags.
    sender: Sender,

    /// Request masks: bit (input port * queues + queue) of output port o's words.
    requests: Vec<u64>,
    /// Words of `requests` per output port: output o's mask starts at word o *
    /// `mask_stride` (the widest switch's; narrower switches leave some unused), so it is
    /// found without reading the port's line.
    mask_stride: usize,
    /// Bit of a request mask -> (input port, queue), precomputed to keep divisions off
    /// the per-packet path.
    bit_input: Vec<u16>,
    bit_queue: Vec<u8>,
    /// The crossbar's per-VC paths, if transfers hold VCs rather than ports.
    paths: VcPaths,
    /// Ports faster than others of their switch, which run several transfers at once.
    shares: shares::Shares,
    /// Routings that offer several routes: the ports each input queue's request was
    /// posted to (a bit per port of its switch, `posted_words` words per queue, indexed
    /// like the queues); empty for routings that offer one.
    posted: Vec<u64>,
    posted_words: usize,
    /// A reconsideration of waiting requests is under way (they do not nest).
    reconsidering: bool,
    /// The fabric outgrows the cache (`kernel::LOOKAHEAD_FROM`): the event loop looks
    /// ahead for it, and a request prefetches its output's lines as soon as the routing
    /// names the output (`prefetch_request`).
    looks_ahead: bool,

    /// The marking policy at the output queues, if configured.
    marking: Option<AnyMarking>,
    /// Output queues are watched (ECN marking, a probe, congestion isolation): their
    /// pushes and pops take the slower path that informs the watchers.
    watched: bool,
    /// The routing hears of every packet leaving an output (`AnyRouting::measures`).
    measured: bool,
    /// Congestion isolation's tables, if configured (see `isolating`).
    isolation: Option<Box<crate::isolation::state::IsolationState>>,
}

impl IoqFabric {
    /// The switches of `topo`, routing with `routing`.
    pub fn new(topo: AnyTopology, routing: AnyRouting, params: IoqParams) -> crate::Result<IoqFabric> {
        let IoqParams {
            vcs,
            extra_queues,
            input_capacity,
            output_capacity,
            shared_pool,
            speedup,
            per_vc_crossbar,
            voq,
            receive_cap,
            latency,
            framing,
            mut control,
            measure_from,
        } = params;
        let queues = vcs + extra_queues;
        if queues > u8::MAX as usize + 1 {
            return Err(crate::Error::config("switch.vcs", format!("at most 256 queues per port, found {queues}")));
        }
        let credit_based = control.credit_based();
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
        let mut links = with_capacity(total, what)?;
        let mut credit_capacity = with_capacity(total, what)?;
        for (s, &ports) in radix.iter().enumerate() {
            let words = (ports as usize * queues).div_ceil(64);
            for p in 0..ports as usize {
                let link = topo.link(s, p);
                let (far, capacity) = match topo.peer(s, p) {
                    Endpoint::Switch { switch, port } => {
                        let capacity = if credit_based { input_capacity as i64 } else { UNLIMITED };
                        (Peer::switch_port(port_base[switch as usize] + port as u32), capacity)
                    }
                    // A host that drains slower than its link has a receive buffer of an
                    // input buffer per queue (see `HostDrain`).
                    Endpoint::Host(h) => {
                        let capacity = if receive_cap.is_some() { input_capacity as i64 } else { UNLIMITED };
                        (Peer::host_nic(h), capacity)
                    }
                    Endpoint::Unconnected => (Peer::NONE, 0),
                };
                credit_capacity.push(capacity);
                links.push(link);
                port_state.push(Port { owner: s as u32, peer: far, mask_words: words as u16, ..Port::default() });
            }
        }
        let max_bits = radix.iter().map(|&r| r as usize * queues).max().unwrap_or(0);
        let mask_stride = max_bits.div_ceil(64);
        let timing = LinkTimings::new(total, links, speedup, framing)?;
        for (p, port) in port_state.iter_mut().enumerate() {
            port.link_class = timing.class_of(p);
        }
        let rates = collected(total, (0..total).map(|p| timing.rate(p)), what)?;
        let owners = collected(total, port_state.iter().map(|p: &Port| p.owner), what)?;
        let shares = shares::Shares::new(&rates, &owners, switches)?;
        if let LinkControl::Pfc(receiver) = &mut control {
            receiver.resize(total, queues)?;
        }
        let n = total * queues;
        let what_queues = "the switch queues";
        let widest = radix.iter().copied().max().unwrap_or(0) as usize;
        // VoQ switches request one output per packet: nothing is posted to several.
        let posted_words = if routing.offers_choices() && !voq { widest.div_ceil(64) } else { 0 };
        let hosts = topo.num_hosts();
        let measured = routing.measures();
        Ok(IoqFabric {
            topo,
            routing,
            vcs,
            queues,
            input_capacity,
            output_capacity,
            latency,
            control,
            memory: SharedMemory::new(total, switches, input_capacity, shared_pool)?,
            plain_arrival: credit_based && !voq,
            voqs: Voqs::new(voq, n, widest)?,
            arbitration: Arbitration::new(per_vc_crossbar, voq, shares.on()),
            drain: HostDrain::new(receive_cap, hosts)?,
            probe: filled(n, NO_PROBE, what_queues)?,
            timing,
            sender: Sender::new(total, credit_capacity, queues, measure_from)?,
            port_base,
            radix,
            ports: port_state,
            input: filled(n, InputQueue::default(), what_queues)?,
            output: filled(n, OutputQueue::default(), what_queues)?,
            requests: zeroed(total * mask_stride, "the switches' request masks")?,
            mask_stride,
            bit_input: collected(max_bits, (0..max_bits).map(|b| (b / queues) as u16), what)?,
            bit_queue: collected(max_bits, (0..max_bits).map(|b| (b % queues) as u8), what)?,
            posted: zeroed(n * posted_words, "the switches' posted requests")?,
            posted_words,
            reconsidering: false,
            looks_ahead: total as u64 >= crate::kernel::LOOKAHEAD_FROM,
            paths: VcPaths::new(per_vc_crossbar),
            shares,
            marking: None,
            watched: false,
            measured,
            isolation: None,
        })
    }

    /// Whether the fabric outgrows the cache, so that the event loop should look ahead
    /// for it (`kernel::LOOKAHEAD_FROM` switch ports or more).
    pub fn looks_ahead(&self) -> bool {
        self.looks_ahead
    }

    /// The fabric's topology.
    pub fn topology(&self) -> &AnyTopology {
        &self.topo
    }

    /// Marks packets at the output queues with `marking`.
    pub fn set_marking(&mut self, marking: AnyMarking) {
        self.marking = Some(marking);
        self.watched = true;
    }

    /// The head of `packet` reaches global input port `gp`.
    #[inline]
    pub fn arrive(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) {
        if !self.plain_arrival {
            return self.arrive_other(ctx, gp, packet);
        }
        self.enqueue_input::<Fifo>(ctx, gp, packet);
    }

    /// `arrive` into virtual output queues, or into a shared-buffer switch's ingress.
    #[inline(never)]
    fn arrive_other(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) {
        if self.voqs.on() {
            return self.arrive_voq(ctx, gp, packet);
        }
        if !self.admit(ctx, gp, packet) {
            return;
        }
        if self.isolation.is_some() {
            self.isolation_arrive(ctx, gp, packet);
            return self.enqueue_input::<Isolating>(ctx, gp, packet);
        }
        self.enqueue_input::<Fifo>(ctx, gp, packet);
    }

    /// `packet`, whose head reached global input port `gp`, joins its FIFO input queue,
    /// and is routed and requests its output if it is at the head (under discipline `D`).
    #[inline(always)]
    fn enqueue_input<D: QueueDiscipline>(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) {
        let queue = self.ingress_queue(&ctx.packets[packet]);
        let q = gp as usize * self.queues + queue;
        let was_empty = self.input[q].fifo.is_empty();
        self.input[q].fifo.push(ctx.packets, packet);
        // Under congestion isolation a queue may hold packets of two classes: PFC counts
        // each class apart, by the class it arrived in (the one upstream can pause).
        let (class, held) = D::arrived_class(self, gp, queue, &ctx.packets[packet]);
        if let Some(feedback) = self.control.on_enqueue(gp as usize, class, held) {
            self.feed_back(ctx, gp, feedback, ctx.now);
        }
        if was_empty {
            let posted = self.route_head::<D>(ctx, gp, queue);
            self.try_posted(ctx, gp, queue, posted);
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

    /// A packet of `bytes` left ingress queue (gp, queue) through the crossbar; the
    /// space it held is free from `freed_at`.
    #[inline]
    fn leave_ingress(&mut self, ctx: &mut Ctx, gp: u32, queue: usize, bytes: u64, freed_at: u64) {
        let (i, input, n) = (gp as usize, &self.input, self.queues);
        let feedback = self.control.on_dequeue(i, queue, bytes, || input[i * n + queue].fifo.bytes);
        self.release_ingress(ctx, gp, feedback, bytes, freed_at);
    }

    /// `leave_ingress` under congestion isolation, of a packet that arrived in class
    /// `class` (which PFC counts it in, whatever queue it waited in).
    fn leave_ingress_isolated(&mut self, ctx: &mut Ctx, gp: u32, class: usize, bytes: u64, freed_at: u64) {
        let i = gp as usize;
        let held = self.isolation.as_deref_mut().map_or(0, |iso| iso.pfc_left(i, class, bytes));
        let feedback = self.control.on_dequeue(i, class, bytes, || held);
        self.release_ingress(ctx, gp, feedback, bytes, freed_at);
    }

    /// What leaving the ingress frees: the shared memory, and feedback upstream.
    #[inline(always)]
    fn release_ingress(&mut self, ctx: &mut Ctx, gp: u32, feedback: Option<Feedback>, bytes: u64, freed_at: u64) {
        let i = gp as usize;
        if !self.control.credit_based() {
            self.memory.release(i, self.ports[i].owner as usize, bytes);
        }
        if let Some(feedback) = feedback {
            self.feed_back(ctx, gp, feedback, freed_at);
        }
    }

    /// Sends `feedback` from input `gp` to its upstream sender. Credits leave as the space
    /// frees (`freed_at`) and arrive one link latency later, in the sender's return ring
    /// when it has room (a sender blocked on credits is woken for them); a ring full of
    /// returns still on their way sends them as an event. (Inlined: on the credit path it
    /// runs once per packet-hop.)
    #[inline(always)]
    fn feed_back(&mut self, ctx: &mut Ctx, gp: u32, feedback: Feedback, freed_at: u64) {
        let Feedback::Credit { queue, bytes } = feedback else {
            return self.send_frame(ctx, gp, feedback);
        };
        let (upstream, at) = (self.ports[gp as usize].peer, freed_at + self.link(gp as usize).latency);
        if let Some(port) = upstream.port() {
            match self.sender.return_credit(port as usize, at, queue as usize, bytes as u64, ctx.now) {
                Carried::InRing => {}
                Carried::InRingWake => self.wake(ctx, port, at),
                Carried::Full => ctx.schedule(at, Event::FeedbackToSwitch { port, feedback }),
            }
        } else if let Some(host) = upstream.host() {
            if !ctx.host_returns.push(host as usize, at, queue as usize, bytes as u64) {
                ctx.schedule(at, Event::FeedbackToHost { host, feedback });
            } else if ctx.host_returns.unblock(host as usize) {
                ctx.schedule(at, Event::HostWake { host });
            }
        }
    }

    /// Sends a pause or resume frame from input `gp` to its upstream sender. It goes out
    /// after the frame on the reverse link (control frames wait for the wire but not for
    /// queued data) and takes effect on arrival.
    fn send_frame(&mut self, ctx: &mut Ctx, gp: u32, feedback: Feedback) {
        let upstream = self.ports[gp as usize].peer;
        if upstream == Peer::NONE {
            return;
        }
        if let Feedback::Pause { queue, on } = feedback {
            ctx.trace(TraceEvent::PauseSent { port: gp, queue, on });
        }
        let at = self.ports[gp as usize].link_free_at.max(ctx.now) + self.timing.pause_flight(gp as usize);
        ctx.schedule(at, upstream.feedback_event(feedback));
    }

    /// Flow-control feedback (credits, a pause or resume frame) reached output `port`.
    pub fn feedback(&mut self, ctx: &mut Ctx, port: u32, feedback: Feedback) {
        if let Feedback::Pause { on: true, queue } = feedback {
            ctx.trace(TraceEvent::PauseReceived { port: Some(port), queue });
            if self.isolation.is_some() {
                self.isolation_paused(port as usize, queue as usize);
            }
        }
        if let Feedback::Isolate { mirror } = feedback {
            return self.isolation_message(ctx, port, mirror);
        }
        if self.sender.on_feedback(port as usize, feedback, ctx.now) {
            self.try_transmit(ctx, port);
        }
    }

    /// A crossbar resource that an output was waiting for is free: retry its allocation.
    pub fn alloc_retry(&mut self, ctx: &mut Ctx, out: u32) {
        if self.ports[out as usize].retry_at == ctx.now {
            self.ports[out as usize].retry_at = 0;
        }
        self.try_allocate(ctx, out);
    }

    /// The output link of `port` may have finished a packet or have one ready.
    pub fn link_wake(&mut self, ctx: &mut Ctx, port: u32) {
        if self.ports[port as usize].wake_at == ctx.now {
            self.ports[port as usize].wake_at = 0;
        }
        self.try_transmit(ctx, port);
    }

    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// The paused priorities of every output (PFC).
    pub fn pause_state(&self) -> &PauseState {
        self.sender.pause_state()
    }
}

impl crate::observe::FabricView for IoqFabric {
    fn port_name(&self, global_port: usize) -> String {
        IoqFabric::port_name(self, global_port)
    }

    fn max_ingress(&self) -> u64 {
        self.memory.max_used()
    }

    fn ingress_share(&self) -> u64 {
        self.memory.share()
    }
}
