//! What reaches a NIC: data is delivered; what a packet's flags mean is decided here
//! with the congestion control (a marked packet at its receiver, a CNP at its sender).

use super::scheduling::CnpRequest;
use super::Nics;
use crate::cc::{CongestionControl, FlowKey};
use crate::kernel::{Ctx, Timer};
use crate::observe::TraceEvent;

impl Nics {
    /// The tail of `packet` reached its destination NIC, which decides what its flags
    /// mean: a CNP goes to the sender's congestion control, a marked data packet to the
    /// receiver's (notification point) before it is delivered.
    pub fn receive(&mut self, ctx: &mut Ctx, packet: u32) {
        let kind = ctx.packets[packet].kind;
        if kind.is_notification() {
            self.receive_cnp(ctx, packet);
            return;
        }
        if kind.is_marked() {
            self.notify(ctx, packet);
        }
        ctx.deliver(ctx.now, packet);
    }

    /// Notification point: the marked data packet `packet` is being delivered. Its
    /// destination queues a CNP for the flow if the congestion control asks for one
    /// (DCQCN: unless one went out less than the CNP interval ago; IB CC: a BECN for
    /// every FECN).
    fn notify(&mut self, ctx: &mut Ctx, packet: u32) {
        let Some(scheduler) = self.scheduler.as_deref_mut() else { return };
        let Some(cc) = scheduler.cc.as_mut() else { return };
        let p = ctx.packets[packet];
        let (src, dst, qp) = (p.src, p.dst, p.qp);
        if !cc.on_marked(ctx, FlowKey { src, dst, qp }) {
            return;
        }
        // On the flow's (injection) VC.
        let vc = ctx.messages[p.message].vc;
        let kind = cc.notification();
        scheduler.cnps[dst as usize].push_back(CnpRequest { dst: src, qp, vc, kind });
        self.try_inject(ctx, dst);
    }

    /// Reaction point: the CNP `packet` reached the sender of its flow.
    fn receive_cnp(&mut self, ctx: &mut Ctx, packet: u32) {
        let p = ctx.packets[packet];
        ctx.trace(TraceEvent::CnpDelivered { group: p.group });
        ctx.packets.release(packet);
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            let line = self.rate[p.dst as usize].0 as f64;
            cc.on_notification(ctx, FlowKey { src: p.dst, dst: p.src, qp: p.qp }, line);
        }
    }

    /// A congestion-control timer fired.
    pub fn cc_timer(&mut self, ctx: &mut Ctx, timer: Timer) {
        if let Some(cc) = self.scheduler.as_deref_mut().and_then(|scheduler| scheduler.cc.as_mut()) {
            cc.on_timer(ctx, timer);
        }
    }
}
