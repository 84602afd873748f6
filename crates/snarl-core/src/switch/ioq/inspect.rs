//! What the watchdog and the reports read of the queues: which are occupied, what their
//! heads wait for, what they hold. Kept apart from the per-packet path.

use super::IoqFabric;
use crate::error::BlockedQueue;
use crate::kernel::HOST_TARGET;
use crate::packet::{PacketSlab, NIL};

impl IoqFabric {
    /// The head packet of every non-empty queue, as (queue, packet) in queue order: input
    /// queues are numbered `port * vcs + vc`, output queues follow them.
    pub fn queue_heads(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let inputs = self.input.iter().map(|q| q.fifo.head);
        let outputs = self.output.iter().map(|q| q.fifo.head);
        inputs.chain(outputs).enumerate().filter(|&(_, head)| head != NIL).map(|(i, head)| (i as u32, head))
    }

    /// The queue that the head of `queue` (numbered as by `queue_heads`) waits for: an
    /// input's head for the output queue it requested, an output's head for the input
    /// downstream that must return credits or resume (`None` if that is a host, which
    /// always drains, or the queue is empty).
    pub fn waits_for(&self, packets: &PacketSlab, queue: u32) -> Option<u32> {
        let (inputs, vcs) = (self.input.len(), self.vcs);
        let q = queue as usize;
        if q < inputs {
            let head = self.input[q].fifo.head;
            if head == NIL {
                return None;
            }
            let switch = self.ports[q / vcs].owner as usize;
            let out = self.port_base[switch] as usize + packets[head].out_port as usize;
            Some((inputs + out * vcs + self.input[q].request_vc as usize) as u32)
        } else {
            let (o, vc) = ((q - inputs) / vcs, (q - inputs) % vcs);
            let peer = self.ports[o].peer;
            (self.output[q - inputs].fifo.head != NIL && peer != NIL && peer & HOST_TARGET == 0)
                .then(|| peer * vcs as u32 + vc as u32)
        }
    }

    /// The packet at the head of queue `queue` (numbered as by `queue_heads`), if any.
    pub fn queue_head(&self, queue: u32) -> Option<u32> {
        let (inputs, q) = (self.input.len(), queue as usize);
        let head = if q < inputs { self.input[q].fifo.head } else { self.output[q - inputs].fifo.head };
        (head != NIL).then_some(head)
    }

    /// Number of packets in queue `queue` (numbered as by `queue_heads`).
    pub fn queue_len(&self, packets: &PacketSlab, queue: u32) -> u32 {
        let inputs = self.input.len();
        let q = queue as usize;
        if q < inputs {
            self.input[q].fifo.count(packets)
        } else {
            self.output[q - inputs].fifo.count(packets)
        }
    }

    /// What queue `queue` (numbered as by `queue_heads`) is and holds, for reports.
    pub fn describe_queue(&self, packets: &PacketSlab, queue: u32, on_cycle: bool) -> BlockedQueue {
        let inputs = self.input.len();
        let input = (queue as usize) < inputs;
        let i = if input { queue as usize } else { queue as usize - inputs };
        let (gp, vc) = (i / self.vcs, i % self.vcs);
        let switch = self.ports[gp].owner;
        let (fifo, credit_bytes) = if input {
            (&self.input[i].fifo, None)
        } else {
            (&self.output[i].fifo, Some(self.credits.credits(gp, vc)))
        };
        BlockedQueue {
            switch,
            port: gp as u32 - self.port_base[switch as usize],
            vc: vc as u32,
            side: if input { "input" } else { "output" },
            packets: fifo.count(packets),
            credit_bytes,
            on_cycle,
        }
    }

    /// The longest time a packet of MTU `mtu` takes to cross one hop: the slowest link's
    /// serialisation and latency, and the switch's own latency.
    pub fn slowest_hop(&self, mtu: u64) -> u64 {
        self.timing.slowest(mtu) + self.latency
    }

    /// The most loaded non-empty queues, for deadlock reports.
    pub fn blocked_ports(&self, packets: &PacketSlab, limit: usize) -> Vec<BlockedQueue> {
        let mut blocked: Vec<BlockedQueue> =
            self.queue_heads().map(|(queue, _)| self.describe_queue(packets, queue, false)).collect();
        blocked.sort_by(|a, b| b.packets.cmp(&a.packets).then(a.to_string().cmp(&b.to_string())));
        blocked.truncate(limit);
        blocked
    }
}
