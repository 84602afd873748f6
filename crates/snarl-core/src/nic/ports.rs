//! The host link: launching a packet onto it, and the flow-control feedback that comes
//! back along it (credits, pause and resume frames).

use super::Nics;
use crate::cc::FlowKey;
use crate::kernel::Event;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::{Message, Packet, PacketKind, NIL};

impl Nics {
    /// Puts the next `size` bytes of message `mid` (`m`) on host `host`'s link, in class
    /// `class` (its VC's, or the congested-flow class of an isolated flow), in a frame
    /// with the header: launches the packet, paces a capped group, and counts the
    /// injection; numbers it when a receiver is in force. Returns the serialisation time.
    /// (Inlined into the FIFO path: the message travels in registers, not as a copy.)
    #[inline(always)]
    pub(super) fn launch_data(&mut self, ctx: &mut Ctx, host: u32, m: Message, mid: u32, size: u64, class: u8) -> u64 {
        let (serialise, packet) = self.put_data(ctx, host, m, mid, size, class);
        if let Some(sequence) = self.sequence.as_deref_mut() {
            // Its first packet: `m` is the message before this packet was cut from it.
            let first = m.unsent == m.size;
            sequence.number_new(ctx.messages, FlowKey { src: host, dst: m.dst, qp: m.qp }, first, mid, packet);
        }
        serialise
    }

    /// `launch_data` out of line, for the flow scheduler, whose loop over the flows keeps
    /// its registers so.
    #[inline(never)]
    pub(super) fn launch_data_apart(
        &mut self,
        ctx: &mut Ctx,
        host: u32,
        m: Message,
        mid: u32,
        size: u64,
        class: u8,
    ) -> u64 {
        self.launch_data(ctx, host, m, mid, size, class)
    }

    /// `launch_data` without numbering: the packet (new, or sent again after a NAK) on
    /// the link, the cap's pacing, the injection counted. Returns the serialisation time
    /// and the packet.
    #[inline(always)]
    pub(super) fn put_data(
        &mut self,
        ctx: &mut Ctx,
        host: u32,
        m: Message,
        mid: u32,
        size: u64,
        class: u8,
    ) -> (u64, u32) {
        let group = ctx.stats.host_group[host as usize];
        // A frame, the header with the payload, as every data packet is (a retransmission
        // too).
        let frame = size + self.wire.header;
        let (serialise, packet) = self.launch(ctx, host, m.dst, frame, m.qp, mid, group, m.vc, class, PacketKind::DATA);
        let cap = self.cap[host as usize];
        if cap < 1.0 {
            self.next_allowed[host as usize] = ctx.now + (serialise as f64 / cap).round() as u64;
        }
        ctx.trace(TraceEvent::Injected { group });
        (serialise, packet)
    }

    /// Puts a packet of `host`, a frame of `size` bytes, on its link now; returns its
    /// serialisation time (the framing's included) and the packet.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch(
        &mut self,
        ctx: &mut Ctx,
        host: u32,
        dst: u32,
        size: u64,
        qp: u32,
        message: u32,
        group: u16,
        vc: u8,
        class: u8,
        kind: PacketKind,
    ) -> (u64, u32) {
        let (h, now) = (host as usize, ctx.now);
        let serialise = self.serializer[h].time(self.wire.on_link(size));
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
            kind,
            class,
            isolation: 0,
            injected: now,
            tail_at: arrival + serialise,
            ready_at: 0,
        });
        self.credits.on_send(h, vc as usize, size);
        self.link_free_at[h] = now + serialise;
        ctx.trace(TraceEvent::Hop);
        match self.peer[h].port() {
            Some(port) => ctx.schedule(arrival, Event::Arrive { port, packet }),
            None => ctx.send_to_host(arrival + serialise, packet),
        }
        (serialise, packet)
    }

    pub fn credit(&mut self, ctx: &mut Ctx, host: u32, vc: usize, bytes: u64) {
        self.credits.on_credit(host as usize, vc, bytes);
        self.try_inject(ctx, host);
    }

    /// A PFC pause (`on`) or resume frame for priority `vc` reached `host`.
    pub fn pause(&mut self, ctx: &mut Ctx, host: u32, vc: usize, on: bool) {
        if on {
            ctx.trace(TraceEvent::PauseReceived { port: None, queue: vc as u8 });
        }
        if self.pause.set(host as usize, vc, on, ctx.now) && !on {
            self.try_inject(ctx, host);
        }
    }
}
