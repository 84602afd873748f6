//! Fabric events per time window: pause and resume frames, ECN marks, CNPs, rate cuts and
//! drops. They show when congestion control and flow control act (the pause storm at the
//! onset of an incast, the marks that follow); recorded only in runs that have any of
//! these mechanisms, so other runs carry no extra table.

use crate::error::Result;
use crate::memory::fallible::filled;
use crate::report::{Column, ColumnData, Table};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FabricEvent {
    PauseFrame,
    ResumeFrame,
    EcnMark,
    Cnp,
    RateCut,
    Drop,
}

const KINDS: usize = 6;
const NAMES: [&str; KINDS] = ["pause_frames", "resume_frames", "ecn_marks", "cnps", "rate_cuts", "packets_dropped"];

pub struct FabricSeries {
    window: u64,
    windows: usize,
    counts: Vec<[u32; KINDS]>,
}

impl FabricSeries {
    /// `enabled = false` records nothing and reports an empty table.
    pub fn new(window: u64, duration: u64, enabled: bool) -> Result<FabricSeries> {
        let windows = if enabled { duration.div_ceil(window.max(1)) as usize } else { 0 };
        let counts = filled(windows, [0; KINDS], "the fabric time series")?;
        Ok(FabricSeries { window: window.max(1), windows, counts })
    }

    #[inline]
    pub fn add(&mut self, now: u64, event: FabricEvent) {
        if let Some(cell) = self.counts.get_mut((now / self.window) as usize) {
            cell[event as usize] += 1;
        }
    }

    /// One row per window: its start (in the run's time unit) and each event's count.
    pub fn table(&self, ps_per_unit: f64) -> Table {
        if self.windows == 0 {
            return Table::default();
        }
        let time = (0..self.windows).map(|w| (w as u64 * self.window) as f64 / ps_per_unit).collect();
        let mut columns = vec![Column { name: "time".into(), data: ColumnData::F64(time) }];
        for (k, name) in NAMES.iter().enumerate() {
            let counts = self.counts.iter().map(|c| c[k] as u64).collect();
            columns.push(Column { name: name.to_string(), data: ColumnData::U64(counts) });
        }
        Table { columns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_land_in_their_window() {
        let mut s = FabricSeries::new(100, 250, true).unwrap();
        s.add(0, FabricEvent::PauseFrame);
        s.add(99, FabricEvent::PauseFrame);
        s.add(100, FabricEvent::EcnMark);
        s.add(249, FabricEvent::Drop);
        s.add(1000, FabricEvent::Drop); // past the end: ignored
        let t = s.table(1.0);
        assert_eq!(t.rows(), 3);
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![0.0, 100.0, 200.0])));
        assert_eq!(t.column("pause_frames"), Some(&ColumnData::U64(vec![2, 0, 0])));
        assert_eq!(t.column("ecn_marks"), Some(&ColumnData::U64(vec![0, 1, 0])));
        assert_eq!(t.column("packets_dropped"), Some(&ColumnData::U64(vec![0, 0, 1])));
        assert_eq!(FabricSeries::new(100, 250, false).unwrap().table(1.0).rows(), 0);
    }
}
