//! What the watchdog and the reports read of the queues: which are occupied, what their
//! heads wait for, what they hold. Kept apart from the per-packet path.

use super::queues::OutputQueue;
use super::IoqFabric;
use crate::error::BlockedQueue;
use crate::observe::{QueueSide, SampledQueue};
use crate::packet::{Fifo, PacketSlab, NIL};

/// What kind of queue a queue id names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
    /// A virtual output queue, of the output port (of its switch) given.
    Voq(usize),
}

impl IoqFabric {
    /// The head packet of every non-empty queue, as (queue, packet) in queue order: input
    /// queues are numbered `port * queues + queue`, output queues follow them, and virtual
    /// output queues, if any, follow those in their own order (input queue, then output).
    pub fn queue_heads(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let inputs = self.input.iter().map(|q| q.fifo.head);
        let outputs = self.output.iter().map(|q| q.fifo.head);
        let voqs = self.voqs.queues.iter().map(|q| q.fifo.head);
        let all = inputs.chain(outputs).chain(voqs);
        all.enumerate().filter(|&(_, head)| head != NIL).map(|(i, head)| (i as u32, head))
    }

    /// Queue `queue` (numbered as by `queue_heads`): its kind, the index (port * queues +
    /// queue) of its input or output queue, and its FIFO.
    fn locate(&self, queue: u32) -> (Side, usize, &Fifo) {
        let (q, inputs, outputs) = (queue as usize, self.input.len(), self.output.len());
        if q < inputs {
            (Side::Input, q, &self.input[q].fifo)
        } else if q < inputs + outputs {
            (Side::Output, q - inputs, &self.output[q - inputs].fifo)
        } else {
            let v = q - inputs - outputs;
            let stride = self.voqs.stride;
            (Side::Voq(v % stride), v / stride, &self.voqs.queues[v].fifo)
        }
    }

    /// Queue id of output queue `oq` (port * queues + queue).
    fn output_id(&self, oq: usize) -> u32 {
        (self.input.len() + oq) as u32
    }

    /// The queue that the head of `queue` waits for: an input's head for the output queue
    /// it requested, a virtual output queue's for the output queue it holds packets for,
    /// an output's head for the input downstream that must return credits or resume
    /// (`None` if that is a host, which always drains, or the queue is empty). Downstream
    /// of an output, a switch with virtual output queues frees the input's buffer from
    /// any of them: the output waits for the one whose head is oldest (in a deadlock every
    /// one that holds packets is stalled; those toward hosts drain and empty).
    pub fn waits_for(&self, packets: &PacketSlab, queue: u32) -> Option<u32> {
        let (side, i, fifo) = self.locate(queue);
        self.waits_for_located(packets, side, i, fifo)
    }

    /// `waits_for` of a queue already located (`locate`).
    fn waits_for_located(&self, packets: &PacketSlab, side: Side, i: usize, fifo: &Fifo) -> Option<u32> {
        if fifo.head == NIL {
            return None;
        }
        let (gp, q) = (i / self.queues, i % self.queues);
        let base = self.port_base[self.ports[gp].owner as usize] as usize;
        match side {
            Side::Input => {
                let out = base + packets[fifo.head].out_port as usize;
                Some(self.output_id(out * self.queues + self.input[i].request_queue as usize))
            }
            Side::Voq(out) => {
                let request = &self.voqs.queues[self.voqs.index(i, out)];
                Some(self.output_id((base + out) * self.queues + request.request_queue as usize))
            }
            Side::Output => self.waits_for_input(packets, self.ports[gp].peer.port()? as usize, q),
        }
    }

    /// The queue that a sender into input queue `queue` of global port `port` waits for
    /// (to return credits or resume it): that input queue, or with virtual output queues
    /// the one of its VoQs whose head is oldest (`None` if they are all empty).
    pub fn waits_for_input(&self, packets: &PacketSlab, port: usize, queue: usize) -> Option<u32> {
        if !self.voqs.on() {
            return Some((port * self.queues + queue) as u32);
        }
        let first = self.voqs.index(port * self.queues + queue, 0);
        let oldest = (first..first + self.voqs.stride)
            .filter(|&v| self.voqs.queues[v].fifo.head != NIL)
            .min_by_key(|&v| (packets[self.voqs.queues[v].fifo.head].injected, v))?;
        Some((self.input.len() + self.output.len() + oldest) as u32)
    }

    /// Queue ids run from 0 to this (exclusive), numbered as by `queue_heads`.
    pub fn queue_ids(&self) -> u32 {
        (self.input.len() + self.output.len() + self.voqs.queues.len()) as u32
    }

    /// Queue `queue` (numbered as by `queue_heads`) as a sampler of the fabric sees it at
    /// `now`: where it is, what it holds and what its head waits for (`waits_for`); an
    /// output queue is blocked when its head may not leave for want of credits (those
    /// returned by `now` counted) or because its queue is paused.
    pub fn sample_queue(&self, packets: &PacketSlab, queue: u32, now: u64) -> SampledQueue {
        let (side, i, fifo) = self.locate(queue);
        let (gp, q) = (i / self.queues, i % self.queues);
        let switch = self.ports[gp].owner;
        let (side, waits_for, downstream, blocked) = match side {
            Side::Input => (QueueSide::Input, self.waits_for_located(packets, side, i, fifo), None, false),
            Side::Voq(out) => {
                (QueueSide::Voq { toward: out as u32 }, self.waits_for_located(packets, side, i, fifo), None, false)
            }
            Side::Output => {
                // What the link feeds, and so what the head, if any, waits for.
                let downstream =
                    self.ports[gp].peer.port().and_then(|peer| self.waits_for_input(packets, peer as usize, q));
                let head = fifo.head;
                let short = |size: i64| {
                    // Returns that arrived but are not collected count: read them only
                    // when the credits in hand fall short.
                    self.sender.credits(gp, q) < size && self.sender.credits_at(gp, q, now) < size
                };
                let blocked =
                    head != NIL && (short(packets[head].size as i64) || self.sender.pause_state().is_paused(gp, q));
                (QueueSide::Output, downstream.filter(|_| head != NIL), downstream, blocked)
            }
        };
        SampledQueue {
            id: queue,
            switch,
            port: gp as u32 - self.port_base[switch as usize],
            queue: q as u32,
            side,
            bytes: fifo.bytes,
            waits_for,
            downstream,
            blocked,
        }
    }

    /// Switch and port (of its switch) of global port `port`.
    pub fn port_of(&self, port: u32) -> (u32, u32) {
        let switch = self.ports[port as usize].owner;
        (switch, port - self.port_base[switch as usize])
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
        let (side, i, fifo) = self.locate(queue);
        let (gp, q) = (i / self.queues, i % self.queues);
        let switch = self.ports[gp].owner;
        let output = side == Side::Output;
        BlockedQueue {
            switch,
            port: gp as u32 - self.port_base[switch as usize],
            vc: q as u32,
            side: if output { "output" } else { "input" },
            toward: match side {
                Side::Voq(out) => Some(out as u32),
                Side::Input | Side::Output => None,
            },
            packets: fifo.count(packets),
            credit_bytes: output.then(|| self.sender.credits(gp, q)),
            on_cycle,
        }
    }

    /// The longest time a frame of `frame` bytes (the largest packet) takes to cross one
    /// hop: the slowest link's serialisation (with the framing) and latency, and the
    /// switch's own latency.
    pub fn slowest_hop(&self, frame: u64) -> u64 {
        self.timing.slowest(frame) + self.latency
    }

    /// The most loaded non-empty queues, for deadlock reports.
    pub fn blocked_ports(&self, packets: &PacketSlab, limit: usize) -> Vec<BlockedQueue> {
        let mut blocked: Vec<BlockedQueue> =
            self.queue_heads().map(|(queue, _)| self.describe_queue(packets, queue, false)).collect();
        blocked.sort_by(|a, b| b.packets.cmp(&a.packets).then(a.to_string().cmp(&b.to_string())));
        blocked.truncate(limit);
        blocked
    }

    /// Credit counters all within [0, capacity] (counting those on their way back, for
    /// links to switches and to hosts that drain slower than their links), output
    /// accounting consistent, and virtual output queues consistent with their input
    /// queues' buffers and their outputs' waiting bytes.
    pub fn check_invariants(&self, packets: &PacketSlab) -> Result<(), String> {
        self.sender.check_bounds()?;
        let credit_based = self.control.credit_based();
        for (port, far) in self.ports.iter().map(|p| p.peer).enumerate().filter(|_| credit_based) {
            let buffered = far.port().is_some() || (far.host().is_some() && self.drain.on());
            for queue in 0..self.queues {
                let held = self.sender.credits_held(port, queue);
                if buffered && held > self.input_capacity as i64 {
                    return Err(format!("port {port} queue {queue}: {held} credit bytes exceed the buffer"));
                }
            }
        }
        self.check_voqs(packets)?;
        self.check_isolation(packets)?;
        for (i, &OutputQueue { fifo: q, used, .. }) in self.output.iter().enumerate() {
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

    /// Every input queue's buffer holds what its VoQs hold (and its FIFO nothing), every
    /// packet of a VoQ is routed to the VoQ's output, and every output queue's waiting
    /// bytes are those of the packets routed to it in the VoQs.
    fn check_voqs(&self, packets: &PacketSlab) -> Result<(), String> {
        if !self.voqs.on() {
            return Ok(());
        }
        let (n, stride) = (self.queues, self.voqs.stride);
        let mut waiting = vec![0u64; self.output.len()];
        for (q, input) in self.input.iter().enumerate() {
            let base = self.port_base[self.ports[q / n].owner as usize] as usize;
            let mut held = 0;
            for out in 0..stride {
                let fifo = &self.voqs.queues[self.voqs.index(q, out)].fifo;
                let (mut at, mut bytes) = (fifo.head, 0);
                while at != NIL {
                    let p = &packets[at];
                    if p.out_port as usize != out {
                        return Err(format!("VoQ {q} toward port {out} holds a packet for port {}", p.out_port));
                    }
                    waiting[(base + out) * n + self.egress_queue(p.out_vc)] += p.size as u64;
                    bytes += p.size as u64;
                    at = p.next;
                }
                if bytes != fifo.bytes {
                    return Err(format!("VoQ {q} toward port {out}: {bytes} bytes queued, {} accounted", fifo.bytes));
                }
                held += bytes;
            }
            if input.fifo.head != NIL || held != input.fifo.bytes {
                return Err(format!("input buffer {q}: {} bytes accounted, {held} in its VoQs", input.fifo.bytes));
            }
        }
        match (0..self.output.len()).find(|&oq| waiting[oq] != self.voqs.waiting[oq]) {
            Some(oq) => Err(format!(
                "output queue {oq}: {} bytes waiting in VoQs by their packets, {} accounted",
                waiting[oq], self.voqs.waiting[oq]
            )),
            None => Ok(()),
        }
    }
}
