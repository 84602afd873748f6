//! The closed set of events the kernel dispatches by `match`.

use crate::flow_control::Feedback;

/// Events carry small indices only: global port ids, host ids, packet handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
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
    /// A message between two endpoints of one node (handle `message`) starts over the
    /// intra-node link: its sender's port has finished the messages queued before it.
    LocalSend { message: u32 },
    /// A message between two endpoints of one node reaches its destination whole over
    /// the intra-node link (it never entered the network).
    LocalDeliver { message: u32 },
    /// Periodic check that packets still move.
    Watchdog,
    /// A component's timer fired.
    Timer(Timer),
}

/// A timer, in a form that names no component: `owner` is whatever its component indexes
/// by (a host, a flow slot), `epoch` lets the component ignore a timer it has since
/// cancelled (it bumps its own epoch), and `kind` says whose timer it is and what it
/// means there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub owner: u32,
    pub epoch: u32,
    pub kind: TimerKind,
}

/// Which component a timer belongs to, with that component's own code for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// The workload's: a source's next generation, a phase boundary, a job's next step.
    Workload(u8),
    /// The NICs' congestion control's: DCQCN's alpha and rate timers.
    CongestionControl(u8),
    /// The switch fabric's, with its own code for what it means there (congestion
    /// isolation's release check of an entry: `switch::ioq::isolating::RELEASE_CHECK`).
    Fabric(u8),
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_stay_small() {
        assert!(std::mem::size_of::<super::Event>() <= 16, "{}", std::mem::size_of::<super::Event>());
    }
}
