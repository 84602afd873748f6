//! Congestion isolation as it acted: the summary's `isolation` and the per-window
//! `isolation` table. Counts cover the whole run (as the summary's other counters do);
//! the table occupancy's mean is time-weighted over the measurement interval.

use crate::error::Result;
use crate::flow_control::PauseState;
use crate::memory::fallible::filled;
use crate::observe::{Collector, Finish, IsolationEvent, Setup, TraceEvent};
use crate::report::text::{int, num};
use crate::report::{Column, ColumnData, Report, Section, Summary, Table};
use serde::{Deserialize, Serialize};

/// The counted kinds, in table order.
const NAMES: [&str; 11] = [
    "cft_allocations",
    "cft_releases",
    "cft_overflows",
    "mirror_overflows",
    "recurrences",
    "messages_sent",
    "isolated_packets",
    "marks_isolated",
    "marks_victims",
    "cnps",
    "false_positives",
];
const KINDS: usize = NAMES.len();

pub struct IsolationSeries {
    window: u64,
    measure_from: u64,
    counts: Vec<[u64; KINDS]>,
    /// Entries in use at the end of each window.
    occupancy_at: Vec<u64>,
    totals: [u64; KINDS],
    reordered: u64,
    /// Entries in use now, the most ever, and their time integral since the measurement
    /// start (to `since`).
    in_use: u64,
    max_in_use: u64,
    integral: u128,
    since: u64,
    /// When the first entry was taken on detection, and the first on a message.
    first_detection: Option<u64>,
    first_message_allocation: Option<u64>,
}

impl IsolationSeries {
    /// Runs with congestion isolation (`[isolation]`).
    pub fn for_run(setup: &Setup) -> Result<Option<IsolationSeries>> {
        if setup.config.isolation.is_none() {
            return Ok(None);
        }
        IsolationSeries::new(setup.window, setup.end, setup.measure_from).map(Some)
    }

    pub fn new(window: u64, duration: u64, measure_from: u64) -> Result<IsolationSeries> {
        let window = window.max(1);
        let windows = duration.div_ceil(window) as usize;
        Ok(IsolationSeries {
            window,
            measure_from,
            counts: filled(windows, [0; KINDS], "the isolation time series")?,
            occupancy_at: filled(windows, 0, "the isolation time series")?,
            totals: [0; KINDS],
            reordered: 0,
            in_use: 0,
            max_in_use: 0,
            integral: 0,
            since: measure_from,
            first_detection: None,
            first_message_allocation: None,
        })
    }

    #[inline]
    fn add(&mut self, now: u64, kind: usize) {
        self.totals[kind] += 1;
        if let Some(cell) = self.counts.get_mut((now / self.window) as usize) {
            cell[kind] += 1;
        }
    }

    /// Entries in use changed by `delta` at `now`.
    fn occupy(&mut self, now: u64, delta: i64) {
        if now > self.since {
            self.integral += self.in_use as u128 * (now - self.since) as u128;
            self.since = now;
        }
        self.in_use = (self.in_use as i64 + delta).max(0) as u64;
        self.max_in_use = self.max_in_use.max(self.in_use);
        let first = (now / self.window) as usize;
        for cell in self.occupancy_at.iter_mut().skip(first) {
            *cell = self.in_use;
        }
    }

    pub fn summary(&self, end: u64, ps_per_unit: f64) -> IsolationSummary {
        let integral = self.integral + self.in_use as u128 * end.saturating_sub(self.since) as u128;
        let interval = end.saturating_sub(self.measure_from).max(1);
        let windows = (end.div_ceil(self.window) as usize).min(self.counts.len());
        let peak = self.counts[..windows].iter().map(|c| c[9]).max().unwrap_or(0);
        let t = &self.totals;
        IsolationSummary {
            cft_allocations: t[0],
            cft_releases: t[1],
            cft_overflows: t[2],
            mirror_overflows: t[3],
            recurrences: t[4],
            messages_sent: t[5],
            isolated_packets: t[6],
            cft_occupancy: Occupancy {
                mean: integral as f64 / interval as f64,
                max: self.max_in_use,
                at_end: self.in_use,
            },
            cfq_paused_time: 0.0,
            marks_isolated: t[7],
            marks_victims: t[8],
            cnps_sent: t[9],
            peak_cnps_per_window: peak,
            false_positives: t[10],
            reordered_packets: self.reordered,
            first_detection: self.first_detection.map(|t| t as f64 / ps_per_unit),
            first_message_allocation: self.first_message_allocation.map(|t| t as f64 / ps_per_unit),
        }
    }

    /// One row per window of a run that ended at `end`: its start, each kind's count, and
    /// the entries in use at its end.
    pub fn table(&self, end: u64, ps_per_unit: f64) -> Table {
        let windows = (end.div_ceil(self.window) as usize).min(self.counts.len());
        let time = (0..windows).map(|w| (w as u64 * self.window) as f64 / ps_per_unit).collect();
        let mut columns = vec![Column { name: "time".into(), data: ColumnData::F64(time) }];
        for (k, name) in NAMES.iter().enumerate() {
            let counts = self.counts[..windows].iter().map(|c| c[k]).collect();
            columns.push(Column { name: name.to_string(), data: ColumnData::U64(counts) });
        }
        let occupancy = self.occupancy_at[..windows].to_vec();
        columns.push(Column { name: "cft_occupancy".into(), data: ColumnData::U64(occupancy) });
        Table { columns }
    }
}

impl Collector for IsolationSeries {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        let kind = match *event {
            TraceEvent::Isolation(event) => match event {
                IsolationEvent::Allocated { by_message } => {
                    let first = if by_message { &mut self.first_message_allocation } else { &mut self.first_detection };
                    first.get_or_insert(now);
                    self.occupy(now, 1);
                    0
                }
                IsolationEvent::Released => {
                    self.occupy(now, -1);
                    1
                }
                IsolationEvent::CftOverflow => 2,
                IsolationEvent::MirrorOverflow => 3,
                IsolationEvent::Recurrence => 4,
                IsolationEvent::MessageSent => 5,
                IsolationEvent::PacketIsolated => 6,
                IsolationEvent::FalsePositive => 10,
                IsolationEvent::Reordered => {
                    self.reordered += 1;
                    return;
                }
            },
            TraceEvent::EcnMarked { isolated: true, .. } => 7,
            TraceEvent::EcnMarked { isolated: false, .. } => 8,
            TraceEvent::CnpSent { .. } => 9,
            _ => return,
        };
        self.add(now, kind);
    }

    fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        let mut isolation = self.summary(finish.end, finish.ps_per_unit);
        isolation.cfq_paused_time =
            cfq_paused_time(finish.pause_states, finish.vcs, finish.end) as f64 / finish.ps_per_unit;
        summary.sections.set(Section::new(SECTION, &isolation).at(POSITION).note(isolation.note()));
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        report.add_table("isolation", self.table(finish.end, finish.ps_per_unit));
    }
}

/// Time the congested-flow classes (the queues beyond the `vcs` priorities) spent
/// paused, summed over the links of `states` (the switch outputs' and the NICs').
fn cfq_paused_time(states: &[&PauseState], vcs: usize, end: u64) -> u64 {
    let paused = |state: &PauseState| -> u64 {
        (0..state.links())
            .flat_map(|l| (vcs..state.queues()).map(move |q| (l, q)))
            .map(|(l, q)| state.paused_time(l, q, end))
            .sum()
    };
    states.iter().map(|s| paused(s)).sum()
}

/// The summary's section of congestion isolation, and its position among the sections.
pub const SECTION: &str = "isolation";
pub const POSITION: u32 = 500;

/// What congestion isolation did in a run (counts over the whole run).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Occupancy {
    pub mean: f64,
    pub max: u64,
    pub at_end: u64,
}

impl IsolationSummary {
    /// Its line in the printout of a run.
    pub fn note(&self) -> String {
        format!(
            "isolation: {} entries taken, {} overflows, {} messages, {} packets isolated, {} entries in use on \
             average · ECN marks {} isolated, {} victims · peak CNPs {} per window · {} false positives, {} reordered",
            int(self.cft_allocations),
            int(self.cft_overflows),
            int(self.messages_sent),
            int(self.isolated_packets),
            num(self.cft_occupancy.mean, 1),
            int(self.marks_isolated),
            int(self.marks_victims),
            int(self.peak_cnps_per_window),
            int(self.false_positives),
            int(self.reordered_packets),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_window_and_occupancy_is_time_weighted() {
        let mut s = IsolationSeries::new(100, 1_000, 0).unwrap();
        s.on(50, &TraceEvent::Isolation(IsolationEvent::Allocated { by_message: false }));
        s.on(150, &TraceEvent::Isolation(IsolationEvent::Allocated { by_message: false }));
        s.on(250, &TraceEvent::Isolation(IsolationEvent::Released));
        s.on(260, &TraceEvent::EcnMarked { port: 0, queue: 1, isolated: true });
        s.on(270, &TraceEvent::CnpSent { group: 0 });
        s.on(280, &TraceEvent::CnpSent { group: 0 });
        s.on(900, &TraceEvent::Isolation(IsolationEvent::Released));
        let sum = s.summary(1_000, 1.0);
        assert_eq!((sum.cft_allocations, sum.cft_releases, sum.marks_isolated, sum.cnps_sent), (2, 2, 1, 2));
        assert_eq!(sum.peak_cnps_per_window, 2);
        assert_eq!((sum.cft_occupancy.max, sum.cft_occupancy.at_end), (2, 0));
        // 1 entry 50..150, 2 to 250, 1 to 900: (100 + 200 + 650) / 1000.
        assert!((sum.cft_occupancy.mean - 0.95).abs() < 1e-12, "{}", sum.cft_occupancy.mean);
        let t = s.table(1_000, 1.0);
        let occupancy = t.columns.iter().find(|c| c.name == "cft_occupancy").unwrap();
        assert!(matches!(&occupancy.data, ColumnData::U64(v) if v[0] == 1 && v[1] == 2 && v[2] == 1 && v[9] == 0));
    }
}
