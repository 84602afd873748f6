//! The models of a run composed into the one [`Model`] the kernel dispatches to: each
//! event goes to the component it targets. Also the watchdog's checks, which inspect the
//! fabric's queues.

use crate::config::TimeUnit;
use crate::error::{Deadlock, Error, Result};
use crate::flow_control::{CreditReturns, Feedback};
use crate::kernel::{find_cycles, Event, Kernel, MessageDone, Model, StallTracker, Timer, TimerKind};
use crate::model::Ctx;
use crate::nic::Nics;
use crate::observe::{BlockedHost, FabricSample, SampledQueue, Stats};
use crate::packet::PacketSlab;
use crate::switch::IoqFabric;
use crate::traffic::{AnyWorkload, Env, Workload};
use rand_pcg::Pcg64Mcg;

/// Every model of a run: the switch fabric (which owns the topology and the routing),
/// the NICs (with their congestion control), and the workload with its random stream.
pub struct World {
    pub fabric: IoqFabric,
    pub nics: Nics,
    pub work: AnyWorkload,
    pub traffic_rng: Pcg64Mcg,
    /// The completions being handed to the workload (`hand_over_completions`).
    pub handed_over: Vec<MessageDone>,
    /// Queues whose head stopped moving (the watchdog), and when it checks next.
    pub stalls: StallTracker,
    pub next_check: u64,
    pub time_unit: TimeUnit,
}

impl Model<Stats> for World {
    #[inline(always)]
    fn arrive(&mut self, ctx: &mut Ctx, port: u32, packet: u32) {
        self.fabric.arrive(ctx, port, packet)
    }

    #[inline(always)]
    fn alloc_retry(&mut self, ctx: &mut Ctx, output: u32) {
        self.fabric.alloc_retry(ctx, output)
    }

    #[inline(always)]
    fn link_wake(&mut self, ctx: &mut Ctx, port: u32) {
        self.fabric.link_wake(ctx, port)
    }

    #[inline(always)]
    fn feedback_to_switch(&mut self, ctx: &mut Ctx, port: u32, feedback: Feedback) {
        self.fabric.feedback(ctx, port, feedback)
    }

    #[inline(always)]
    fn feedback_to_host(&mut self, ctx: &mut Ctx, host: u32, feedback: Feedback) {
        match feedback {
            Feedback::Credit { queue, bytes } => self.nics.credit(ctx, host, queue as usize, bytes as u64),
            Feedback::Pause { queue, on } => self.nics.pause(ctx, host, queue as usize, on),
            Feedback::Isolate { mirror } => self.nics.isolate(ctx, host, self.fabric.isolation_key(mirror)),
        }
    }

    #[inline(always)]
    fn deliver(&mut self, ctx: &mut Ctx, packet: u32) {
        self.nics.receive(ctx, packet);
        // Only a `Deliver` event completes messages when the workload hears of
        // completions (`Ctx::send_to_host`).
        if ctx.completions.is_some() {
            hand_over_completions(ctx, &mut self.nics, &mut self.traffic_rng, &mut self.work, &mut self.handed_over);
        }
    }

    #[inline(always)]
    fn host_wake(&mut self, ctx: &mut Ctx, host: u32) {
        self.nics.wake_event(ctx, host)
    }

    fn local_send(&mut self, ctx: &mut Ctx, message: u32) {
        self.nics.local_send(ctx, message)
    }

    fn local_deliver(&mut self, ctx: &mut Ctx, message: u32) {
        self.nics.local_deliver(ctx, message);
        if ctx.completions.is_some() {
            hand_over_completions(ctx, &mut self.nics, &mut self.traffic_rng, &mut self.work, &mut self.handed_over);
        }
    }

    /// The first lines the event's handler reads: on fabrics larger than the cache they
    /// are fetched while the events before it run.
    #[inline(always)]
    fn prefetch(&self, ctx: &Ctx, event: Event) {
        match event {
            Event::Arrive { port, packet } => {
                ctx.packets.prefetch(packet);
                self.fabric.prefetch_input(port);
            }
            Event::LinkWake { port } | Event::AllocRetry { output: port } | Event::FeedbackToSwitch { port, .. } => {
                self.fabric.prefetch_output(port)
            }
            Event::Deliver { packet } => ctx.packets.prefetch(packet),
            Event::HostWake { host } | Event::FeedbackToHost { host, .. } => self.nics.prefetch(host),
            _ => {}
        }
    }

    /// The lines the first ones lead to: the packet an arrival queues behind, the
    /// packets an output chooses among, the message a delivery completes, the message a
    /// host sends from next.
    #[inline(always)]
    fn prefetch_dependent(&self, ctx: &Ctx, event: Event) {
        match event {
            Event::Arrive { port, packet } => self.fabric.prefetch_input_dependent(port, ctx, packet),
            Event::LinkWake { port } | Event::FeedbackToSwitch { port, .. } => {
                self.fabric.prefetch_output_dependent(port, ctx.packets)
            }
            Event::AllocRetry { output } => self.fabric.prefetch_first_request(output as usize),
            Event::Deliver { packet } => ctx.messages.prefetch(ctx.packets[packet].message),
            Event::HostWake { host } => self.nics.prefetch_dependent(ctx, host),
            _ => {}
        }
    }

    #[inline(always)]
    fn timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match timer.kind {
            TimerKind::Workload(_) => {
                self.work.timer(&mut Env { ctx, nics: &mut self.nics, rng: &mut self.traffic_rng }, timer)
            }
            TimerKind::CongestionControl(_) => self.nics.cc_timer(ctx, timer),
            TimerKind::Fabric(_) => self.fabric.timer(ctx, timer),
        }
    }

    fn check_progress(&mut self, kernel: &mut Kernel<Stats>) -> Result<u64> {
        let now = kernel.now;
        if now >= self.next_check {
            let packets = &kernel.packets;
            let heads = self.fabric.queue_heads().map(|(queue, packet)| (queue, packet, packets[packet].injected));
            self.stalls.observe(heads);
            self.find_deadlock(kernel)?;
            self.next_check = now + self.stalls.period();
        }
        // The collectors that sample the fabric (`observe::FabricSample`) whose time has come.
        let collectors = &mut kernel.observers.collectors;
        if collectors.next_sample().is_some_and(|at| at <= now) {
            let fabric = Snapshot {
                fabric: &self.fabric,
                nics: &self.nics,
                packets: &kernel.packets,
                host_returns: &kernel.host_returns,
                now,
            };
            collectors.sample(now, &fabric);
        }
        Ok(self.next_check(&kernel.observers))
    }
}

/// The fabric as the collectors that sample it read it, at `now`: the switches' queues
/// (`IoqFabric::sample_queue`, whose waits are the watchdog's) and the NICs' blocked links.
struct Snapshot<'a> {
    fabric: &'a IoqFabric,
    nics: &'a Nics,
    packets: &'a PacketSlab,
    host_returns: &'a CreditReturns,
    now: u64,
}

impl FabricSample for Snapshot<'_> {
    fn queue_ids(&self) -> u32 {
        self.fabric.queue_ids()
    }

    fn each_queue(&self, f: &mut dyn FnMut(&SampledQueue)) {
        for (queue, _) in self.fabric.queue_heads() {
            f(&self.fabric.sample_queue(self.packets, queue, self.now));
        }
    }

    fn queue(&self, id: u32) -> SampledQueue {
        self.fabric.sample_queue(self.packets, id, self.now)
    }

    fn each_blocked_host(&self, f: &mut dyn FnMut(&BlockedHost)) {
        for host in 0..self.nics.hosts() {
            let Some(port) = self.nics.attachment(host) else { continue };
            for vc in 0..self.nics.vcs() {
                if self.nics.blocked_on(host, vc, self.host_returns, self.now) {
                    let (switch, local) = self.fabric.port_of(port);
                    let waits_for = self.fabric.waits_for_input(self.packets, port as usize, vc);
                    f(&BlockedHost { host: host as u32, vc: vc as u32, switch, port: local, waits_for });
                }
            }
        }
    }
}

impl World {
    /// When the outer loop is due next: the watchdog's check, or a sample of the fabric.
    pub fn next_check(&self, stats: &Stats) -> u64 {
        stats.collectors.next_sample().map_or(self.next_check, |at| at.min(self.next_check))
    }

    /// Starts the workload (its first timers: generations, phase boundaries).
    pub fn start(&mut self, ctx: &mut Ctx) {
        self.work.start(&mut Env { ctx, nics: &mut self.nics, rng: &mut self.traffic_rng });
        hand_over_completions(ctx, &mut self.nics, &mut self.traffic_rng, &mut self.work, &mut self.handed_over);
    }

    /// Fails if no packet moved anywhere for the watchdog interval while packets are in
    /// flight, or if switch queues whose heads did not move for that long wait on each
    /// other in a cycle (a deadlock that traffic elsewhere does not end).
    pub fn find_deadlock(&self, kernel: &Kernel<Stats>) -> Result<()> {
        let (now, stats, packets) = (kernel.now, &kernel.observers, &kernel.packets);
        let in_flight = stats.packet_counts().in_flight;
        let frozen = in_flight > 0 && now.saturating_sub(stats.last_moved) >= self.stalls.interval();
        let found = |deadlock: Deadlock| {
            let at = self.show_time(now);
            let when = Deadlock { at, interval: self.show_time(self.stalls.interval()), ..deadlock };
            Err(Error::Deadlock(Box::new(when)))
        };
        let nothing = Deadlock { in_flight, ..Deadlock::default() };
        if frozen {
            return found(Deadlock { stuck: in_flight, blocked: self.fabric.blocked_ports(packets, 10), ..nothing });
        }
        // Between checks a head may have moved: only those still in place count.
        let head = |q: u32| self.fabric.queue_head(q).map(|p| (p, packets[p].injected));
        let stalled = self.stalls.stalled(now, head);
        let Some(cycles) = find_cycles(&stalled, |q| self.fabric.waits_for(packets, q)) else {
            return Ok(());
        };
        let on_cycles = cycles.cycles.iter().flatten().map(|&q| (q, true));
        let queues: Vec<(u32, bool)> = on_cycles.chain(cycles.blocked.iter().map(|&q| (q, false))).collect();
        let shown = queues.iter().take(10).map(|&(q, on_cycle)| self.fabric.describe_queue(packets, q, on_cycle));
        found(Deadlock {
            cycles: cycles.cycles.len(),
            queues_on_cycles: queues.len() - cycles.blocked.len(),
            queues_waiting: cycles.blocked.len(),
            stuck: queues.iter().map(|&(q, _)| self.fabric.queue_len(packets, q) as u64).sum(),
            blocked: shown.collect(),
            ..nothing
        })
    }

    /// `t` (ps) in the run's time unit, for messages.
    fn show_time(&self, t: u64) -> String {
        match self.time_unit {
            TimeUnit::Ns => crate::units::Time(t).to_string(),
            TimeUnit::Cycles => format!("{}cycles", t as f64 / super::PS_PER_UNIT),
        }
    }
}

/// Hands the messages completed during a `Deliver` or `LocalDeliver` event to the
/// workload, in the order of completion. Its reactions complete none at once: a
/// completing packet always arrives as an event of its own (`Ctx::send_to_host`), as
/// does a message over the intra-node link.
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
