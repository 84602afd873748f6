//! The experiment schema: one TOML file per experiment.
//!
//! Every table refuses unknown keys; every variant is chosen with a `type` tag. Loading
//! goes parse -> apply `--set` overrides -> deserialise (unknown keys and variants are
//! refused with their key path and the closest valid names) -> [`Config::validate`], which
//! reports every semantic problem with its key path. `Simulation::new` is the only
//! factory that turns a valid config into a runnable simulation.

//!
//! `schema.rs` holds the top level ([`Config`], `[simulation]`); every other section is
//! defined, with its checks, by the module that owns it and re-exported here, so
//! `crate::config::X` names any config type.

mod json_schema;
mod load;
mod schema;
mod seed;
mod valid;
mod validate;

/// serde's default for the counts whose default is one (`#[serde(default =
/// "crate::config::one")]`), shared by the sections that have them.
pub(crate) fn one() -> u32 {
    1
}

pub use json_schema::{json_schema, json_schema_text};
pub use load::{load_config, load_config_in, parse_override};
pub use schema::*;
pub use valid::ValidConfig;
pub(crate) use validate::Problems;

pub use crate::cc::{
    Cct, CctiScope, CctiTimer, CongestionControlConfig, DcqcnConfig, EcnMarkAt, EcnPolicy, FecnConfig, IbccConfig,
    MarkingConfig, PerPairConfig, RedConfig, VictimMask, CCTI_TIMER_UNIT_PS, MAX_CCTI, MAX_CCT_MULTIPLIER,
    MAX_CCT_SHIFT,
};
pub use crate::flow_control::{pfc_headroom, FlowControlConfig, Threshold, Thresholds, PAUSE_FRAME_BYTES};
pub use crate::isolation::{CfqOrder, CfqScheduler, Isolation, IsolationConfig, IsolationKeyKind, IsolationKnobs};
pub use crate::nic::{InjectionVc, NicConfig, NicScheduling, Receiver};
pub use crate::observe::{ObserveConfig, QueueProbeConfig, TreesConfig};
pub use crate::routing::{
    AdaptiveMode, EcmpHash, MinimalSelect, MinimalVcs, RoutingConfig, SprayMode, Telemetry, UgalInformation, UpDownVcs,
    UpSelect,
};
pub use crate::switch::{Crossbar, InputQueuing, SwitchConfig};
pub use crate::topology::{
    parse_oversubscription, Arrangement, LinkConfig, LinksConfig, OversubscriptionBy, TopologyConfig, TopologySection,
};
pub use crate::traffic::{
    GroupConfig, HotspotAssign, HotspotsConfig, MixPart, PatternConfig, PhaseConfig, Placement, ProcessKind,
    TrafficConfig, MAX_MIX_PARTS,
};
