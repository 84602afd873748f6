//! Priority flow control as the summary reports it: the frames counted as they are sent
//! and received, and at the end of a run the `pfc` section, from those counts and the
//! pause states of the switches and the NICs.

use super::{FabricView, Finish};
use crate::config::{pfc_headroom, Config, FlowControlConfig};
use crate::flow_control::PauseState;
use crate::report::text::{int, num};
use crate::report::Section;
use serde::{Deserialize, Serialize};

/// Priority flow control frames, and the headroom each priority keeps (0 in runs without
/// PFC, which report no section).
#[derive(Clone, Copy, Default, Debug)]
pub struct PfcCounters {
    pub pause_frames_sent: u64,
    pub resume_frames_sent: u64,
    pub pause_frames_received: u64,
    pub headroom: u64,
}

impl PfcCounters {
    pub fn for_run(config: &Config) -> PfcCounters {
        let headroom = match config.flow_control {
            FlowControlConfig::Pfc { .. } => pfc_headroom(&config.links, config.nic.frame()),
            _ => 0,
        };
        PfcCounters { headroom, ..PfcCounters::default() }
    }

    /// The `pfc` section of a run with PFC, over the interval from `measure_from` to the
    /// end; `finish.pause_states` are the switches' outputs' and the NICs'.
    pub fn section(&self, finish: &Finish, measure_from: u64) -> Option<Section> {
        (self.headroom > 0).then(|| self.summary(finish, measure_from).section(finish.time_unit))
    }

    fn summary(&self, finish: &Finish, measure_from: u64) -> PfcSummary {
        let (end, ps) = (finish.end, finish.ps_per_unit);
        let interval = end.saturating_sub(measure_from).max(1) as f64;
        let mut links: Vec<PausedLink> = Vec::new();
        let mut total = 0u64;
        let mut collect = |state: &PauseState, name: &dyn Fn(usize) -> String| {
            for link in 0..state.links() {
                for vc in 0..finish.vcs {
                    let (pauses, time) = (state.pauses(link, vc), state.paused_time(link, vc, end));
                    total += time;
                    if pauses > 0 {
                        links.push(PausedLink {
                            node: name(link),
                            priority: vc as u32,
                            pauses: pauses as u64,
                            paused_time: time as f64 / ps,
                            paused_fraction: time as f64 / interval,
                        });
                    }
                }
            }
        };
        let fabric: &dyn FabricView = finish.fabric;
        let names: [&dyn Fn(usize) -> String; 2] = [&|gp| fabric.port_name(gp), &|h| format!("host {h}")];
        for (state, name) in finish.pause_states.iter().zip(names) {
            collect(state, name);
        }
        links.sort_by(|a, b| b.paused_time.total_cmp(&a.paused_time).then_with(|| a.node.cmp(&b.node)));
        PfcSummary {
            pause_frames_sent: self.pause_frames_sent,
            resume_frames_sent: self.resume_frames_sent,
            pause_frames_received: self.pause_frames_received,
            paused_time: total as f64 / ps,
            paused_links: links.len() as u64,
            max_paused_fraction: links.iter().map(|l| l.paused_fraction).fold(0.0, f64::max),
            max_ingress_bytes: fabric.max_ingress(),
            ingress_share_bytes: fabric.ingress_share(),
            headroom_bytes: self.headroom,
            most_paused: links.into_iter().take(10).collect(),
        }
    }
}

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
