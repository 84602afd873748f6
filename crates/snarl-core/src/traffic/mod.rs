//! Traffic: the [`Workload`] trait the kernel drives (`workload.rs`), and the built-in
//! open-loop workload (`open_loop.rs`): node groups with their own pattern, load and cap,
//! an injection process, and phases that change them along the timeline. Everything is
//! resolved at build time into flat tables; the per-message path only indexes them.

mod flow_size;
mod open_loop;
mod pattern;
mod placement;
mod process;
mod workload;

pub use flow_size::{names as flow_size_names, FlowSizes};
pub use open_loop::{Group, GroupChange, OpenLoop, Phase};
pub use pattern::Pattern;
pub use process::Process;
pub use workload::{AnyWorkload, Env, GroupView, MessageDone, RecoveryWindow, Workload};
