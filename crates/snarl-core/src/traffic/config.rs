//! `[workload]`: which workload drives the hosts. Each variant names a workload of this
//! folder and is built by [`AnyWorkload::build`](super::AnyWorkload::build); a new
//! workload is one variant here, one arm there and its own file.

use serde::{Deserialize, Serialize};

/// The workload of a run (absent: open-loop traffic described by `[traffic]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadConfig {
    /// Open-loop sources: the groups, patterns, injection processes, phases and hotspots
    /// of `[traffic]`.
    OpenLoop {},
}

impl Default for WorkloadConfig {
    fn default() -> WorkloadConfig {
        WorkloadConfig::OpenLoop {}
    }
}

impl WorkloadConfig {
    /// Whether this is the default (left out of the resolved config, which then reads
    /// as it did before `[workload]` existed).
    pub fn is_default(&self) -> bool {
        *self == WorkloadConfig::default()
    }

    /// The variant's name, as `type` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            WorkloadConfig::OpenLoop {} => "open_loop",
        }
    }
}
