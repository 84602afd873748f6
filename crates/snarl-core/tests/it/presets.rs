//! Fabric presets (`scenarios/presets/`): each loads through `include` beside a job
//! workload and runs, lossless; `include` merges tables key by key and replaces a table
//! that names another `type`.

use crate::common::job;
use snarl_core::{load_config_in, Error};
use std::path::{Path, PathBuf};

fn presets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/presets")
}

/// An AllGather victim and an Incast aggressor interleaved on `nodes` nodes of `preset`.
fn job_on(preset: &str, nodes: u32) -> String {
    format!("include = \"{preset}.toml\"\n{}", jobs(nodes))
}

/// The `[workload]` of [`job_on`].
fn jobs(nodes: u32) -> String {
    format!(
        r#"[workload]
type = "jobs"
allocation = {{ nodes = {nodes}, policy = "random" }}
[[workload.jobs]]
name = "victim"
collective = "allgather"
size = "256KiB"
nodes = "interleaved"
iterations = 4
warmup = 1
[[workload.jobs]]
name = "aggressor"
collective = "incast"
size = "256KiB"
nodes = "interleaved"
role = "aggressor"
"#
    )
}

#[test]
fn every_preset_runs_a_victim_beside_an_aggressor() {
    let mut names: Vec<String> = std::fs::read_dir(presets_dir())
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for name in names {
        let nodes = if name.starts_with("haicgu") { 10 } else { 8 };
        // Two hosts cabled to each other hold one job of two ranks: the victim, alone.
        let text = match name.as_str() {
            "nccl-back-to-back" => {
                job_on(&name, 2).replace("nodes = \"interleaved\"\niterations", "nodes = \"all\"\niterations")
            }
            _ => job_on(&name, nodes),
        };
        let text = match name.as_str() {
            "nccl-back-to-back" => text[..text.find("[[workload.jobs]]\nname = \"aggressor\"").unwrap()].to_string(),
            _ => text,
        };
        let config = load_config_in(&text, Some(&presets_dir()), &[], None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = snarl_core::run(&config).unwrap_or_else(|e| panic!("{name}: {e}"));
        let p = &report.summary.packets;
        assert_eq!(p.injected, p.delivered + p.in_flight, "{name}: packet conservation");
        assert_eq!(p.dropped, 0, "{name}");
        let victim = job(&report, "victim");
        assert_eq!(victim.iterations, 3, "{name}");
        assert_eq!(
            victim.perf_ratio.is_some(),
            name != "nccl-back-to-back",
            "{name}: a perf ratio beside an aggressor"
        );
    }
}

#[test]
fn include_merges_tables_and_replaces_another_type() {
    let two_leaves = std::fs::read_to_string(presets_dir().join("haicgu-ib-two-leaves.toml")).unwrap();
    let config = load_config_in(&(two_leaves + &jobs(10)), Some(&presets_dir()), &[], None);
    let config = config.unwrap_or_else(|e| panic!("{e}"));
    let topology = toml::to_string(&config.topology).unwrap();
    assert!(topology.contains("spine_leaf") && !topology.contains("hosts = 10"), "{topology}");
    // The included switch stays, merged key by key.
    assert_eq!(config.switch.latency().0, 90_000);
}

#[test]
fn a_missing_or_circular_include_is_refused_at_include() {
    let error = |text: &str, dir: &Path| match load_config_in(text, Some(dir), &[], None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("not refused: {:?}", other.map(|_| ())),
    };
    let (path, message) = error("include = \"nowhere.toml\"\n", &presets_dir());
    assert_eq!(path, "include");
    assert!(message.contains("nowhere.toml"), "{message}");
    let dir = std::env::temp_dir().join(format!("snarl-include-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.toml"), "include = \"b.toml\"\n").unwrap();
    std::fs::write(dir.join("b.toml"), "include = \"a.toml\"\n").unwrap();
    let (path, message) = error("include = \"a.toml\"\n", &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(path, "include");
    assert!(message.contains("deep"), "{message}");
}
