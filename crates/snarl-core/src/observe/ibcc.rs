//! What InfiniBand congestion control did: FECN marks, BECNs and CCTIs, as the summary's
//! `ibcc` section and the `ibcc` table (one row per window). Recorded in runs with
//! `congestion_control.type = "ibcc"`.
//!
//! `ccti_mean` is the time-weighted mean, over the measurement interval (or the window),
//! of the mean CCTI of the flows above `ccti_min`, counting only the time during which
//! any is (`ccti_min` when none ever is): how hard the throttled flows are throttled,
//! not how many there are. `ccti_max` is the highest CCTI in force during the
//! measurement interval (`ccti_min` if none rose above it). Marks and BECNs count from
//! the end of the warm-up in the summary, in their window in the table; a BECN counts
//! when it reaches its source.

use super::{Collector, Finish, Setup, TraceEvent};
use crate::config::CongestionControlConfig;
use crate::error::Result;
use crate::memory::fallible::{filled, zeroed};
use crate::report::text::{int, num};
use crate::report::{Column, ColumnData, Report, Section, Summary, Table};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// Port-VLs the summary lists, most marks first.
const LISTED_PORTS: usize = 10;

/// CCTI-time of the flows above `ccti_min`: the integral of their mean CCTI (CCTI x ps)
/// and the time any was above it (ps).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Throttled {
    weighted: f64,
    time: u64,
}

impl Throttled {
    fn mean(&self, floor: u16) -> f64 {
        if self.time == 0 {
            floor as f64
        } else {
            self.weighted / self.time as f64
        }
    }
}

pub struct IbccSeries {
    window: u64,
    windows: usize,
    measure_from: u64,
    min: u16,
    /// Per window.
    marks: Vec<u64>,
    becns: Vec<u64>,
    throttled: Vec<Throttled>,
    /// Over the measurement interval.
    fecn_marks: u64,
    becns_delivered: u64,
    measured: Throttled,
    ccti_max: u16,
    /// Flows above `ccti_min`: how many, the sum of their CCTIs, and how many at each
    /// CCTI; since when this holds.
    above: u64,
    sum: u64,
    at: Vec<u32>,
    since: u64,
    /// The state at the start of the measurement interval is counted in `ccti_max`.
    started: bool,
    /// Marks in the measurement interval per (global port, queue); (switch, port) of
    /// each global port.
    port_marks: Vec<u64>,
    queues: usize,
    ports: Vec<(u32, u32)>,
}

impl IbccSeries {
    /// Runs with InfiniBand congestion control.
    pub fn for_run(setup: &Setup) -> Result<Option<IbccSeries>> {
        let CongestionControlConfig::Ibcc(ibcc) = &setup.config.congestion_control else { return Ok(None) };
        let topo = setup.topology;
        let total = (0..topo.num_switches()).map(|s| topo.num_ports(s)).sum();
        let each = (0..topo.num_switches()).flat_map(|s| (0..topo.num_ports(s)).map(move |p| (s as u32, p as u32)));
        let ports = crate::memory::fallible::collected(total, each, "the IB CC marks per port")?;
        let (min, limit) = (ibcc.ccti_min as u16, ibcc.ccti_limit as u16);
        let (window, end, from) = (setup.window, setup.end, setup.measure_from);
        IbccSeries::new(window, end, from, min, limit, ports, setup.queues_per_port).map(Some)
    }

    /// `ports`: (switch, port) of each global port, which has `queues` queues;
    /// `ccti_min`, `ccti_limit`: the congestion control's bounds.
    pub fn new(
        window: u64,
        duration: u64,
        measure_from: u64,
        ccti_min: u16,
        ccti_limit: u16,
        ports: Vec<(u32, u32)>,
        queues: usize,
    ) -> Result<IbccSeries> {
        let window = window.max(1);
        let windows = duration.div_ceil(window) as usize;
        let what = "the IB CC time series";
        Ok(IbccSeries {
            window,
            windows,
            measure_from,
            min: ccti_min,
            marks: zeroed(windows, what)?,
            becns: zeroed(windows, what)?,
            throttled: filled(windows, Throttled::default(), what)?,
            fecn_marks: 0,
            becns_delivered: 0,
            measured: Throttled::default(),
            ccti_max: ccti_min,
            above: 0,
            sum: 0,
            at: zeroed(ccti_limit as usize + 1, what)?,
            since: 0,
            started: false,
            port_marks: zeroed(ports.len() * queues, "the IB CC marks per port")?,
            queues,
            ports,
        })
    }

    /// Adds the CCTIs held over [since, to) to the windows and the measurement interval.
    fn hold(&self, to: u64, windows: &mut [Throttled], measured: &mut Throttled) {
        if self.above == 0 || to <= self.since {
            return;
        }
        let mean = self.sum as f64 / self.above as f64;
        let from_measure = self.since.max(self.measure_from);
        if to > from_measure {
            measured.weighted += mean * (to - from_measure) as f64;
            measured.time += to - from_measure;
        }
        let end = to.min(self.window * self.windows as u64);
        let mut t = self.since;
        while t < end {
            let w = (t / self.window) as usize;
            let until = ((w as u64 + 1) * self.window).min(end);
            windows[w].weighted += mean * (until - t) as f64;
            windows[w].time += until - t;
            t = until;
        }
    }

    /// The highest CCTI in force now (`ccti_min` if none is above it).
    fn highest(&self) -> u16 {
        (self.min as usize + 1..self.at.len()).rev().find(|&c| self.at[c] > 0).map_or(self.min, |c| c as u16)
    }

    fn start_if_due(&mut self, now: u64) {
        if !self.started && now >= self.measure_from {
            self.started = true;
            self.ccti_max = self.ccti_max.max(self.highest());
        }
    }

    /// The windows' and the measurement interval's CCTI-time up to `end`.
    fn closed(&self, end: u64) -> (Vec<Throttled>, Throttled) {
        let (mut windows, mut measured) = (self.throttled.clone(), self.measured);
        self.hold(end, &mut windows, &mut measured);
        (windows, measured)
    }

    /// The summary's `ibcc` section of a run that ended at `end`.
    pub fn summary(&self, end: u64) -> IbccSummary {
        let (_, measured) = self.closed(end);
        let ccti_max = if self.started { self.ccti_max } else { self.highest().max(self.ccti_max) };
        let mut ports: Vec<(usize, u64)> =
            self.port_marks.iter().enumerate().filter(|(_, &m)| m > 0).map(|(q, &m)| (q, m)).collect();
        ports.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let marking_ports = ports
            .into_iter()
            .take(LISTED_PORTS)
            .map(|(q, fecn_marks)| {
                let (switch, port) = self.ports[q / self.queues];
                MarkingPort { switch, port, vl: (q % self.queues) as u32, fecn_marks }
            })
            .collect();
        IbccSummary {
            fecn_marks: self.fecn_marks,
            becns: self.becns_delivered,
            ccti_mean: measured.mean(self.min),
            ccti_max: ccti_max as u64,
            marking_ports,
        }
    }

    /// One row per window of a run that ended at `end`: its start (in the run's time
    /// unit), FECN marks, BECNs and the window's `ccti_mean`.
    pub fn table(&self, end: u64, ps_per_unit: f64) -> Table {
        let (throttled, _) = self.closed(end);
        let windows = (end.div_ceil(self.window) as usize).min(self.windows);
        let time = (0..windows).map(|w| (w as u64 * self.window) as f64 / ps_per_unit).collect();
        let col = |name: &str, data| Column { name: name.to_string(), data };
        Table {
            columns: vec![
                col("time", ColumnData::F64(time)),
                col("fecn_marks", ColumnData::U64(self.marks[..windows].to_vec())),
                col("becns", ColumnData::U64(self.becns[..windows].to_vec())),
                col("ccti_mean", ColumnData::F64(throttled[..windows].iter().map(|w| w.mean(self.min)).collect())),
            ],
        }
    }
}

impl Collector for IbccSeries {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        match *event {
            TraceEvent::EcnMarked { port, queue, .. } => {
                if let Some(cell) = self.marks.get_mut((now / self.window) as usize) {
                    *cell += 1;
                }
                self.fecn_marks += 1;
                if let Some(count) = self.port_marks.get_mut(port as usize * self.queues + queue as usize) {
                    *count += 1;
                }
            }
            TraceEvent::CnpDelivered { .. } => {
                if let Some(cell) = self.becns.get_mut((now / self.window) as usize) {
                    *cell += 1;
                }
                self.becns_delivered += 1;
            }
            TraceEvent::CctiChanged { from, to } => {
                let (mut windows, mut measured) = (std::mem::take(&mut self.throttled), self.measured);
                self.hold(now, &mut windows, &mut measured);
                (self.throttled, self.measured, self.since) = (windows, measured, now);
                self.start_if_due(now);
                if from > self.min {
                    self.above -= 1;
                    self.sum -= from as u64;
                    self.at[from as usize] -= 1;
                }
                if to > self.min {
                    self.above += 1;
                    self.sum += to as u64;
                    self.at[to as usize] += 1;
                }
                if self.started {
                    self.ccti_max = self.ccti_max.max(to);
                }
            }
            _ => {}
        }
    }

    fn summarise(&mut self, summary: &mut Summary, finish: &Finish) {
        let ibcc = self.summary(finish.end);
        summary.sections.set(Section::new(SECTION, &ibcc).at(POSITION).note(ibcc.note()));
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        report.add_table("ibcc", self.table(finish.end, finish.ps_per_unit));
    }
}

/// The summary's section of IB CC, and its position among the sections.
pub const SECTION: &str = "ibcc";
pub const POSITION: u32 = 400;

/// What InfiniBand congestion control did (runs with `congestion_control.type = "ibcc"`):
/// marks and BECNs over the whole run, as the summary's counters (`fecn_marks`,
/// `becns_delivered`) and the `ibcc` table count them; the CCTIs over the measurement
/// interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IbccSummary {
    /// Packets the switches marked with FECN.
    pub fecn_marks: u64,
    /// BECNs that reached their source (the counters' `becns_delivered`).
    pub becns: u64,
    /// Time-weighted mean of the mean CCTI of the flows above `ccti_min`, over the time
    /// any was (`ccti_min` if none ever was).
    pub ccti_mean: f64,
    /// Highest CCTI in force (`ccti_min` if none rose above it).
    pub ccti_max: u64,
    /// The port-VLs that marked, most marks first (at most 10).
    pub marking_ports: Vec<MarkingPort>,
}

/// One port-VL that marked packets: output `port` of `switch`, virtual lane `vl`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MarkingPort {
    pub switch: u32,
    pub port: u32,
    pub vl: u32,
    pub fecn_marks: u64,
}

impl IbccSummary {
    /// Its line in the printout of a run.
    pub fn note(&self) -> String {
        format!(
            "IB CC: {} FECN marks, {} BECNs delivered (whole run); CCTI mean {}, highest {}",
            int(self.fecn_marks),
            int(self.becns),
            num(self.ccti_mean, 1),
            int(self.ccti_max)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(measure_from: u64) -> IbccSeries {
        IbccSeries::new(100, 400, measure_from, 0, 127, vec![(0, 0), (0, 1), (1, 0)], 2).unwrap()
    }

    fn change(s: &mut IbccSeries, now: u64, from: u16, to: u16) {
        s.on(now, &TraceEvent::CctiChanged { from, to });
    }

    #[test]
    fn ccti_mean_weighs_the_mean_of_the_throttled_flows_by_time() {
        let mut s = series(0);
        // [50, 150): one flow at 2; [150, 250): flows at 2 and 4 (mean 3); then none.
        change(&mut s, 50, 0, 2);
        change(&mut s, 150, 0, 4);
        change(&mut s, 250, 4, 0);
        change(&mut s, 250, 2, 0);
        let summary = s.summary(400);
        assert_eq!(summary.ccti_mean, (2.0 * 100.0 + 3.0 * 100.0) / 200.0, "only the time with flows above min");
        assert_eq!(summary.ccti_max, 4);
        let t = s.table(400, 1.0);
        assert_eq!(t.column("ccti_mean"), Some(&ColumnData::F64(vec![2.0, 2.5, 3.0, 0.0])));
    }

    #[test]
    fn marks_and_becns_count_the_whole_run_and_cctis_the_measurement_interval() {
        let mut s = series(200);
        change(&mut s, 0, 0, 9);
        change(&mut s, 10, 9, 5);
        s.on(20, &TraceEvent::EcnMarked { port: 1, queue: 1, isolated: false });
        s.on(20, &TraceEvent::CnpDelivered { group: 0 });
        s.on(210, &TraceEvent::EcnMarked { port: 2, queue: 0, isolated: false });
        s.on(220, &TraceEvent::EcnMarked { port: 2, queue: 0, isolated: false });
        s.on(230, &TraceEvent::EcnMarked { port: 0, queue: 1, isolated: false });
        s.on(230, &TraceEvent::CnpDelivered { group: 0 });
        change(&mut s, 300, 5, 4);
        let summary = s.summary(400);
        assert_eq!((summary.fecn_marks, summary.becns), (4, 2), "as the counters and the table count them");
        assert_eq!(summary.ccti_max, 5, "the CCTI in force at the start of the interval counts, 9 before it does not");
        assert_eq!(summary.ccti_mean, 4.5);
        let ports: Vec<(u32, u32, u32, u64)> =
            summary.marking_ports.iter().map(|p| (p.switch, p.port, p.vl, p.fecn_marks)).collect();
        assert_eq!(ports, vec![(1, 0, 0, 2), (0, 0, 1, 1), (0, 1, 1, 1)], "most marks first; (switch, port, VL)");
        let t = s.table(400, 1.0);
        assert_eq!(t.column("fecn_marks"), Some(&ColumnData::U64(vec![1, 0, 3, 0])));
        assert_eq!(t.column("becns"), Some(&ColumnData::U64(vec![1, 0, 1, 0])));
    }

    #[test]
    fn without_throttled_flows_the_mean_is_ccti_min() {
        let s = IbccSeries::new(100, 400, 0, 3, 127, vec![], 1).unwrap();
        let summary = s.summary(400);
        assert_eq!((summary.ccti_mean, summary.ccti_max), (3.0, 3));
    }
}
