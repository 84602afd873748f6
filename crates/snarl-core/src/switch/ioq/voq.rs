//! Virtual output queues (`switch.input_queuing = "voq"`), the InfiniBand switch model of
//! the OMNeT++ IB simulator: the buffer of an input (port, queue) is shared by one queue
//! per output port of its switch.
//!
//! A packet is routed as its head arrives and joins the virtual output queue (VoQ) of its
//! output; the head of every non-empty VoQ requests its output at once, so that a packet
//! for a free output never waits inside the switch behind one for a congested output.
//! Where the routing offers several routes, the packet takes the one the allocator would
//! request at that moment (the lightest, with room for it if any has: `preferred`), and
//! keeps it: a VoQ switch chooses at arrival and does not reconsider, and requests go to
//! one output only (no request is posted to several outputs).
//!
//! What stays per input (port, queue): its buffer's byte count (`InputQueue::fifo.bytes`,
//! whose FIFO holds no packet), which credits and the receiver's side of flow control
//! account for, and its crossbar path (the input port, or with per-VC paths the input
//! queue, takes part in one transfer at a time, whichever VoQ it serves).
//!
//! The request mask bit of output o for (input port, queue) names VoQ (input port, queue,
//! o) alone, so the masks and the round-robin arbiter are those of FIFO input queuing:
//! arbitration reads the request (size, output queue) of the VoQ beside its FIFO, in an
//! `InputQueue`, and the grant takes the packet from there. After a grant the VoQ's next
//! head requests the output again, which retries when the input's path is free.
//!
//! Each output queue (port, queue) counts the bytes waiting for it in its switch's VoQs
//! (`waiting`), which marking policies read (`QueueState::waiting`) and routings see in
//! the output's occupancy: with every packet routed at arrival, they are the output's
//! backlog.

use super::queues::InputQueue;
use super::IoqFabric;
use crate::memory::fallible::{filled, zeroed};
use crate::model::Ctx;
use crate::packet::PacketSlab;
use crate::routing::{Candidate, Candidates, Route};
use rand::Rng;

/// The virtual output queues of every input queue, empty with FIFO input queuing.
#[derive(Default)]
pub(super) struct Voqs {
    /// VoQ (global input port, queue, output port of its switch) at index
    /// `(port * queues + queue) * stride + output`, with its head's request beside it.
    pub(super) queues: Vec<InputQueue>,
    /// VoQs per input queue: the widest switch's radix.
    pub(super) stride: usize,
    /// Per output queue (port * queues + queue): bytes in its switch's VoQs routed to it.
    pub(super) waiting: Vec<u64>,
}

impl Voqs {
    /// VoQs for `inputs` input queues (ports times queues per port) on switches of at most
    /// `stride` ports, if `on`; none otherwise.
    pub(super) fn new(on: bool, inputs: usize, stride: usize) -> crate::Result<Voqs> {
        if !on {
            return Ok(Voqs::default());
        }
        let ids = inputs.saturating_mul(stride).saturating_add(2 * inputs);
        if ids > u32::MAX as usize {
            return Err(crate::Error::config(
                "switch.input_queuing",
                format!("virtual output queues for {inputs} input queues of up to {stride} ports are too many"),
            ));
        }
        Ok(Voqs {
            queues: filled(inputs * stride, InputQueue::default(), "the virtual output queues")?,
            stride,
            waiting: zeroed(inputs, "the virtual output queues")?,
        })
    }

    /// Whether inputs queue by output.
    #[inline]
    pub(super) fn on(&self) -> bool {
        self.stride != 0
    }

    /// Index of VoQ (input queue `q` = port * queues + queue, output port `out` of its switch).
    #[inline]
    pub(super) fn index(&self, q: usize, out: usize) -> usize {
        q * self.stride + out
    }
}

impl IoqFabric {
    /// The head of `packet` reaches global input port `gp` of a switch with VoQs: it
    /// joins its input queue's buffer, is routed, and joins the VoQ of its output, whose
    /// request it becomes if the VoQ was empty.
    #[inline(never)]
    pub(super) fn arrive_voq(&mut self, ctx: &mut Ctx, gp: u32, packet: u32) {
        let queue = self.ingress_queue(&ctx.packets[packet]);
        let (n, q) = (self.queues, gp as usize * self.queues + queue);
        let size = ctx.packets[packet].size;
        self.input[q].fifo.bytes += size as u64;
        if let Some(feedback) = self.control.on_enqueue(gp as usize, queue, self.input[q].fifo.bytes) {
            self.feed_back(ctx, gp, feedback, ctx.now);
        }
        let mut offer = Candidates::new();
        self.decide(ctx, gp, packet, &mut offer);
        let base = self.port_base[self.ports[gp as usize].owner as usize];
        let route = if offer.len() > 1 { self.choose_now(ctx, base, &offer, size) } else { offer.first() };
        let p = &mut ctx.packets[packet];
        (p.out_port, p.out_vc, p.via) = (route.port, route.vc, route.via);
        let out = base + route.port as u32;
        let out_queue = self.egress_queue(route.vc);
        self.voqs.waiting[out as usize * n + out_queue] += size as u64;
        let v = self.voqs.index(q, route.port as usize);
        let was_empty = self.voqs.queues[v].fifo.is_empty();
        self.voqs.queues[v].fifo.push(ctx.packets, packet);
        if was_empty {
            let bit = (gp - base) as usize * n + queue;
            self.voq_request(ctx.packets, v, out, bit);
            self.try_allocate(ctx, out);
        }
    }

    /// The route a packet of `size` takes among several on `offer` at a switch whose ports
    /// start at `base`: one the allocator prefers now (the lightest, with room if any has:
    /// `preferred`), at random among those it prefers equally, as a FIFO input's request
    /// posted to all of them goes to whichever grants first.
    #[inline(never)]
    fn choose_now(&self, ctx: &mut Ctx, base: u32, offer: &Candidates, size: u32) -> Route {
        let routes = offer.as_slice();
        let (k, roomy) = self.preferred(base, routes, size, ctx.now);
        let alike = |c: &Candidate, j: usize| c.weight == routes[k].weight && (roomy >> j) & 1 == (roomy >> k) & 1;
        let ties = routes.iter().enumerate().filter(|&(j, c)| alike(c, j)).count();
        if ties == 1 {
            return routes[k].route;
        }
        let pick = ctx.routing_rng.random_range(0..ties);
        routes.iter().enumerate().filter(|&(j, c)| alike(c, j)).nth(pick).map_or(routes[k].route, |(_, c)| c.route)
    }

    /// The head of VoQ `v` requests output `out` (its mask bit `bit`).
    #[inline]
    fn voq_request(&mut self, packets: &PacketSlab, v: usize, out: u32, bit: usize) {
        let head = &packets[self.voqs.queues[v].fifo.head];
        let (size, queue) = (head.size, self.egress_queue(head.out_vc) as u8);
        let voq = &mut self.voqs.queues[v];
        (voq.request_size, voq.request_queue, voq.other_queues, voq.request) = (size, queue, 0, 0);
        self.request(out, bit);
    }

    /// Takes the head of VoQ (input `i`, `queue`, output `o`) for the crossbar: it leaves
    /// the VoQ, the input queue's buffer count and the output queue's waiting bytes.
    #[inline]
    pub(super) fn voq_pop(&mut self, packets: &PacketSlab, i: usize, queue: usize, o: usize) -> u32 {
        let (n, base) = (self.queues, self.port_base[self.ports[o].owner as usize] as usize);
        let v = self.voqs.index(i * n + queue, o - base);
        let voq = &mut self.voqs.queues[v];
        let out_queue = voq.request_queue as usize;
        let id = voq.fifo.pop(packets);
        let size = packets[id].size as u64;
        self.input[i * n + queue].fifo.bytes -= size;
        self.voqs.waiting[o * n + out_queue] -= size;
        id
    }

    /// After a grant from VoQ (input `i`, `queue`, output `out`, mask bit `bit`) whose
    /// transfer holds the input's path until `done`: its next head, if any, requests the
    /// output, which retries then.
    #[inline]
    pub(super) fn voq_next(&mut self, ctx: &mut Ctx, i: usize, queue: usize, out: u32, bit: usize, done: u64) {
        let base = self.port_base[self.ports[out as usize].owner as usize] as usize;
        let v = self.voqs.index(i * self.queues + queue, out as usize - base);
        if self.voqs.queues[v].fifo.is_empty() {
            return;
        }
        self.voq_request(ctx.packets, v, out, bit);
        self.retry(ctx, out, done);
    }

    /// Bytes waiting in VoQs for the output queues of port `gp` (0 without VoQs).
    #[inline]
    pub(super) fn voq_waiting(&self, gp: usize) -> u64 {
        if !self.voqs.on() {
            return 0;
        }
        let n = self.queues;
        self.voqs.waiting[gp * n..gp * n + n].iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{IoqFabric, IoqParams, LinkControl};
    use crate::config::{LinksConfig, RoutingConfig, TopologyConfig, UpSelect};
    use crate::flow_control::CreditReturns;
    use crate::kernel::EventQueue;
    use crate::model::Ctx;
    use crate::observe::{IdealFct, Stats};
    use crate::packet::{MessageSlab, Packet, PacketSlab, NIL};
    use crate::routing::AnyRouting;
    use crate::topology;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// One switch of 4 hosts (100 Gb/s, 25 ns), a VC, 32 KiB buffers, per-port crossbar.
    fn one_switch(voq: bool) -> IoqFabric {
        let links = LinksConfig::default();
        let topo = topology::build(&TopologyConfig::SingleSwitch { hosts: 4 }, &links).unwrap();
        let routing = AnyRouting::build(
            &RoutingConfig::Updown { select: UpSelect::Random, vcs: Default::default() },
            &topo,
            1,
            4096,
        )
        .unwrap();
        let params = IoqParams {
            vcs: 1,
            extra_queues: 0,
            input_capacity: 32 * 1024,
            output_capacity: 32 * 1024,
            shared_pool: 0,
            speedup: 1.0,
            per_vc_crossbar: false,
            voq,
            receive_cap: None,
            latency: 100_000,
            framing: 0,
            control: LinkControl::Credit,
            measure_from: 0,
        };
        IoqFabric::new(topo, routing, params).unwrap()
    }

    /// Packets of 4 KiB from host 0 to `destinations` arrive at once at the switch's
    /// port 0 (whose host is 0); returns, after each arrival, the bytes that the marking
    /// policy would see waiting for the output queue of each host's port.
    fn waiting_after_arrivals(voq: bool, destinations: &[u32]) -> Vec<[u64; 4]> {
        let mut fabric = one_switch(voq);
        let mut queue = EventQueue::new(1000, 10).unwrap();
        let (mut packets, mut messages) = (PacketSlab::new(), MessageSlab::new());
        let (host_rate, host_latency) = (crate::units::Rate(100_000_000_000), 25_000);
        let ideal = IdealFct {
            host_rate,
            host_latency,
            switch_link_latency: 25_000,
            switch_latency: 100_000,
            per_packet: Default::default(),
        };
        let mut stats = Stats::new(1, 0, 1_000_000, 10_000_000, ideal, 4096).unwrap();
        stats.host_group = vec![0; 4];
        // Deliveries wait as events: nothing here is delivered.
        stats.settle_before = 0;
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut returns = CreditReturns::new(4).unwrap();
        let mut ctx = Ctx {
            now: 1_000_000,
            end: 0,
            queue: &mut queue,
            packets: &mut packets,
            messages: &mut messages,
            stats: &mut stats,
            routing_rng: &mut rng,
            host_returns: &mut returns,
            completions: None,
            stop: None,
        };
        let mut seen = Vec::new();
        for &dst in destinations {
            let packet = Packet { size: 4096, dst, hops: 1, via: NIL, tail_at: 1_400_000, ..Packet::default() };
            let id = ctx.packets.alloc(packet);
            fabric.arrive(&mut ctx, fabric.global_port(0, 0), id);
            seen.push(std::array::from_fn(|port| fabric.marked_waiting(port, 0)));
        }
        fabric.check_invariants(ctx.packets).unwrap();
        seen
    }

    #[test]
    fn marking_sees_the_bytes_waiting_in_voqs_for_an_output_queue() {
        // The first packet for host 1 crosses at once; the input is then busy, so the next
        // ones wait, each in the VoQ of its output, and are counted there.
        let seen = waiting_after_arrivals(true, &[1, 1, 2, 1, 3]);
        assert_eq!(seen[0], [0, 0, 0, 0]);
        assert_eq!(seen[1], [0, 4096, 0, 0]);
        assert_eq!(seen[2], [0, 4096, 4096, 0]);
        assert_eq!(seen[4], [0, 8192, 4096, 4096]);
        // FIFO inputs route only their head: nothing is known to wait for an output.
        for after in waiting_after_arrivals(false, &[1, 1, 2, 1, 3]) {
            assert_eq!(after, [0; 4]);
        }
    }
}
