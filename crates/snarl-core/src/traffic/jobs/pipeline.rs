//! Runs a job's [`Plan`] iteration after iteration: the NCCL engine.
//!
//! Counters are cumulative over the job's collectives, so a rank that has begun its next
//! collective may send to one still finishing the last (its chunks wait in the
//! receiver's slots). An operation of collective i waits until its rank has begun
//! collective i and its fixed overhead has passed; a chunk waits for a free slot at its
//! receiver (at most `depth` sent and not yet consumed); a chunk is consumed, in order,
//! by the operation that forwards it or, if none does, once it has arrived. A rank has
//! finished a collective once its programs have sent every chunk of it, every chunk it
//! sent has arrived and every chunk of it due to the rank is consumed.
//!
//! A flow is one connection's chunk stream of one collective on one queue pair: from its
//! first part posted to its last part delivered (the flow completion times reported).

use super::plan::{Plan, Shape};
use super::Collective;
use crate::packet::{Tag, NIL};
use crate::traffic::workload::Env;

pub struct Pipeline {
    plan: Plan,
    depth: u64,
    /// Job ranks' hosts.
    hosts: Vec<u32>,
    job_tag: u16,
    /// Per connection: chunks sent, chunks consumed; per slot, parts arrived.
    sent: Vec<u64>,
    consumed: Vec<u64>,
    slots: Vec<u32>,
    /// Per program: operations posted (over every collective).
    done_ops: Vec<u64>,
    /// Per rank: collectives released (begun and past their overhead), parts posted and
    /// not yet delivered.
    released: Vec<u64>,
    outstanding: Vec<u64>,
    /// Per connection and part: when its flow of the current collective began, parts
    /// delivered (over every collective).
    flow_start: Vec<u64>,
    flow_parts: Vec<u64>,
    /// Per rank: collectives finished.
    finished: Vec<u64>,
    /// Flow completion times of measured collectives (ps), and from which collective on.
    pub fcts: Vec<u64>,
    warmup: u64,
    /// Programs that may go on, and ranks that may have finished.
    pending: Vec<u32>,
    touched: Vec<u32>,
}

impl Pipeline {
    pub fn new(
        collective: Collective,
        shape: Shape,
        depth: u32,
        hosts: Vec<u32>,
        job_tag: u16,
        warmup: u32,
        rng: &mut impl rand::Rng,
    ) -> Self {
        let plan = Plan::new(collective, shape, rng);
        let conns = plan.conns.len();
        let parts: usize = plan.conns.iter().map(|c| c.parts as usize).sum();
        let ranks = hosts.len();
        Pipeline {
            depth: depth as u64,
            hosts,
            job_tag,
            sent: vec![0; conns],
            consumed: vec![0; conns],
            slots: vec![0; conns * depth as usize],
            done_ops: vec![0; plan.programs.len()],
            released: vec![0; ranks],
            outstanding: vec![0; ranks],
            flow_start: vec![0; parts],
            flow_parts: vec![0; parts],
            finished: vec![0; ranks],
            fcts: Vec::new(),
            warmup: warmup as u64,
            pending: Vec::new(),
            touched: Vec::new(),
            plan,
        }
    }

    /// Rank `r` may send the chunks of its next collective: returns the ranks that have
    /// finished a collective since (in `done`).
    pub fn release(&mut self, env: &mut Env, r: u32, done: &mut Vec<u32>) {
        self.released[r as usize] += 1;
        self.pending.extend(self.plan.programs_of[r as usize].iter().copied());
        self.touched.push(r);
        self.settle(env, done);
    }

    /// A message of this job arrived: `src` and `dst` ranks, its queue pair and slot.
    pub fn delivered(&mut self, env: &mut Env, src: u32, dst: u32, qp: u32, slot: u16, done: &mut Vec<u32>) {
        let Some(&(conn, part)) = self.plan.by_qp.get(&(src, dst, qp)) else {
            unreachable!("a job's message on a queue pair of its plan")
        };
        let c = conn as usize;
        self.outstanding[src as usize] -= 1;
        let flow = self.plan.part_base[c] as usize + part as usize;
        self.flow_parts[flow] += 1;
        let per = self.plan.chunks(c);
        if self.flow_parts[flow].is_multiple_of(per) && self.flow_parts[flow] / per > self.warmup {
            self.fcts.push(env.now() - self.flow_start[flow]);
        }
        self.slots[c * self.depth as usize + slot as usize] += 1;
        self.drain_terminal(conn);
        let conn = &self.plan.conns[c];
        if conn.consumer != NIL {
            self.pending.push(conn.consumer);
        }
        self.touched.push(src);
        self.settle(env, done);
    }

    /// Whether chunk `k` (cumulative) of connection `c` has arrived whole.
    fn arrived(&self, c: usize, k: u64) -> bool {
        k < self.sent[c] && self.slots[c * self.depth as usize + (k % self.depth) as usize] == self.plan.conns[c].parts
    }

    /// Consumes the next chunk of `c`.
    fn consume(&mut self, c: usize) {
        let k = self.consumed[c];
        self.slots[c * self.depth as usize + (k % self.depth) as usize] = 0;
        self.consumed[c] += 1;
        // A slot is free: the sender may go on.
        self.pending.push(self.plan.conns[c].sender);
    }

    /// Consumes the chunks of `conn` that arrived and that nobody forwards, in order.
    fn drain_terminal(&mut self, conn: u32) {
        let c = conn as usize;
        let per = self.plan.chunks(c);
        let first = self.plan.conns[c].chunks.start as u64;
        while self.arrived(c, self.consumed[c]) && self.plan.terminal[(first + self.consumed[c] % per) as usize] {
            self.consume(c);
            self.touched.push(self.plan.conns[c].dst);
        }
    }

    /// Runs the pending programs as far as they go, then lists the ranks that finished.
    fn settle(&mut self, env: &mut Env, done: &mut Vec<u32>) {
        while let Some(p) = self.pending.pop() {
            if p != NIL {
                self.run(env, p);
            }
        }
        while let Some(r) = self.touched.pop() {
            self.check(r, done);
        }
    }

    /// Program `p` posts what it can.
    fn run(&mut self, env: &mut Env, p: u32) {
        let program = &self.plan.programs[p as usize];
        let (rank, first, len) = (program.rank, program.ops.start as u64, program.ops.len() as u64);
        self.touched.push(rank);
        loop {
            let k = self.done_ops[p as usize];
            if k >= self.released[rank as usize] * len {
                return;
            }
            let op = self.plan.ops[(first + k % len) as usize];
            let c = op.conn as usize;
            if self.sent[c] >= self.consumed[c] + self.depth {
                return;
            }
            if op.from != NIL {
                let f = op.from as usize;
                if !(0..op.count as u64).all(|i| self.arrived(f, self.consumed[f] + i)) {
                    return;
                }
                for _ in 0..op.count {
                    self.consume(f);
                }
                self.drain_terminal(op.from);
            }
            self.post(env, c, op.bytes);
            self.done_ops[p as usize] += 1;
        }
    }

    /// Posts the next chunk of connection `c`, `bytes` over its parts.
    fn post(&mut self, env: &mut Env, c: usize, bytes: u64) {
        let conn = &self.plan.conns[c];
        let (src, dst, parts) = (conn.src, conn.dst, conn.parts as u64);
        let slot = (self.sent[c] % self.depth) as u16;
        let starts_flow = self.sent[c].is_multiple_of(self.plan.chunks(c));
        let tag = Tag { job: self.job_tag, step: slot };
        for q in 0..parts {
            let piece = (bytes / parts + u64::from(q < bytes % parts)).max(1);
            if starts_flow {
                let flow = self.plan.part_base[c] as usize + q as usize;
                self.flow_start[flow] = env.now();
            }
            let accepted =
                env.post(self.hosts[src as usize], self.hosts[dst as usize], piece, conn.qp + q as u32, tag, 0);
            assert!(accepted, "the source queue was sized for every job's chunks in flight");
        }
        self.sent[c] += 1;
        self.outstanding[src as usize] += parts;
    }

    /// Whether rank `r` finished its current collective; if so it is counted and listed.
    fn check(&mut self, r: u32, done: &mut Vec<u32>) {
        let i = r as usize;
        let next = self.finished[i] + 1;
        if self.released[i] < next || self.outstanding[i] > 0 {
            return;
        }
        let plan = &self.plan;
        let sent_all = plan.programs_of[i]
            .iter()
            .all(|&p| self.done_ops[p as usize] >= next * plan.programs[p as usize].ops.len() as u64);
        let received_all =
            plan.incoming[i].iter().all(|&c| self.consumed[c as usize] >= next * plan.chunks(c as usize));
        if sent_all && received_all {
            self.finished[i] = next;
            done.push(r);
        }
    }
}
