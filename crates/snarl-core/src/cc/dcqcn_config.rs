//! `[congestion_control]` of type `dcqcn`: DCQCN's parameters, and their checks.

use crate::config::{Config, Problems};
use crate::units::{Bytes, Rate, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// DCQCN parameters; every default is cited in `cc::dcqcn`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcqcnConfig {
    /// Gain of the alpha moving average (g).
    #[serde(default = "default_g")]
    pub g: f64,
    /// Least time between two CNPs of one flow at the receiver (N).
    #[serde(default = "default_cnp_interval")]
    pub cnp_interval: Time,
    /// Alpha decays when no CNP arrived for this long (K).
    #[serde(default = "default_alpha_timer")]
    pub alpha_timer: Time,
    /// Period of the rate-increase timer (T).
    #[serde(default = "default_rate_timer")]
    pub rate_timer: Time,
    /// Bytes sent between two byte-counter rate increases (B).
    #[serde(default = "default_byte_counter")]
    pub byte_counter: Bytes,
    /// Timer and byte-counter events of fast recovery after a cut (F).
    #[serde(default = "default_fast_recovery_steps")]
    pub fast_recovery_steps: u32,
    /// Additive increase of the target rate (R_AI).
    #[serde(default = "default_rate_ai")]
    pub rate_ai: Rate,
    /// Hyper increase step of the target rate (R_HAI).
    #[serde(default = "default_rate_hai")]
    pub rate_hai: Rate,
    /// No cut takes a flow below this rate.
    #[serde(default = "default_min_rate")]
    pub min_rate: Rate,
    /// Record every rate change of every flow (the report's `rates` table).
    #[serde(default)]
    pub rate_series: bool,
}

fn default_g() -> f64 {
    1.0 / 256.0
}
fn default_cnp_interval() -> Time {
    Time(50_000_000)
}
fn default_alpha_timer() -> Time {
    Time(55_000_000)
}
fn default_rate_timer() -> Time {
    Time(55_000_000)
}
fn default_byte_counter() -> Bytes {
    Bytes(10_000_000)
}
fn default_fast_recovery_steps() -> u32 {
    5
}
fn default_rate_ai() -> Rate {
    Rate(40_000_000)
}
fn default_rate_hai() -> Rate {
    Rate(400_000_000)
}
fn default_min_rate() -> Rate {
    Rate(100_000_000)
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: default_g(),
            cnp_interval: default_cnp_interval(),
            alpha_timer: default_alpha_timer(),
            rate_timer: default_rate_timer(),
            byte_counter: default_byte_counter(),
            fast_recovery_steps: default_fast_recovery_steps(),
            rate_ai: default_rate_ai(),
            rate_hai: default_rate_hai(),
            min_rate: default_min_rate(),
            rate_series: false,
        }
    }
}

impl DcqcnConfig {
    /// The gain a fraction, the timers and the byte counter positive, the least rate
    /// within the host link's.
    pub(crate) fn validate(&self, config: &Config, p: &mut Problems) {
        let d = self;
        p.fraction("congestion_control.g", d.g, false);
        p.positive("congestion_control.alpha_timer", d.alpha_timer.0);
        p.positive("congestion_control.rate_timer", d.rate_timer.0);
        p.positive("congestion_control.byte_counter", d.byte_counter.0);
        p.positive("congestion_control.min_rate", d.min_rate.0);
        let line = config.links.host.rate;
        if d.min_rate > line {
            p.add(
                "congestion_control.min_rate",
                format!("must not exceed the host link rate ({line}), found {}", d.min_rate),
            );
        }
    }
}
