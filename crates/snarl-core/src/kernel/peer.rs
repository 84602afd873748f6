//! Where a link leads, and the events that reach what is there.

use super::event::Event;
use crate::flow_control::Feedback;
use crate::packet::NIL;

/// The far end of a link, typed: an input port of a switch (global id), a host's NIC, or
/// nothing (an unwired port), in one word (a switch port's line holds it). The event
/// that reaches it is chosen from it, so no event target carries a flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Peer(u32);

impl Peer {
    /// Flag marking a host.
    const HOST: u32 = 1 << 31;
    /// An unwired port.
    pub const NONE: Peer = Peer(NIL);

    pub fn switch_port(global: u32) -> Peer {
        debug_assert!(global & Peer::HOST == 0);
        Peer(global)
    }

    pub fn host_nic(host: u32) -> Peer {
        debug_assert!(host & Peer::HOST == 0);
        Peer(Peer::HOST | host)
    }

    /// The switch input port (global id) at the far end, if it is one.
    #[inline]
    pub fn port(self) -> Option<u32> {
        (self.0 & Peer::HOST == 0).then_some(self.0)
    }

    /// The host at the far end, if it is one.
    #[inline]
    pub fn host(self) -> Option<u32> {
        (self.0 & Peer::HOST != 0 && self != Peer::NONE).then_some(self.0 & !Peer::HOST)
    }

    /// The event that carries `feedback` to this sender.
    #[inline]
    pub fn feedback_event(self, feedback: Feedback) -> Event {
        match self.port() {
            Some(port) => Event::FeedbackToSwitch { port, feedback },
            None => Event::FeedbackToHost { host: self.0 & !Peer::HOST, feedback },
        }
    }
}
