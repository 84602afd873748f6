//! The closed set of events the kernel dispatches by `match`.

use crate::flow_control::Feedback;

/// Events carry small indices only: global port ids, host ids, packet handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A host's traffic source may generate its next message (stale if `epoch` is old).
    Generate { host: u32, epoch: u32 },
    /// A host's NIC may be able to inject (link free, cap elapsed).
    HostWake { host: u32 },
    /// The head of `packet` reaches input port `port` (global id) of a switch.
    Arrive { port: u32, packet: u32 },
    /// The tail of `packet` reaches its destination host.
    Deliver { packet: u32 },
    /// Output `output` retries crossbar allocation: a resource its requests waited for
    /// (its crossbar side, a requesting input) has become free.
    AllocRetry { output: u32 },
    /// Output port `port` may be able to transmit (transfer finished or packet ready).
    LinkWake { port: u32 },
    /// Flow-control feedback (credits, a pause or resume frame) reaches the sender of a
    /// link: output port `port` (global id) of a switch.
    FeedbackToSwitch { port: u32, feedback: Feedback },
    /// Flow-control feedback reaches the NIC of host `host`.
    FeedbackToHost { host: u32, feedback: Feedback },
    /// Traffic phase `index` begins.
    Phase { index: u32 },
    /// Periodic check that packets still move.
    Watchdog,
    /// A congestion-control timer of flow slot `flow` (`kind`: alpha or rate timer);
    /// stale if the flow's epoch has moved on.
    CcTimer { flow: u32, epoch: u32, kind: u8 },
}

/// Flag in a link's far end (`HOST_TARGET | host`) marking a host NIC.
pub const HOST_TARGET: u32 = 1 << 31;

#[cfg(test)]
mod tests {
    #[test]
    fn events_stay_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16, "{}", std::mem::size_of::<super::Event>());
    }
}
