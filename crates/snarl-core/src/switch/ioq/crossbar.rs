//! The crossbar's paths: what one transfer through the crossbar occupies, and until when.
//!
//! Per port (the default), a transfer holds its input port and its output port. Per VC
//! (`switch.crossbar = "per_vc"`), it holds only its input queue and its output queue, so
//! that an output port may take in a packet on each of its VCs at once and an input port
//! send one from each of its VCs, as in an IOQ router whose allocator matches input VCs
//! to output VCs. The per-port times live in the port's line (`Port`), read on every
//! hop; the per-VC ones in the queues, beside what arbitration reads of them.

use super::IoqFabric;

/// Whether transfers hold VCs (their busy times then live in the queues, beside what the
/// arbiter reads of them: `InputQueue::busy_until`, `OutputQueue::busy_until`) or ports.
#[derive(Default)]
pub(super) struct VcPaths {
    per_vc: bool,
}

impl VcPaths {
    /// Paths per VC if `per_vc`, else per port.
    pub(super) fn new(per_vc: bool) -> VcPaths {
        VcPaths { per_vc }
    }
}

impl IoqFabric {
    /// Whether transfers hold VCs rather than ports.
    #[inline]
    pub(super) fn per_vc(&self) -> bool {
        self.paths.per_vc
    }

    /// When input queue (gp, queue) may start a transfer.
    #[inline]
    pub(super) fn input_free_at(&self, gp: usize, queue: usize) -> u64 {
        if self.per_vc() {
            self.input[gp * self.queues + queue].busy_until
        } else {
            self.ports[gp].input_busy_until
        }
    }

    /// When output queue (o, queue) may take in a transfer.
    #[inline]
    pub(super) fn output_free_at(&self, o: usize, queue: usize) -> u64 {
        if self.per_vc() {
            self.output[o * self.queues + queue].busy_until
        } else {
            self.ports[o].crossbar_free_at
        }
    }

    /// A transfer from input queue (i, queue) into output queue (o, out_queue) holds
    /// their paths until `until`.
    #[inline]
    pub(super) fn occupy(&mut self, i: usize, queue: usize, o: usize, out_queue: usize, until: u64) {
        if self.per_vc() {
            self.input[i * self.queues + queue].busy_until = until;
            self.output[o * self.queues + out_queue].busy_until = until;
        } else {
            self.ports[i].input_busy_until = until;
            self.ports[o].crossbar_free_at = until;
        }
    }
}
