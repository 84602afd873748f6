//! Helpers shared by the integration tests. Every run goes through `run`, which checks
//! the lossless invariants (the kernel verifies conservation, credit bounds and buffer
//! bounds at the end of every run) and that nothing was dropped.

use snarl_core::{load_config, Report};

pub fn run(text: &str, overrides: &[(&str, &str)]) -> Report {
    let report = run_lossy(text, overrides);
    assert_eq!(report.summary.packets.dropped, 0, "lossless fabric dropped packets");
    report
}

/// `run` for fabrics that may drop (no link-level flow control): conservation counts
/// the drops.
pub fn run_lossy(text: &str, overrides: &[(&str, &str)]) -> Report {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(text, &o, None).unwrap_or_else(|e| panic!("config: {e}"));
    let report = snarl_core::run(&config).unwrap_or_else(|e| panic!("run: {e}"));
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped, "packet conservation");
    assert!(p.delivered > 0, "nothing was delivered");
    report
}

/// Runs `scenarios/<name>.toml` (its includes read beside it) with `overrides` and
/// `seed`, checking conservation and that nothing was dropped, as `run` does.
pub fn run_scenario(name: &str, overrides: &[(&str, &str)], seed: Option<u64>) -> Report {
    let path = std::path::PathBuf::from(format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR")));
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = snarl_core::load_config_in(&scenario_file(name), path.parent(), &o, seed)
        .unwrap_or_else(|e| panic!("config: {e}"));
    let report = snarl_core::run(&config).unwrap_or_else(|e| panic!("run: {e}"));
    let p = &report.summary.packets;
    assert_eq!(p.injected, p.delivered + p.in_flight + p.dropped, "packet conservation");
    assert_eq!(p.dropped, 0, "lossless fabric dropped packets");
    report
}

/// The text of `scenarios/<name>.toml` (`name` with its folder).
pub fn scenario_file(name: &str) -> String {
    let path = format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Fails unless README.md says `phrase` (line breaks and runs of spaces aside): the
/// README's figures are those of the test runs that call this, so they cannot drift.
pub fn readme_says(phrase: &str) {
    let path = format!("{}/../../README.md", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(squash(&readme).contains(&squash(phrase)), "README.md should say \"{phrase}\", as this run measures");
}

/// Job `name` of a run's `jobs` section.
pub fn job(report: &Report, name: &str) -> snarl_core::traffic::jobs::JobSummary {
    let jobs: std::collections::BTreeMap<String, snarl_core::traffic::jobs::JobSummary> =
        report.summary.section("jobs").expect("a jobs section");
    jobs.get(name).unwrap_or_else(|| panic!("no job {name}")).clone()
}

/// `|got - want| <= tol`, with a readable failure.
pub fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "{what}: got {got:.4}, want {want:.4} ± {tol}");
}

pub const SINGLE_SWITCH: &str = r#"
[simulation]
duration = "200us"
warmup = "20us"

[topology]
type = "single_switch"
hosts = 8

[links]
host = { rate = "100Gbps", latency = "25ns" }

[traffic]
load = 0.5
"#;
