//! The discrete-event kernel: the clock, the event queue, what a component may touch
//! while it handles an event ([`Ctx`]), and the loop that pops events in (time, sequence)
//! order and dispatches them by `match` to a [`Model`]. It builds nothing, reports
//! nothing and names no model: the assembly layer (`sim/`) composes the models into one
//! [`Model`] and the observers into one [`Observer`], and the kernel is generic over both,
//! so dispatch stays static.

mod context;
mod event;
mod event_queue;
mod observer;
mod peer;
mod stop;
mod trace;
mod watchdog;

pub use context::{Ctx, MessageDone};
pub use event::{Event, Timer, TimerKind};
pub(crate) use event_queue::Entry;
pub use event_queue::EventQueue;
pub use observer::Observer;
pub use peer::Peer;
pub use stop::Stop;
pub use trace::{IsolationEvent, ReceiverEvent, TraceEvent};
pub use watchdog::{find_cycles, StallTracker, WaitCycles, BYTES_PER_QUEUE as WATCHDOG_BYTES_PER_QUEUE};

use crate::error::{Error, Result};
use crate::flow_control::{CreditReturns, Feedback};
use crate::packet::{MessageSlab, PacketSlab};
use rand_pcg::Pcg64Mcg;
use std::time::Instant;

/// What handles the kernel's events: the fabric, the NICs and the workload, composed by
/// the assembly layer. One method per event kind, each the entry point of the component
/// the event targets.
pub trait Model<O> {
    /// The head of `packet` reaches input port `port` (global id) of a switch.
    fn arrive(&mut self, ctx: &mut Ctx<O>, port: u32, packet: u32);
    /// Output `output` retries crossbar allocation.
    fn alloc_retry(&mut self, ctx: &mut Ctx<O>, output: u32);
    /// Output port `port` may be able to transmit.
    fn link_wake(&mut self, ctx: &mut Ctx<O>, port: u32);
    /// Flow-control feedback reaches switch output `port`.
    fn feedback_to_switch(&mut self, ctx: &mut Ctx<O>, port: u32, feedback: Feedback);
    /// Flow-control feedback reaches the NIC of `host`.
    fn feedback_to_host(&mut self, ctx: &mut Ctx<O>, host: u32, feedback: Feedback);
    /// The tail of `packet` reaches its destination NIC.
    fn deliver(&mut self, ctx: &mut Ctx<O>, packet: u32);
    /// The NIC of `host` may be able to inject.
    fn host_wake(&mut self, ctx: &mut Ctx<O>, host: u32);
    /// Message `message` starts over the intra-node link.
    fn local_send(&mut self, ctx: &mut Ctx<O>, message: u32);
    /// Message `message` reaches its destination over the intra-node link.
    fn local_deliver(&mut self, ctx: &mut Ctx<O>, message: u32);
    /// A component's timer fired.
    fn timer(&mut self, ctx: &mut Ctx<O>, timer: Timer);
    /// An event due soon: the model may ask the cache for the state its handler reads
    /// first (`memory::prefetch`). A hint that must change nothing.
    #[inline(always)]
    fn prefetch(&self, _ctx: &Ctx<O>, _event: Event) {}
    /// An event due sooner, whose first lines `prefetch` asked for: the model may read
    /// them to ask for the lines they lead to (a queue's head packet, a packet's
    /// message, the return ring a credit goes to). A hint that must change nothing.
    #[inline(always)]
    fn prefetch_dependent(&self, _ctx: &Ctx<O>, _event: Event) {}
    /// The periodic progress check (not simulated work: it must not change results;
    /// the observers may sample the run's state there); returns when the next one is due.
    fn check_progress(&mut self, kernel: &mut Kernel<O>) -> Result<u64>;
}

/// The state every component shares: the clock, the event queue, the packets and
/// messages, the observers and what travels between components. Each component keeps
/// its own state in the [`Model`].
pub struct Kernel<O> {
    pub now: u64,
    /// End of the run: the duration, or sooner the delivery that completes `stop`.
    pub end: u64,
    /// Events handled (the watchdog's checks are not counted).
    pub events: u64,
    pub queue: EventQueue,
    pub packets: PacketSlab,
    pub messages: MessageSlab,
    pub observers: O,
    /// The routing's random stream (the traffic's belongs to the workload's side).
    pub routing_rng: Pcg64Mcg,
    /// Credits travelling back along the host links.
    pub host_returns: CreditReturns,
    /// Messages completed during the current event, when the model hears of completions.
    pub completions: Option<Vec<MessageDone>>,
    /// The messages that end the run (`simulation.stop_after`).
    pub stop: Option<Stop>,
    /// The run loop asks the model to prefetch for the events ahead (`Model::prefetch`):
    /// worth its instructions only where the run's state outgrows the cache.
    pub lookahead: bool,
}

impl<O: Observer> Kernel<O> {
    /// Borrows the shared state as the context events are handled with.
    #[inline]
    pub fn ctx(&mut self) -> Ctx<'_, O> {
        Ctx {
            now: self.now,
            end: self.end,
            queue: &mut self.queue,
            packets: &mut self.packets,
            messages: &mut self.messages,
            stats: &mut self.observers,
            routing_rng: &mut self.routing_rng,
            host_returns: &mut self.host_returns,
            completions: self.completions.as_mut(),
            stop: self.stop.as_mut(),
        }
    }

    /// Runs `model` to the end of the run (its duration, or the stop), calling
    /// `progress(fraction_done)` at most every 100 ms of wall time; `progress` returning
    /// `false` interrupts the run.
    pub fn run<M: Model<O>>(&mut self, model: &mut M, progress: &mut dyn FnMut(f64) -> bool) -> Result<()> {
        let mut pacer = ProgressPacer { report: progress, last: Instant::now() };
        // Events run in an inner loop that borrows the state once; the watchdog, which
        // inspects the whole run, comes back here.
        while let Some(time) = self.run_events(model, &mut pacer)? {
            self.now = time;
            let next = model.check_progress(self)?;
            self.queue.push(next, Event::Watchdog);
        }
        // A run that reached its stop ends there: the delivery that reached it set the end
        // of the run to now, so every event left is at or after it.
        if let Some(at) = self.stop.as_ref().and_then(Stop::reached) {
            self.end = at;
        }
        (pacer.report)(1.0);
        Ok(())
    }

    /// Dispatches events until the end of the run (`None`) or until a watchdog event,
    /// whose time it returns.
    fn run_events<M: Model<O>>(&mut self, model: &mut M, pacer: &mut ProgressPacer) -> Result<Option<u64>> {
        let mut events = self.events;
        let lookahead = self.lookahead;
        let mut ctx = self.ctx();
        let mut end = ctx.end;
        let mut found = None;
        while let Some((time, event)) = ctx.queue.pop() {
            if time >= end {
                // Left pending, as every later event: the end counts what was arriving.
                put_back(ctx.queue, time, event);
                break;
            }
            ctx.now = time;
            events += 1;
            if lookahead && ctx.queue.left_in_bucket() > PREFETCH_AHEAD {
                if let Some(later) = ctx.queue.upcoming(PREFETCH_AHEAD) {
                    model.prefetch(&ctx, later);
                }
                if let Some(soon) = ctx.queue.upcoming(PREFETCH_DEPENDENT_AHEAD) {
                    model.prefetch_dependent(&ctx, soon);
                }
            }
            match event {
                Event::Arrive { port, packet } => model.arrive(&mut ctx, port, packet),
                Event::AllocRetry { output } => model.alloc_retry(&mut ctx, output),
                Event::LinkWake { port } => model.link_wake(&mut ctx, port),
                Event::FeedbackToSwitch { port, feedback } => model.feedback_to_switch(&mut ctx, port, feedback),
                Event::FeedbackToHost { host, feedback } => model.feedback_to_host(&mut ctx, host, feedback),
                Event::Deliver { packet } => {
                    model.deliver(&mut ctx, packet);
                    // A delivery may end the run (`simulation.stop_after`).
                    end = ctx.end;
                }
                Event::HostWake { host } => model.host_wake(&mut ctx, host),
                Event::LocalSend { message } => model.local_send(&mut ctx, message),
                Event::LocalDeliver { message } => {
                    model.local_deliver(&mut ctx, message);
                    // Its completion may end the run, as a network delivery's may.
                    end = ctx.end;
                }
                Event::Timer(timer) => model.timer(&mut ctx, timer),
                Event::Watchdog => {
                    // The checks are not simulated work: the summary must not depend on
                    // the watchdog interval.
                    events -= 1;
                    found = Some(time);
                    break;
                }
            }
            if events & 0xffff == 0 {
                if let Err(e) = pacer.check(time as f64 / end as f64) {
                    let now = ctx.now;
                    self.now = now;
                    self.events = events;
                    return Err(e);
                }
            }
        }
        let now = ctx.now;
        self.now = now;
        self.events = events;
        Ok(found)
    }
}

/// Runs on fabrics of this many switch ports or more prefetch for the events ahead. A
/// port's state (its line, queues, credits, return ring, request mask) is about 400
/// bytes with four VCs, so from here the state the events read at random outgrows a
/// core's 1 MiB second-level cache, and the last level, shared with the other cores'
/// work, holds it only on an idle machine; the hints cost 270-380 instructions per
/// packet-hop and save more than that from here up (bench/results.md). Fabrics of a few
/// hundred ports stay in the second level and skip them.
pub const LOOKAHEAD_FROM: u64 = 1024;

/// How many events ahead of the one being handled the model is asked to prefetch for:
/// far enough that the lines arrive before they are needed, near enough that they are
/// still cached when they are.
const PREFETCH_AHEAD: usize = 6;
/// How many events ahead it is asked for the lines those lead to: half-way, when the
/// first lines have arrived.
const PREFETCH_DEPENDENT_AHEAD: usize = 3;

/// Puts back the first event past the end of the run, once, out of the event loop's way.
#[cold]
#[inline(never)]
fn put_back(queue: &mut EventQueue, time: u64, event: Event) {
    queue.push(time, event);
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
