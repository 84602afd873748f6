//! Seeds span the whole u64 range, but TOML integers are signed 64-bit: a seed above
//! 2^63 - 1 is written as a string of digits (`seed = "18446744073709551615"`), and the
//! resolved config writes it back the same way (smaller seeds stay integers).

use serde::{de, Deserializer, Serializer};
use std::fmt;

const EXPECTED: &str =
    "an integer in [0, 2^64); above 2^63 - 1, TOML needs it as a string, e.g. \"18446744073709551615\"";

pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
    match i64::try_from(*seed) {
        Ok(small) => s.serialize_i64(small),
        Err(_) => s.serialize_str(&seed.to_string()),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Seed;
    impl de::Visitor<'_> for Seed {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("a seed is {EXPECTED}; found {v}")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            let digits = v.trim();
            match digits.parse::<u64>() {
                Ok(seed) if digits.bytes().all(|b| b.is_ascii_digit()) => Ok(seed),
                _ => Err(E::custom(format!("a seed is {EXPECTED}; found \"{v}\""))),
            }
        }
    }
    d.deserialize_any(Seed)
}

/// The TOML value of `seed`, as the resolved config writes it.
pub fn to_toml(seed: u64) -> toml::Value {
    match i64::try_from(seed) {
        Ok(small) => toml::Value::Integer(small),
        Err(_) => toml::Value::String(seed.to_string()),
    }
}

/// The JSON Schema of `seed` (`#[schemars(schema_with)]`): an integer, or a string of
/// digits above TOML's integers.
pub fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "Seed of every random choice in the run: an integer in [0, 2^64); above 2^63 - 1, a string of digits.",
        "anyOf": [
            { "type": "integer", "minimum": 0 },
            { "type": "string", "pattern": "^\\s*[0-9]+\\s*$" },
        ],
        "default": 1,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::load_config;
    use crate::error::Error;

    const BASE: &str =
        "[simulation]\nduration = \"10us\"\n[topology]\ntype = \"single_switch\"\nhosts = 4\n[traffic]\nload = 0.5\n";

    #[test]
    fn every_u64_seed_loads_and_round_trips() {
        for seed in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let c = load_config(BASE, &[], Some(seed)).unwrap();
            assert_eq!(c.seed, seed);
            let again = load_config(&c.to_toml(), &[], None).unwrap();
            assert_eq!(again.seed, seed, "{}", c.to_toml());
        }
        let text = format!("seed = \"18446744073709551615\"\n{BASE}");
        assert_eq!(load_config(&text, &[], None).unwrap().seed, u64::MAX);
        let o = [("seed".to_string(), "18446744073709551615".to_string())];
        assert_eq!(load_config(BASE, &o, None).unwrap().seed, u64::MAX);
        assert!(load_config(BASE, &[], Some(7)).unwrap().to_toml().contains("seed = 7\n"));
        let largest = load_config(BASE, &[], Some(u64::MAX)).unwrap();
        assert_eq!(crate::run(&largest).unwrap().summary.seed, u64::MAX);
    }

    #[test]
    fn negative_and_malformed_seeds_are_refused() {
        for bad in ["seed = -1", "seed = \"-1\"", "seed = \"18446744073709551616\"", "seed = \"12ab\"", "seed = 1.5"] {
            match load_config(&format!("{bad}\n{BASE}"), &[], None) {
                Err(Error::Config { path, message }) => {
                    assert_eq!(path, "seed", "{bad}");
                    assert!(message.contains("[0, 2^64)"), "{bad}: {message}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
