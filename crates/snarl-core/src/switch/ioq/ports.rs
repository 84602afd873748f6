//! The per-port state the per-packet path reads and writes together, and what is read
//! of it.

use super::IoqFabric;
use crate::kernel::Peer;
use crate::switch::link_timing::LinkTiming;

/// The state of one global port that the per-packet path reads and writes together, in
/// one cache line: its output side (link, crossbar, wake-ups, arbitration) and, as an
/// input, when it is free to send through the crossbar again.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct Port {
    pub(super) link_free_at: u64,
    /// Earliest pending `LinkWake` (0: none).
    pub(super) wake_at: u64,
    /// Earliest pending allocation retry of the output (0: none).
    pub(super) retry_at: u64,
    pub(super) crossbar_free_at: u64,
    pub(super) input_busy_until: u64,
    /// Output-buffer bytes (and their queue) to release once the current transmission ends.
    pub(super) releasing_bytes: u32,
    /// Far end of the link.
    pub(super) peer: Peer,
    /// The switch the port belongs to.
    pub(super) owner: u32,
    /// Number of bits set in the output's request mask.
    pub(super) waiting: u16,
    /// Request bit the round-robin arbiter looks at first.
    pub(super) grant_next: u16,
    /// Number of words of the output's request mask.
    pub(super) mask_words: u16,
    pub(super) releasing_queue: u8,
    /// Queue the output link looks at first (round robin over the port's queues).
    pub(super) queue_next: u8,
    /// The port's link class (`LinkTimings`), here so that the per-packet path finds its
    /// link's timing without reading a table of every port's.
    pub(super) link_class: u16,
}

impl IoqFabric {
    /// Output-buffer bytes of output `gp` whose tail has left by `now` but that are not
    /// settled yet, and their queue (`settle` releases them).
    #[inline]
    pub(super) fn leaving(&self, gp: usize, now: u64) -> (u64, usize) {
        let (bytes, queue) = (self.ports[gp].releasing_bytes, self.ports[gp].releasing_queue);
        if self.ports[gp].link_free_at <= now {
            (bytes as u64, queue as usize)
        } else {
            (0, 0)
        }
    }

    /// Global id of `port` of `switch`.
    #[inline]
    pub fn global_port(&self, switch: usize, port: usize) -> u32 {
        self.port_base[switch] + port as u32
    }

    /// First word of output `o`'s request mask in `requests`.
    #[inline(always)]
    pub(super) fn mask_base(&self, o: usize) -> usize {
        o * self.mask_stride
    }

    /// The word of `requests` that holds bit `bit` of output `o`'s request mask.
    #[inline(always)]
    pub(super) fn mask_word(&self, o: usize, bit: usize) -> usize {
        self.mask_base(o) + bit / 64
    }

    /// The timing of port `gp`'s link.
    #[inline(always)]
    pub(super) fn link(&self, gp: usize) -> &LinkTiming {
        self.timing.of_class(self.ports[gp].link_class)
    }

    #[inline]
    pub(super) fn has_requests(&self, o: usize) -> bool {
        self.ports[o].waiting != 0
    }

    /// "switch S port P" for a global port id.
    pub fn port_name(&self, gp: usize) -> String {
        let switch = self.ports[gp].owner;
        format!("switch {switch} port {}", gp as u32 - self.port_base[switch as usize])
    }
}
