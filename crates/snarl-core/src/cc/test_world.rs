//! What a `Ctx` borrows, for driving a congestion control outside a simulation in its
//! unit tests: an event queue, the slabs, statistics and a routing stream.

use super::CongestionControl;
use crate::flow_control::CreditReturns;
use crate::kernel::{Event, EventQueue};
use crate::model::Ctx;
use crate::observe::{IdealFct, Stats};
use crate::packet::{MessageSlab, PacketSlab};
use crate::units::Rate;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

pub struct World {
    pub queue: EventQueue,
    pub packets: PacketSlab,
    pub messages: MessageSlab,
    pub stats: Stats,
    rng: Pcg64Mcg,
    returns: CreditReturns,
}

impl World {
    /// Hosts on 100 Gb/s links, 4 KiB packets.
    pub fn new() -> World {
        let ideal = IdealFct {
            host_rate: Rate(100_000_000_000),
            host_latency: 0,
            switch_link_latency: 0,
            switch_latency: 0,
            per_packet: Default::default(),
        };
        World {
            queue: EventQueue::new(1_000_000, 10).unwrap(),
            packets: PacketSlab::new(),
            messages: MessageSlab::new(),
            stats: Stats::new(1, 0, 1_000_000_000, 100_000_000_000, ideal, 4096).unwrap(),
            rng: Pcg64Mcg::seed_from_u64(1),
            returns: CreditReturns::new(4).unwrap(),
        }
    }

    pub fn ctx(&mut self, now: u64) -> Ctx<'_> {
        Ctx {
            now,
            end: u64::MAX,
            queue: &mut self.queue,
            packets: &mut self.packets,
            messages: &mut self.messages,
            stats: &mut self.stats,
            routing_rng: &mut self.rng,
            host_returns: &mut self.returns,
            completions: None,
            stop: None,
        }
    }

    /// Fires every pending timer of `cc` up to `until`; returns how many fired.
    pub fn run_timers(&mut self, cc: &mut impl CongestionControl, until: u64) -> usize {
        let mut fired = 0;
        while let Some((at, event)) = self.queue.pop() {
            if at > until {
                self.queue.push(at, event);
                break;
            }
            let Event::Timer(timer) = event else { panic!("{event:?}") };
            cc.on_timer(&mut self.ctx(at), timer);
            fired += 1;
        }
        fired
    }
}
