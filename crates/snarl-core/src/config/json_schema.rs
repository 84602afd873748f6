//! The JSON Schema of a scenario file, generated from the config's types (`schemars`
//! derives beside the serde ones; their doc comments are its descriptions), for editors
//! that complete and check TOML against a schema (Taplo, VS Code's Even Better TOML).
//! The Python package ships it as `snarl/config.schema.json`; the integration test
//! `schema` keeps that file equal to [`json_schema`]'s output (`UPDATE_SCHEMA=1`
//! rewrites it).
//!
//! The types describe what serde reads; the file a user writes is what the loader reads
//! (`load.rs`) before serde, so the generated schema is adjusted to it here:
//! - `include = "path"` merges this file over another, key by key: any section, any key
//!   of a section and any `type` may come from there. So the schema requires no key
//!   (what is missing is the loader's to say), except `[simulation]` and `[topology]` in
//!   a file without `include`; it checks that every key exists, and its value's type
//!   and units. A tagged section's variants are alternatives (`anyOf`), told apart by
//!   their `type` when it is given;
//! - `[ecn]` is `[marking]` of type `red`, written without the `type`;
//! - the sections whose `type` may be left out (`load::DEFAULT_TYPES`) say so;
//! - TOML has no null: an optional key is simply left out, so `null` is not offered;
//! - `[topology]`'s shape is flattened beside `gpus_per_node`: each shape lists it and
//!   refuses other keys, as the loader does.
//!
//! Semantic checks (`Config::validate`: ranges, sizes that fit, group names) stay the
//! loader's (`snarl check FILE`).

use super::load::DEFAULT_TYPES;
use super::Config;
use serde_json::{json, Map, Value};

/// The JSON Schema (draft 7, which every TOML editor reads) of a scenario file.
pub fn json_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<Config>().to_value();
    let root = schema.as_object_mut().expect("a root schema is an object");
    root.insert("title".into(), json!("snarl scenario"));
    let definitions = root.get_mut("definitions").and_then(Value::as_object_mut).expect("the config has definitions");
    close_flattened(definitions, "TopologySection");
    tidy(&mut schema);
    let root = schema.as_object_mut().expect("a root schema is an object");
    as_written(root);
    // The meta-schema, title and description first, for a reader of the file.
    let mut ordered = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(value) = root.remove(key) {
            ordered.insert(key.into(), value);
        }
    }
    ordered.extend(std::mem::take(root));
    Value::Object(ordered)
}

/// [`json_schema`] as the shipped file holds it: pretty-printed, with a final newline.
pub fn json_schema_text() -> String {
    serde_json::to_string_pretty(&json_schema()).expect("a JSON value prints") + "\n"
}

/// The top level as a file is written: `include`, `[ecn]`, and required sections only in
/// a file that includes none; the default types named.
fn as_written(root: &mut Map<String, Value>) {
    root.insert("if".into(), json!({ "not": { "required": ["include"] } }));
    root.insert("then".into(), json!({ "required": ["simulation", "topology"] }));
    let definitions = root["definitions"].as_object_mut().expect("the config has definitions");
    // `[marking]`'s RED variant, without its `type`, is `[ecn]`.
    let mut ecn = variants(definitions, "MarkingConfig")
        .find(|v| tag(v) == Some("red"))
        .cloned()
        .expect("marking has a red variant");
    if let Some(properties) = ecn["properties"].as_object_mut() {
        properties.remove("type");
    }
    ecn["description"] =
        json!("The older name of `[marking]` with `type = \"red\"` (RED marking; give one of the two).");
    for (section, default) in DEFAULT_TYPES {
        let name = reference(&root["properties"][section]).unwrap_or_else(|| panic!("[{section}] refers to its type"));
        let definition = &mut root["definitions"][&name];
        let default = if section == "marking" { "red (fecn under IB CC)".to_string() } else { default.to_string() };
        let note = format!("`type` may be left out: {default}.");
        definition["description"] = json!(match definition["description"].as_str() {
            Some(text) => format!("{text}\n\n{note}"),
            None => note,
        });
    }
    let properties = root["properties"].as_object_mut().expect("the config has properties");
    let mut with_extra = Map::new();
    with_extra.insert(
        "include".into(),
        json!({
            "type": "string",
            "description": "Path of a TOML file (relative to this one) whose sections this file's are merged over, \
                            key by key: a value or an array replaces the included one, a table merges into it \
                            unless it names another `type`.",
        }),
    );
    with_extra.extend(std::mem::take(properties));
    with_extra.insert("ecn".into(), ecn);
    *properties = with_extra;
}

/// A flattened tagged enum (`[topology]`): each variant takes the struct's own keys and
/// refuses any other.
fn close_flattened(definitions: &mut Map<String, Value>, name: &str) {
    let section = definitions.get_mut(name).and_then(Value::as_object_mut).expect("the flattened section");
    let own = section.remove("properties").unwrap_or_else(|| json!({}));
    for variant in section.get_mut("oneOf").and_then(Value::as_array_mut).expect("a flattened enum").iter_mut() {
        let properties = variant["properties"].as_object_mut().expect("a variant has properties");
        for (key, value) in own.as_object().expect("properties are a map") {
            properties.insert(key.clone(), value.clone());
        }
        variant["additionalProperties"] = json!(false);
    }
}

/// Every schema in the tree: no required key (see the module's comment), tagged variants
/// as alternatives, no `null` (TOML has none), no non-standard `format` (an
/// integer's width becomes its bounds), descriptions as paragraphs (doc comments wrap
/// their lines).
fn tidy(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("required");
            if map.get("oneOf").and_then(Value::as_array).is_some_and(|list| list.iter().any(|v| tag(v).is_some())) {
                let list = map.remove("oneOf").expect("just seen");
                // The valid types, listed at the section: an editor offers them, and names
                // them when one is misspelt.
                let types: Vec<&str> = list.as_array().expect("a list").iter().filter_map(tag).collect();
                map.insert("type".into(), json!("object"));
                let properties = map.entry("properties").or_insert_with(|| json!({}));
                properties["type"] = json!({ "enum": types });
                map.insert("anyOf".into(), list);
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.pop().expect("one type");
                    map.insert("type".into(), only);
                }
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(list)) = map.get_mut(key) {
                    list.retain(|s| s.get("type") != Some(&json!("null")));
                    if list.len() == 1 {
                        let only = list.pop().expect("one schema");
                        map.remove(key);
                        // A reference with siblings is wrapped (draft 7 ignores them).
                        map.insert("allOf".into(), json!([only]));
                    }
                }
            }
            if let Some(Value::String(format)) = map.get("format") {
                let maximum = match format.as_str() {
                    "uint8" => Some(u8::MAX as u64),
                    "uint16" => Some(u16::MAX as u64),
                    "uint32" => Some(u32::MAX as u64),
                    _ => None,
                };
                if !matches!(format.as_str(), "date-time" | "email" | "uri" | "regex") {
                    map.remove("format");
                }
                if let Some(maximum) = maximum {
                    map.insert("maximum".into(), json!(maximum));
                }
            }
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = paragraphs(text);
            }
            map.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Joins the wrapped lines of each paragraph (a blank line or a list item starts another).
fn paragraphs(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim();
        if out.is_empty() {
            out.push_str(line);
        } else if line.is_empty() {
            out.push_str("\n\n");
        } else if out.ends_with('\n') || line.starts_with("- ") {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(line);
        } else {
            out.push(' ');
            out.push_str(line);
        }
    }
    out
}

fn variants<'a>(definitions: &'a Map<String, Value>, name: &str) -> impl Iterator<Item = &'a Value> {
    definitions[name]["anyOf"].as_array().into_iter().flatten()
}

/// The `type` a tagged variant's schema requires.
fn tag(variant: &Value) -> Option<&str> {
    variant["properties"]["type"]["const"].as_str()
}

/// The definition a property refers to (directly, or through `allOf`/`anyOf`).
fn reference(schema: &Value) -> Option<String> {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        return target.rsplit('/').next().map(str::to_string);
    }
    ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .find_map(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_doc_comments_become_paragraphs() {
        assert_eq!(paragraphs("one\ntwo\n\nthree\n- a\n- b"), "one two\n\nthree\n- a\n- b");
    }

    #[test]
    fn the_loaders_leniencies_are_in_the_schema() {
        let schema = json_schema();
        let properties = &schema["properties"];
        assert!(properties["include"].is_object() && properties["ecn"]["properties"]["kmin"].is_object());
        assert_eq!(schema["then"]["required"], json!(["simulation", "topology"]));
        let switch = &schema["definitions"]["SwitchConfig"];
        assert!(switch["description"].as_str().unwrap().ends_with("`type` may be left out: ioq."));
        assert!(switch["anyOf"].as_array().unwrap().iter().all(|v| v.get("required").is_none()));
        let text = schema.to_string();
        assert!(!text.contains("\"null\"") && !text.contains("uint32"), "no null, no Rust formats");
        assert_eq!(text.matches("\"required\"").count(), 2, "only the top level's, without include");
        let topology = &schema["definitions"]["TopologySection"];
        assert!(topology["properties"]["type"]["enum"].as_array().unwrap().contains(&json!("fat_tree")));
        for shape in topology["anyOf"].as_array().unwrap() {
            assert_eq!(shape["additionalProperties"], json!(false));
            assert!(shape["properties"]["gpus_per_node"].is_object());
        }
    }
}
