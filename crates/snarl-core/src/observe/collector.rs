//! Collectors: what turns trace events into results. Each sees every event of the run,
//! keeps what it cares for, and at the end adds its part to the summary and its tables
//! to the report, by name: a collector added here appears in Python, in the Parquet
//! files and in the HTML report without any change there.

use super::{
    FabricSample, FabricSeries, GroupInfo, IbccSeries, QueueProbes, QueueSeries, RateLog, TraceEvent, TreeTracker,
};
use crate::cc::CongestionTerms;
use crate::config::Config;
use crate::error::Result;
use crate::flow_control::PauseState;
use crate::isolation::IsolationSeries;
use crate::report::{Report, Summary};
use crate::topology::AnyTopology;

/// What a collector may read when the run ends.
pub struct Finish<'a> {
    /// The traffic groups, in order (names, hosts, capacities).
    pub groups: &'a [GroupInfo],
    /// End of the run (ps).
    pub end: u64,
    /// Picoseconds per reported time unit.
    pub ps_per_unit: f64,
    /// The reported time unit ("ns" or "cycles").
    pub time_unit: &'a str,
    /// The pause states of the switch outputs and of the NICs, and the priorities per
    /// link (the queues beyond them are other classes, e.g. congested-flow queues).
    pub pause_states: &'a [&'a PauseState],
    pub vcs: usize,
    /// The switches, read-only.
    pub fabric: &'a dyn FabricView,
}

/// What the report may read of the switches at the end of a run.
pub trait FabricView {
    /// "switch S port P" for a global port id (an index of the switches' pause state).
    fn port_name(&self, global_port: usize) -> String;
    /// Highest ingress occupancy any port reached, and what a port's ingress queues hold
    /// before borrowing from the pool (shared-buffer switches; 0 otherwise).
    fn max_ingress(&self) -> u64;
    fn ingress_share(&self) -> u64;
}

/// A fabric of no ports, for collectors used without a run (their unit tests).
pub struct NoFabric;

impl FabricView for NoFabric {
    fn port_name(&self, global_port: usize) -> String {
        format!("port {global_port}")
    }

    fn max_ingress(&self) -> u64 {
        0
    }

    fn ingress_share(&self) -> u64 {
        0
    }
}

/// What a built-in collector reads to decide whether a run gets it, and to build itself
/// (`for_run` in its own file).
pub struct Setup<'a> {
    pub config: &'a Config,
    pub topology: &'a AnyTopology,
    /// Queues per switch port (the VCs, and any a mechanism adds beyond them).
    pub queues_per_port: usize,
    /// Width of the time series' windows, end of the run and start of the measurement (ps).
    pub window: u64,
    pub end: u64,
    pub measure_from: u64,
    /// The names of the congestion-control counters, in runs that report them (ECN or
    /// FECN marking, or a congestion control that acts).
    pub congestion_counters: Option<CongestionTerms>,
    /// The traffic group of each host (an index into `group_names`).
    pub host_groups: &'a [u16],
    pub group_names: &'a [String],
}

/// The built-in optional collectors `setup`'s run gets: each decides for itself from the
/// config (the mechanisms the run has, and what the user asked for). Queue probes, which
/// the fabric must know of, are added where the fabric is built.
pub fn for_run(setup: &Setup) -> Result<Vec<AnyCollector>> {
    let mut found = Vec::new();
    if let Some(c) = FabricSeries::for_run(setup)? {
        found.push(AnyCollector::Fabric(c));
    }
    if let Some(c) = RateLog::for_run(setup) {
        found.push(AnyCollector::Rates(c));
    }
    if let Some(c) = IbccSeries::for_run(setup)? {
        found.push(AnyCollector::Ibcc(c));
    }
    if let Some(c) = IsolationSeries::for_run(setup)? {
        found.push(AnyCollector::Isolation(c));
    }
    if let Some(c) = TreeTracker::for_run(setup)? {
        found.push(AnyCollector::Trees(Box::new(c)));
    }
    Ok(found)
}

/// Implemented by the built-in collectors, and by any a user adds to a run
/// (`Simulation::add_collector`, as `AnyCollector::Custom`).
pub trait Collector {
    /// Sees one event, at `now`; events it does not care for it ignores.
    fn on(&mut self, now: u64, event: &TraceEvent);

    /// Adds what it measured to the summary: sections (`Summary::sections`, or
    /// `Summary::set_section`) named by the collector.
    fn summarise(&mut self, _summary: &mut Summary, _finish: &Finish) {}

    /// Adds its tables to the report.
    fn tables(&self, _report: &mut Report, _finish: &Finish) {}

    /// A collector that samples the fabric: when it wants its next sample (ps), if it
    /// does. Samples are taken between events, where the watchdog checks, at the first
    /// such point at or after this time.
    fn next_sample(&self) -> Option<u64> {
        None
    }

    /// Reads the fabric at `now` (its `next_sample` has come): every non-empty switch
    /// queue, what it holds and what its head waits for, and the blocked hosts.
    fn sample(&mut self, _now: u64, _fabric: &dyn FabricSample) {}

    /// Whether it hears the trace events. One that only samples says no and stays out of
    /// the per-event loop, so a run whose only optional collectors sample pays nothing
    /// per event.
    fn hears_events(&self) -> bool {
        true
    }
}

/// The optional collectors, statically dispatched. To add one: a file implementing
/// [`Collector`], an arm here (and in the three matches below), and where the kernel
/// decides whether a run gets it.
pub enum AnyCollector {
    /// Flow- and congestion-control events per window: the `fabric` table.
    Fabric(FabricSeries),
    /// Every rate change of every flow: the `rates` table.
    Rates(RateLog),
    /// Time-weighted occupancy of chosen queues: the summary's `queues`.
    Queues(QueueProbes),
    /// The same queues window by window: the `queues` table.
    QueueSeries(QueueSeries),
    /// InfiniBand congestion control: the summary's `ibcc` and the `ibcc` table.
    Ibcc(IbccSeries),
    /// Congestion isolation: the summary's `isolation` and the `isolation` table.
    Isolation(IsolationSeries),
    /// Congestion trees, sampled: the summary's `trees`, the `trees`, `tree_ports` and
    /// `topology` tables.
    Trees(Box<TreeTracker>),
    /// A collector from outside the crate (`Simulation::add_collector`), dispatched
    /// dynamically.
    Custom(Box<dyn Collector + Send>),
}

impl Collector for AnyCollector {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        match self {
            AnyCollector::Fabric(c) => c.on(now, event),
            AnyCollector::Rates(c) => c.on(now, event),
            AnyCollector::Queues(c) => c.on(now, event),
            AnyCollector::QueueSeries(c) => c.on(now, event),
            AnyCollector::Ibcc(c) => c.on(now, event),
            AnyCollector::Isolation(c) => c.on(now, event),
            AnyCollector::Trees(c) => c.on(now, event),
            AnyCollector::Custom(c) => c.on(now, event),
        }
    }

    fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        match self {
            AnyCollector::Fabric(c) => c.summarise(summary, finish),
            AnyCollector::Rates(c) => c.summarise(summary, finish),
            AnyCollector::Queues(c) => c.summarise(summary, finish),
            AnyCollector::QueueSeries(c) => c.summarise(summary, finish),
            AnyCollector::Ibcc(c) => c.summarise(summary, finish),
            AnyCollector::Isolation(c) => c.summarise(summary, finish),
            AnyCollector::Trees(c) => c.summarise(summary, finish),
            AnyCollector::Custom(c) => c.summarise(summary, finish),
        }
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        match self {
            AnyCollector::Fabric(c) => c.tables(report, finish),
            AnyCollector::Rates(c) => c.tables(report, finish),
            AnyCollector::Queues(c) => c.tables(report, finish),
            AnyCollector::QueueSeries(c) => c.tables(report, finish),
            AnyCollector::Ibcc(c) => c.tables(report, finish),
            AnyCollector::Isolation(c) => c.tables(report, finish),
            AnyCollector::Trees(c) => c.tables(report, finish),
            AnyCollector::Custom(c) => c.tables(report, finish),
        }
    }

    fn next_sample(&self) -> Option<u64> {
        match self {
            AnyCollector::Trees(c) => c.next_sample(),
            AnyCollector::Custom(c) => c.next_sample(),
            _ => None,
        }
    }

    fn sample(&mut self, now: u64, fabric: &dyn FabricSample) {
        match self {
            AnyCollector::Trees(c) => c.sample(now, fabric),
            AnyCollector::Custom(c) => c.sample(now, fabric),
            _ => {}
        }
    }

    fn hears_events(&self) -> bool {
        match self {
            AnyCollector::Trees(c) => c.hears_events(),
            AnyCollector::Custom(c) => c.hears_events(),
            _ => true,
        }
    }
}

/// The optional collectors of a run: those that hear the trace events, and those that
/// only sample the fabric (kept apart, so that they cost the event loop nothing).
#[derive(Default)]
pub struct Collectors {
    list: Vec<AnyCollector>,
    samplers: Vec<AnyCollector>,
}

impl Collectors {
    pub fn add(&mut self, collector: AnyCollector) {
        if collector.hears_events() {
            self.list.push(collector);
        } else {
            self.samplers.push(collector);
        }
    }

    /// Whether the run has any that hear events: the one branch every reported event pays.
    #[inline]
    pub fn any(&self) -> bool {
        !self.list.is_empty()
    }

    #[inline(never)]
    pub fn on(&mut self, now: u64, event: &TraceEvent) {
        for c in &mut self.list {
            c.on(now, event);
        }
    }

    fn all(&self) -> impl Iterator<Item = &AnyCollector> {
        self.list.iter().chain(&self.samplers)
    }

    fn all_mut(&mut self) -> impl Iterator<Item = &mut AnyCollector> {
        self.list.iter_mut().chain(&mut self.samplers)
    }

    /// When the next sample of the fabric is due, if any collector samples.
    pub fn next_sample(&self) -> Option<u64> {
        self.all().filter_map(|c| c.next_sample()).min()
    }

    /// Hands `fabric` to the collectors whose sample is due at `now`.
    pub fn sample(&mut self, now: u64, fabric: &dyn FabricSample) {
        for c in self.all_mut() {
            if c.next_sample().is_some_and(|at| at <= now) {
                c.sample(now, fabric);
            }
        }
    }

    pub fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        for c in self.all_mut() {
            c.summarise(summary, finish);
        }
    }

    pub fn tables(&self, report: &mut Report, finish: &Finish) {
        for c in self.all() {
            c.tables(report, finish);
        }
    }
}
