//! What a component may touch while handling an event.

use super::event::Event;
use super::event_queue::EventQueue;
use super::observer::Observer;
use super::stop::Stop;
use super::trace::TraceEvent;
use crate::flow_control::CreditReturns;
use crate::packet::{MessageSlab, PacketSlab, Tag, NIL};
use rand_pcg::Pcg64Mcg;

/// A message arrived whole: its last packet was delivered, or it crossed the intra-node
/// link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageDone {
    /// The host that posted it.
    pub src: u32,
    pub dst: u32,
    /// Its size in bytes.
    pub size: u64,
    /// The tag it was posted with.
    pub tag: Tag,
    /// Its queue pair.
    pub qp: u32,
    /// When it was posted (ps).
    pub created: u64,
    /// When it arrived (its last packet was delivered) (ps): the time of the callback.
    pub at: u64,
}

/// What every component may touch while it handles an event: the time, the event
/// queue, the packets and messages, the random stream of the routing, the observers
/// (reached through [`Ctx::trace`]), and two things in flight between components: the
/// credits on their way back to the host NICs and the completions on their way to the
/// workload. Components keep their own state; the kernel hands each its part.
///
/// `O` is the run's observers: the kernel knows them only as an [`Observer`]; the models
/// see them as they are (`crate::model::Ctx`).
pub struct Ctx<'a, O> {
    pub now: u64,
    /// End of the run: nothing at or after it happens. The duration, or sooner the
    /// delivery that completes the run's `stop` (which then sets it to its time).
    pub end: u64,
    pub queue: &'a mut EventQueue,
    pub packets: &'a mut PacketSlab,
    pub messages: &'a mut MessageSlab,
    /// The observers: the statistics and the optional collectors.
    pub stats: &'a mut O,
    /// The routing's random stream (the traffic's is the workload's, `Env::rng`).
    pub routing_rng: &'a mut Pcg64Mcg,
    /// Credits travelling back along the host links: the switches put them on the wire,
    /// the NICs collect them (switch outputs keep their own, in their `Sender`).
    pub host_returns: &'a mut CreditReturns,
    /// Messages completed during the current event, for the workload; `None` when it
    /// does not ask for them.
    pub completions: Option<&'a mut Vec<MessageDone>>,
    /// The messages that end the run (`simulation.stop_after`), if the config sets them.
    /// Every data packet then reaches its host as a `Deliver` event (`Observer::settle_before`
    /// is 0), so the completion that ends the run happens at its own time.
    pub stop: Option<&'a mut Stop>,
}

impl<O: Observer> Ctx<'_, O> {
    #[inline]
    pub fn schedule(&mut self, at: u64, event: Event) {
        self.queue.push(at, event);
    }

    /// Reports what happened now to the collectors.
    #[inline(always)]
    pub fn trace(&mut self, event: TraceEvent) {
        self.stats.trace(self.now, event);
    }

    /// The tail of `packet` will reach its destination host at `at`. Plain data is
    /// accounted at once, saving an event: nothing at the host reacts to it, and the
    /// counters and series take the delivery time. Marked packets and control packets
    /// (notifications, acknowledgements), to which the NIC reacts, arrive as `Deliver`
    /// events, as does whatever would arrive after the run or after a change the
    /// workload announced (`Observer::settle_before`; every packet in a run that may stop
    /// early, or whose NICs take every data packet on the receive path, `Nics::receipts`:
    /// both set it to 0 when the run is built), and, when the workload hears of
    /// completions, the packet that completes its message (at its time).
    #[inline]
    pub fn send_to_host(&mut self, at: u64, packet: u32) {
        if self.packets[packet].kind.is_plain_data()
            && at < self.stats.settle_before()
            && !(self.completions.is_some() && self.completes(packet))
        {
            self.deliver(at, packet);
        } else {
            self.schedule(at, Event::Deliver { packet });
        }
    }

    /// Whether delivering data packet `packet` completes its message.
    fn completes(&self, packet: u32) -> bool {
        self.messages[self.packets[packet].message].outstanding == 1
    }

    /// The tail of data packet `packet` reached its destination at `at`: account and
    /// free it.
    pub fn deliver(&mut self, at: u64, packet: u32) {
        let p = self.packets[packet];
        let dst_group = self.stats.group_of(p.dst);
        let message = &mut self.messages[p.message];
        let (created, size) = (message.created, message.size);
        message.outstanding -= 1;
        let done = message.outstanding == 0;
        // Goodput: the header the frame carried is not counted.
        let bytes = self.packets.payload(packet);
        self.stats.trace(
            at,
            TraceEvent::Delivered { src_group: p.group, dst_group, dst: p.dst, bytes, created, injected: p.injected },
        );
        if done {
            self.stats.trace(at, TraceEvent::MessageDone { group: p.group, created, bytes: size, hops: p.hops });
            self.message_complete(at, p.message, p.group);
        }
        self.packets.release(packet);
    }

    /// Message `message`, sent by a host of `group`, arrived whole at `at`: the workload
    /// hears of it (if it listens), its slot is freed, and it counts for the run's stop.
    /// The one way a message ends, whichever path it took (the network or the intra-node
    /// link). Inlined into `deliver`, whose per-message branch it is.
    #[inline(always)]
    pub fn message_complete(&mut self, at: u64, message: u32, group: u16) {
        if let Some(completions) = self.completions.as_deref_mut() {
            let m = &self.messages[message];
            completions.push(MessageDone {
                src: m.src,
                dst: m.dst,
                size: m.size,
                tag: m.tag,
                qp: m.qp,
                created: m.created,
                at,
            });
        }
        self.messages.release(message);
        if let Some(stop) = self.stop.as_deref_mut() {
            if stop.message_done(group, at) {
                // The run ends now (deliveries are events in such a run: `at` is now).
                debug_assert_eq!(at, self.now, "a run that may stop accounts deliveries at their time");
                self.end = at;
            }
        }
    }

    /// A buffer had no room for `packet`: count it and let it go. Its message (control
    /// packets have none) is over, incomplete, once none of its packets is in flight.
    pub fn drop_packet(&mut self, packet: u32) {
        let p = self.packets[packet];
        self.trace(TraceEvent::Dropped { group: p.group });
        self.packets.release(packet);
        if p.message == NIL {
            return;
        }
        let message = &mut self.messages[p.message];
        message.outstanding -= 1;
        if message.outstanding == 0 {
            self.messages.release(p.message);
        }
    }
}
