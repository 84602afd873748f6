//! `[workload]` of type `jobs`: jobs that run collectives on sets of nodes, as victims
//! (a number of iterations, each after a barrier) or aggressors (repeating until the
//! victims are done, steadily or in bursts).

use super::collective::{Collective, PeerOrder};
use crate::config::{Config, Problems};
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most jobs a run can have (each is a tag of its messages and a group).
pub const MAX_JOBS: usize = 1024;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobsConfig {
    /// The nodes the jobs share (absent: every host, in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Allocation>,
    pub jobs: Vec<JobConfig>,
    /// How many measured iterations of each job record every rank's steps (the
    /// `steps` table): the first ones after the warm-up.
    #[serde(default = "one")]
    pub timeline: u32,
    /// Run the victims alone first (aggressors silent) and report each victim's
    /// `perf_ratio` against that baseline.
    #[serde(default = "yes")]
    pub baseline: bool,
    /// The aggressors stay silent: the baseline itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quiet: bool,
}

/// Which hosts the jobs share: `nodes` of them, chosen by `policy`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Allocation {
    pub nodes: u32,
    #[serde(default)]
    pub policy: AllocationPolicy,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AllocationPolicy {
    /// The first hosts in index order (neighbours under the same switches).
    #[default]
    Contiguous,
    /// Hosts drawn at random from the traffic stream: a placement per seed, as a batch
    /// scheduler on a busy machine gives.
    Random,
    /// Hosts spread evenly over the fabric (host i x hosts / nodes).
    Scatter,
}

/// A job's nodes: positions in the allocation (host ids without one).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged, expecting = "\"all\", \"interleaved\", a list of node positions, or { first, count }")]
pub enum Nodes {
    Named(NamedNodes),
    List(Vec<u32>),
    Slice { first: u32, count: u32 },
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NamedNodes {
    /// The whole allocation.
    All,
    /// The allocation's nodes not listed by another job, dealt in turn to the jobs that
    /// say `interleaved`, in job order: the first to the first such job, the second to
    /// the second, ... (the study's victim/aggressor split).
    Interleaved,
}

/// Whether a job is measured or makes congestion.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Runs `iterations` collectives, each after a barrier; the run ends when every
    /// victim is done.
    #[default]
    Victim,
    /// Repeats its collective until the victims are done (or the run ends), without
    /// barriers, steadily or in bursts.
    Aggressor,
}

/// An aggressor's bursts: collectives back to back until `length` has passed since the
/// burst began (at least one whole collective), then `pause` of silence.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    pub length: Time,
    pub pause: Time,
}

/// Compute between steps: `time`, plus up to `jitter` drawn per rank and step.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    pub time: Time,
    #[serde(default)]
    pub jitter: Time,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    pub name: String,
    pub collective: Collective,
    /// The total vector of an AllGather, ReduceScatter, AllReduce or Broadcast; what each
    /// rank sends to each peer in an AlltoAll, and each sender in an Incast.
    pub size: Bytes,
    pub nodes: Nodes,
    #[serde(default)]
    pub role: Role,
    /// A victim's iterations, the warm-up included.
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// The first iterations, left out of the figures.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// When the job starts.
    #[serde(default)]
    pub start: Time,
    /// The order of a linear AlltoAll's sends.
    #[serde(default)]
    pub order: PeerOrder,
    /// Connections (queue pairs) per rank pair: each message is split over them.
    #[serde(default = "one")]
    pub qps: u32,
    /// A barrier before every iteration (default: victims yes, aggressors no).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier: Option<bool>,
    /// An aggressor's bursts (absent: steady).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<Burst>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<Gap>,
    /// How the collective runs: `mpi`, blocking steps; `nccl`, chunks pipelined over
    /// channels (`traffic/jobs/plan.rs`).
    #[serde(default, skip_serializing_if = "Engine::is_mpi")]
    pub engine: Engine,
    /// NCCL engine: bytes a chunk carries (default 2 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<Bytes>,
    /// NCCL engine: channels (default G/2 rings for G GPUs per node, at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
    /// NCCL engine: chunks a receiver holds per connection (default 2, at least 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// NCCL engine: fixed time before each collective's first send (default 570 us).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Time>,
}

/// How a job's collective runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// Blocking send-and-receive steps, as MPI runs them (the characterization study's).
    #[default]
    Mpi,
    /// NCCL-style: chunks pipelined over channels and queue pairs, with a fixed overhead
    /// per collective.
    Nccl,
}

impl Engine {
    fn is_mpi(&self) -> bool {
        *self == Engine::Mpi
    }
}

/// NCCL's simple protocol moves 2 MiB per chunk.
pub const DEFAULT_CHUNK: u64 = 2 << 20;
/// Chunks in flight per connection: NCCL's 8 buffer steps of which a ring chunk takes 4.
pub const DEFAULT_DEPTH: u32 = 2;
/// The fixed part of T = 0.57 ms + S / 48.43 GB/s, the test report's back-to-back fit.
pub const DEFAULT_OVERHEAD_PS: u64 = 570_000_000;

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn default_iterations() -> u32 {
    20
}
fn default_warmup() -> u32 {
    5
}

impl JobConfig {
    /// A job with every default (an AllGather of nothing on every node), to fill in.
    pub fn template() -> JobConfig {
        JobConfig {
            name: String::new(),
            collective: Collective::AllGather,
            size: Bytes(0),
            nodes: Nodes::Named(NamedNodes::All),
            role: Role::default(),
            iterations: default_iterations(),
            warmup: default_warmup(),
            start: Time(0),
            order: PeerOrder::default(),
            qps: 1,
            barrier: None,
            burst: None,
            gap: None,
            engine: Engine::Mpi,
            chunk: None,
            channels: None,
            depth: None,
            overhead: None,
        }
    }

    /// A barrier before each iteration: victims of the MPI engine by default (NCCL-tests
    /// runs its collectives back to back).
    pub fn barrier(&self) -> bool {
        self.barrier.unwrap_or(self.role == Role::Victim && self.engine == Engine::Mpi)
    }

    /// The NCCL engine's channels on nodes of `gpus` GPUs.
    pub fn channels(&self, gpus: u32) -> u32 {
        self.channels.unwrap_or((gpus / 2).max(1))
    }

    pub fn chunk(&self) -> u64 {
        self.chunk.map_or(DEFAULT_CHUNK, |c| c.0)
    }

    pub fn depth(&self) -> u32 {
        self.depth.unwrap_or(DEFAULT_DEPTH)
    }

    pub fn overhead(&self) -> u64 {
        self.overhead.map_or(DEFAULT_OVERHEAD_PS, |t| t.0)
    }

    /// The NCCL engine's checks, at `at`.
    fn validate_engine(&self, at: &str, p: &mut Problems) {
        if self.engine == Engine::Mpi {
            let set = [
                ("chunk", self.chunk.is_some()),
                ("channels", self.channels.is_some()),
                ("depth", self.depth.is_some()),
                ("overhead", self.overhead.is_some()),
            ];
            for (key, _) in set.iter().filter(|(_, on)| *on) {
                p.add(format!("{at}.{key}"), "belongs to the NCCL engine: set `engine = \"nccl\"`");
            }
            if self.collective == Collective::AllToAllPxn {
                p.add(format!("{at}.collective"), "alltoall_pxn runs on the NCCL engine: set `engine = \"nccl\"`");
            }
            return;
        }
        if !super::plan::Plan::runs(self.collective) {
            p.add(
                format!("{at}.collective"),
                format!(
                    "the NCCL engine runs allreduce, allreduce_bidirectional, allreduce_halving_doubling, alltoall \
                     and alltoall_pxn, not {}",
                    self.collective.name()
                ),
            );
        }
        if self.barrier == Some(true) {
            p.add(format!("{at}.barrier"), "the NCCL engine runs collectives back to back, without barriers");
        }
        if self.gap.is_some() {
            p.add(format!("{at}.gap"), "the NCCL engine has no steps to put compute between");
        }
        if let Some(chunk) = self.chunk {
            p.positive(&format!("{at}.chunk"), chunk.0);
        }
        if let Some(c) = self.channels {
            if !(1..=64).contains(&c) {
                p.add(format!("{at}.channels"), format!("must be 1 to 64, found {c}"));
            }
        }
        if let Some(d) = self.depth {
            // A ring's rank holds the chunk it forwards while it sends the next.
            if !(2..=1024).contains(&d) {
                p.add(
                    format!("{at}.depth"),
                    format!("must be 2 to 1024 (a ring forwards one chunk while the next arrives), found {d}"),
                );
            }
        }
    }
}

impl JobsConfig {
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        let hosts = crate::topology::fabric_size(&config.topology.shape).hosts;
        // Jobs place whole nodes (`topology.gpus_per_node` endpoints each).
        let gpus = config.topology.gpus_per_node.max(1) as u64;
        let fabric_nodes = hosts / gpus;
        let nodes = match &self.allocation {
            Some(a) => {
                p.positive("workload.allocation.nodes", a.nodes as u64);
                if a.nodes as u64 > fabric_nodes {
                    let has = if gpus == 1 {
                        format!("{hosts} hosts")
                    } else {
                        format!("{fabric_nodes} nodes of {gpus} GPUs ({hosts} hosts)")
                    };
                    p.add("workload.allocation.nodes", format!("asks for {} nodes; the fabric has {has}", a.nodes));
                }
                a.nodes as u64
            }
            None => fabric_nodes,
        };
        if self.jobs.is_empty() || self.jobs.len() > MAX_JOBS {
            p.add("workload.jobs", format!("needs 1 to {MAX_JOBS} jobs, found {}", self.jobs.len()));
        }
        // Nodes given by list or slice, as ranges with their job: nothing here is as large
        // as the fabric, and overlaps are found by one sort, not by pairs.
        let mut taken: Vec<(std::ops::Range<u64>, usize)> = Vec::new();
        for (i, job) in self.jobs.iter().enumerate() {
            let at = format!("workload.jobs.{i}");
            if job.name.is_empty() || ["all", "default", "idle"].contains(&job.name.as_str()) {
                p.add(
                    format!("{at}.name"),
                    format!("`{}` is not a valid job name (reserved: all, default, idle)", job.name),
                );
            } else if job.name.chars().any(char::is_control) {
                p.add(format!("{at}.name"), format!("{:?} has a control character; use printable text", job.name));
            }
            if self.jobs[..i].iter().any(|other| other.name == job.name) {
                p.add(format!("{at}.name"), format!("job name `{}` is used twice", job.name));
            }
            p.positive(&format!("{at}.qps"), job.qps as u64);
            job.validate_engine(&at, p);
            if job.role == Role::Victim {
                p.positive(&format!("{at}.iterations"), job.iterations as u64);
                if job.warmup >= job.iterations {
                    p.add(
                        format!("{at}.warmup"),
                        format!("leaves no measured iteration: {} of {} iterations", job.warmup, job.iterations),
                    );
                }
                if job.burst.is_some() {
                    p.add(format!("{at}.burst"), "only an aggressor (`role = \"aggressor\"`) runs in bursts");
                }
            }
            if let Some(burst) = &job.burst {
                p.positive(&format!("{at}.burst.length"), burst.length.0);
            }
            let listed: Vec<std::ops::Range<u64>> = match &job.nodes {
                Nodes::List(list) => list.iter().map(|&n| n as u64..n as u64 + 1).collect(),
                Nodes::Slice { first, count } => {
                    std::iter::once(*first as u64..*first as u64 + *count as u64).collect()
                }
                Nodes::Named(_) => Vec::new(),
            };
            if let Some(range) = listed.iter().find(|r| r.end > nodes) {
                let node = range.start.max(nodes);
                p.add(format!("{at}.nodes"), format!("node {node} is beyond the {nodes} nodes of the allocation"));
            } else {
                taken.extend(listed.into_iter().filter(|r| !r.is_empty()).map(|r| (r, i)));
            }
            if job.nodes == Nodes::Named(NamedNodes::All) && self.jobs.len() > 1 {
                let others = self.jobs.iter().filter(|o| o.nodes == Nodes::Named(NamedNodes::All)).count();
                if others > 1 || self.jobs.iter().any(|o| !matches!(o.nodes, Nodes::Named(NamedNodes::All))) {
                    p.add(
                        format!("{at}.nodes"),
                        "`all` takes every node of the allocation: no other job can have nodes",
                    );
                }
            }
        }
        if let Some((node, i)) = first_overlap(taken) {
            p.add(format!("workload.jobs.{i}.nodes"), format!("node {node} is given to another job (or listed twice)"));
        }
        for (i, (job, job_nodes)) in self.jobs.iter().zip(self.counts(nodes)).enumerate() {
            if let Some(why) = job.collective.refuses(job_nodes.saturating_mul(gpus) as usize) {
                p.add(format!("workload.jobs.{i}.nodes"), why);
            }
        }
    }
}

impl JobsConfig {
    /// Each job's rank count on a fabric of `hosts` endpoints, `gpus` to a node: its
    /// nodes times their GPUs.
    fn rank_counts(&self, hosts: u64, gpus: u32) -> Vec<u64> {
        let fabric_nodes = hosts / gpus.max(1) as u64;
        let nodes = self.allocation.as_ref().map_or(fabric_nodes, |a| (a.nodes as u64).min(fabric_nodes));
        self.counts(nodes).into_iter().map(|n| n.saturating_mul(gpus as u64)).collect()
    }

    /// Each job's rank count in an allocation of `nodes` nodes, worked out without
    /// listing them (the config check runs before the memory check: a fabric of a
    /// billion hosts must not be materialised here). As `placement::positions` deals
    /// them, for a config without overlaps (which the check reports).
    fn counts(&self, nodes: u64) -> Vec<u64> {
        let mut counts: Vec<u64> = self
            .jobs
            .iter()
            .map(|job| match &job.nodes {
                Nodes::List(list) => list.iter().filter(|&&n| (n as u64) < nodes).count() as u64,
                Nodes::Slice { first, count } => (*count as u64).min(nodes.saturating_sub(*first as u64)),
                Nodes::Named(NamedNodes::All) => nodes,
                Nodes::Named(NamedNodes::Interleaved) => 0,
            })
            .collect();
        let listed: u64 = counts.iter().sum();
        let free = nodes.saturating_sub(listed);
        let dealt: Vec<usize> =
            (0..self.jobs.len()).filter(|&j| self.jobs[j].nodes == Nodes::Named(NamedNodes::Interleaved)).collect();
        for (k, &j) in dealt.iter().enumerate() {
            let share = dealt.len() as u64;
            counts[j] = free / share + u64::from((k as u64) < free % share);
        }
        counts
    }

    /// The most messages a rank posts at once: a linear AlltoAll's n-1, two for the
    /// bidirectional ring, one otherwise; times the queue pairs. On a fabric of `hosts`
    /// endpoints, `gpus` to a node.
    pub fn posts_at_once(&self, hosts: usize, gpus: u32) -> usize {
        let widest = |job: &JobConfig, n: usize| {
            if job.engine == Engine::Nccl {
                // Connections a rank sends on (PXN: its own peers and the relayed
                // ones), each with `depth` chunks in flight.
                let c = job.channels(gpus) as usize;
                let conns = match job.collective {
                    Collective::AllReduce => c,
                    Collective::AllReduceBidirectional => 2 * c,
                    Collective::AllReduceHalvingDoubling => 2 * c * (usize::BITS - n.leading_zeros()) as usize,
                    _ => c * 2 * n,
                };
                return conns.saturating_mul(job.depth() as usize);
            }
            match job.collective {
                Collective::AllToAll => n.saturating_sub(1),
                Collective::AllReduceBidirectional => 2,
                _ => 1,
            }
        };
        self.jobs
            .iter()
            .zip(self.rank_counts(hosts as u64, gpus))
            .map(|(job, n)| widest(job, n as usize) * job.qps as usize)
            .max()
            .unwrap_or(0)
    }

    /// The schedules, the per-step counts and the arrival rings of every job, on a
    /// fabric of `hosts` endpoints, `gpus` to a node.
    pub fn memory(&self, hosts: u64, gpus: u32) -> u64 {
        use crate::memory::{mul, sum};
        let parts = self.jobs.iter().zip(self.rank_counts(hosts, gpus)).map(|(job, n)| {
            if job.engine == Engine::Nccl {
                // A plan's operations (24 bytes and a flag each): every rank sends about
                // twice the vector (an AlltoAll twice its n blocks, with PXN's relays),
                // a chunk an operation, and a few per connection at least; its
                // connections' state per slot of `depth` and per part.
                let volume = match job.collective {
                    Collective::AllToAll | Collective::AllToAllPxn => mul(&[2, n, job.size.0]),
                    _ => mul(&[2, job.size.0]),
                };
                let c = job.channels(gpus) as u64;
                let ops = mul(&[n, sum(&[volume / job.chunk().max(1), mul(&[4, n, c])])]);
                let conns = mul(&[2, n, n, c]);
                return sum(&[
                    mul(&[ops, 25]),
                    mul(&[conns, sum(&[96, mul(&[job.depth() as u64, 4]), mul(&[job.qps as u64, 40])])]),
                ]);
            }
            let steps = match job.collective {
                Collective::AllToAll | Collective::Incast => 1,
                Collective::Broadcast | Collective::Barrier | Collective::AllReduceHalvingDoubling => 2 * 64,
                _ => mul(&[2, n]),
            } + 64;
            let sends = match job.collective {
                Collective::AllToAll => mul(&[n, n]),
                _ => mul(&[2, n, steps]),
            };
            // A step (24 bytes), its count and two ring slots (4 each); a send (16).
            sum(&[mul(&[n, steps, 36]), mul(&[sends, 16])])
        });
        parts.fold(0, |total, part| sum(&[total, part]))
    }
}

/// The lowest node that two of `ranges` (non-empty, each with its job) share, with the
/// later of their jobs, where the error is reported; None if no two overlap.
fn first_overlap(mut ranges: Vec<(std::ops::Range<u64>, usize)>) -> Option<(u64, usize)> {
    ranges.sort_by_key(|(r, job)| (r.start, *job));
    // The furthest end of the ranges seen so far, and whose it is.
    let mut reach: Option<(u64, usize)> = None;
    for (range, job) in ranges {
        match reach {
            Some((end, other)) if range.start < end => return Some((range.start, job.max(other))),
            Some((end, _)) if range.end <= end => {}
            _ => reach = Some((range.end, job)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_are_found_whatever_the_order_and_reported_at_the_later_job() {
        assert_eq!(first_overlap(vec![(0..3, 0), (3..5, 1), (5..6, 0)]), None);
        assert_eq!(first_overlap(vec![(4..5, 1), (0..10, 0), (20..21, 2)]), Some((4, 1)));
        // A long range reaches past the next one: the third still meets it.
        assert_eq!(first_overlap(vec![(0..100, 2), (10..11, 0), (50..51, 1)]), Some((10, 2)));
        assert_eq!(first_overlap(vec![(7..8, 0), (7..8, 0)]), Some((7, 0)), "listed twice");
    }

    #[test]
    fn rank_counts_are_those_the_placement_deals() {
        let job = |name: &str, nodes: Nodes| JobConfig { name: name.into(), nodes, ..JobConfig::template() };
        let config = JobsConfig {
            allocation: None,
            jobs: vec![
                job("a", Nodes::List(vec![3, 7, 100])),
                job("b", Nodes::Named(NamedNodes::Interleaved)),
                job("c", Nodes::Slice { first: 10, count: 4 }),
                job("d", Nodes::Named(NamedNodes::Interleaved)),
            ],
            timeline: 1,
            baseline: true,
            quiet: false,
        };
        for nodes in [12, 20, 21, 101] {
            let dealt: Vec<u64> =
                super::super::placement::positions(&config, nodes).iter().map(|p| p.len() as u64).collect();
            assert_eq!(config.counts(nodes as u64), dealt, "{nodes} nodes");
        }
    }
}
