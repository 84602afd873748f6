//! Endpoints: traffic sources, a bounded source queue of messages, segmentation into
//! packets, per-host injection caps and the credit view of the host link.
//!
//! The source queue is bounded as on a real NIC: a generation that finds it full is
//! counted (`source_queue_full`) and dropped at the source, never stored, so memory
//! stays bounded at and beyond saturation.

use crate::flow_control::{CreditSender, UNLIMITED};
use crate::kernel::{Ctx, Event, HOST_TARGET};
use crate::packet::{Message, Packet, NIL};
use crate::routing::hash::qp_number;
use crate::topology::{Endpoint, Topology};
use crate::traffic::Workload;
use crate::units::{Rate, SerialTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

pub struct Nics {
    vcs: usize,
    mtu: u64,
    queue_capacity: usize,
    qps: u32,
    /// Far end of each host link: a global switch input port or `HOST_TARGET | host`.
    peer: Vec<u32>,
    rate: Vec<Rate>,
    serializer: Vec<SerialTime>,
    latency: Vec<u64>,
    link_free_at: Vec<u64>,
    /// Earliest time the host's injection cap allows its next packet.
    next_allowed: Vec<u64>,
    wake_at: Vec<u64>,
    credits: CreditSender,
    /// Ring buffers of message handles, `queue_capacity` slots per host.
    queue: Vec<u32>,
    queue_head: Vec<u32>,
    queue_len: Vec<u32>,
    /// Bumped when a phase changes the host's traffic; stale `Generate` events are ignored.
    epoch: Vec<u32>,
}

impl Nics {
    /// `port_of(switch, port)` gives the global id of a switch port.
    pub fn new(
        topo: &impl Topology,
        port_of: impl Fn(usize, usize) -> u32,
        vcs: usize,
        switch_input_capacity: u64,
        mtu: u64,
        queue_capacity: usize,
        qps: u32,
    ) -> Nics {
        let hosts = topo.num_hosts();
        let mut peer = Vec::with_capacity(hosts);
        let mut capacity = Vec::with_capacity(hosts);
        let mut rate = Vec::with_capacity(hosts);
        let mut latency = Vec::with_capacity(hosts);
        for h in 0..hosts {
            let (far, cap) = match topo.attachment(h) {
                Endpoint::Switch { switch, port } => {
                    (port_of(switch as usize, port as usize), switch_input_capacity as i64)
                }
                Endpoint::Host(other) => (HOST_TARGET | other, UNLIMITED),
                Endpoint::Unconnected => (NIL, 0),
            };
            peer.push(far);
            capacity.push(cap);
            let link = topo.host_link(h);
            rate.push(link.rate);
            latency.push(link.latency.0);
        }
        Nics {
            vcs,
            mtu,
            queue_capacity,
            qps,
            peer,
            serializer: rate.iter().map(|&r| SerialTime::new(r)).collect(),
            rate,
            latency,
            link_free_at: vec![0; hosts],
            next_allowed: vec![0; hosts],
            wake_at: vec![0; hosts],
            credits: CreditSender::new(capacity, vcs),
            queue: vec![NIL; hosts * queue_capacity],
            queue_head: vec![0; hosts],
            queue_len: vec![0; hosts],
            epoch: vec![0; hosts],
        }
    }

    pub fn rate(&self, host: usize) -> Rate {
        self.rate[host]
    }

    pub fn epoch(&self, host: usize) -> u32 {
        self.epoch[host]
    }

    /// Invalidates pending generations of `host`; returns the new epoch.
    pub fn bump_epoch(&mut self, host: usize) -> u32 {
        self.epoch[host] = self.epoch[host].wrapping_add(1);
        self.epoch[host]
    }

    /// The source of `host` generates a message now and schedules its next one.
    pub fn generate(&mut self, ctx: &mut Ctx, work: &Workload, rng: &mut Pcg64Mcg, host: u32) {
        let h = host as usize;
        let g = work.host_group[h];
        let group = &work.groups[g as usize];
        if !group.sends(&work.patterns) {
            return;
        }
        if let Some(dst) = work.patterns[group.pattern as usize].dest(host, rng) {
            let size = group.draw_size(&work.size_distributions, rng);
            let accepted = (self.queue_len[h] as usize) < self.queue_capacity;
            if accepted {
                let qp = if self.qps > 1 { rng.random_range(0..self.qps) } else { 0 };
                let vc = (qp_number(host, dst, qp) as usize % self.vcs) as u8;
                let id = ctx.messages.alloc(Message {
                    dst,
                    qp,
                    created: ctx.now,
                    size,
                    unsent: size,
                    outstanding: 1,
                    vc,
                    next_free: NIL,
                });
                let slot = (self.queue_head[h] as usize + self.queue_len[h] as usize) % self.queue_capacity;
                self.queue[h * self.queue_capacity + slot] = id;
                self.queue_len[h] += 1;
            }
            ctx.stats.on_generate(ctx.now, g, size, accepted);
        }
        let next = ctx.now + group.process.gap(group.load, rng);
        ctx.schedule(next, Event::Generate { host, epoch: self.epoch[h] });
        self.try_inject(ctx, work, host);
    }

    /// Sends the next packet of the head message if the link, the cap and the credits
    /// allow it.
    pub fn try_inject(&mut self, ctx: &mut Ctx, work: &Workload, host: u32) {
        let (h, now) = (host as usize, ctx.now);
        if self.queue_len[h] == 0 {
            return;
        }
        if self.link_free_at[h] > now {
            self.wake(ctx, host, self.link_free_at[h]);
            return;
        }
        if self.next_allowed[h] > now {
            self.wake(ctx, host, self.next_allowed[h]);
            return;
        }
        let slot = h * self.queue_capacity + self.queue_head[h] as usize;
        let mid = self.queue[slot];
        let m = ctx.messages[mid];
        let size = self.mtu.min(m.unsent);
        if !self.credits.can_send(h, m.vc as usize, size) {
            return; // A credit event will retry.
        }
        let message = &mut ctx.messages[mid];
        message.unsent -= size;
        message.outstanding += 1;
        if message.unsent == 0 {
            message.outstanding -= 1; // The message is fully segmented.
            self.queue_head[h] = ((self.queue_head[h] as usize + 1) % self.queue_capacity) as u32;
            self.queue_len[h] -= 1;
        }
        let group = work.host_group[h];
        let serialise = self.serializer[h].time(size);
        let arrival = now + self.latency[h];
        let packet = ctx.packets.alloc(Packet {
            next: NIL,
            src: host,
            dst: m.dst,
            size: size as u32,
            qp: m.qp,
            message: mid,
            group,
            vc: m.vc,
            out_vc: m.vc,
            out_port: 0,
            hops: 1,
            via: NIL,
            created: m.created,
            injected: now,
            tail_at: arrival + serialise,
            ready_at: 0,
        });
        self.credits.on_send(h, m.vc as usize, size);
        self.link_free_at[h] = now + serialise;
        let cap = work.groups[group as usize].cap;
        if cap < 1.0 {
            self.next_allowed[h] = now + (serialise as f64 / cap).round() as u64;
        }
        ctx.stats.on_inject(group);
        ctx.stats.packet_hops += 1;
        *ctx.last_progress = now;
        if self.queue_len[h] > 0 {
            self.wake_at[h] = now + serialise;
            ctx.schedule(now + serialise, Event::HostWake { host });
        }
        let far = self.peer[h];
        if far & HOST_TARGET != 0 {
            ctx.schedule(arrival + serialise, Event::Deliver { packet });
        } else {
            ctx.schedule(arrival, Event::Arrive { port: far, packet });
        }
    }

    pub fn wake_event(&mut self, ctx: &mut Ctx, work: &Workload, host: u32) {
        if self.wake_at[host as usize] == ctx.now {
            self.wake_at[host as usize] = 0;
        }
        self.try_inject(ctx, work, host);
    }

    pub fn credit(&mut self, ctx: &mut Ctx, work: &Workload, host: u32, vc: usize, bytes: u64) {
        self.credits.on_credit(host as usize, vc, bytes);
        self.try_inject(ctx, work, host);
    }

    fn wake(&mut self, ctx: &mut Ctx, host: u32, at: u64) {
        let pending = self.wake_at[host as usize];
        if pending != 0 && pending >= ctx.now && pending <= at {
            return;
        }
        self.wake_at[host as usize] = at;
        ctx.schedule(at, Event::HostWake { host });
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        self.credits.check_bounds().map_err(|e| format!("host {e}"))
    }

    /// Messages waiting in source queues.
    pub fn queued_messages(&self) -> u64 {
        self.queue_len.iter().map(|&l| l as u64).sum()
    }
}
