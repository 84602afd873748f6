//! What the watchdog and the reports read of the queues: which are occupied, what their
//! heads wait for, what they hold. Kept apart from the per-packet path.

use super::queues::OutputQueue;
use super::IoqFabric;
use crate::error::BlockedQueue;
use crate::packet::{Fifo, PacketSlab, NIL};

impl IoqFabric {
    /// The head packet of every non-empty queue, as (queue, packet) in queue order: input
    /// queues are numbered `port * queues + queue`, output queues follow them.
    pub fn queue_heads(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let inputs = self.input.iter().map(|q| q.fifo.head);
        let outputs = self.output.iter().map(|q| q.fifo.head);
        inputs.chain(outputs).enumerate().filter(|&(_, head)| head != NIL).map(|(i, head)| (i as u32, head))
    }

    /// Queue `queue` (numbered as by `queue_heads`): whether it is an input, its index
    /// (port * queues + queue) among the inputs or the outputs, and its FIFO.
    fn locate(&self, queue: u32) -> (bool, usize, &Fifo) {
        let (q, inputs) = (queue as usize, self.input.len());
        if q < inputs {
            (true, q, &self.input[q].fifo)
        } else {
            (false, q - inputs, &self.output[q - inputs].fifo)
        }
    }

    /// The queue that the head of `queue` waits for: an input's head for the output queue
    /// it requested, an output's head for the input downstream that must return credits
    /// or resume (`None` if that is a host, which always drains, or the queue is empty).
    pub fn waits_for(&self, packets: &PacketSlab, queue: u32) -> Option<u32> {
        let (input, i, fifo) = self.locate(queue);
        if fifo.head == NIL {
            return None;
        }
        let (gp, q) = (i / self.queues, i % self.queues);
        if input {
            let out = self.port_base[self.ports[gp].owner as usize] as usize + packets[fifo.head].out_port as usize;
            Some((self.input.len() + out * self.queues + self.input[i].request_queue as usize) as u32)
        } else {
            self.ports[gp].peer.port().map(|peer| peer * self.queues as u32 + q as u32)
        }
    }

    /// The packet at the head of queue `queue`, if any.
    pub fn queue_head(&self, queue: u32) -> Option<u32> {
        let head = self.locate(queue).2.head;
        (head != NIL).then_some(head)
    }

    /// Number of packets in queue `queue`.
    pub fn queue_len(&self, packets: &PacketSlab, queue: u32) -> u32 {
        self.locate(queue).2.count(packets)
    }

    /// What queue `queue` is and holds, for reports.
    pub fn describe_queue(&self, packets: &PacketSlab, queue: u32, on_cycle: bool) -> BlockedQueue {
        let (input, i, fifo) = self.locate(queue);
        let (gp, q) = (i / self.queues, i % self.queues);
        let switch = self.ports[gp].owner;
        BlockedQueue {
            switch,
            port: gp as u32 - self.port_base[switch as usize],
            vc: q as u32,
            side: if input { "input" } else { "output" },
            packets: fifo.count(packets),
            credit_bytes: (!input).then(|| self.sender.credits(gp, q)),
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

    /// Credit counters all within [0, capacity], and output accounting consistent.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sender.check_bounds()?;
        let credit_based = self.control.credit_based();
        for (port, far) in self.ports.iter().map(|p| p.peer).enumerate().filter(|_| credit_based) {
            for queue in 0..self.queues {
                let held = self.sender.credits_held(port, queue);
                if far.port().is_some() && held > self.input_capacity as i64 {
                    return Err(format!("port {port} queue {queue}: {held} credit bytes exceed the buffer"));
                }
            }
        }
        for (i, &OutputQueue { fifo: q, used }) in self.output.iter().enumerate() {
            let port = i / self.queues;
            let releasing = if self.ports[port].releasing_queue as usize == i % self.queues {
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
        if credit_based {
            for (i, q) in self.input.iter().map(|q| &q.fifo).enumerate() {
                if q.bytes > self.input_capacity {
                    return Err(format!("input buffer {i} holds {} bytes > capacity {}", q.bytes, self.input_capacity));
                }
            }
            return Ok(());
        }
        let n = self.queues;
        let queued = |gp: usize| self.input[gp * n..(gp + 1) * n].iter().map(|q| q.fifo.bytes).sum();
        let ports_of = |s: usize| self.port_base[s] as usize..self.port_base[s] as usize + self.radix[s] as usize;
        self.memory.check(queued, ports_of)
    }
}
