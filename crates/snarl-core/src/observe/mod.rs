//! Observers. Models report what happens as trace events ([`TraceEvent`]); the always-on
//! statistics ([`Stats`]: per-group counters, latency histograms, windowed throughput,
//! flow completion times, named counters, PFC's frames, the per-pair control's windows,
//! the receivers' reordering and go-back-N)
//! and the optional collectors ([`Collector`]: the fabric event series, the rate log,
//! queue probes, IB CC's marks and CCTIs) turn them into the summary and the tables. They watch the model and never steer it; every hook is O(1) and
//! allocation-free.

mod collector;
mod config;
mod fabric_series;
mod fct;
pub mod hotspots;
pub mod ibcc;
mod latency;
pub mod per_pair;
pub mod pfc;
mod queue_series;
pub mod queues;
mod rates;
pub mod receiver;
mod recovery;
mod sample;
mod series;
mod topology_table;
pub mod trees;

pub use crate::kernel::{IsolationEvent, ReceiverEvent, TraceEvent};
pub use collector::{
    for_run as collectors_for_run, AnyCollector, Collector, Collectors, FabricView, Finish, NoFabric, Setup,
};
pub use config::{default_threshold as default_tree_threshold, ObserveConfig, QueueProbeConfig, TreesConfig};
pub use fabric_series::FabricSeries;
pub use fct::{Fct, FctDist, IdealFct, PerPacket, BUCKETS as FCT_BUCKETS};
pub use hotspots::{HotspotTime, ReceiveRate};
pub use ibcc::{IbccSeries, IbccSummary, MarkingPort};
pub use latency::Latency;
pub use per_pair::{PerPairSummary, PerPairWindows};
pub use pfc::{PausedLink, PfcCounters, PfcSummary};
pub use queue_series::{Counted, ProbedQueue, QueueSeries};
pub use queues::{EcnBand, QueueProbes, QueueSummary};
pub use rates::RateLog;
pub use receiver::{ReceiverCounts, ReceiverSummary};
pub use recovery::recovery;
pub use sample::{BlockedHost, FabricSample, NoQueues, QueueSide, SampledQueue};
pub use series::Series;
pub use topology_table::topology_table;
pub use trees::{TreeTracker, TreesSummary};

use crate::cc::CongestionTerms;
use crate::error::Result;
use crate::report::{GroupSummary, PacketCounts, Report, Summary};
use crate::units::{Rate, SerialTime};
use std::collections::BTreeMap;

/// What one group did during the measurement interval (packet counts: whole run).
#[derive(Clone, Default)]
pub struct GroupStats {
    pub generated_bytes: u64,
    pub delivered_bytes: u64,
    pub received_bytes: u64,
    pub injected_packets: u64,
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    /// Data packets an in-order receiver discarded (out of sequence, or duplicates).
    pub discarded_packets: u64,
    /// Latency of every delivered data packet once the run is summarised. While it runs,
    /// of those that did not complete their message: a last packet's latency is its
    /// message's, recorded once and merged in at the end (`Stats::settle`).
    pub latency: Latency,
    pub network_latency: Latency,
    /// Latency of every message once the run is summarised. While it runs, of those
    /// generated before the measurement interval: the others' is their FCT, recorded
    /// once in `Stats::fct` and merged in at the end.
    pub message_latency: Latency,
}

/// Named counters of the run, reported under `counters`.
#[derive(Clone, Copy, Default, Debug)]
pub struct Counters {
    pub messages_generated: u64,
    pub messages_delivered: u64,
    pub source_queue_full: u64,
    pub packets_dropped: u64,
    /// Packets sent on a non-minimal route (Valiant, or UGAL choosing Valiant).
    pub nonminimal_packets: u64,
    /// Packets a switch marked (ECN congestion experienced; under IB CC, FECN).
    /// Reported under the names of the run's `CongestionTerms`.
    pub ecn_marks: u64,
    /// Congestion notifications sent by receivers, and delivered to senders (CNPs;
    /// under IB CC, BECNs; under the per-pair control, marked ACKs).
    pub cnps_sent: u64,
    pub cnps_delivered: u64,
    /// Rate cuts at the senders (one per CNP received; under IB CC, one per BECN that
    /// raised a CCTI; under the per-pair control, one per window cut).
    pub rate_cuts: u64,
    /// Messages between endpoints of one node: taken onto the intra-node link, and
    /// delivered over it (with their bytes). They count in `messages_generated` and
    /// `messages_delivered` too, never in the network's packets, loads or latencies.
    pub intra_node_posted: u64,
    pub intra_node_messages: u64,
    pub intra_node_bytes: u64,
}

pub struct Stats {
    /// Start of the measurement interval, in picoseconds.
    pub measure_from: u64,
    pub groups: Vec<GroupStats>,
    pub series: Series,
    pub counters: Counters,
    pub pfc: PfcCounters,
    /// The windows of the per-pair congestion control, in runs that have it.
    pub per_pair: Option<PerPairWindows>,
    /// The receivers' reordering and go-back-N, in runs whose NICs number packets.
    pub receiver: Option<ReceiverCounts>,
    /// Data packets in-order receivers discarded: neither delivered nor dropped, they
    /// reached their host and were let go (`PacketCounts::discarded`).
    pub discarded: u64,
    pub fct: Fct,
    /// The optional collectors this run has.
    pub collectors: Collectors,
    pub injected: u64,
    pub delivered: u64,
    pub packet_hops: u64,
    /// When a packet last moved: started a hop or reached its destination (for the
    /// watchdog).
    pub last_moved: u64,
    /// Host links: a packet's bytes reach its destination over its serialisation on
    /// the host link, so one delivered within a packet time of the measurement start
    /// counts by the part that arrived inside the window.
    pub host_rate: Rate,
    /// The longest packet's serialisation on a host link.
    pub longest_arrival: u64,
    /// The measurement start plus `longest_arrival`: deliveries from then on count
    /// whole, without a division.
    whole_from: u64,
    /// Report the congestion-control counters, named so (runs with ECN or congestion
    /// control).
    pub congestion_counters: Option<CongestionTerms>,
    /// Report the intra-node link's counters (runs whose nodes have several endpoints;
    /// any run that used the link reports them too).
    pub intra_node: bool,
    /// Group of each host, as the workload reports it (index into `groups`): the group
    /// a host's sending and receiving count for.
    pub host_group: Vec<u16>,
    /// Plain data reaching its host before this time is accounted when its last link
    /// starts sending it (`Ctx::send_to_host`); from it on it arrives as a `Deliver`
    /// event. The end of the run, or sooner the next change the workload announced
    /// (`Env::set_boundary`), so that each delivery is counted on its side of it; 0 in a
    /// run that may stop early (`simulation.stop_after`), which must see every delivery
    /// at its time to stop at the one that completes its last message.
    pub settle_before: u64,
    /// Per host: whether it is a shared hotspot now (always false in runs without).
    pub is_hotspot: Vec<bool>,
    /// Per host: when its offering of the messages it generated ends (see `on_generate`).
    offered_until: Vec<u64>,
    /// Serialisation on a host link, and the end of the run as sized.
    host_serial: SerialTime,
    duration: u64,
    /// Data bytes received inside the measurement interval by hosts that were not (0) or
    /// were (1) hotspots when the bytes arrived.
    received_as: [u64; 2],
    /// Hotspot time and the summary's hotspot keys, in runs with shared hotspots.
    pub hotspots: Option<Box<HotspotTime>>,
    /// The latency (and sending group) of the last data packet delivered inside the
    /// measurement interval, not yet recorded: if its message completes with it (the
    /// `MessageDone` that follows), the same value is the message's latency (and FCT),
    /// recorded once for all (`settle`); otherwise it goes into the packet latencies at
    /// the next delivery (or at the end).
    held_latency: Option<(u16, u64)>,
    /// The latencies and FCTs are whole (`settle`).
    settled: bool,
}

impl Stats {
    /// `ideal` describes the fabric at zero load, for FCT slowdowns.
    /// `ideal` describes the fabric at zero load; `mtu` is the longest packet.
    pub fn new(
        groups: usize,
        measure_from: u64,
        window: u64,
        duration: u64,
        ideal: IdealFct,
        mtu: u64,
    ) -> Result<Stats> {
        Ok(Stats {
            host_rate: ideal.host_rate,
            longest_arrival: ideal.host_rate.serialize(mtu),
            whole_from: measure_from.saturating_add(ideal.host_rate.serialize(mtu)),
            measure_from,
            groups: vec![GroupStats::default(); groups],
            series: Series::new(groups, window, duration)?,
            counters: Counters::default(),
            pfc: PfcCounters::default(),
            per_pair: None,
            receiver: None,
            discarded: 0,
            fct: Fct::new(ideal, groups),
            collectors: Collectors::default(),
            injected: 0,
            delivered: 0,
            packet_hops: 0,
            last_moved: 0,
            congestion_counters: None,
            intra_node: false,
            host_group: Vec::new(),
            settle_before: duration,
            is_hotspot: Vec::new(),
            offered_until: Vec::new(),
            host_serial: SerialTime::new(ideal.host_rate),
            duration,
            received_as: [0; 2],
            hotspots: None,
            held_latency: None,
            settled: false,
        })
    }

    /// Takes in one trace event at `now`. Inlined where it is reported, so the match
    /// resolves at compile time; the optional collectors cost one branch when there are
    /// none.
    #[inline(always)]
    pub fn trace(&mut self, now: u64, event: TraceEvent) {
        self.on(now, &event);
        if self.collectors.any() {
            self.collectors.on(now, &event);
        }
    }

    /// Host `host` of `group` generated a message of `bytes` (accepted by its source
    /// queue or refused). A source offers what its link can carry: the message is offered
    /// over its serialisation on the host link, from its generation or from the end of
    /// the host's previous offering, whichever is later; the loads count the part of each
    /// offering inside the measurement interval, so offered load never exceeds 1.
    #[inline]
    fn on_generate(&mut self, now: u64, group: u16, host: u32, bytes: u64, accepted: bool) {
        if accepted {
            self.counters.messages_generated += 1;
        } else {
            self.counters.source_queue_full += 1;
        }
        let until = &mut self.offered_until[host as usize];
        let start = now.max(*until);
        let end = start + self.host_serial.time(bytes);
        *until = end;
        self.series.add_offered(start, end, group, bytes);
        self.groups[group as usize].generated_bytes += part_in(bytes, start, end, self.measure_from, self.duration);
    }

    /// The run ended at `end`, before its duration (`simulation.stop_after`): the parts
    /// of the offerings after it, counted when they were generated, are taken back.
    pub fn end_offerings_at(&mut self, end: u64) {
        let (from, to) = (self.measure_from.max(end), self.duration);
        for (h, &until) in self.offered_until.iter().enumerate() {
            if until > from {
                let beyond = self.host_rate.bytes_in(until.min(to) - from);
                let g = &mut self.groups[self.host_group[h] as usize];
                g.generated_bytes = g.generated_bytes.saturating_sub(beyond);
            }
        }
    }

    #[inline]
    fn on_inject(&mut self, group: u16) {
        self.injected += 1;
        self.groups[group as usize].injected_packets += 1;
    }

    /// A packet was dropped for want of buffer space.
    #[inline]
    fn on_drop(&mut self, group: u16) {
        self.counters.packets_dropped += 1;
        self.groups[group as usize].dropped_packets += 1;
    }

    /// A receiver that numbers packets, or a sender going back, acted. A NAK counts as
    /// an injected packet, a discarded packet as neither delivered nor dropped (out of
    /// line: only runs with a receiver in force report these).
    #[inline(never)]
    fn on_receiver(&mut self, now: u64, event: ReceiverEvent) {
        match event {
            ReceiverEvent::Discarded { group, .. } => {
                self.discarded += 1;
                self.groups[group as usize].discarded_packets += 1;
                self.last_moved = now;
            }
            ReceiverEvent::NakSent { group } => self.on_inject(group),
            ReceiverEvent::Reordered { .. } | ReceiverEvent::Retransmitted => {}
        }
        if let Some(receiver) = self.receiver.as_mut() {
            receiver.on(event);
        }
    }

    /// A control packet (CNP) left a NIC of `group`: it counts in the packet counts
    /// (conservation, of the whole run and of its group), never in loads or latencies.
    #[inline]
    fn on_inject_control(&mut self, group: u16) {
        self.injected += 1;
        self.groups[group as usize].injected_packets += 1;
        self.counters.cnps_sent += 1;
    }

    /// A control packet sent by `group` reached its destination.
    #[inline]
    fn on_deliver_control(&mut self, group: u16) {
        self.delivered += 1;
        self.groups[group as usize].delivered_packets += 1;
        self.counters.cnps_delivered += 1;
    }

    /// Sets the group of each host (and so the number of hosts).
    pub fn set_hosts(&mut self, host_group: Vec<u16>) -> Result<()> {
        self.is_hotspot = crate::memory::fallible::filled(host_group.len(), false, "the traffic tables")?;
        self.offered_until = crate::memory::fallible::zeroed(host_group.len(), "the traffic tables")?;
        self.host_group = host_group;
        Ok(())
    }

    /// A data packet's tail reached host `dst`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn on_deliver(
        &mut self,
        now: u64,
        src_group: u16,
        dst_group: u16,
        dst: u32,
        bytes: u64,
        created: u64,
        injected: u64,
    ) {
        self.delivered += 1;
        let arrival = self.host_serial.time(bytes);
        self.series.add_delivered(now.saturating_sub(arrival), now, src_group, bytes, now - created);
        self.groups[src_group as usize].delivered_packets += 1;
        if now >= self.measure_from {
            let inside = if now >= self.whole_from { bytes } else { self.arrived_inside(bytes, now, now) };
            self.hold_latency(src_group, now - created);
            let g = &mut self.groups[src_group as usize];
            g.delivered_bytes += inside;
            g.network_latency.record(now - injected);
            self.groups[dst_group as usize].received_bytes += inside;
            self.received_as[self.is_hotspot[dst as usize] as usize] += inside;
        }
    }

    /// A data packet of `group` was delivered after `latency`: held until it is known
    /// whether its message completes with it; the packet held before goes into the
    /// packet latencies.
    #[inline(always)]
    fn hold_latency(&mut self, group: u16, latency: u64) {
        if let Some((g, l)) = self.held_latency.replace((group, latency)) {
            self.groups[g as usize].latency.record(l);
        }
    }

    /// Makes the latency and FCT histograms whole. A value recorded once for several
    /// is merged into each: the packet held goes in; the messages' include the FCTs (the
    /// latencies of the messages generated in the window); the packets' include the
    /// messages' (their last packets). (Histograms merge count by count: as if each value
    /// had been recorded in each.)
    fn settle(&mut self) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        if let Some((g, l)) = self.held_latency.take() {
            self.groups[g as usize].latency.record(l);
        }
        self.fct.settle();
        for (g, flows) in self.groups.iter_mut().zip(&self.fct.groups) {
            g.message_latency.merge(&flows.fct);
            g.latency.merge(&g.message_latency);
        }
    }

    /// Host `host` became (`on`) or stopped being a shared hotspot.
    #[cold]
    fn on_hotspot(&mut self, now: u64, host: u32, on: bool) {
        self.is_hotspot[host as usize] = on;
        if let Some(time) = self.hotspots.as_deref_mut() {
            if on {
                time.on(now, host);
            } else {
                time.off(now, host);
            }
        }
    }

    /// The bytes of a packet of `bytes` whose tail reaches its host at `tail_at` that
    /// arrived inside the measurement window, up to `until` (the packet's bits arrive
    /// evenly over its serialisation on the host link). Out of line: only packets at the
    /// window's edges need it.
    #[cold]
    #[inline(never)]
    fn arrived_inside(&self, bytes: u64, tail_at: u64, until: u64) -> u64 {
        let serialise = self.host_rate.serialize(bytes).max(1);
        let head_at = tail_at.saturating_sub(serialise);
        let (from, to) = (head_at.max(self.measure_from), tail_at.min(until));
        if to <= from {
            return 0;
        }
        (bytes as u128 * (to - from) as u128 / serialise as u128) as u64
    }

    /// A data packet of `bytes` from `src_group` to host `dst` whose tail reaches it at
    /// `tail_at`, after the run's `end`: its bytes that arrived before the end count in
    /// the loads (it is not delivered).
    pub fn arriving_at_end(&mut self, end: u64, src_group: u16, dst: u32, bytes: u64, tail_at: u64) {
        let inside = self.arrived_inside(bytes, tail_at, end);
        let dst_group = self.host_group[dst as usize];
        self.groups[src_group as usize].delivered_bytes += inside;
        self.groups[dst_group as usize].received_bytes += inside;
        self.received_as[self.is_hotspot[dst as usize] as usize] += inside;
    }

    /// The last packet of a message of `bytes` sent by `group` was delivered; it crossed
    /// `hops` links.
    #[inline]
    fn on_message_done(&mut self, now: u64, group: u16, created: u64, bytes: u64, hops: u16) {
        self.counters.messages_delivered += 1;
        if now < self.measure_from {
            return;
        }
        // Its latency is its last packet's and, if it was generated in the window, its
        // FCT: recorded once, for all (`settle`).
        let latency = now - created;
        let last_packet = self.held_latency.take();
        debug_assert_eq!(last_packet, Some((group, latency)), "a message completes with its last packet's delivery");
        if created >= self.measure_from {
            self.fct.record(group, bytes, latency, hops);
        } else {
            self.groups[group as usize].message_latency.record(latency);
        }
    }

    /// The summary of the always-on statistics and of the optional collectors;
    /// `finish.groups[g]` names group g and gives its hosts' count and summed
    /// link capacity (bits/s).
    pub fn summarise(&mut self, finish: &Finish) -> Summary {
        let (groups, end, ps_per_unit) = (finish.groups, finish.end, finish.ps_per_unit);
        self.settle();
        let seconds = (end.saturating_sub(self.measure_from)) as f64 * 1e-12;
        let mut summaries = BTreeMap::new();
        let mut total = GroupStats::default();
        let mut all_info = GroupInfo { name: "all".into(), hosts: 0, capacity_bps: 0.0 };
        for ((info, g), fct) in groups.iter().zip(&self.groups).zip(&self.fct.groups) {
            summaries.insert(info.name.clone(), group_summary(g, fct, info, seconds, ps_per_unit));
            total.generated_bytes += g.generated_bytes;
            total.delivered_bytes += g.delivered_bytes;
            total.received_bytes += g.received_bytes;
            total.injected_packets += g.injected_packets;
            total.delivered_packets += g.delivered_packets;
            total.dropped_packets += g.dropped_packets;
            total.discarded_packets += g.discarded_packets;
            total.latency.merge(&g.latency);
            total.network_latency.merge(&g.network_latency);
            total.message_latency.merge(&g.message_latency);
            all_info.hosts += info.hosts;
            all_info.capacity_bps += info.capacity_bps;
        }
        // The whole run's flows are in the top-level `fct` (Fct::summary), not here.
        let all = group_summary(&total, &FctDist::default(), &all_info, seconds, ps_per_unit);
        let c = &self.counters;
        let mut counters: BTreeMap<String, u64> = [
            ("messages_generated", c.messages_generated),
            ("messages_delivered", c.messages_delivered),
            ("source_queue_full", c.source_queue_full),
            ("packets_dropped", c.packets_dropped),
            ("nonminimal_packets", c.nonminimal_packets),
            ("packet_hops", self.packet_hops),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        if self.intra_node || c.intra_node_posted > 0 {
            // Only in runs with nodes of several endpoints: other summaries keep their keys.
            counters.insert("intra_node_messages".to_string(), c.intra_node_messages);
            counters.insert("intra_node_bytes".to_string(), c.intra_node_bytes);
        }
        if let Some(terms) = self.congestion_counters {
            // Only in runs that mark or control congestion (other summaries keep their
            // keys), named in the mechanism's own terms.
            for (k, v) in [
                (terms.marks, c.ecn_marks),
                (terms.notifications_sent, c.cnps_sent),
                (terms.notifications_delivered, c.cnps_delivered),
                (terms.cuts, c.rate_cuts),
            ] {
                counters.insert(k.to_string(), v);
            }
        }
        let mut summary = Summary {
            time_unit: finish.time_unit.to_string(),
            accepted_load: all.accepted_load,
            offered_load: all.offered_load,
            received_load: all.received_load,
            accepted_gbps: all.accepted_gbps,
            offered_gbps: all.offered_gbps,
            latency: all.latency,
            network_latency: all.network_latency,
            message_latency: all.message_latency,
            packets: self.packet_counts(),
            fct: self.fct.summary(ps_per_unit),
            groups: summaries,
            counters,
            packet_hops: self.packet_hops,
            ..Summary::default()
        };
        if let Some(hotspots) = self.hotspots.as_deref_mut() {
            hotspots.summarise(&mut summary, self.received_as, end, &self.is_hotspot);
        }
        if let Some(section) = self.pfc.section(finish, self.measure_from) {
            summary.sections.set(section);
        }
        if let Some(windows) = &self.per_pair {
            let c = &self.counters;
            summary.sections.set(windows.summary(c.ecn_marks, c.cnps_delivered, c.rate_cuts).section());
        }
        if let Some(receiver) = &self.receiver {
            summary.sections.set(receiver.summary().section());
        }
        self.collectors.summarise(&mut summary, finish);
        summary
    }

    /// The always-on tables (the time series, and hotspot time in runs with shared
    /// hotspots), then the optional collectors'.
    pub fn tables(&self, report: &mut Report, finish: &Finish) {
        let names: Vec<String> = finish.groups.iter().map(|g| g.name.clone()).collect();
        let capacity: Vec<f64> = finish.groups.iter().map(|g| g.capacity_bps).collect();
        report.add_table("timeseries", self.series.table(&names, &capacity, finish.ps_per_unit));
        if let Some(hotspots) = &self.hotspots {
            report.add_table("hotspots", hotspots.table(finish.ps_per_unit));
        }
        self.collectors.tables(report, finish);
    }

    pub fn packet_counts(&self) -> PacketCounts {
        PacketCounts {
            injected: self.injected,
            delivered: self.delivered,
            in_flight: self.injected - self.delivered - self.counters.packets_dropped - self.discarded,
            dropped: self.counters.packets_dropped,
            discarded: self.discarded,
        }
    }
}

/// The always-on statistics as a collector: what each event adds to the counters,
/// histograms and series.
impl crate::kernel::Observer for Stats {
    #[inline(always)]
    fn trace(&mut self, now: u64, event: TraceEvent) {
        Stats::trace(self, now, event)
    }

    #[inline(always)]
    fn group_of(&self, host: u32) -> u16 {
        self.host_group[host as usize]
    }

    #[inline(always)]
    fn settle_before(&self) -> u64 {
        self.settle_before
    }
}

impl Collector for Stats {
    #[inline(always)]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        match *event {
            TraceEvent::Generated { group, host, bytes, accepted } => {
                self.on_generate(now, group, host, bytes, accepted)
            }
            TraceEvent::Injected { group } => self.on_inject(group),
            TraceEvent::Hop => {
                self.packet_hops += 1;
                self.last_moved = now;
            }
            TraceEvent::Delivered { src_group, dst_group, dst, bytes, created, injected } => {
                self.on_deliver(now, src_group, dst_group, dst, bytes, created, injected);
                self.last_moved = now;
            }
            TraceEvent::MessageDone { group, created, bytes, hops } => {
                self.on_message_done(now, group, created, bytes, hops)
            }
            TraceEvent::IntraNodePosted { accepted: true, .. } => {
                self.counters.messages_generated += 1;
                self.counters.intra_node_posted += 1;
            }
            TraceEvent::IntraNodePosted { accepted: false, .. } => self.counters.source_queue_full += 1,
            TraceEvent::IntraNodeDelivered { bytes, .. } => {
                self.counters.messages_delivered += 1;
                self.counters.intra_node_messages += 1;
                self.counters.intra_node_bytes += bytes;
            }
            TraceEvent::Dropped { group } => self.on_drop(group),
            TraceEvent::Receiver(event) => self.on_receiver(now, event),
            TraceEvent::NonMinimal => self.counters.nonminimal_packets += 1,
            TraceEvent::PauseSent { on: true, .. } => self.pfc.pause_frames_sent += 1,
            TraceEvent::PauseSent { on: false, .. } => self.pfc.resume_frames_sent += 1,
            TraceEvent::PauseReceived { .. } => self.pfc.pause_frames_received += 1,
            TraceEvent::EcnMarked { .. } => self.counters.ecn_marks += 1,
            TraceEvent::Isolation(_) => {}
            TraceEvent::CnpSent { group } => self.on_inject_control(group),
            TraceEvent::CnpDelivered { group } => {
                self.on_deliver_control(group);
                self.last_moved = now;
            }
            TraceEvent::Acknowledgement { group, delivered: false } => self.on_inject(group),
            TraceEvent::Acknowledgement { group, delivered: true } => {
                (self.delivered, self.last_moved) = (self.delivered + 1, now);
                self.groups[group as usize].delivered_packets += 1;
            }
            TraceEvent::RateChanged { cut, .. } => self.counters.rate_cuts += cut as u64,
            // A raised CCTI is IB CC's rate cut.
            TraceEvent::CctiChanged { from, to } => self.counters.rate_cuts += (to > from) as u64,
            TraceEvent::WindowChanged { window, cut, .. } => {
                self.counters.rate_cuts += cut as u64;
                if let Some(windows) = self.per_pair.as_mut() {
                    windows.on_window(window);
                }
            }
            TraceEvent::QueueLength { .. } => {}
            TraceEvent::Hotspot { host, on } => self.on_hotspot(now, host, on),
        }
    }
}

/// The whole bytes of `bytes`, offered evenly over [start, end), that fall inside
/// [from, to) (rounded down, so that no interval counts more than was offered in it).
#[inline]
fn part_in(bytes: u64, start: u64, end: u64, from: u64, to: u64) -> u64 {
    let (a, b) = (start.max(from), end.min(to));
    if b <= a {
        0
    } else if a == start && b == end {
        bytes
    } else {
        series::share(bytes, b - a, end - start)
    }
}

/// A group as the summary names and normalises it.
#[derive(Clone, Debug)]
pub struct GroupInfo {
    pub name: String,
    pub hosts: u64,
    /// Summed link capacity of the group's hosts, bits/s.
    pub capacity_bps: f64,
}

fn group_summary(g: &GroupStats, fct: &FctDist, info: &GroupInfo, seconds: f64, ps_per_unit: f64) -> GroupSummary {
    // Bytes over the interval, as a fraction of the group's capacity (= per-endpoint load).
    let load = |bytes: u64| {
        if info.capacity_bps > 0.0 && seconds > 0.0 {
            bytes as f64 * 8.0 / seconds / info.capacity_bps
        } else {
            0.0
        }
    };
    let per_endpoint_gbps = |bytes: u64| {
        if info.hosts > 0 && seconds > 0.0 {
            bytes as f64 * 8.0 / seconds / info.hosts as f64 / 1e9
        } else {
            0.0
        }
    };
    GroupSummary {
        hosts: info.hosts,
        accepted_load: load(g.delivered_bytes),
        offered_load: load(g.generated_bytes),
        received_load: load(g.received_bytes),
        accepted_gbps: per_endpoint_gbps(g.delivered_bytes),
        offered_gbps: per_endpoint_gbps(g.generated_bytes),
        received_gbps: per_endpoint_gbps(g.received_bytes),
        latency: g.latency.stats(ps_per_unit),
        network_latency: g.network_latency.stats(ps_per_unit),
        message_latency: g.message_latency.stats(ps_per_unit),
        flows: fct.flows(),
        fct: fct.fct.stats(ps_per_unit),
        slowdown: fct.slowdown.stats(),
        packets: PacketCounts {
            injected: g.injected_packets,
            delivered: g.delivered_packets,
            in_flight: g.injected_packets - g.delivered_packets - g.dropped_packets - g.discarded_packets,
            dropped: g.dropped_packets,
            discarded: g.discarded_packets,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Collector;

    fn stats() -> Stats {
        let ideal = IdealFct {
            host_rate: Rate(100_000_000_000),
            host_latency: 1,
            switch_link_latency: 1,
            switch_latency: 1,
            per_packet: PerPacket::default(),
        };
        let mut s = Stats::new(2, 50, 1_000, 1_000_000, ideal, 1000).unwrap();
        s.set_hosts(vec![0, 1]).unwrap();
        s
    }

    fn delivered(s: &mut Stats, now: u64, group: u16, created: u64) {
        let event = TraceEvent::Delivered {
            src_group: group,
            dst_group: 1 - group,
            dst: 0,
            bytes: 100,
            created,
            injected: created,
        };
        s.on(now, &event);
    }

    fn message_done(s: &mut Stats, now: u64, group: u16, created: u64) {
        s.on(now, &TraceEvent::MessageDone { group, created, bytes: 100, hops: 2 });
    }

    #[test]
    fn a_last_packet_latency_recorded_once_counts_for_the_packet_its_message_and_its_flow() {
        let mut s = stats();
        delivered(&mut s, 40, 0, 5); // before the measurement start
        message_done(&mut s, 40, 0, 5);
        delivered(&mut s, 100, 0, 10); // its message goes on
        delivered(&mut s, 200, 0, 10); // and completes (generated before the start: no flow)
        message_done(&mut s, 200, 0, 10);
        delivered(&mut s, 300, 1, 250); // completes its one-packet message, a flow
        message_done(&mut s, 300, 1, 250);
        delivered(&mut s, 500, 1, 100); // held at the end
        s.settle();
        s.settle(); // once only
        let (mut want_packets, mut want_messages) = (vec![Latency::default(); 2], vec![Latency::default(); 2]);
        for (g, l) in [(0, 90), (0, 190), (1, 50), (1, 400)] {
            want_packets[g].record(l);
        }
        for (g, l) in [(0, 190), (1, 50)] {
            want_messages[g].record(l);
        }
        for g in 0..2 {
            let (got, want) = (&s.groups[g], (&want_packets[g], &want_messages[g]));
            assert_eq!(format!("{:?}", got.latency.stats(1.0)), format!("{:?}", want.0.stats(1.0)), "group {g}");
            assert_eq!(got.latency.count(), want.0.count());
            assert_eq!(
                format!("{:?}", got.message_latency.stats(1.0)),
                format!("{:?}", want.1.stats(1.0)),
                "group {g}"
            );
            assert_eq!(got.message_latency.count(), want.1.count());
        }
        let mut flows = Latency::default();
        flows.record(50);
        let fct = s.fct.summary(1.0);
        assert_eq!((fct.flows, s.fct.groups[0].flows(), s.fct.groups[1].flows()), (1, 0, 1));
        assert_eq!(format!("{:?}", fct.fct), format!("{:?}", flows.stats(1.0)));
    }
}
