//! Traffic: the [`Workload`] trait the kernel drives (`workload.rs`), the `[workload]`
//! section that chooses one (`config.rs`), and the built-in
//! jobs running collectives (`jobs/`), and the built-in
//! open-loop workload (`open_loop.rs`): node groups with their own pattern (possibly a
//! mix of independent streams), load and cap, an injection process, phases that change
//! them along the timeline, and shared hotspots that may move (`hotspots.rs`). Everything is
//! resolved at build time into flat tables; the per-message path only indexes them.

mod config;
mod flow_size;
mod hotspots;
pub mod jobs;
mod open_loop;
mod pattern;
mod placement;
mod process;
mod workload;

pub use config::{
    GroupConfig, HotspotAssign, HotspotsConfig, MixPart, PatternConfig, PhaseConfig, Placement, ProcessKind,
    TrafficConfig, WorkloadConfig, MAX_MIX_PARTS,
};
pub use flow_size::{names as flow_size_names, FlowSizes};
pub use hotspots::HotspotSet;
pub use open_loop::{Group, GroupChange, OpenLoop, Phase};
pub use pattern::{Part, Pattern};
pub use process::Process;
pub use workload::{AnyWorkload, Env, GroupView, HotspotTraffic, MessageDone, RecoveryWindow, Workload};
