//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
//! 2015), per flow, at the NICs.
//!
//! * Notification point (receiver): a marked data packet of a flow triggers a CNP unless
//!   one was sent for that flow less than N ago.
//! * Reaction point (sender), on a CNP: Rt ← Rc, Rc ← Rc·(1 − α/2), α ← (1 − g)·α + g, and
//!   the rate-increase timer, the byte counter and their stage counts restart. Without a
//!   CNP for K, α ← (1 − g)·α. Rate increases come from a timer (every T) and a byte
//!   counter (every B bytes sent); with i the smaller of the two stage counts:
//!   fast recovery while both counts are at most F (Rc ← (Rt + Rc)/2), hyper increase when
//!   both exceed F (Rt ← Rt + (i − F)·R_HAI), additive increase otherwise
//!   (Rt ← Rt + R_AI), each followed by Rc ← (Rt + Rc)/2. Rc and Rt never exceed the line
//!   rate; a cut never takes Rc below the minimum rate.
//!
//! Defaults and their sources:
//!
//! | parameter | default | source |
//! |---|---|---|
//! | g | 1/256 | DCQCN paper; csg-htsim `dcqcn.cpp` (`_g = 1/256`) |
//! | N (`cnp_interval`) | 50 µs | DCQCN paper; htsim `DCQCNSink::_cnp_interval` |
//! | K (`alpha_timer`) | 55 µs | DCQCN paper; htsim `_cc_update_period`; HPCC ns-3 `rdma-hw.cc` `AlphaResumInterval` |
//! | T (`rate_timer`) | 55 µs | DCQCN paper (its tuned timer; Mellanox' first default was 1.5 ms, HPCC `RPTimer`); htsim |
//! | B (`byte_counter`) | 10 MB | DCQCN paper; htsim `_B = 10000000` |
//! | F (`fast_recovery_steps`) | 5 | DCQCN paper; htsim `_F`; HPCC `FastRecoveryTimes` |
//! | R_AI (`rate_ai`) | 40 Mb/s | DCQCN paper |
//! | R_HAI (`rate_hai`) | 400 Mb/s | 10 · R_AI, the ratio of HPCC's `RateHAI`/`RateAI` (50/5 Mb/s) |
//! | minimum rate | 100 Mb/s | HPCC `MinRate`; htsim `_minimum_rate_bps` |
//! | Kmin, Kmax, Pmax | 5 KB, 200 KB, 1% | DCQCN paper (switch marking, `cc::ecn`) |
//!
//! A flow has no state until its first CNP: it then starts from the line rate with
//! α = 1, as in the paper. Its state is released once it is back at line rate (Rc is
//! snapped to the line rate when Rt is there and Rc is within a millionth of it), which
//! also cancels its timers; its next CNP starts afresh.

use super::{CongestionControl, FlowKey, FlowMap, FlowTable};
use crate::config::DcqcnConfig;
use crate::kernel::{Event, Timer, TimerKind};
use crate::model::Ctx;
use crate::observe::TraceEvent;

/// DCQCN parameters in simulator units: picoseconds, bytes, bits/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub g: f64,
    pub cnp_interval: u64,
    pub alpha_timer: u64,
    pub rate_timer: u64,
    pub byte_counter: u64,
    pub fast_recovery: u32,
    pub rate_ai: f64,
    pub rate_hai: f64,
    pub min_rate: f64,
}

impl Params {
    pub fn new(c: &DcqcnConfig) -> Params {
        Params {
            g: c.g,
            cnp_interval: c.cnp_interval.0,
            alpha_timer: c.alpha_timer.0,
            rate_timer: c.rate_timer.0,
            byte_counter: c.byte_counter.0,
            fast_recovery: c.fast_recovery_steps,
            rate_ai: c.rate_ai.0 as f64,
            rate_hai: c.rate_hai.0 as f64,
            min_rate: c.min_rate.0 as f64,
        }
    }
}

/// The reaction point's state of one flow; rates in bits/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rp {
    /// Current rate Rc.
    pub rc: f64,
    /// Target rate Rt.
    pub rt: f64,
    pub alpha: f64,
    /// Rate-timer expiries since the last cut.
    pub timer_stage: u32,
    /// Byte-counter expiries since the last cut.
    pub byte_stage: u32,
    /// Bytes sent since the last byte-counter expiry (or cut).
    pub bytes: u64,
}

impl Rp {
    /// A flow at line rate with α = 1.
    pub fn new(line: f64) -> Rp {
        Rp { rc: line, rt: line, alpha: 1.0, timer_stage: 0, byte_stage: 0, bytes: 0 }
    }

    /// A CNP arrived: cut the rate and restart the increase stages.
    pub fn on_cnp(&mut self, p: &Params) {
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(p.min_rate.min(self.rc));
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
    }

    /// K elapsed without a CNP.
    pub fn on_alpha_timer(&mut self, p: &Params) {
        self.alpha *= 1.0 - p.g;
    }

    /// T elapsed: one rate-increase event.
    pub fn on_rate_timer(&mut self, p: &Params, line: f64) {
        self.timer_stage = self.timer_stage.saturating_add(1);
        self.increase(p, line);
    }

    /// `bytes` were sent; returns whether the byte counter expired (and the rate rose).
    pub fn on_sent(&mut self, p: &Params, line: f64, bytes: u64) -> bool {
        self.bytes += bytes;
        if self.bytes < p.byte_counter {
            return false;
        }
        self.bytes -= p.byte_counter;
        self.byte_stage = self.byte_stage.saturating_add(1);
        self.increase(p, line);
        true
    }

    fn increase(&mut self, p: &Params, line: f64) {
        let most = self.timer_stage.max(self.byte_stage);
        let least = self.timer_stage.min(self.byte_stage);
        if most <= p.fast_recovery {
            // Fast recovery: towards the rate before the cut.
        } else if least > p.fast_recovery {
            self.rt += (least - p.fast_recovery) as f64 * p.rate_hai;
        } else {
            self.rt += p.rate_ai;
        }
        self.rt = self.rt.min(line);
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
        if self.rt >= line && line - self.rc <= line * 1e-6 {
            self.rc = line;
        }
    }

    pub fn at_line_rate(&self, line: f64) -> bool {
        self.rc >= line
    }
}

/// The codes of DCQCN's timers (`TimerKind::CongestionControl`).
pub const ALPHA_TIMER: u8 = 0;
pub const RATE_TIMER: u8 = 1;

/// A throttled flow's reaction point.
struct Flow {
    rp: Rp,
    line: f64,
    /// Earliest start of the flow's next packet (rate enforcement).
    next_send: u64,
}

/// The DCQCN state of all NICs: throttled flows (their epochs bumped on every cut and at
/// release, so older timers are stale), and the receivers' last CNP time per flow.
pub struct Dcqcn {
    params: Params,
    flows: FlowTable<FlowKey, Flow>,
    last_cnp: FlowMap<u64>,
}

impl Dcqcn {
    pub fn new(config: &DcqcnConfig) -> Dcqcn {
        Dcqcn { params: Params::new(config), flows: FlowTable::default(), last_cnp: FlowMap::default() }
    }

    /// Notification point: a marked packet of `key` reached its destination at `now`.
    /// Returns whether a CNP is due.
    pub fn should_notify(&mut self, key: FlowKey, now: u64) -> bool {
        let interval = self.params.cnp_interval;
        match self.last_cnp.get_mut(&key) {
            Some(last) if now - *last < interval => false,
            Some(last) => {
                *last = now;
                true
            }
            None => {
                self.last_cnp.insert(key, now);
                true
            }
        }
    }

    /// Records the new rate of slot `f`; releases the flow if it is back at line rate.
    /// Returns whether it was released.
    fn after_increase(&mut self, ctx: &mut Ctx, f: u32) -> bool {
        self.record(ctx, f, false);
        let flow = self.flows.state(f);
        if !flow.rp.at_line_rate(flow.line) {
            return false;
        }
        self.flows.release(f);
        true
    }

    /// Reports the new rate of slot `f` (after a cut, when `cut`).
    fn record(&self, ctx: &mut Ctx, f: u32, cut: bool) {
        let FlowKey { src, dst, qp } = self.flows.key(f);
        ctx.trace(TraceEvent::RateChanged { src, dst, qp, rate_bps: self.flows.state(f).rp.rc, cut });
    }
}

impl CongestionControl for Dcqcn {
    /// 0 for flows that are not throttled.
    #[inline(always)]
    fn next_send(&self, key: &FlowKey) -> u64 {
        if self.flows.is_empty() {
            return 0;
        }
        self.flows.find(key).map_or(0, |f| self.flows.state(f).next_send)
    }

    /// Paces the flow's next packet at its rate and runs its byte counter.
    #[inline]
    fn on_sent(&mut self, ctx: &mut Ctx, key: &FlowKey, size: u64, _serialise: u64) {
        let Some(f) = self.flows.find(key) else { return };
        let p = self.params;
        let flow = self.flows.state_mut(f);
        flow.next_send = ctx.now + (size as f64 * 8e12 / flow.rp.rc).ceil() as u64;
        if flow.rp.on_sent(&p, flow.line, size) {
            self.after_increase(ctx, f);
        }
    }

    /// A CNP is due unless one went out for the flow less than N ago.
    fn on_marked(&mut self, ctx: &mut Ctx, key: FlowKey) -> bool {
        self.should_notify(key, ctx.now)
    }

    /// A CNP: cut the rate, restart the increase stages and the timers.
    fn on_notification(&mut self, ctx: &mut Ctx, key: FlowKey, line: f64) {
        let f = self.flows.find_or_insert(key, || Flow { rp: Rp::new(line), line, next_send: 0 });
        let p = self.params;
        self.flows.state_mut(f).rp.on_cnp(&p);
        let epoch = self.flows.bump_epoch(f);
        ctx.schedule(
            ctx.now + p.alpha_timer,
            Event::Timer(Timer { owner: f, epoch, kind: TimerKind::CongestionControl(ALPHA_TIMER) }),
        );
        ctx.schedule(
            ctx.now + p.rate_timer,
            Event::Timer(Timer { owner: f, epoch, kind: TimerKind::CongestionControl(RATE_TIMER) }),
        );
        self.record(ctx, f, true);
    }

    /// Alpha decay or a rate increase of flow slot `timer.owner`; stale timers (older
    /// epoch) are ignored.
    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        let p = self.params;
        let Some(flow) = self.flows.current(timer.owner, timer.epoch) else { return };
        if timer.kind == TimerKind::CongestionControl(ALPHA_TIMER) {
            flow.rp.on_alpha_timer(&p);
            ctx.schedule(ctx.now + p.alpha_timer, Event::Timer(timer));
        } else {
            flow.rp.on_rate_timer(&p, flow.line);
            if !self.after_increase(ctx, timer.owner) {
                ctx.schedule(ctx.now + p.rate_timer, Event::Timer(timer));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: f64 = 100e9;

    fn params() -> Params {
        Params::new(&DcqcnConfig::default())
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "got {got}, want {want}");
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = params();
        assert_eq!(p.g, 1.0 / 256.0);
        assert_eq!((p.cnp_interval, p.alpha_timer, p.rate_timer), (50_000_000, 55_000_000, 55_000_000));
        assert_eq!((p.byte_counter, p.fast_recovery), (10_000_000, 5));
        assert_eq!((p.rate_ai, p.rate_hai, p.min_rate), (40e6, 400e6, 100e6));
    }

    #[test]
    fn first_cut_halves_and_raises_alpha() {
        let p = params();
        let mut rp = Rp::new(LINE);
        rp.on_cnp(&p);
        close(rp.rt, 100e9);
        close(rp.rc, 50e9);
        close(rp.alpha, 1.0); // (1 - g)·1 + g
                              // Second cut with α = 1 again halves: 25 Gb/s, target 50.
        rp.on_cnp(&p);
        close(rp.rt, 50e9);
        close(rp.rc, 25e9);
    }

    #[test]
    fn cut_uses_alpha_and_respects_the_minimum() {
        let p = params();
        let mut rp = Rp { alpha: 0.5, ..Rp::new(LINE) };
        rp.on_cnp(&p);
        close(rp.rc, 75e9); // 100 · (1 − 0.25)
        close(rp.alpha, 0.5 * 255.0 / 256.0 + 1.0 / 256.0);
        let mut slow = Rp { rc: 150e6, rt: 150e6, alpha: 1.0, ..Rp::new(LINE) };
        slow.on_cnp(&p);
        close(slow.rc, 100e6);
    }

    #[test]
    fn alpha_decays_without_cnps() {
        let p = params();
        let mut rp = Rp::new(LINE);
        for _ in 0..3 {
            rp.on_alpha_timer(&p);
        }
        close(rp.alpha, (255.0f64 / 256.0).powi(3));
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper() {
        let p = params();
        let mut rp = Rp::new(LINE);
        rp.on_cnp(&p); // rc 50, rt 100
                       // Five timer events of fast recovery: rc halves its distance to rt each time.
        let mut want = 50e9;
        for _ in 0..5 {
            rp.on_rate_timer(&p, LINE);
            want = (100e9 + want) / 2.0;
            close(rp.rc, want);
            close(rp.rt, 100e9);
        }
        // Below line rate the target would now grow; start from a lower target instead.
        let mut rp = Rp { rc: 20e9, rt: 30e9, alpha: 0.5, timer_stage: 5, byte_stage: 0, bytes: 0 };
        rp.on_rate_timer(&p, LINE); // timer stage 6 > F, byte stage 0: additive
        close(rp.rt, 30e9 + 40e6);
        close(rp.rc, (30.04e9 + 20e9) / 2.0);
        // Both stages past F: hyper increase by (min − F) · R_HAI.
        let mut rp = Rp { rc: 20e9, rt: 30e9, alpha: 0.5, timer_stage: 7, byte_stage: 7, bytes: 0 };
        rp.on_rate_timer(&p, LINE); // stages 8 and 7: i = 7 − 5 = 2
        close(rp.rt, 30e9 + 2.0 * 400e6);
        close(rp.rc, (30.8e9 + 20e9) / 2.0);
    }

    #[test]
    fn byte_counter_counts_bytes_and_resets_on_cut() {
        let p = params();
        let mut rp = Rp::new(LINE);
        rp.on_cnp(&p);
        assert!(!rp.on_sent(&p, LINE, 9_999_999));
        assert!(rp.on_sent(&p, LINE, 4096));
        assert_eq!((rp.byte_stage, rp.bytes), (1, 4095));
        close(rp.rc, 75e9); // fast recovery
        rp.on_cnp(&p);
        assert_eq!((rp.byte_stage, rp.timer_stage, rp.bytes), (0, 0, 0));
    }

    #[test]
    fn rates_stay_within_line_rate_and_snap_back() {
        let p = params();
        let mut rp = Rp { rc: 99.9e9, rt: 100e9, alpha: 0.1, timer_stage: 20, byte_stage: 20, bytes: 0 };
        for _ in 0..40 {
            rp.on_rate_timer(&p, LINE);
            assert!(rp.rc <= LINE && rp.rt <= LINE);
        }
        assert!(rp.at_line_rate(LINE));
    }

    #[test]
    fn notification_point_spaces_cnps() {
        let mut d = Dcqcn::new(&DcqcnConfig::default());
        let key = FlowKey { src: 1, dst: 2, qp: 0 };
        assert!(d.should_notify(key, 1_000));
        assert!(!d.should_notify(key, 1_000 + 49_999_999));
        assert!(d.should_notify(FlowKey { qp: 1, ..key }, 2_000));
        assert!(d.should_notify(key, 1_000 + 50_000_000));
    }
}
