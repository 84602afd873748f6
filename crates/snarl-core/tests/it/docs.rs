//! The configuration reference stays true: every key a resolved scenario uses is
//! documented, and the reference's example runs.

use crate::common::*;
use snarl_core::observe::ReceiveRate;

const REFERENCE: &str = include_str!("../../../../docs/config.md");
const SCENARIOS: [&str; 10] = [
    include_str!("../../../../scenarios/basics/single-switch-incast.toml"),
    include_str!("../../../../scenarios/basics/fat-tree-1024-uniform.toml"),
    include_str!("../../../../scenarios/basics/spine-leaf-oversubscribed.toml"),
    include_str!("../../../../scenarios/basics/fat-tree-648-hotspot.toml"),
    include_str!("../../../../scenarios/fct/web-search-fat-tree.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/one-tree-none.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/one-tree-dcqcn.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/four-trees-dcqcn.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/google-all-one-tree-dcqcn.toml"),
    include_str!("../../../../scenarios/victim-aggressor/cresco8-allgather-incast.toml"),
];

/// Where the scenarios' relative `include` paths are read from.
fn scenario_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/victim-aggressor")
}

/// Every key of `value` as its dotted path, list indices left out (`traffic.groups.pattern`).
fn keys(value: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                out.push(path.clone());
                keys(v, &path, out);
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| keys(v, prefix, out)),
        _ => {}
    }
}

/// The reference's sections by the table they document (`""` for the top level,
/// `traffic.groups` for `[[traffic.groups]]`), with their text; a heading that names no
/// table (`### Patterns`) belongs to the section above it.
fn sections() -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in REFERENCE.lines() {
        if line.starts_with("## ") || line.starts_with("### ") {
            let table = line.split('`').nth(1).map(|t| t.trim_matches(|c| c == '[' || c == ']').to_string());
            match table {
                Some(name) => found.push((name, String::new())),
                None if line == "## Top level" => found.push((String::new(), String::new())),
                None => {}
            }
            continue;
        }
        if let Some((_, text)) = found.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    found
}

/// Whether `path` is documented: below the deepest section whose table is a prefix of
/// it, or the end of a prefix (`### Patterns: \`pattern\`` documents every `pattern`),
/// each further name of the path appears as a key there.
fn documented(path: &str, sections: &[(String, String)]) -> bool {
    let parts: Vec<&str> = path.split('.').collect();
    for depth in (0..=parts.len()).rev() {
        for start in 0..=depth {
            let table = parts[start..depth].join(".");
            if start > 0 && table.is_empty() {
                continue;
            }
            let texts: Vec<&String> =
                sections.iter().filter(|(name, _)| *name == table).map(|(_, text)| text).collect();
            let keys_there = |name: &&str| {
                let forms = [format!("`{name}`"), format!("`{name} ="), format!("{name} = "), format!("| {name} |")];
                texts.iter().any(|text| forms.iter().any(|form| text.contains(form.as_str())))
            };
            if !texts.is_empty() && parts[depth..].iter().all(keys_there) {
                return true;
            }
        }
    }
    false
}

#[test]
fn every_resolved_key_is_documented_at_its_path() {
    let sections = sections();
    for text in SCENARIOS {
        let config = snarl_core::load_config_in(text, Some(&scenario_dir()), &[], None).unwrap();
        let resolved: toml::Value = toml::from_str(&config.to_toml()).unwrap();
        let mut found = Vec::new();
        keys(&resolved, "", &mut found);
        for path in found {
            assert!(documented(&path, &sections), "key `{path}` is missing from its section of docs/config.md");
        }
    }
}

/// Keys of mechanisms no shipped scenario uses yet.
#[test]
fn congestion_control_keys_are_documented() {
    let sections = sections();
    let runs: [&[(&str, &str)]; 3] = [
        &[("congestion_control.type", "ibcc"), ("marking.victim_mask", "all")],
        &[("congestion_control.type", "dcqcn"), ("marking.mark", "dequeue")],
        &[("congestion_control.type", "per_pair"), ("congestion_control.cut_factor", "0.7")],
    ];
    for overrides in runs {
        let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let config = snarl_core::load_config(SCENARIOS[0], &o, None).unwrap();
        let resolved: toml::Value = toml::from_str(&config.to_toml()).unwrap();
        let mut found = Vec::new();
        keys(&resolved, "", &mut found);
        for path in found {
            assert!(documented(&path, &sections), "key `{path}` is missing from its section of docs/config.md");
        }
    }
}

#[test]
fn a_key_documented_only_elsewhere_is_not_documented() {
    let sections = sections();
    assert!(documented("simulation.watchdog", &sections));
    assert!(documented("traffic.groups.pattern", &sections));
    assert!(documented("traffic.groups.pattern.hotspots", &sections));
    assert!(documented("traffic.phases.pattern.regions", &sections));
    // `watchdog` is documented, but under [simulation], not [nic].
    assert!(!documented("nic.watchdog", &sections));
    assert!(!documented("simulation.radix", &sections));
}

#[test]
fn reference_example_runs() {
    let start = REFERENCE.rfind("```toml").expect("an example") + "```toml".len();
    let example = &REFERENCE[start..start + REFERENCE[start..].find("```").unwrap()];
    let base = "[simulation]\nduration = \"40000cycles\"\ntime_unit = \"cycles\"\n\
        [topology]\ntype = \"single_switch\"\nhosts = 20\n\
        [links]\nhost = { rate = \"1phit/cycle\", latency = \"1cycle\" }\n\
        [switch]\ninput_buffer = \"256phits\"\noutput_buffer = \"256phits\"\nlatency = \"1cycle\"\n\
        [nic]\nmtu = \"8phits\"\n[traffic]\nload = 0.5\n";
    let r = run(&format!("{base}{example}"), &[]);
    assert_eq!(r.summary.time_unit, "cycles");
    assert_eq!(r.summary.groups["hs"].hosts, 2);
}

/// The example of `[traffic.hotspots]` (C, V and B nodes) runs, its keys are documented,
/// and its tmax is Gran et al.'s.
#[test]
fn hotspots_example_runs_and_is_documented() {
    let section = &REFERENCE[REFERENCE.find("### `[traffic.hotspots]`").expect("the section")..];
    let start = section.find("```toml").expect("an example") + "```toml".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    // 32 hosts at 20 Gb/s: 8 B nodes, 19 C nodes, 5 V nodes; the hotspots move twice.
    let base = "[simulation]\nduration = \"300us\"\nwarmup = \"50us\"\n\
        [topology]\ntype = \"fat_tree\"\nradix = 8\nlevels = 2\n\
        [links]\nhost = { rate = \"20Gbps\", latency = \"20ns\" }\nswitch = { rate = \"20Gbps\", latency = \"20ns\" }\n\
        [nic]\nmtu = \"2KiB\"\nscheduling = \"round_robin\"\n";
    let text = format!("{base}{example}");
    let r = run(&text, &[("traffic.hotspots.lifetime", "\"100us\"")]);
    let hosts: Vec<u64> = ["b", "c", "v"].iter().map(|g| r.summary.groups[*g].hosts).collect();
    assert_eq!(hosts, [8, 19, 5]);
    assert_close("tmax", r.summary.section::<f64>("tmax").unwrap(), (5.0 + 8.0 * 0.4) * 13.5 / 32.0, 1e-9);
    let rate = r.summary.section::<ReceiveRate>("receive_rate").unwrap();
    assert!(rate.hotspots > rate.non_hotspots, "{rate:?}");
    let config = snarl_core::load_config(&text, &[], None).unwrap();
    let resolved: toml::Value = toml::from_str(&config.to_toml()).unwrap();
    let mut found = Vec::new();
    keys(&resolved, "", &mut found);
    let sections = sections();
    for path in found {
        assert!(documented(&path, &sections), "key `{path}` is missing from its section of docs/config.md");
    }
}
