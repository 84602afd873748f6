//! What the event loop's lookahead asks the cache for on a switch's behalf
//! (`kernel::Model::prefetch`, `prefetch_dependent`): first the lines an event at a port
//! reads, then, once they are cached, the lines they lead to, including those that the
//! routing's and the arbiter's choices will read. Hints only: nothing here changes state.

use super::IoqFabric;
use crate::flow_control::CreditReturns;
use crate::memory::prefetch::prefetch_at;
use crate::model::Ctx;
use crate::packet::{Packet, PacketSlab, NIL};
use crate::routing::likely::NAMED_LIKELY;
use crate::routing::Routing;
use crate::switch::arbiter::{Arbiter, RoundRobin};
use crate::topology::MAX_MINIMAL;

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
    /// each port the routing will most likely offer where it names them
    /// (`Routing::likely_ports`), the output's line, the word of its request mask the
    /// packet's request sets, its output queues, its credits and their return ring.
    /// Which outputs a packet requests is the routing's choice, known only once the
    /// packet is read: the misses that looking ahead by event alone leaves.
    #[inline(always)]
    fn prefetch_route(&self, gp: usize, queue: usize, p: &Packet, host_returns: &CreditReturns) {
        let Some(port) = self.ports.get(gp) else { return };
        if let Some(upstream) = port.peer.port() {
            self.sender.prefetch_returns(upstream as usize);
        } else if let Some(host) = port.peer.host() {
            host_returns.prefetch(host as usize);
        }
        let mut outputs = [0u16; MAX_MINIMAL];
        // The time is not known ahead; `likely_ports` does not read it.
        let n = self.routing.likely_ports(&self.topo, &self.route_query(gp, p, 0), &mut outputs);
        if n <= NAMED_LIKELY {
            let base = self.port_base[port.owner as usize] as usize;
            let bit = (gp - base) * self.queues + queue;
            for &out in &outputs[..n] {
                self.prefetch_request(base + out as usize, bit);
            }
        }
    }

    /// Prefetches what posting request `bit` to output `o` and arbitrating there reads:
    /// the output's line, the word of its request mask, its output queues, its credits
    /// and their return ring.
    #[inline(always)]
    pub(super) fn prefetch_request(&self, o: usize, bit: usize) {
        prefetch_at(&self.ports, o);
        prefetch_at(&self.requests, self.mask_word(o, bit));
        self.prefetch_queues(&self.output, o);
        self.sender.prefetch(o);
        self.sender.prefetch_returns(o);
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
