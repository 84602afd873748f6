//! Building a run from a validated config: the topology, the routing, the switch fabric,
//! the NICs and their congestion control, the workload, and the observers the run's
//! mechanisms and the config ask for.

use super::components::Components;
use super::world::World;
use super::Simulation;
use crate::cc::{AnyCongestionControl, AnyMarking};
use crate::config::{
    Config, Crossbar, FlowControlConfig, InputQueuing, NicScheduling, SwitchConfig, Thresholds, ValidConfig,
};
use crate::error::{closest, Error, Result};
use crate::flow_control::{CreditReturns, PfcReceiver};
use crate::install::{self, Install};
use crate::kernel::{EventQueue, Kernel, StallTracker, Stop};
use crate::nic::Nics;
use crate::observe::{
    collectors_for_run, AnyCollector, Counted, HotspotTime, IdealFct, PerPacket, PerPairWindows, PfcCounters,
    ProbedQueue, QueueProbes, QueueSeries, ReceiverCounts, Setup, Stats,
};
use crate::packet::{MessageSlab, PacketSlab};
use crate::routing::hash::mix64;
use crate::routing::AnyRouting;
use crate::switch::{IoqFabric, IoqParams, LinkControl};
use crate::topology::{self, Topology};
use crate::traffic::{AnyWorkload, Workload};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

impl Simulation {
    pub(super) fn build(config: &ValidConfig, parts: Components, extra_queues: usize) -> Result<Simulation> {
        // Fabrics the topology refuses by their size get that error; those that would not
        // fit in memory are refused here, before anything is allocated.
        if topology::within_limits(&config.topology.shape) {
            crate::memory::check(config)?;
        }
        let topo = topology::build(&config.topology.shape, &config.links)?;
        if topo.num_hosts() < 2 {
            return Err(Error::Topology("a fabric needs at least two hosts".into()));
        }
        let vcs = config.switch.vcs() as usize;
        let routing = match parts.routing {
            Some(routing) => routing,
            None => AnyRouting::build(&config.routing, &topo, vcs, config.nic.frame())?,
        };
        let sim = &config.simulation;
        // The mechanisms that change the switches and the NICs install themselves, each
        // at its step below (`install`); the queues they add follow the priorities'.
        let mechanisms = install::for_run(config);
        let extra_queues = extra_queues + mechanisms.iter().map(|m| m.extra_queues(vcs)).sum::<usize>();
        let params = IoqParams { extra_queues, ..fabric_params(config, vcs, &mechanisms) };
        let host_credits = matches!(params.control, LinkControl::Credit).then_some(params.input_capacity);
        let mut fabric = IoqFabric::new(topo, routing, params)?;
        let warnings = fabric.warnings(config.nic.frame());
        for mechanism in &mechanisms {
            mechanism.fabric(&mut fabric)?;
        }
        let topo = fabric.topology();
        let hosts = topo.num_hosts();
        let wire = config.nic.wire();
        let packet_time = topo.host_link(0).rate.serialize(wire.on_link(config.nic.frame()));
        let mut nics = Nics::new(
            topo,
            |s, p| fabric.global_port(s, p),
            vcs,
            host_credits,
            config.nic.mtu.0,
            wire,
            // A job posts a step's sends at once: the queue holds them all.
            (config.nic.source_queue as usize).max(config.workload.posts_at_once(hosts, config.topology.gpus_per_node)),
            sim.warmup.0,
        )?;
        nics.set_injection_vc(config.nic.injection_vc);
        let gpus_per_node = config.topology.gpus_per_node;
        if gpus_per_node > 1 {
            nics.enable_intra_node(topology::Nodes::new(hosts, gpus_per_node), config.links.intra_node)?;
        }
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
        for mechanism in &mechanisms {
            mechanism.nics(&mut nics, sim.warmup.0)?;
        }
        // A mix's parts are streams, each with its own bound in the source queue.
        nics.set_streams(config.traffic.streams())?;
        let turns = config.nic.scheduling.is_none() && config.workload.serves_flows_in_turn();
        if config.nic.scheduling == Some(NicScheduling::RoundRobin) || turns {
            nics.enable_flow_scheduling()?;
        }
        if let Some(cc) = parts.congestion_control.or_else(|| AnyCongestionControl::build(config)) {
            nics.enable_congestion_control(cc)?;
        }
        if let Some(receiver) = config.nic.receiver_in_force(config) {
            nics.enable_sequencing(receiver)?;
        }
        let work = match parts.workload {
            Some(work) => work,
            None => AnyWorkload::build(config, hosts, nics.rate(0), &mut traffic_rng)?,
        };
        for mechanism in &mechanisms {
            mechanism.workload(&mut fabric, &work)?;
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
            per_packet: PerPacket { mtu: config.nic.mtu.0, bytes: wire.header + wire.framing },
        };
        let mut stats = Stats::new(groups, sim.warmup.0, window, end, ideal, config.nic.mtu.0)?;
        stats.pfc = PfcCounters::for_run(config);
        stats.per_pair = PerPairWindows::for_run(config);
        stats.receiver = ReceiverCounts::for_run(config);
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
            None => work.ends_run().then(Stop::workload),
        };
        if stop.is_some() || nics.receipts() {
            // Every delivery arrives as an event at its time, so the run can end exactly at
            // the one that completes the stop (`Ctx::deliver`), and the NICs' receive path
            // (a congestion control's, a receiver's) hears of every data packet.
            stats.settle_before = 0;
        }
        stats.congestion_counters = config.congestion_terms();
        stats.intra_node = gpus_per_node > 1;
        // The optional collectors: each built-in one decides whether the run has what it
        // measures (`observe::collectors_for_run`); queue probes are registered with the fabric.
        let group_names: Vec<String> = work.groups().iter().map(|g| g.name.to_string()).collect();
        let setup = Setup {
            config,
            topology: fabric.topology(),
            queues_per_port: fabric.queues(),
            window,
            end,
            measure_from: sim.warmup.0,
            congestion_counters: stats.congestion_counters,
            host_groups,
            group_names: &group_names,
        };
        for collector in collectors_for_run(&setup)? {
            stats.collectors.add(collector);
        }
        let mut probes = QueueProbes::new(sim.warmup.0);
        if let Some((kmin, kmax)) = marking.as_ref().and_then(|m| m.red_thresholds()) {
            probes.set_ecn_thresholds(kmin, kmax);
        }
        add_queue_probes(config, &mut fabric, &mut probes)?;
        if !probes.probes.is_empty() {
            let queues = probes
                .probes
                .iter()
                .map(|p| ProbedQueue {
                    switch: p.switch,
                    port: p.port,
                    priority: p.priority,
                    global_port: fabric.global_port(p.switch as usize, p.port as usize),
                })
                .collect();
            let counted = Counted::for_config(config);
            stats.collectors.add(AnyCollector::QueueSeries(QueueSeries::new(queues, window, end, counted)?));
            stats.collectors.add(AnyCollector::Queues(probes));
        }
        // Calendar sizing: a fabric of H hosts keeps about H events per 1/4 packet time in
        // flight; buckets of ~4 events and a wheel spanning two packet times keep nearly
        // every event out of the overflow heap while the wheel stays cache-sized.
        let hosts = hosts as u64;
        let bucket = (packet_time * 4 / hosts).max(16);
        let wheel_bits = (hosts / 2).max(1024).ilog2();
        let watchdog = sim.watchdog.map_or_else(|| default_watchdog(fabric.slowest_hop(config.nic.frame())), |w| w.0);
        let kernel = Kernel {
            now: 0,
            end,
            events: 0,
            queue: EventQueue::new(bucket, wheel_bits)?,
            // Validation keeps the header with the MTU within 32 bits.
            packets: PacketSlab::with_header(wire.header as u32),
            messages: MessageSlab::new(),
            observers: stats,
            routing_rng,
            host_returns: CreditReturns::new(hosts as usize)?,
            completions: want_completions.then(|| Vec::with_capacity(64)),
            stop,
            lookahead: fabric.looks_ahead(),
        };
        let world = World {
            fabric,
            nics,
            work,
            traffic_rng,
            handed_over: Vec::with_capacity(if want_completions { 64 } else { 0 }),
            stalls: StallTracker::new(watchdog),
            next_check: 0,
            time_unit: sim.time_unit,
        };
        let mut simulation = Simulation {
            kernel,
            world,
            seed: config.seed,
            time_unit: sim.time_unit,
            lossless: !matches!(config.flow_control, FlowControlConfig::None {}),
            warnings,
        };
        simulation.start();
        Ok(simulation)
    }

    /// Starts the workload; the watchdog's first check is due one period in (`run`
    /// schedules it, once every collector that samples the fabric is known).
    fn start(&mut self) {
        let Simulation { kernel, world, .. } = self;
        world.start(&mut kernel.ctx());
        world.next_check = world.stalls.period();
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

/// The switch buffers and link-level flow control of `config`, with the PFC thresholds
/// of the queues `mechanisms` add.
fn fabric_params(config: &Config, vcs: usize, mechanisms: &[Box<dyn Install>]) -> IoqParams {
    // Thresholds in packets count frames: what the buffers hold.
    let mtu = config.nic.frame();
    let framing = config.nic.framing.0;
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
            framing,
            control: LinkControl::Credit,
            measure_from,
        },
        SwitchConfig::SharedBuffer { port_buffer, egress_cap, shared_pool, speedup, latency, .. } => {
            // The queues (classes) mechanisms add follow the priorities', with
            // thresholds of their own.
            let (mut extra_xoff, mut extra_xon) = (Vec::new(), Vec::new());
            for mechanism in mechanisms {
                let (xoff, xon) = mechanism.extra_thresholds(vcs, mtu);
                extra_xoff.extend(xoff);
                extra_xon.extend(xon);
            }
            let threshold =
                |normal: &Thresholds, extra: Vec<u64>| (0..vcs).map(|v| normal.bytes(v, mtu)).chain(extra).collect();
            let control = match &config.flow_control {
                FlowControlConfig::Pfc { xoff, xon } => {
                    LinkControl::Pfc(PfcReceiver::new(threshold(xoff, extra_xoff), threshold(xon, extra_xon)))
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
                framing,
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
