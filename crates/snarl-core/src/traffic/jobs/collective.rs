//! Collective operations as point-to-point messages with dependencies.
//!
//! A collective on `n` ranks is a [`Schedule`]: every rank runs the same number of steps
//! (some of them empty for some ranks), and each step is a set of sends and a number of
//! messages to receive. A rank starts step k+1 once every message it sent in step k has
//! been delivered and every message it expects in step k has arrived: blocking
//! send-and-receive, as the MPI implementations of the characterization study (CRAB) and
//! of NCCL's rings are. Reductions and local copies take no time: only communication is
//! modelled, as the study times only communication.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The bytes of a barrier's messages (an envelope and no payload).
pub const BARRIER_BYTES: u64 = 8;

/// The collectives a job can run (`collective` of `[[workload.jobs]]`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Ring AllGather: n-1 steps, each rank passing a block of size/n to the next.
    #[serde(rename = "allgather")]
    AllGather,
    /// Ring ReduceScatter: the same pattern as the ring AllGather.
    ReduceScatter,
    /// Ring AllReduce: a ring ReduceScatter then a ring AllGather, 2(n-1) steps of size/n.
    #[serde(rename = "allreduce")]
    AllReduce,
    /// Bidirectional ring AllReduce: half the vector around each direction at once.
    #[serde(rename = "allreduce_bidirectional")]
    AllReduceBidirectional,
    /// Recursive halving (ReduceScatter) then recursive doubling (AllGather), log2 n
    /// steps each; n a power of two.
    #[serde(rename = "allreduce_halving_doubling")]
    AllReduceHalvingDoubling,
    /// Linear AlltoAll: every rank posts its n-1 sends of `size` at once.
    #[serde(rename = "alltoall")]
    AllToAll,
    /// Pairwise AlltoAll: n-1 steps; in step k rank i sends to i+k and receives from i-k.
    #[serde(rename = "alltoall_pairwise")]
    AllToAllPairwise,
    /// Every rank but rank 0 sends `size` to rank 0.
    Incast,
    /// Binomial-tree broadcast of `size` from rank 0: ceil(log2 n) steps.
    Broadcast,
    /// Dissemination barrier: ceil(log2 n) steps of small messages.
    Barrier,
    /// AlltoAll as NCCL's PXN runs it (`engine = "nccl"` only): a block for a GPU of
    /// another node crosses the intra-node link to the local GPU on the destination's
    /// rail first, so every network message stays on its rail.
    #[serde(rename = "alltoall_pxn")]
    AllToAllPxn,
}

/// In which order a linear AlltoAll posts its sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PeerOrder {
    /// Every rank in the order 0, 1, ..., n-1 (CRAB's): the low ranks are briefly
    /// incast.
    #[default]
    Linear,
    /// Rank i in the order i+1, i+2, ...: every rank starts with a different peer.
    Shifted,
}

impl Collective {
    pub const NAMES: [&'static str; 11] = [
        "allgather",
        "reduce_scatter",
        "allreduce",
        "allreduce_bidirectional",
        "allreduce_halving_doubling",
        "alltoall",
        "alltoall_pairwise",
        "incast",
        "broadcast",
        "barrier",
        "alltoall_pxn",
    ];

    /// The name the config spells.
    pub fn name(self) -> &'static str {
        Collective::NAMES[self as usize]
    }

    /// Why `n` ranks cannot run it, if they cannot.
    pub fn refuses(self, n: usize) -> Option<String> {
        if n < 2 {
            return Some(format!("{} needs at least 2 ranks, found {n}", self.name()));
        }
        if self == Collective::AllReduceHalvingDoubling && !n.is_power_of_two() {
            return Some(format!("allreduce_halving_doubling needs a power-of-two number of ranks, found {n}"));
        }
        None
    }

    /// S in NCCL-tests' algorithm bandwidth S / t, for a job of `n` ranks and `size`
    /// (the total vector of the AllGather, ReduceScatter and AllReduce; what each rank
    /// sends to each peer in an AlltoAll, so S = n x size; what each sender sends in an
    /// Incast, so S = (n-1) x size, what rank 0 receives). None for the barrier.
    pub fn algbw_bytes(self, size: u64, n: usize) -> Option<f64> {
        let n = n as f64;
        let size = size as f64;
        match self {
            Collective::AllToAll | Collective::AllToAllPairwise | Collective::AllToAllPxn => Some(size * n),
            Collective::Incast => Some(size * (n - 1.0)),
            Collective::Barrier => None,
            _ => Some(size),
        }
    }

    /// NCCL-tests' factor from algorithm to bus bandwidth: 2(n-1)/n for AllReduce,
    /// (n-1)/n for AllGather, ReduceScatter and AlltoAll, 1 for Broadcast and Incast
    /// (whose S is what the root's link carries).
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Collective::AllReduce | Collective::AllReduceBidirectional | Collective::AllReduceHalvingDoubling => {
                2.0 * (n - 1.0) / n
            }
            Collective::AllGather
            | Collective::ReduceScatter
            | Collective::AllToAll
            | Collective::AllToAllPairwise
            | Collective::AllToAllPxn => (n - 1.0) / n,
            Collective::Incast | Collective::Broadcast | Collective::Barrier => 1.0,
        }
    }
}

/// One message of a step: to rank `peer`, `bytes` long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    pub peer: u32,
    pub bytes: u64,
}

/// One step of one rank: its sends (a range of [`Schedule::sends`]) and how many
/// messages it receives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub sends: std::ops::Range<u32>,
    pub receives: u32,
}

/// Every rank's steps of one collective, flat: rank r's step k is `steps[r * len + k]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    pub ranks: usize,
    /// Steps per rank.
    pub len: usize,
    steps: Vec<Step>,
    sends: Vec<Send>,
}

impl Schedule {
    /// The schedule of `collective` on `n` ranks (n >= 2; a power of two for halving
    /// doubling: [`Collective::refuses`]) with `size` bytes as the collective defines it.
    pub fn new(collective: Collective, n: usize, size: u64, order: PeerOrder) -> Schedule {
        let mut plan = Builder::new(n, steps_of(collective, n));
        let ring = |plan: &mut Builder, first: usize, steps: usize, block: u64, forward: bool| {
            // Each rank sends to its successor (its predecessor, backward) and receives
            // from the other side, one block per step.
            for r in 0..n {
                let to = if forward { (r + 1) % n } else { (r + n - 1) % n };
                for k in first..first + steps {
                    plan.send(r, k, to, block);
                    plan.receive(r, k);
                }
            }
        };
        match collective {
            Collective::AllGather | Collective::ReduceScatter => ring(&mut plan, 0, n - 1, size / n as u64, true),
            Collective::AllReduce => ring(&mut plan, 0, 2 * (n - 1), size / n as u64, true),
            Collective::AllReduceBidirectional => {
                let block = size / 2 / n as u64;
                ring(&mut plan, 0, 2 * (n - 1), block, true);
                ring(&mut plan, 0, 2 * (n - 1), block, false);
            }
            Collective::AllReduceHalvingDoubling => {
                let rounds = n.trailing_zeros() as usize;
                for r in 0..n {
                    // Recursive halving: the partner at distance n/2, n/4, ..., each
                    // exchange half of what is left; then recursive doubling back.
                    for k in 0..rounds {
                        let distance = n >> (k + 1);
                        plan.send(r, k, r ^ distance, size >> (k + 1));
                        plan.receive(r, k);
                        let back = 2 * rounds - 1 - k;
                        plan.send(r, back, r ^ distance, size >> (k + 1));
                        plan.receive(r, back);
                    }
                }
            }
            Collective::AllToAll | Collective::AllToAllPxn => {
                for r in 0..n {
                    for j in 0..n {
                        let peer = match order {
                            PeerOrder::Linear => j,
                            PeerOrder::Shifted => (r + 1 + j) % n,
                        };
                        if peer != r {
                            plan.send(r, 0, peer, size);
                            plan.receive(r, 0);
                        }
                    }
                }
            }
            Collective::AllToAllPairwise => {
                for r in 0..n {
                    for k in 1..n {
                        plan.send(r, k - 1, (r + k) % n, size);
                        plan.receive(r, k - 1);
                    }
                }
            }
            Collective::Incast => {
                for r in 1..n {
                    plan.send(r, 0, 0, size);
                    plan.receive(0, 0);
                }
            }
            Collective::Broadcast => {
                for k in 0..plan.len {
                    for r in 0..(1 << k).min(n) {
                        if r + (1 << k) < n {
                            plan.send(r, k, r + (1 << k), size);
                            plan.receive(r + (1 << k), k);
                        }
                    }
                }
            }
            Collective::Barrier => {
                for r in 0..n {
                    for k in 0..plan.len {
                        plan.send(r, k, (r + (1 << k)) % n, BARRIER_BYTES);
                        plan.receive((r + (1 << k)) % n, k);
                    }
                }
            }
        }
        plan.finish()
    }

    /// Rank `rank`'s step `k`.
    #[inline]
    pub fn step(&self, rank: usize, k: usize) -> &Step {
        &self.steps[rank * self.len + k]
    }

    /// The sends of a step.
    #[inline]
    pub fn sends(&self, step: &Step) -> &[Send] {
        &self.sends[step.sends.start as usize..step.sends.end as usize]
    }

    /// The most sends any rank has in one step (what it posts at once).
    pub fn widest_step(&self) -> usize {
        self.steps.iter().map(|s| s.sends.len()).max().unwrap_or(0)
    }

    /// Bytes rank `rank` sends in the whole collective.
    pub fn bytes_sent(&self, rank: usize) -> u64 {
        (0..self.len).flat_map(|k| self.sends(self.step(rank, k))).map(|s| s.bytes).sum()
    }
}

/// Steps per rank.
fn steps_of(collective: Collective, n: usize) -> usize {
    let log2_ceil = (usize::BITS - (n - 1).leading_zeros()) as usize;
    match collective {
        Collective::AllGather | Collective::ReduceScatter | Collective::AllToAllPairwise => n - 1,
        Collective::AllReduce | Collective::AllReduceBidirectional => 2 * (n - 1),
        Collective::AllReduceHalvingDoubling => 2 * n.trailing_zeros() as usize,
        Collective::AllToAll | Collective::AllToAllPxn | Collective::Incast => 1,
        Collective::Broadcast | Collective::Barrier => log2_ceil,
    }
}

/// Collects sends per (rank, step) in any order, then lays them out flat.
struct Builder {
    n: usize,
    len: usize,
    sends: Vec<Vec<Send>>,
    receives: Vec<u32>,
}

impl Builder {
    fn new(n: usize, len: usize) -> Builder {
        Builder { n, len, sends: vec![Vec::new(); n * len], receives: vec![0; n * len] }
    }

    fn send(&mut self, rank: usize, step: usize, peer: usize, bytes: u64) {
        self.sends[rank * self.len + step].push(Send { peer: peer as u32, bytes });
    }

    fn receive(&mut self, rank: usize, step: usize) {
        self.receives[rank * self.len + step] += 1;
    }

    fn finish(self) -> Schedule {
        let mut sends = Vec::with_capacity(self.sends.iter().map(Vec::len).sum());
        let mut steps = Vec::with_capacity(self.n * self.len);
        for (list, &receives) in self.sends.into_iter().zip(&self.receives) {
            let start = sends.len() as u32;
            sends.extend(list);
            steps.push(Step { sends: start..sends.len() as u32, receives });
        }
        Schedule { ranks: self.n, len: self.len, steps, sends }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message sent in step k of the schedule is received in step k by its peer.
    fn balanced(s: &Schedule) {
        for k in 0..s.len {
            let mut inbound = vec![0u32; s.ranks];
            for r in 0..s.ranks {
                for send in s.sends(s.step(r, k)) {
                    assert_ne!(send.peer as usize, r, "rank {r} sends to itself in step {k}");
                    inbound[send.peer as usize] += 1;
                }
            }
            for (r, &count) in inbound.iter().enumerate() {
                assert_eq!(count, s.step(r, k).receives, "rank {r} step {k}");
            }
        }
    }

    #[test]
    fn every_collective_receives_what_it_sends_step_by_step() {
        for collective in [
            Collective::AllGather,
            Collective::ReduceScatter,
            Collective::AllReduce,
            Collective::AllReduceBidirectional,
            Collective::AllReduceHalvingDoubling,
            Collective::AllToAll,
            Collective::AllToAllPairwise,
            Collective::Incast,
            Collective::Broadcast,
            Collective::Barrier,
            Collective::AllToAllPxn,
        ] {
            for n in [2, 3, 5, 8, 16] {
                if collective.refuses(n).is_none() {
                    for order in [PeerOrder::Linear, PeerOrder::Shifted] {
                        balanced(&Schedule::new(collective, n, 1 << 20, order));
                    }
                }
            }
        }
    }

    #[test]
    fn ring_collectives_move_the_textbook_volume() {
        let (n, size) = (8usize, 8u64 << 20);
        // AllGather and ReduceScatter: (n-1)/n of the vector per rank; AllReduce twice that.
        let gather = Schedule::new(Collective::AllGather, n, size, PeerOrder::Linear);
        assert_eq!(gather.len, n - 1);
        assert!((0..n).all(|r| gather.bytes_sent(r) == (n as u64 - 1) * size / n as u64));
        for allreduce in
            [Collective::AllReduce, Collective::AllReduceBidirectional, Collective::AllReduceHalvingDoubling]
        {
            let s = Schedule::new(allreduce, n, size, PeerOrder::Linear);
            assert!((0..n).all(|r| s.bytes_sent(r) == 2 * (n as u64 - 1) * size / n as u64), "{allreduce:?}");
        }
        let alltoall = Schedule::new(Collective::AllToAll, n, 1000, PeerOrder::Linear);
        assert_eq!(alltoall.widest_step(), n - 1);
        assert!((0..n).all(|r| alltoall.bytes_sent(r) == (n as u64 - 1) * 1000));
    }

    #[test]
    fn tiny_vectors_on_many_ranks_send_empty_blocks() {
        let s = Schedule::new(Collective::AllGather, 16, 8, PeerOrder::Linear);
        assert!(s.sends(s.step(3, 2)).iter().all(|m| m.bytes == 0));
    }

    #[test]
    fn linear_alltoall_starts_every_rank_at_rank_0_and_shifted_at_its_successor() {
        let linear = Schedule::new(Collective::AllToAll, 4, 1, PeerOrder::Linear);
        let peers = |s: &Schedule, r| s.sends(s.step(r, 0)).iter().map(|m| m.peer).collect::<Vec<_>>();
        assert_eq!(peers(&linear, 2), vec![0, 1, 3]);
        let shifted = Schedule::new(Collective::AllToAll, 4, 1, PeerOrder::Shifted);
        assert_eq!(peers(&shifted, 2), vec![3, 0, 1]);
    }

    #[test]
    fn broadcast_reaches_every_rank_once_from_rank_0() {
        let s = Schedule::new(Collective::Broadcast, 6, 100, PeerOrder::Linear);
        assert_eq!(s.len, 3);
        let received: Vec<u32> = (0..6).map(|r| (0..3).map(|k| s.step(r, k).receives).sum()).collect();
        assert_eq!(received, vec![0, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn halving_doubling_refuses_other_than_powers_of_two() {
        assert!(Collective::AllReduceHalvingDoubling.refuses(6).is_some());
        assert!(Collective::AllReduceHalvingDoubling.refuses(8).is_none());
        assert!(Collective::AllGather.refuses(1).is_some());
    }

    #[test]
    fn bus_bandwidth_follows_nccl_tests() {
        assert_eq!(Collective::AllReduce.bus_factor(8), 2.0 * 7.0 / 8.0);
        assert_eq!(Collective::AllGather.bus_factor(8), 7.0 / 8.0);
        assert_eq!(Collective::AllToAll.bus_factor(8), 7.0 / 8.0);
        assert_eq!(Collective::Broadcast.bus_factor(8), 1.0);
        assert_eq!(Collective::AllToAll.algbw_bytes(100, 8), Some(800.0));
        assert_eq!(Collective::Barrier.algbw_bytes(100, 8), None);
    }

    #[test]
    fn names_match_the_config() {
        for (i, name) in Collective::NAMES.iter().enumerate() {
            let parsed: Collective = serde_json::from_value(serde_json::Value::String(name.to_string())).unwrap();
            assert_eq!(parsed as usize, i);
            assert_eq!(parsed.name(), *name);
        }
    }
}
