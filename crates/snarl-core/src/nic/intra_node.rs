//! The intra-node link: how two endpoints (GPUs) of one node talk, over NVLink-class
//! links through the node's own switch, never entering the network.
//!
//! A message is carried whole, not in packets. Each endpoint has one port into the
//! node's switch and one out of it, each carrying `rate` (per direction). A message
//! first takes its sender's outgoing port, after the messages the sender posted before
//! it (FIFO); when it starts there it takes the receiver's incoming port too, as soon as
//! that port has finished the messages that started before it. Cut-through: the
//! message's bytes cross both ports at `rate`, so alone it arrives `size / rate +
//! latency` after it was posted. The receiver's port limits as the sender's does, so
//! that several GPUs sending to one at once (a linear AlltoAll's first peer, an Incast)
//! share its rate instead of each getting the full rate; a message waiting for a busy
//! receiver does not hold its sender's port (the node's switch keeps it), so the
//! sender's next message, to another GPU, starts on time. Both ports are served in the
//! order messages start: each is busy whenever a message waits for it.
//!
//! The NICs hand such messages here from `Nics::post`, so every workload uses the link
//! without knowing it; they complete through `Ctx::message_complete`, as network
//! messages do, so a workload hears of them the same way. Each endpoint holds at most
//! the source queue's bound of them undelivered: more are refused and counted as a full
//! source queue, which keeps the run's memory bounded whatever the load.

use crate::kernel::Event;
use crate::memory::fallible::zeroed;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::{Message, Tag, NIL};
use crate::topology::{LinkConfig, Nodes};
use crate::units::Rate;

pub(super) struct IntraNode {
    nodes: Nodes,
    rate: Rate,
    latency: u64,
    /// Per endpoint: when its outgoing port has sent every message queued on it.
    send_free: Vec<u64>,
    /// Per endpoint: when its incoming port has taken every message started toward it.
    receive_free: Vec<u64>,
    /// Per endpoint: its messages posted and not yet delivered.
    in_flight: Vec<u32>,
    /// Summed over the endpoints.
    total_in_flight: u64,
}

impl IntraNode {
    pub(super) fn new(nodes: Nodes, endpoints: usize, link: LinkConfig) -> crate::Result<IntraNode> {
        let what = "the intra-node link";
        Ok(IntraNode {
            nodes,
            rate: link.rate,
            latency: link.latency.0,
            send_free: zeroed(endpoints, what)?,
            receive_free: zeroed(endpoints, what)?,
            in_flight: zeroed(endpoints, what)?,
            total_in_flight: 0,
        })
    }

    /// Whether a message from `src` to `dst` takes this link: two endpoints of one node.
    #[inline]
    pub(super) fn carries(&self, src: u32, dst: u32) -> bool {
        src != dst && self.nodes.same_node(src, dst)
    }

    /// Posts a message of `size` bytes from `src` to `dst` (of one node), if `src` has
    /// fewer than `bound` undelivered; returns whether it was taken. Out of line, so that
    /// the network's path through `Nics::post` stays as it was.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn post(
        &mut self,
        ctx: &mut Ctx,
        src: u32,
        dst: u32,
        size: u64,
        qp: u32,
        tag: Tag,
        stream: u8,
        bound: u32,
    ) -> bool {
        let s = src as usize;
        let accepted = self.in_flight[s] < bound;
        let group = ctx.stats.host_group[s];
        ctx.trace(TraceEvent::IntraNodePosted { group, host: src, bytes: size, accepted });
        if !accepted {
            return false;
        }
        let now = ctx.now;
        let id = ctx.messages.alloc(Message {
            src,
            dst,
            tag,
            qp,
            created: now,
            size,
            unsent: 0,
            outstanding: 1,
            vc: 0,
            stream,
            next_free: NIL,
            next_in_flow: NIL,
        });
        self.in_flight[s] += 1;
        self.total_in_flight += 1;
        let start = self.send_free[s].max(now);
        self.send_free[s] = start + self.rate.serialize(size);
        if start == now {
            self.start(ctx, id);
        } else {
            ctx.schedule(start, Event::LocalSend { message: id });
        }
        true
    }

    /// Message `id` starts on its sender's port now: it takes its receiver's port from
    /// when that is free, and arrives once its bytes are through and the latency passed.
    pub(super) fn start(&mut self, ctx: &mut Ctx, id: u32) {
        let m = &ctx.messages[id];
        let (d, size) = (m.dst as usize, m.size);
        let through = self.receive_free[d].max(ctx.now) + self.rate.serialize(size);
        self.receive_free[d] = through;
        ctx.schedule(through + self.latency, Event::LocalDeliver { message: id });
    }

    /// Message `id` arrived: it completes.
    pub(super) fn deliver(&mut self, ctx: &mut Ctx, id: u32) {
        let m = &ctx.messages[id];
        let (s, bytes) = (m.src as usize, m.size);
        self.in_flight[s] -= 1;
        self.total_in_flight -= 1;
        let group = ctx.stats.host_group[s];
        ctx.trace(TraceEvent::IntraNodeDelivered { group, bytes });
        ctx.message_complete(ctx.now, id, group);
    }

    /// Messages posted and not yet delivered.
    pub(super) fn in_flight(&self) -> u64 {
        self.total_in_flight
    }
}
