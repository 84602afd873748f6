//! Packet sequence numbers per flow, and what a receiver makes of a packet that arrives
//! ahead of an earlier one of its flow (`nic.receiver`).
//!
//! With a receiver in force (`NicConfig::receiver_in_force`: one configured, or a routing
//! that sprays) a sender numbers each flow's (source, destination, queue pair) packets in
//! the order it sends them: a packet sequence number (PSN) per new packet, and a
//! transmission number per packet sent, a retransmission included. The numbers travel
//! beside the packet, in a slot per packet handle (`Packet` has no room left in its cache
//! line, and only these runs pay for them). Every data packet then reaches its NIC as an
//! event (`Nics::receipts`), where the receiver counts reordering: a packet arriving
//! after one of its flow sent later, by how many transmissions.
//!
//! * **Out of order** (the default): the packet is placed at once, as every run always
//!   did; a message completes when all its packets have arrived, in any order.
//! * **In order** (RoCE's default): the receiver accepts only the PSN it expects. A packet
//!   beyond it is discarded and answered with a NAK carrying the expected PSN, one per
//!   flow until the expected packet arrives; a packet below it (a copy sent again) is
//!   discarded. On a NAK the sender goes back to its PSN and sends every packet from
//!   there again, in order, before any new data of the flow (go-back-N).
//!
//! How the sender goes back:
//! * It keeps, per flow, the messages it has sent and the receiver has not yet accepted in
//!   full, oldest first, linked through `Message::next_in_flow` (a message keeps its slot
//!   until it completes, as always): what it resends is found there, without a copy, and
//!   the list is bounded by what is in flight. A message completes for the sender when the
//!   receiver has all of it in order: the acknowledgement that would tell it is not
//!   modelled (it would tell no more than the NAKs do, its flight time aside), so a stale
//!   NAK never has the sender resend a message already complete.
//! * A flow going back sends its retransmissions from the NIC's list of such flows, in
//!   turn, a packet each, ahead of new data and after the NAKs the NIC has to send, paced
//!   by the congestion control as its new packets are (a window counts them as sent).
//!   Its next queued message waits meanwhile (its turn in the flow scheduler is held, or,
//!   in FIFO order, the host's head waits), and goes on from where new data stopped once
//!   the retransmissions have caught up. Packets it has already launched are in the fabric
//!   (a NIC holds no packets, only messages): they arrive and are discarded or accepted as
//!   they come, and a copy of one accepted meanwhile is a duplicate.
//! * No retransmission timeout: in a lossless fabric no packet and no NAK is lost, so the
//!   expected packet always arrives (an original late, or a copy) and every gap is NAKed.
//!   Validation refuses an in-order receiver without lossless flow control.
//!
//! A retransmission is a frame as its original was: it leaves through the launch new data
//! takes (`Nics::put_data`, which adds `[nic] header` to the payload), and its credit
//! check counts the frame; a NAK is a control packet's frame (64 bytes and the header).
//!
//! A discarded packet reached its host: the packet counts have it as `discarded`, and
//! conservation (injected = delivered + in flight + dropped + discarded) still proves that
//! the fabric lost nothing; it is released without being delivered, so it adds no payload
//! to any figure. A flow's state is forgotten when nothing of it is in flight (packets or
//! NAKs) and nothing waits for acceptance: a flow that starts again numbers from 0, with
//! nothing of its past left to confuse it.

use super::Nics;
use crate::cc::{CongestionControl, FlowKey, FlowTable};
use crate::config::Receiver;
use crate::memory::fallible::filled;
use crate::model::Ctx;
use crate::observe::{ReceiverEvent, TraceEvent};
use crate::packet::{Message, MessageSlab, PacketKind, PacketSlab, NIL};
use crate::routing::hash::flow_vc;
use std::collections::VecDeque;

/// What travels with a packet: its PSN, and its transmission's number (the order its NIC
/// sent the flow's packets in, retransmissions included). A NAK carries the expected PSN.
/// Packets of message `m` (one for an empty message, as the NICs cut it).
#[inline]
fn packets(m: &Message, mtu: u64) -> u32 {
    m.size.div_ceil(mtu).max(1) as u32
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Numbers {
    psn: u32,
    tx: u32,
}

/// One flow's sequence state, at its sender and at its receiver: one record for both
/// ends, each of which reads only its own fields (the record is where the simulator
/// keeps them, not a channel between them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FlowSeq {
    /// Sender: one past the highest PSN sent (the PSN of its next new packet).
    sent: u32,
    /// Sender: the PSN it sends next; below `sent` while it goes back after a NAK.
    next: u32,
    /// Sender: transmissions so far.
    tx: u32,
    /// Sender, in order: the messages sent and not yet all accepted, oldest first, and
    /// the PSN of the oldest's first packet (`sent` when there is none).
    first: u32,
    first_psn: u32,
    last: u32,
    /// Sender, going back: the message holding `next`, and its first PSN.
    resend: u32,
    resend_psn: u32,
    /// Packets and NAKs of the flow on their way.
    in_flight: u32,
    /// Receiver, in order: the PSN it accepts next.
    expected: u32,
    /// Receiver: one past the latest transmission of the flow that arrived (0: none).
    seen: u32,
    /// Receiver, in order: a NAK went back and the expected packet has not come since.
    nak_pending: bool,
}

impl FlowSeq {
    fn new() -> FlowSeq {
        FlowSeq {
            sent: 0,
            next: 0,
            tx: 0,
            first: NIL,
            first_psn: 0,
            last: NIL,
            resend: NIL,
            resend_psn: 0,
            in_flight: 0,
            expected: 0,
            seen: 0,
            nak_pending: false,
        }
    }

    /// Whether the sender is going back (retransmissions to send).
    #[inline]
    fn going_back(&self) -> bool {
        self.next < self.sent
    }

    /// Whether nothing of the flow is in flight or waits for acceptance.
    #[inline]
    fn idle(&self) -> bool {
        self.in_flight == 0 && self.first == NIL
    }
}

/// A NAK waiting at the receiving NIC: to `dst`, the sender of the flow (`dst`, this
/// host, `qp`), which is to go back to `psn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Nak {
    dst: u32,
    qp: u32,
    vc: u8,
    psn: u32,
}

/// What a receiver did with an arriving data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// Placed: it is delivered.
    Accepted,
    /// Discarded, ahead of the expected PSN; `nak`: the receiver answers with a NAK of this
    /// PSN (none while one is pending).
    OutOfSequence { nak: Option<u32> },
    /// Discarded: a copy of a packet accepted already.
    Duplicate,
}

/// The NICs' sequence numbers and in-order receivers.
pub(super) struct Sequencing {
    receiver: Receiver,
    mtu: u64,
    /// The flows with anything in flight or waiting for acceptance.
    flows: FlowTable<FlowKey, FlowSeq>,
    /// The numbers of every packet the NICs launched, by packet handle (grown with the
    /// packet slab, by doubling: nothing is allocated once it has its size).
    numbers: Vec<Numbers>,
    /// Per host: NAKs waiting to leave, oldest first.
    naks: Vec<VecDeque<Nak>>,
    /// Per host: the flows going back (their slots), served in turn.
    going_back: Vec<VecDeque<u32>>,
}

impl Sequencing {
    pub(super) fn new(receiver: Receiver, mtu: u64, hosts: usize) -> crate::Result<Sequencing> {
        let what = "the NICs' sequence numbers";
        Ok(Sequencing {
            receiver,
            mtu: mtu.max(1),
            flows: FlowTable::default(),
            numbers: Vec::new(),
            naks: filled(hosts, VecDeque::new(), what)?,
            going_back: filled(hosts, VecDeque::new(), what)?,
        })
    }

    #[inline]
    fn in_order(&self) -> bool {
        self.receiver == Receiver::InOrder
    }

    fn set_numbers(&mut self, packet: u32, numbers: Numbers) {
        let i = packet as usize;
        if i >= self.numbers.len() {
            self.numbers.resize(i + 1, Numbers::default());
        }
        self.numbers[i] = numbers;
    }

    /// Whether the flow (`src`, `dst`, `qp`) is going back: its new data waits. (Out of
    /// line, as everything here the NICs call: runs without a receiver keep their
    /// injection path as tight as it was.)
    #[inline(never)]
    pub(super) fn holds(&self, src: u32, dst: u32, qp: u32) -> bool {
        self.in_order()
            && self.flows.find(&FlowKey { src, dst, qp }).is_some_and(|slot| self.flows.state(slot).going_back())
    }

    /// Whether host `h` has NAKs or retransmissions to send.
    #[inline]
    pub(super) fn has_work(&self, h: usize) -> bool {
        !self.naks[h].is_empty() || !self.going_back[h].is_empty()
    }

    /// The sender launched `packet`, the next new packet of `flow`, of message `mid`
    /// (its `first` packet, or a later one): numbers it, and in order keeps the message
    /// for going back from its first packet on.
    #[inline(never)]
    pub(super) fn number_new(&mut self, messages: &mut MessageSlab, flow: FlowKey, first: bool, mid: u32, packet: u32) {
        let slot = self.flows.find_or_insert(flow, FlowSeq::new);
        let in_order = self.in_order();
        let f = self.flows.state_mut(slot);
        debug_assert!(!f.going_back(), "new data of a flow going back");
        let numbers = Numbers { psn: f.sent, tx: f.tx };
        (f.sent, f.tx, f.in_flight) = (f.sent + 1, f.tx + 1, f.in_flight + 1);
        f.next = f.sent;
        if in_order && first {
            // The message joins the flow's list, whose PSNs it continues.
            if f.last == NIL {
                f.first = mid;
            } else {
                messages[f.last].next_in_flow = mid;
            }
            f.last = mid;
            messages[mid].next_in_flow = NIL;
        }
        self.set_numbers(packet, numbers);
    }

    /// The receiver took in data packet `packet` of `flow` (message `mid`): counts its
    /// reordering (the depth, if it came late) and, in order, decides its fate. An accepted
    /// packet that completes its message takes it off the sender's list. Returns what
    /// became of it, the depth, and whether the sender stopped going back.
    pub(super) fn arrive(
        &mut self,
        messages: &mut MessageSlab,
        flow: FlowKey,
        mid: u32,
        packet: u32,
    ) -> (Arrival, Option<u32>, bool) {
        let n = self.numbers[packet as usize];
        let slot = self.flows.find(&flow).expect("a flow with a packet in flight has its state");
        let (in_order, mtu) = (self.in_order(), self.mtu);
        let f = self.flows.state_mut(slot);
        f.in_flight -= 1;
        let depth = if n.tx < f.seen {
            Some(f.seen - 1 - n.tx)
        } else {
            f.seen = n.tx + 1;
            None
        };
        let mut caught_up = false;
        let arrival = if !in_order {
            Arrival::Accepted
        } else if n.psn == f.expected {
            f.expected += 1;
            f.nak_pending = false;
            if messages[mid].outstanding == 1 {
                // It completes its message, the oldest of the flow's list.
                debug_assert_eq!(f.first, mid, "messages of a flow complete in order");
                let m = messages[mid];
                f.first = m.next_in_flow;
                f.first_psn += packets(&m, mtu);
                if f.last == mid {
                    f.last = NIL;
                }
                if f.resend == mid {
                    // Going back into what the receiver now has: on from the next message.
                    (f.resend, f.resend_psn) = (f.first, f.first_psn);
                    if f.going_back() {
                        f.next = f.next.max(f.first_psn);
                        caught_up = !f.going_back();
                    }
                }
            }
            Arrival::Accepted
        } else if n.psn > f.expected {
            let nak = (!f.nak_pending).then_some(f.expected);
            if nak.is_some() {
                f.nak_pending = true;
                f.in_flight += 1;
            }
            Arrival::OutOfSequence { nak }
        } else {
            Arrival::Duplicate
        };
        if caught_up {
            self.stop_going_back(flow.src, slot);
        }
        if self.flows.state(slot).idle() {
            self.flows.release(slot);
        }
        (arrival, depth, caught_up)
    }

    /// A NAK of `psn` for `flow` reached its sender: it goes back to `psn` (never below
    /// what the receiver has completed). Returns whether it started going back.
    pub(super) fn on_nak(&mut self, messages: &MessageSlab, flow: FlowKey, psn: u32) -> bool {
        let slot = self.flows.find(&flow).expect("a flow with a NAK in flight has its state");
        let mtu = self.mtu;
        let f = self.flows.state_mut(slot);
        f.in_flight -= 1;
        let from = psn.max(f.first_psn);
        let mut started = false;
        if from < f.next {
            started = !f.going_back();
            let (mut m, mut at) = (f.first, f.first_psn);
            loop {
                let end = at + packets(&messages[m], mtu);
                if from < end {
                    break;
                }
                (m, at) = (messages[m].next_in_flow, end);
            }
            (f.next, f.resend, f.resend_psn) = (from, m, at);
            if started {
                self.going_back[flow.src as usize].push_back(slot);
            }
        }
        if self.flows.state(slot).idle() {
            self.flows.release(slot);
        }
        started
    }

    /// The flow in `slot` of host `src` has sent all its retransmissions.
    fn stop_going_back(&mut self, src: u32, slot: u32) {
        let list = &mut self.going_back[src as usize];
        if let Some(i) = list.iter().position(|&s| s == slot) {
            list.remove(i);
        }
    }

    /// What the flow in `slot` resends next: its message and the packet's size.
    fn next_resend(&self, messages: &MessageSlab, slot: u32) -> (u32, u64) {
        let f = self.flows.state(slot);
        let k = (f.next - f.resend_psn) as u64;
        let size = messages[f.resend].size.saturating_sub(k * self.mtu).min(self.mtu);
        (f.resend, size)
    }

    /// The sender launched `packet`, the retransmission of the flow in `slot` that
    /// `next_resend` named. Returns whether the flow has caught up (stopped going back).
    fn number_resent(&mut self, messages: &MessageSlab, slot: u32, packet: u32) -> bool {
        let f = self.flows.state_mut(slot);
        let numbers = Numbers { psn: f.next, tx: f.tx };
        (f.next, f.tx, f.in_flight) = (f.next + 1, f.tx + 1, f.in_flight + 1);
        let m = &messages[f.resend];
        if f.next - f.resend_psn == packets(m, self.mtu) {
            (f.resend, f.resend_psn) = (m.next_in_flow, f.next);
        }
        let caught_up = !f.going_back();
        self.set_numbers(packet, numbers);
        caught_up
    }

    /// Packet `packet`, on its way to its host when the run ended, would be accepted
    /// (the run's last deliveries count by the part of them that arrived, if accepted).
    /// Called in order of arrival.
    pub(super) fn accepts_at_end(&mut self, flow: FlowKey, packet: u32) -> bool {
        if !self.in_order() {
            return true;
        }
        let psn = self.numbers[packet as usize].psn;
        let Some(slot) = self.flows.find(&flow) else { return false };
        let f = self.flows.state_mut(slot);
        let accepted = psn == f.expected;
        f.expected += accepted as u32;
        accepted
    }

    /// The flows' states are consistent: numbers in order, and a flow going back listed
    /// once at its sender, and only such a flow.
    fn check(&self) -> Result<(), String> {
        let mut listed = 0;
        for (slot, key, f) in self.flows.iter() {
            let flow = format!("flow {} -> {} qp {}", key.src, key.dst, key.qp);
            if f.next > f.sent || f.expected > f.sent || f.first_psn > f.sent || f.seen > f.tx {
                return Err(format!("{flow}: sequence numbers out of order: {f:?}"));
            }
            if f.idle() {
                return Err(format!("{flow}: idle, yet remembered"));
            }
            let times = self.going_back[key.src as usize].iter().filter(|&&s| s == slot).count();
            if times != f.going_back() as usize {
                return Err(format!("{flow}: listed {times} times among the flows going back: {f:?}"));
            }
            listed += times;
        }
        let total: usize = self.going_back.iter().map(VecDeque::len).sum();
        if total != listed {
            return Err(format!("{total} flows listed as going back, {listed} of them known"));
        }
        Ok(())
    }
}

impl Nics {
    /// Numbers each flow's packets, with `receiver` at every NIC (see the module
    /// documentation).
    pub fn enable_sequencing(&mut self, receiver: Receiver) -> crate::Result<()> {
        self.sequence = Some(Box::new(Sequencing::new(receiver, self.mtu, self.peer.len())?));
        Ok(())
    }

    /// Data packet `packet` reached its destination NIC, which numbers its flow's packets:
    /// counts its reordering and, in order, discards it unless it is the expected one,
    /// answering a gap with a NAK. Returns whether it is to be delivered.
    #[inline(never)]
    pub(super) fn arrive_numbered(&mut self, ctx: &mut Ctx, packet: u32) -> bool {
        let Some(sequence) = self.sequence.as_deref_mut() else { return true };
        let p = ctx.packets[packet];
        let flow = FlowKey { src: p.src, dst: p.dst, qp: p.qp };
        let (arrival, depth, caught_up) = sequence.arrive(ctx.messages, flow, p.message, packet);
        if let Some(depth) = depth {
            ctx.trace(TraceEvent::Receiver(ReceiverEvent::Reordered { depth }));
        }
        if caught_up {
            self.hold_queued(ctx, flow, false);
            self.wake(ctx, flow.src, ctx.now);
        }
        let nak = match arrival {
            Arrival::Accepted => return true,
            Arrival::OutOfSequence { nak } => nak,
            Arrival::Duplicate => None,
        };
        let duplicate = arrival == Arrival::Duplicate;
        ctx.trace(TraceEvent::Receiver(ReceiverEvent::Discarded { group: p.group, duplicate }));
        ctx.packets.release(packet);
        if let Some(psn) = nak {
            // Back to the sender on the flow's VC (its message may be gone, the flow not).
            let vc = flow_vc(p.src, p.dst, p.qp, &self.vc_divisor);
            if let Some(sequence) = self.sequence.as_deref_mut() {
                sequence.naks[p.dst as usize].push_back(Nak { dst: p.src, qp: p.qp, vc, psn });
            }
            self.try_inject(ctx, p.dst);
        }
        false
    }

    /// The NAK `packet` reached the sender of its flow, which goes back to its PSN.
    pub(super) fn receive_nak(&mut self, ctx: &mut Ctx, packet: u32) {
        let p = ctx.packets[packet];
        ctx.trace(TraceEvent::Acknowledgement { group: p.group, delivered: true });
        ctx.packets.release(packet);
        let Some(sequence) = self.sequence.as_deref_mut() else { return };
        let flow = FlowKey { src: p.dst, dst: p.src, qp: p.qp };
        let psn = sequence.numbers[packet as usize].psn;
        if sequence.on_nak(ctx.messages, flow, psn) {
            self.hold_queued(ctx, flow, true);
        }
        self.try_inject(ctx, flow.src);
    }

    /// Holds (`held`) or lets go the turn of `flow`'s oldest queued message in the flow
    /// scheduler, while the flow goes back. (In FIFO order the host's head waits for its
    /// flow itself: `Sequencing::holds`.)
    fn hold_queued(&mut self, ctx: &Ctx, flow: FlowKey, held: bool) {
        let Some(scheduler) = self.scheduler.as_deref_mut() else { return };
        let h = flow.src as usize;
        let (base, head, capacity) = (h * self.queue_capacity, self.queue_head[h] as usize, self.queue_capacity);
        for j in 0..self.queue_len[h] as usize {
            let at = base + (head + j) % capacity;
            let m = &ctx.messages[self.queue[at]];
            if m.dst == flow.dst && m.qp == flow.qp {
                scheduler.flow_head[at] = !held;
                return;
            }
        }
    }

    /// Sends what host `host` owes its flows' order first: a NAK, else a retransmission
    /// of a flow going back (in turn, paced as the flow's new data would be). Returns
    /// whether the host is done for now (it sent one, or its link is busy); `false` lets
    /// control packets and new data of other flows try.
    #[cold]
    #[inline(never)]
    pub(super) fn try_resend(&mut self, ctx: &mut Ctx, host: u32) -> bool {
        let (h, now) = (host as usize, ctx.now);
        let Some(mut sequence) = self.sequence.take() else { return false };
        let done = self.resend_from(ctx, host, &mut sequence);
        let more = sequence.has_work(h);
        self.sequence = Some(sequence);
        if let Some(serialise) = done {
            let control = self.scheduler.as_deref().is_some_and(|s| !s.control[h].is_empty());
            if serialise > 0 && (more || self.queue_len[h] > 0 || control) {
                self.wake(ctx, host, now + serialise);
            }
        }
        done.is_some()
    }

    /// `try_resend` with the sequence state in hand: `Some(serialisation time)` when a
    /// packet left, `Some(0)` when the link is busy, `None` when nothing could go.
    fn resend_from(&mut self, ctx: &mut Ctx, host: u32, sequence: &mut Sequencing) -> Option<u64> {
        let (h, now) = (host as usize, ctx.now);
        if self.link_free_at[h] > now {
            self.wake(ctx, host, self.link_free_at[h]);
            return Some(0);
        }
        ctx.host_returns.collect(h, now, &mut self.credits);
        let mut credit_blocked = false;
        if let Some(&nak) = sequence.naks[h].front() {
            // A control packet's frame, the header with it, as a CNP's or an ACK's.
            credit_blocked = !self.credits.can_send(h, nak.vc as usize, self.control_frame);
            if !credit_blocked && !self.pause.is_paused(h, nak.vc as usize) {
                sequence.naks[h].pop_front();
                let group = ctx.stats.host_group[h];
                let kind = PacketKind::SEQUENCE_NAK;
                let (serialise, packet) =
                    self.launch(ctx, host, nak.dst, self.control_frame, nak.qp, NIL, group, nak.vc, nak.vc, kind);
                sequence.set_numbers(packet, Numbers { psn: nak.psn, tx: 0 });
                ctx.trace(TraceEvent::Receiver(ReceiverEvent::NakSent { group }));
                return Some(serialise);
            }
        }
        let flows = sequence.going_back[h].len();
        if flows > 0 && self.next_allowed[h] > now {
            self.wake(ctx, host, self.next_allowed[h]);
            return None;
        }
        let cc = self.scheduler.as_deref().and_then(|s| s.cc.as_ref());
        let mut earliest = u64::MAX;
        let mut chosen = None;
        for i in 0..flows {
            let slot = sequence.going_back[h][i];
            let flow = sequence.flows.key(slot);
            let at = cc.map_or(0, |c| c.next_send(&flow));
            if at > now {
                earliest = earliest.min(at);
                continue;
            }
            let (mid, size) = sequence.next_resend(ctx.messages, slot);
            let vc = self.injection_vc(h, ctx.messages[mid].vc, size + self.wire.header);
            // Credits for the frame, as new data takes them (`put_data` adds the header).
            if !self.credits.can_send(h, vc as usize, size + self.wire.header) {
                credit_blocked = true;
                continue;
            }
            let class = self.class_of(h, flow.dst, flow.qp, vc, now);
            if self.pause.is_paused(h, class as usize) {
                continue; // The resume frame will retry.
            }
            chosen = Some((i, slot, flow, mid, size, vc, class));
            break;
        }
        let Some((i, slot, flow, mid, size, vc, class)) = chosen else {
            if earliest != u64::MAX {
                self.wake(ctx, host, earliest);
            }
            if credit_blocked {
                self.wait_for_credits(ctx, host);
            }
            return None;
        };
        let m = Message { vc, ..ctx.messages[mid] };
        let (serialise, packet) = self.put_data(ctx, host, m, mid, size, class);
        ctx.trace(TraceEvent::Receiver(ReceiverEvent::Retransmitted));
        // The next flow's turn comes first next time.
        sequence.going_back[h].remove(i);
        if sequence.number_resent(ctx.messages, slot, packet) {
            self.hold_queued(ctx, flow, false);
        } else {
            sequence.going_back[h].push_back(slot);
        }
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|s| s.cc.as_mut()) {
            cc.on_sent(ctx, &flow, size, serialise);
        }
        Some(serialise)
    }

    /// Whether data packet `packet`, arriving after the run's end, would be accepted by
    /// its receiver (always, unless it is in order). Called in order of arrival.
    pub(crate) fn accepts_at_end(&mut self, packets: &PacketSlab, packet: u32) -> bool {
        let Some(sequence) = self.sequence.as_deref_mut() else { return true };
        let p = &packets[packet];
        sequence.accepts_at_end(FlowKey { src: p.src, dst: p.dst, qp: p.qp }, packet)
    }

    /// The sequence state is consistent (see `Sequencing::check`).
    pub(super) fn check_sequencing(&self) -> Result<(), String> {
        self.sequence.as_deref().map_or(Ok(()), Sequencing::check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 4096;

    /// A message of `packets` MTU packets from host 0 to host 1, queue pair 0.
    fn message(messages: &mut MessageSlab, packets: u64) -> u32 {
        let size = packets * MTU;
        messages.alloc(Message {
            src: 0,
            dst: 1,
            size,
            unsent: size,
            outstanding: 1,
            next_free: NIL,
            next_in_flow: NIL,
            ..Message::default()
        })
    }

    const FLOW: FlowKey = FlowKey { src: 0, dst: 1, qp: 0 };

    /// Cuts the next packet of `mid` as the NICs do and numbers it as packet `packet`.
    fn send_new(s: &mut Sequencing, messages: &mut MessageSlab, mid: u32, packet: u32) {
        let m = &mut messages[mid];
        let first = m.unsent == m.size;
        m.unsent -= MTU.min(m.unsent);
        m.outstanding += 1;
        if m.unsent == 0 {
            m.outstanding -= 1;
        }
        s.number_new(messages, FLOW, first, mid, packet);
    }

    /// Sends the flow's next retransmission as packet `packet`: its PSN.
    fn resend(s: &mut Sequencing, messages: &MessageSlab, packet: u32) -> u32 {
        let slot = s.flows.find(&FLOW).unwrap();
        assert_eq!(s.going_back[0].front(), Some(&slot));
        let (_, size) = s.next_resend(messages, slot);
        assert_eq!(size, MTU);
        if s.number_resent(messages, slot, packet) {
            s.stop_going_back(0, slot);
        }
        s.numbers[packet as usize].psn
    }

    /// The receiver takes in packet `packet`; an accepted one is delivered as
    /// `Ctx::deliver` does.
    fn arrive(s: &mut Sequencing, messages: &mut MessageSlab, mid: u32, packet: u32) -> Arrival {
        let (arrival, _, _) = s.arrive(messages, FLOW, mid, packet);
        if arrival == Arrival::Accepted {
            messages[mid].outstanding -= 1;
        }
        arrival
    }

    #[test]
    fn go_back_n_on_a_crafted_sequence() {
        let mut s = Sequencing::new(Receiver::InOrder, MTU, 2).unwrap();
        let mut messages = MessageSlab::new();
        let mid = message(&mut messages, 4);
        // Packet handles are the PSNs of the first transmissions.
        for packet in 0..4 {
            send_new(&mut s, &mut messages, mid, packet);
            assert_eq!(s.numbers[packet as usize], Numbers { psn: packet, tx: packet });
        }
        // PSNs 0, 1, 3, 2 at the receiver: 3 is discarded and NAKed (expected: 2), then
        // the late 2 is accepted.
        assert_eq!(arrive(&mut s, &mut messages, mid, 0), Arrival::Accepted);
        assert_eq!(arrive(&mut s, &mut messages, mid, 1), Arrival::Accepted);
        assert_eq!(arrive(&mut s, &mut messages, mid, 3), Arrival::OutOfSequence { nak: Some(2) });
        assert_eq!(arrive(&mut s, &mut messages, mid, 2), Arrival::Accepted);
        assert!(!s.holds(0, 1, 0), "nothing to resend before the NAK arrives");
        // The NAK of 2 reaches the sender, which goes back to 2 and resends 2 and 3, in
        // order, as transmissions 4 and 5; its new data waits meanwhile.
        assert!(s.on_nak(&messages, FLOW, 2));
        assert!(s.holds(0, 1, 0) && s.has_work(0));
        assert_eq!(resend(&mut s, &messages, 10), 2);
        assert!(s.holds(0, 1, 0));
        assert_eq!(resend(&mut s, &messages, 11), 3);
        assert!(!s.holds(0, 1, 0) && !s.has_work(0), "caught up");
        assert_eq!(s.numbers[10], Numbers { psn: 2, tx: 4 });
        assert_eq!(s.numbers[11], Numbers { psn: 3, tx: 5 });
        // The copy of 2 is a duplicate; 3 completes the message, and the flow, with
        // nothing in flight, is forgotten.
        assert_eq!(arrive(&mut s, &mut messages, mid, 10), Arrival::Duplicate);
        assert_eq!(messages[mid].outstanding, 1);
        assert_eq!(arrive(&mut s, &mut messages, mid, 11), Arrival::Accepted);
        assert_eq!(messages[mid].outstanding, 0);
        assert!(s.flows.find(&FLOW).is_none());
        assert_eq!(s.check(), Ok(()));
    }

    #[test]
    fn one_nak_per_gap_until_the_expected_packet_comes() {
        let mut s = Sequencing::new(Receiver::InOrder, MTU, 2).unwrap();
        let mut messages = MessageSlab::new();
        let mid = message(&mut messages, 6);
        for packet in 0..6 {
            send_new(&mut s, &mut messages, mid, packet);
        }
        assert_eq!(arrive(&mut s, &mut messages, mid, 0), Arrival::Accepted);
        assert_eq!(arrive(&mut s, &mut messages, mid, 2), Arrival::OutOfSequence { nak: Some(1) });
        assert_eq!(arrive(&mut s, &mut messages, mid, 3), Arrival::OutOfSequence { nak: None });
        assert_eq!(arrive(&mut s, &mut messages, mid, 1), Arrival::Accepted);
        // Expected 2 now, which was discarded: the next gap is NAKed again.
        assert_eq!(arrive(&mut s, &mut messages, mid, 4), Arrival::OutOfSequence { nak: Some(2) });
        assert_eq!(arrive(&mut s, &mut messages, mid, 5), Arrival::OutOfSequence { nak: None });
        // The first NAK (1) arrives: the receiver has completed nothing, so the sender
        // goes back to 1; the second (2) comes while it resends 1 and changes nothing.
        assert!(s.on_nak(&messages, FLOW, 1));
        assert_eq!(resend(&mut s, &messages, 10), 1);
        assert!(!s.on_nak(&messages, FLOW, 2));
        let psns: Vec<u32> = (11..15).map(|p| resend(&mut s, &messages, p)).collect();
        assert_eq!(psns, [2, 3, 4, 5]);
        assert!(!s.has_work(0));
        // Arrivals: the copy of 1 is a duplicate, 2 to 5 complete the message.
        assert_eq!(arrive(&mut s, &mut messages, mid, 10), Arrival::Duplicate);
        for p in 11..15 {
            assert_eq!(arrive(&mut s, &mut messages, mid, p), Arrival::Accepted);
        }
        assert_eq!(messages[mid].outstanding, 0);
        assert!(s.flows.find(&FLOW).is_none());
    }

    #[test]
    fn a_stale_nak_never_resends_a_complete_message() {
        let mut s = Sequencing::new(Receiver::InOrder, MTU, 2).unwrap();
        let mut messages = MessageSlab::new();
        let (a, b) = (message(&mut messages, 2), message(&mut messages, 2));
        for (mid, packet) in [(a, 0), (a, 1), (b, 2), (b, 3)] {
            send_new(&mut s, &mut messages, mid, packet);
        }
        assert_eq!(arrive(&mut s, &mut messages, a, 1), Arrival::OutOfSequence { nak: Some(0) });
        assert_eq!(arrive(&mut s, &mut messages, a, 0), Arrival::Accepted);
        assert_eq!(arrive(&mut s, &mut messages, b, 2), Arrival::OutOfSequence { nak: Some(1) });
        assert_eq!(arrive(&mut s, &mut messages, b, 3), Arrival::OutOfSequence { nak: None });
        // The NAK of 0: the sender goes back to 0 and resends all four.
        assert!(s.on_nak(&messages, FLOW, 0));
        let psns: Vec<u32> = (10..14).map(|p| resend(&mut s, &messages, p)).collect();
        assert_eq!(psns, [0, 1, 2, 3]);
        assert_eq!(arrive(&mut s, &mut messages, a, 10), Arrival::Duplicate);
        assert_eq!(arrive(&mut s, &mut messages, a, 11), Arrival::Accepted);
        assert_eq!(messages[a].outstanding, 0, "a is complete");
        // The NAK of 1, sent before the receiver had 1, arrives now: the sender goes back
        // to b's first packet, 2, not to 1.
        assert!(s.on_nak(&messages, FLOW, 1));
        assert_eq!(s.check(), Ok(()));
        let psns: Vec<u32> = (14..16).map(|p| resend(&mut s, &messages, p)).collect();
        assert_eq!(psns, [2, 3]);
        for (p, fate) in [(12, Arrival::Accepted), (13, Arrival::Accepted), (14, Arrival::Duplicate)] {
            assert_eq!(arrive(&mut s, &mut messages, b, p), fate);
        }
        assert_eq!(messages[b].outstanding, 0, "b is complete");
        assert!(s.flows.find(&FLOW).is_some(), "a copy is still on its way");
        assert_eq!(arrive(&mut s, &mut messages, b, 15), Arrival::Duplicate);
        assert!(s.flows.find(&FLOW).is_none());
    }

    #[test]
    fn out_of_order_receivers_count_reordering_and_accept_everything() {
        let mut s = Sequencing::new(Receiver::OutOfOrder, MTU, 2).unwrap();
        let mut messages = MessageSlab::new();
        let mid = message(&mut messages, 5);
        for packet in 0..5 {
            send_new(&mut s, &mut messages, mid, packet);
        }
        let mut depths = Vec::new();
        for packet in [0, 3, 1, 4, 2] {
            let (arrival, depth, _) = s.arrive(&mut messages, FLOW, mid, packet);
            assert_eq!(arrival, Arrival::Accepted);
            depths.push(depth);
        }
        // 1 arrives 2 behind 3; 2 arrives 2 behind 4.
        assert_eq!(depths, [None, None, Some(2), None, Some(2)]);
        assert!(s.flows.find(&FLOW).is_none(), "nothing in flight: forgotten");
        assert_eq!(messages[mid].next_in_flow, NIL, "no list without going back");
    }
}
