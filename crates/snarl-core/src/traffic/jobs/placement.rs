//! Where jobs run: the allocation's nodes (contiguous, random or scattered), and each
//! job's share of them. A node is a host, or with several GPUs per node the node that
//! holds them (`topology::Nodes`): the policies choose whole nodes.

use super::config::{Allocation, AllocationPolicy, JobsConfig, NamedNodes, Nodes};
use rand::seq::SliceRandom;
use rand_pcg::Pcg64Mcg;

/// The nodes of the allocation, in allocation order, on a fabric of `nodes` nodes.
pub fn allocate(allocation: Option<&Allocation>, nodes: usize, rng: &mut Pcg64Mcg) -> Vec<u32> {
    let Some(a) = allocation else { return (0..nodes as u32).collect() };
    let n = a.nodes as usize;
    match a.policy {
        AllocationPolicy::Contiguous => (0..n as u32).collect(),
        AllocationPolicy::Scatter => (0..n).map(|i| (i * nodes / n) as u32).collect(),
        AllocationPolicy::Random => {
            let mut all: Vec<u32> = (0..nodes as u32).collect();
            let (chosen, _) = all.partial_shuffle(rng, n);
            let mut chosen = chosen.to_vec();
            // Ranks follow node order, as a scheduler lists its nodes.
            chosen.sort_unstable();
            chosen
        }
    }
}

/// Each job's nodes as positions in an allocation of `nodes` nodes, in rank order:
/// listed ones as listed, `all` the whole allocation, and the rest dealt in turn to the
/// `interleaved` jobs. Positions beyond the allocation are dropped (the config check
/// names them).
pub fn positions(config: &JobsConfig, nodes: usize) -> Vec<Vec<u32>> {
    let mut taken = vec![false; nodes];
    let mut out: Vec<Vec<u32>> = config
        .jobs
        .iter()
        .map(|job| match &job.nodes {
            Nodes::List(list) => list.iter().copied().filter(|&n| (n as usize) < nodes).collect(),
            Nodes::Slice { first, count } => {
                (*first..first.saturating_add(*count)).filter(|&n| (n as usize) < nodes).collect()
            }
            Nodes::Named(NamedNodes::All) => (0..nodes as u32).collect(),
            Nodes::Named(NamedNodes::Interleaved) => Vec::new(),
        })
        .collect();
    for list in &out {
        for &n in list {
            taken[n as usize] = true;
        }
    }
    let interleaved: Vec<usize> =
        (0..config.jobs.len()).filter(|&j| config.jobs[j].nodes == Nodes::Named(NamedNodes::Interleaved)).collect();
    if !interleaved.is_empty() {
        let free = (0..nodes as u32).filter(|&n| !taken[n as usize]);
        for (k, node) in free.enumerate() {
            out[interleaved[k % interleaved.len()]].push(node);
        }
    }
    out
}
