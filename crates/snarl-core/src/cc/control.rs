//! The NIC half of congestion control: per-flow state at the senders (the reaction
//! point) and the receivers (the notification point), driven by what the NIC sees.

use super::dcqcn::Dcqcn;
use super::flows::FlowKey;
use super::ibcc::Ibcc;
use super::per_pair::PerPair;
use crate::config::{Config, CongestionControlConfig};
use crate::kernel::Timer;
use crate::model::Ctx;
use crate::packet::{Packet, PacketKind};

/// What `CongestionControl::next_send` answers for a flow that may not send until an
/// acknowledgement arrives (a window-based control whose window is full): the flow is
/// skipped, no wake-up is set for it, and the next ACK or NACK of its host (`on_ack`)
/// wakes the flow scheduler.
pub const BLOCKED: u64 = u64::MAX;

/// What a destination answers a data packet with on the receive path (`on_data`), and
/// what its source hears (`on_ack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acknowledgement {
    Ack,
    Nack,
    /// An ACK of a data packet a switch marked, echoing the mark: a control that learns
    /// of congestion from its acknowledgements (the per-pair control) needs no separate
    /// notification.
    AckMarked,
}

impl Acknowledgement {
    /// The kind of the packet that carries it.
    pub fn kind(self) -> PacketKind {
        match self {
            Acknowledgement::Ack => PacketKind::ACK,
            Acknowledgement::Nack => PacketKind::NACK,
            Acknowledgement::AckMarked => PacketKind::ACK_MARKED,
        }
    }

    /// The acknowledgement a control packet of `kind` (ACK, NACK or marked ACK) carries.
    pub fn of(kind: PacketKind) -> Acknowledgement {
        if kind == PacketKind::NACK {
            Acknowledgement::Nack
        } else if kind == PacketKind::ACK_MARKED {
            Acknowledgement::AckMarked
        } else {
            Acknowledgement::Ack
        }
    }
}

/// A NIC-side congestion control. The NIC asks it when a flow may send and tells it
/// what happens; what it schedules for itself comes back as `TimerKind::CongestionControl`
/// timers.
///
/// Rate-based controls (DCQCN, IB CC) answer `next_send` with a time and react to
/// marked packets and notifications. Window-based ones (the per-pair control) also ask
/// for the receive path (`wants_receipts`): every data packet then reaches its
/// destination NIC as an event, where `on_data` may send an acknowledgement back, which
/// `on_ack` hears at the source; `next_send` gates a flow on them by answering
/// [`BLOCKED`].
pub trait CongestionControl {
    /// Earliest time `flow` may start its next packet (0: now; [`BLOCKED`]: not until an
    /// acknowledgement arrives).
    fn next_send(&self, flow: &FlowKey) -> u64;

    /// A packet of `bytes` of `flow` starts now at its source; it takes `serialise` ps on
    /// the host link. `bytes` is its payload (byte counters and windows count what the
    /// flow delivers); `serialise` is its frame's time on the wire, header and framing
    /// included.
    fn on_sent(&mut self, ctx: &mut Ctx, flow: &FlowKey, bytes: u64, serialise: u64);

    /// Notification point: a data packet of `flow` that a switch marked reached its
    /// destination now. Returns whether the destination notifies the source (with a
    /// packet of kind `notification()`).
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

    /// Whether every data packet must reach its destination NIC as an event and be
    /// handed to `on_data` (the receive path). Asked once, when the run is built; a
    /// control that says no keeps the fast path, where plain data is accounted without
    /// an event.
    fn wants_receipts(&self) -> bool {
        false
    }

    /// Receive path: data packet `packet` of `flow` reached its destination now (after
    /// `on_marked`, if it was marked), just before it is delivered. Returns the
    /// acknowledgement the destination sends back to the source, if any: it leaves from
    /// the NIC's control queue, as a CNP does, on the flow's VC.
    fn on_data(&mut self, _ctx: &mut Ctx, _flow: FlowKey, _packet: &Packet) -> Option<Acknowledgement> {
        None
    }

    /// An acknowledgement for `flow` reached its source now. The source's flow scheduler
    /// tries to send right after.
    fn on_ack(&mut self, _ctx: &mut Ctx, _flow: FlowKey, _ack: Acknowledgement) {}
}

/// The NIC-side congestion controls, dispatched statically.
pub enum AnyCongestionControl {
    Dcqcn(Dcqcn),
    Ibcc(Ibcc),
    PerPair(PerPair),
    /// A congestion control made outside this crate, installed with
    /// `Simulation::with_components`.
    Custom(Box<dyn CongestionControl + Send>),
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
            CongestionControlConfig::PerPair(per_pair) => {
                Some(AnyCongestionControl::PerPair(PerPair::new(per_pair, config)))
            }
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $call:expr) => {
        match $self {
            AnyCongestionControl::Dcqcn($c) => $call,
            AnyCongestionControl::Ibcc($c) => $call,
            AnyCongestionControl::PerPair($c) => $call,
            AnyCongestionControl::Custom($c) => $call,
        }
    };
}

impl CongestionControl for AnyCongestionControl {
    #[inline(always)]
    fn next_send(&self, flow: &FlowKey) -> u64 {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.next_send(flow),
            AnyCongestionControl::Ibcc(c) => c.next_send(flow),
            AnyCongestionControl::PerPair(c) => c.next_send(flow),
            AnyCongestionControl::Custom(c) => custom_next_send(c.as_ref(), flow),
        }
    }

    #[inline]
    fn on_sent(&mut self, ctx: &mut Ctx, flow: &FlowKey, bytes: u64, serialise: u64) {
        match self {
            AnyCongestionControl::Dcqcn(c) => c.on_sent(ctx, flow, bytes, serialise),
            AnyCongestionControl::Ibcc(c) => c.on_sent(ctx, flow, bytes, serialise),
            AnyCongestionControl::PerPair(c) => c.on_sent(ctx, flow, bytes, serialise),
            AnyCongestionControl::Custom(c) => custom_on_sent(c.as_mut(), ctx, flow, bytes, serialise),
        }
    }

    fn on_marked(&mut self, ctx: &mut Ctx, flow: FlowKey) -> bool {
        dispatch!(self, c => c.on_marked(ctx, flow))
    }

    fn notification(&self) -> PacketKind {
        dispatch!(self, c => c.notification())
    }

    fn on_notification(&mut self, ctx: &mut Ctx, flow: FlowKey, line: f64) {
        dispatch!(self, c => c.on_notification(ctx, flow, line))
    }

    fn on_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        dispatch!(self, c => c.on_timer(ctx, timer))
    }

    fn wants_receipts(&self) -> bool {
        dispatch!(self, c => c.wants_receipts())
    }

    fn on_data(&mut self, ctx: &mut Ctx, flow: FlowKey, packet: &Packet) -> Option<Acknowledgement> {
        dispatch!(self, c => c.on_data(ctx, flow, packet))
    }

    fn on_ack(&mut self, ctx: &mut Ctx, flow: FlowKey, ack: Acknowledgement) {
        dispatch!(self, c => c.on_ack(ctx, flow, ack))
    }
}

// A custom control's calls on the per-packet path stay out of line, so that the
// built-in arms inline as they did without it.
#[inline(never)]
fn custom_next_send(c: &(dyn CongestionControl + Send), flow: &FlowKey) -> u64 {
    c.next_send(flow)
}

#[inline(never)]
fn custom_on_sent(c: &mut (dyn CongestionControl + Send), ctx: &mut Ctx, flow: &FlowKey, bytes: u64, serialise: u64) {
    c.on_sent(ctx, flow, bytes, serialise)
}
