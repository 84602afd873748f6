//! `[congestion_control]` of type `ibcc`: InfiniBand congestion control's parameters, the
//! CCTI timer and the congestion control table, and their checks.

use crate::config::Problems;
use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// InfiniBand congestion control at the NICs (Gran et al., section II; defaults: their
/// Table I). Every key is documented in `docs/config.md` and `cc::ibcc`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IbccConfig {
    /// CCTI added per BECN (0: IB CC is off).
    #[serde(default = "crate::config::one")]
    pub ccti_increase: u32,
    /// Highest CCTI.
    #[serde(default = "default_ccti_limit")]
    pub ccti_limit: u32,
    /// Lowest CCTI, where every flow starts.
    #[serde(default)]
    pub ccti_min: u32,
    /// Period of the timer that lowers every CCTI of a host port and SL by one.
    #[serde(default)]
    pub ccti_timer: CctiTimer,
    /// What holds a CCTI: each queue pair, or each source host and service level.
    #[serde(default)]
    pub ccti_scope: CctiScope,
    /// The congestion control table: CCTI -> inter-packet delay.
    #[serde(default)]
    pub cct: Cct,
}

fn default_ccti_limit() -> u32 {
    127
}

impl Default for IbccConfig {
    fn default() -> Self {
        IbccConfig {
            ccti_increase: 1,
            ccti_limit: default_ccti_limit(),
            ccti_min: 0,
            ccti_timer: CctiTimer::default(),
            ccti_scope: CctiScope::default(),
            cct: Cct::default(),
        }
    }
}

/// What one CCTI throttles.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CctiScope {
    /// One CCTI per queue pair (flow: source, destination, queue pair).
    #[default]
    Qp,
    /// One CCTI per source host and service level (the flow's VC): a BECN slows every
    /// flow of the host on that SL.
    Sl,
}

/// The specification's unit of `CCTI_Timer`: 1.024 µs, in picoseconds.
pub const CCTI_TIMER_UNIT_PS: u64 = 1_024_000;

/// The CCTI timer's period: written as an integer number of the specification's units
/// of 1.024 µs (150 = 153.6 µs) or as a duration (`"150us"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CctiTimer(pub Time);

impl Default for CctiTimer {
    fn default() -> Self {
        CctiTimer(Time(150 * CCTI_TIMER_UNIT_PS))
    }
}

impl schemars::JsonSchema for CctiTimer {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CctiTimer".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let duration = generator.subschema_for::<Time>();
        schemars::json_schema!({
            "description": "A number of the specification's units of 1.024 µs (150 = 153.6 µs), or a duration.",
            "anyOf": [{ "type": "integer", "minimum": 0 }, duration],
        })
    }
}

impl Serialize for CctiTimer {
    /// An integer of units when the period is a whole number of them, else a duration.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ps = self.0 .0;
        if ps.is_multiple_of(CCTI_TIMER_UNIT_PS) {
            s.serialize_u64(ps / CCTI_TIMER_UNIT_PS)
        } else {
            self.0.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for CctiTimer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CctiTimer, D::Error> {
        use serde::de::{self, Visitor};
        struct V;
        impl Visitor<'_> for V {
            type Value = CctiTimer;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of 1.024 µs units (e.g. 150) or a duration (e.g. \"150us\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CctiTimer, E> {
                let units = u64::try_from(v)
                    .map_err(|_| E::custom(format!("expected a number of 1.024 µs units or a duration, found {v}")))?;
                units
                    .checked_mul(CCTI_TIMER_UNIT_PS)
                    .filter(|ps| *ps <= u64::MAX / 2)
                    .map(|ps| CctiTimer(Time(ps)))
                    .ok_or_else(|| E::custom(format!("{units} units of 1.024 µs is too long")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CctiTimer, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CctiTimer, E> {
                v.parse::<Time>().map(CctiTimer).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// The congestion control table: entry i is (shift, multiplier), and a flow at CCTI i
/// waits (packet time >> shift) x multiplier after each packet's serialisation.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Cct {
    /// Entry i = (0, i): a flow at CCTI i sends at 1/(1 + i) of its link.
    #[default]
    Linear,
    /// Entry i = (3, round(i²/16)): a delay of about i²/128 packet times (126 at i = 127).
    Quadratic,
    /// Explicit entries `[shift, multiplier]`, at least `ccti_limit + 1` of them.
    Table(Vec<(u64, u64)>),
}

impl Cct {
    /// The names of the built-in tables.
    pub const NAMES: [&'static str; 2] = ["linear", "quadratic"];
}

impl schemars::JsonSchema for Cct {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Cct".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The congestion control table: \"linear\" (entry i = [0, i]), \"quadratic\" (entry i = [3, round(i²/16)]) or a list of [shift, multiplier] pairs, at least ccti_limit + 1 of them.",
            "anyOf": [
                { "type": "string", "enum": Cct::NAMES },
                {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "items": { "type": "integer", "minimum": 0 },
                        "minItems": 2,
                        "maxItems": 2,
                    },
                },
            ],
        })
    }
}

impl Serialize for Cct {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cct::Linear => s.serialize_str("linear"),
            Cct::Quadratic => s.serialize_str("quadratic"),
            Cct::Table(entries) => entries.iter().map(|&(shift, m)| [shift, m]).collect::<Vec<_>>().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Cct {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Cct, D::Error> {
        use serde::de::{self, SeqAccess, Visitor};
        const EXPECTED: &str = "\"linear\", \"quadratic\" or a list of [shift, multiplier] pairs";
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cct;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Cct, E> {
                match v {
                    "linear" => Ok(Cct::Linear),
                    "quadratic" => Ok(Cct::Quadratic),
                    _ => {
                        let hint = crate::error::closest(v, Cct::NAMES)
                            .map(|n| format!("; did you mean `{n}`?"))
                            .unwrap_or_default();
                        Err(E::custom(format!("unknown table `{v}`{hint} (valid: {EXPECTED})")))
                    }
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cct, A::Error> {
                let mut entries = Vec::new();
                while let Some(pair) = seq.next_element::<Vec<u64>>()? {
                    match pair.as_slice() {
                        [shift, multiplier] => entries.push((*shift, *multiplier)),
                        _ => {
                            return Err(de::Error::custom(format!(
                                "entry {} of the table: expected [shift, multiplier], found {} numbers",
                                entries.len(),
                                pair.len()
                            )))
                        }
                    }
                }
                Ok(Cct::Table(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// Highest CCTI: a linear table's multiplier (the CCTI itself) fits the specification's
/// 14-bit CCT multiplier.
pub const MAX_CCTI: u32 = 16_383;
/// Largest shift and multiplier of a CCT entry (2 and 14 bits of the specification's
/// 16-bit entries).
pub const MAX_CCT_SHIFT: u64 = 3;
pub const MAX_CCT_MULTIPLIER: u64 = 16_383;

impl IbccConfig {
    /// CCTIs within the table's range, a positive timer, an explicit table long enough
    /// and of entries that fit the specification's fields.
    pub(crate) fn validate(&self, p: &mut Problems) {
        let c = self;
        if c.ccti_limit > MAX_CCTI {
            p.add("congestion_control.ccti_limit", format!("must be at most {MAX_CCTI}, found {}", c.ccti_limit));
        }
        if c.ccti_min > c.ccti_limit {
            p.add(
                "congestion_control.ccti_min",
                format!("must not exceed congestion_control.ccti_limit ({}), found {}", c.ccti_limit, c.ccti_min),
            );
        }
        p.positive("congestion_control.ccti_timer", c.ccti_timer.0 .0);
        if let Cct::Table(entries) = &c.cct {
            let needed = c.ccti_limit as usize + 1;
            if entries.len() < needed {
                p.add(
                    "congestion_control.cct",
                    format!(
                        "needs an entry for every CCTI up to ccti_limit ({}): at least {needed} [shift, multiplier] \
                         pairs, found {}",
                        c.ccti_limit,
                        entries.len()
                    ),
                );
            }
            for (i, &(shift, multiplier)) in entries.iter().enumerate() {
                if shift > MAX_CCT_SHIFT {
                    p.add(
                        format!("congestion_control.cct.{i}"),
                        format!("shift must be 0 to {MAX_CCT_SHIFT}, found {shift}"),
                    );
                }
                if multiplier > MAX_CCT_MULTIPLIER {
                    p.add(
                        format!("congestion_control.cct.{i}"),
                        format!("multiplier must be 0 to {MAX_CCT_MULTIPLIER}, found {multiplier}"),
                    );
                }
            }
        }
    }
}
