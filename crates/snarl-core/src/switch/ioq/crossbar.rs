//! The crossbar's paths: what one transfer through the crossbar occupies, and until when.
//!
//! Per port (the default), a transfer holds its input port and its output port. Per VC
//! (`switch.crossbar = "per_vc"`), it holds only its input queue and its output queue, so
//! that an output port may take in a packet on each of its VCs at once and an input port
//! send one from each of its VCs, as in an IOQ router whose allocator matches input VCs
//! to output VCs. The per-port times live in the port's line (`Port`), read on every
//! hop; the per-VC ones in tables of their own, indexed like the queues.

use super::IoqFabric;
use crate::memory::fallible::zeroed;

/// The per-VC paths' busy times (empty when paths are per port).
#[derive(Default)]
pub(super) struct VcPaths {
    /// Per (input port, queue): when its transfer in progress ends.
    input_busy_until: Vec<u64>,
    /// Per (output port, queue): when its transfer in progress ends.
    output_busy_until: Vec<u64>,
}

impl VcPaths {
    /// Paths for `queues` (ports times queues per port) if `per_vc`, else none.
    pub(super) fn new(per_vc: bool, queues: usize) -> crate::Result<VcPaths> {
        if !per_vc {
            return Ok(VcPaths::default());
        }
        let what = "the crossbar's VC paths";
        Ok(VcPaths { input_busy_until: zeroed(queues, what)?, output_busy_until: zeroed(queues, what)? })
    }
}

impl IoqFabric {
    /// Whether transfers hold VCs rather than ports.
    #[inline]
    pub(super) fn per_vc(&self) -> bool {
        !self.paths.input_busy_until.is_empty()
    }

    /// When input queue (gp, queue) may start a transfer.
    #[inline]
    pub(super) fn input_free_at(&self, gp: usize, queue: usize) -> u64 {
        if self.per_vc() {
            self.paths.input_busy_until[gp * self.queues + queue]
        } else {
            self.ports[gp].input_busy_until
        }
    }

    /// When output queue (o, queue) may take in a transfer.
    #[inline]
    pub(super) fn output_free_at(&self, o: usize, queue: usize) -> u64 {
        if self.per_vc() {
            self.paths.output_busy_until[o * self.queues + queue]
        } else {
            self.ports[o].crossbar_free_at
        }
    }

    /// A transfer from input queue (i, queue) into output queue (o, out_queue) holds
    /// their paths until `until`.
    #[inline]
    pub(super) fn occupy(&mut self, i: usize, queue: usize, o: usize, out_queue: usize, until: u64) {
        if self.per_vc() {
            self.paths.input_busy_until[i * self.queues + queue] = until;
            self.paths.output_busy_until[o * self.queues + out_queue] = until;
        } else {
            self.ports[i].input_busy_until = until;
            self.ports[o].crossbar_free_at = until;
        }
    }
}
