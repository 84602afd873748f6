//! `[observe]`: optional observers beyond the standard counters and series.

use crate::config::{Config, CongestionControlConfig, FlowControlConfig, Problems};
use crate::memory::{mul, sum};
use crate::topology::FabricSize;
use crate::units::{Bytes, Time};
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
    /// Congestion trees, from periodic samples of the fabric (`[observe.trees]`; absent:
    /// not tracked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<TreesConfig>,
}

impl ObserveConfig {
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty() && self.trees.is_none()
    }

    /// The checks of `[observe]`.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        if let Some(trees) = &self.trees {
            trees.validate(config, p);
        }
    }
}

/// `[observe.trees]`: track congestion trees (`observe/trees.rs`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TreesConfig {
    /// Time between two samples of the fabric (default: `simulation.window`, one sample
    /// in the middle of each window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Time>,
    /// What must wait for an egress (port, VC), in its queue and in the input queues whose
    /// heads requested it, for it to be congested (default: half a port-VC buffer,
    /// `default_threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Bytes>,
}

impl TreesConfig {
    fn validate(&self, config: &Config, p: &mut Problems) {
        if let Some(period) = self.period {
            p.positive("observe.trees.period", period.0);
            let duration = config.simulation.duration;
            if period > duration {
                p.add("observe.trees.period", format!("must not exceed the duration ({duration}), found {period}"));
            }
        }
        if let Some(threshold) = self.threshold {
            p.positive("observe.trees.threshold", threshold.0);
        }
    }

    /// The threshold in force: the configured one, or `default_threshold`.
    pub fn threshold(&self, config: &Config) -> u64 {
        self.threshold.map_or_else(|| default_threshold(config), |t| t.0)
    }
}

/// Half the buffer of a port and VC (`Config::port_vl_buffer`: the per-VC input buffer of
/// an IOQ switch, the egress cap of a shared-buffer switch), the buffer InfiniBand's FECN
/// threshold is a fraction of. Below it what waits for a busy egress comes and goes (at
/// load 0.5 a port holds well under a packet on average); an egress with half a buffer
/// waiting for it has received faster than it sends for a while, and it is still short of
/// the full buffer at which it blocks its upstream: the threshold sees the root before
/// its tree.
pub fn default_threshold(config: &Config) -> u64 {
    (config.port_vl_buffer() / 2).max(1)
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
    /// Congestion trees (`[observe.trees]`): a sample's scratch per queue id (inputs,
    /// outputs and, with VoQs, one per input and output port of a switch), the
    /// `topology` table (a row per port) and the windows' trees, reckoned as an eighth of
    /// the ports in a tree in every window (about 64 bytes a port's row). Nothing
    /// without.
    pub(crate) fn trees_memory(&self, config: &Config, size: &FabricSize, windows: u64) -> u64 {
        if self.trees.is_none() {
            return 0;
        }
        let queues = mul(&[size.ports(), config.switch.vcs() as u64]);
        let voq = config.switch.input_queuing() == crate::config::InputQueuing::Voq;
        let ids = mul(&[queues, if voq { 2 + size.max_radix() } else { 2 }]);
        sum(&[
            mul(&[ids, super::TreeTracker::BYTES_PER_QUEUE]),
            mul(&[size.ports(), 96]),
            mul(&[windows, size.ports() / 8, 64]),
        ])
    }

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
