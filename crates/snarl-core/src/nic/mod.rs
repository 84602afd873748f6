//! Endpoints: a bounded source queue of messages the workload posts (`Nics::post`),
//! segmentation into packets, per-host injection caps (set by the workload) and the
//! flow-control view of the host link (credits, or the priorities PFC has paused).
//!
//! The source queue is bounded as on a real NIC: a message posted to a full queue is
//! counted (`source_queue_full`) and dropped at the source, never stored, so memory
//! stays bounded at and beyond saturation. A run whose senders have several streams (the
//! parts of a mix) bounds each stream on its own (`Nics::set_streams`): the ring holds
//! the bound times the streams, and a count per (host, stream) refuses a stream's
//! messages when it has the bound queued, so a stream that cannot send never takes
//! another's room.
//!
//! By default a host sends its queued messages in strict FIFO order. With
//! `nic.scheduling = "round_robin"`, or with congestion control (DCQCN, IB CC, the
//! per-pair control), the NIC schedules its queued messages round robin by flow: it
//! sends the next packet of the first queued message (starting after the one served
//! last) whose flow's rate allows it now and whose VC has credits, only the oldest queued
//! message of a flow being eligible (per-flow order); it wakes at the earliest next-send
//! time otherwise. A slow or
//! throttled flow thus never blocks the other flows of its host. Under congestion control
//! it also sends control packets from a small per-host queue, ahead of data: congestion
//! notifications (DCQCN's CNPs, IB CC's BECNs) and, on the receive path of a congestion
//! control that acknowledges data, ACKs and NACKs (the per-pair control's echo a switch's
//! mark). A window-based control holds a flow
//! back until an acknowledgement arrives (`cc::BLOCKED`), which wakes the scheduler.
//!
//! The files: `scheduling.rs` (which packet goes next: FIFO, or round robin by flow under
//! congestion control, with control packets ahead of data), `ports.rs` (the host link:
//! launching a packet, credits and pause frames coming back), `receive.rs` (what
//! arrives: delivery, and what a packet's kind means to the congestion control),
//! `intra_node.rs` (the link between the endpoints of one node: a message between two
//! GPUs of a node is handed to it at `post` and never becomes packets).

mod config;
mod intra_node;
mod isolation;
mod policy;
mod ports;
mod receive;
mod scheduling;
mod sequence;

pub use config::{InjectionVc, NicConfig, NicScheduling, Receiver, Wire};

use crate::cc::{AnyCongestionControl, CongestionControl};
use crate::flow_control::{CreditReturns, CreditSender, PauseState, UNLIMITED};
use crate::kernel::Peer;
use crate::memory::fallible::{collected, filled, with_capacity, zeroed};
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::{Message, Tag, NIL};
use crate::routing::hash::flow_vc;
use crate::topology::{Endpoint, LinkConfig, Nodes, Topology};
use crate::units::{Rate, SerialTime};
use scheduling::FlowScheduler;
use std::collections::VecDeque;
use strength_reduce::StrengthReducedUsize;

pub struct Nics {
    vcs: usize,
    /// `vcs` as a divisor: a flow's VC is a hash modulo `vcs`, once per message.
    vc_divisor: StrengthReducedUsize,
    /// Largest payload of a packet.
    mtu: u64,
    /// What the wire adds to each packet: the header (in the packet's size, which
    /// buffers and credits hold) and the framing (link time only).
    wire: Wire,
    /// A control packet's frame: its own bytes and the header.
    control_frame: u64,
    /// Slots of each host's ring: the source-queue bound times the streams.
    queue_capacity: usize,
    /// Streams per host (1 unless the run has mixes), each bounded to `stream_capacity`
    /// queued messages, counted in `stream_len` (per host and stream; empty for 1).
    streams: usize,
    stream_capacity: u32,
    stream_len: Vec<u32>,
    /// Far end of each host link: a switch input port, another host (back to back), or
    /// nothing.
    peer: Vec<Peer>,
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
    /// Keys the switches asked to isolate, if congestion isolation is configured.
    isolation: Option<Box<isolation::NicIsolation>>,
    /// The link between the endpoints of one node, if nodes have several.
    intra_node: Option<Box<intra_node::IntraNode>>,
    /// The receive path: the congestion control hears of every data packet at its
    /// destination (`CongestionControl::wants_receipts`), which then arrives as an event.
    receipts: bool,
    /// Per-flow sequence numbers and the receivers' order (`nic.receiver`), if in force.
    sequence: Option<Box<sequence::Sequencing>>,
    /// Data packets go on the lowest VC with room, not their flow's
    /// (`nic.injection_vc = "lowest_with_room"`).
    lowest_vc: bool,
}

/// Size of a control packet: a congestion notification (CNP, BECN), an acknowledgement
/// (ACK, NACK) or an in-order receiver's NAK of a sequence error. It is an Ethernet or
/// InfiniBand frame like any packet, so the wire adds `[nic] header` and `framing` to it
/// as to data.
pub const CONTROL_BYTES: u64 = 64;

impl Nics {
    /// `port_of(switch, port)` gives the global id of a switch port;
    /// `switch_input_capacity` is the credit budget per VC of a host link (`None`: the
    /// link is not credit-controlled); `mtu` is the largest payload, `wire` what the wire
    /// adds to it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topo: &impl Topology,
        port_of: impl Fn(usize, usize) -> u32,
        vcs: usize,
        switch_input_capacity: Option<u64>,
        mtu: u64,
        wire: Wire,
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
                Endpoint::Switch { switch, port } => Peer::switch_port(port_of(switch as usize, port as usize)),
                Endpoint::Host(other) => Peer::host_nic(other),
                Endpoint::Unconnected => Peer::NONE,
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
            wire,
            control_frame: CONTROL_BYTES + wire.header,
            queue_capacity,
            streams: 1,
            stream_capacity: queue_capacity as u32,
            stream_len: Vec::new(),
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
            isolation: None,
            intra_node: None,
            receipts: false,
            sequence: None,
            lowest_vc: false,
        })
    }

    /// Which VC data packets go on (`nic.injection_vc`).
    pub fn set_injection_vc(&mut self, choice: InjectionVc) {
        self.lowest_vc = choice == InjectionVc::LowestWithRoom;
    }

    /// The VC a data packet whose frame is `bytes` goes on from host `h`, whose flow's
    /// VC is `flow`: the flow's, or under `lowest_with_room` the lowest VC with credits
    /// for it and not paused (the flow's when none is: the packet waits, and the next
    /// credit return or resume frame asks again).
    #[inline]
    pub(super) fn injection_vc(&self, h: usize, flow: u8, bytes: u64) -> u8 {
        if !self.lowest_vc {
            return flow;
        }
        self.lowest_vc_with_room(h, bytes).unwrap_or(flow)
    }

    #[inline(never)]
    fn lowest_vc_with_room(&self, h: usize, bytes: u64) -> Option<u8> {
        (0..self.vcs).find(|&vc| self.credits.can_send(h, vc, bytes) && !self.pause.is_paused(h, vc)).map(|vc| vc as u8)
    }

    /// Gives every host `streams` source streams, each bounded to the source-queue
    /// capacity on its own. Called before anything is posted and before flow scheduling
    /// is enabled.
    pub fn set_streams(&mut self, streams: usize) -> crate::Result<()> {
        debug_assert!(self.scheduler.is_none(), "streams are set before flow scheduling");
        if streams <= 1 {
            return Ok(());
        }
        let hosts = self.peer.len();
        let bound = self.queue_capacity;
        self.queue_capacity = bound * streams;
        self.streams = streams;
        self.stream_capacity = bound as u32;
        self.queue = filled(hosts * self.queue_capacity, NIL, "the NICs' source queues")?;
        self.stream_len = zeroed(hosts * streams, "the NICs' source queues")?;
        Ok(())
    }

    /// Carries messages between endpoints of one node of `nodes` over the intra-node
    /// `link` instead of the network.
    pub fn enable_intra_node(&mut self, nodes: Nodes, link: LinkConfig) -> crate::Result<()> {
        self.intra_node = Some(Box::new(intra_node::IntraNode::new(nodes, self.peer.len(), link)?));
        Ok(())
    }

    /// Messages on the intra-node link, posted and not yet delivered.
    pub fn intra_node_in_flight(&self) -> u64 {
        self.intra_node.as_deref().map_or(0, intra_node::IntraNode::in_flight)
    }

    /// Message `message` starts over the intra-node link (its sender's port is free).
    pub fn local_send(&mut self, ctx: &mut Ctx, message: u32) {
        if let Some(link) = self.intra_node.as_deref_mut() {
            link.start(ctx, message);
        }
    }

    /// Message `message` arrives over the intra-node link.
    pub fn local_deliver(&mut self, ctx: &mut Ctx, message: u32) {
        if let Some(link) = self.intra_node.as_deref_mut() {
            link.deliver(ctx, message);
        }
    }

    /// Schedules queued messages round robin by flow instead of FIFO.
    pub fn enable_flow_scheduling(&mut self) -> crate::Result<()> {
        let hosts = self.peer.len();
        if self.scheduler.is_none() {
            let what = "the NICs' flow scheduler";
            self.scheduler = Some(Box::new(FlowScheduler {
                cc: None,
                control: filled(hosts, VecDeque::new(), what)?,
                next_position: zeroed(hosts, what)?,
                next_stream: if self.streams > 1 { zeroed(hosts, what)? } else { Vec::new() },
                flow_head: zeroed(hosts * self.queue_capacity, what)?,
            }));
        }
        Ok(())
    }

    /// Congestion control `cc` at every NIC (with flow scheduling), with the receive path
    /// if it asks for it.
    pub fn enable_congestion_control(&mut self, cc: AnyCongestionControl) -> crate::Result<()> {
        self.enable_flow_scheduling()?;
        self.receipts = cc.wants_receipts();
        if let Some(scheduler) = self.scheduler.as_deref_mut() {
            scheduler.cc = Some(cc);
        }
        Ok(())
    }

    /// Whether every data packet must reach its destination NIC as a `Deliver` event (the
    /// receive path of a congestion control that acknowledges data, or of a receiver that
    /// numbers packets): decided when they are installed, before the run starts.
    pub fn receipts(&self) -> bool {
        self.receipts || self.sequence.is_some()
    }

    pub fn rate(&self, host: usize) -> Rate {
        self.rate[host]
    }

    /// Caps the injection of `host` at `cap` (a fraction of its link, in (0, 1]; 1.0:
    /// uncapped) from its next packet on.
    pub fn set_cap(&mut self, host: u32, cap: f64) {
        self.cap[host as usize] = cap;
    }

    /// Whether stream `stream` of the source queue of `host` has room for another
    /// message (with one stream, whether the queue has).
    #[inline]
    pub fn has_room(&self, host: u32, stream: u8) -> bool {
        if self.streams == 1 {
            (self.queue_len[host as usize] as usize) < self.queue_capacity
        } else {
            self.stream_len[self.stream_index(host as usize, stream)] < self.stream_capacity
        }
    }

    /// Index of (host `h`, `stream`) in `stream_len`; a stream beyond the run's counts as
    /// its last.
    #[inline]
    fn stream_index(&self, h: usize, stream: u8) -> usize {
        h * self.streams + (stream as usize).min(self.streams - 1)
    }

    /// A message of stream `stream` of host `h` left the source queue (fully segmented).
    #[inline]
    pub(super) fn left_queue(&mut self, h: usize, stream: u8) {
        self.queue_len[h] -= 1;
        if self.streams > 1 {
            let i = self.stream_index(h, stream);
            self.stream_len[i] -= 1;
        }
    }

    /// Queues a message of `size` bytes from `host` to `dst` on queue pair `qp` (its VC
    /// is a hash of the flow) in source stream `stream` and sends if it can. Returns
    /// `false` when the stream's source queue was full: the message is counted
    /// (`source_queue_full`) and dropped. A message to another endpoint of the host's
    /// node goes over the intra-node link instead, bounded alike.
    #[allow(clippy::too_many_arguments)]
    pub fn post(&mut self, ctx: &mut Ctx, host: u32, dst: u32, size: u64, qp: u32, tag: Tag, stream: u8) -> bool {
        // One branch per message, never per packet; always false with one GPU per node.
        if let Some(link) = self.intra_node.as_deref_mut() {
            if link.carries(host, dst) {
                return link.post(ctx, host, dst, size, qp, tag, stream, self.stream_capacity);
            }
        }
        let h = host as usize;
        let accepted = self.has_room(host, stream);
        if accepted {
            let vc = flow_vc(host, dst, qp, &self.vc_divisor);
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
                stream,
                next_free: NIL,
                next_in_flow: NIL,
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
                // A flow going back after a NAK sends new data once it has caught up.
                let held = self.sequence.as_deref().is_some_and(|s| s.holds(host, dst, qp));
                scheduler.flow_head[base + slot] = !older && !held;
            }
            self.queue_len[h] += 1;
            if self.streams > 1 {
                let i = self.stream_index(h, stream);
                self.stream_len[i] += 1;
            }
        }
        let group = ctx.stats.host_group[h];
        ctx.trace(TraceEvent::Generated { group, host, bytes: size, accepted });
        self.try_inject(ctx, host);
        accepted
    }

    /// The paused priorities of every host link.
    pub fn pause_state(&self) -> &PauseState {
        &self.pause
    }

    /// Whether `host` has messages queued that it may not send on `vc` at `now`: without
    /// credits for a full packet (the returns that have arrived counted), or paused.
    /// Reads only: for the samplers of the fabric (`observe::FabricSample`).
    pub fn blocked_on(&self, host: usize, vc: usize, returns: &CreditReturns, now: u64) -> bool {
        if self.queue_len[host] == 0 {
            return false;
        }
        let credits = self.credits.credits(host, vc) + returns.arrived_for(host, vc, now) as i64;
        credits < (self.mtu + self.wire.header) as i64 || self.pause.is_paused(host, vc)
    }

    /// The switch input port (global id) the link of `host` leads to, if it leads to one.
    pub fn attachment(&self, host: usize) -> Option<u32> {
        self.peer[host].port()
    }

    pub fn hosts(&self) -> usize {
        self.peer.len()
    }

    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// Source-queue slot `offset` places after the head of host `h`'s queue (`offset` at
    /// most the capacity; no division on the per-packet path).
    #[inline]
    pub(super) fn slot_after_head(&self, h: usize, offset: usize) -> usize {
        let slot = self.queue_head[h] as usize + offset;
        if slot >= self.queue_capacity {
            slot - self.queue_capacity
        } else {
            slot
        }
    }

    /// Credit counters within [0, capacity], also counting the credits on their way back;
    /// the flows' sequence state consistent.
    pub fn check_invariants(&self, returns: &CreditReturns) -> Result<(), String> {
        self.credits.check_bounds().map_err(|e| format!("host {e}"))?;
        self.check_sequencing()?;
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
