//! What the event loop's lookahead asks the cache for on a switch's behalf
//! (`kernel::Model::prefetch`, `prefetch_dependent`): first the lines an event at a port
//! reads, then, once they are cached, the lines they lead to, including those that the
//! routing's and the arbiter's choices will read. Hints only: nothing here changes state.

use super::IoqFabric;
use crate::flow_control::CreditReturns;
use crate::memory::prefetch::prefetch_at;
use crate::model::Ctx;
use crate::packet::{Packet, PacketSlab, NIL};
use crate::routing::Routing;
use crate::switch::arbiter::{Arbiter, RoundRobin};
use crate::topology::{Minimal, UpDown, MAX_MINIMAL};

impl IoqFabric {
    /// Prefetches what an arrival at input `gp` reads first: the port's line and its
    /// input queues.
    #[inline(always)]
    pub fn prefetch_input(&self, gp: u32) {
        let gp = gp as usize;
        prefetch_at(&self.ports, gp);
        self.prefetch_queues(&self.input, gp);
    }

    /// Prefetches the queues of port `gp` in `queues` (input or output): the lines of
    /// the first and of the last, which differ where a port's queues span two lines.
    #[inline(always)]
    fn prefetch_queues<Q>(&self, queues: &[Q], gp: usize) {
        prefetch_at(queues, gp * self.queues);
        prefetch_at(queues, gp * self.queues + self.queues - 1);
    }

    /// Prefetches what output `gp` reads first when it allocates, transmits or hears
    /// from downstream: the port's line, its request mask, its output queues and its
    /// credits.
    #[inline(always)]
    pub fn prefetch_output(&self, gp: u32) {
        let gp = gp as usize;
        prefetch_at(&self.ports, gp);
        prefetch_at(&self.requests, self.mask_base(gp));
        self.prefetch_queues(&self.output, gp);
        self.sender.prefetch(gp);
    }

    /// Once the port and the packet arriving at `gp` are cached: prefetches the packet at
    /// the tail of the input queue it joins (its link is written as the packet joins),
    /// or, if the queue is empty, so that the packet is routed as it arrives, the outputs
    /// it will most likely request (`prefetch_route`).
    #[inline(always)]
    pub fn prefetch_input_dependent(&self, gp: u32, ctx: &Ctx, packet: u32) {
        let p = &ctx.packets[packet];
        let queue = self.ingress_queue(p);
        match self.input.get(gp as usize * self.queues + queue) {
            Some(input) if input.fifo.tail != NIL => ctx.packets.prefetch(input.fifo.tail),
            Some(_) => self.prefetch_route(gp as usize, queue, p, ctx.host_returns),
            None => {}
        }
    }

    /// Prefetches what routing packet `p` as it arrives at `gp` into `queue` reads: the
    /// return ring of the link it came by (its credit goes back as it leaves) and, for
    /// each output it will request where it has at most two to choose from
    /// (`likely_outputs`), the output's line, the word of its request mask the packet's
    /// request sets, its output queues, its credits and their return ring. Which outputs
    /// a packet requests is the routing's choice, known only once the packet is read:
    /// the misses that looking ahead by event alone leaves.
    #[inline(always)]
    fn prefetch_route(&self, gp: usize, queue: usize, p: &Packet, host_returns: &CreditReturns) {
        let Some(port) = self.ports.get(gp) else { return };
        if let Some(upstream) = port.peer.port() {
            self.sender.prefetch_returns(upstream as usize);
        } else if let Some(host) = port.peer.host() {
            host_returns.prefetch(host as usize);
        }
        let here = port.owner as usize;
        let mut outputs = [0u16; MAX_MINIMAL];
        let n = self.likely_outputs(gp, here, p, &mut outputs);
        if n <= 2 {
            let base = self.port_base[here] as usize;
            let bit = (gp - base) * self.queues + queue;
            for &out in &outputs[..n] {
                let o = base + out as usize;
                prefetch_at(&self.ports, o);
                prefetch_at(&self.requests, self.mask_word(o, bit));
                self.prefetch_queues(&self.output, o);
                self.sender.prefetch(o);
                self.sender.prefetch_returns(o);
            }
        }
    }

    /// The ports of switch `here` that packet `p`, arriving at `gp`, will most likely
    /// request, in `outputs`, and how many; more than two where the routing draws among
    /// many (a tree's way up under random or adaptive up/down), which are then not
    /// guessed at. The one the routing foresees where it foresees every one (D-mod-K,
    /// ECMP, per-source up/down); else on trees the ports of its next hops (down: the
    /// one toward its destination); elsewhere the minimal ports toward its intermediate
    /// switch or its destination.
    #[inline(always)]
    fn likely_outputs(&self, gp: usize, here: usize, p: &Packet, outputs: &mut [u16; MAX_MINIMAL]) -> usize {
        if self.routing.foresees_every_port() {
            // The time is not known ahead; the routings that foresee do not read it.
            if let Some(port) = self.routing.foreseen_port(&self.topo, &self.route_query(gp, p, 0)) {
                outputs[0] = port;
                return 1;
            }
        }
        let hops = self.topo.next_hops(here, p.dst as usize);
        if hops.count != 0 {
            if hops.count <= 2 {
                for k in 0..hops.count {
                    outputs[k as usize] = hops.first + k;
                }
            }
            return hops.count as usize;
        }
        let (dst_switch, dst_port) = self.topo.host_switch(p.dst as usize);
        let target = if p.via != NIL && p.via as usize != here { p.via as usize } else { dst_switch };
        if target == here {
            outputs[0] = dst_port;
            return 1;
        }
        self.topo.minimal_ports(here, target, outputs)
    }

    /// Once output `gp`'s line and queues are cached: prefetches the packets at the
    /// heads of its queues, which its link chooses among, and the input its arbiter
    /// looks at first (`prefetch_first_request`).
    #[inline(always)]
    pub fn prefetch_output_dependent(&self, gp: u32, packets: &PacketSlab) {
        let first = gp as usize * self.queues;
        for queue in self.output.get(first..first + self.queues).unwrap_or_default() {
            packets.prefetch_if_any(queue.fifo.head);
        }
        self.prefetch_first_request(gp as usize);
    }

    /// Prefetches the input the arbiter of output `o` looks at first, if any request
    /// waits (its port's line and its input queue), once the output's line is cached:
    /// which input that is, is known only from the output's request mask.
    #[inline(always)]
    pub fn prefetch_first_request(&self, o: usize) {
        if let Some((input, queue)) = self.first_request(o) {
            prefetch_at(&self.ports, input);
            prefetch_at(&self.input, queue);
        }
    }

    /// The global input port and the input queue (its index in `input`) whose request
    /// the arbiter of output `o` looks at first, if any waits.
    #[inline(always)]
    fn first_request(&self, o: usize) -> Option<(usize, usize)> {
        let port = self.ports.get(o)?;
        if port.waiting == 0 {
            return None;
        }
        let switch = port.owner as usize;
        let bits = self.radix[switch] as usize * self.queues;
        let mask = self.requests.get(self.mask_base(o)..self.mask_base(o) + port.mask_words as usize)?;
        let bit = RoundRobin.pick(mask, bits, port.grant_next as usize, |_| true)?;
        let input = self.port_base[switch] as usize + self.bit_input[bit] as usize;
        Some((input, input * self.queues + self.bit_queue[bit] as usize))
    }
}
