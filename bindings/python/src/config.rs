//! Configs: TOML text, or a JSON object (a Python dict dumped by the package), resolved
//! by the core into a `ValidConfig`.

use crate::errors::{config_error, to_py};
use pyo3::prelude::*;
use snarl_core::ValidConfig;

/// Loads and validates a config. `text` is TOML, or a JSON object when it starts with
/// `{` (a TOML document never does); `origin` is the directory of the file it was read
/// from, where its relative `include` paths are read (the current directory without).
/// Errors are `ConfigError`s naming the key path.
pub fn load(
    py: Python<'_>,
    text: &str,
    origin: Option<&str>,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> PyResult<ValidConfig> {
    let toml_text = if text.trim_start().starts_with('{') { json_to_toml(py, text)? } else { text.to_string() };
    let dir = origin.map(std::path::Path::new);
    snarl_core::load_config_in(&toml_text, dir, overrides, seed).map_err(|e| to_py(py, e))
}

/// Resolves a config and returns it as TOML with every default written out.
///
/// `text` is TOML or a JSON object; `overrides` are `(dotted.key, value)` pairs whose
/// values are TOML (or bare strings); `seed` replaces the config's seed; `origin` is the
/// directory its relative `include` paths are read from.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), seed = None, origin = None))]
pub fn resolve_config(
    py: Python<'_>,
    text: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    origin: Option<&str>,
) -> PyResult<String> {
    Ok(load(py, text, origin, &overrides, seed)?.to_toml())
}

/// The baseline a victim/aggressor config is measured against (its victims alone), as
/// resolved TOML; None for any other config. A sweep runs each distinct one once.
#[pyfunction]
pub fn baseline_config(py: Python<'_>, text: &str) -> PyResult<Option<String>> {
    let config = load(py, text, None, &[], None)?;
    let baseline = snarl_core::traffic::jobs::Baseline::config_for(&config).map_err(|e| to_py(py, e))?;
    Ok(baseline.map(|b| b.to_toml()))
}

/// Converts a JSON object to TOML text.
fn json_to_toml(py: Python<'_>, text: &str) -> PyResult<String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| config_error(py, "<root>", &format!("invalid JSON config: {e}")))?;
    let toml::Value::Table(table) = json_value_to_toml(&value, "").map_err(|(path, m)| config_error(py, &path, &m))?
    else {
        return Err(config_error(py, "<root>", "a config must be a table (a dict), not a single value"));
    };
    toml::to_string(&table).map_err(|e| config_error(py, "<root>", &format!("cannot write the config as TOML: {e}")))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// JSON -> TOML value; the error is (key path, message). TOML has no null.
fn json_value_to_toml(value: &serde_json::Value, path: &str) -> Result<toml::Value, (String, String)> {
    use serde_json::Value as J;
    Ok(match value {
        J::Null => {
            let at = if path.is_empty() { "<root>" } else { path };
            return Err((at.to_string(), "None/null is not a value: leave the key out to get its default".into()));
        }
        J::Bool(b) => toml::Value::Boolean(*b),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                toml::Value::Integer(i)
            } else if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                toml::Value::Float(f)
            } else {
                return Err((path.to_string(), format!("integer {n} is out of range (at most {})", i64::MAX)));
            }
        }
        J::String(s) => toml::Value::String(s.clone()),
        J::Array(items) => toml::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| json_value_to_toml(item, &join(path, &i.to_string())))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(map) => toml::Value::Table(
            map.iter()
                .map(|(k, v)| json_value_to_toml(v, &join(path, k)).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()?,
        ),
    })
}
