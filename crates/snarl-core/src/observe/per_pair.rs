//! What the per-pair congestion control did: the summary's `per_pair` section, kept by
//! the always-on statistics (`Stats::per_pair`) in runs with `congestion_control.type =
//! "per_pair"`. The counts are the summary's counters (`congestion_marks`,
//! `marked_acks_delivered`, `window_cuts`, which the `fabric` table also has per window);
//! this adds the extremes of the windows, from `TraceEvent::WindowChanged`. Kept by
//! `Stats` rather than by an optional collector: its one event reaches it through the
//! match that `Stats::trace` resolves where the event is reported, so no other run pays
//! for it, where an arm of `AnyCollector` would cost every event of every run that has
//! collectors.
//!
//! The windows are every pair's over the whole run: every pair starts at the cap, so the
//! highest is the cap unless a window grew past it, and the lowest is the cap in a run
//! that never cut.

use crate::config::{Config, CongestionControlConfig};
use crate::report::text::int;
use crate::report::Section;
use serde::{Deserialize, Serialize};

/// The lowest and highest window any pair had, and their cap (bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerPairWindows {
    cap: u64,
    lowest: u64,
    highest: u64,
}

impl PerPairWindows {
    /// Runs with the per-pair control.
    pub fn for_run(config: &Config) -> Option<PerPairWindows> {
        let CongestionControlConfig::PerPair(per_pair) = &config.congestion_control else { return None };
        Some(PerPairWindows::new(per_pair.cap(config)))
    }

    /// Windows capped at `cap` bytes, where every pair starts.
    pub fn new(cap: u64) -> PerPairWindows {
        PerPairWindows { cap, lowest: cap, highest: cap }
    }

    /// A pair's window is now `to` bytes.
    #[inline]
    pub fn on_window(&mut self, to: u64) {
        self.lowest = self.lowest.min(to);
        self.highest = self.highest.max(to);
    }

    /// The section, with the run's counts: packets marked, marked ACKs delivered, cuts.
    pub fn summary(&self, congestion_marks: u64, marked_acks: u64, window_cuts: u64) -> PerPairSummary {
        PerPairSummary {
            congestion_marks,
            marked_acks,
            window_cuts,
            lowest_window: self.lowest,
            highest_window: self.highest,
            window_cap: self.cap,
        }
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

    pub fn section(&self) -> Section {
        Section::new(SECTION, self).at(POSITION).note(self.note())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_window_extremes_beside_the_counts() {
        let mut w = PerPairWindows::new(50_000);
        for to in [25_000, 12_500, 16_596] {
            w.on_window(to);
        }
        let s = w.summary(1, 1, 2);
        assert_eq!((s.congestion_marks, s.marked_acks, s.window_cuts), (1, 1, 2));
        assert_eq!((s.lowest_window, s.highest_window, s.window_cap), (12_500, 50_000, 50_000));
        assert_eq!(
            s.note(),
            "Per-pair CC: 1 congestion marks, 1 marked ACKs, 2 window cuts; windows 12,500 to 50,000 B (cap 50,000 B)"
        );
    }

    #[test]
    fn without_cuts_every_window_is_the_cap() {
        let s = PerPairWindows::new(8_192).summary(0, 0, 0);
        assert_eq!((s.lowest_window, s.highest_window, s.window_cuts), (8_192, 8_192, 0));
    }
}
