//! The workload: whatever decides which messages the hosts post and when. The kernel
//! knows it only through the [`Workload`] trait, by way of [`AnyWorkload`] (a `match`, so
//! the built-in workload is dispatched statically).
//!
//! A workload acts in callbacks: [`Workload::start`] at time 0, [`Workload::timer`] when
//! one of its timers (`TimerKind::Workload(code)`) fires, and, if it asks for them
//! ([`Workload::wants_completions`]), [`Workload::message_done`] when the last packet of
//! a message reaches its destination. In each it may post messages ([`Env::post`]), set
//! timers ([`Env::set_timer`]) and draw from the traffic random stream ([`Env::rng`]).
//! Open-loop traffic ([`OpenLoop`](super::OpenLoop)) needs timers only; a closed loop
//! (a reply once a request arrived, a job's next step once its messages are done) reacts
//! to completions.

pub use crate::kernel::MessageDone;
use crate::kernel::{Event, Timer, TimerKind};
use crate::model::Ctx;
use crate::nic::Nics;
use crate::packet::Tag;
use rand_pcg::Pcg64Mcg;

use super::jobs::Jobs;
use super::{OpenLoop, WorkloadConfig};
use crate::config::Config;
use crate::error::Result;
use crate::observe::Finish;
use crate::report::{Report, Summary};
use crate::units::Rate;

/// What a workload may touch in a callback.
pub struct Env<'e, 'c> {
    pub ctx: &'e mut Ctx<'c>,
    pub nics: &'e mut Nics,
    /// The traffic random stream (destinations, sizes, queue pairs, gaps).
    pub rng: &'e mut Pcg64Mcg,
}

impl Env<'_, '_> {
    /// The current time (ps).
    #[inline]
    pub fn now(&self) -> u64 {
        self.ctx.now
    }

    /// Queues a message of `size` bytes from `host` to `dst` on queue pair `qp` at
    /// `host`'s NIC, in its source stream `stream` (0 unless the run has mixes: a mix's
    /// part k posts to stream k, which has its own bound in the source queue), and lets
    /// the NIC send if it can; `false` when the stream's source queue was full (the
    /// message is counted as refused and dropped).
    #[inline]
    pub fn post(&mut self, host: u32, dst: u32, size: u64, qp: u32, tag: Tag, stream: u8) -> bool {
        self.nics.post(self.ctx, host, dst, size, qp, tag, stream)
    }

    /// Announces a change at `at` that the statistics will hear of then (a trace event
    /// the workload reports at `at`, such as a hotspot moving): data reaching its host
    /// from `at` on is accounted at its arrival, after the change, rather than when its
    /// last link starts sending it. Until the next announcement; at most the end of the
    /// run. (A run that may stop early, or whose NICs take every data packet on the
    /// receive path, accounts every delivery at its arrival already.)
    pub fn set_boundary(&mut self, at: u64) {
        if self.ctx.stop.is_none() && !self.nics.receipts() {
            self.ctx.stats.settle_before = at.min(self.ctx.end);
        }
    }

    /// Ends the run now (a workload that [`Workload::ends_run`]): nothing at or after
    /// this instant happens, and the report measures up to it.
    pub fn end_run(&mut self) {
        let now = self.ctx.now;
        if let Some(stop) = self.ctx.stop.as_deref_mut() {
            stop.end(now);
            self.ctx.end = self.ctx.end.min(now);
        }
    }

    /// Calls back [`Workload::timer`] at `at` with this `owner`, `epoch` and `code`.
    #[inline]
    pub fn set_timer(&mut self, at: u64, owner: u32, epoch: u32, code: u8) {
        self.ctx.schedule(at, Event::Timer(Timer { owner, epoch, kind: TimerKind::Workload(code) }));
    }
}

/// A group of hosts as the report names it.
#[derive(Clone, Copy, Debug)]
pub struct GroupView<'a> {
    pub name: &'a str,
    pub hosts: &'a [u32],
}

/// The interval after which the report measures recovery (`summary.recovery`): from
/// `start` (a disturbance begins) to `end` (it ends; `start` again for a disturbance that
/// lasts to the end of the run), for the throughput of the groups marked `bystander`.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveryWindow {
    pub start: u64,
    pub end: u64,
    /// Per group (in the order of [`Workload::groups`]).
    pub bystander: Vec<bool>,
}

/// What the report needs of a workload with shared hotspots (the summary's
/// `receive_rate`, `total_throughput` and `tmax`).
#[derive(Clone, Debug, PartialEq)]
pub struct HotspotTraffic {
    /// Per host, as a fraction of its link: what it offers to hosts other than the
    /// hotspots (its offered load times the share of its traffic not sent to them), at
    /// the start of the run.
    pub non_hotspot_offered: Vec<f64>,
}

/// What decides the traffic of a run. See the module documentation.
pub trait Workload {
    /// At time 0: schedules the first timers, posts the first messages, sets the hosts'
    /// injection caps ([`Nics::set_cap`]).
    fn start(&mut self, env: &mut Env);

    /// A timer set with [`Env::set_timer`] fired.
    fn timer(&mut self, env: &mut Env, timer: Timer);

    /// Whether the run reports message completions to [`Workload::message_done`]. Asked
    /// once, when the simulation is built; without them the delivery path does not
    /// record completions at all.
    fn wants_completions(&self) -> bool {
        false
    }

    /// A message completed (called after the event that delivered its last packet, in
    /// the order of delivery). A message that lost a packet (a lossy fabric) never
    /// completes.
    fn message_done(&mut self, env: &mut Env, done: MessageDone) {
        let _ = (env, done);
    }

    /// Whether the workload may end the run before its duration ([`Env::end_run`]): every
    /// delivery is then an event at its time, as with `simulation.stop_after`.
    fn ends_run(&self) -> bool {
        false
    }

    /// The groups the report shows (at least one), with their hosts.
    fn groups(&self) -> Vec<GroupView<'_>>;

    /// The group (index into [`Workload::groups`]) whose counters each host's traffic
    /// adds to, per host.
    fn host_groups(&self) -> &[u16];

    /// The interval after which the report measures recovery, if the workload has a
    /// disturbance.
    fn recovery(&self) -> Option<RecoveryWindow> {
        None
    }

    /// The shared hotspots' traffic, if the workload has shared hotspots: it then
    /// reports their changes as `TraceEvent::Hotspot` (at time 0 for the first set).
    fn hotspots(&self) -> Option<HotspotTraffic> {
        None
    }

    /// The hosts the workload aims congestion at (incast destinations, hotspots), against
    /// which isolation's false positives are counted.
    fn declared_hotspots(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Adds the workload's own sections to the summary when the run ends (a job's
    /// slowdown, a collective's bus bandwidth), as collectors do
    /// (`summary.sections.set(Section::new(name, &value).note(line))`).
    fn summarise(&self, summary: &mut Summary, finish: &Finish) {
        let _ = (summary, finish);
    }

    /// Adds the workload's own tables to the report when the run ends (a job's steps, a
    /// collective's iterations), by name, as collectors do.
    fn tables(&self, report: &mut Report, finish: &Finish) {
        let _ = (report, finish);
    }
}

/// Every workload a simulation can run: the built-in ones by value (static dispatch), and
/// any other as a boxed [`Workload`] (`Simulation::with_workload`).
pub enum AnyWorkload {
    /// Groups, patterns, injection processes and phases from `[traffic]`.
    OpenLoop(OpenLoop),
    /// Jobs running collectives (`[workload] type = "jobs"`).
    Jobs(Jobs),
    /// A workload made outside this crate.
    Custom(Box<dyn Workload + Send>),
}

impl AnyWorkload {
    /// Jobs report their victims' perf ratios against `baseline`; other workloads have
    /// no victims.
    pub fn measure_against(&mut self, baseline: super::jobs::Baseline) {
        if let AnyWorkload::Jobs(jobs) = self {
            jobs.measure_against(baseline);
        }
    }

    /// The workload `config.workload` chooses, for a fabric of `hosts` hosts whose links
    /// run at `host_rate`, drawing from the traffic stream `rng`.
    pub fn build(config: &Config, hosts: usize, host_rate: Rate, rng: &mut Pcg64Mcg) -> Result<AnyWorkload> {
        Ok(match &config.workload {
            WorkloadConfig::OpenLoop {} => AnyWorkload::OpenLoop(OpenLoop::build(config, hosts, host_rate, rng)?),
            WorkloadConfig::Jobs(jobs) => {
                let nodes = crate::topology::Nodes::new(hosts, config.topology.gpus_per_node);
                let nic = super::jobs::ideal::NicRate::new(host_rate.0 as f64, config.nic.mtu.0, config.nic.header.0);
                AnyWorkload::Jobs(Jobs::build(jobs, nodes, nic, rng))
            }
        })
    }
}

macro_rules! dispatch {
    ($self:ident, $w:ident => $call:expr) => {
        match $self {
            AnyWorkload::OpenLoop($w) => $call,
            AnyWorkload::Jobs($w) => $call,
            AnyWorkload::Custom($w) => $call,
        }
    };
}

impl Workload for AnyWorkload {
    fn start(&mut self, env: &mut Env) {
        dispatch!(self, w => w.start(env))
    }

    #[inline]
    fn timer(&mut self, env: &mut Env, timer: Timer) {
        dispatch!(self, w => w.timer(env, timer))
    }

    fn wants_completions(&self) -> bool {
        dispatch!(self, w => w.wants_completions())
    }

    #[inline]
    fn message_done(&mut self, env: &mut Env, done: MessageDone) {
        dispatch!(self, w => w.message_done(env, done))
    }

    fn ends_run(&self) -> bool {
        dispatch!(self, w => w.ends_run())
    }

    fn groups(&self) -> Vec<GroupView<'_>> {
        dispatch!(self, w => w.groups())
    }

    fn host_groups(&self) -> &[u16] {
        dispatch!(self, w => w.host_groups())
    }

    fn recovery(&self) -> Option<RecoveryWindow> {
        dispatch!(self, w => w.recovery())
    }

    fn hotspots(&self) -> Option<HotspotTraffic> {
        dispatch!(self, w => w.hotspots())
    }

    fn declared_hotspots(&self) -> Vec<u32> {
        dispatch!(self, w => w.declared_hotspots())
    }

    fn summarise(&self, summary: &mut Summary, finish: &Finish) {
        dispatch!(self, w => w.summarise(summary, finish))
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        dispatch!(self, w => w.tables(report, finish))
    }
}
