//! Priority flow control as the summary reports it: the `pfc` section (built by the
//! assembly at the end of a run, `sim/finish.rs`, from the pause states and the frame
//! counts).

use crate::report::text::{int, num};
use crate::report::Section;
use serde::{Deserialize, Serialize};

/// The summary's section of PFC, and its position among the sections.
pub const SECTION: &str = "pfc";
pub const POSITION: u32 = 100;

/// Priority flow control over the measurement interval (runs with `flow_control.type =
/// "pfc"`). Paused time is summed over (link, priority) pairs, in `time_unit`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PfcSummary {
    pub pause_frames_sent: u64,
    pub resume_frames_sent: u64,
    pub pause_frames_received: u64,
    pub paused_time: f64,
    /// Links (priority included) that were paused at least once.
    pub paused_links: u64,
    /// Largest fraction of the measurement interval one link priority spent paused.
    pub max_paused_fraction: f64,
    /// Highest ingress-queue occupancy of any switch port, and what a port may hold.
    pub max_ingress_bytes: u64,
    pub ingress_share_bytes: u64,
    pub headroom_bytes: u64,
    /// The most paused links, most paused first.
    pub most_paused: Vec<PausedLink>,
}

/// One paused link priority: the sender is `node` ("switch S port P" or "host H").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PausedLink {
    pub node: String,
    pub priority: u32,
    pub pauses: u64,
    pub paused_time: f64,
    pub paused_fraction: f64,
}

impl PfcSummary {
    /// The summary's section, with its line in the printout (times in `time_unit`) and
    /// the pause frames sent as its headline figure.
    pub fn section(&self, time_unit: &str) -> Section {
        let note = format!(
            "PFC: {} pause frames ({} resumes), {} link priorities paused, {} {time_unit} paused in all, at most {}% \
             of the time on one; highest ingress {} B of {} B",
            int(self.pause_frames_sent),
            int(self.resume_frames_sent),
            int(self.paused_links),
            num(self.paused_time, 0),
            num(100.0 * self.max_paused_fraction, 1),
            int(self.max_ingress_bytes),
            int(self.ingress_share_bytes),
        );
        Section::new(SECTION, self).at(POSITION).note(note).headline("pause_frames_sent", "PFC pause frames")
    }
}
