//! Receive rates of hotspots and of the other hosts, in runs with shared hotspots
//! (`[traffic.hotspots]`). A host counts as a hotspot while it is one: its data bytes
//! received meanwhile, and the time, go to the hotspots; the rest to the non-hotspots.
//! The per-delivery cost is one flag lookup (`Stats::is_hotspot`); the workload reports
//! every change as `TraceEvent::Hotspot`.

use crate::report::text::num;
use crate::report::{Column, ColumnData, Section, Summary, Table};
use serde::{Deserialize, Serialize};

/// Which hosts were hotspots when, within the measurement interval.
pub struct HotspotTime {
    measure_from: u64,
    /// Per host: since when it is a hotspot (meaningful while it is one).
    since: Vec<u64>,
    /// Host-time spent as a hotspot inside the measurement interval, ps.
    hot_time: u128,
    /// Every closed interval of a host as a hotspot: (host, from, to), ps.
    intervals: Vec<(u32, u64, u64)>,
    /// What non-hotspots could receive if there were no hotspots, per host, Gb/s.
    tmax_gbps: f64,
}

impl HotspotTime {
    pub fn new(hosts: usize, measure_from: u64, tmax_gbps: f64) -> crate::Result<HotspotTime> {
        Ok(HotspotTime {
            measure_from,
            since: crate::memory::fallible::zeroed(hosts, "the hotspot statistics")?,
            hot_time: 0,
            intervals: Vec::new(),
            tmax_gbps,
        })
    }

    /// `host` became a hotspot at `now`.
    pub fn on(&mut self, now: u64, host: u32) {
        self.since[host as usize] = now;
    }

    /// `host` stopped being a hotspot at `now`.
    pub fn off(&mut self, now: u64, host: u32) {
        let since = self.since[host as usize];
        self.hot_time += now.saturating_sub(since.max(self.measure_from)) as u128;
        self.intervals.push((host, since, now));
    }

    /// Closes the intervals of the hosts that are hotspots at the `end` of the run.
    fn close(&mut self, end: u64, is_hotspot: &[bool]) {
        for host in (0..is_hotspot.len()).filter(|&h| is_hotspot[h]) {
            self.off(end, host as u32);
        }
        self.intervals.sort_unstable_by_key(|&(host, from, _)| (from, host));
    }

    /// Adds `receive_rate`, `total_throughput` and `tmax` to the summary: `received` are
    /// the data bytes received inside the measurement interval by non-hotspots (0) and
    /// hotspots (1), which ends at `end`.
    pub fn summarise(&mut self, summary: &mut Summary, received: [u64; 2], end: u64, is_hotspot: &[bool]) {
        self.close(end, is_hotspot);
        let hosts = is_hotspot.len() as u128;
        let interval = end.saturating_sub(self.measure_from) as u128;
        let all_time = hosts * interval;
        // Bytes over host-time (ps), in Gb/s: bits per ps are Tb/s.
        let rate = |bytes: u64, time: u128| if time > 0 { bytes as f64 * 8.0 * 1e3 / time as f64 } else { 0.0 };
        let all = rate(received[0] + received[1], all_time);
        let rates = ReceiveRate {
            hotspots: rate(received[1], self.hot_time),
            non_hotspots: rate(received[0], all_time.saturating_sub(self.hot_time)),
            all,
        };
        let total = all * hosts as f64;
        let note = format!(
            "receive rate per host (Gb/s): hotspots {}, non-hotspots {}, all {} · total throughput {} Gb/s · tmax {} Gb/s",
            num(rates.hotspots, 3),
            num(rates.non_hotspots, 3),
            num(rates.all, 3),
            num(total, 1),
            num(self.tmax_gbps, 3),
        );
        let sections = &mut summary.sections;
        sections.set(Section::new(RECEIVE_RATE, &rates).at(POSITION).note(note));
        sections.set(Section::new(TOTAL_THROUGHPUT, &total).at(POSITION + 1));
        sections.set(Section::new(TMAX, &self.tmax_gbps).at(POSITION + 2));
    }

    /// The `hotspots` table: a row per host and interval it was a hotspot (`host`,
    /// `start`, `end`, in the reported time unit), by start.
    pub fn table(&self, ps_per_unit: f64) -> Table {
        let time = |t: u64| t as f64 / ps_per_unit;
        let col = |name: &str, data| Column { name: name.into(), data };
        Table {
            columns: vec![
                col("host", ColumnData::U64(self.intervals.iter().map(|i| i.0 as u64).collect())),
                col("start", ColumnData::F64(self.intervals.iter().map(|i| time(i.1)).collect())),
                col("end", ColumnData::F64(self.intervals.iter().map(|i| time(i.2)).collect())),
            ],
        }
    }
}

/// The summary's sections of a run with shared hotspots: the mean receive rates, the
/// total throughput (Gb/s) and `tmax` (Gb/s), at `POSITION` and the two after it.
pub const RECEIVE_RATE: &str = "receive_rate";
pub const TOTAL_THROUGHPUT: &str = "total_throughput";
pub const TMAX: &str = "tmax";
pub const POSITION: u32 = 300;

/// Mean receive rate per host over the measurement interval, in Gb/s: data bytes a kind
/// of host received over the host-time spent as that kind (a host counts as a hotspot
/// while it is one).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ReceiveRate {
    pub hotspots: f64,
    pub non_hotspots: f64,
    pub all: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_time_counts_inside_the_measurement_interval() {
        // 4 hosts, measured from 100 to 1100 ps; host 0 is a hotspot from 0 to 600, then
        // host 1 to the end: 1000 ps of hotspot time.
        let mut t = HotspotTime::new(4, 100, 2.5).unwrap();
        t.on(0, 0);
        t.off(600, 0);
        t.on(600, 1);
        let mut summary = Summary::default();
        // 1000 bytes to the hotspots (8 Tb/s over 1000 ps... 8 bits/ps), 600 to the others.
        t.summarise(&mut summary, [600, 1000], 1100, &[false, true, false, false]);
        let r: ReceiveRate = summary.section(RECEIVE_RATE).unwrap();
        assert!((r.hotspots - 8000.0).abs() < 1e-9, "{r:?}");
        assert!((r.non_hotspots - 600.0 * 8e3 / 3000.0).abs() < 1e-9, "{r:?}");
        assert!((r.all - 1600.0 * 8e3 / 4000.0).abs() < 1e-9, "{r:?}");
        assert!((summary.section::<f64>(TOTAL_THROUGHPUT).unwrap() - 4.0 * r.all).abs() < 1e-9);
        assert_eq!(summary.section::<f64>(TMAX), Some(2.5));
        let table = t.table(1000.0);
        assert_eq!(table.column("host"), Some(&ColumnData::U64(vec![0, 1])));
        assert_eq!(table.column("end"), Some(&ColumnData::F64(vec![0.6, 1.1])));
    }
}
