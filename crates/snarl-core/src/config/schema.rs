//! The experiment's top level: [`Config`], whose sections are defined by the modules that
//! own them (`topology::TopologySection`, `switch::SwitchConfig`, ...; all re-exported
//! from `config`), and `[simulation]`. Defaults are those of a 100 Gb/s InfiniBand-like
//! fabric.

use super::{
    CongestionControlConfig, FlowControlConfig, IsolationConfig, LinksConfig, MarkingConfig, NicConfig, ObserveConfig,
    RoutingConfig, SwitchConfig, TopologySection, TrafficConfig,
};
use crate::traffic::WorkloadConfig;
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One experiment: the fabric, its workload and what to measure (`docs/config.md`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seed of every random choice in the run, any u64 (above 2^63 - 1, TOML needs it as
    /// a string of digits: `seed.rs`).
    #[serde(default = "default_seed", with = "super::seed")]
    #[schemars(schema_with = "super::seed::json_schema")]
    pub seed: u64,
    /// Free-form description of the experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub simulation: SimulationConfig,
    pub topology: TopologySection,
    #[serde(default)]
    pub links: LinksConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub flow_control: FlowControlConfig,
    #[serde(default)]
    pub routing: RoutingConfig,
    #[serde(default)]
    pub nic: NicConfig,
    /// The workload (absent: open-loop traffic described by `[traffic]`).
    #[serde(default, skip_serializing_if = "WorkloadConfig::is_default")]
    pub workload: WorkloadConfig,
    pub traffic: TrafficConfig,
    /// Congestion marking at switch egress queues (absent: no marking, unless the
    /// congestion control implies its own). `[ecn]` is read as `[marking]` of type `red`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marking: Option<MarkingConfig>,
    #[serde(default, skip_serializing_if = "CongestionControlConfig::is_none")]
    pub congestion_control: CongestionControlConfig,
    /// Congestion isolation at the switches (CI, ICI): congested flows in queues of their
    /// own (shared-buffer switches with PFC only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationConfig>,
    #[serde(default, skip_serializing_if = "ObserveConfig::is_empty")]
    pub observe: ObserveConfig,
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnit {
    /// Report times in nanoseconds.
    #[default]
    Ns,
    /// Report times in abstract cycles (1 cycle = 1 ns internally).
    Cycles,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Total simulated time.
    pub duration: Time,
    /// Statistics are collected from this time on.
    #[serde(default)]
    pub warmup: Time,
    /// Width of the throughput time-series windows (default: duration / 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Time>,
    /// Unit of reported times.
    #[serde(default)]
    pub time_unit: TimeUnit,
    /// Stop with a deadlock error if packets are in flight but none moved for this long,
    /// or a switch queue's head did not move for this long (default: scaled to the
    /// fabric's slowest hop, see `sim::WATCHDOG_HOPS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watchdog: Option<Time>,
    /// Most memory the run may need by its estimate (default: what the machine has
    /// available); a larger fabric is refused before it is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<Bytes>,
    /// End the run once a traffic group has completed this many messages (the duration
    /// stays the upper bound). Left out of the resolved config unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_after: Option<StopAfterConfig>,
}

/// `simulation.stop_after`: the run ends at the instant the `messages`-th message sent by
/// a host of `group` completes (its last packet reaches its destination).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StopAfterConfig {
    /// A group of `[[traffic.groups]]`.
    pub group: String,
    /// Completed messages of the group (at least 1).
    pub messages: u64,
}
