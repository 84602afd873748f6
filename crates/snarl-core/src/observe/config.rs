//! `[observe]`: optional observers beyond the standard counters and series.

use serde::{Deserialize, Serialize};

/// Optional observers beyond the standard counters and series.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ObserveConfig {
    /// Egress queues whose occupancy is recorded over time (time-weighted distribution
    /// in the summary, windowed mean and maximum in the `queues` table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueProbeConfig>,
}

impl ObserveConfig {
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }
}

/// One egress queue: output `port` of `switch`, priority (VC) `priority`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QueueProbeConfig {
    pub switch: u32,
    pub port: u32,
    #[serde(default)]
    pub priority: u32,
}
