//! Fabric events per time window: pause and resume frames, ECN marks, CNPs, rate cuts and
//! drops (each congestion control's own: under the per-pair control, congestion marks,
//! marked ACKs and window cuts). They show when congestion control and flow control act (the pause storm at the
//! onset of an incast, the marks that follow); recorded only in runs that have any of
//! these mechanisms, so other runs carry no extra table.

use super::{Collector, Finish, Setup, TraceEvent};
use crate::cc::CongestionTerms;
use crate::config::FlowControlConfig;
use crate::error::Result;
use crate::memory::fallible::filled;
use crate::report::{Column, ColumnData, Report, Table};

/// The columns: the trace events counted, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FabricEvent {
    PauseFrame,
    ResumeFrame,
    EcnMark,
    Cnp,
    RateCut,
    Drop,
}

const KINDS: usize = 6;

pub struct FabricSeries {
    window: u64,
    windows: usize,
    counts: Vec<[u32; KINDS]>,
    /// The columns' names: the congestion counters' in the run's terms.
    names: [&'static str; KINDS],
}

impl FabricSeries {
    /// Runs with link-level flow control of a lossy or PFC kind, ECN or congestion
    /// control (credit-based fabrics without them have nothing to count).
    pub fn for_run(setup: &Setup) -> Result<Option<FabricSeries>> {
        let link_events = !matches!(setup.config.flow_control, FlowControlConfig::Credit {});
        if !(setup.congestion_counters.is_some() || link_events) {
            return Ok(None);
        }
        let terms = setup.congestion_counters.unwrap_or(CongestionTerms::ETHERNET);
        FabricSeries::new(setup.window, setup.end, terms).map(Some)
    }

    pub fn new(window: u64, duration: u64, terms: CongestionTerms) -> Result<FabricSeries> {
        let windows = duration.div_ceil(window.max(1)) as usize;
        let counts = filled(windows, [0; KINDS], "the fabric time series")?;
        let names = ["pause_frames", "resume_frames", terms.marks, terms.notifications, terms.cuts, "packets_dropped"];
        Ok(FabricSeries { window: window.max(1), windows, counts, names })
    }

    #[inline]
    fn add(&mut self, now: u64, event: FabricEvent) {
        if let Some(cell) = self.counts.get_mut((now / self.window) as usize) {
            cell[event as usize] += 1;
        }
    }

    /// One row per window of a run that ended at `end`: its start (in the run's time
    /// unit) and each event's count.
    pub fn table(&self, end: u64, ps_per_unit: f64) -> Table {
        let windows = (end.div_ceil(self.window) as usize).min(self.windows);
        let time = (0..windows).map(|w| (w as u64 * self.window) as f64 / ps_per_unit).collect();
        let mut columns = vec![Column { name: "time".into(), data: ColumnData::F64(time) }];
        for (k, name) in self.names.iter().enumerate() {
            let counts = self.counts[..windows].iter().map(|c| c[k] as u64).collect();
            columns.push(Column { name: name.to_string(), data: ColumnData::U64(counts) });
        }
        Table { columns }
    }
}

impl Collector for FabricSeries {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        let kind = match *event {
            TraceEvent::PauseSent { on: true, .. } => FabricEvent::PauseFrame,
            TraceEvent::PauseSent { on: false, .. } => FabricEvent::ResumeFrame,
            TraceEvent::EcnMarked { .. } => FabricEvent::EcnMark,
            TraceEvent::CnpSent { .. } => FabricEvent::Cnp,
            TraceEvent::RateChanged { cut: true, .. } | TraceEvent::WindowChanged { cut: true, .. } => {
                FabricEvent::RateCut
            }
            TraceEvent::CctiChanged { from, to } if to > from => FabricEvent::RateCut,
            TraceEvent::Dropped { .. } => FabricEvent::Drop,
            _ => return,
        };
        self.add(now, kind);
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        report.add_table("fabric", self.table(finish.end, finish.ps_per_unit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_land_in_their_window() {
        let mut s = FabricSeries::new(100, 250, CongestionTerms::ETHERNET).unwrap();
        let pause = TraceEvent::PauseSent { port: 0, queue: 0, on: true };
        s.on(0, &pause);
        s.on(99, &pause);
        s.on(100, &TraceEvent::EcnMarked { port: 3, queue: 0, isolated: false });
        s.on(120, &TraceEvent::Hop); // not a fabric event
        s.on(249, &TraceEvent::Dropped { group: 0 });
        s.on(1000, &TraceEvent::Dropped { group: 0 }); // past the end: ignored
        let t = s.table(250, 1.0);
        assert_eq!(t.rows(), 3);
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![0.0, 100.0, 200.0])));
        assert_eq!(t.column("pause_frames"), Some(&ColumnData::U64(vec![2, 0, 0])));
        assert_eq!(t.column("ecn_marks"), Some(&ColumnData::U64(vec![0, 1, 0])));
        assert_eq!(t.column("packets_dropped"), Some(&ColumnData::U64(vec![0, 0, 1])));
        // A run that stopped at 150 has the windows up to then.
        let t = s.table(150, 1.0);
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![0.0, 100.0])));
        assert_eq!(t.column("ecn_marks"), Some(&ColumnData::U64(vec![0, 1])));
    }

    #[test]
    fn infiniband_runs_count_in_their_own_terms() {
        let mut s = FabricSeries::new(100, 200, CongestionTerms::INFINIBAND).unwrap();
        s.on(10, &TraceEvent::EcnMarked { port: 3, queue: 0, isolated: false });
        let t = s.table(200, 1.0);
        assert_eq!(t.column("fecn_marks"), Some(&ColumnData::U64(vec![1, 0])));
        assert!(t.column("becns").is_some() && t.column("ccti_increases").is_some());
        assert!(t.column("ecn_marks").is_none() && t.column("cnps").is_none());
    }

    #[test]
    fn per_pair_runs_count_marked_acks_and_window_cuts() {
        let mut s = FabricSeries::new(100, 200, CongestionTerms::PER_PAIR).unwrap();
        s.on(10, &TraceEvent::EcnMarked { port: 3, queue: 0, isolated: false });
        s.on(20, &TraceEvent::CnpSent { group: 0 });
        s.on(30, &TraceEvent::Acknowledgement { group: 0, delivered: false });
        s.on(40, &TraceEvent::CnpDelivered { group: 0 });
        s.on(150, &TraceEvent::WindowChanged { src: 0, dst: 1, window: 4096, cut: true });
        s.on(160, &TraceEvent::WindowChanged { src: 0, dst: 1, window: 8192, cut: false });
        let t = s.table(200, 1.0);
        assert_eq!(t.column("congestion_marks"), Some(&ColumnData::U64(vec![1, 0])));
        assert_eq!(t.column("marked_acks"), Some(&ColumnData::U64(vec![1, 0])), "sent, not plain ACKs");
        assert_eq!(t.column("window_cuts"), Some(&ColumnData::U64(vec![0, 1])), "cuts only");
    }
}
