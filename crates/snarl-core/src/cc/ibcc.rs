//! InfiniBand congestion control, the NIC half (`congestion_control.type = "ibcc"`), as
//! the InfiniBand Architecture Specification 1.2.1 defines it and section II of Gran et
//! al. describes it; the switch half is [`super::fecn`].
//!
//! * **Destination.** A data packet arriving with the FECN mark is answered at once with a
//!   BECN: a 64-byte notification back to the source that travels the fabric like any
//!   packet (the NIC's CNP path), one per marked packet, never coalesced.
//! * **Source.** Each flow (queue pair; with `ccti_scope = "sl"` each source host and
//!   service level, the flow's VC) holds a congestion control table index, CCTI. It starts
//!   at `ccti_min`; each BECN raises it by `ccti_increase`, up to `ccti_limit`. A timer per
//!   host port and SL lowers every CCTI of that port-SL above `ccti_min` by one each time
//!   it expires. The timer runs free: it expires at the multiples of `ccti_timer`, whenever
//!   the index was raised, and it is scheduled only while some CCTI of its port-SL is
//!   above `ccti_min`.
//! * **Throttling.** The congestion control table (CCT) maps a CCTI to an inter-packet
//!   delay relative to the packet's own serialisation time T on the host link: entry
//!   i = (shift, multiplier), delay = (T >> shift) x multiplier, and the flow's next packet
//!   may start T + delay after this one started. The linear table (entry i = (0, i)) thus
//!   sends at R/(1 + i) at CCTI i; the quadratic one (entry i = (3, round(i²/16))) waits
//!   about i²/128 packet times, 126 at i = 127 where the linear one waits 127: slower to
//!   bite, the same at the top.
//!
//! Why linear suits the 648-host fat-tree of Gran et al.: a hotspot there has up to about
//! 65 contributors (80% of 648 hosts over 8 hotspots); each must come down to about 1/65
//! of its link for their sum to fit the hotspot's, which the linear table reaches near
//! index 64, half-way to the default limit of 127, leaving room for more contributors or
//! for overshoot, while every step below changes the rate by a fraction a single BECN can
//! correct.
//!
//! With `ccti_increase = 0`, or a marking threshold of 0, IB CC can never act: the kernel
//! then installs no marking and this control is inert (no BECN, no delay, `ccti_min`'s
//! included), so the run is the run without congestion control (flows still served round
//! robin).
//!
//! State: a [`FlowTable`] of the flows whose CCTI is above `ccti_min`, or that are at it
//! but still owe the delay of their last packet (released when they next send); with a
//! `ccti_min` whose entry has a delay, every flow that has sent keeps its entry. Each
//! port-SL keeps the list of its flows above `ccti_min`, which its timer walks.
//! Every CCTI change is reported (`TraceEvent::CctiChanged`).

use super::{CongestionControl, FlowKey, FlowTable};
use crate::config::{Cct, CctiScope, IbccConfig};
use crate::kernel::{Event, Timer, TimerKind};
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::packet::PacketKind;
use crate::routing::hash::flow_vc;
use strength_reduce::StrengthReducedUsize;

/// The code of the CCTI timer (`TimerKind::CongestionControl`); its owner is the
/// port-SL (host x VCs + SL).
pub const CCTI_TIMER: u8 = 0;

/// `FlowKey::dst` of a CCTI held per source host and SL (`qp` is then the SL).
const PER_SL: u32 = u32::MAX;

/// A congestion control table: (shift, multiplier) per CCTI, 0 to `ccti_limit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table(Vec<(u8, u16)>);

impl Table {
    /// The entries of `cct` for CCTIs 0 to `limit` (a validated config: an explicit table
    /// has them all, each within the specification's 2-bit shift and 14-bit multiplier).
    pub fn new(cct: &Cct, limit: u32) -> Table {
        let entry = |i: u64| -> (u64, u64) {
            match cct {
                Cct::Linear => (0, i),
                Cct::Quadratic => (3, (i * i + 8) / 16),
                Cct::Table(entries) => entries[i as usize],
            }
        };
        Table((0..=limit as u64).map(entry).map(|(s, m)| (s.min(3) as u8, m.min(16_383) as u16)).collect())
    }

    /// The delay after a packet of serialisation time `packet_time` at CCTI `ccti`.
    #[inline]
    pub fn delay(&self, ccti: u16, packet_time: u64) -> u64 {
        let (shift, multiplier) = self.0[ccti as usize];
        (packet_time >> shift) * multiplier as u64
    }
}

/// The state of a flow (or of a host-SL) with a CCTI.
struct Flow {
    ccti: u16,
    /// Its port-SL (host x VCs + SL), whose timer lowers it.
    port_sl: u32,
    /// In its port-SL's list (CCTI above `ccti_min`).
    listed: bool,
    /// Earliest start of its next packet.
    next_send: u64,
}

/// The flows above `ccti_min` of one host port and SL, and whether its timer is set.
#[derive(Default)]
struct PortSl {
    flows: Vec<u32>,
    timer_set: bool,
}

/// IB CC at every NIC.
pub struct Ibcc {
    /// Can never act (see the module documentation).
    inert: bool,
    increase: u32,
    limit: u16,
    min: u16,
    period: u64,
    scope: CctiScope,
    table: Table,
    /// A flow at `ccti_min` is delayed (its entry has a delay): every sending flow needs
    /// an entry to be paced.
    min_paces: bool,
    vcs: usize,
    vc_divisor: StrengthReducedUsize,
    flows: FlowTable<FlowKey, Flow>,
    /// By host x VCs + SL, grown as port-SLs get throttled.
    port_sls: Vec<PortSl>,
}

impl Ibcc {
    /// IB CC with `config` on fabrics of `vcs` VCs (service levels); `inert` if it can
    /// never act (`Config::ibcc_inert`).
    pub fn new(config: &IbccConfig, vcs: u32, inert: bool) -> Ibcc {
        let table = Table::new(&config.cct, config.ccti_limit);
        let min = config.ccti_min as u16;
        let min_paces = !inert && table.0[min as usize].1 > 0;
        Ibcc {
            inert,
            increase: config.ccti_increase,
            limit: config.ccti_limit as u16,
            min,
            period: config.ccti_timer.0 .0.max(1),
            scope: config.ccti_scope,
            table,
            min_paces,
            vcs: vcs.max(1) as usize,
            vc_divisor: StrengthReducedUsize::new(vcs.max(1) as usize),
            flows: FlowTable::default(),
            port_sls: Vec::new(),
        }
    }

    /// The CCT in force.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The CCTI of `flow` (`ccti_min` for a flow without state).
    pub fn ccti(&self, flow: &FlowKey) -> u16 {
        self.flows.find(&self.key(flow)).map_or(self.min, |f| self.flows.state(f).ccti)
    }

    /// What holds the CCTI of `flow`: the flow, or its source host and SL.
    #[inline]
    fn key(&self, flow: &FlowKey) -> FlowKey {
        match self.scope {
            CctiScope::Qp => *flow,
            CctiScope::Sl => FlowKey { src: flow.src, dst: PER_SL, qp: self.sl(flow) as u32 },
        }
    }

    #[inline]
    fn sl(&self, flow: &FlowKey) -> u8 {
        flow_vc(flow.src, flow.dst, flow.qp, &self.vc_divisor)
    }

    fn port_sl(&self, flow: &FlowKey) -> u32 {
        (flow.src as usize * self.vcs + self.sl(flow) as usize) as u32
    }

    /// The slot of `flow`, created at `ccti_min` if it has none.
    fn slot(&mut self, flow: &FlowKey) -> u32 {
        let (key, port_sl, min) = (self.key(flow), self.port_sl(flow), self.min);
        self.flows.find_or_insert(key, || Flow { ccti: min, port_sl, listed: false, next_send: 0 })
    }

    /// Sets the timer of `port_sl` for the next multiple of the period.
    fn set_timer(&mut self, ctx: &mut Ctx, port_sl: u32) {
        let at = (ctx.now / self.period + 1) * self.period;
        ctx.schedule(
            at,
            Event::Timer(Timer { owner: port_sl, epoch: 0, kind: TimerKind::CongestionControl(CCTI_TIMER) }),
        );
        self.port_sls[port_sl as usize].timer_set = true;
    }
}

impl CongestionControl for Ibcc {
    /// 0 for flows without state.
    #[inline(always)]
    fn next_send(&self, flow: &FlowKey) -> u64 {
        if self.flows.is_empty() {
            return 0;
        }
        self.flows.find(&self.key(flow)).map_or(0, |f| self.flows.state(f).next_send)
    }

    /// The flow's next packet may start `serialise` plus the CCT's delay at its CCTI from
    /// now. A flow back at an undelayed `ccti_min` gives up its state.
    #[inline]
    fn on_sent(&mut self, ctx: &mut Ctx, flow: &FlowKey, _bytes: u64, serialise: u64) {
        if self.flows.is_empty() && !self.min_paces {
            return;
        }
        let f = match self.flows.find(&self.key(flow)) {
            Some(f) => f,
            None if self.min_paces => self.slot(flow),
            None => return,
        };
        let state = self.flows.state_mut(f);
        state.next_send = ctx.now + serialise + self.table.delay(state.ccti, serialise);
        if state.ccti == self.min && !self.min_paces {
            self.flows.release(f);
        }
    }

    /// Every FECN-marked packet is answered with a BECN.
    fn on_marked(&mut self, _ctx: &mut Ctx, _flow: FlowKey) -> bool {
        !self.inert
    }

    /// A BECN: the flow's CCTI rises by `ccti_increase`, up to `ccti_limit`; its port-SL's
    /// timer is set if it was not.
    /// IB CC answers a FECN with a BECN.
    fn notification(&self) -> PacketKind {
        PacketKind::BECN
    }

    fn on_notification(&mut self, ctx: &mut Ctx, flow: FlowKey, _line: f64) {
        if self.inert {
            return;
        }
        let f = self.slot(&flow);
        let (increase, limit) = (self.increase, self.limit);
        let state = self.flows.state_mut(f);
        let from = state.ccti;
        let to = (from as u32).saturating_add(increase).min(limit as u32) as u16;
        if to == from {
            return;
        }
        state.ccti = to;
        let (port_sl, listed) = (state.port_sl, state.listed);
        state.listed = true;
        ctx.trace(TraceEvent::CctiChanged { from, to });
        if listed {
            return;
        }
        if port_sl as usize >= self.port_sls.len() {
            self.port_sls.resize_with(port_sl as usize + 1, PortSl::default);
        }
        self.port_sls[port_sl as usize].flows.push(f);
        if !self.port_sls[port_sl as usize].timer_set {
            self.set_timer(ctx, port_sl);
        }
    }

    /// The CCTI timer of port-SL `timer.owner`: every CCTI above `ccti_min` drops by one;
    /// the timer is set again while any stays above.
    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        let Some(port_sl) = self.port_sls.get_mut(timer.owner as usize) else { return };
        let mut i = 0;
        while i < port_sl.flows.len() {
            let state = self.flows.state_mut(port_sl.flows[i]);
            let from = state.ccti;
            state.ccti -= 1;
            ctx.trace(TraceEvent::CctiChanged { from, to: state.ccti });
            if state.ccti == self.min {
                state.listed = false;
                port_sl.flows.swap_remove(i);
            } else {
                i += 1;
            }
        }
        if port_sl.flows.is_empty() {
            port_sl.timer_set = false;
        } else {
            ctx.schedule(ctx.now + self.period, Event::Timer(timer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_world::World;
    use crate::config::{CctiTimer, CCTI_TIMER_UNIT_PS};
    use crate::units::Time;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    const FLOW: FlowKey = FlowKey { src: 1, dst: 2, qp: 0 };
    /// A 4 KiB packet on a 100 Gb/s link, ps.
    const PACKET: u64 = 327_680;

    fn ibcc(config: IbccConfig) -> Ibcc {
        Ibcc::new(&config, 1, false)
    }

    #[test]
    fn the_tables_give_their_documented_delays() {
        let linear = Table::new(&Cct::Linear, 127);
        for i in [0u16, 1, 5, 64, 127] {
            assert_eq!(linear.delay(i, PACKET), i as u64 * PACKET, "linear: i packet times at CCTI i");
        }
        let quadratic = Table::new(&Cct::Quadratic, 127);
        assert_eq!(quadratic.0[127], (3, 1008));
        assert_eq!(quadratic.delay(0, PACKET), 0);
        assert_eq!(quadratic.delay(8, PACKET), PACKET / 2, "8²/128 = 1/2 packet time");
        assert_eq!(quadratic.delay(127, PACKET), 126 * PACKET);
        for i in 1..=127u16 {
            let exact = (i as f64).powi(2) / 128.0 * PACKET as f64;
            assert!((quadratic.delay(i, PACKET) as f64 - exact).abs() <= PACKET as f64 / 16.0, "CCTI {i}");
        }
        let listed = Table::new(&Cct::Table(vec![(0, 0), (1, 3), (2, 16_383), (3, 8)]), 3);
        assert_eq!(listed.delay(1, PACKET), PACKET / 2 * 3);
        assert_eq!(listed.delay(2, PACKET), PACKET / 4 * 16_383);
        assert_eq!(listed.delay(3, PACKET), PACKET);
    }

    #[test]
    fn the_timer_is_in_units_of_1024_ns_or_a_duration() {
        assert_eq!(CctiTimer::default().0, Time(153_600_000), "150 units = 153.6 µs");
        let parse = |text: &str| toml::from_str::<IbccConfig>(&format!("ccti_timer = {text}")).map(|c| c.ccti_timer.0);
        assert_eq!(parse("150").unwrap(), Time(150 * CCTI_TIMER_UNIT_PS));
        assert_eq!(parse("1").unwrap(), Time(1_024_000));
        assert_eq!(parse("\"150us\"").unwrap(), Time(150_000_000));
        assert!(parse("-1").is_err());
        assert!(parse("\"150 parsecs\"").is_err());
        // Written back as units when it is a whole number of them.
        let out =
            |ps| toml::to_string(&IbccConfig { ccti_timer: CctiTimer(Time(ps)), ..IbccConfig::default() }).unwrap();
        assert!(out(150 * CCTI_TIMER_UNIT_PS).contains("ccti_timer = 150\n"), "{}", out(150 * CCTI_TIMER_UNIT_PS));
        assert!(out(150_000_000).contains("ccti_timer = \"150us\""), "{}", out(150_000_000));
    }

    #[test]
    fn becns_raise_the_ccti_and_the_timer_lowers_it_within_bounds() {
        let config = IbccConfig { ccti_increase: 5, ccti_limit: 12, ccti_min: 2, ..IbccConfig::default() };
        let period = config.ccti_timer.0 .0;
        let mut cc = ibcc(config);
        let mut w = World::new();
        assert_eq!(cc.ccti(&FLOW), 2, "a flow starts at ccti_min");
        cc.on_notification(&mut w.ctx(1_000), FLOW, 100e9);
        assert_eq!(cc.ccti(&FLOW), 7);
        for k in 0..4 {
            cc.on_notification(&mut w.ctx(2_000 + k), FLOW, 100e9);
            assert!(cc.ccti(&FLOW) <= 12);
        }
        assert_eq!(cc.ccti(&FLOW), 12, "held at ccti_limit");
        // The timer runs free: its first expiry is at the period, not a period after the BECN.
        assert_eq!(w.run_timers(&mut cc, period - 1), 0);
        assert_eq!(w.run_timers(&mut cc, period), 1);
        assert_eq!(cc.ccti(&FLOW), 11);
        // Ten more expiries bring it to ccti_min, where it stays: then no timer is set.
        assert_eq!(w.run_timers(&mut cc, 100 * period), 9);
        assert_eq!(cc.ccti(&FLOW), 2);
        assert!(w.queue.pop().is_none(), "no timer while every CCTI is at ccti_min");
        // A BECN between expiries: the next one is at the following multiple.
        cc.on_notification(&mut w.ctx(100 * period + 7), FLOW, 100e9);
        assert_eq!(w.queue.pop().map(|(at, _)| at), Some(101 * period));
    }

    #[test]
    fn the_ccti_never_leaves_its_bounds_under_random_becns_and_timers() {
        use rand::Rng;
        let config = IbccConfig { ccti_increase: 3, ccti_limit: 20, ccti_min: 1, ..IbccConfig::default() };
        let period = config.ccti_timer.0 .0;
        let mut cc = Ibcc::new(&config, 2, false);
        let mut w = World::new();
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let flows: Vec<FlowKey> = (0..6).map(|i| FlowKey { src: i % 2, dst: 2 + i, qp: i % 3 }).collect();
        let mut now = 0;
        for _ in 0..5_000 {
            now += rng.random_range(0..period / 3);
            w.run_timers(&mut cc, now);
            let flow = flows[rng.random_range(0..flows.len())];
            cc.on_notification(&mut w.ctx(now), flow, 100e9);
            for f in &flows {
                assert!((1..=20).contains(&cc.ccti(f)), "{f:?}: {}", cc.ccti(f));
            }
        }
        w.run_timers(&mut cc, now + 30 * period);
        assert!(flows.iter().all(|f| cc.ccti(f) == 1), "the timers bring every flow back to ccti_min");
        assert!(w.queue.pop().is_none());
    }

    #[test]
    fn flows_are_paced_by_their_ccti() {
        let mut cc = ibcc(IbccConfig::default());
        let mut w = World::new();
        cc.on_sent(&mut w.ctx(0), &FLOW, 4096, PACKET);
        assert_eq!(cc.next_send(&FLOW), 0, "an unthrottled flow has no state");
        for _ in 0..3 {
            cc.on_notification(&mut w.ctx(10), FLOW, 100e9);
        }
        cc.on_sent(&mut w.ctx(1_000), &FLOW, 4096, PACKET);
        assert_eq!(cc.next_send(&FLOW), 1_000 + 4 * PACKET, "CCTI 3 of the linear table: R/4");
        let other = FlowKey { qp: 1, ..FLOW };
        assert_eq!(cc.next_send(&other), 0, "per queue pair");
        // With ccti_min above an undelayed entry, every flow is paced from its first packet.
        let mut floor = ibcc(IbccConfig { ccti_min: 4, ..IbccConfig::default() });
        floor.on_sent(&mut w.ctx(0), &other, 4096, PACKET);
        assert_eq!(floor.next_send(&other), 5 * PACKET);
    }

    #[test]
    fn the_sl_scope_throttles_every_flow_of_the_host_and_sl() {
        let mut cc = Ibcc::new(&IbccConfig { ccti_scope: CctiScope::Sl, ..IbccConfig::default() }, 1, false);
        let mut w = World::new();
        cc.on_notification(&mut w.ctx(0), FLOW, 100e9);
        let sibling = FlowKey { dst: 9, qp: 3, ..FLOW };
        assert_eq!(cc.ccti(&sibling), 1, "one CCTI per host and SL");
        assert_eq!(cc.ccti(&FlowKey { src: 0, ..FLOW }), 0, "another host is not throttled");
        cc.on_sent(&mut w.ctx(0), &sibling, 4096, PACKET);
        assert_eq!(cc.next_send(&FLOW), 2 * PACKET, "the SL is paced as one");
    }

    #[test]
    fn inert_control_never_answers_or_delays() {
        let mut cc = Ibcc::new(&IbccConfig { ccti_min: 10, ..IbccConfig::default() }, 1, true);
        let mut w = World::new();
        assert!(!cc.on_marked(&mut w.ctx(0), FLOW));
        cc.on_notification(&mut w.ctx(0), FLOW, 100e9);
        cc.on_sent(&mut w.ctx(0), &FLOW, 4096, PACKET);
        assert_eq!(cc.next_send(&FLOW), 0);
        assert!(w.queue.pop().is_none());
    }
}
