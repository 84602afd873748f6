//! The input and output queues of every port, their accounting, and the queue-id space.
//!
//! Each port has `queues = vcs + extra_queues` input queues and as many output queues,
//! numbered 0..queues; every per-queue table (queues, probes, credits, paused flags, PFC
//! state, request-mask bits) is indexed `port * queues + queue`. Queue `vc` is the
//! default queue of the packets on VC `vc` ([`vc_queue`]); queues `vcs..queues` (see
//! [`IoqFabric::extra_queues`]) are for mechanisms that set packets apart from their
//! VC's queue, such as congestion isolation, which would move the packets of a
//! congested flow into queue `vcs + k` at ingress and at egress. None does today: they
//! exist, empty, and never requested, granted or sent from.
//!
//! A link's queue ids are the same at both ends: output queue (port, q) feeds input
//! queue (peer, q), and the credits and pause flags the sender keeps for (link, q) are
//! those of that input queue.

use super::IoqFabric;
use crate::packet::{Fifo, Packet};
use std::ops::Range;

/// An input queue, with the size and output queue of its head packet's request beside
/// it, so that arbitration, which may look at a waiting request many times, need not read
/// the packet, and finds it in the line it reads the queue from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InputQueue {
    pub(super) fifo: Fifo,
    /// With a per-VC crossbar, when the queue's transfer in progress ends (`crossbar`):
    /// in the line the arbiter reads the queue's request from.
    pub(super) busy_until: u64,
    pub(super) request_size: u32,
    /// Output queue (of the requested output ports) the head packet will join.
    pub(super) request_queue: u8,
    /// Further output queues it may join instead (bit q: queue q), when the routing
    /// offered a choice of VCs; the arbiter takes one with room.
    pub(super) other_queues: u8,
    /// `DETOUR`, `CHOICES`, `SEVERAL`: what the request is.
    pub(super) request: u8,
}

/// `InputQueue::request`: the requested routes go through the packet's intermediate
/// switch (`Packet::via`, which it drops when granted a route that does not).
pub(super) const DETOUR: u8 = 1;
/// The routing offered other routes: the request may be reconsidered.
pub(super) const CHOICES: u8 = 2;
/// The request went to several outputs (listed in `IoqFabric::posted`).
pub(super) const SEVERAL: u8 = 4;
/// Congestion isolation: the head waits, unrouted, for an older packet of its flow in
/// the port's ingress queue of the other kind (normal or congested-flow class).
pub(super) const HELD: u8 = 8;

impl InputQueue {
    #[inline]
    pub(super) fn is(&self, flag: u8) -> bool {
        self.request & flag != 0
    }
}

/// An output queue and the output-buffer bytes it accounts for (queued, plus a packet
/// on the wire until its tail has left): read and written together on every grant and
/// transmission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OutputQueue {
    pub(super) fifo: Fifo,
    pub(super) used: u64,
    /// With a per-VC crossbar, when the transfer into the queue in progress ends
    /// (`crossbar`): in the line the arbiter reads the queue's room from.
    pub(super) busy_until: u64,
}

/// No probe on this queue.
pub(super) const NO_PROBE: u16 = u16::MAX;

/// The queue a packet on VC `vc` joins unless a mechanism places it elsewhere: the VC's
/// own (the identity).
#[inline]
pub(super) fn vc_queue(vc: u8) -> usize {
    vc as usize
}

impl IoqFabric {
    /// The input queue an arriving packet joins: the class it travelled in (its VC's,
    /// or with congestion isolation its VC's congested-flow class).
    #[inline]
    pub(super) fn ingress_queue(&self, p: &Packet) -> usize {
        p.class as usize
    }

    /// The output queue a packet routed onto output VC `vc` joins.
    #[inline]
    pub(super) fn egress_queue(&self, vc: u8) -> usize {
        vc_queue(vc)
    }

    /// Queues per port (VCs and extra queues).
    pub fn queues(&self) -> usize {
        self.queues
    }

    /// Ids of the extra queues of every port, `vcs..queues`.
    pub fn extra_queues(&self) -> Range<usize> {
        self.vcs..self.queues
    }

    /// Output queue bytes of global port `gp` plus credits consumed downstream, over its
    /// queues, as the switch itself can tell at `now`; with virtual output queues, plus
    /// the bytes routed to it that wait in them.
    #[inline]
    pub(super) fn output_occupancy(&self, gp: usize, now: u64) -> u64 {
        let n = self.queues;
        let (leaving, _) = self.leaving(gp, now);
        self.output[gp * n..gp * n + n].iter().map(|q| q.used).sum::<u64>() - leaving
            + self.sender.held_downstream(gp, now)
            + self.voq_waiting(gp)
    }

    /// Whether output queue (gp, queue) has room for a packet of `bytes` now (counting
    /// the space of a packet whose tail has left).
    pub(super) fn has_room(&self, gp: usize, queue: usize, bytes: u64, now: u64) -> bool {
        let (leaving, leaving_queue) = self.leaving(gp, now);
        let freed = if leaving_queue == queue { leaving } else { 0 };
        // (Congestion isolation, whose CFQs have a budget of their own, refuses the
        // routings with choices that ask this.)
        self.output[gp * self.queues + queue].used + bytes <= self.output_capacity + freed
    }

    /// Whether output queue `q` of output `o` has room for `bytes` more (space of a
    /// packet whose tail has left aside). Only routings with choices ask, which
    /// congestion isolation refuses: its arbitration asks `fits_isolated`.
    #[inline(always)]
    pub(super) fn fits(&self, o: usize, q: usize, bytes: u64) -> bool {
        self.output[o * self.queues + q].used + bytes <= self.output_capacity
    }

    /// Records the occupancy of the output queue of (port, vc) in `probe` from now on.
    pub fn add_probe(&mut self, switch: usize, port: usize, vc: usize, probe: u16) {
        let q = self.global_port(switch, port) as usize * self.queues + vc_queue(vc as u8);
        self.probe[q] = probe;
        self.watched = true;
    }
}
