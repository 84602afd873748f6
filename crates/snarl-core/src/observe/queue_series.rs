//! The probed queues (`observe.queues`) window by window: each window's time-weighted
//! mean and its maximum occupancy, as the `queues` table (one row per window and queue),
//! to see a queue build and drain over the run, beside the distribution in the summary.

use super::{Collector, Finish, TraceEvent};
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

pub struct QueueSeries {
    window: u64,
    windows: usize,
    /// (switch, port, priority) of each probe.
    queues: Vec<(u32, u32, u32)>,
    /// Per probe: the occupancy it holds and since when.
    held: Vec<(u64, u64)>,
    /// `windows` cells per probe.
    cells: Vec<Cell>,
}

impl QueueSeries {
    /// Bytes it keeps per probe and window, for the memory estimate.
    pub const BYTES_PER_CELL: u64 = size_of::<Cell>() as u64;

    pub fn new(queues: Vec<(u32, u32, u32)>, window: u64, duration: u64) -> Result<QueueSeries> {
        let window = window.max(1);
        let windows = duration.div_ceil(window) as usize;
        let cells = filled(windows.saturating_mul(queues.len()), Cell::default(), "the queue time series")?;
        Ok(QueueSeries { window, windows, held: vec![(0, 0); queues.len()], queues, cells })
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
        for w in 0..windows {
            let start = w as u64 * self.window;
            let length = (start + self.window).min(finish.end.max(start + 1)) - start;
            for (probe, &(s, p, q)) in self.queues.iter().enumerate() {
                let cell = closed.cells[probe * self.windows + w];
                time.push(start as f64 / finish.ps_per_unit);
                switch.push(s as u64);
                port.push(p as u64);
                priority.push(q as u64);
                mean.push(cell.area as f64 / length as f64);
                max.push(cell.max);
            }
        }
        let col = |name: &str, data| Column { name: name.to_string(), data };
        report.add_table(
            "queues",
            Table {
                columns: vec![
                    col("time", ColumnData::F64(time)),
                    col("switch", ColumnData::U64(switch)),
                    col("port", ColumnData::U64(port)),
                    col("priority", ColumnData::U64(priority)),
                    col("mean_bytes", ColumnData::F64(mean)),
                    col("max_bytes", ColumnData::U64(max)),
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
    fn windows_hold_the_time_weighted_mean_and_the_maximum() {
        let mut s = QueueSeries::new(vec![(3, 1, 0), (4, 2, 1)], 100, 300).unwrap();
        let q = |probe, bytes| TraceEvent::QueueLength { probe, bytes };
        s.on(50, &q(0, 1000)); // window 0: 0 for 50, 1000 for 50
        s.on(150, &q(0, 0)); // window 1: 1000 for 50, 0 for 50
        s.on(250, &q(0, 4000)); // window 2: 0 for 50, 4000 for 50 (to the end)
        s.on(260, &q(1, 7));
        s.on(260, &q(1, 0)); // held for no time: a maximum, no weight
        let mut report = Report::default();
        s.tables(
            &mut report,
            &Finish {
                groups: &[],
                end: 300,
                ps_per_unit: 1.0,
                time_unit: "ns",
                pause_states: &[],
                vcs: 1,
                fabric: &NoFabric,
            },
        );
        let t = report.table("queues").unwrap();
        assert_eq!(t.rows(), 6);
        assert_eq!(t.column("time"), Some(&ColumnData::F64(vec![0.0, 0.0, 100.0, 100.0, 200.0, 200.0])));
        assert_eq!(t.column("switch"), Some(&ColumnData::U64(vec![3, 4, 3, 4, 3, 4])));
        assert_eq!(t.column("mean_bytes"), Some(&ColumnData::F64(vec![500.0, 0.0, 500.0, 0.0, 2000.0, 0.0])));
        assert_eq!(t.column("max_bytes"), Some(&ColumnData::U64(vec![1000, 0, 1000, 0, 4000, 7])));
    }
}
