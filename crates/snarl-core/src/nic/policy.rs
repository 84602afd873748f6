//! What differs between flow schedulers, as types rather than flags: the class a flow's
//! packet goes out in ([`SendClass`]) and how the congestion control is asked when a flow
//! may send ([`Pacing`]). The scheduler is generic over both and each hook is inlined, so
//! a NIC pays only for what its run has.

use super::Nics;
use crate::cc::dcqcn::Dcqcn;
use crate::cc::ibcc::Ibcc;
use crate::cc::{AnyCongestionControl, CongestionControl, FlowKey};

/// The class (what PFC pauses) a packet of the flow (host `h` to `dst`, queue pair `qp`,
/// VC `vc`) leaves in.
pub(super) trait SendClass {
    fn class(nics: &Nics, h: usize, dst: u32, qp: u32, vc: u8, now: u64) -> u8;
}

/// Every flow in its VC's own class.
pub(super) struct ByPriority;

impl SendClass for ByPriority {
    #[inline(always)]
    fn class(_nics: &Nics, _h: usize, _dst: u32, _qp: u32, vc: u8, _now: u64) -> u8 {
        vc
    }
}

/// Flows a switch told the NIC to isolate go in their priority's congested-flow class.
pub(super) struct Isolating;

impl SendClass for Isolating {
    #[inline(always)]
    fn class(nics: &Nics, h: usize, dst: u32, qp: u32, vc: u8, now: u64) -> u8 {
        nics.isolated_class(h, dst, qp, vc, now)
    }
}

/// How the scheduler asks the congestion control when a flow may send next: the control
/// is looked up once per scheduling decision (`control`), then asked per flow
/// (`next_send`), so the loop over the flows calls the built-in controls directly.
pub(super) trait Pacing {
    type Control: ?Sized;

    /// The control to ask, if the NICs have one of this kind.
    fn control(cc: Option<&AnyCongestionControl>) -> Option<&Self::Control>;

    /// Earliest time `flow` may send its next packet.
    fn next_send(control: &Self::Control, flow: &FlowKey) -> u64;
}

/// DCQCN's rate limiters.
pub(super) struct ByDcqcn;

impl Pacing for ByDcqcn {
    type Control = Dcqcn;

    #[inline(always)]
    fn control(cc: Option<&AnyCongestionControl>) -> Option<&Dcqcn> {
        match cc {
            Some(AnyCongestionControl::Dcqcn(c)) => Some(c),
            _ => None,
        }
    }

    #[inline(always)]
    fn next_send(control: &Dcqcn, flow: &FlowKey) -> u64 {
        control.next_send(flow)
    }
}

/// InfiniBand CC's congestion control table delays.
pub(super) struct ByIbcc;

impl Pacing for ByIbcc {
    type Control = Ibcc;

    #[inline(always)]
    fn control(cc: Option<&AnyCongestionControl>) -> Option<&Ibcc> {
        match cc {
            Some(AnyCongestionControl::Ibcc(c)) => Some(c),
            _ => None,
        }
    }

    #[inline(always)]
    fn next_send(control: &Ibcc, flow: &FlowKey) -> u64 {
        control.next_send(flow)
    }
}

/// Any other, asked through `AnyCongestionControl`'s own `match`: the per-pair control
/// (whose arm is inlined there: a flow's check is a lookup of its pair, and a scheduler
/// instantiated for it would make the rate-based ones' larger), a control made outside
/// the crate (`AnyCongestionControl::Custom`), asked through its trait object, or none
/// (round robin without congestion control).
pub(super) struct Opaque;

impl Pacing for Opaque {
    type Control = AnyCongestionControl;

    #[inline(always)]
    fn control(cc: Option<&AnyCongestionControl>) -> Option<&AnyCongestionControl> {
        cc
    }

    #[inline(always)]
    fn next_send(control: &AnyCongestionControl, flow: &FlowKey) -> u64 {
        control.next_send(flow)
    }
}
