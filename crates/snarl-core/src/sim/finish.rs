//! Turning a finished run into its report: the last checks, the summary and the tables.

use super::{Simulation, PS_PER_UNIT};
use crate::config::TimeUnit;
use crate::error::Result;
use crate::kernel::{Event, Stop};
use crate::observe::{self, Finish, GroupInfo};
use crate::packet::NIL;
use crate::report::{Report, StoppedAfter};
use crate::traffic::Workload;

impl Simulation {
    pub(super) fn finish(mut self, wall_seconds: f64) -> Result<Report> {
        // A stall whose interval ran out after the last periodic check is caught here
        // (from the queues the last check saw: a head seen first now has not stalled).
        self.kernel.now = self.kernel.end;
        self.world.find_deadlock(&self.kernel)?;
        self.check_invariants()?;
        self.count_arrivals_at_end();
        let end = self.kernel.end;
        if self.kernel.stop.as_ref().and_then(Stop::reached).is_some() {
            // The time series and the offerings end at the stop, as everything else does.
            self.kernel.observers.series.end_at(end);
            self.kernel.observers.end_offerings_at(end);
        }
        let infos: Vec<GroupInfo> = self
            .world
            .work
            .groups()
            .iter()
            .map(|g| GroupInfo {
                name: g.name.to_string(),
                hosts: g.hosts.len() as u64,
                capacity_bps: g.hosts.iter().map(|&h| self.world.nics.rate(h as usize).0 as f64).sum(),
            })
            .collect();
        let names: Vec<String> = infos.iter().map(|i| i.name.clone()).collect();
        let capacity: Vec<f64> = infos.iter().map(|i| i.capacity_bps).collect();
        let time_unit = match self.time_unit {
            TimeUnit::Ns => "ns",
            TimeUnit::Cycles => "cycles",
        };
        let pause_states = [self.world.fabric.pause_state(), self.world.nics.pause_state()];
        let finish = Finish {
            groups: &infos,
            end,
            ps_per_unit: PS_PER_UNIT,
            time_unit,
            pause_states: &pause_states,
            vcs: self.world.fabric.vcs(),
            fabric: &self.world.fabric,
        };
        let mut summary = self.kernel.observers.summarise(&finish);
        let stats = &self.kernel.observers;
        summary.sim_time = end as f64 / PS_PER_UNIT;
        summary.measure_from = stats.measure_from as f64 / PS_PER_UNIT;
        summary.seed = self.seed;
        if let Some(stop) = self.kernel.stop.as_ref().filter(|s| s.counts_messages()) {
            summary.stopped_after = Some(StoppedAfter {
                group: names[stop.group as usize].clone(),
                messages: stop.messages,
                at: stop.reached().map(|at| at as f64 / PS_PER_UNIT),
            });
        }
        summary.events = self.kernel.events;
        summary.wall_seconds = wall_seconds;
        if let Some(window) = self.world.work.recovery() {
            let bystander = |g: usize| window.bystander.get(g).copied().unwrap_or(false);
            let bystander_capacity = (0..infos.len()).filter(|&g| bystander(g)).map(|g| capacity[g]).sum();
            let series = &stats.series;
            let throughput = series.accepted_of(bystander, bystander_capacity);
            summary.recovery = observe::recovery(
                &throughput,
                series.window(),
                stats.measure_from,
                window.start,
                window.end,
                end,
                PS_PER_UNIT,
            );
        }
        self.world.work.summarise(&mut summary, &finish);
        let mut notes = std::mem::take(&mut self.warnings);
        notes.extend(summary.sections.notes());
        let mut report = Report { summary, notes, ..Report::default() };
        stats.tables(&mut report, &finish);
        self.world.work.tables(&mut report, &finish);
        Ok(report)
    }

    /// Data packets arriving at their hosts across the end of the run count in the loads
    /// by the part of their bytes that arrived before it (as those arriving across the
    /// measurement start do by the part after it): loads never exceed the links. Those an
    /// in-order receiver would discard count for nothing.
    fn count_arrivals_at_end(&mut self) {
        let kernel = &mut self.kernel;
        let (end, stats) = (kernel.end, &mut kernel.observers);
        let last = end.saturating_add(stats.longest_arrival);
        while let Some((tail_at, event)) = kernel.queue.pop() {
            if tail_at >= last {
                break;
            }
            if let Event::Deliver { packet } = event {
                let p = kernel.packets[packet];
                if p.message != NIL && self.world.nics.accepts_at_end(&kernel.packets, packet) {
                    stats.arriving_at_end(end, p.group, p.dst, kernel.packets.payload(packet), tail_at);
                }
            }
        }
    }
}
