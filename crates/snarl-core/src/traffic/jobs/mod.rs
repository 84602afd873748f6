//! Jobs on a shared fabric: each runs a collective ([`collective`]) on its nodes, rank by
//! rank, step by step, as point-to-point messages. A node holds `topology.gpus_per_node`
//! endpoints (GPUs), each a rank: ranks are numbered node-major, as NCCL numbers them
//! (the job's k-th node holds ranks k·G to k·G + G − 1, its GPUs in order), so a ring's
//! neighbours share a node but at its ends, and their messages take the intra-node link
//! (`Nics::post` decides; the workload does not know). A victim runs its iterations, each
//! after a barrier, and the run ends when every victim is done; an aggressor repeats its
//! collective until then, steadily or in bursts. What each job measured (iteration
//! times, bus bandwidth) is its summary section and tables ([`results`]).
//!
//! Progress is per rank, as in MPI: a rank moves to its next step once the messages it
//! sent in this step are complete and those it expects have arrived. Messages carry
//! their job and the sender's step count (`Tag`); a rank may receive a message of a step
//! it has not reached (its peer is ahead), which waits, counted, in a small ring indexed
//! by step. A send completes when its message is delivered and its receiver has reached
//! its step (a rendezvous: MPI's large messages complete once the receive is posted), so
//! no sender runs ahead of a receiver by more than a step, whatever the collective (an
//! Incast's senders receive nothing), and the ring holds two iterations.

mod baseline;
pub mod collective;
mod config;
pub mod ideal;
mod pipeline;
mod placement;
pub mod plan;
mod results;

pub use baseline::Baseline;
pub use collective::{Collective, PeerOrder, Schedule};
pub use config::{
    Allocation, AllocationPolicy, Burst, Engine, Gap, JobConfig, JobsConfig, NamedNodes, Nodes, Role, MAX_JOBS,
};
pub use results::{JobSummary, NcclSummary};

use super::workload::{Env, GroupView, MessageDone, Workload};
use crate::kernel::Timer;
use crate::observe::Finish;
use crate::packet::{Tag, NIL};
use crate::report::{Report, Summary};
use crate::topology::Nodes as FabricNodes;
use ideal::NicRate;
use pipeline::Pipeline;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use results::{JobRecord, StepRecord};

/// Timer codes: a job starts, an aggressor's pause ends (owner: the job); a rank's
/// compute gap ends (owner: the rank).
const START: u8 = 0;
const BURST: u8 = 1;
const STEP: u8 = 2;
/// A rank of an NCCL-engine job is past its collective's fixed overhead (owner: the rank).
const RELEASE: u8 = 3;

/// The workload of `[workload] type = "jobs"`.
pub struct Jobs {
    jobs: Vec<Job>,
    ranks: Vec<Rank>,
    /// Per host: its rank (index into `ranks`), or NIL.
    rank_of: Vec<u32>,
    groups: Vec<(String, Vec<u32>)>,
    host_group: Vec<u16>,
    victims_left: usize,
    /// Every victim is done: aggressors start nothing new.
    victims_done: bool,
    /// The aggressors stay silent (the baseline run).
    quiet: bool,
    /// The victims' times alone, if known: their perf ratios are reported.
    baseline: Option<Baseline>,
}

struct Job {
    config: JobConfig,
    /// The barrier before each iteration (victims), then the collective.
    barrier: Option<Schedule>,
    schedule: Schedule,
    /// Messages each rank expects per step (its peers' sends split over `qps`), rank by
    /// rank, barrier steps first.
    expected: Vec<u32>,
    /// Steps per iteration: the barrier's, then the collective's.
    len: usize,
    first_rank: usize,
    ranks: usize,
    /// The NCCL engine's state, for jobs that run on it.
    pipeline: Option<Pipeline>,
    /// Ranks done with their last iteration (victims), or waiting for the burst's
    /// iteration to end (bursty aggressors).
    parked: usize,
    burst_began: u64,
    record: JobRecord,
}

struct Rank {
    job: u16,
    index: u32,
    host: u32,
    /// Iterations begun, and the step within the current one (barrier steps first).
    iteration: u32,
    step: u32,
    /// Steps completed since the job began; its low 16 bits tag the rank's messages.
    seq: u64,
    sends_left: u32,
    /// Waiting out a compute gap before the step's sends.
    waiting: bool,
    /// In an iteration (not done, not parked between bursts).
    active: bool,
    /// When the current iteration's collective began (after its barrier), and the step.
    began: u64,
    step_began: u64,
    /// Messages arrived for the steps from `seq` on, by step modulo the ring's length.
    arrived: Box<[u32]>,
    /// Senders of messages that arrived before this rank reached their step (step,
    /// sender): their sends complete when it does.
    early: Vec<(u64, u32)>,
}

impl Jobs {
    /// The jobs of `config` on a fabric of `nodes` whose NICs carry `nic`; random
    /// placements draw from `rng`.
    pub fn build(config: &JobsConfig, nodes: FabricNodes, nic: NicRate, rng: &mut Pcg64Mcg) -> Jobs {
        let hosts = nodes.count() * nodes.gpus_per_node() as usize;
        let allocation = placement::allocate(config.allocation.as_ref(), nodes.count(), rng);
        let positions = placement::positions(config, allocation.len());
        let mut jobs = Vec::with_capacity(config.jobs.len());
        let mut ranks = Vec::new();
        let mut rank_of = vec![NIL; hosts];
        let mut host_group = vec![config.jobs.len() as u16; hosts];
        let mut groups = Vec::new();
        for (j, (job, mine)) in config.jobs.iter().zip(&positions).enumerate() {
            // Node-major: every GPU of the job's first node, then the next node's.
            let host_list: Vec<u32> = mine.iter().flat_map(|&p| nodes.endpoints_of(allocation[p as usize])).collect();
            let n = host_list.len();
            let barrier = job.barrier().then(|| Schedule::new(Collective::Barrier, n, 0, PeerOrder::Linear));
            let schedule = Schedule::new(job.collective, n, job.size.0, job.order);
            let len = barrier.as_ref().map_or(0, |b| b.len) + schedule.len;
            let expected = expected_messages(barrier.as_ref(), &schedule, job.qps);
            let first_rank = ranks.len();
            for (index, &host) in host_list.iter().enumerate() {
                rank_of[host as usize] = ranks.len() as u32;
                host_group[host as usize] = j as u16;
                ranks.push(Rank {
                    job: j as u16,
                    index: index as u32,
                    host,
                    iteration: 0,
                    step: 0,
                    seq: 0,
                    sends_left: 0,
                    waiting: false,
                    active: false,
                    began: 0,
                    step_began: 0,
                    arrived: vec![0; 2 * len + 2].into_boxed_slice(),
                    early: Vec::new(),
                });
            }
            let gpus = nodes.gpus_per_node() as usize;
            let ideal =
                ideal::nics_worth(job.collective, n / gpus, gpus).map(|k| (k * nic.goodput_gbps, k * nic.raw_gbps));
            let record = JobRecord::new(job, n, config.timeline, ideal);
            let pipeline = (job.engine == Engine::Nccl).then(|| {
                let shape = plan::Shape {
                    ranks: n,
                    gpus,
                    size: job.size.0,
                    chunk: job.chunk(),
                    channels: job.channels(gpus as u32),
                    qps: job.qps,
                };
                Pipeline::new(job.collective, shape, job.depth(), host_list.clone(), j as u16 + 1, job.warmup, rng)
            });
            groups.push((job.name.clone(), host_list));
            jobs.push(Job {
                config: job.clone(),
                barrier,
                schedule,
                expected,
                len,
                first_rank,
                ranks: n,
                pipeline,
                parked: 0,
                burst_began: 0,
                record,
            });
        }
        let idle: Vec<u32> = (0..hosts as u32).filter(|&h| rank_of[h as usize] == NIL).collect();
        if !idle.is_empty() {
            groups.push(("idle".to_string(), idle));
        }
        let victims_left = jobs.iter().filter(|j| j.config.role == Role::Victim).count();
        Jobs {
            jobs,
            ranks,
            rank_of,
            groups,
            host_group,
            victims_left,
            victims_done: false,
            quiet: config.quiet,
            baseline: None,
        }
    }

    /// Reports each victim's perf ratio against `baseline`.
    pub fn measure_against(&mut self, baseline: Baseline) {
        self.baseline = Some(baseline);
    }

    /// Rank `r` begins an iteration now.
    fn begin_iteration(&mut self, env: &mut Env, r: usize) {
        let now = env.now();
        let rank = &mut self.ranks[r];
        rank.step = 0;
        rank.active = true;
        let job = &self.jobs[rank.job as usize];
        if job.pipeline.is_some() {
            rank.began = now;
            let overhead = job.config.overhead();
            if overhead > 0 {
                env.set_timer(now + overhead, r as u32, 0, RELEASE);
            } else {
                self.release(env, r);
            }
            return;
        }
        if self.jobs[rank.job as usize].barrier.is_none() {
            rank.began = now;
        }
        self.enter_step(env, r);
        self.advance(env, r);
    }

    /// Rank `r` enters its current step: after its compute gap (collective steps), or at
    /// once, it posts the step's sends.
    fn enter_step(&mut self, env: &mut Env, r: usize) {
        let rank = &self.ranks[r];
        let job = &self.jobs[rank.job as usize];
        let in_barrier = job.barrier.as_ref().is_some_and(|b| (rank.step as usize) < b.len);
        if let (Some(gap), false) = (&job.config.gap, in_barrier) {
            let jitter = if gap.jitter.0 > 0 { env.rng.random_range(0..=gap.jitter.0) } else { 0 };
            env.set_timer(env.now() + gap.time.0 + jitter, r as u32, 0, STEP);
            self.ranks[r].waiting = true;
            return;
        }
        self.post_step(env, r);
    }

    /// Posts rank `r`'s sends of its current step, each split over the job's queue pairs.
    fn post_step(&mut self, env: &mut Env, r: usize) {
        let now = env.now();
        let rank = &self.ranks[r];
        let job = &self.jobs[rank.job as usize];
        let (schedule, k) = job.phase(rank.step as usize);
        let tag = Tag { job: rank.job + 1, step: rank.seq as u16 };
        let mut posted = 0;
        let qps = job.config.qps;
        for send in schedule.sends(schedule.step(rank.index as usize, k)) {
            let dst = self.ranks[job.first_rank + send.peer as usize].host;
            for (qp, bytes) in parts(send.bytes, qps) {
                let accepted = env.post(rank.host, dst, bytes, qp, tag, 0);
                assert!(accepted, "the source queue was sized for every job's widest step");
                posted += 1;
            }
        }
        let rank = &mut self.ranks[r];
        rank.sends_left = posted;
        rank.step_began = now;
    }

    /// Moves rank `r` through every step whose messages are all sent and received.
    fn advance(&mut self, env: &mut Env, r: usize) {
        loop {
            let now = env.now();
            let rank = &mut self.ranks[r];
            if rank.waiting || !rank.active || rank.sends_left > 0 {
                return;
            }
            let j = rank.job as usize;
            let job = &mut self.jobs[j];
            let slot = (rank.seq % rank.arrived.len() as u64) as usize;
            let need = job.expected[rank.index as usize * job.len + rank.step as usize];
            if rank.arrived[slot] < need {
                return;
            }
            rank.arrived[slot] -= need;
            job.record.step_done(StepRecord {
                iteration: rank.iteration,
                rank: rank.index,
                step: rank.step,
                start: rank.step_began,
                end: now,
            });
            rank.step += 1;
            rank.seq += 1;
            self.release_early_senders(env, r);
            let rank = &mut self.ranks[r];
            let job = &mut self.jobs[j];
            let barrier = job.barrier.as_ref().map_or(0, |b| b.len);
            if barrier > 0 && rank.step as usize == barrier {
                rank.began = now;
            }
            if rank.step as usize == job.len {
                let took = now - rank.began;
                job.record.iteration_done(rank.iteration, took);
                rank.iteration += 1;
                if !self.next_iteration(env, r) {
                    return;
                }
                let rank = &mut self.ranks[r];
                rank.step = 0;
                if self.jobs[j].barrier.is_none() {
                    rank.began = now;
                }
            }
            self.enter_step(env, r);
        }
    }

    /// NCCL engine: rank `r` starts sending its collective's chunks.
    fn release(&mut self, env: &mut Env, r: usize) {
        let (j, index) = (self.ranks[r].job as usize, self.ranks[r].index);
        let mut done = Vec::new();
        if let Some(pipeline) = self.jobs[j].pipeline.as_mut() {
            pipeline.release(env, index, &mut done);
        }
        self.collectives_done(env, j, done);
    }

    /// NCCL engine: ranks (`done`, the job's indices) of job `j` finished a collective.
    fn collectives_done(&mut self, env: &mut Env, j: usize, done: Vec<u32>) {
        for index in done {
            let r = self.jobs[j].first_rank + index as usize;
            let rank = &mut self.ranks[r];
            let took = env.now() - rank.began;
            self.jobs[j].record.iteration_done(rank.iteration, took);
            rank.iteration += 1;
            if self.next_iteration(env, r) {
                self.begin_iteration(env, r);
            }
        }
    }

    /// Rank `r` finished an iteration: whether it goes on at once (its state is then
    /// reset by the caller), or stops, parks until the burst's iteration ends, or ends
    /// the run.
    fn next_iteration(&mut self, env: &mut Env, r: usize) -> bool {
        let rank = &mut self.ranks[r];
        let j = rank.job as usize;
        let job = &mut self.jobs[j];
        match job.config.role {
            Role::Victim => {
                if rank.iteration < job.config.iterations {
                    return true;
                }
                rank.active = false;
                job.parked += 1;
                if job.parked == job.ranks {
                    self.victims_left -= 1;
                    if self.victims_left == 0 {
                        self.victims_done = true;
                        env.end_run();
                    }
                }
                false
            }
            Role::Aggressor if self.victims_done => {
                rank.active = false;
                false
            }
            Role::Aggressor => {
                let Some(burst) = job.config.burst.clone() else { return true };
                rank.active = false;
                job.parked += 1;
                if job.parked == job.ranks {
                    job.parked = 0;
                    if env.now() - job.burst_began < burst.length.0 {
                        self.start_iteration_everywhere(env, j);
                    } else {
                        env.set_timer(env.now() + burst.pause.0, j as u32, 0, BURST);
                    }
                }
                false
            }
        }
    }

    /// Rank `r` reached a new step: the sends that reached it early for this step
    /// complete now.
    fn release_early_senders(&mut self, env: &mut Env, r: usize) {
        let seq = self.ranks[r].seq;
        if !self.ranks[r].early.iter().any(|&(s, _)| s == seq) {
            return;
        }
        let mut released = Vec::new();
        self.ranks[r].early.retain(|&(s, sender)| {
            let now = s == seq;
            if now {
                released.push(sender as usize);
            }
            !now
        });
        for sender in released {
            self.ranks[sender].sends_left -= 1;
            self.advance(env, sender);
        }
    }

    /// Every rank of job `j` begins an iteration now.
    fn start_iteration_everywhere(&mut self, env: &mut Env, j: usize) {
        let (first, n) = (self.jobs[j].first_rank, self.jobs[j].ranks);
        for r in first..first + n {
            self.begin_iteration(env, r);
        }
    }

    /// The job whose messages `tag` labels, if it is one of ours.
    fn rank_pair(&self, done: &MessageDone) -> Option<(usize, usize)> {
        let (src, dst) = (self.rank_of[done.src as usize], self.rank_of[done.dst as usize]);
        (done.tag.job > 0 && src != NIL && dst != NIL).then_some((src as usize, dst as usize))
    }
}

impl Job {
    /// The schedule and its step for step `k` of an iteration (barrier steps first).
    fn phase(&self, k: usize) -> (&Schedule, usize) {
        match &self.barrier {
            Some(b) if k < b.len => (b, k),
            Some(b) => (&self.schedule, k - b.len),
            None => (&self.schedule, k),
        }
    }
}

/// A message of `bytes` split over `qps` queue pairs: (qp, bytes) per part, at least one
/// part of at least one byte (an empty block still travels as its envelope).
fn parts(bytes: u64, qps: u32) -> impl Iterator<Item = (u32, u64)> {
    let count = (qps as u64).min(bytes).max(1);
    (0..count).map(move |k| (k as u32, (bytes / count + u64::from(k < bytes % count)).max(1)))
}

/// Messages each rank receives per step, rank by rank, barrier steps first.
fn expected_messages(barrier: Option<&Schedule>, schedule: &Schedule, qps: u32) -> Vec<u32> {
    let n = schedule.ranks;
    let b = barrier.map_or(0, |b| b.len);
    let len = b + schedule.len;
    let mut expected = vec![0u32; n * len];
    for (offset, plan, split) in [(0, barrier, 1), (b, Some(schedule), qps)] {
        let Some(plan) = plan else { continue };
        for r in 0..n {
            for k in 0..plan.len {
                for send in plan.sends(plan.step(r, k)) {
                    expected[send.peer as usize * len + offset + k] += parts(send.bytes, split).count() as u32;
                }
            }
        }
    }
    expected
}

impl Workload for Jobs {
    fn start(&mut self, env: &mut Env) {
        for (j, job) in self.jobs.iter().enumerate() {
            if !(self.quiet && job.config.role == Role::Aggressor) {
                env.set_timer(job.config.start.0, j as u32, 0, START);
            }
        }
    }

    fn timer(&mut self, env: &mut Env, timer: Timer) {
        let crate::kernel::TimerKind::Workload(code) = timer.kind else { return };
        match code {
            START | BURST => {
                let j = timer.owner as usize;
                if self.victims_done && self.jobs[j].config.role == Role::Aggressor {
                    return;
                }
                self.jobs[j].burst_began = env.now();
                self.start_iteration_everywhere(env, j);
            }
            RELEASE => self.release(env, timer.owner as usize),
            _ => {
                let r = timer.owner as usize;
                self.ranks[r].waiting = false;
                self.post_step(env, r);
                self.advance(env, r);
            }
        }
    }

    fn wants_completions(&self) -> bool {
        true
    }

    fn ends_run(&self) -> bool {
        self.victims_left > 0
    }

    fn message_done(&mut self, env: &mut Env, done: MessageDone) {
        let Some((src, dst)) = self.rank_pair(&done) else { return };
        let j = self.ranks[src].job as usize;
        if let Some(pipeline) = self.jobs[j].pipeline.as_mut() {
            let mut finished = Vec::new();
            let (s, d) = (self.ranks[src].index, self.ranks[dst].index);
            pipeline.delivered(env, s, d, done.qp, done.tag.step, &mut finished);
            self.collectives_done(env, j, finished);
            return;
        }
        debug_assert_eq!(self.ranks[src].seq as u16, done.tag.step, "a sender waits for its step's messages");
        let receiver = &mut self.ranks[dst];
        // The sender is at the receiver's step or one ahead (its sends of a step complete
        // only once the receiver has reached it).
        let ahead = done.tag.step.wrapping_sub(receiver.seq as u16) as usize;
        let ring = receiver.arrived.len();
        assert!(ahead < ring, "a rank ran {ahead} steps ahead of a peer it sends to");
        receiver.arrived[(receiver.seq as usize + ahead) % ring] += 1;
        if ahead == 0 {
            self.ranks[src].sends_left -= 1;
            self.advance(env, src);
        } else {
            receiver.early.push((receiver.seq + ahead as u64, src as u32));
        }
        self.advance(env, dst);
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        self.groups.iter().map(|(name, hosts)| GroupView { name, hosts }).collect()
    }

    fn host_groups(&self) -> &[u16] {
        &self.host_group
    }

    fn summarise(&self, summary: &mut Summary, finish: &Finish) {
        let fcts = self.jobs.iter().map(|j| j.pipeline.as_ref().map(|p| p.fcts.as_slice()));
        results::summarise(self.jobs.iter().map(|j| &j.record).zip(fcts), self.baseline.as_ref(), summary, finish);
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        results::tables(self.jobs.iter().map(|j| &j.record), report, finish);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_splits_over_queue_pairs_and_never_vanishes() {
        assert_eq!(parts(10, 3).collect::<Vec<_>>(), vec![(0, 4), (1, 3), (2, 3)]);
        assert_eq!(parts(2, 4).collect::<Vec<_>>(), vec![(0, 1), (1, 1)]);
        assert_eq!(parts(0, 4).collect::<Vec<_>>(), vec![(0, 1)]);
    }

    /// With 4 GPUs per node, a job's ranks are its nodes' GPUs, node-major, and every
    /// allocation policy takes whole nodes.
    #[test]
    fn ranks_are_the_gpus_of_whole_nodes_numbered_node_major() {
        use rand::SeedableRng;
        let job = |name: &str, nodes: Nodes| JobConfig { name: name.into(), nodes, ..JobConfig::template() };
        let fabric = FabricNodes::new(32, 4);
        for policy in [AllocationPolicy::Contiguous, AllocationPolicy::Scatter, AllocationPolicy::Random] {
            let config = JobsConfig {
                allocation: Some(Allocation { nodes: 4, policy }),
                jobs: vec![job("a", Nodes::List(vec![2, 0])), job("b", Nodes::Slice { first: 1, count: 1 })],
                timeline: 1,
                baseline: true,
                quiet: false,
            };
            let jobs = Jobs::build(&config, fabric, NicRate::default(), &mut Pcg64Mcg::seed_from_u64(7));
            let a: Vec<&Rank> = jobs.ranks.iter().filter(|r| r.job == 0).collect();
            assert_eq!(a.len(), 8, "{policy:?}: two nodes of four GPUs");
            for (k, rank) in a.iter().enumerate() {
                assert_eq!(rank.index as usize, k);
                // Rank k is GPU k % 4 of the job's node k / 4, in the job's node order.
                assert_eq!(fabric.local_index(rank.host) as usize, k % 4, "{policy:?}");
                assert_eq!(fabric.node_of(rank.host), fabric.node_of(a[k / 4 * 4].host), "{policy:?}");
            }
            let nodes_of = |j: u16| {
                let mut n: Vec<u32> =
                    jobs.ranks.iter().filter(|r| r.job == j).map(|r| fabric.node_of(r.host)).collect();
                n.dedup();
                n
            };
            let (a_nodes, b_nodes) = (nodes_of(0), nodes_of(1));
            assert_eq!((a_nodes.len(), b_nodes.len()), (2, 1), "{policy:?}");
            assert!(a_nodes.iter().all(|n| !b_nodes.contains(n)), "{policy:?}: a node belongs to one job");
            // The idle group holds the other nodes' GPUs, whole.
            let idle = jobs.groups.iter().find(|(name, _)| name == "idle").map(|(_, h)| h.len());
            assert_eq!(idle, Some(32 - 12), "{policy:?}");
            if policy == AllocationPolicy::Contiguous {
                assert_eq!((&a_nodes, &b_nodes), (&vec![2, 0], &vec![1]), "positions in the allocation, in job order");
            }
            if policy == AllocationPolicy::Scatter {
                // Nodes i x 8 / 4 of the fabric's 8: 0, 2, 4, 6.
                assert_eq!((&a_nodes, &b_nodes), (&vec![4, 0], &vec![2]));
            }
        }
    }

    #[test]
    fn expected_counts_follow_the_split_of_each_send() {
        let ring = Schedule::new(Collective::AllGather, 4, 4000, PeerOrder::Linear);
        let expected = expected_messages(None, &ring, 2);
        assert!(expected.iter().all(|&e| e == 2), "{expected:?}");
        let barrier = Schedule::new(Collective::Barrier, 4, 0, PeerOrder::Linear);
        let expected = expected_messages(Some(&barrier), &ring, 1);
        assert_eq!(expected.len(), 4 * (2 + 3));
        assert!(expected.iter().all(|&e| e == 1));
    }
}
