//! The configuration reference stays true: every key a resolved scenario uses is
//! documented, and the reference's example runs.

use crate::common::*;

const REFERENCE: &str = include_str!("../../../../docs/config.md");
const SCENARIOS: [&str; 9] = [
    include_str!("../../../../scenarios/basics/single-switch-incast.toml"),
    include_str!("../../../../scenarios/basics/fat-tree-1024-uniform.toml"),
    include_str!("../../../../scenarios/basics/spine-leaf-oversubscribed.toml"),
    include_str!("../../../../scenarios/basics/fat-tree-648-hotspot.toml"),
    include_str!("../../../../scenarios/fct/web-search-fat-tree.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/one-tree-none.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/one-tree-dcqcn.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/four-trees-dcqcn.toml"),
    include_str!("../../../../scenarios/lossless-ethernet/google-all-one-tree-dcqcn.toml"),
];

fn keys(value: &toml::Value, out: &mut Vec<String>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                out.push(k.clone());
                keys(v, out);
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn every_resolved_key_is_documented() {
    for text in SCENARIOS {
        let config = snarl_core::load_config(text, &[], None).unwrap();
        let resolved: toml::Value = toml::from_str(&config.to_toml()).unwrap();
        let mut found = Vec::new();
        keys(&resolved, &mut found);
        for key in found {
            let documented = [format!("`{key}`"), format!("[{key}]"), format!(".{key}]")]
                .iter()
                .any(|form| REFERENCE.contains(form.as_str()));
            assert!(documented, "key `{key}` is missing from docs/config.md");
        }
    }
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
