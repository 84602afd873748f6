//! What a component may touch while handling an event.

use super::event::Event;
use super::event_queue::EventQueue;
use crate::observe::Stats;
use crate::packet::{MessageSlab, PacketSlab};
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
}
