//! Physical quantities: time in integer picoseconds, sizes in bytes, rates in bits/s.
//!
//! Configs may also speak the abstract units of cycle-level simulators: one *phit* is one
//! byte and one *cycle* is one nanosecond, so a link carrying one phit per cycle runs at
//! 8 Gb/s. Results normalised to link capacity are identical in both vocabularies.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Picoseconds per cycle in the abstract vocabulary.
pub const PS_PER_CYCLE: u64 = 1_000;

/// Simulated time in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A size in bytes (one phit is one byte).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub fn as_ns(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    pub fn as_secs(self) -> f64 {
        self.0 as f64 * 1e-12
    }
}

impl Rate {
    /// Time to serialise `bytes` onto a link of this rate, rounded up to a whole picosecond.
    #[inline]
    pub fn serialize(self, bytes: u64) -> u64 {
        let bits_ps = bytes as u128 * 8 * 1_000_000_000_000u128;
        bits_ps.div_ceil(self.0 as u128) as u64
    }
    /// Bytes this rate carries in `ps` picoseconds, rounded up.
    pub fn bytes_in(self, ps: u64) -> u64 {
        (ps as u128 * self.0 as u128).div_ceil(8 * 1_000_000_000_000u128) as u64
    }
    pub fn as_gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Bytes per second.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
}

/// Serialisation time at a fixed rate, precomputed for the per-packet path: picoseconds
/// per byte in 32.32 fixed point, so no division per packet. It fits 64 bits at any rate
/// above 16 bit/s, so a packet takes one widening multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SerialTime {
    ps_per_byte_q32: u64,
}

impl SerialTime {
    pub fn new(rate: Rate) -> SerialTime {
        let q32 = (8_000_000_000_000u128 << 32).div_ceil(rate.0.max(1) as u128);
        SerialTime { ps_per_byte_q32: u64::try_from(q32).unwrap_or(u64::MAX) }
    }

    /// Time to serialise `bytes`, rounded up (within 1 ps of [`Rate::serialize`]).
    #[inline]
    pub fn time(self, bytes: u64) -> u64 {
        ((bytes as u128 * self.ps_per_byte_q32 as u128 + ((1u128 << 32) - 1)) >> 32) as u64
    }
}

/// Serialisation on a link that adds `framing` bytes of link time to every frame
/// (Ethernet's preamble and gap): a [`SerialTime`] whose rounding constant carries the
/// framing's time, so that the framing costs nothing per packet. With no framing it is
/// the `SerialTime` of its rate, to the picosecond. Exact while framing × picoseconds
/// per byte stays below 2^32 (4 KiB of framing on a 10 Mb/s link); beyond, it saturates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramedTime {
    ps_per_byte_q32: u64,
    /// The framing's time in 32.32 fixed point, plus the rounding up.
    round: u64,
}

impl FramedTime {
    pub fn new(rate: Rate, framing: u64) -> FramedTime {
        let ps_per_byte_q32 = SerialTime::new(rate).ps_per_byte_q32;
        let round = framing as u128 * ps_per_byte_q32 as u128 + ((1u128 << 32) - 1);
        FramedTime { ps_per_byte_q32, round: u64::try_from(round).unwrap_or(u64::MAX) }
    }

    /// Time to serialise a frame of `bytes` and its framing, rounded up.
    #[inline]
    pub fn time(self, bytes: u64) -> u64 {
        ((bytes as u128 * self.ps_per_byte_q32 as u128 + self.round as u128) >> 32) as u64
    }
}

/// Splits "25 ns" into (25.0, "ns").
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == 'E' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    // "1e" followed by a unit letter: back off a trailing exponent marker.
    let (mut num, mut unit) = text.split_at(end);
    while num.ends_with(['e', 'E']) {
        let cut = num.len() - 1;
        unit = &text[cut..];
        num = &text[..cut];
    }
    let value: f64 = num.replace('_', "").parse().ok()?;
    Some((value, unit.trim()))
}

fn whole(value: f64, scale: f64, what: &str, text: &str) -> Result<u64, String> {
    let v = value * scale;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{what} must be a non-negative finite quantity, found \"{text}\""));
    }
    if v > u64::MAX as f64 / 2.0 {
        return Err(format!("{what} \"{text}\" is too large"));
    }
    Ok(v.round() as u64)
}

impl std::str::FromStr for Time {
    type Err = String;
    fn from_str(text: &str) -> Result<Time, String> {
        let (value, unit) = split_number(text)
            .ok_or_else(|| format!("expected a duration such as \"25ns\" or \"100cycles\", found \"{text}\""))?;
        let scale = match unit {
            "ps" => 1.0,
            "ns" => 1e3,
            "us" | "µs" => 1e6,
            "ms" => 1e9,
            "s" => 1e12,
            "cycle" | "cycles" => PS_PER_CYCLE as f64,
            _ => {
                return Err(format!(
                    "unknown time unit \"{unit}\" in \"{text}\"; expected one of ps, ns, us, ms, s, cycles"
                ))
            }
        };
        whole(value, scale, "a duration", text).map(Time)
    }
}

impl std::str::FromStr for Bytes {
    type Err = String;
    fn from_str(text: &str) -> Result<Bytes, String> {
        let (value, unit) = split_number(text)
            .ok_or_else(|| format!("expected a size such as \"4KiB\" or \"256phits\", found \"{text}\""))?;
        let scale = match unit {
            "" | "B" | "byte" | "bytes" | "phit" | "phits" => 1.0,
            "KB" | "kB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "TB" => 1e12,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => {
                return Err(format!(
                "unknown size unit \"{unit}\" in \"{text}\"; expected one of B, KB, KiB, MB, MiB, GB, GiB, TB, TiB, \
                     phits"
            ))
            }
        };
        whole(value, scale, "a size", text).map(Bytes)
    }
}

impl std::str::FromStr for Rate {
    type Err = String;
    fn from_str(text: &str) -> Result<Rate, String> {
        let (value, unit) = split_number(text)
            .ok_or_else(|| format!("expected a rate such as \"100Gbps\" or \"1phit/cycle\", found \"{text}\""))?;
        let scale = match unit {
            "bps" => 1.0,
            "Kbps" | "kbps" => 1e3,
            "Mbps" => 1e6,
            "Gbps" | "Gb/s" => 1e9,
            "Tbps" | "Tb/s" => 1e12,
            "GBps" | "GB/s" => 8e9,
            "phit/cycle" | "phits/cycle" => 8e9,
            _ => {
                return Err(format!(
                "unknown rate unit \"{unit}\" in \"{text}\"; expected one of bps, Mbps, Gbps, Tbps, GB/s, phits/cycle"
            ))
            }
        };
        let bits = whole(value, scale, "a rate", text)?;
        if bits == 0 {
            return Err(format!("a rate must be positive, found \"{text}\""));
        }
        Ok(Rate(bits))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps.is_multiple_of(1_000_000_000) && ps != 0 {
            write!(f, "{}ms", ps / 1_000_000_000)
        } else if ps.is_multiple_of(1_000_000) && ps != 0 {
            write!(f, "{}us", ps / 1_000_000)
        } else if ps.is_multiple_of(1_000) {
            write!(f, "{}ns", ps / 1_000)
        } else {
            write!(f, "{ps}ps")
        }
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b.is_multiple_of(1024 * 1024) {
            write!(f, "{}MiB", b / (1024 * 1024))
        } else if b != 0 && b.is_multiple_of(1024) {
            write!(f, "{}KiB", b / 1024)
        } else {
            write!(f, "{b}B")
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbps", r / 1_000_000_000)
        } else if r.is_multiple_of(1_000_000) {
            write!(f, "{}Mbps", r / 1_000_000)
        } else {
            write!(f, "{r}bps")
        }
    }
}

/// Serde glue: each quantity is written as a string with its unit; sizes also accept a
/// bare integer number of bytes.
macro_rules! string_quantity {
    ($ty:ty, $expect:literal, $allow_int:expr) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        v.parse().map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if $allow_int && v >= 0 {
                            self.visit_str(&v.to_string())
                        } else {
                            Err(E::custom(format!(concat!("expected ", $expect, ", found the bare number {}"), v)))
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(v.min(i64::MAX as u64) as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(concat!("expected ", $expect, ", found the bare number {}"), v)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_quantity!(Time, "a duration with its unit, such as \"25ns\" or \"100cycles\"", false);
string_quantity!(Bytes, "a size such as \"4KiB\", \"256phits\" or a number of bytes", true);
string_quantity!(Rate, "a rate with its unit, such as \"100Gbps\" or \"1phit/cycle\"", false);

/// JSON Schema of the quantities, for editors that complete and check scenario files
/// (`config::json_schema`): the strings [`FromStr`](std::str::FromStr) reads, as
/// patterns over the units it knows.
mod json_schema {
    use super::{Bytes, Rate, Time};
    use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
    use std::borrow::Cow;

    /// The units each quantity accepts (`FromStr`'s `match`; a test parses each). A size
    /// may also be a string of bytes without a unit.
    pub(super) const TIME_UNITS: [&str; 8] = ["ps", "ns", "us", "µs", "ms", "s", "cycle", "cycles"];
    pub(super) const SIZE_UNITS: [&str; 14] =
        ["B", "byte", "bytes", "phit", "phits", "KB", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"];
    pub(super) const RATE_UNITS: [&str; 12] =
        ["bps", "Kbps", "kbps", "Mbps", "Gbps", "Gb/s", "Tbps", "Tb/s", "GBps", "GB/s", "phit/cycle", "phits/cycle"];

    /// A number as `split_number` reads it (digits, `_` separators, a decimal point, an
    /// exponent), then optional spaces and one of `units` (or none, if `bare`).
    pub(super) fn pattern(units: &[&str], bare: bool) -> String {
        let optional = if bare { "?" } else { "" };
        format!(
            r"^\s*\+?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)([eE][+-]?[0-9]+)?\s*({}){optional}\s*$",
            units.join("|")
        )
    }

    impl JsonSchema for Time {
        fn schema_name() -> Cow<'static, str> {
            "Duration".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "description": "A duration with its unit: ps, ns, us, ms, s, or cycles (1 cycle = 1 ns).",
                "type": "string",
                "pattern": pattern(&TIME_UNITS, false),
                "examples": ["25ns", "1.5us", "20000cycles"],
            })
        }
    }

    impl JsonSchema for Bytes {
        fn schema_name() -> Cow<'static, str> {
            "Size".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "description": "A size: a number of bytes, or a string with its unit (B, KB, KiB, MB, MiB, GB, GiB, TB, TiB, or phits: 1 phit = 1 byte).",
                "anyOf": [
                    { "type": "integer", "minimum": 0 },
                    { "type": "string", "pattern": pattern(&SIZE_UNITS, true) },
                ],
                "examples": ["4KiB", "256phits", 4096],
            })
        }
    }

    impl JsonSchema for Rate {
        fn schema_name() -> Cow<'static, str> {
            "Rate".into()
        }
        fn json_schema(_: &mut SchemaGenerator) -> Schema {
            json_schema!({
                "description": "A rate with its unit: bps, Kbps, Mbps, Gbps (Gb/s), Tbps (Tb/s), GB/s, or phits/cycle (1 phit/cycle = 8 Gb/s).",
                "type": "string",
                "pattern": pattern(&RATE_UNITS, false),
                "examples": ["100Gbps", "400Gbps", "1phit/cycle"],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("25ns".parse::<Time>().unwrap(), Time(25_000));
        assert_eq!("1.5us".parse::<Time>().unwrap(), Time(1_500_000));
        assert_eq!("20000cycles".parse::<Time>().unwrap(), Time(20_000_000));
        assert_eq!("4KiB".parse::<Bytes>().unwrap(), Bytes(4096));
        assert_eq!("256phits".parse::<Bytes>().unwrap(), Bytes(256));
        assert_eq!("2TiB".parse::<Bytes>().unwrap(), Bytes(2 << 40));
        assert_eq!("100Gbps".parse::<Rate>().unwrap(), Rate(100_000_000_000));
        assert_eq!("1phit/cycle".parse::<Rate>().unwrap(), Rate(8_000_000_000));
        assert_eq!("1e3ns".parse::<Time>().unwrap(), Time(1_000_000));
    }

    #[test]
    fn the_schemas_units_are_the_parsers() {
        use json_schema::{RATE_UNITS, SIZE_UNITS, TIME_UNITS};
        for unit in TIME_UNITS {
            assert!(format!("2{unit}").parse::<Time>().is_ok(), "{unit}");
        }
        for unit in SIZE_UNITS.iter().chain(&[""]) {
            assert!(format!("2 {unit}").parse::<Bytes>().is_ok(), "{unit}");
        }
        for unit in RATE_UNITS {
            assert!(format!("2{unit}").parse::<Rate>().is_ok(), "{unit}");
        }
    }

    #[test]
    fn refuses_bad_units() {
        assert!("25 parsecs".parse::<Time>().unwrap_err().contains("unknown time unit"));
        assert!("-3ns".parse::<Time>().is_err());
        assert!("0Gbps".parse::<Rate>().is_err());
        assert!("fast".parse::<Rate>().is_err());
    }

    #[test]
    fn serialisation_time() {
        // 4 KiB at 100 Gb/s = 327.68 ns, rounded up to whole picoseconds.
        assert_eq!(Rate(100_000_000_000).serialize(4096), 327_680);
        // 8 phits at one phit per cycle = 8 cycles.
        assert_eq!("1phit/cycle".parse::<Rate>().unwrap().serialize(8), 8 * PS_PER_CYCLE);
    }

    #[test]
    fn fixed_point_serialiser_matches_division() {
        for rate in ["100Gbps", "20Gbps", "1phit/cycle", "56Gbps", "13.5Gbps", "400Gbps", "1Mbps"] {
            let r: Rate = rate.parse().unwrap();
            let s = SerialTime::new(r);
            for bytes in [1, 8, 64, 1500, 2048, 4096, 65536, 1 << 30] {
                let (exact, fast) = (r.serialize(bytes), s.time(bytes));
                assert!(fast >= exact && fast - exact <= 1, "{rate} {bytes}: {fast} vs {exact}");
            }
        }
    }

    #[test]
    fn framing_folds_into_the_rounding() {
        for rate in ["100Gbps", "400Gbps", "800Gbps", "1phit/cycle", "13.6Gbps"] {
            let r: Rate = rate.parse().unwrap();
            let (plain, bare) = (SerialTime::new(r), FramedTime::new(r, 0));
            for bytes in [1, 64, 4096, 4158, 1 << 30] {
                assert_eq!(bare.time(bytes), plain.time(bytes), "{rate} {bytes}");
                assert_eq!(FramedTime::new(r, 20).time(bytes), plain.time(bytes + 20), "{rate} {bytes}");
            }
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["25ns", "3us", "2ms", "7ps"] {
            let t: Time = text.parse().unwrap();
            assert_eq!(t.to_string().parse::<Time>().unwrap(), t);
        }
        for text in ["4KiB", "1MiB", "100B"] {
            let b: Bytes = text.parse().unwrap();
            assert_eq!(b.to_string().parse::<Bytes>().unwrap(), b);
        }
    }
}
