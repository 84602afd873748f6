//! An NCCL-style collective as a dataflow of chunks ([`Plan`]), built once per job.
//!
//! A collective is cut into chunks (`chunk` bytes, NCCL's simple protocol moves 2 MiB at
//! a time) and spread over `channels`, each its own set of connections. A connection
//! (sender rank, receiver rank, lane) carries a sequence of chunks, each split over the
//! connection's queue pairs; the receiver holds `depth` of them at a time (NCCL's
//! buffer slots), so the sender waits for a slot. Each rank runs programs: sequences of
//! operations, each sending one chunk and, first, *consuming* chunks that arrived on a
//! connection into it (a ring's next step forwards the block it just received, reduced).
//! A chunk nobody forwards is consumed as it arrives. A program stalls on a chunk that
//! has not arrived, or on a full receiver: so a slow queue pair stalls its ring.
//!
//! The algorithms, with ranks numbered node-major (`gpus` to a node):
//! - ring AllReduce (`allreduce`): channel c's ring enters each node at GPU 2c mod G and
//!   leaves it at GPU 2c + 1 mod G, the node's other GPUs between, so the G/2 channels
//!   of a node use each NIC one way (as NCCL's rings do); per loop of n chunks every rank
//!   sends 2(n - 1) of them to its successor, each but the first forwarding the one it
//!   received last;
//! - bidirectional (`allreduce_bidirectional`): every channel's ring also run backwards,
//!   half the data each way, so each NIC carries both ways;
//! - halving-doubling (`allreduce_halving_doubling`): recursive halving with the partners
//!   at distance n/2, n/4, ..., 1, then doubling back, each exchange in chunks that
//!   forward what the previous exchange brought;
//! - AlltoAll (`alltoall`): every rank streams its block to every peer directly;
//! - AlltoAll PXN (`alltoall_pxn`): a block for a GPU of another node goes first over
//!   the intra-node link to the local GPU on the destination's rail, which sends it over
//!   the network with its own: every network message stays on its rail.

use super::collective::Collective;
use crate::packet::NIL;
use std::collections::HashMap;

/// Lanes from here on are intra-node hops of PXN (one per channel and final destination).
const PXN_LANES: u32 = 1 << 20;

/// A connection: chunks from `src` to `dst` (job ranks), on queue pairs `qp..qp + parts`.
#[derive(Clone, Debug)]
pub struct Conn {
    pub src: u32,
    pub dst: u32,
    pub qp: u32,
    pub parts: u32,
    /// Its chunks of one collective: `terminal` flags in `Plan::terminal`.
    pub chunks: std::ops::Range<u32>,
    /// The program that sends on it, and the one that consumes its chunks (NIL: every
    /// chunk is consumed as it arrives).
    pub sender: u32,
    pub consumer: u32,
}

/// One operation of a program: consume `count` chunks of connection `from` (none if
/// `from` is NIL), then send a chunk of `bytes` on `conn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub conn: u32,
    pub bytes: u64,
    pub from: u32,
    pub count: u32,
}

/// A rank's sequence of operations.
#[derive(Clone, Debug)]
pub struct Program {
    pub rank: u32,
    pub ops: std::ops::Range<u32>,
}

/// One collective call of a job as connections and programs.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub conns: Vec<Conn>,
    /// Per chunk of a connection (in its order): consumed as it arrives.
    pub terminal: Vec<bool>,
    pub programs: Vec<Program>,
    pub ops: Vec<Op>,
    /// Per rank: its programs, and the connections it receives on.
    pub programs_of: Vec<Vec<u32>>,
    pub incoming: Vec<Vec<u32>>,
    /// Per connection: the index of its first part among all connections' parts.
    pub part_base: Vec<u32>,
    /// (sender rank, receiver rank, queue pair) -> (connection, part).
    pub by_qp: HashMap<(u32, u32, u32), (u32, u32)>,
}

/// How a job cuts its collective.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub ranks: usize,
    pub gpus: usize,
    pub size: u64,
    pub chunk: u64,
    pub channels: u32,
    pub qps: u32,
}

impl Plan {
    /// The plan of `collective` (one the NCCL engine runs: [`Plan::runs`]). Each pair of
    /// ranks numbers its queue pairs from its own offset, drawn from `rng` as a NIC
    /// numbers the QPs it creates: what ECMP hashes changes from seed to seed.
    pub fn new(collective: Collective, s: Shape, rng: &mut impl rand::Rng) -> Plan {
        let mut b = Builder::new(s);
        for c in 0..s.channels {
            let share = split(s.size, s.channels as u64, c as u64);
            match collective {
                Collective::AllReduce => b.ring(&ring_order(s, c), share, c),
                Collective::AllReduceBidirectional => {
                    let order = ring_order(s, c);
                    b.ring(&order, share / 2, c);
                    let back: Vec<u32> = order.iter().rev().copied().collect();
                    b.ring(&back, share - share / 2, s.channels + c);
                }
                Collective::AllReduceHalvingDoubling => b.halving_doubling(share, c, s.channels + c),
                Collective::AllToAll => b.alltoall(share, c),
                Collective::AllToAllPxn => b.alltoall_pxn(share, c),
                _ => unreachable!("{collective:?} is refused by the config check"),
            }
        }
        let mut offsets: HashMap<(u32, u32), u32> = HashMap::new();
        let mut pairs: Vec<(u32, u32)> = b.conns.iter().map(|c| (c.src, c.dst)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        for pair in pairs {
            offsets.insert(pair, rng.random_range(0..1 << 24) << 8);
        }
        for c in &mut b.conns {
            c.qp = c.qp.wrapping_add(offsets[&(c.src, c.dst)]);
        }
        b.finish()
    }

    /// The collectives the NCCL engine runs.
    pub fn runs(collective: Collective) -> bool {
        matches!(
            collective,
            Collective::AllReduce
                | Collective::AllReduceBidirectional
                | Collective::AllReduceHalvingDoubling
                | Collective::AllToAll
                | Collective::AllToAllPxn
        )
    }

    /// Chunks per collective on connection `c`.
    pub fn chunks(&self, c: usize) -> u64 {
        self.conns[c].chunks.len() as u64
    }
}

/// Part `k` of `total` split into `parts` as evenly as can be.
fn split(total: u64, parts: u64, k: u64) -> u64 {
    total / parts + u64::from(k < total % parts)
}

/// Channel `c`'s ring: node by node, entering each at GPU 2c mod G and leaving at GPU
/// 2c + 1 mod G, the node's other GPUs in order between.
fn ring_order(s: Shape, c: u32) -> Vec<u32> {
    let g = s.gpus;
    let nodes = s.ranks / g;
    let mut order = Vec::with_capacity(s.ranks);
    for node in 0..nodes {
        let base = (node * g) as u32;
        if g == 1 {
            order.push(base);
            continue;
        }
        let (enter, leave) = ((2 * c as usize) % g, (2 * c as usize + 1) % g);
        order.push(base + enter as u32);
        order.extend((0..g).filter(|&l| l != enter && l != leave).map(|l| base + l as u32));
        order.push(base + leave as u32);
    }
    order
}

/// Builds a plan: programs of operations, connections met as they are named.
struct Builder {
    s: Shape,
    conns: Vec<Conn>,
    terminal: Vec<Vec<bool>>,
    programs: Vec<(u32, Vec<Op>)>,
    index: HashMap<(u32, u32, u32), u32>,
}

impl Builder {
    fn new(s: Shape) -> Builder {
        Builder { s, conns: Vec::new(), terminal: Vec::new(), programs: Vec::new(), index: HashMap::new() }
    }

    /// The connection from `src` to `dst` on `lane`.
    fn conn(&mut self, src: u32, dst: u32, lane: u32) -> u32 {
        let g = self.s.gpus as u32;
        let parts = if src / g == dst / g { 1 } else { self.s.qps };
        let next = self.conns.len() as u32;
        *self.index.entry((src, dst, lane)).or_insert_with(|| {
            self.conns.push(Conn { src, dst, qp: lane * parts, parts, chunks: 0..0, sender: NIL, consumer: NIL });
            self.terminal.push(Vec::new());
            next
        })
    }

    fn program(&mut self, rank: u32) -> u32 {
        self.programs.push((rank, Vec::new()));
        self.programs.len() as u32 - 1
    }

    /// Program `p` sends a chunk of `bytes` on `conn` (consumed as it arrives if
    /// `terminal`), after consuming `count` chunks of `from` if given.
    fn op(&mut self, p: u32, conn: u32, bytes: u64, terminal: bool, from: Option<(u32, u32)>) {
        let c = &mut self.conns[conn as usize];
        assert!(c.sender == NIL || c.sender == p, "one program sends on a connection");
        c.sender = p;
        self.terminal[conn as usize].push(terminal);
        let (from, count) = from.unwrap_or((NIL, 0));
        if from != NIL {
            let f = &mut self.conns[from as usize];
            assert!(f.consumer == NIL || f.consumer == p, "one program consumes a connection");
            f.consumer = p;
        }
        self.programs[p as usize].1.push(Op { conn, bytes: bytes.max(1), from, count });
    }

    /// A ring over `order` moving `bytes` in loops of n chunks, on `lane`.
    fn ring(&mut self, order: &[u32], bytes: u64, lane: u32) {
        let n = order.len();
        let programs: Vec<u32> = order.iter().map(|&r| self.program(r)).collect();
        let loop_bytes = self.s.chunk.saturating_mul(n as u64);
        let mut left = bytes;
        loop {
            let this = left.min(loop_bytes);
            left -= this;
            let block = this / n as u64;
            for p in 0..n {
                let (me, next, prev) = (order[p], order[(p + 1) % n], order[(p + n - 1) % n]);
                let out = self.conn(me, next, lane);
                let inc = self.conn(prev, me, lane);
                for k in 0..2 * (n - 1) {
                    let from = (k > 0).then_some((inc, 1));
                    self.op(programs[p], out, block, k == 2 * n - 3, from);
                }
            }
            if left == 0 {
                break;
            }
        }
    }

    /// Halving-doubling moving `bytes` in loops whose smallest exchange is a chunk. Each
    /// exchange of a rank is its own program, and the doubling ones their own
    /// connections (lane `doubling`): an exchange forwards what the previous one brought
    /// while that one is still arriving, as NCCL's proxies do; one program for them all
    /// would wait for an exchange's last chunk to be taken before the next began.
    fn halving_doubling(&mut self, bytes: u64, lane: u32, doubling_lane: u32) {
        let n = self.s.ranks;
        let rounds = n.trailing_zeros() as usize;
        // The exchanges in order: halving 0..rounds, doubling rounds-1..=0.
        let order: Vec<(usize, bool)> =
            (0..rounds).map(|k| (k, false)).chain((0..rounds).rev().map(|k| (k, true))).collect();
        let programs: Vec<Vec<u32>> = (0..n as u32).map(|r| order.iter().map(|_| self.program(r)).collect()).collect();
        let loop_bytes = self.s.chunk.saturating_mul(n as u64);
        let mut left = bytes;
        loop {
            let this = left.min(loop_bytes);
            left -= this;
            // Chunks of each exchange: its bytes (this / 2^(k+1)) in pieces of a chunk.
            let sizes: Vec<u64> = (0..rounds).map(|k| this >> (k + 1)).collect();
            let counts: Vec<u64> = sizes.iter().map(|&b| b.div_ceil(self.s.chunk).max(1)).collect();
            for (r, mine) in programs.iter().enumerate() {
                let partner = |k: usize| (r ^ (n >> (k + 1))) as u32;
                let me = r as u32;
                // Each exchange consumes what the previous one brought, spread evenly.
                let mut previous: Option<(u32, u64)> = None;
                for (x, &(k, doubling)) in order.iter().enumerate() {
                    let on = if doubling { doubling_lane } else { lane };
                    let out = self.conn(me, partner(k), on);
                    let m = counts[k];
                    for j in 0..m {
                        let from = previous.map(|(conn, had)| {
                            let upto = |j: u64| (j * had).div_ceil(m);
                            (conn, (upto(j + 1) - upto(j)) as u32)
                        });
                        let from = from.filter(|&(_, count)| count > 0);
                        self.op(mine[x], out, split(sizes[k], m, j), doubling && k == 0, from);
                    }
                    previous = Some((self.conn(partner(k), me, on), m));
                }
            }
            if left == 0 {
                break;
            }
        }
    }

    /// Every rank streams `bytes` to every peer, each peer its own program.
    fn alltoall(&mut self, bytes: u64, lane: u32) {
        let n = self.s.ranks as u32;
        for r in 0..n {
            for k in 1..n {
                let peer = (r + k) % n;
                let p = self.program(r);
                let out = self.conn(r, peer, lane);
                self.stream(p, out, bytes, None);
            }
        }
    }

    /// `bytes` on `conn` in chunks, consumed as they arrive; each first consumes a chunk
    /// of `from`, if given.
    fn stream(&mut self, p: u32, conn: u32, bytes: u64, from: Option<u32>) {
        let m = bytes.div_ceil(self.s.chunk).max(1);
        for j in 0..m {
            self.op(p, conn, split(bytes, m, j), true, from.map(|f| (f, 1)));
        }
    }

    /// AlltoAll with PXN: blocks for another node's GPU h cross to the local GPU h first.
    fn alltoall_pxn(&mut self, bytes: u64, lane: u32) {
        let (n, g) = (self.s.ranks as u32, self.s.gpus as u32);
        let m = bytes.div_ceil(self.s.chunk).max(1);
        for d in 0..n {
            for src_node in (0..n / g).filter(|&node| node != d / g) {
                // The forwarder: the GPU on d's rail in the source node.
                let f = src_node * g + d % g;
                let hop = PXN_LANES + lane * n + d;
                let origins: Vec<u32> = (0..g).map(|l| src_node * g + l).collect();
                let relays: Vec<(u32, u32)> = origins
                    .iter()
                    .filter(|&&o| o != f)
                    .map(|&o| {
                        let p = self.program(o);
                        let conn = self.conn(o, f, hop);
                        (p, conn)
                    })
                    .collect();
                for &(p, conn) in &relays {
                    for j in 0..m {
                        self.op(p, conn, split(bytes, m, j), false, None);
                    }
                }
                // The forwarder sends, chunk by chunk, its own block and each relayed one.
                let p = self.program(f);
                let out = self.conn(f, d, lane);
                for j in 0..m {
                    let piece = split(bytes, m, j);
                    self.op(p, out, piece, true, None);
                    for &(_, conn) in &relays {
                        self.op(p, out, piece, true, Some((conn, 1)));
                    }
                }
            }
            // Peers on d's own node: over the intra-node link, directly.
            for o in (d / g * g..d / g * g + g).filter(|&o| o != d) {
                let p = self.program(o);
                let conn = self.conn(o, d, lane);
                self.stream(p, conn, bytes, None);
            }
        }
    }

    fn finish(self) -> Plan {
        let ranks = self.s.ranks;
        let mut plan = Plan { conns: self.conns, ..Plan::default() };
        plan.programs_of = vec![Vec::new(); ranks];
        plan.incoming = vec![Vec::new(); ranks];
        for (i, flags) in self.terminal.into_iter().enumerate() {
            let start = plan.terminal.len() as u32;
            plan.terminal.extend(flags);
            let c = &mut plan.conns[i];
            c.chunks = start..plan.terminal.len() as u32;
            plan.incoming[c.dst as usize].push(i as u32);
            plan.part_base.push(plan.by_qp.len() as u32);
            for q in 0..c.parts {
                plan.by_qp.insert((c.src, c.dst, c.qp + q), (i as u32, q));
            }
        }
        for (i, (rank, ops)) in self.programs.into_iter().enumerate() {
            let start = plan.ops.len() as u32;
            plan.ops.extend(ops);
            plan.programs.push(Program { rank, ops: start..plan.ops.len() as u32 });
            plan.programs_of[rank as usize].push(i as u32);
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(ranks: usize, gpus: usize, size: u64, channels: u32) -> Shape {
        Shape { ranks, gpus, size, chunk: 1 << 20, channels, qps: 2 }
    }

    fn planned(collective: Collective, s: Shape) -> Plan {
        use rand::SeedableRng;
        Plan::new(collective, s, &mut rand_pcg::Pcg64Mcg::seed_from_u64(1))
    }

    /// Bytes each rank sends over the network and over the intra-node link.
    fn sent(plan: &Plan, gpus: u32) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); plan.programs_of.len()];
        for op in &plan.ops {
            let c = &plan.conns[op.conn as usize];
            if c.src / gpus == c.dst / gpus {
                out[c.src as usize].1 += op.bytes;
            } else {
                out[c.src as usize].0 += op.bytes;
            }
        }
        out
    }

    /// Every consumed chunk is one that arrives: per connection, the chunks consumed by
    /// operations plus the terminal ones are all its chunks.
    fn consistent(plan: &Plan) {
        let mut consumed = vec![0u64; plan.conns.len()];
        for op in &plan.ops {
            if op.from != NIL {
                consumed[op.from as usize] += op.count as u64;
            }
        }
        for (i, c) in plan.conns.iter().enumerate() {
            let terminal = plan.terminal[c.chunks.start as usize..c.chunks.end as usize].iter().filter(|&&t| t).count();
            assert_eq!(consumed[i] + terminal as u64, plan.chunks(i), "connection {i}");
        }
    }

    #[test]
    fn rings_move_the_textbook_volume_and_leave_each_node_by_distinct_nics() {
        let size = 64u64 << 20;
        let plan = planned(Collective::AllReduce, shape(16, 8, size, 4));
        consistent(&plan);
        let total: u64 = sent(&plan, 8).iter().map(|(net, intra)| net + intra).sum();
        assert_eq!(total, 16 * 2 * 15 * size / 16);
        // Channel c leaves node 0 at GPU 2c + 1: GPUs 1, 3, 5, 7 send over the network.
        let senders: Vec<u32> =
            sent(&plan, 8).iter().enumerate().filter(|(_, s)| s.0 > 0).map(|(r, _)| r as u32).collect();
        assert_eq!(senders, vec![1, 3, 5, 7, 9, 11, 13, 15]);
        let both = planned(Collective::AllReduceBidirectional, shape(16, 8, size, 4));
        consistent(&both);
        assert_eq!(sent(&both, 8).iter().filter(|s| s.0 > 0).count(), 16, "every NIC sends both ways");
    }

    #[test]
    fn halving_doubling_crosses_nodes_in_its_long_exchanges() {
        let size = 64u64 << 20;
        let plan = planned(Collective::AllReduceHalvingDoubling, shape(16, 4, size, 1));
        consistent(&plan);
        for (net, intra) in sent(&plan, 4) {
            // Distances 8 and 4 cross nodes of 4: (1/2 + 1/4) x 2 of the vector.
            assert_eq!(net, size * 3 / 2);
            assert_eq!(intra, size * 2 * 15 / 16 - size * 3 / 2);
        }
    }

    #[test]
    fn pxn_keeps_every_network_message_on_its_rail() {
        let plan = planned(Collective::AllToAllPxn, shape(16, 4, 8 << 20, 2));
        consistent(&plan);
        for c in &plan.conns {
            if c.src / 4 != c.dst / 4 {
                assert_eq!(c.src % 4, c.dst % 4, "{c:?}");
            }
        }
        // Each rank's network bytes: its rail's share of the 12 remote peers' blocks.
        assert!(sent(&plan, 4).iter().all(|s| s.0 == 12 * (8 << 20)));
        let direct = planned(Collective::AllToAll, shape(16, 4, 8 << 20, 2));
        consistent(&direct);
        assert!(sent(&direct, 4).iter().all(|s| s.0 == 12 * (8 << 20) && s.1 == 3 * (8 << 20)));
    }

    #[test]
    fn queue_pairs_name_each_connection_once() {
        let plan = planned(Collective::AllReduceBidirectional, shape(4, 2, 1 << 20, 2));
        let parts: usize = plan.conns.iter().map(|c| c.parts as usize).sum();
        assert_eq!(plan.by_qp.len(), parts);
    }
}
