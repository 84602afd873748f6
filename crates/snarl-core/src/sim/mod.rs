//! The assembly layer: turns a validated config into a running simulation (`build.rs`),
//! composes its models into the one model the kernel dispatches to (`world.rs`), and
//! turns a finished run into a report (`finish.rs`). The kernel below it knows none of
//! this; the models beside it know nothing of it.

mod build;
mod components;
mod finish;
mod world;

pub use build::WATCHDOG_HOPS;
pub use components::Components;

use crate::config::{TimeUnit, ValidConfig};
use crate::error::{Error, Result};
use crate::kernel::{Event, Kernel};
use crate::observe::{AnyCollector, Collector, Stats};
use crate::report::Report;
use crate::traffic::AnyWorkload;
use std::time::Instant;
use world::World;

/// Picoseconds per reported time unit (a cycle is one nanosecond).
const PS_PER_UNIT: f64 = 1_000.0;

/// One run: the kernel's shared state with the run's observers, and its models.
pub struct Simulation {
    kernel: Kernel<Stats>,
    world: World,
    seed: u64,
    time_unit: TimeUnit,
    /// Drops are a fault (lossless link-level flow control) rather than a result.
    lossless: bool,
    /// What the configuration cannot carry that its links promise, one line each: the
    /// report's first notes.
    warnings: Vec<String>,
}

impl Simulation {
    /// The bottlenecks of the configuration a user may not intend (one line each,
    /// starting "warning:"), known once the fabric is built.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Builds the fabric, traffic and observers of a validated config.
    pub fn new(config: &ValidConfig) -> Result<Simulation> {
        Simulation::build(config, Components::default(), 0)
    }

    /// Builds the fabric and observers of a validated config, with `workload` in place
    /// of the config's `[traffic]` (which is not resolved).
    pub fn with_workload(config: &ValidConfig, workload: AnyWorkload) -> Result<Simulation> {
        Simulation::build(config, Components::default().workload(workload), 0)
    }

    /// `new` with `components` (a routing, congestion control or workload, made outside
    /// the crate if need be) in place of what the config would build.
    pub fn with_components(config: &ValidConfig, components: Components) -> Result<Simulation> {
        Simulation::build(config, components, 0)
    }

    /// `new` with `extra_queues` switch queues per port beyond the VCs (empty unless a
    /// mechanism uses them; the tests check that they change nothing).
    pub fn with_extra_queues(config: &ValidConfig, extra_queues: usize) -> Result<Simulation> {
        Simulation::build(config, Components::default(), extra_queues)
    }

    /// Adds `collector` to the run (before `run`): it sees every trace event the models
    /// report and, at the end, adds its sections to the summary and its tables to the
    /// report, as the built-in collectors do.
    pub fn add_collector(&mut self, collector: impl Collector + Send + 'static) {
        self.kernel.observers.collectors.add(AnyCollector::Custom(Box::new(collector)));
    }

    /// Reports the victims' perf ratios against `baseline` (their times alone).
    pub fn measure_against(&mut self, baseline: crate::traffic::jobs::Baseline) {
        self.world.work.measure_against(baseline);
    }

    /// Runs to the configured duration, or until the config's `stop_after` is reached.
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> Result<Report> {
        let started = Instant::now();
        // The outer loop's first visit: the watchdog's first check, or a first sample.
        let first = self.world.next_check(&self.kernel.observers);
        self.kernel.queue.push(first, Event::Watchdog);
        self.kernel.run(&mut self.world, progress)?;
        self.finish(started.elapsed().as_secs_f64())
    }

    /// Checks the lossless invariants: conservation, credits within bounds, buffers
    /// within capacity. Called by `finish`; tests may call it at any time.
    pub fn check_invariants(&self) -> Result<()> {
        let counts = self.kernel.observers.packet_counts();
        // A packet an in-order receiver discarded reached its host: lost to nothing.
        if counts.injected != counts.delivered + counts.in_flight + counts.dropped + counts.discarded {
            return Err(Error::Invariant(format!("packet conservation broken: {counts:?}")));
        }
        if self.lossless && counts.dropped != 0 {
            return Err(Error::Invariant(format!("a lossless fabric dropped {} packets", counts.dropped)));
        }
        let live = self.kernel.packets.live() as u64;
        if counts.in_flight != live {
            return Err(Error::Invariant(format!(
                "{} packets in flight by the counters but {live} alive",
                counts.in_flight
            )));
        }
        // Messages: every one taken (by a source queue or the intra-node link) is delivered
        // or still alive; a lossy fabric may lose some to drops.
        let c = &self.kernel.observers.counters;
        let live = self.kernel.messages.live() as u64;
        if c.messages_generated != c.messages_delivered + live && self.lossless {
            return Err(Error::Invariant(format!(
                "message conservation broken: {} generated, {} delivered, {live} alive",
                c.messages_generated, c.messages_delivered
            )));
        }
        let on_link = self.world.nics.intra_node_in_flight();
        if c.intra_node_posted != c.intra_node_messages + on_link {
            return Err(Error::Invariant(format!(
                "intra-node conservation broken: {} posted, {} delivered, {on_link} in flight",
                c.intra_node_posted, c.intra_node_messages
            )));
        }
        self.world.fabric.check_invariants(&self.kernel.packets).map_err(Error::Invariant)?;
        self.world.nics.check_invariants(&self.kernel.host_returns).map_err(Error::Invariant)?;
        Ok(())
    }
}
