//! A report made in Rust, as the Python package sees it: its parts, in the form
//! `snarl._core.run` hands them over, wrapped in `snarl.Report` by the interpreter
//! `SNARL_PYTHON` names (`make test` sets it to its virtualenv's). So a mechanism added
//! outside the crate is shown to reach Python's `Report.tables`, `Report.summary` and
//! `Report.notes` with no change to the package.

use snarl_core::{ColumnData, Report, ValidConfig};
use std::process::Command;

/// What `snarl.Report` made of the report's parts: `summary` (its summary dict),
/// `notes`, and `tables` (name -> {rows, columns, sums of the numeric columns}).
const SCRIPT: &str = r#"
import json, sys
import numpy as np
import snarl

parts = json.load(open(sys.argv[1], encoding="utf-8"))
tables = {}
for name, columns in parts["tables"].items():
    tables[name] = {
        c["name"]: c["values"] if c["type"] == "str" else np.array(c["values"], dtype=c["type"])
        for c in columns
    }
report = snarl.Report(parts["summary_json"], parts["config_toml"], tables, parts["notes"], dict(parts["headlines"]))
seen = {}
for name, frame in report.tables.items():
    numeric = frame.select_dtypes("number")
    seen[name] = {
        "rows": len(frame),
        "columns": list(frame.columns),
        "sums": {c: float(numeric[c].sum()) for c in numeric.columns},
    }
print(json.dumps({"summary": report.summary, "notes": report.notes, "tables": seen}))
"#;

/// `report` (of `config`) as `snarl.Report` sees it, or `None` with a notice when no
/// interpreter is named (a bare `cargo test`).
pub fn as_python_sees_it(config: &ValidConfig, report: &Report) -> Option<serde_json::Value> {
    let Some(python) = std::env::var_os("SNARL_PYTHON") else {
        eprintln!("SNARL_PYTHON is not set: the Python side of this test did not run (make test sets it)");
        return None;
    };
    let tables: serde_json::Map<String, serde_json::Value> = report
        .tables
        .iter()
        .map(|(name, table)| {
            let columns = table
                .columns
                .iter()
                .map(|c| {
                    let (kind, values) = match &c.data {
                        ColumnData::F64(v) => ("f8", serde_json::json!(v)),
                        ColumnData::U64(v) => ("u8", serde_json::json!(v)),
                        ColumnData::Str(v) => ("str", serde_json::json!(v)),
                    };
                    serde_json::json!({ "name": c.name, "type": kind, "values": values })
                })
                .collect::<Vec<_>>();
            (name.clone(), serde_json::Value::Array(columns))
        })
        .collect();
    let parts = serde_json::json!({
        "summary_json": report.summary_json(),
        "config_toml": config.to_toml(),
        "tables": tables,
        "notes": report.notes,
        "headlines": report.headlines(),
    });
    // A folder per report, so that tests running at once never share one.
    let name = format!("snarl-python-view-{}-{:x}", std::process::id(), fnv(report.summary_json().as_bytes()));
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("parts.json");
    std::fs::write(&file, parts.to_string()).unwrap();
    let out = Command::new(&python).arg("-c").arg(SCRIPT).arg(&file).output().expect("SNARL_PYTHON runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "python failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the script prints JSON"))
}

/// A name per report.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Asserts Python sees `report`'s summary, notes and every table (rows, and the sums of
/// the numeric columns, gaps (NaN) left out as pandas leaves them) as Rust made them.
pub fn assert_python_sees(config: &ValidConfig, report: &Report) -> Option<serde_json::Value> {
    let seen = as_python_sees_it(config, report)?;
    let summary: serde_json::Value = serde_json::from_str(&report.summary_json()).unwrap();
    assert_eq!(seen["summary"], summary, "the summary as Python reads it");
    assert_eq!(seen["notes"], serde_json::json!(report.notes));
    let tables = seen["tables"].as_object().unwrap();
    assert_eq!(tables.keys().collect::<Vec<_>>(), report.tables.keys().collect::<Vec<_>>());
    for (name, table) in &report.tables {
        assert_eq!(tables[name]["rows"], table.rows() as u64, "{name}");
        for column in &table.columns {
            let sum = match &column.data {
                ColumnData::F64(v) => v.iter().filter(|x| !x.is_nan()).sum::<f64>(),
                ColumnData::U64(v) => v.iter().sum::<u64>() as f64,
                ColumnData::Str(_) => continue,
            };
            let got = tables[name]["sums"][&column.name].as_f64().unwrap();
            assert!((got - sum).abs() <= 1e-9 * sum.abs().max(1.0), "{name}.{}: {got} vs {sum}", column.name);
        }
    }
    Some(seen)
}
