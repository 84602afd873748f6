//! What differs between flow schedulers, as types rather than flags: the class a flow's
//! packet goes out in ([`SendClass`]) and how the congestion control is asked when a flow
//! may send ([`Pacing`]). The scheduler is generic over both and each hook is inlined, so
//! a NIC pays only for what its run has.

use super::Nics;
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

/// How the scheduler asks the congestion control when `flow` may send next.
pub(super) trait Pacing {
    fn next_send(cc: &AnyCongestionControl, flow: &FlowKey) -> u64;
}

/// A built-in control, inlined whole: no opaque call makes the scheduler's loop reload
/// its state at every flow.
pub(super) struct BuiltIn;

impl Pacing for BuiltIn {
    #[inline(always)]
    fn next_send(cc: &AnyCongestionControl, flow: &FlowKey) -> u64 {
        cc.next_send_built_in(flow)
    }
}

/// A control made outside the crate (`AnyCongestionControl::Custom`), asked through its
/// trait object.
pub(super) struct Opaque;

impl Pacing for Opaque {
    #[inline(always)]
    fn next_send(cc: &AnyCongestionControl, flow: &FlowKey) -> u64 {
        cc.next_send(flow)
    }
}
