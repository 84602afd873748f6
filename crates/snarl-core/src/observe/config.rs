//! `[observe]`: optional observers beyond the standard counters and series.

use crate::config::{Config, CongestionControlConfig, FlowControlConfig};
use crate::memory::{mul, sum};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Optional observers beyond the standard counters and series.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Default)]
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
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QueueProbeConfig {
    pub switch: u32,
    pub port: u32,
    #[serde(default)]
    pub priority: u32,
}

/// The observers' parts of the memory estimate (`memory::estimate`), for `groups` node
/// groups (`default` included).
impl ObserveConfig {
    /// 5 · groups + 8 latency and FCT histograms, and one per queue probe.
    pub(crate) fn histogram_memory(&self, groups: u64) -> u64 {
        sum(&[
            mul(&[5 * groups + 8, super::Latency::heap_bytes()]),
            mul(&[self.queues.len() as u64, super::QueueProbes::probe_heap_bytes()]),
        ])
    }

    /// The time series of `windows` windows: the probed queues', the counters per group,
    /// the report's table, recovery's, the fabric series (runs with PFC, drops, marking
    /// or congestion control) and IB CC's.
    pub(crate) fn series_memory(&self, config: &Config, groups: u64, windows: u64) -> u64 {
        let fabric_series = config.effective_marking().is_some()
            || !config.congestion_control.is_none()
            || !matches!(config.flow_control, FlowControlConfig::Credit {});
        sum(&[
            mul(&[windows, self.queues.len() as u64, super::QueueSeries::bytes_per_cell(config)]),
            mul(&[windows, groups, 32]),
            mul(&[windows, groups + 1, 72]),
            mul(&[windows, 8]),
            if fabric_series { mul(&[windows, 80]) } else { 0 },
            if matches!(config.congestion_control, CongestionControlConfig::Ibcc(_)) { mul(&[windows, 32]) } else { 0 },
        ])
    }
}
