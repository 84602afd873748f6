//! The probed queues (`observe.queues`) window by window: each window's time-weighted
//! mean and its maximum occupancy, as the `queues` table (one row per window and queue),
//! to see a queue build and drain over the run, beside the distribution in the summary.
//! In runs with PFC it also counts, per window, the pause frames the probed port sent
//! upstream for the probe's priority (its ingress crossed XOFF) and those it received
//! (its output was paused from downstream); in runs that mark, the packets marked in the
//! probed queue (ECN, FECN or the per-pair control's marks, named as the `fabric` table
//! names them). Runs without probes have none of this.

use super::{Collector, Finish, TraceEvent};
use crate::config::{Config, FlowControlConfig};
use crate::error::Result;
use crate::memory::fallible::filled;
use crate::report::{Column, ColumnData, Report, Table};

/// One window of one probed queue.
#[derive(Clone, Copy, Default)]
struct Cell {
    /// Byte-picoseconds held during the window.
    area: u128,
    max: u64,
}

/// The events counted per probe and window, in table order.
const PAUSES_SENT: usize = 0;
const PAUSES_RECEIVED: usize = 1;
const MARKS: usize = 2;
type Counts = [u32; 3];

/// One probed queue: output `port` of `switch` (global port `global_port`), priority
/// `priority`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbedQueue {
    pub switch: u32,
    pub port: u32,
    pub priority: u32,
    pub global_port: u32,
}

/// What the series counts beside the occupancy: the run's PFC frames, and its marks
/// under their name in the run's terms (`None`: the run has no such events).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub pauses: bool,
    pub marks: Option<&'static str>,
}

impl Counted {
    /// What a run of `config` has to count.
    pub fn for_config(config: &Config) -> Counted {
        Counted {
            pauses: matches!(config.flow_control, FlowControlConfig::Pfc { .. }),
            marks: config.congestion_terms().map(|t| t.marks),
        }
    }

    fn any(self) -> bool {
        self.pauses || self.marks.is_some()
    }
}

pub struct QueueSeries {
    window: u64,
    windows: usize,
    queues: Vec<ProbedQueue>,
    /// Per probe: the occupancy it holds and since when.
    held: Vec<(u64, u64)>,
    /// `windows` cells per probe.
    cells: Vec<Cell>,
    counted: Counted,
    /// `windows` counts per probe (empty when nothing is counted).
    counts: Vec<Counts>,
    /// (global port, queue) of each probe, with its index, sorted: where an event's port
    /// is looked up.
    by_port: Vec<((u32, u8), u16)>,
}

impl QueueSeries {
    /// Bytes it keeps per probe and window, for the memory estimate.
    pub const BYTES_PER_CELL: u64 = size_of::<Cell>() as u64;

    /// [`Self::BYTES_PER_CELL`] and the counts, in a run of `config`.
    pub fn bytes_per_cell(config: &Config) -> u64 {
        let counts = if Counted::for_config(config).any() { size_of::<Counts>() as u64 } else { 0 };
        Self::BYTES_PER_CELL + counts
    }

    pub fn new(queues: Vec<ProbedQueue>, window: u64, duration: u64, counted: Counted) -> Result<QueueSeries> {
        let window = window.max(1);
        let windows = duration.div_ceil(window) as usize;
        let cells = filled(windows.saturating_mul(queues.len()), Cell::default(), "the queue time series")?;
        let counts = match counted.any() {
            true => filled(windows.saturating_mul(queues.len()), Counts::default(), "the queue time series")?,
            false => Vec::new(),
        };
        let mut by_port: Vec<((u32, u8), u16)> =
            queues.iter().enumerate().map(|(i, q)| ((q.global_port, q.priority as u8), i as u16)).collect();
        by_port.sort_unstable();
        Ok(QueueSeries { window, windows, held: vec![(0, 0); queues.len()], queues, cells, counted, counts, by_port })
    }

    /// Probe `probe` held `bytes` over [from, to): add it to the windows it spans.
    fn hold(&mut self, probe: usize, bytes: u64, from: u64, to: u64) {
        let end = to.min(self.window * self.windows as u64);
        let mut t = from;
        while t < end {
            let w = (t / self.window) as usize;
            let until = ((w as u64 + 1) * self.window).min(end);
            let cell = &mut self.cells[probe * self.windows + w];
            cell.area += bytes as u128 * (until - t) as u128;
            cell.max = cell.max.max(bytes);
            t = until;
        }
    }

    /// Counts a pause frame or a mark at its port, if the run counts them. Kept out of
    /// line: `Collectors::on` inlines every collector's `on`, and a larger one there
    /// costs the other collectors' events (an IB CC run's) instructions.
    #[inline(never)]
    fn count_event(&mut self, now: u64, event: &TraceEvent) {
        if self.counts.is_empty() {
            return;
        }
        match *event {
            TraceEvent::PauseSent { port, queue, on: true } => self.count(now, port, queue, PAUSES_SENT),
            TraceEvent::PauseReceived { port: Some(port), queue } => self.count(now, port, queue, PAUSES_RECEIVED),
            TraceEvent::EcnMarked { port, queue, .. } => self.count(now, port, queue, MARKS),
            _ => {}
        }
    }

    /// Counts event `kind` at (global port, queue) in the window of `now`, for every
    /// probe of that queue.
    fn count(&mut self, now: u64, port: u32, queue: u8, kind: usize) {
        let w = (now / self.window) as usize;
        if w >= self.windows {
            return;
        }
        let key = (port, queue);
        let first = self.by_port.partition_point(|&(k, _)| k < key);
        for &(_, probe) in self.by_port[first..].iter().take_while(|&&(k, _)| k == key) {
            self.counts[probe as usize * self.windows + w][kind] += 1;
        }
    }
}

impl Collector for QueueSeries {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        if let TraceEvent::QueueLength { probe, bytes } = *event {
            let (held, since) = self.held[probe as usize];
            self.hold(probe as usize, held, since, now);
            // A value held for no time still counts as the window's maximum.
            let w = (now / self.window) as usize;
            if w < self.windows {
                let cell = &mut self.cells[probe as usize * self.windows + w];
                cell.max = cell.max.max(bytes);
            }
            self.held[probe as usize] = (bytes, now);
            return;
        }
        if let TraceEvent::PauseSent { on: true, .. }
        | TraceEvent::PauseReceived { port: Some(_), .. }
        | TraceEvent::EcnMarked { .. } = event
        {
            self.count_event(now, event);
        }
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        // The values held at the end count up to the end.
        let mut closed = QueueSeries {
            window: self.window,
            windows: self.windows,
            queues: Vec::new(),
            held: Vec::new(),
            cells: self.cells.clone(),
            counted: self.counted,
            counts: Vec::new(),
            by_port: Vec::new(),
        };
        for (probe, &(bytes, since)) in self.held.iter().enumerate() {
            closed.hold(probe, bytes, since, finish.end);
        }
        // A run that stopped early has the windows up to its end.
        let windows = (finish.end.div_ceil(self.window) as usize).min(self.windows);
        let rows = windows * self.queues.len();
        let (mut time, mut switch, mut port, mut priority) =
            (Vec::with_capacity(rows), Vec::with_capacity(rows), Vec::with_capacity(rows), Vec::with_capacity(rows));
        let (mut mean, mut max) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let mut counts: [Vec<u64>; 3] = Default::default();
        for w in 0..windows {
            let start = w as u64 * self.window;
            let length = (start + self.window).min(finish.end.max(start + 1)) - start;
            for (probe, q) in self.queues.iter().enumerate() {
                let cell = closed.cells[probe * self.windows + w];
                time.push(start as f64 / finish.ps_per_unit);
                switch.push(q.switch as u64);
                port.push(q.port as u64);
                priority.push(q.priority as u64);
                mean.push(cell.area as f64 / length as f64);
                max.push(cell.max);
                if let Some(c) = self.counts.get(probe * self.windows + w) {
                    counts.iter_mut().zip(c).for_each(|(column, &n)| column.push(n as u64));
                }
            }
        }
        let col = |name: &str, data| Column { name: name.to_string(), data };
        let mut columns = vec![
            col("time", ColumnData::F64(time)),
            col("switch", ColumnData::U64(switch)),
            col("port", ColumnData::U64(port)),
            col("priority", ColumnData::U64(priority)),
            col("mean_bytes", ColumnData::F64(mean)),
            col("max_bytes", ColumnData::U64(max)),
        ];
        let [sent, received, marks] = counts;
        if self.counted.pauses {
            columns.push(col("pause_frames_sent", ColumnData::U64(sent)));
            columns.push(col("pause_frames_received", ColumnData::U64(received)));
        }
        if let Some(name) = self.counted.marks {
            columns.push(col(name, ColumnData::U64(marks)));
        }
        report.add_table("queues", Table { columns });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::NoFabric;

    #[test]
    fn windows_hold_the_time_weighted_mean_and_the_maximum() {
        let probes = vec![probed(3, 1, 0, 31), probed(4, 2, 1, 42)];
        let mut s = QueueSeries::new(probes, 100, 300, Counted::default()).unwrap();
        let q = |probe, bytes| TraceEvent::QueueLength { probe, bytes };
        s.on(50, &q(0, 1000)); // window 0: 0 for 50, 1000 for 50
        s.on(150, &q(0, 0)); // window 1: 1000 for 50, 0 for 50
        s.on(250, &q(0, 4000)); // window 2: 0 for 50, 4000 for 50 (to the end)
        s.on(260, &q(1, 7));
        s.on(260, &q(1, 0)); // held for no time: a maximum, no weight
        s.on(270, &TraceEvent::PauseSent { port: 31, queue: 0, on: true }); // not counted
        let t = table(&s, 300);
        assert_eq!(t.rows(), 6);
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![0.0, 0.0, 100.0, 100.0, 200.0, 200.0])));
        assert_eq!(t.column("switch"), Some(&ColumnData::U64(vec![3, 4, 3, 4, 3, 4])));
        assert_eq!(t.column("mean_bytes"), Some(&ColumnData::F64(vec![500.0, 0.0, 500.0, 0.0, 2000.0, 0.0])));
        assert_eq!(t.column("max_bytes"), Some(&ColumnData::U64(vec![1000, 0, 1000, 0, 4000, 7])));
        assert_eq!(t.columns.len(), 6, "a run without PFC or marking counts nothing");
    }

    #[test]
    fn pauses_and_marks_count_at_their_probes_port_and_priority() {
        let counted = Counted { pauses: true, marks: Some("ecn_marks") };
        // Probes of global port 31 (priorities 0 and 1) and 42 (priority 1).
        let probes = vec![probed(3, 1, 0, 31), probed(3, 1, 1, 31), probed(4, 2, 1, 42)];
        let mut s = QueueSeries::new(probes, 100, 300, counted).unwrap();
        let sent = |port, queue, on| TraceEvent::PauseSent { port, queue, on };
        let received = |port, queue| TraceEvent::PauseReceived { port, queue };
        let mark = |port, queue| TraceEvent::EcnMarked { port, queue, isolated: false };
        s.on(10, &sent(31, 0, true));
        s.on(20, &sent(31, 0, false)); // a resume frame: not a pause
        s.on(30, &sent(31, 1, true));
        s.on(40, &sent(7, 0, true)); // another port
        s.on(110, &received(Some(42), 1));
        s.on(120, &received(None, 1)); // a NIC
        s.on(130, &received(Some(42), 0)); // another priority
        s.on(210, &mark(42, 1));
        s.on(220, &mark(42, 1));
        s.on(230, &mark(31, 2)); // a queue no probe watches
        s.on(400, &mark(42, 1)); // past the end
        let t = table(&s, 300);
        // Rows: window 0 (31/0, 31/1, 42/1), window 1, window 2.
        assert_eq!(t.column("pause_frames_sent"), Some(&ColumnData::U64(vec![1, 1, 0, 0, 0, 0, 0, 0, 0])));
        assert_eq!(t.column("pause_frames_received"), Some(&ColumnData::U64(vec![0, 0, 0, 0, 0, 1, 0, 0, 0])));
        assert_eq!(t.column("ecn_marks"), Some(&ColumnData::U64(vec![0, 0, 0, 0, 0, 0, 0, 0, 2])));
        // Marks alone (a credit fabric that marks): no pause columns.
        let only_marks = Counted { pauses: false, marks: Some("fecn_marks") };
        let s = QueueSeries::new(vec![probed(0, 0, 0, 0)], 100, 100, only_marks).unwrap();
        let t = table(&s, 100);
        assert!(t.column("fecn_marks").is_some() && t.column("pause_frames_sent").is_none());
    }

    fn probed(switch: u32, port: u32, priority: u32, global_port: u32) -> ProbedQueue {
        ProbedQueue { switch, port, priority, global_port }
    }

    fn table(s: &QueueSeries, end: u64) -> Table {
        let mut report = Report::default();
        let finish = Finish {
            groups: &[],
            end,
            ps_per_unit: 1.0,
            time_unit: "ns",
            pause_states: &[],
            vcs: 1,
            fabric: &NoFabric,
        };
        s.tables(&mut report, &finish);
        report.table("queues").unwrap().clone()
    }
}
