//! The JSON Schema of scenario files that the Python package ships
//! (`snarl/config.schema.json`, for editors: docs/config.md) is the one the config's types
//! generate: a change to a config struct that leaves it behind fails here, and
//! `UPDATE_SCHEMA=1 cargo test --release -p snarl-core --test it schema` rewrites it.
//! (`bindings/python/tests/test_schema.py` validates every scenario file against it.)

use std::path::Path;

#[test]
fn the_shipped_json_schema_is_the_configs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bindings/python/python/snarl/config.schema.json");
    let generated = snarl_core::config::json_schema_text();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == generated,
        "{} is not the schema the config's types generate: rewrite it with \
         UPDATE_SCHEMA=1 cargo test --release -p snarl-core --test it schema",
        path.display()
    );
}
