//! What a component may touch while handling an event.

use super::event::Event;
use super::event_queue::EventQueue;
use crate::observe::Stats;
use crate::packet::{MessageSlab, PacketSlab, NIL};
use crate::routing::AnyRouting;
use crate::topology::AnyTopology;
use rand_pcg::Pcg64Mcg;

pub struct Ctx<'a> {
    pub now: u64,
    pub queue: &'a mut EventQueue,
    pub packets: &'a mut PacketSlab,
    pub messages: &'a mut MessageSlab,
    pub stats: &'a mut Stats,
    pub topo: &'a AnyTopology,
    pub routing: &'a AnyRouting,
    pub routing_rng: &'a mut Pcg64Mcg,
    /// Time a packet last moved (watchdog).
    pub last_progress: &'a mut u64,
}

impl Ctx<'_> {
    #[inline]
    pub fn schedule(&mut self, at: u64, event: Event) {
        self.queue.push(at, event);
    }

    /// A buffer had no room for `packet`: count it and let it go. Its message (control
    /// packets have none) is over, incomplete, once none of its packets is in flight.
    pub fn drop_packet(&mut self, packet: u32) {
        let p = self.packets[packet];
        self.stats.on_drop(self.now, p.group);
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
