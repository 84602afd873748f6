//! What a run hands back: a summary with stable keys, and tidy tables.

use serde::Serialize;
use std::collections::BTreeMap;

/// Latency statistics in the run's time unit (`Summary::time_unit`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatencyStats {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Packet conservation counters over the whole run: injected = delivered + in_flight.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PacketCounts {
    pub injected: u64,
    pub delivered: u64,
    pub in_flight: u64,
    pub dropped: u64,
}

/// The figures of one node group (or of all endpoints). Loads are per endpoint over the
/// measurement interval: normalised to the endpoint's link capacity, and raw in Gb/s.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct GroupSummary {
    pub hosts: u64,
    /// Delivered traffic that these hosts sent.
    pub accepted_load: f64,
    /// Traffic these hosts generated (including generations refused by a full source queue).
    pub offered_load: f64,
    /// Traffic delivered to these hosts.
    pub received_load: f64,
    pub accepted_gbps: f64,
    pub offered_gbps: f64,
    pub received_gbps: f64,
    /// Packet latency: generation of the message to delivery of the packet.
    pub latency: LatencyStats,
    /// Network latency: first bit injected to last bit delivered.
    pub network_latency: LatencyStats,
    /// Message latency: generation to delivery of the message's last packet.
    pub message_latency: LatencyStats,
    /// Flows (messages) generated after warm-up and completed, that these hosts sent.
    pub flows: u64,
    /// Flow completion time of those flows (= their message latency), in `time_unit`.
    pub fct: LatencyStats,
    /// FCT over the ideal FCT of the same flow alone on the empty network (a ratio).
    pub slowdown: LatencyStats,
    pub packets: PacketCounts,
}

/// The flows of one flow-size bucket.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FctBucket {
    /// "<10KB", "10KB-100KB", "100KB-1MB", ">=1MB" (1 KB = 1000 bytes).
    pub label: String,
    /// Smallest size in the bucket, bytes.
    pub min_bytes: u64,
    /// First size above the bucket, bytes; null for the last bucket.
    pub max_bytes: Option<u64>,
    pub flows: u64,
    pub fct: LatencyStats,
    pub slowdown: LatencyStats,
}

/// Flow completion times of the flows generated after warm-up that completed.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FctSummary {
    pub flows: u64,
    /// In `time_unit`.
    pub fct: LatencyStats,
    /// FCT / ideal FCT (serialisation at the host rate + link and switch latencies of the
    /// path taken).
    pub slowdown: LatencyStats,
    /// By flow size; their `flows` sum to `flows`.
    pub buckets: Vec<FctBucket>,
}

/// Recovery from a burst (runs with phases): the first phase starts the burst, the
/// second (if any) ends it. Loads are the accepted load per window of the bystanders,
/// the groups no phase changes (all endpoints if every group is changed).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Recovery {
    /// Mean over the windows from the end of warm-up to the burst.
    pub pre_burst_load: f64,
    /// Lowest window from the burst on.
    pub lowest_load: f64,
    pub drop_depth: f64,
    pub recovered: bool,
    /// From the end of the burst to the end of the first window, after the lowest one,
    /// back within 5% of the pre-burst load, in `time_unit`; null if it never came back.
    pub time_to_recover: Option<f64>,
}

/// Time-weighted occupancy of one probed egress queue over the measurement interval:
/// `pXX_bytes` is the occupancy the queue did not exceed XX% of the time.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct QueueSummary {
    pub switch: u32,
    pub port: u32,
    pub priority: u32,
    pub mean_bytes: f64,
    pub p5_bytes: u64,
    pub p25_bytes: u64,
    pub p50_bytes: u64,
    pub p75_bytes: u64,
    pub p95_bytes: u64,
    pub p99_bytes: u64,
    pub max_bytes: u64,
    /// Fractions of the time below Kmin, between Kmin and Kmax, and above Kmax (runs
    /// with ECN marking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_band: Option<EcnBand>,
}

/// Mean receive rate per host over the measurement interval, in Gb/s: data bytes a kind
/// of host received over the host-time spent as that kind (a host counts as a hotspot
/// while it is one).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ReceiveRate {
    pub hotspots: f64,
    pub non_hotspots: f64,
    pub all: f64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EcnBand {
    pub below_kmin: f64,
    pub between: f64,
    pub above_kmax: f64,
}

/// Priority flow control over the measurement interval (runs with `flow_control.type =
/// "pfc"`). Paused time is summed over (link, priority) pairs, in `time_unit`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PfcSummary {
    pub pause_frames_sent: u64,
    pub resume_frames_sent: u64,
    pub pause_frames_received: u64,
    pub paused_time: f64,
    /// Links (priority included) that were paused at least once.
    pub paused_links: u64,
    /// Largest fraction of the measurement interval one link priority spent paused.
    pub max_paused_fraction: f64,
    /// Highest ingress-queue occupancy of any switch port, and what a port may hold.
    pub max_ingress_bytes: u64,
    pub ingress_share_bytes: u64,
    pub headroom_bytes: u64,
    /// The most paused links, most paused first.
    pub most_paused: Vec<PausedLink>,
}

/// One paused link priority: the sender is `node` ("switch S port P" or "host H").
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PausedLink {
    pub node: String,
    pub priority: u32,
    pub pauses: u64,
    pub paused_time: f64,
    pub paused_fraction: f64,
}

/// What InfiniBand congestion control did (runs with `congestion_control.type = "ibcc"`),
/// over the measurement interval.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct IbccSummary {
    /// Packets the switches marked with FECN.
    pub fecn_marks: u64,
    /// BECNs that reached their source.
    pub becns: u64,
    /// Time-weighted mean of the mean CCTI of the flows above `ccti_min`, over the time
    /// any was (`ccti_min` if none ever was).
    pub ccti_mean: f64,
    /// Highest CCTI in force (`ccti_min` if none rose above it).
    pub ccti_max: u64,
    /// The port-VLs that marked, most marks first (at most 10).
    pub marking_ports: Vec<MarkingPort>,
}

/// What congestion isolation did in a run (counts over the whole run).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct IsolationSummary {
    /// Congested-flow table entries taken (on detection or on a message from downstream).
    pub cft_allocations: u64,
    pub cft_releases: u64,
    /// Candidates (and messages) that found their port's table full.
    pub cft_overflows: u64,
    /// Packets entering a congested-flow queue whose ingress port's mirror table was full.
    pub mirror_overflows: u64,
    /// Roots detected again within `history` of their release.
    pub recurrences: u64,
    /// Isolation messages sent upstream (to switches and NICs).
    pub messages_sent: u64,
    /// Packets that entered a congested-flow queue (once per hop).
    pub isolated_packets: u64,
    /// Entries in use over the fabric.
    pub cft_occupancy: Occupancy,
    /// Time the congested-flow classes spent paused, summed over links (switches and NICs).
    pub cfq_paused_time: f64,
    /// ECN marks on packets isolation pointed at (leaving a congested-flow queue, or a
    /// detected root's without a free entry), and on the others.
    pub marks_isolated: u64,
    pub marks_victims: u64,
    pub cnps_sent: u64,
    /// Most CNPs sent in one window of `simulation.window`.
    pub peak_cnps_per_window: u64,
    /// Packets that went through a congested-flow queue to a host that is not a declared
    /// hotspot (an incast destination, a hotspot of the workload).
    pub false_positives: u64,
    /// Packets that reached their host ahead of an older packet of their flow.
    pub reordered_packets: u64,
    /// When the first entry was taken on detecting a root, and the first on an isolation
    /// message from downstream (in `time_unit`; null if none was).
    pub first_detection: Option<f64>,
    pub first_message_allocation: Option<f64>,
}

/// Entries in use: time-weighted mean over the measurement, most at once, and at the end.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Occupancy {
    pub mean: f64,
    pub max: u64,
    pub at_end: u64,
}

/// One port-VL that marked packets: output `port` of `switch`, virtual lane `vl`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MarkingPort {
    pub switch: u32,
    pub port: u32,
    pub vl: u32,
    pub fecn_marks: u64,
}

/// The summary of one run. Keys are stable: tools depend on them.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub accepted_load: f64,
    pub offered_load: f64,
    pub received_load: f64,
    pub accepted_gbps: f64,
    pub offered_gbps: f64,
    pub latency: LatencyStats,
    pub network_latency: LatencyStats,
    pub message_latency: LatencyStats,
    pub packets: PacketCounts,
    /// Flow completion times, overall and by flow size.
    pub fct: FctSummary,
    pub groups: BTreeMap<String, GroupSummary>,
    pub counters: BTreeMap<String, u64>,
    /// Only for runs with phases.
    pub recovery: Option<Recovery>,
    /// Only for runs with PFC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
    /// Probed egress queues (`observe.queues`), in config order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueSummary>,
    /// Mean receive rate per host of hotspots, non-hotspots and all hosts, in Gb/s (runs
    /// with `[traffic.hotspots]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive_rate: Option<ReceiveRate>,
    /// Sum over the hosts of their receive rates, Gb/s (runs with `[traffic.hotspots]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_throughput: Option<f64>,
    /// The mean receive rate non-hotspots could reach without the hotspots, Gb/s: what
    /// the senders offer to other destinations, per host (runs with `[traffic.hotspots]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tmax: Option<f64>,
    /// Only for runs with InfiniBand congestion control.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ibcc: Option<IbccSummary>,
    /// Only for runs with congestion isolation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationSummary>,
    /// Simulated time, in `time_unit`: the duration, or when the run stopped
    /// (`stopped_after`).
    pub sim_time: f64,
    /// Only for runs whose config sets `simulation.stop_after`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_after: Option<StoppedAfter>,
    /// Start of the measurement interval (end of warm-up), in `time_unit`.
    pub measure_from: f64,
    /// "ns" for physical configs, "cycles" for configs in cycles and phits.
    pub time_unit: String,
    pub seed: u64,
    pub events: u64,
    /// Packet-hops simulated (a packet crossing one link).
    pub packet_hops: u64,
    pub wall_seconds: f64,
}

/// `simulation.stop_after`: the run was to end once `group` completed `messages`
/// messages.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StoppedAfter {
    pub group: String,
    pub messages: u64,
    /// When the last of them completed, in `time_unit` (then also `sim_time`); `None`
    /// (null) if the group completed fewer by the end of the duration.
    pub at: Option<f64>,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    F64(Vec<f64>),
    U64(Vec<u64>),
    Str(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

/// A tidy table: named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| match &c.data {
            ColumnData::F64(v) => v.len(),
            ColumnData::U64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        })
    }
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.data)
    }
}

/// Everything a run produces: the summary, and named tables.
///
/// Each table is written as `<name>.parquet` by the Python front end, which handles every
/// table alike: a table added here reaches Python, Parquet and the HTML report with no
/// change there. A run holds:
/// - `timeseries`: throughput per fixed time window, one row per (window, group) plus
///   group "all" (every run);
/// - `rates`: per-flow rates of congestion control, one row per rate change (time, src,
///   dst, qp, rate_gbps), when `congestion_control.rate_series` is on;
/// - `fabric`: pause and resume frames, ECN marks, CNPs, rate cuts and drops per time
///   window (time, pause_frames, resume_frames, ecn_marks, cnps, rate_cuts,
///   packets_dropped), in runs with PFC, tail drop, ECN or congestion control;
/// - `ibcc`: FECN marks, BECNs and the mean CCTI of the throttled flows per time window
///   (time, fecn_marks, becns, ccti_mean), in runs with InfiniBand congestion control.
///
/// A table a run does not have is absent, not present and empty.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub summary: Summary,
    /// Tables by name (lowercase letters, digits and `_`), in name order.
    pub tables: BTreeMap<String, Table>,
}

impl Report {
    /// The summary as one JSON object (deterministic: same config and seed, same bytes
    /// apart from `wall_seconds`).
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).expect("summary serialises")
    }

    /// The table `name`, if the run has one.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.get(name)
    }

    /// Adds the table `name`; a table without columns (a mechanism the run does not
    /// have) is left out. Names are file names of the outputs: lowercase letters,
    /// digits and `_`.
    pub fn add_table(&mut self, name: &str, table: Table) {
        assert!(is_table_name(name), "table name {name:?}: use lowercase letters, digits and _");
        if !table.columns.is_empty() {
            self.tables.insert(name.to_string(), table);
        }
    }
}

/// Whether `name` may name a table: lowercase ASCII letters, digits and `_`, starting with
/// a letter.
pub fn is_table_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_column(rows: usize) -> Table {
        Table { columns: vec![Column { name: "time".into(), data: ColumnData::F64(vec![0.0; rows]) }] }
    }

    #[test]
    fn tables_are_found_by_name_and_empty_ones_are_left_out() {
        let mut report = Report::default();
        report.add_table("timeseries", one_column(3));
        report.add_table("rates", Table::default());
        report.add_table("fabric", one_column(0));
        assert_eq!(report.table("timeseries").map(Table::rows), Some(3));
        assert!(report.table("rates").is_none(), "a table without columns is absent");
        assert_eq!(report.table("fabric").map(Table::rows), Some(0), "columns without rows are a table");
        assert_eq!(report.tables.keys().collect::<Vec<_>>(), ["fabric", "timeseries"]);
    }

    #[test]
    fn table_names_are_file_names() {
        assert!(is_table_name("timeseries"));
        assert!(is_table_name("queue_depth2"));
        for bad in ["", "Rates", "2x", "_x", "a-b", "a.b", "a/b", "a b"] {
            assert!(!is_table_name(bad), "{bad:?}");
        }
    }
}
