//! The NIC half of congestion control: per-flow state at the senders (the reaction
//! point) and the receivers (the notification point), driven by what the NIC sees.

use super::dcqcn::Dcqcn;
use super::flows::FlowKey;
use super::ibcc::Ibcc;
use crate::config::{Config, CongestionControlConfig};
use crate::kernel::{Ctx, Timer};
use crate::packet::PacketKind;

/// A NIC-side congestion control. The NIC asks it when a flow may send and tells it
/// what happens; what it schedules for itself comes back as `TimerKind::CongestionControl`
/// timers.
pub trait CongestionControl {
    /// Earliest time `flow` may start its next packet (0: now).
    fn next_send(&self, flow: &FlowKey) -> u64;

    /// A packet of `bytes` of `flow` starts now at its source; it takes `serialise` ps on
    /// the host link.
    fn on_sent(&mut self, ctx: &mut Ctx, flow: &FlowKey, bytes: u64, serialise: u64);

    /// Notification point: a data packet of `flow` that a switch marked reached its
    /// destination now. Returns whether the destination notifies the source (a CNP).
    fn on_marked(&mut self, ctx: &mut Ctx, flow: FlowKey) -> bool;

    /// The kind of notification `on_marked` asks for: a CNP (DCQCN), a BECN (IB CC).
    fn notification(&self) -> PacketKind {
        PacketKind::CNP
    }

    /// Reaction point: a notification for `flow` reached its source, whose link runs at
    /// `line` bits/s.
    fn on_notification(&mut self, ctx: &mut Ctx, flow: FlowKey, line: f64);

    /// One of its timers fired.
    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer);
}

/// The NIC-side congestion controls, dispatched statically.
pub enum AnyCongestionControl {
    Dcqcn(Dcqcn),
    Ibcc(Ibcc),
}

impl AnyCongestionControl {
    /// The congestion control of `config`, if it has one.
    pub fn build(config: &Config) -> Option<AnyCongestionControl> {
        match &config.congestion_control {
            CongestionControlConfig::None {} => None,
            CongestionControlConfig::Dcqcn(dcqcn) => Some(AnyCongestionControl::Dcqcn(Dcqcn::new(dcqcn))),
            CongestionControlConfig::Ibcc(ibcc) => {
                Some(AnyCongestionControl::Ibcc(Ibcc::new(ibcc, config.switch.vcs(), config.ibcc_inert())))
            }
        }
    }
}

impl CongestionControl for AnyCongestionControl {
    #[inline(always)]
    fn next_send(&self, flow: &FlowKey) -> u64 {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.next_send(flow),
            AnyCongestionControl::Ibcc(c) => c.next_send(flow),
        }
    }

    #[inline]
    fn on_sent(&mut self, ctx: &mut Ctx, flow: &FlowKey, bytes: u64, serialise: u64) {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.on_sent(ctx, flow, bytes, serialise),
            AnyCongestionControl::Ibcc(c) => c.on_sent(ctx, flow, bytes, serialise),
        }
    }

    fn on_marked(&mut self, ctx: &mut Ctx, flow: FlowKey) -> bool {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.on_marked(ctx, flow),
            AnyCongestionControl::Ibcc(c) => c.on_marked(ctx, flow),
        }
    }

    fn notification(&self) -> PacketKind {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.notification(),
            AnyCongestionControl::Ibcc(c) => c.notification(),
        }
    }

    fn on_notification(&mut self, ctx: &mut Ctx, flow: FlowKey, line: f64) {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.on_notification(ctx, flow, line),
            AnyCongestionControl::Ibcc(c) => c.on_notification(ctx, flow, line),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.on_timer(ctx, timer),
            AnyCongestionControl::Ibcc(c) => c.on_timer(ctx, timer),
        }
    }
}
