//! `[flow_control]`: credits, PFC or none, the PFC thresholds, and the checks of PFC's
//! thresholds against the switch's ingress share.

use crate::config::{Config, LinkConfig, LinksConfig, Problems};
use crate::units::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Variants without parameters are written `Name {}`: serde refuses unknown keys only in
// struct variants, and a stray key must never pass silently.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowControlConfig {
    /// Credit-based lossless link-level flow control (InfiniBand style).
    Credit {},
    /// Priority flow control (IEEE 802.1Qbb): an ingress queue above `xoff` pauses its
    /// priority on the upstream link, and resumes it once back at `xon`. Thresholds are a
    /// number of MTU-sized packets or a size; one value for every priority or a list with
    /// one per priority.
    Pfc { xoff: Thresholds, xon: Thresholds },
    /// No link-level flow control: a packet that finds its ingress share (and the shared
    /// pool) full is dropped, and counted.
    None {},
}

impl Default for FlowControlConfig {
    fn default() -> Self {
        FlowControlConfig::Credit {}
    }
}

/// A buffer threshold: a bare integer is a number of MTU-sized packets, a string a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    Packets(u64),
    Size(Bytes),
}

impl Threshold {
    pub fn bytes(self, mtu: u64) -> u64 {
        match self {
            Threshold::Packets(n) => n.saturating_mul(mtu),
            Threshold::Size(b) => b.0,
        }
    }
}

/// One threshold for every priority, or one per priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thresholds(pub Vec<Threshold>);

impl Thresholds {
    /// Threshold of `priority` in bytes (a single value applies to every priority).
    pub fn bytes(&self, priority: usize, mtu: u64) -> u64 {
        self.0[priority.min(self.0.len() - 1)].bytes(mtu)
    }
}

mod threshold_serde {
    use super::{Threshold, Thresholds};
    use crate::units::Bytes;
    use serde::de::{self, Deserializer, SeqAccess, Visitor};
    use serde::ser::{SerializeSeq, Serializer};
    use serde::{Deserialize, Serialize};
    use std::fmt;

    const EXPECTED: &str =
        "a number of packets (e.g. 50), a size (e.g. \"200KiB\") or a list of them, one per priority";

    fn packets<E: de::Error>(n: i64) -> Result<Threshold, E> {
        u64::try_from(n).map(Threshold::Packets).map_err(|_| E::custom(format!("expected {EXPECTED}, found {n}")))
    }

    fn text<E: de::Error>(s: &str) -> Result<Threshold, E> {
        let t = s.trim();
        match t.strip_suffix("packets").or_else(|| t.strip_suffix("packet")) {
            Some(n) => n
                .trim()
                .parse()
                .map(Threshold::Packets)
                .map_err(|_| E::custom(format!("expected {EXPECTED}, found \"{s}\""))),
            None => t.parse::<Bytes>().map(Threshold::Size).map_err(E::custom),
        }
    }

    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Thresholds;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Thresholds, E> {
            Ok(Thresholds(vec![packets(v)?]))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Thresholds, E> {
            self.visit_i64(v.min(i64::MAX as u64) as i64)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Thresholds, E> {
            Ok(Thresholds(vec![text(v)?]))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Thresholds, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element::<Item>()? {
                out.push(item.0);
            }
            if out.is_empty() {
                return Err(de::Error::custom(format!("expected {EXPECTED}, found an empty list")));
            }
            Ok(Thresholds(out))
        }
    }

    struct Item(Threshold);
    impl<'de> Deserialize<'de> for Item {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
            let t = d.deserialize_any(V)?;
            match t.0.as_slice() {
                [one] => Ok(Item(*one)),
                _ => Err(de::Error::custom(format!("expected {EXPECTED}, found a nested list"))),
            }
        }
    }

    impl<'de> Deserialize<'de> for Thresholds {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Thresholds, D::Error> {
            d.deserialize_any(V)
        }
    }

    fn write_one<S: Serializer>(t: &Threshold, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Threshold::Packets(n) => s.serialize_u64(*n),
            Threshold::Size(b) => b.serialize(s),
        }
    }

    struct One<'a>(&'a Threshold);
    impl Serialize for One<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            write_one(self.0, s)
        }
    }

    /// Editors' view of a threshold list (`config::json_schema`): what `V` reads.
    impl schemars::JsonSchema for Thresholds {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Thresholds".into()
        }
        fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
            let size = generator.subschema_for::<Bytes>();
            let one = schemars::json_schema!({
                "anyOf": [
                    { "type": "integer", "minimum": 0, "description": "A number of MTU-sized packets." },
                    { "type": "string", "pattern": "^\\s*[0-9]+\\s*packets?\\s*$", "description": "A number of packets, e.g. \"50 packets\"." },
                    size,
                ]
            });
            schemars::json_schema!({
                "description": EXPECTED,
                "anyOf": [one.clone(), { "type": "array", "items": one, "minItems": 1 }],
            })
        }
    }

    impl Serialize for Thresholds {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if let [only] = self.0.as_slice() {
                return write_one(only, s);
            }
            let mut seq = s.serialize_seq(Some(self.0.len()))?;
            for t in &self.0 {
                seq.serialize_element(&One(t))?;
            }
            seq.end()
        }
    }
}

/// Bytes that may still arrive on a priority after its ingress queue crossed XOFF: the
/// pause waits for the frame on the reverse link (one MTU) and takes 64 B and a
/// propagation delay to arrive; meanwhile the upstream finishes its frame on the wire and
/// one it has committed to (two MTUs), and the link holds a propagation delay of data.
pub fn pfc_headroom(links: &LinksConfig, mtu: u64) -> u64 {
    let in_flight = |l: &LinkConfig| (l.rate.0 as u128 * l.latency.0 as u128).div_ceil(8 * 1_000_000_000_000) as u64;
    let flight = in_flight(&links.host).max(in_flight(&links.switch));
    2 * flight + 3 * mtu + PAUSE_FRAME_BYTES
}

/// Size of a PFC pause frame on the wire.
pub const PAUSE_FRAME_BYTES: u64 = 64;

/// PFC is lossless only if, on every priority, what arrives after the pause was
/// decided (the headroom) fits above `xoff` in the port's ingress share.
pub(crate) fn validate_pfc(config: &Config, p: &mut Problems, xoff: &Thresholds, xon: &Thresholds, ingress: u64) {
    // Buffers hold frames: an MTU is its payload and the header.
    let (mtu, priorities) = (config.nic.frame(), config.switch.vcs() as usize);
    for (key, list) in [("flow_control.xoff", xoff), ("flow_control.xon", xon)] {
        if list.0.len() != 1 && list.0.len() != priorities {
            p.add(key, format!("give one threshold, or one per priority ({priorities}), found {}", list.0.len()));
        }
    }
    let headroom = pfc_headroom(&config.links, mtu);
    let mut needed = 0u64;
    for priority in 0..priorities {
        let (off, on) = (xoff.bytes(priority, mtu), xon.bytes(priority, mtu));
        if off < mtu {
            p.add("flow_control.xoff", format!("must be at least one MTU ({mtu} B), found {off} B"));
        }
        if on > off {
            p.add("flow_control.xon", format!("must not exceed xoff ({off} B), found {on} B on priority {priority}"));
        }
        needed = needed.saturating_add(off.saturating_add(headroom));
    }
    // Congestion isolation adds a class per priority, paused on its own thresholds:
    // each class needs its xoff and its headroom.
    let isolation = config.isolation.as_ref().map(|i| i.resolve(0, mtu));
    if let Some(iso) = &isolation {
        for priority in 0..priorities {
            needed = needed.saturating_add(iso.cfq_xoff.bytes(priority, mtu).saturating_add(headroom));
        }
    }
    if needed > ingress {
        let (key, classes) = match isolation {
            Some(_) => ("isolation.cfq_xoff", "priority and congested-flow class"),
            None => ("flow_control.xoff", "priority"),
        };
        p.add(
            key,
            format!(
                "PFC could drop packets: xoff plus {headroom} B of headroom per {classes} need {needed} B but a \
                 port's ingress share (port_buffer - egress_cap) is {ingress} B; lower xoff or raise \
                 switch.port_buffer"
            ),
        );
    }
}
