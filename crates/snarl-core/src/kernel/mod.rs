//! The discrete-event kernel: owns every piece of state, pops events in (time, sequence)
//! order and dispatches them by `match`. It knows components only by their entry points.

mod context;
mod event;
mod event_queue;
mod peer;
mod stop;
mod watchdog;

pub use context::Ctx;
pub use event::{Event, Timer, TimerKind};
pub(crate) use event_queue::Entry;
pub use event_queue::EventQueue;
pub use peer::Peer;
pub use stop::Stop;
pub use watchdog::{StallTracker, BYTES_PER_QUEUE as WATCHDOG_BYTES_PER_QUEUE};

use crate::cc::{AnyCongestionControl, AnyMarking};
use crate::config::{
    pfc_headroom, Config, CongestionControlConfig, Crossbar, FlowControlConfig, InputQueuing, NicScheduling,
    SwitchConfig, Thresholds, TimeUnit, ValidConfig,
};
use crate::error::{closest, Deadlock, Error, Result};
use crate::flow_control::{CreditReturns, Feedback, PauseState, PfcReceiver};
use crate::nic::Nics;
use crate::observe::{
    self, AnyCollector, Collector, FabricSeries, Finish, GroupInfo, HotspotTime, IbccSeries, IdealFct, IsolationSeries,
    PausedLink, PfcSummary, QueueProbes, QueueSeries, RateLog, Stats,
};
use crate::packet::{MessageSlab, PacketSlab, NIL};
use crate::report::{Report, StoppedAfter};
use crate::routing::hash::mix64;
use crate::routing::AnyRouting;
use crate::switch::{IoqFabric, IoqParams, LinkControl};
use crate::topology::{self, Topology};
use crate::traffic::{AnyWorkload, Env, MessageDone, OpenLoop, Workload};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::time::Instant;

/// Picoseconds per reported time unit (a cycle is one nanosecond).
const PS_PER_UNIT: f64 = 1_000.0;

pub struct Simulation {
    now: u64,
    end: u64,
    seed: u64,
    time_unit: TimeUnit,
    /// Queues whose head stopped moving (see `watchdog`).
    stalls: StallTracker,
    /// Drops are a fault (lossless link-level flow control) rather than a result.
    lossless: bool,
    /// PFC headroom per priority, for the report (0 without PFC).
    pfc_headroom: u64,
    events: u64,
    queue: EventQueue,
    packets: PacketSlab,
    messages: MessageSlab,
    fabric: IoqFabric,
    nics: Nics,
    host_returns: CreditReturns,
    work: AnyWorkload,
    /// Messages completed during the current event, for a workload that asks for them
    /// (`want_completions`), and the list the previous ones are handed over from.
    completions: Vec<MessageDone>,
    handed_over: Vec<MessageDone>,
    want_completions: bool,
    /// The messages that end the run early (`simulation.stop_after`).
    stop: Option<Stop>,
    stats: Stats,
    traffic_rng: Pcg64Mcg,
    routing_rng: Pcg64Mcg,
}

impl Simulation {
    /// Builds the fabric, traffic and observers of a validated config.
    pub fn new(config: &ValidConfig) -> Result<Simulation> {
        Simulation::build(config, None, 0)
    }

    /// Builds the fabric and observers of a validated config, with `workload` in place
    /// of the config's `[traffic]` (which is not resolved).
    pub fn with_workload(config: &ValidConfig, workload: AnyWorkload) -> Result<Simulation> {
        Simulation::build(config, Some(workload), 0)
    }

    /// `new` with `extra_queues` switch queues per port beyond the VCs (empty unless a
    /// mechanism uses them; the tests check that they change nothing).
    pub fn with_extra_queues(config: &ValidConfig, extra_queues: usize) -> Result<Simulation> {
        Simulation::build(config, None, extra_queues)
    }

    fn build(config: &ValidConfig, workload: Option<AnyWorkload>, extra_queues: usize) -> Result<Simulation> {
        // Fabrics the topology refuses by their size get that error; those that would not
        // fit in memory are refused here, before anything is allocated.
        if topology::within_limits(&config.topology) {
            crate::memory::check(config)?;
        }
        let topo = topology::build(&config.topology, &config.links)?;
        if topo.num_hosts() < 2 {
            return Err(Error::Topology("a fabric needs at least two hosts".into()));
        }
        let vcs = config.switch.vcs() as usize;
        let routing = AnyRouting::build(&config.routing, &topo, vcs, config.nic.mtu.0)?;
        let sim = &config.simulation;
        let isolation = config.isolation.as_ref().map(|i| i.resolve(config.port_vl_buffer(), config.nic.mtu.0));
        // Congestion isolation's queues: `cfqs_per_port` per priority.
        let extra_queues = isolation.as_ref().map_or(extra_queues, |i| vcs * i.cfqs_per_port as usize);
        let params = IoqParams { extra_queues, ..fabric_params(config, vcs) };
        let host_credits = matches!(params.control, LinkControl::Credit).then_some(params.input_capacity);
        let mut fabric = IoqFabric::new(topo, routing, params)?;
        if let Some(isolation) = &isolation {
            fabric.isolate(isolation.clone())?;
        }
        let topo = fabric.topology();
        let hosts = topo.num_hosts();
        let packet_time = topo.host_link(0).rate.serialize(config.nic.mtu.0);
        let mut nics = Nics::new(
            topo,
            |s, p| fabric.global_port(s, p),
            vcs,
            host_credits,
            config.nic.mtu.0,
            config.nic.source_queue as usize,
            sim.warmup.0,
        )?;
        let mut traffic_rng = Pcg64Mcg::seed_from_u64(mix64(config.seed ^ 0x0074_7261_6666_6963));
        let routing_rng = Pcg64Mcg::seed_from_u64(mix64(config.seed ^ 0x0072_6f75_7469_6e67));
        // Congestion control: marking draws from a stream of its own, so runs without it
        // draw exactly what they drew before. A marking that cannot mark, or serves an IB
        // CC that cannot act, is not installed.
        let marking = config.marking_in_force();
        if let Some(marking) = &marking {
            let seed = mix64(config.seed ^ 0x0065_636e);
            fabric.set_marking(AnyMarking::build(marking, seed, config.port_vl_buffer()));
        }
        if let Some(isolation) = &isolation {
            nics.enable_isolation(isolation.nic_isolation, isolation.cfqs_per_port as usize, sim.warmup.0)?;
        }
        // A mix's parts are streams, each with its own bound in the source queue.
        nics.set_streams(config.traffic.streams())?;
        if config.nic.scheduling == Some(NicScheduling::RoundRobin) {
            nics.enable_flow_scheduling()?;
        }
        if let Some(cc) = AnyCongestionControl::build(config) {
            nics.enable_congestion_control(cc)?;
        }
        let work = match workload {
            Some(work) => work,
            None => AnyWorkload::OpenLoop(OpenLoop::build(config, hosts, nics.rate(0), &mut traffic_rng)?),
        };
        if isolation.is_some() {
            fabric.set_declared_hotspots(hosts, &work.declared_hotspots())?;
        }
        let host_groups = work.host_groups();
        let groups = work.groups().len();
        if host_groups.len() != hosts || host_groups.iter().any(|&g| g as usize >= groups) {
            return Err(Error::Invariant(format!(
                "the workload puts {} hosts in {groups} groups; the fabric has {} hosts",
                host_groups.len(),
                hosts
            )));
        }
        let end = sim.duration.0;
        let window = sim.window.map_or((end / 100).max(1), |w| w.0);
        let ideal = IdealFct {
            host_rate: config.links.host.rate,
            host_latency: config.links.host.latency.0,
            switch_link_latency: config.links.switch.latency.0,
            switch_latency: config.switch.latency().0,
        };
        let mut stats = Stats::new(groups, sim.warmup.0, window, end, ideal, config.nic.mtu.0)?;
        stats.set_hosts(crate::memory::fallible::collected(
            host_groups.len(),
            host_groups.iter().copied(),
            "the traffic tables",
        )?)?;
        if let Some(traffic) = work.hotspots() {
            // tmax: what the senders offer to hosts other than the hotspots, per host.
            let offered: f64 =
                traffic.non_hotspot_offered.iter().enumerate().map(|(h, &f)| f * nics.rate(h).0 as f64).sum();
            let tmax_gbps = offered / hosts as f64 / 1e9;
            stats.hotspots = Some(Box::new(HotspotTime::new(hosts, sim.warmup.0, tmax_gbps)?));
        }
        let want_completions = work.wants_completions();
        let stop = match &sim.stop_after {
            Some(s) => Some(Stop::new(stop_group(&work, &s.group)?, s.messages)),
            None => None,
        };
        if stop.is_some() {
            // Every delivery arrives as an event at its time, so the run can end exactly at
            // the one that completes the stop (`Ctx::deliver`).
            stats.settle_before = 0;
        }
        stats.congestion_counters = marking.is_some() || config.congestion_control_acts();
        // The optional collectors: those of the mechanisms the run has, and those asked for.
        let link_events = !matches!(config.flow_control, FlowControlConfig::Credit {});
        if stats.congestion_counters || link_events {
            stats.collectors.add(AnyCollector::Fabric(FabricSeries::new(window, end)?));
        }
        if let CongestionControlConfig::Dcqcn(dcqcn) = &config.congestion_control {
            if dcqcn.rate_series {
                stats.collectors.add(AnyCollector::Rates(RateLog::default()));
            }
        }
        if let CongestionControlConfig::Ibcc(ibcc) = &config.congestion_control {
            let topo = fabric.topology();
            let total = (0..topo.num_switches()).map(|s| topo.num_ports(s)).sum();
            let each = (0..topo.num_switches()).flat_map(|s| (0..topo.num_ports(s)).map(move |p| (s as u32, p as u32)));
            let ports = crate::memory::fallible::collected(total, each, "the IB CC marks per port")?;
            let (min, limit) = (ibcc.ccti_min as u16, ibcc.ccti_limit as u16);
            let series = IbccSeries::new(window, end, sim.warmup.0, min, limit, ports, fabric.queues())?;
            stats.collectors.add(AnyCollector::Ibcc(series));
        }
        if isolation.is_some() {
            stats.collectors.add(AnyCollector::Isolation(IsolationSeries::new(window, end, sim.warmup.0)?));
        }
        let mut probes = QueueProbes::new(sim.warmup.0);
        if let Some((kmin, kmax)) = marking.as_ref().and_then(|m| m.red_thresholds()) {
            probes.set_ecn_thresholds(kmin, kmax);
        }
        add_queue_probes(config, &mut fabric, &mut probes)?;
        if !probes.probes.is_empty() {
            let queues = probes.probes.iter().map(|p| (p.switch, p.port, p.priority)).collect();
            stats.collectors.add(AnyCollector::QueueSeries(QueueSeries::new(queues, window, end)?));
            stats.collectors.add(AnyCollector::Queues(probes));
        }
        // Calendar sizing: a fabric of H hosts keeps about H events per 1/4 packet time in
        // flight; buckets of ~4 events and a wheel spanning two packet times keep nearly
        // every event out of the overflow heap while the wheel stays cache-sized.
        let hosts = hosts as u64;
        let bucket = (packet_time * 4 / hosts).max(16);
        let wheel_bits = (hosts / 2).max(1024).ilog2();
        let watchdog = sim.watchdog.map_or_else(|| default_watchdog(fabric.slowest_hop(config.nic.mtu.0)), |w| w.0);
        let mut simulation = Simulation {
            now: 0,
            end,
            seed: config.seed,
            time_unit: sim.time_unit,
            stalls: StallTracker::new(watchdog),
            lossless: !matches!(config.flow_control, FlowControlConfig::None {}),
            pfc_headroom: match config.flow_control {
                FlowControlConfig::Pfc { .. } => pfc_headroom(&config.links, config.nic.mtu.0),
                _ => 0,
            },
            events: 0,
            queue: EventQueue::new(bucket, wheel_bits)?,
            packets: PacketSlab::new(),
            messages: MessageSlab::new(),
            fabric,
            nics,
            host_returns: CreditReturns::new(hosts as usize)?,
            work,
            completions: Vec::with_capacity(if want_completions { 64 } else { 0 }),
            handed_over: Vec::with_capacity(if want_completions { 64 } else { 0 }),
            want_completions,
            stop,
            stats,
            traffic_rng,
            routing_rng,
        };
        simulation.schedule_start();
        Ok(simulation)
    }

    fn schedule_start(&mut self) {
        let Parts { mut ctx, nics, work, rng, handed_over, .. } = self.parts();
        work.start(&mut Env { ctx: &mut ctx, nics, rng });
        hand_over_completions(&mut ctx, nics, rng, work, handed_over);
        self.queue.push(self.stalls.period(), Event::Watchdog);
    }

    /// Borrows the state events are handled with.
    fn parts(&mut self) -> Parts<'_> {
        let completions = if self.want_completions { Some(&mut self.completions) } else { None };
        Parts {
            ctx: Ctx {
                now: self.now,
                end: self.end,
                queue: &mut self.queue,
                packets: &mut self.packets,
                messages: &mut self.messages,
                stats: &mut self.stats,
                routing_rng: &mut self.routing_rng,
                host_returns: &mut self.host_returns,
                completions,
                stop: self.stop.as_mut(),
            },
            fabric: &mut self.fabric,
            nics: &mut self.nics,
            work: &mut self.work,
            rng: &mut self.traffic_rng,
            handed_over: &mut self.handed_over,
            now: &mut self.now,
            events: &mut self.events,
        }
    }

    /// Runs to the configured duration, or until the config's `stop_after` is reached.
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> Result<Report> {
        let started = Instant::now();
        let mut pacer = ProgressPacer { report: progress, last: started };
        // Events run in an inner loop that borrows the state once; the watchdog, which
        // inspects the whole run, comes back here.
        while let Some((time, event)) = self.run_packets(&mut pacer)? {
            self.now = time;
            match event {
                Event::Watchdog => {
                    // The checks are not simulated work: the summary must not depend on
                    // the watchdog interval.
                    self.events -= 1;
                    self.check_progress()?
                }
                _ => unreachable!("other events are dispatched by run_packets"),
            }
        }
        // A run that reached its stop ends there: the delivery that reached it set the end
        // of the run to now, so every event left is at or after it.
        if let Some(at) = self.stop.as_ref().and_then(Stop::reached) {
            self.end = at;
        }
        (pacer.report)(1.0);
        self.finish(started.elapsed().as_secs_f64())
    }

    /// Dispatches events until the end of the run (`None`) or until a watchdog event,
    /// which it returns.
    fn run_packets(&mut self, pacer: &mut ProgressPacer) -> Result<Option<(u64, Event)>> {
        let want_completions = self.want_completions;
        let Parts { mut ctx, fabric, nics, work, rng, handed_over, now, events } = self.parts();
        let mut end = ctx.end;
        while let Some((time, event)) = ctx.queue.pop() {
            if time >= end {
                // Left pending, as every later event: the end counts what was arriving.
                put_back(ctx.queue, time, event);
                *now = ctx.now;
                return Ok(None);
            }
            ctx.now = time;
            *events += 1;
            match event {
                Event::Arrive { port, packet } => fabric.arrive(&mut ctx, port, packet),
                Event::AllocRetry { output } => fabric.alloc_retry(&mut ctx, output),
                Event::LinkWake { port } => fabric.link_wake(&mut ctx, port),
                Event::FeedbackToSwitch { port, feedback } => fabric.feedback(&mut ctx, port, feedback),
                Event::FeedbackToHost { host, feedback } => match feedback {
                    Feedback::Credit { queue, bytes } => nics.credit(&mut ctx, host, queue as usize, bytes as u64),
                    Feedback::Pause { queue, on } => nics.pause(&mut ctx, host, queue as usize, on),
                    Feedback::Isolate { mirror } => nics.isolate(&mut ctx, host, fabric.isolation_key(mirror)),
                },
                Event::Deliver { packet } => {
                    nics.receive(&mut ctx, packet);
                    // Only a `Deliver` event completes messages when the workload hears
                    // of completions (`Ctx::send_to_host`).
                    if want_completions {
                        hand_over_completions(&mut ctx, nics, rng, work, handed_over);
                    }
                    // A delivery may end the run (`simulation.stop_after`).
                    end = ctx.end;
                }
                Event::HostWake { host } => nics.wake_event(&mut ctx, host),
                Event::Timer(timer) => match timer.kind {
                    TimerKind::Workload(_) => work.timer(&mut Env { ctx: &mut ctx, nics, rng }, timer),
                    TimerKind::CongestionControl(_) => nics.cc_timer(&mut ctx, timer),
                    TimerKind::Isolation => fabric.isolation_timer(&mut ctx, timer),
                },
                Event::Watchdog => {
                    *now = ctx.now;
                    return Ok(Some((time, event)));
                }
            }
            if *events & 0xffff == 0 {
                pacer.check(time as f64 / end as f64)?;
            }
        }
        *now = ctx.now;
        Ok(None)
    }

    /// The periodic watchdog check; the next one follows a quarter interval later.
    fn check_progress(&mut self) -> Result<()> {
        let packets = &self.packets;
        let heads = self.fabric.queue_heads().map(|(queue, packet)| (queue, packet, packets[packet].injected));
        self.stalls.observe(heads);
        self.find_deadlock()?;
        self.queue.push(self.now + self.stalls.period(), Event::Watchdog);
        Ok(())
    }

    /// Fails if no packet moved anywhere for the watchdog interval while packets are in
    /// flight, or if switch queues whose heads did not move for that long wait on each
    /// other in a cycle (a deadlock that traffic elsewhere does not end).
    fn find_deadlock(&self) -> Result<()> {
        let in_flight = self.stats.packet_counts().in_flight;
        let frozen = in_flight > 0 && self.now.saturating_sub(self.stats.last_moved) >= self.stalls.interval();
        let found = |deadlock: Deadlock| {
            let when =
                Deadlock { at: self.show_time(self.now), interval: self.show_time(self.stalls.interval()), ..deadlock };
            Err(Error::Deadlock(Box::new(when)))
        };
        let nothing = Deadlock { in_flight, ..Deadlock::default() };
        if frozen {
            return found(Deadlock {
                stuck: in_flight,
                blocked: self.fabric.blocked_ports(&self.packets, 10),
                ..nothing
            });
        }
        // Between checks a head may have moved: only those still in place count.
        let packets = &self.packets;
        let head = |q: u32| self.fabric.queue_head(q).map(|p| (p, packets[p].injected));
        let stalled = self.stalls.stalled(self.now, head);
        let Some(cycles) = watchdog::find_cycles(&stalled, |q| self.fabric.waits_for(&self.packets, q)) else {
            return Ok(());
        };
        let on_cycles = cycles.cycles.iter().flatten().map(|&q| (q, true));
        let queues: Vec<(u32, bool)> = on_cycles.chain(cycles.blocked.iter().map(|&q| (q, false))).collect();
        let shown = queues.iter().take(10).map(|&(q, on_cycle)| self.fabric.describe_queue(&self.packets, q, on_cycle));
        found(Deadlock {
            cycles: cycles.cycles.len(),
            queues_on_cycles: queues.len() - cycles.blocked.len(),
            queues_waiting: cycles.blocked.len(),
            stuck: queues.iter().map(|&(q, _)| self.fabric.queue_len(&self.packets, q) as u64).sum(),
            blocked: shown.collect(),
            ..nothing
        })
    }

    /// Data packets arriving at their hosts across the end of the run count in the loads
    /// by the part of their bytes that arrived before it (as those arriving across the
    /// measurement start do by the part after it): loads never exceed the links.
    fn count_arrivals_at_end(&mut self) {
        let last = self.end.saturating_add(self.stats.longest_arrival);
        while let Some((tail_at, event)) = self.queue.pop() {
            if tail_at >= last {
                break;
            }
            if let Event::Deliver { packet } = event {
                let p = self.packets[packet];
                if p.message != NIL {
                    self.stats.arriving_at_end(self.end, p.group, p.dst, p.size as u64, tail_at);
                }
            }
        }
    }

    /// `t` (ps) in the run's time unit, for messages.
    fn show_time(&self, t: u64) -> String {
        match self.time_unit {
            TimeUnit::Ns => crate::units::Time(t).to_string(),
            TimeUnit::Cycles => format!("{}cycles", t as f64 / PS_PER_UNIT),
        }
    }

    /// Checks the lossless invariants: conservation, credits within bounds, buffers
    /// within capacity. Called by `finish`; tests may call it at any time.
    pub fn check_invariants(&self) -> Result<()> {
        let counts = self.stats.packet_counts();
        if counts.injected != counts.delivered + counts.in_flight + counts.dropped {
            return Err(Error::Invariant(format!("packet conservation broken: {counts:?}")));
        }
        if self.lossless && counts.dropped != 0 {
            return Err(Error::Invariant(format!("a lossless fabric dropped {} packets", counts.dropped)));
        }
        if counts.in_flight != self.packets.live() as u64 {
            return Err(Error::Invariant(format!(
                "{} packets in flight by the counters but {} alive",
                counts.in_flight,
                self.packets.live()
            )));
        }
        self.fabric.check_invariants(&self.packets).map_err(Error::Invariant)?;
        self.nics.check_invariants(&self.host_returns).map_err(Error::Invariant)?;
        Ok(())
    }

    fn finish(mut self, wall_seconds: f64) -> Result<Report> {
        // A stall whose interval ran out after the last periodic check is caught here
        // (from the queues the last check saw: a head seen first now has not stalled).
        self.now = self.end;
        self.find_deadlock()?;
        self.check_invariants()?;
        self.count_arrivals_at_end();
        if self.stop.as_ref().and_then(Stop::reached).is_some() {
            // The time series end at the stop, as everything else does.
            self.stats.series.end_at(self.end);
        }
        let infos: Vec<GroupInfo> = self
            .work
            .groups()
            .iter()
            .map(|g| GroupInfo {
                name: g.name.to_string(),
                hosts: g.hosts.len() as u64,
                capacity_bps: g.hosts.iter().map(|&h| self.nics.rate(h as usize).0 as f64).sum(),
            })
            .collect();
        let names: Vec<String> = infos.iter().map(|i| i.name.clone()).collect();
        let capacity: Vec<f64> = infos.iter().map(|i| i.capacity_bps).collect();
        let time_unit = match self.time_unit {
            TimeUnit::Ns => "ns",
            TimeUnit::Cycles => "cycles",
        };
        let pause_states = [self.fabric.pause_state(), self.nics.pause_state()];
        let finish = Finish {
            groups: &infos,
            end: self.end,
            ps_per_unit: PS_PER_UNIT,
            time_unit,
            pause_states: &pause_states,
            vcs: self.fabric.vcs(),
        };
        let mut summary = self.stats.summarise(&finish);
        summary.sim_time = self.end as f64 / PS_PER_UNIT;
        summary.measure_from = self.stats.measure_from as f64 / PS_PER_UNIT;
        summary.seed = self.seed;
        if let Some(stop) = &self.stop {
            summary.stopped_after = Some(StoppedAfter {
                group: names[stop.group as usize].clone(),
                messages: stop.messages,
                at: stop.reached().map(|at| at as f64 / PS_PER_UNIT),
            });
        }
        if self.pfc_headroom > 0 {
            summary.sections.set(self.pfc_summary().section(time_unit));
        }
        summary.events = self.events;
        summary.wall_seconds = wall_seconds;
        if let Some(window) = self.work.recovery() {
            let bystander = |g: usize| window.bystander.get(g).copied().unwrap_or(false);
            let bystander_capacity = (0..infos.len()).filter(|&g| bystander(g)).map(|g| capacity[g]).sum();
            let series = &self.stats.series;
            let throughput = series.accepted_of(bystander, bystander_capacity);
            summary.recovery = observe::recovery(
                &throughput,
                series.window(),
                self.stats.measure_from,
                window.start,
                window.end,
                PS_PER_UNIT,
            );
        }
        let notes = summary.sections.notes();
        let mut report = Report { summary, notes, ..Report::default() };
        report.add_table("timeseries", self.stats.series.table(&names, &capacity, PS_PER_UNIT));
        if let Some(hotspots) = &self.stats.hotspots {
            report.add_table("hotspots", hotspots.table(PS_PER_UNIT));
        }
        self.stats.collectors.tables(&mut report, &finish);
        Ok(report)
    }
}

impl Simulation {
    /// Adds `collector` to the run (before `run`): it sees every trace event the models
    /// report and, at the end, adds its sections to the summary and its tables to the
    /// report, as the built-in collectors do.
    pub fn add_collector(&mut self, collector: impl Collector + Send + 'static) {
        self.stats.collectors.add(AnyCollector::Custom(Box::new(collector)));
    }

    fn pfc_summary(&self) -> PfcSummary {
        let (end, from) = (self.end, self.stats.measure_from);
        let interval = end.saturating_sub(from).max(1) as f64;
        let mut links: Vec<PausedLink> = Vec::new();
        let mut total = 0u64;
        let mut collect = |state: &PauseState, name: &dyn Fn(usize) -> String| {
            for link in 0..state.links() {
                for vc in 0..self.fabric.vcs() {
                    let (pauses, time) = (state.pauses(link, vc), state.paused_time(link, vc, end));
                    total += time;
                    if pauses > 0 {
                        links.push(PausedLink {
                            node: name(link),
                            priority: vc as u32,
                            pauses: pauses as u64,
                            paused_time: time as f64 / PS_PER_UNIT,
                            paused_fraction: time as f64 / interval,
                        });
                    }
                }
            }
        };
        collect(self.fabric.pause_state(), &|gp| self.fabric.port_name(gp));
        collect(self.nics.pause_state(), &|h| format!("host {h}"));
        links.sort_by(|a, b| b.paused_time.total_cmp(&a.paused_time).then_with(|| a.node.cmp(&b.node)));
        let c = &self.stats.pfc;
        PfcSummary {
            pause_frames_sent: c.pause_frames_sent,
            resume_frames_sent: c.resume_frames_sent,
            pause_frames_received: c.pause_frames_received,
            paused_time: total as f64 / PS_PER_UNIT,
            paused_links: links.len() as u64,
            max_paused_fraction: links.iter().map(|l| l.paused_fraction).fold(0.0, f64::max),
            max_ingress_bytes: self.fabric.max_ingress(),
            ingress_share_bytes: self.fabric.ingress_share(),
            headroom_bytes: self.pfc_headroom,
            most_paused: links.into_iter().take(10).collect(),
        }
    }
}

/// The state an event is handled with, borrowed once (`Simulation::parts`).
struct Parts<'a> {
    ctx: Ctx<'a>,
    fabric: &'a mut IoqFabric,
    nics: &'a mut Nics,
    work: &'a mut AnyWorkload,
    rng: &'a mut Pcg64Mcg,
    handed_over: &'a mut Vec<MessageDone>,
    now: &'a mut u64,
    events: &'a mut u64,
}

/// Puts back the first event past the end of the run, once, out of the event loop's way.
#[cold]
#[inline(never)]
fn put_back(queue: &mut EventQueue, time: u64, event: Event) {
    queue.push(time, event);
}

/// Hands the messages completed during a `Deliver` event to the workload, in the order
/// of completion. Its reactions complete none at once: a completing packet always
/// arrives as an event of its own (`Ctx::send_to_host`).
fn hand_over_completions(
    ctx: &mut Ctx,
    nics: &mut Nics,
    rng: &mut Pcg64Mcg,
    work: &mut AnyWorkload,
    handed_over: &mut Vec<MessageDone>,
) {
    match ctx.completions.as_deref_mut() {
        Some(completions) if !completions.is_empty() => std::mem::swap(completions, handed_over),
        _ => return,
    }
    for done in handed_over.drain(..) {
        work.message_done(&mut Env { ctx, nics, rng }, done);
    }
    debug_assert!(ctx.completions.as_deref().is_none_or(|c| c.is_empty()), "a reaction completed a message at once");
}

/// Calls the progress callback at most every 100 ms of wall time; the callback may
/// interrupt the run.
struct ProgressPacer<'a> {
    report: &'a mut dyn FnMut(f64) -> bool,
    last: Instant,
}

impl ProgressPacer<'_> {
    fn check(&mut self, done: f64) -> Result<()> {
        let wall = Instant::now();
        if wall.duration_since(self.last).as_millis() >= 100 {
            self.last = wall;
            if !(self.report)(done) {
                return Err(Error::Interrupted(format!("{:.1}% of the run", 100.0 * done)));
            }
        }
        Ok(())
    }
}

/// The group of `work` whose messages end the run (`simulation.stop_after.group`): the
/// config's traffic groups are checked by validation, a workload given in their place
/// here.
fn stop_group(work: &AnyWorkload, name: &str) -> Result<u16> {
    let groups = work.groups();
    if let Some(g) = groups.iter().position(|g| g.name == name) {
        return Ok(g as u16);
    }
    let hint =
        closest(name, groups.iter().map(|g| g.name)).map(|n| format!("; did you mean `{n}`?")).unwrap_or_default();
    Err(Error::config("simulation.stop_after.group", format!("the workload has no group `{name}`{hint}")))
}

/// Slowest hops a queue head may wait before the watchdog calls it stalled, unless
/// `simulation.watchdog` says otherwise: far beyond the waits of heavy congestion, where
/// round robin serves every input of a congested output in turn, and still a small part
/// of any run long enough to measure something.
pub const WATCHDOG_HOPS: u64 = 500;

/// The default watchdog interval of a fabric whose slowest hop (serialisation of an MTU,
/// link and switch latency) takes `slowest_hop`.
fn default_watchdog(slowest_hop: u64) -> u64 {
    WATCHDOG_HOPS * slowest_hop.max(1)
}

/// The switch buffers and link-level flow control of `config`.
fn fabric_params(config: &Config, vcs: usize) -> IoqParams {
    let mtu = config.nic.mtu.0;
    let measure_from = config.simulation.warmup.0;
    match &config.switch {
        SwitchConfig::Ioq { input_buffer, output_buffer, speedup, crossbar, input_queuing, latency, .. } => IoqParams {
            vcs,
            extra_queues: 0,
            input_capacity: input_buffer.0,
            output_capacity: output_buffer.0,
            shared_pool: 0,
            speedup: *speedup,
            per_vc_crossbar: *crossbar == Crossbar::PerVc,
            voq: *input_queuing == InputQueuing::Voq,
            receive_cap: config.nic.receive_cap,
            latency: latency.0,
            control: LinkControl::Credit,
            measure_from,
        },
        SwitchConfig::SharedBuffer { port_buffer, egress_cap, shared_pool, speedup, latency, .. } => {
            // With congestion isolation, each priority's congested-flow class (and queue)
            // ids follow the priorities', with thresholds of their own.
            let isolation = config.isolation.as_ref().map(|i| i.resolve(egress_cap.0, mtu));
            let cfqs = isolation.as_ref().map_or(0, |i| i.cfqs_per_port as usize);
            let threshold = |normal: &Thresholds, cfq: fn(&crate::config::Isolation) -> &Thresholds| -> Vec<u64> {
                let classes = (0..vcs * cfqs).map(|k| isolation.as_ref().map_or(0, |i| cfq(i).bytes(k / cfqs, mtu)));
                (0..vcs).map(|v| normal.bytes(v, mtu)).chain(classes).collect()
            };
            let control = match &config.flow_control {
                FlowControlConfig::Pfc { xoff, xon } => {
                    LinkControl::Pfc(PfcReceiver::new(threshold(xoff, |i| &i.cfq_xoff), threshold(xon, |i| &i.cfq_xon)))
                }
                _ => LinkControl::TailDrop,
            };
            IoqParams {
                vcs,
                extra_queues: 0,
                input_capacity: port_buffer.0 - egress_cap.0,
                output_capacity: egress_cap.0,
                shared_pool: shared_pool.0,
                speedup: *speedup,
                per_vc_crossbar: false,
                voq: false,
                // Validation refuses a receive cap without credits.
                receive_cap: None,
                latency: latency.0,
                control,
                measure_from,
            }
        }
    }
}

/// Registers the `observe.queues` probes, checking they name existing queues.
fn add_queue_probes(config: &Config, fabric: &mut IoqFabric, probes: &mut QueueProbes) -> Result<()> {
    for (i, q) in config.observe.queues.iter().enumerate() {
        let topo = fabric.topology();
        let at = format!("observe.queues.{i}");
        if q.switch as usize >= topo.num_switches() {
            return Err(Error::config(
                format!("{at}.switch"),
                format!("switch {} does not exist (the fabric has {})", q.switch, topo.num_switches()),
            ));
        }
        let ports = topo.num_ports(q.switch as usize);
        if q.port as usize >= ports {
            return Err(Error::config(
                format!("{at}.port"),
                format!("switch {} has ports 0..{}, found {}", q.switch, ports, q.port),
            ));
        }
        if q.priority >= config.switch.vcs() {
            return Err(Error::config(
                format!("{at}.priority"),
                format!("the switches have {} priorities (VCs), found {}", config.switch.vcs(), q.priority),
            ));
        }
        let probe = probes.add(q.switch, q.port, q.priority);
        fabric.add_probe(q.switch as usize, q.port as usize, q.priority as usize, probe);
    }
    Ok(())
}
