//! What reaches a NIC: data is delivered (or, by an in-order receiver, discarded:
//! `sequence.rs`); what a packet's kind means is decided here with the congestion control
//! (a marked packet at its receiver, a CNP or BECN at its sender, and on the receive path
//! every data packet at its receiver and every ACK or NACK at its sender).

use super::scheduling::ControlRequest;
use super::Nics;
use crate::cc::{Acknowledgement, CongestionControl, FlowKey};
use crate::kernel::Timer;
use crate::model::Ctx;
use crate::observe::TraceEvent;
use crate::routing::hash::flow_vc;

impl Nics {
    /// The tail of `packet` reached its destination NIC, which decides what its kind
    /// means: a notification (CNP, BECN) or an acknowledgement (ACK, NACK) goes to the
    /// sender's congestion control; a marked data packet to the receiver's (notification
    /// point), and on the receive path every data packet too (`on_data`, which may answer
    /// with an acknowledgement), before it is delivered. A NAK of a sequence error goes to
    /// the sender's go-back-N; a data packet of a run whose NICs number packets to its
    /// receiver, which may discard it.
    pub fn receive(&mut self, ctx: &mut Ctx, packet: u32) {
        let kind = ctx.packets[packet].kind;
        if kind.is_control() {
            if kind.is_notification() {
                self.receive_cnp(ctx, packet);
            } else if kind.is_sequence_nak() {
                self.receive_nak(ctx, packet);
            } else {
                self.receive_ack(ctx, packet);
            }
            return;
        }
        if kind.is_marked() {
            self.notify(ctx, packet);
        }
        if self.receipts {
            self.receipt(ctx, packet);
        }
        if self.sequence.is_some() && !self.arrive_numbered(ctx, packet) {
            return;
        }
        ctx.deliver(ctx.now, packet);
    }

    /// Notification point: the marked data packet `packet` is being delivered. Its
    /// destination queues a notification for the flow if the congestion control asks for
    /// one (DCQCN: a CNP, unless one went out less than the CNP interval ago; IB CC: a
    /// BECN for every FECN).
    fn notify(&mut self, ctx: &mut Ctx, packet: u32) {
        let Some(scheduler) = self.scheduler.as_deref_mut() else { return };
        let Some(cc) = scheduler.cc.as_mut() else { return };
        let p = ctx.packets[packet];
        let (src, dst, qp) = (p.src, p.dst, p.qp);
        if !cc.on_marked(ctx, FlowKey { src, dst, qp }) {
            return;
        }
        // On the flow's (injection) VC, as its message has it (`Nics::post`): from the
        // flow, since an in-order receiver's duplicate may outlive its message.
        let vc = flow_vc(src, dst, qp, &self.vc_divisor);
        let kind = cc.notification();
        scheduler.control[dst as usize].push_back(ControlRequest { dst: src, qp, vc, kind });
        self.try_inject(ctx, dst);
    }

    /// Receive path: data packet `packet` reached its destination, which queues the
    /// acknowledgement the congestion control asks for, if any.
    fn receipt(&mut self, ctx: &mut Ctx, packet: u32) {
        let Some(scheduler) = self.scheduler.as_deref_mut() else { return };
        let Some(cc) = scheduler.cc.as_mut() else { return };
        let p = ctx.packets[packet];
        let (src, dst, qp) = (p.src, p.dst, p.qp);
        let Some(ack) = cc.on_data(ctx, FlowKey { src, dst, qp }, &p) else { return };
        let kind = ack.kind();
        let vc = flow_vc(src, dst, qp, &self.vc_divisor);
        scheduler.control[dst as usize].push_back(ControlRequest { dst: src, qp, vc, kind });
        self.try_inject(ctx, dst);
    }

    /// Reaction point: the CNP or BECN `packet` reached the sender of its flow.
    fn receive_cnp(&mut self, ctx: &mut Ctx, packet: u32) {
        let p = ctx.packets[packet];
        ctx.trace(TraceEvent::CnpDelivered { group: p.group });
        ctx.packets.release(packet);
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            let line = self.rate[p.dst as usize].0 as f64;
            cc.on_notification(ctx, FlowKey { src: p.dst, dst: p.src, qp: p.qp }, line);
        }
    }

    /// The ACK or NACK `packet` reached the sender of its flow, whose flow scheduler may
    /// now send what the acknowledgement let go.
    fn receive_ack(&mut self, ctx: &mut Ctx, packet: u32) {
        let p = ctx.packets[packet];
        if p.kind.notifies_congestion() {
            ctx.trace(TraceEvent::CnpDelivered { group: p.group });
        } else {
            ctx.trace(TraceEvent::Acknowledgement { group: p.group, delivered: true });
        }
        ctx.packets.release(packet);
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            cc.on_ack(ctx, FlowKey { src: p.dst, dst: p.src, qp: p.qp }, Acknowledgement::of(p.kind));
        }
        self.try_inject(ctx, p.dst);
    }

    /// A congestion-control timer fired.
    pub fn cc_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            cc.on_timer(ctx, timer);
        }
    }
}
