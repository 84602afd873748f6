//! The input and output queues of every port and their accounting.

use super::IoqFabric;
use crate::packet::Fifo;

/// An input VC queue, with the size and output VC of its head packet's request beside
/// it, so that arbitration, which may look at a waiting request many times, need not read
/// the packet, and finds it in the line it reads the queue from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InputQueue {
    pub(super) fifo: Fifo,
    pub(super) request_size: u32,
    pub(super) request_vc: u8,
}

/// An output VC queue and the output-buffer bytes it accounts for (queued, plus a packet
/// on the wire until its tail has left): read and written together on every grant and
/// transmission.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OutputQueue {
    pub(super) fifo: Fifo,
    pub(super) used: u64,
}

/// No probe on this queue.
pub(super) const NO_PROBE: u16 = u16::MAX;

impl IoqFabric {
    /// Output queue bytes of global port `gp` plus credits consumed downstream, over its
    /// VCs, as the switch itself can tell at `now`.
    #[inline]
    pub(super) fn output_occupancy(&self, gp: usize, now: u64) -> u64 {
        let v = self.vcs;
        let (leaving, _) = self.leaving(gp, now);
        let returned = self.returns.arrived(gp, now);
        self.output[gp * v..gp * v + v].iter().map(|q| q.used).sum::<u64>() - leaving + self.credits.in_use(gp)
            - returned
    }

    /// Whether output queue (gp, vc) has room for a packet of `bytes` now (counting the
    /// space of a packet whose tail has left).
    pub(super) fn has_room(&self, gp: usize, vc: usize, bytes: u64, now: u64) -> bool {
        let (leaving, leaving_vc) = self.leaving(gp, now);
        let freed = if leaving_vc == vc { leaving } else { 0 };
        self.output[gp * self.vcs + vc].used + bytes <= self.output_capacity + freed
    }

    /// Records the occupancy of output queue (port, vc) in `probe` from now on.
    pub fn add_probe(&mut self, switch: usize, port: usize, vc: usize, probe: u16) {
        let q = self.global_port(switch, port) as usize * self.vcs + vc;
        self.probe[q] = probe;
        self.watched = true;
    }
}
