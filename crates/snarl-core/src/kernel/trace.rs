//! What the models report as it happens: the interface between the models and the
//! observers. A model never counts anything itself: it reports a trace event through
//! `Ctx::trace`, and the collectors (`observe/`) make counters, histograms, series,
//! probes and tables of them.

/// One thing that happened in the fabric. Events are small and `Copy`; those of the
/// per-packet path are resolved at compile time by the always-on statistics
/// (`Stats::trace` is inlined where they are reported), and every event also reaches the
/// optional collectors when the run has any, behind one branch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TraceEvent {
    /// A source of `group` produced a message of `bytes`; `accepted`: its source queue had
    /// room (otherwise the message is dropped at the source).
    Generated { group: u16, host: u32, bytes: u64, accepted: bool },
    /// A data packet of `group` left its NIC.
    Injected { group: u16 },
    /// A packet started crossing a link (a NIC's or a switch output's).
    Hop,
    /// A data packet's tail reached its destination, host `dst`.
    Delivered { src_group: u16, dst_group: u16, dst: u32, bytes: u64, created: u64, injected: u64 },
    /// The last packet of a message of `bytes` sent by `group` was delivered; it crossed
    /// `hops` links. Traced right after that packet's `Delivered`, at the same time (the
    /// statistics record the latency they share once).
    MessageDone { group: u16, created: u64, bytes: u64, hops: u16 },
    /// Host `host` of `group` posted a message of `bytes` to an endpoint of its own node:
    /// it went onto the intra-node link (`accepted`), or was refused (the host had the
    /// bound of such messages in flight) and dropped at the source.
    IntraNodePosted { group: u16, host: u32, bytes: u64, accepted: bool },
    /// A message of `bytes` sent by `group` crossed the intra-node link and arrived whole.
    IntraNodeDelivered { group: u16, bytes: u64 },
    /// A packet of `group` found no buffer space and was dropped.
    Dropped { group: u16 },
    /// A receiver that numbers packets acted (`nic.receiver`, or spraying).
    Receiver(ReceiverEvent),
    /// A packet left its first switch on a non-minimal route (Valiant, UGAL).
    NonMinimal,
    /// A switch input sent a pause (`on`) or resume frame for `queue` upstream.
    PauseSent { port: u32, queue: u8, on: bool },
    /// A sender received a pause frame for `queue`: the switch output of global port
    /// `port`, or (`None`) a NIC.
    PauseReceived { port: Option<u32>, queue: u8 },
    /// A switch marked a packet (ECN congestion experienced, or InfiniBand's FECN) as it
    /// entered or left output queue `queue` of global port `port`.
    EcnMarked { port: u32, queue: u8, isolated: bool },
    /// A receiver of `group` sent a congestion notification packet (a CNP, a BECN, or an
    /// ACK that echoes a mark).
    CnpSent { group: u16 },
    /// A congestion notification packet of `group` reached the sender it notifies.
    CnpDelivered { group: u16 },
    /// An acknowledgement (ACK or NACK) of `group` left its NIC, or (`delivered`) reached
    /// the sender it acknowledges: counted in the packet counts only. (An ACK that echoes
    /// a switch's mark is the congestion notification of the control that sent it, and
    /// reported as one: `CnpSent`, `CnpDelivered`.)
    Acknowledgement { group: u16, delivered: bool },
    /// A flow's sending rate changed (a cut, when `cut`, or an increase).
    RateChanged { src: u32, dst: u32, qp: u32, rate_bps: f64, cut: bool },
    /// A flow's index into IB CC's congestion control table went from `from` to `to` (a
    /// BECN raised it, or its timer lowered it).
    CctiChanged { from: u16, to: u16 },
    /// The window of the pair of hosts `src` to `dst`, the bytes it may have
    /// unacknowledged, is now `window` (a cut, when `cut`: a marked ACK; else unmarked
    /// ACKs, or an idle pair's reset, raised it).
    WindowChanged { src: u32, dst: u32, window: u64, cut: bool },
    /// A probed queue (`observe.queues`, probe index `probe`) now holds `bytes`.
    QueueLength { probe: u16, bytes: u64 },
    /// Host `host` became (`on`) or stopped being one of the run's shared hotspots.
    Hotspot { host: u32, on: bool },
    /// Congestion isolation acted.
    Isolation(IsolationEvent),
}

/// What the receivers and the senders' go-back-N report (`TraceEvent::Receiver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverEvent {
    /// A data packet reached its host after one of its flow that its NIC sent later:
    /// `depth` transmissions behind the latest of the flow to arrive.
    Reordered { depth: u32 },
    /// An in-order receiver discarded a data packet of `group`: beyond the PSN it expects
    /// (`duplicate` false), or a copy of one it has accepted already (`duplicate`).
    Discarded { group: u16, duplicate: bool },
    /// An in-order receiver of `group` sent a NAK (a sequence error) back to a sender.
    NakSent { group: u16 },
    /// A data packet left its NIC again, the sender having gone back on a NAK (also
    /// reported as `Injected`).
    Retransmitted,
}

/// What congestion isolation reports (`TraceEvent::Isolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationEvent {
    /// An egress port allocated an entry of its congested-flow table, on detecting a root
    /// or on a message from downstream (`by_message`).
    Allocated { by_message: bool },
    /// An entry was released.
    Released,
    /// A candidate (or an isolation message) found the port's table full.
    CftOverflow,
    /// A packet entering a congested-flow queue found its ingress port's mirror table full.
    MirrorOverflow,
    /// A root released within `history` was detected again.
    Recurrence,
    /// An ingress port sent an isolation message upstream.
    MessageSent,
    /// A packet entered a congested-flow queue.
    PacketIsolated,
    /// A packet reached its host ahead of an older one of its flow.
    Reordered,
    /// A packet that went through a congested-flow queue reached a host that is not a
    /// declared hotspot.
    FalsePositive,
}
