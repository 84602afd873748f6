//! Throughput and latency per fixed time window and group: flat arrays sized at build.

use crate::error::Result;
use crate::memory::fallible::zeroed;
use crate::report::{Column, ColumnData, Table};
use strength_reduce::StrengthReducedU64;

pub struct Series {
    groups: usize,
    window: u64,
    /// `window` as a divisor: every generation and delivery finds its window.
    per_window: StrengthReducedU64,
    windows: usize,
    /// Length of the last window: `window`, or less in a run that stopped inside it
    /// (`end_at`), whose loads are then over the part it covers.
    last: u64,
    /// Indexed [window * groups + group].
    generated: Vec<u64>,
    delivered: Vec<u64>,
    latency_sum: Vec<u64>,
    latency_count: Vec<u64>,
}

impl Series {
    pub fn new(groups: usize, window: u64, duration: u64) -> Result<Series> {
        let windows = duration.div_ceil(window.max(1)) as usize;
        let cells = windows.saturating_mul(groups);
        let what = "the time series";
        Ok(Series {
            groups,
            window: window.max(1),
            per_window: StrengthReducedU64::new(window.max(1)),
            windows,
            last: window.max(1),
            generated: zeroed(cells, what)?,
            delivered: zeroed(cells, what)?,
            latency_sum: zeroed(cells, what)?,
            latency_count: zeroed(cells, what)?,
        })
    }

    #[inline]
    fn cell(&self, now: u64, group: u16) -> Option<usize> {
        let w = (now / self.per_window) as usize;
        (w < self.windows).then(|| w * self.groups + group as usize)
    }

    /// `group` offered `bytes` evenly over [from, to): each window counts its part.
    #[inline]
    pub fn add_offered(&mut self, from: u64, to: u64, group: u16, bytes: u64) {
        match self.within_one(from, to, group) {
            Some(c) => self.generated[c] += bytes,
            None => Series::spread(&mut self.generated, self.window, self.windows, self.groups, from, to, group, bytes),
        }
    }

    /// A packet of `bytes` of `group` arrived over [from, to) (its serialisation on the
    /// host link), its tail at `to` after `latency`: each window counts the part of its
    /// bytes that arrived in it, so no window counts more than its link carried; its
    /// latency counts in the window of its tail.
    #[inline]
    pub fn add_delivered(&mut self, from: u64, to: u64, group: u16, bytes: u64, latency: u64) {
        if let Some(c) = self.within_one(from, to, group) {
            self.delivered[c] += bytes;
            self.latency_sum[c] += latency;
            self.latency_count[c] += 1;
            return;
        }
        if let Some(c) = self.cell(to.saturating_sub(1), group) {
            self.latency_sum[c] += latency;
            self.latency_count[c] += 1;
        }
        Series::spread(&mut self.delivered, self.window, self.windows, self.groups, from, to, group, bytes);
    }

    /// The cell of `group` in the window [from, to) lies in, if it lies in one.
    #[inline]
    fn within_one(&self, from: u64, to: u64, group: u16) -> Option<usize> {
        let last = to.saturating_sub(1).max(from);
        let w = last / self.per_window;
        (w < self.windows as u64 && from >= w * self.window).then(|| w as usize * self.groups + group as usize)
    }

    /// Adds `bytes` spread evenly over [from, to) to the cells of `group` (whole bytes:
    /// each window its share rounded down, the last what is left).
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn spread(
        cells: &mut [u64],
        window: u64,
        windows: usize,
        groups: usize,
        from: u64,
        to: u64,
        group: u16,
        bytes: u64,
    ) {
        let cell = |w: u64| (w < windows as u64).then(|| w as usize * groups + group as usize);
        if to <= from + 1 || from / window == (to - 1) / window {
            if let Some(c) = cell(from / window) {
                cells[c] += bytes;
            }
            return;
        }
        let (mut left, mut at) = (bytes, from);
        for w in from / window..=(to - 1) / window {
            let until = ((w + 1) * window).min(to);
            let part = if until == to { left } else { share(bytes, until - at, to - from) };
            left -= part;
            if let Some(c) = cell(w) {
                cells[c] += part;
            }
            at = until;
        }
    }

    pub fn window(&self) -> u64 {
        self.window
    }

    /// The run ended at `end`, before the duration the series was sized for
    /// (`simulation.stop_after`): the series ends there, its last window at `end`.
    pub fn end_at(&mut self, end: u64) {
        let windows = (end.div_ceil(self.window) as usize).min(self.windows);
        if windows < self.windows {
            self.windows = windows;
            self.last = end - (windows as u64).saturating_sub(1) * self.window;
        }
    }

    /// Seconds of window `w`.
    fn seconds(&self, w: usize) -> f64 {
        let length = if w + 1 == self.windows { self.last } else { self.window };
        length as f64 * 1e-12
    }

    /// Accepted load per window of the groups for which `include(g)` holds;
    /// `capacity_bps` is their summed capacity.
    pub fn accepted_of(&self, include: impl Fn(usize) -> bool, capacity_bps: f64) -> Vec<f64> {
        (0..self.windows)
            .map(|w| {
                let bytes: u64 =
                    (0..self.groups).filter(|&g| include(g)).map(|g| self.delivered[w * self.groups + g]).sum();
                if capacity_bps > 0.0 {
                    bytes as f64 * 8.0 / self.seconds(w) / capacity_bps
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Tidy table: one row per (window, group) plus the group "all". Loads are normalised
    /// per endpoint to link capacity; `capacity_bps[g]` is group g's summed capacity.
    pub fn table(&self, names: &[String], capacity_bps: &[f64], ps_per_unit: f64) -> Table {
        let rows = self.windows * (self.groups + 1);
        let mut start = Vec::with_capacity(rows);
        let mut group = Vec::with_capacity(rows);
        let mut offered = Vec::with_capacity(rows);
        let mut accepted = Vec::with_capacity(rows);
        let mut latency = Vec::with_capacity(rows);
        let mut packets = Vec::with_capacity(rows);
        let total_capacity: f64 = capacity_bps.iter().sum();
        for w in 0..self.windows {
            let seconds = self.seconds(w);
            let load = |bytes: u64, cap: f64| if cap > 0.0 { bytes as f64 * 8.0 / seconds / cap } else { 0.0 };
            let t = (w as u64 * self.window) as f64 / ps_per_unit;
            let (mut gen_all, mut del_all, mut lat_all, mut n_all) = (0, 0, 0, 0);
            for g in 0..self.groups {
                let c = w * self.groups + g;
                start.push(t);
                group.push(names[g].clone());
                offered.push(load(self.generated[c], capacity_bps[g]));
                accepted.push(load(self.delivered[c], capacity_bps[g]));
                latency.push(mean(self.latency_sum[c], self.latency_count[c], ps_per_unit));
                packets.push(self.latency_count[c]);
                gen_all += self.generated[c];
                del_all += self.delivered[c];
                lat_all += self.latency_sum[c];
                n_all += self.latency_count[c];
            }
            start.push(t);
            group.push("all".to_string());
            offered.push(load(gen_all, total_capacity));
            accepted.push(load(del_all, total_capacity));
            latency.push(mean(lat_all, n_all, ps_per_unit));
            packets.push(n_all);
        }
        let col = |name: &str, data| Column { name: name.to_string(), data };
        Table {
            columns: vec![
                col("time", ColumnData::F64(start)),
                col("group", ColumnData::Str(group)),
                col("offered_load", ColumnData::F64(offered)),
                col("accepted_load", ColumnData::F64(accepted)),
                col("latency_mean", ColumnData::F64(latency)),
                col("packets_delivered", ColumnData::U64(packets)),
            ],
        }
    }
}

fn mean(sum: u64, count: u64, ps_per_unit: f64) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        sum as f64 / count as f64 / ps_per_unit
    }
}

/// The whole bytes of `bytes`, spread evenly over `span`, that fall in `part` of it
/// (rounded down: no part counts more than was spread over it).
#[inline]
pub(super) fn share(bytes: u64, part: u64, span: u64) -> u64 {
    match bytes.checked_mul(part) {
        Some(product) => product / span, // the common case, without a 128-bit division
        None => (bytes as u128 * part as u128 / span as u128) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn impossible_window_counts_are_errors() {
        // 2^64 windows of 8-byte counters: more than any address space.
        assert!(matches!(Series::new(1, 1, u64::MAX), Err(Error::Config { .. })));
        assert_eq!(Series::new(2, 10, 100).unwrap().table(&["a".into(), "b".into()], &[1.0, 1.0], 1.0).rows(), 30);
    }

    #[test]
    fn a_series_cut_short_ends_with_the_part_of_its_last_window() {
        // Windows of 1 us; the run stops 0.5 us into the third.
        let mut s = Series::new(1, 1_000_000, 10_000_000).unwrap();
        s.add_delivered(499_000, 500_000, 0, 125, 1);
        s.add_delivered(2_399_000, 2_400_000, 0, 125, 1);
        s.end_at(2_500_000);
        let t = s.table(&["a".into()], &[1e9], 1.0);
        assert_eq!(t.rows(), 6);
        let Some(ColumnData::F64(accepted)) = t.column("accepted_load") else { panic!("no accepted_load") };
        // 1000 bits over 1 us and over 0.5 us, at 1 Gb/s.
        let close = |got: &[f64], want: &[f64]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-9);
        assert!(close(&[accepted[0], accepted[2], accepted[4]], &[1.0, 0.0, 2.0]), "{accepted:?}");
        let all = s.accepted_of(|_| true, 1e9);
        assert!(all.len() == 3 && close(&all, &[1.0, 0.0, 2.0]), "{all:?}");
        // A stop past the sized duration changes nothing.
        let mut whole = Series::new(1, 1_000_000, 10_000_000).unwrap();
        whole.end_at(10_000_000);
        assert_eq!(whole.table(&["a".into()], &[1e9], 1.0).rows(), 20);
    }

    #[test]
    fn bytes_spread_over_the_windows_their_arrival_spans() {
        // Windows of 100 ps; 1000 bytes arriving over [50, 350): 50, 100, 100, 50 ps.
        let mut s = Series::new(1, 100, 1_000).unwrap();
        s.add_delivered(50, 350, 0, 1000, 7);
        s.add_offered(950, 1_150, 0, 400); // half of it after the end: dropped
        let t = s.table(&["a".into()], &[8e12], 1.0);
        let Some(ColumnData::F64(accepted)) = t.column("accepted_load") else { panic!("no accepted_load") };
        // At 8e12 b/s a 100 ps window carries 100 bytes: loads are bytes / 100.
        let got: Vec<f64> = (0..5).map(|w| accepted[2 * w]).collect();
        assert_eq!(got, vec![1.66, 3.33, 3.33, 1.68, 0.0], "each window its share, rounded down, the last the rest");
        let Some(ColumnData::F64(offered)) = t.column("offered_load") else { panic!("no offered_load") };
        assert!((offered[18] * 100.0 - 100.0).abs() < 1e-6, "the last window's part: {offered:?}");
    }
}
