//! What a run hands back: a summary with stable keys, and tidy tables.

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// Latency statistics in the run's time unit (`Summary::time_unit`): the mean, minimum
/// and maximum exact, the quantiles within 0.1% (and never outside the extremes). Without
/// samples every figure is NaN, which the JSON summary writes as null.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyStats {
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Default for LatencyStats {
    /// No samples: nothing to report.
    fn default() -> Self {
        LatencyStats { mean: f64::NAN, min: f64::NAN, p50: f64::NAN, p95: f64::NAN, p99: f64::NAN, max: f64::NAN }
    }
}

/// Two reports of no samples are equal (NaN is "nothing", not a value).
impl PartialEq for LatencyStats {
    fn eq(&self, other: &Self) -> bool {
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        same(self.mean, other.mean)
            && same(self.min, other.min)
            && same(self.p50, other.p50)
            && same(self.p95, other.p95)
            && same(self.p99, other.p99)
            && same(self.max, other.max)
    }
}

impl LatencyStats {
    /// Whether there were samples.
    pub fn is_empty(&self) -> bool {
        self.max.is_nan()
    }
}

/// Packet conservation counters over the whole run: injected = delivered + in_flight +
/// dropped + discarded.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PacketCounts {
    pub injected: u64,
    pub delivered: u64,
    pub in_flight: u64,
    /// Lost in the fabric (a buffer without room: only without lossless flow control).
    pub dropped: u64,
    /// Reached their host and discarded by an in-order receiver (out of sequence, or
    /// duplicates of packets it had): the fabric lost nothing. Reported when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub discarded: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// The sections of the mechanisms the run has (PFC, probed queues, hotspots,
    /// congestion control, isolation, ...), each under its own key, in their positions.
    #[serde(flatten)]
    pub sections: Sections,
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

impl Summary {
    /// The section `name` as a `T` (e.g. `summary.section::<IbccSummary>("ibcc")`), if
    /// the run has it and it reads as a `T`.
    pub fn section<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        self.sections.get(name).and_then(|value| serde_json::from_value(value.clone()).ok())
    }

    /// Sets the section `name` to `value`: in place if the summary has it (its position
    /// and notes kept), else after every other section, with no note.
    pub fn set_section<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) {
        let value = to_value(value);
        match self.sections.entries.iter_mut().find(|s| s.name == name) {
            Some(section) => section.value = value,
            None => self.sections.set(Section { value, ..Section::new(name, &()) }),
        }
    }
}

/// One named part of the summary, added by the mechanism (or collector) that measured
/// it: its value (any JSON value), where it sits among the sections, and what it says of
/// itself in the printout of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    /// Sections are ordered by position (then by when they were set). The built-in
    /// mechanisms keep the positions their keys always had in the summary; a section
    /// set without one (`u32::MAX`) comes after them.
    pub position: u32,
    pub value: Value,
    /// Lines the printout of a run shows for it (`Report::notes`), in the run's time unit.
    pub notes: Vec<String>,
    /// The figure of the section a sweep's report plots against the load: a key of its
    /// value, and the plot's title.
    pub headline: Option<Headline>,
}

/// A section's headline figure: `key` in its value, shown as `title`.
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    pub key: String,
    pub title: String,
}

impl Section {
    /// The section `name` holding `value`, last in position, with no note or headline.
    pub fn new<T: Serialize + ?Sized>(name: &str, value: &T) -> Section {
        assert!(is_table_name(name), "section name {name:?}: use lowercase letters, digits and _");
        Section {
            name: name.to_string(),
            position: u32::MAX,
            value: to_value(value),
            notes: Vec::new(),
            headline: None,
        }
    }

    /// At `position` among the sections.
    pub fn at(mut self, position: u32) -> Section {
        self.position = position;
        self
    }

    /// With `line` in the printout.
    pub fn note(mut self, line: impl Into<String>) -> Section {
        self.notes.push(line.into());
        self
    }

    /// With `key` of its value as its headline figure, titled `title`.
    pub fn headline(mut self, key: &str, title: &str) -> Section {
        self.headline = Some(Headline { key: key.to_string(), title: title.to_string() });
        self
    }
}

fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).expect("a section serialises")
}

/// The summary's sections, in order of position; serialised as entries of the summary
/// (`#[serde(flatten)]`), so a section `name` is the summary's key `name`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sections {
    entries: Vec<Section>,
}

impl Sections {
    /// Adds `section`, or replaces the one of its name.
    pub fn set(&mut self, section: Section) {
        self.entries.retain(|s| s.name != section.name);
        let at = self.entries.partition_point(|s| s.position <= section.position);
        self.entries.insert(at, section);
    }

    /// Takes out the section `name`.
    pub fn remove(&mut self, name: &str) -> Option<Section> {
        let at = self.entries.iter().position(|s| s.name == name)?;
        Some(self.entries.remove(at))
    }

    /// The value of the section `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries.iter().find(|s| s.name == name).map(|s| &s.value)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Section> {
        self.entries.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The lines of every section, in order.
    pub fn notes(&self) -> Vec<String> {
        self.entries.iter().flat_map(|s| s.notes.iter().cloned()).collect()
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for section in &self.entries {
            map.serialize_entry(&section.name, &section.value)?;
        }
        map.end()
    }
}

/// Numbers as the printout shows them: thousands separated by commas.
pub mod text {
    /// An integer: `19,314`.
    pub fn int(value: u64) -> String {
        group(&value.to_string())
    }

    /// A number with `digits` decimals: `1,234.5` (the digits rounded half to even, as
    /// Python's format does).
    pub fn num(value: f64, digits: usize) -> String {
        if !value.is_finite() {
            return if value.is_nan() {
                "nan".into()
            } else if value > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            };
        }
        let text = format!("{value:.digits$}");
        let (sign, text) = text.strip_prefix('-').map_or(("", text.as_str()), |t| ("-", t));
        let (whole, fraction) = text.split_once('.').map_or((text, None), |(w, f)| (w, Some(f)));
        let mut out = format!("{sign}{}", group(whole));
        if let Some(fraction) = fraction {
            out.push('.');
            out.push_str(fraction);
        }
        out
    }

    fn group(digits: &str) -> String {
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
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
    /// What the summary's sections say of themselves, one line each, in summary order:
    /// the lines the printout of a run shows (not part of the summary).
    pub notes: Vec<String>,
}

impl Report {
    /// The summary as one JSON object (deterministic: same config and seed, same bytes
    /// apart from `wall_seconds`).
    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).expect("summary serialises")
    }

    /// The headline figures of the summary's sections: (`section.key`, title), in
    /// summary order (the column names of a sweep's table of points).
    pub fn headlines(&self) -> Vec<(String, String)> {
        let sections = self.summary.sections.iter();
        sections
            .filter_map(|s| s.headline.as_ref().map(|h| (format!("{}.{}", s.name, h.key), h.title.clone())))
            .collect()
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
    fn sections_keep_their_positions_and_serialise_as_summary_keys() {
        let mut summary = Summary::default();
        summary.sections.set(Section::new("later", &[1, 2]).at(20).note("later: 1, 2"));
        summary.sections.set(Section::new("first", &3.5).at(10).note("first: 3.5"));
        summary.set_section("mine", &serde_json::json!({"hops": 7}));
        summary.set_section("later", &[4]);
        let names: Vec<&str> = summary.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["first", "later", "mine"]);
        assert_eq!(summary.sections.notes(), ["first: 3.5", "later: 1, 2"]);
        assert_eq!(summary.section::<Vec<u64>>("later"), Some(vec![4]));
        assert_eq!(summary.section::<f64>("absent"), None);
        let json = serde_json::to_string(&summary).unwrap();
        assert!(json.contains(r#""recovery":null,"first":3.5,"later":[4],"mine":{"hops":7},"sim_time":0.0"#), "{json}");
    }

    #[test]
    fn printout_numbers_have_thousands_separators() {
        assert_eq!(text::int(19_314), "19,314");
        assert_eq!(text::int(12), "12");
        assert_eq!(text::int(1_000_000), "1,000,000");
        assert_eq!(text::num(3.25, 1), "3.2");
        assert_eq!(text::num(1234567.891, 0), "1,234,568");
        assert_eq!(text::num(-1234.5, 1), "-1,234.5");
        assert_eq!(text::num(0.0, 3), "0.000");
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
