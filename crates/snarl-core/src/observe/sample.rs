//! The sampling hook: what a collector that samples the fabric periodically reads.
//!
//! A collector that says when it wants its next sample (`Collector::next_sample`) is
//! handed, at that time, a read-only [`FabricSample`]: every non-empty switch queue, what
//! it holds and what its head waits for (the wait-for relation the watchdog follows to
//! find deadlocks: `switch::IoqFabric::waits_for`, the same function), and the hosts
//! whose NICs cannot send. The samples are taken where the watchdog's checks are, out of
//! the event loop: nothing of this is on the per-packet path, and a run without a
//! sampling collector takes no sample.

/// Which side of its switch a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueSide {
    /// An input (ingress) queue of a port and VC (a FIFO; with virtual output queues it
    /// holds no packet and its bytes are those of its VoQs).
    Input,
    /// An output (egress) queue of a port and VC.
    Output,
    /// A virtual output queue of an input port and VC, toward output port `toward` of its
    /// switch.
    Voq { toward: u32 },
}

/// One switch queue at a sample. Queue ids are the watchdog's: input queues, then output
/// queues, then virtual output queues, dense from 0 (`FabricSample::queue_ids`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampledQueue {
    pub id: u32,
    pub switch: u32,
    /// Port of its switch (inputs and VoQs: the input port).
    pub port: u32,
    /// Its queue on the port: the VC (priority), or a class a mechanism adds beyond them.
    pub queue: u32,
    pub side: QueueSide,
    /// Bytes queued.
    pub bytes: u64,
    /// The queue its head waits for: an input's (or VoQ's) head for the output queue it
    /// requested, an output's head for the input downstream (`None`: empty, or an output
    /// toward a host, which always drains).
    pub waits_for: Option<u32>,
    /// Output queues: the queue their link feeds, empty or not (the input downstream, or
    /// that input's oldest VoQ), what the head waits for when there is one; `None` toward
    /// a host, and for other queues.
    pub downstream: Option<u32>,
    /// Output queues: its head may not leave, for want of credits downstream or because
    /// its priority is paused. Always false for other queues and for empty ones.
    pub blocked: bool,
}

/// A host whose NIC has data queued that it may not send on a VC: out of credits for a
/// packet, or paused. It waits for `waits_for`, the switch queue its link feeds (the
/// input queue of its attachment, or that input's oldest VoQ), at port `port` of
/// `switch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedHost {
    pub host: u32,
    pub vc: u32,
    pub switch: u32,
    pub port: u32,
    pub waits_for: Option<u32>,
}

/// What a sampling collector may read of the fabric at a sample: read-only.
pub trait FabricSample {
    /// Queue ids run from 0 to this (exclusive).
    fn queue_ids(&self) -> u32;
    /// Calls `f` with every non-empty queue, in id order.
    fn each_queue(&self, f: &mut dyn FnMut(&SampledQueue));
    /// Queue `id`, empty or not (an output queue whose packets all wait in VoQs, say).
    fn queue(&self, id: u32) -> SampledQueue;
    /// Calls `f` with every (host, VC) whose NIC is blocked.
    fn each_blocked_host(&self, f: &mut dyn FnMut(&BlockedHost));
}

/// A fabric of no queues and no hosts, for the unit tests of sampling collectors.
pub struct NoQueues;

impl FabricSample for NoQueues {
    fn queue_ids(&self) -> u32 {
        0
    }

    fn each_queue(&self, _f: &mut dyn FnMut(&SampledQueue)) {}

    fn queue(&self, id: u32) -> SampledQueue {
        SampledQueue {
            id,
            switch: 0,
            port: 0,
            queue: 0,
            side: QueueSide::Output,
            bytes: 0,
            waits_for: None,
            downstream: None,
            blocked: false,
        }
    }

    fn each_blocked_host(&self, _f: &mut dyn FnMut(&BlockedHost)) {}
}
