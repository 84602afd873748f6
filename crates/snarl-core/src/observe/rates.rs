//! Every rate change of every flow (congestion control's cuts and increases), as the
//! `rates` table: recorded when `congestion_control.rate_series` asks for it.

use super::{Collector, Finish, Setup, TraceEvent};
use crate::config::CongestionControlConfig;
use crate::report::{Column, ColumnData, Report, Table};

#[derive(Default)]
pub struct RateLog {
    time: Vec<u64>,
    src: Vec<u64>,
    dst: Vec<u64>,
    qp: Vec<u64>,
    rate_gbps: Vec<f64>,
}

impl RateLog {
    /// Runs whose DCQCN asks for the rate series (`congestion_control.rate_series`).
    pub fn for_run(setup: &Setup) -> Option<RateLog> {
        match &setup.config.congestion_control {
            CongestionControlConfig::Dcqcn(dcqcn) if dcqcn.rate_series => Some(RateLog::default()),
            _ => None,
        }
    }
}

impl Collector for RateLog {
    #[inline]
    fn on(&mut self, now: u64, event: &TraceEvent) {
        if let TraceEvent::RateChanged { src, dst, qp, rate_bps, .. } = *event {
            self.time.push(now);
            self.src.push(src as u64);
            self.dst.push(dst as u64);
            self.qp.push(qp as u64);
            self.rate_gbps.push(rate_bps / 1e9);
        }
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        let col = |name: &str, data| Column { name: name.to_string(), data };
        let time = self.time.iter().map(|&t| t as f64 / finish.ps_per_unit).collect();
        report.add_table(
            "rates",
            Table {
                columns: vec![
                    col("time", ColumnData::F64(time)),
                    col("src", ColumnData::U64(self.src.clone())),
                    col("dst", ColumnData::U64(self.dst.clone())),
                    col("qp", ColumnData::U64(self.qp.clone())),
                    col("rate_gbps", ColumnData::F64(self.rate_gbps.clone())),
                ],
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::NoFabric;

    #[test]
    fn every_change_is_a_row_in_the_reports_unit() {
        let mut log = RateLog::default();
        log.on(2_000, &TraceEvent::RateChanged { src: 1, dst: 2, qp: 0, rate_bps: 50e9, cut: true });
        log.on(3_000, &TraceEvent::EcnMarked { port: 0, queue: 0, isolated: false });
        log.on(4_000, &TraceEvent::RateChanged { src: 1, dst: 2, qp: 0, rate_bps: 75e9, cut: false });
        let mut report = Report::default();
        log.tables(
            &mut report,
            &Finish {
                groups: &[],
                end: 5_000,
                ps_per_unit: 1_000.0,
                time_unit: "ns",
                pause_states: &[],
                vcs: 1,
                fabric: &NoFabric,
            },
        );
        let t = report.table("rates").unwrap();
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![2.0, 4.0])));
        assert_eq!(t.column("rate_gbps"), Some(&ColumnData::F64(vec![50.0, 75.0])));
    }
}
