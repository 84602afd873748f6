//! What the per-pair congestion control did: the summary's `per_pair` section. Recorded
//! in runs with `congestion_control.type = "per_pair"`.
//!
//! Counts cover the whole run, as the summary's counters do (`congestion_marks`,
//! `marked_acks_delivered`, `window_cuts`, which the `fabric` table also has per
//! window). The windows are every pair's over the whole run: every pair starts at the
//! cap, so the highest is the cap unless a window grew past it, and the lowest is the
//! cap in a run that never cut.

use super::{Collector, Finish, Setup, TraceEvent};
use crate::config::CongestionControlConfig;
use crate::report::text::int;
use crate::report::{Section, Summary};
use serde::{Deserialize, Serialize};

pub struct PerPairWindows {
    summary: PerPairSummary,
}

impl PerPairWindows {
    /// Runs with the per-pair control.
    pub fn for_run(setup: &Setup) -> Option<PerPairWindows> {
        let CongestionControlConfig::PerPair(per_pair) = &setup.config.congestion_control else { return None };
        Some(PerPairWindows::new(per_pair.cap(setup.config)))
    }

    /// Windows capped at `cap` bytes, where every pair starts.
    pub fn new(cap: u64) -> PerPairWindows {
        PerPairWindows {
            summary: PerPairSummary {
                window_cap: cap,
                lowest_window: cap,
                highest_window: cap,
                ..PerPairSummary::default()
            },
        }
    }

    pub fn summary(&self) -> &PerPairSummary {
        &self.summary
    }
}

impl Collector for PerPairWindows {
    #[inline]
    fn on(&mut self, _now: u64, event: &TraceEvent) {
        let s = &mut self.summary;
        match *event {
            TraceEvent::EcnMarked { .. } => s.congestion_marks += 1,
            TraceEvent::Acknowledgement { delivered: true, marked: true, .. } => s.marked_acks += 1,
            TraceEvent::WindowChanged { from, to, .. } => {
                s.window_cuts += (to < from) as u64;
                s.lowest_window = s.lowest_window.min(to);
                s.highest_window = s.highest_window.max(to);
            }
            _ => {}
        }
    }

    fn summarise(&mut self, summary: &mut Summary, _finish: &Finish) {
        let s = &self.summary;
        summary.sections.set(Section::new(SECTION, s).at(POSITION).note(s.note()));
    }
}

/// The summary's section of the per-pair control, and its position among the sections
/// (after IB CC's, before isolation's).
pub const SECTION: &str = "per_pair";
pub const POSITION: u32 = 450;

/// What the per-pair control did (runs with `congestion_control.type = "per_pair"`),
/// over the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PerPairSummary {
    /// Data packets the switches marked (the counters' `congestion_marks`).
    pub congestion_marks: u64,
    /// Marked ACKs that reached their source (the counters' `marked_acks_delivered`).
    pub marked_acks: u64,
    /// Cuts of a pair's window (the counters' `window_cuts`).
    pub window_cuts: u64,
    /// The lowest and highest window any pair had, and the cap (bytes).
    pub lowest_window: u64,
    pub highest_window: u64,
    pub window_cap: u64,
}

impl PerPairSummary {
    /// Its line in the printout of a run.
    pub fn note(&self) -> String {
        format!(
            "Per-pair CC: {} congestion marks, {} marked ACKs, {} window cuts; windows {} to {} B (cap {} B)",
            int(self.congestion_marks),
            int(self.marked_acks),
            int(self.window_cuts),
            int(self.lowest_window),
            int(self.highest_window),
            int(self.window_cap)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_marks_marked_acks_and_cuts_and_keeps_the_window_extremes() {
        let mut c = PerPairWindows::new(50_000);
        c.on(1, &TraceEvent::EcnMarked { port: 0, queue: 0, isolated: false });
        c.on(2, &TraceEvent::Acknowledgement { group: 0, delivered: false, marked: true });
        c.on(3, &TraceEvent::Acknowledgement { group: 0, delivered: true, marked: true });
        c.on(3, &TraceEvent::Acknowledgement { group: 0, delivered: true, marked: false });
        c.on(4, &TraceEvent::WindowChanged { src: 0, dst: 1, from: 50_000, to: 25_000 });
        c.on(5, &TraceEvent::WindowChanged { src: 0, dst: 1, from: 25_000, to: 12_500 });
        c.on(6, &TraceEvent::WindowChanged { src: 0, dst: 1, from: 12_500, to: 16_596 });
        let s = c.summary();
        assert_eq!((s.congestion_marks, s.marked_acks, s.window_cuts), (1, 1, 2));
        assert_eq!((s.lowest_window, s.highest_window, s.window_cap), (12_500, 50_000, 50_000));
        assert_eq!(
            s.note(),
            "Per-pair CC: 1 congestion marks, 1 marked ACKs, 2 window cuts; windows 12,500 to 50,000 B (cap 50,000 B)"
        );
    }

    #[test]
    fn without_cuts_every_window_is_the_cap() {
        let s = PerPairWindows::new(8_192).summary().clone();
        assert_eq!((s.lowest_window, s.highest_window, s.window_cuts), (8_192, 8_192, 0));
    }
}
