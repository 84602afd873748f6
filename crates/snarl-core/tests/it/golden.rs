//! Golden summaries: every scenario under `scenarios/` (sweep files aside) is run,
//! shortened where it is long by the overrides in `tests/golden/overrides.toml`, and its
//! summary must equal the stored `tests/golden/<folder>/<name>.json` byte for byte, wall
//! time aside. A change that alters results on purpose rewrites them with
//! `UPDATE_GOLDEN=1 cargo test --release --test it golden` and says why in its commit.

use snarl_core::load_config_in;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Every runnable scenario, as "folder/name" (no `.toml`), in order: not the sweeps, the
/// findings or calibration spaces, nor the fabric presets, which scenarios include.
fn scenarios() -> Vec<String> {
    let mut found = Vec::new();
    let base = root().join("scenarios");
    for folder in std::fs::read_dir(&base).unwrap() {
        let folder = folder.unwrap().path();
        if folder.ends_with("presets") {
            continue;
        }
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&file).unwrap();
                let doc: toml::Table = text.parse().unwrap();
                // Sweeps (`base`), findings (`finding`) and calibration spaces
                // (`parameter`) run scenarios; they are none themselves.
                if !["base", "finding", "parameter"].iter().any(|k| doc.contains_key(*k)) {
                    let name = file.strip_prefix(&base).unwrap().with_extension("");
                    found.push(name.to_string_lossy().into_owned());
                }
            }
        }
    }
    found.sort();
    found
}

/// The shortening overrides of each scenario, as dotted key and TOML value text: its
/// own, or its folder's (`"folder/*"`).
fn overrides(scenario: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(golden_dir().join("overrides.toml")).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let folder = scenario.rsplit_once('/').map(|(f, _)| format!("{f}/*"));
    match table.get(scenario).or_else(|| folder.and_then(|f| table.get(&f))) {
        Some(toml::Value::Table(set)) => set.iter().map(|(k, v)| (k.clone(), v.to_string())).collect(),
        Some(other) => panic!("overrides.toml: `{scenario}` must be a table, found {other}"),
        None => Vec::new(),
    }
}

fn summary(scenario: &str) -> String {
    let path = root().join(format!("scenarios/{scenario}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let config =
        load_config_in(&text, path.parent(), &overrides(scenario), None).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    let mut report = snarl_core::run(&config).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    report.summary.wall_seconds = 0.0;
    report.summary_json() + "\n"
}

/// A unified diff of what changed, readable in a test failure.
fn diff(scenario: &str, want: &str, got: &str) -> String {
    let diff = similar::TextDiff::from_lines(want, got);
    let golden = format!("golden/{scenario}.json");
    format!("{}", diff.unified_diff().context_radius(2).header(&golden, "this run"))
}

#[test]
fn every_scenario_matches_its_golden_summary() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let names = scenarios();
    assert!(names.len() >= 20, "found only {} scenarios", names.len());
    let mut failures = Vec::new();
    for name in &names {
        let path = golden_dir().join(format!("{name}.json"));
        let got = summary(name);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(diff(name, &want, &got)),
            Err(_) => failures.push(format!("{name}: no golden summary (run with UPDATE_GOLDEN=1)\n")),
        }
    }
    // Golden files of scenarios that no longer exist would pin nothing.
    for folder in std::fs::read_dir(golden_dir()).unwrap() {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            let name = file.strip_prefix(golden_dir()).unwrap().with_extension("");
            if !names.contains(&name.to_string_lossy().into_owned()) {
                failures.push(format!("{}: a golden summary of no scenario\n", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden summaries differ:\n{}",
        failures.len(),
        names.len(),
        failures.concat()
    );
}

#[test]
fn the_overrides_name_existing_scenarios() {
    let text = std::fs::read_to_string(golden_dir().join("overrides.toml")).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let names = scenarios();
    for key in table.keys() {
        let folder = key.strip_suffix("/*").map(|f| format!("{f}/"));
        let named = match folder {
            Some(f) => names.iter().any(|n| n.starts_with(&f)),
            None => names.contains(key),
        };
        assert!(named, "overrides.toml names `{key}`, which is no scenario (nor a folder of them)");
    }
}

#[test]
fn a_mismatch_reads_as_a_diff_of_the_changed_lines() {
    let shown = diff("basics/x", "{\n  \"a\": 1,\n  \"b\": 2\n}\n", "{\n  \"a\": 1,\n  \"b\": 3\n}\n");
    assert!(shown.contains("--- golden/basics/x.json"), "{shown}");
    assert!(shown.contains("-  \"b\": 2\n") && shown.contains("+  \"b\": 3\n"), "{shown}");
}
