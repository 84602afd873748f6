//! The memory a run needs, estimated from its config alone, before anything is built.
//!
//! With H hosts, S switches, P switch ports (summed over the switches), V VCs (or
//! priorities), G node groups (the configured ones plus `default`), Q the source queue
//! times the streams per host (the most parts of a mix, 1 without),
//! W = duration / window time-series windows, B the packets one host's worth of buffer
//! holds (an IOQ port's per-VC input + output buffer, or a shared-buffer `port_buffer`,
//! over the smallest packet: the MTU, or a smaller message size or flow-size mean) and ρ
//! the highest offered load of any group or phase (1 if a pattern is a hotspot or an
//! incast, which saturate their destinations at any load), the estimate is the sum of
//!
//! | part | bytes |
//! |---|---|
//! | fabric tables | the topology's own: 12 per XGFT switch, g·A² for a megafly's distances, ... |
//! | switch ports | P · 138 (port state 64, credit-return ring 64, link class 2, shared memory 8) + S · 14, and 8 per request-mask word (⌈radix · V / 64⌉ per port) |
//! | switch queues | P · V · 104 (input and output queue 32 each, with the per-VC crossbar's busy times, credits 16, pause state 21, probe slot 2, PFC flag 1); with `input_queuing = "voq"`, P · V · (R · 24 + 8) more: a virtual output queue of 24 bytes per output port of the widest switch (R ports) for every input queue, and the bytes waiting for each output queue |
//! | routing tables | with `flowlet`, S · `table` · 16 (a flowlet table per switch); with `planner`, S · `table` · 32 + P · 12 (a QP table per switch, a list and a count per port); with round-robin `spray`, P · 2 (a turn per port); with `adaptive`, S · `table` · 16 (flowlet tables, in its `flowlet` mode) + P · 17 + (S + H) · 4 (a rate estimator per port, where a switch's ports start, a host's leaf), and with its `feedback` telemetry L² · (9 · U + 8 · ⌈U / 64⌉ + 2) for L leaves of U up-ports (the leaf-to-leaf tables); none otherwise |
//! | NICs | H · (128 + 40 · V + 4 · Q); H · (36 + Q) more with round-robin scheduling, H · Q · 64 with DCQCN, H · Q · (160 + 8 · ⌈cap / MTU⌉) with the per-pair control (a pair per slot, with the sizes of its packets in flight), H · 8 with a receive cap (when each host's drain ends), H · (96 · Q + 64) with a receiver that numbers packets (`nic.receiver`, or spraying: a flow's sequence state per slot, the queues of NAKs and of flows going back), H · 20 with several GPUs per node (the intra-node link's port times and counts) |
//! | traffic tables | H · 10 for group membership, and H · 4 per pattern (or part of a mix) that keeps a host list or a destination table; with shared hotspots H · 9 and 24 per hotspot and lifetime of the run |
//! | latency histograms | 5 · G + 8 HDR histograms of about 280 KB (3 latency and 2 FCT per group, 8 for the FCT size buckets), and one per queue probe |
//! | time series | W · G · 32 counters, the report's table of W · (G + 1) rows of 72 bytes, W · 8 for recovery, W · 80 for the fabric series of runs with PFC, drops, ECN or congestion control, W · Q · 32 for the windows of the Q probed queues |
//! | event calendar | 25 per wheel bucket (2^k of them, k = log2(H / 2) within 10..24), and 32 per event for 4,096 + 2 · H + 16 · (H + P) · ρ events: a generation pending per host and, at saturation, about two events per host and port in bucket buffers that keep up to eight times that room |
//! | watchdog | 2 · P · V · ρ queues (inputs and outputs, the non-empty ones at saturation) of 32 bytes: the heads seen at the last check and at the next; with virtual output queues, P · V · ρ · min(R, B) more (the non-empty ones of an input buffer) |
//! | packets in flight | 1.5 · ρ · (H · B packets of 64 bytes (8 more with a receiver that numbers them, 6 more with `adaptive` routing's notes on them under `feedback` telemetry) + H · Q messages of 56 bytes): at saturation every host keeps about one buffer's worth of packets in flight and a full source queue, in slabs that grow by doubling |
//!
//! The last two parts, which scale with the load, dominate fabrics with deep buffers and
//! small packets (cycle-level configs). Not counted: what grows with the length of the
//! run rather than the size of the fabric (DCQCN's `rate_series`), a congestion tree that
//! fills every buffer of the fabric (the credits bound it at P · V · B packets), and the
//! front end's copies of the report. The integration tests (`tests/it/memory.rs`) compare
//! the estimate with the peak a counting allocator measures for fat-trees, dragonflies
//! and HyperX of two sizes each, at loads 0.3 and 1.0: it stays within a factor of two.

use crate::config::{Config, InputQueuing};
use crate::kernel::Entry;
use crate::packet::{Message, Packet};
use crate::topology::{fabric_size, FabricSize};

/// The parts of an estimate, in bytes, and the fabric's size.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub fabric: FabricSize,
    /// (what, bytes), in the order of the table above.
    pub parts: Vec<(&'static str, u64)>,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |sum, &(_, bytes)| sum.saturating_add(bytes))
    }

    /// Bytes of the part named `what` (0 if there is none).
    pub fn part(&self, what: &str) -> u64 {
        self.parts.iter().find(|(name, _)| *name == what).map_or(0, |&(_, bytes)| bytes)
    }
}

/// Name of the time-series part: a window too narrow is refused at its own key.
pub const SERIES: &str = "time series";

/// Saturating products and sums of byte counts (the owners' estimates use them too).
pub(crate) fn mul(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |acc, &f| acc.saturating_mul(f))
}

pub(crate) fn sum(terms: &[u64]) -> u64 {
    terms.iter().fold(0u64, |acc, &t| acc.saturating_add(t))
}

pub(crate) fn bytes_of<T>() -> u64 {
    size_of::<T>() as u64
}

/// The estimate of `config` (validated or not: nothing here can overflow or panic). Each
/// owner estimates its own parts beside its config (`SwitchConfig::port_memory`,
/// `NicConfig::memory`, `TrafficConfig::memory`, `ObserveConfig::series_memory`, ...);
/// the kernel's parts (the calendar, the watchdog, the slabs) are worked out here.
pub fn estimate(config: &Config) -> Estimate {
    let size = fabric_size(&config.topology.shape);
    let (h, p) = (size.hosts, size.ports());
    let v = config.switch.vcs() as u64;
    let t = &config.traffic;
    let q = mul(&[config.nic.source_queue as u64, t.streams() as u64]);
    let groups = t.groups.len() as u64 + 1;

    let switch_ports = config.switch.port_memory(&size);
    let switch_queues = config.switch.queue_memory(&size);
    let routing = config.routing.memory(&size);
    let nics = sum(&[config.nic.memory(config, h, v, q), config.congestion_control.nic_memory(config, h, v, p, q)]);
    let traffic =
        sum(&[t.memory(h, config.simulation.duration), config.workload.memory(h, config.topology.gpus_per_node)]);
    let histograms = config.observe.histogram_memory(groups);

    let duration = config.simulation.duration.0;
    let window = config.simulation.window.map_or((duration / 100).max(1), |w| w.0.max(1));
    let windows = duration.div_ceil(window);
    let series = sum(&[
        config.observe.series_memory(config, groups, windows),
        config.observe.trees_memory(config, &size, windows),
    ]);

    // The wheel's bucket headers and occupancy bits; pending events: a generation per
    // host, and at saturation about two per host and port, in bucket buffers that keep
    // up to eight times that room; fewer in proportion at lower loads.
    let load = t.peak_load();
    let wheel = 1u64 << (h / 2).max(1024).ilog2().clamp(6, 24);
    let busy = (mul(&[16, sum(&[h, p])]) as f64 * load) as u64;
    let calendar = sum(&[mul(&[wheel, 25]), mul(&[sum(&[busy, mul(&[2, h]), 4096]), bytes_of::<Entry>()])]);

    // At saturation, and in proportion at lower loads; slabs grow by doubling: half
    // again what they hold, on average.
    // A packet in flight, with its sequence numbers when a receiver tracks them and
    // the adaptive routing's notes on it.
    let packet = sum(&[bytes_of::<Packet>(), config.nic.packet_memory(config), config.routing.per_packet()]);
    let slots = sum(&[mul(&[h, packets_per_host(config), packet]), mul(&[h, q, bytes_of::<Message>()])]);
    let in_flight = (sum(&[slots, slots / 2]) as f64 * load) as u64;

    // The watchdog remembers the head of every non-empty queue.
    let voq = config.switch.input_queuing() == InputQueuing::Voq;
    let voqs_used = if voq { size.max_radix().min(packets_per_host(config)) } else { 0 };
    let watchdog_queues = mul(&[sum(&[2, voqs_used]), p, v]);
    let watchdog = (mul(&[watchdog_queues, crate::kernel::WATCHDOG_BYTES_PER_QUEUE]) as f64 * load) as u64;

    Estimate {
        parts: vec![
            ("fabric tables", size.table_bytes),
            ("switch ports", switch_ports),
            ("switch queues", switch_queues),
            ("routing tables", routing),
            ("NICs", nics),
            ("traffic tables", traffic),
            ("latency histograms", histograms),
            (SERIES, series),
            ("event calendar", calendar),
            ("watchdog", watchdog),
            ("packets in flight", in_flight),
        ],
        fabric: size,
    }
}

/// B: the packets one host's worth of buffer holds (one VC's input and output buffers of
/// an IOQ switch port, a shared-buffer port's memory), at the smallest packet size.
fn packets_per_host(config: &Config) -> u64 {
    let buffer = config.switch.buffer_per_host();
    let packet = config.nic.mtu.0.min(config.traffic.smallest_message()).max(1);
    (buffer / packet).max(1)
}
