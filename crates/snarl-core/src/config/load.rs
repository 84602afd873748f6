//! From TOML text (plus `--set` overrides and a seed) to a validated [`Config`].

use super::{Config, DcqcnConfig, FecnConfig, IbccConfig, IsolationKnobs, RedConfig, ValidConfig};
use crate::error::{closest, Error, Result};

/// Most files one config may be built from through `include` (a cycle ends there).
const MAX_INCLUDES: usize = 8;

/// Parses `text`, applies each `(dotted.key, value)` override, sets the seed if given,
/// deserialises and validates. Every error names its key path. A relative `include` is
/// read from the current directory ([`load_config_in`] names another).
pub fn load_config(text: &str, overrides: &[(String, String)], seed: Option<u64>) -> Result<ValidConfig> {
    load_config_in(text, None, overrides, seed)
}

/// [`load_config`] for the text of a file in `dir`, whose relative `include` paths are
/// read from there.
pub fn load_config_in(
    text: &str,
    dir: Option<&std::path::Path>,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<ValidConfig> {
    let mut doc = with_includes(parse(text, "<file>")?, dir, 0)?;
    for (key, value) in overrides {
        set_dotted(&mut doc, key, parse_override(value))?;
    }
    let from_ecn = ecn_as_marking(&mut doc)?;
    // Errors in a section written as `[ecn]` name it as written.
    let as_written = |e: Error| if from_ecn { e.renamed_section("marking", "ecn") } else { e };
    fill_default_types(&mut doc);
    silent_traffic_beside_jobs(&mut doc);
    ioq_only_keys(&doc)?;
    if let Some(seed) = seed {
        doc.insert("seed".into(), super::seed::to_toml(seed));
    }
    check_mix_parts(&doc)?;
    let mut config: Config = match serde_path_to_error::deserialize(toml::Value::Table(doc.clone())) {
        Ok(config) => config,
        Err(e) => {
            let path = e.path().to_string();
            let error = explain_serde_error(&doc, &path, &e.into_inner().to_string());
            return Err(as_written(within_variant(&doc, &path, error)));
        }
    };
    // DCQCN or IB CC without a [marking] section marks as its paper does: write it out.
    // A control whose marking is its own (per_pair's threshold) keeps it in its section.
    if !config.congestion_control.owns_marking() {
        config.marking = config.effective_marking();
    }
    ValidConfig::new(config).map_err(as_written)
}

/// A TOML document; a syntax error names its line, at `at`.
fn parse(text: &str, at: &str) -> Result<toml::Table> {
    text.parse().map_err(|e: toml::de::Error| {
        let message = e.message().to_string();
        let line = e
            .span()
            .map(|span| format!(" (line {})", text[..span.start.min(text.len())].lines().count().max(1)))
            .unwrap_or_default();
        Error::config(at, format!("invalid TOML{line}: {message}"))
    })
}

/// `include = "path"`: the document is the included file's (itself resolved) with this
/// one's tables merged over it, key by key (a value, or an array such as
/// `[[workload.jobs]]`, replaces the included one; a table merges into it, unless it
/// names another `type`: a different topology or switch replaces the included one
/// whole). A relative path is read from `dir` (the including file's directory).
fn with_includes(mut doc: toml::Table, dir: Option<&std::path::Path>, depth: usize) -> Result<toml::Table> {
    let Some(include) = doc.remove("include") else { return Ok(doc) };
    let Some(path) = include.as_str() else {
        return Err(Error::config("include", "must be the path of a TOML file (a string)"));
    };
    if depth >= MAX_INCLUDES {
        return Err(Error::config(
            "include",
            format!("more than {MAX_INCLUDES} files deep (does {path} include itself?)"),
        ));
    }
    let full = dir.map_or_else(|| std::path::PathBuf::from(path), |d| d.join(path));
    let text = std::fs::read_to_string(&full)
        .map_err(|e| Error::config("include", format!("cannot read {}: {e}", full.display())))?;
    let base = parse(&text, "include").map_err(|e| match e {
        Error::Config { path, message } => Error::Config { path, message: format!("{}: {message}", full.display()) },
        other => other,
    })?;
    let base = with_includes(base, full.parent(), depth + 1)?;
    Ok(merge(base, doc))
}

fn merge(mut base: toml::Table, over: toml::Table) -> toml::Table {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(value))
                if value.get("type").is_none_or(|t| inner.get("type") == Some(t)) =>
            {
                let merged = merge(std::mem::take(inner), value);
                base.insert(key, toml::Value::Table(merged));
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
    base
}

/// `[ecn]`, the older name of RED marking, is read as `[marking]` with `type = "red"`;
/// returns whether the file used it.
fn ecn_as_marking(doc: &mut toml::Table) -> Result<bool> {
    let Some(ecn) = doc.remove("ecn") else { return Ok(false) };
    if doc.contains_key("marking") {
        return Err(Error::config(
            "ecn",
            "`[ecn]` is the older name of `[marking]` with type \"red\": give only one of them",
        ));
    }
    let toml::Value::Table(mut table) = ecn else {
        return Err(Error::config("ecn", "must be a table of RED marking settings (kmin, kmax, pmax, mark)"));
    };
    if table.contains_key("type") {
        return Err(Error::config("ecn.type", "`[ecn]` is RED marking; for another type write `[marking]`"));
    }
    table.insert("type".into(), toml::Value::String("red".into()));
    doc.insert("marking".into(), toml::Value::Table(table));
    Ok(true)
}

/// Sections whose `type` may be left out: the default model is then meant (a marking's
/// default is the congestion control's own: FECN under IB CC, RED otherwise).
pub(super) const DEFAULT_TYPES: [(&str, &str); 4] =
    [("switch", "ioq"), ("flow_control", "credit"), ("routing", "updown"), ("marking", "red")];

fn fill_default_types(doc: &mut toml::Table) {
    let ibcc = doc.get("congestion_control").and_then(|cc| cc.get("type")).is_some_and(|t| t.as_str() == Some("ibcc"));
    for (section, default) in DEFAULT_TYPES {
        let default = if section == "marking" && ibcc { "fecn" } else { default };
        if let Some(toml::Value::Table(table)) = doc.get_mut(section) {
            table.entry("type").or_insert_with(|| toml::Value::String(default.to_string()));
        }
    }
}

/// A run of jobs needs no `[traffic]`: without one, no open-loop traffic runs beside them
/// (`load = 0`); with one, it is their background.
fn silent_traffic_beside_jobs(doc: &mut toml::Table) {
    let jobs = doc.get("workload").and_then(|w| w.get("type")).is_some_and(|t| t.as_str() == Some("jobs"));
    if jobs && !doc.contains_key("traffic") {
        let mut silent = toml::Table::new();
        silent.insert("load".into(), toml::Value::Float(0.0));
        doc.insert("traffic".into(), toml::Value::Table(silent));
    }
}

/// Keys of `ioq` switches that a `shared_buffer` switch would only call unknown: refused
/// with what they mean there.
fn ioq_only_keys(doc: &toml::Table) -> Result<()> {
    let Some(toml::Value::Table(switch)) = doc.get("switch") else { return Ok(()) };
    if switch.get("type").and_then(toml::Value::as_str) == Some("shared_buffer") && switch.contains_key("input_queuing")
    {
        return Err(Error::config(
            "switch.input_queuing",
            "applies to `ioq` switches only: a `shared_buffer` switch keeps one ingress queue per port and \
             priority in its shared memory, without virtual output queues",
        ));
    }
    Ok(())
}

/// A `--set` value is TOML if it parses as TOML (`0.5`, `true`, `[1, 2]`, `"x"`), and a
/// bare string otherwise (`--set topology.type=fat_tree`).
pub fn parse_override(text: &str) -> toml::Value {
    let wrapped = format!("v = {text}");
    match wrapped.parse::<toml::Table>() {
        Ok(mut table) => table.remove("v").expect("key v was just written"),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Sets `a.b.c = value`, creating tables on the way. Array elements are addressed by
/// index (`traffic.groups.0.load`), or a list of named tables by name
/// (`traffic.groups.victims.load`: the element whose `name` is `victims`).
fn set_dotted(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::config(key, "a --set key is a dotted path such as traffic.load"));
    }
    let mut node = doc;
    for (depth, part) in parts[..parts.len() - 1].iter().enumerate() {
        let here = parts[..=depth].join(".");
        let next = node.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = match next {
            toml::Value::Table(t) => t,
            toml::Value::Array(items) => {
                let index_text = parts.get(depth + 1).copied().unwrap_or("");
                let index: usize = match index_text.parse() {
                    Ok(index) => index,
                    Err(_) => element_named(items, &here, index_text)?,
                };
                let len = items.len();
                let item = items.get_mut(index).ok_or_else(|| {
                    Error::config(&here, format!("index {index} is out of range: the list has {len} elements"))
                })?;
                // The index consumed the next path element.
                let rest = parts[depth + 2..].join(".");
                return match item {
                    toml::Value::Table(t) if !rest.is_empty() => {
                        set_dotted(t, &rest, value).map_err(|e| prefix_path(e, &format!("{here}.{index}")))
                    }
                    _ if rest.is_empty() => {
                        *item = value;
                        Ok(())
                    }
                    _ => Err(Error::config(format!("{here}.{index}"), "not a table")),
                };
            }
            _ => return Err(Error::config(&here, format!("`{here}` is a value, not a table"))),
        };
    }
    node.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// The index of the element of the list at `here` whose `name` is `name`; an error
/// naming the names there are (or asking for an index, in a list without names).
fn element_named(items: &[toml::Value], here: &str, name: &str) -> Result<usize> {
    let names: Vec<&str> =
        items.iter().filter_map(|item| item.as_table().and_then(|t| t.get("name")).and_then(|n| n.as_str())).collect();
    if let Some(index) =
        items.iter().position(|item| item.as_table().and_then(|t| t.get("name")).and_then(|n| n.as_str()) == Some(name))
    {
        return Ok(index);
    }
    if names.is_empty() {
        return Err(Error::config(here, format!("`{here}` is a list: address an element by index, e.g. {here}.0")));
    }
    let listed = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    Err(Error::config(
        here,
        format!(
            "no element named `{name}` in `{here}`: address one by index (0 to {}) or by name: {listed}",
            items.len() - 1
        ),
    ))
}

fn prefix_path(e: Error, prefix: &str) -> Error {
    match e {
        Error::Config { path, message } => Error::config(format!("{prefix}.{path}"), message),
        other => other,
    }
}

/// Serde cannot follow a key path into a tagged enum (a pattern), so the parts of every
/// `mix` pattern are read one by one first: an error in a part names its full key path
/// (`traffic.groups.1.pattern.parts.0.share`).
fn check_mix_parts(doc: &toml::Table) -> Result<()> {
    let Some(toml::Value::Table(traffic)) = doc.get("traffic") else { return Ok(()) };
    let mut patterns: Vec<(String, &toml::Value)> = Vec::new();
    if let Some(pattern) = traffic.get("pattern") {
        patterns.push(("traffic.pattern".into(), pattern));
    }
    for list in ["groups", "phases"] {
        if let Some(toml::Value::Array(items)) = traffic.get(list) {
            for (i, item) in items.iter().enumerate() {
                if let Some(pattern) = item.get("pattern") {
                    patterns.push((format!("traffic.{list}.{i}.pattern"), pattern));
                }
            }
        }
    }
    for (at, pattern) in patterns {
        if pattern.get("type").and_then(toml::Value::as_str) != Some("mix") {
            continue;
        }
        let Some(toml::Value::Array(parts)) = pattern.get("parts") else { continue };
        for (k, part) in parts.iter().enumerate() {
            if let Err(e) = serde_path_to_error::deserialize::<_, super::MixPart>(part.clone()) {
                let inner = e.path().to_string();
                let path = if inner == "." { format!("{at}.parts.{k}") } else { format!("{at}.parts.{k}.{inner}") };
                return Err(explain_serde_error(doc, &path, &e.into_inner().to_string()));
            }
        }
    }
    Ok(())
}

/// The value at dotted `path` of `doc` (list elements by index), if there is one.
fn value_at<'a>(doc: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut value = doc.get(parts.next()?)?;
    for part in parts {
        value = match value {
            toml::Value::Table(t) => t.get(part)?,
            toml::Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// A value refused inside a section chosen by its `type` (`[marking]`, `[congestion_control]`)
/// is reported by serde at the section (`path`), whose variants it reads through a buffer:
/// read the section again as its variant's own struct to name the key.
fn within_variant(doc: &toml::Table, path: &str, error: Error) -> Error {
    let Some(toml::Value::Table(section)) = doc.get(path) else { return error };
    let mut fields = section.clone();
    let kind = fields.remove("type").and_then(|t| t.as_str().map(str::to_string)).unwrap_or_default();
    fn read<T: serde::de::DeserializeOwned>(section: &str, fields: toml::Table) -> Option<Error> {
        let e = serde_path_to_error::deserialize::<_, T>(toml::Value::Table(fields.clone())).err()?;
        let inner = e.path().to_string();
        let path = if inner == "." { section.to_string() } else { format!("{section}.{inner}") };
        let mut doc = toml::Table::new();
        doc.insert(section.to_string(), toml::Value::Table(fields));
        Some(explain_serde_error(&doc, &path, &e.into_inner().to_string()))
    }
    let refined = match (path, kind.as_str()) {
        ("marking", "red") => read::<RedConfig>(path, fields),
        ("marking", "fecn") => read::<FecnConfig>(path, fields),
        ("congestion_control", "dcqcn") => read::<DcqcnConfig>(path, fields),
        ("congestion_control", "ibcc") => read::<IbccConfig>(path, fields),
        ("isolation", "ci" | "ici") => read::<IsolationKnobs>(path, fields),
        ("workload", "jobs") => read::<crate::traffic::jobs::JobsConfig>(path, fields),
        _ => None,
    };
    refined.unwrap_or_else(|| named_value(section, path, &kind, error))
}

/// An unknown value of a key inside a section chosen by its `type` (`switch.crossbar =
/// "per_VC"`) is reported by serde as an unknown type of the section: when the section's
/// `type` is valid and another key holds the value, name that key.
fn named_value(section: &toml::Table, path: &str, kind: &str, error: Error) -> Error {
    let Error::Config { path: at, message } = &error else { return error };
    let Some(found) = message.strip_prefix("unknown type ").and_then(between_backticks) else { return error };
    if *at != format!("{path}.type") || found == kind {
        return error;
    }
    let holder = section.iter().find(|(key, value)| *key != "type" && value.as_str() == Some(found.as_str()));
    match holder {
        Some((key, _)) => Error::config(format!("{path}.{key}"), message.replacen("unknown type", "unknown value", 1)),
        None => error,
    }
}

/// Turns serde's "unknown field `lod`, expected one of `load`, ..." into an error naming
/// the full key path and the closest valid name (`doc` tells a section chosen by its
/// `type` from a key whose value names a variant).
fn explain_serde_error(doc: &toml::Table, path: &str, message: &str) -> Error {
    let path = if path == "." { String::new() } else { path.replace('[', ".").replace(']', "") };
    for (what, noun) in [("unknown field", "key"), ("unknown variant", "type")] {
        if let Some(rest) = message.strip_prefix(what) {
            let found = between_backticks(rest).unwrap_or_default();
            let mut valid: Vec<String> = rest
                .split_once("expected")
                // The list ends at the line break before toml's "in `table`".
                .map(|(_, list)| {
                    let list = list.lines().next().unwrap_or_default();
                    list.split('`').skip(1).step_by(2).map(str::to_string).collect()
                })
                .unwrap_or_default();
            if noun == "key" {
                valid.extend(keys_beside_a_shape(&path).iter().map(|k| k.to_string()));
            }
            // The tracked path may already end at the offending key. An unknown variant
            // is the `type` of a section, or the value of a plain key.
            let section = !path.is_empty() && matches!(value_at(doc, &path), Some(toml::Value::Table(_)));
            let leaf = if noun == "key" {
                found.as_str()
            } else if section || path.is_empty() {
                "type"
            } else {
                ""
            };
            let full_path = if path.is_empty() {
                leaf.to_string()
            } else if leaf.is_empty() || path.rsplit('.').next() == Some(leaf) {
                path.clone()
            } else {
                format!("{path}.{leaf}")
            };
            let hint = match closest(&found, valid.iter().map(String::as_str)) {
                Some(name) => format!("; did you mean `{name}`?"),
                None => String::new(),
            };
            let list = if valid.is_empty() { String::new() } else { format!(" (valid: {})", valid.join(", ")) };
            let noun = if leaf.is_empty() && path.rsplit('.').next() != Some("type") { "value" } else { noun };
            return Error::config(full_path, format!("unknown {noun} `{found}`{hint}{list}"));
        }
    }
    if let Some(rest) = message.strip_prefix("missing field") {
        let field = between_backticks(rest).unwrap_or_default();
        let full = if path.is_empty() { field.clone() } else { format!("{path}.{field}") };
        return Error::config(full, format!("missing required key `{field}`"));
    }
    // toml appends where the value was ("\nin `key`\n"): the path says it already.
    let message = message.split_once("\nin `").map_or(message, |(text, _)| text).trim_end();
    Error::config(if path.is_empty() { "<root>".to_string() } else { path }, in_words(message))
}

/// Keys of a section whose typed part is flattened beside them (`[topology]`'s shape and
/// `gpus_per_node`): serde lists only the type's own keys when it refuses one, so these
/// are added to the valid names.
fn keys_beside_a_shape(section: &str) -> &'static [&'static str] {
    match section {
        "topology" => &["gpus_per_node"],
        _ => &[],
    }
}

/// serde names the Rust type it expected ("expected u32"): say what a user writes.
fn in_words(message: &str) -> String {
    let mut text = message.to_string();
    for (rust, words) in [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65,535"),
        ("expected u32", "expected a whole number of 0 or more"),
        ("expected u64", "expected a whole number of 0 or more"),
        ("expected usize", "expected a whole number of 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
    ] {
        if let Some(at) = text.find(rust) {
            // Only the whole word: "expected u32", not a prefix of a longer name.
            let end = at + rust.len();
            if !text[end..].starts_with(|c: char| c.is_alphanumeric()) {
                text.replace_range(at..end, words);
            }
        }
    }
    text
}

fn between_backticks(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(text[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
        [simulation]
        duration = "10us"
        [topology]
        type = "single_switch"
        hosts = 4
        [traffic]
        load = 0.5
    "#;

    #[test]
    fn values_inside_a_typed_section_are_named_at_their_key_in_words() {
        let ioq = [("switch.crossbar", "per_VC"), ("switch.input_queuing", "VOQ")];
        for (key, value) in ioq {
            let (path, message) = err(MINIMAL, &[(key, value)]);
            assert_eq!(path, key, "{message}");
            assert!(message.starts_with(&format!("unknown value `{value}`")), "{message}");
        }
        let (path, message) = err(MINIMAL, &[("routing.type", "updown"), ("routing.select", "adaptve")]);
        assert_eq!((path.as_str(), message.contains("`adaptive`")), ("routing.select", true), "{message}");
        let isolation = [
            ("switch.type", "shared_buffer"),
            ("flow_control.type", "pfc"),
            ("flow_control.xoff", "50"),
            ("flow_control.xon", "45"),
            ("isolation.type", "ci"),
        ];
        let with = |extra: (&'static str, &'static str)| isolation.iter().copied().chain([extra]).collect::<Vec<_>>();
        let (path, message) = err(MINIMAL, &with(("isolation.key", "flw")));
        assert_eq!((path.as_str(), message.contains("`flow`")), ("isolation.key", true), "{message}");
        let (path, message) = err(MINIMAL, &with(("isolation.cft_entries", "-1")));
        assert_eq!(path, "isolation.cft_entries", "{message}");
        assert!(message.contains("a whole number of 0 or more") && !message.contains("u32"), "{message}");
        // The section's own type stays reported as a type.
        let (path, message) = err(MINIMAL, &[("switch.type", "ioqq")]);
        assert_eq!((path.as_str(), message.starts_with("unknown type `ioqq`")), ("switch.type", true), "{message}");
    }

    fn err(text: &str, overrides: &[(&str, &str)]) -> (String, String) {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        match load_config(text, &o, None) {
            Err(Error::Config { path, message }) => (path, message),
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn minimal_config_loads_with_defaults() {
        let c = load_config(MINIMAL, &[], None).unwrap();
        assert_eq!(c.seed, 1);
        assert_eq!(c.traffic.load, 0.5);
        assert_eq!(c.nic.mtu.0, 4096);
    }

    #[test]
    fn overrides_and_seed_apply() {
        let o = vec![("traffic.load".to_string(), "0.25".to_string()), ("topology.hosts".into(), "6".into())];
        let c = load_config(MINIMAL, &o, Some(9)).unwrap();
        assert_eq!(c.traffic.load, 0.25);
        assert_eq!(c.seed, 9);
        assert_eq!(c.topology.shape, crate::config::TopologyConfig::SingleSwitch { hosts: 6 });
    }

    #[test]
    fn misspelt_key_names_path_and_closest() {
        let (path, message) = err(MINIMAL, &[("traffic.lod", "0.3")]);
        assert_eq!(path, "traffic.lod");
        assert!(message.contains("did you mean `load`"), "{message}");
        assert!(message.ends_with("phases, hotspots)"), "only the table's own keys are listed: {message}");
    }

    #[test]
    fn gpus_per_node_sits_beside_the_topology_type() {
        let c = load_config(MINIMAL, &[("topology.gpus_per_node".into(), "2".into())], None).unwrap();
        assert_eq!((c.topology.gpus_per_node, c.topology.nodes().count()), (2, 2));
        let text = toml::to_string(&*c).unwrap();
        assert!(text.contains("gpus_per_node = 2"), "{text}");
        assert_eq!(load_config(&text, &[], None).unwrap().topology, c.topology, "the resolved config reloads");
        let default = toml::to_string(&*load_config(MINIMAL, &[], None).unwrap()).unwrap();
        assert!(!default.contains("gpus_per_node"), "one GPU per node is left out: {default}");
        let (path, message) = err(MINIMAL, &[("topology.gpus_per_nod", "2")]);
        assert_eq!(path, "topology.gpus_per_nod");
        assert!(message.contains("did you mean `gpus_per_node`"), "{message}");
        let (path, message) = err(MINIMAL, &[("topology.hostz", "2")]);
        assert_eq!(path, "topology.hostz");
        assert!(message.contains("did you mean `hosts`"), "{message}");
        let (path, message) = err(MINIMAL, &[("topology.gpus_per_node", "-1")]);
        assert_eq!(path, "topology.gpus_per_node");
        assert!(message.contains("whole number"), "{message}");
    }

    #[test]
    fn wrong_variant_names_closest() {
        let (path, message) = err(MINIMAL, &[("topology.type", "singel_switch")]);
        assert_eq!(path, "topology.type");
        assert!(message.contains("did you mean `single_switch`"), "{message}");
    }

    #[test]
    fn list_elements_are_addressable() {
        let text = format!("{MINIMAL}\n[[traffic.groups]]\nname = \"a\"\ncount = 2\n");
        let o = vec![("traffic.groups.0.load".to_string(), "0.1".to_string())];
        let c = load_config(&text, &o, None).unwrap();
        assert_eq!(c.traffic.groups[0].load, Some(0.1));
        let (path, _) = err(&text, &[("traffic.groups.3.load", "0.1")]);
        assert_eq!(path, "traffic.groups");
    }

    #[test]
    fn named_list_elements_are_addressable_by_name() {
        let text = format!(
            "{MINIMAL}\n[[traffic.groups]]\nname = \"a\"\ncount = 2\n[[traffic.groups]]\nname = \"b\"\nrest = true\n"
        );
        let o = vec![("traffic.groups.b.load".to_string(), "0.2".to_string())];
        let c = load_config(&text, &o, None).unwrap();
        assert_eq!(c.traffic.groups[1].load, Some(0.2));
        assert_eq!(c.traffic.groups[0].load, None);
        let (path, message) = err(&text, &[("traffic.groups.c.load", "0.1")]);
        assert_eq!(path, "traffic.groups");
        assert!(message.contains("no element named `c`") && message.contains("`a`, `b`"), "{message}");
    }

    #[test]
    fn keys_in_lists_and_in_mix_parts_are_named_by_index() {
        let text = format!("{MINIMAL}\n[[traffic.groups]]\nname = \"a\"\ncount = 2\nlod = 0.1\n");
        let (path, message) = err(&text, &[]);
        assert_eq!(path, "traffic.groups.0.lod");
        assert!(message.contains("did you mean `load`"), "{message}");
        let mix = "{ type = \"mix\", parts = [{ share = 0.5, pattern = { type = \"uniform\" } }, \
                   { pattern = { type = \"uniform\", amoung = \"all\" } }] }";
        let (path, message) = err(MINIMAL, &[("traffic.pattern", mix)]);
        assert_eq!(path, "traffic.pattern.parts.1.pattern.amoung");
        assert!(message.contains("did you mean `among`"), "{message}");
        let (path, _) = err(MINIMAL, &[("traffic.pattern", "{ type = \"mix\", parts = [{ share = 1.0 }] }")]);
        assert_eq!(path, "traffic.pattern.parts.0.pattern");
    }

    #[test]
    fn values_inside_a_typed_section_are_named_by_their_key() {
        let (path, message) =
            err(MINIMAL, &[("congestion_control.type", "dcqcn"), ("congestion_control.min_rate", "\"1 parsec\"")]);
        assert_eq!(path, "congestion_control.min_rate");
        assert!(message.starts_with("unknown rate unit") && !message.contains("\nin `"), "{message}");
        let (path, message) = err(MINIMAL, &[("marking.mark", "\"dequeu\"")]);
        assert_eq!(path, "marking.mark");
        assert!(message.contains("unknown value `dequeu`; did you mean `dequeue`"), "{message}");
        let (path, message) = err(MINIMAL, &[("nic.scheduling", "round_robbin")]);
        assert_eq!(path, "nic.scheduling", "a plain key's value is not a section's type");
        assert!(message.contains("did you mean `round_robin`"), "{message}");
        let (path, message) = err(MINIMAL, &[("congestion_control.type", "dcqnc")]);
        assert_eq!(path, "congestion_control.type");
        assert!(message.contains("unknown type `dcqnc`"), "{message}");
    }

    #[test]
    fn invalid_toml_is_a_config_error() {
        let (_, message) = err("[simulation\n", &[]);
        assert!(message.contains("invalid TOML"));
    }
}
