//! Links faster than the ports that feed them: a port whose link is k times faster than
//! the slowest of its switch runs k transfers at once through the crossbar, in and out,
//! so one fat uplink carries what k parallel links would (`switch/ioq/shares.rs`).

use crate::common::{assert_close, run};
use snarl_core::{load_config, Simulation};

/// 8 leaves of 8 hosts at 400 Gb/s and 2 spines, one link per leaf-spine pair (1.6 Tb/s
/// at 1:1), every host sending to the host 8 places on: all traffic crosses the spines.
/// Buffers cover a 1.6 Tb/s port's turn-around (the switch latency at its rate).
const FAT_SPINE_LEAF: &str = r#"
seed = 1

[simulation]
duration = "100us"
warmup = "20us"

[topology]
type = "spine_leaf"
leaves = 8
spines = 2
hosts_per_leaf = 8
links_per_pair = 1
oversubscription = "1:1"

[links]
host = { rate = "400Gbps", latency = "50ns" }
switch = { rate = "400Gbps", latency = "50ns" }

[switch]
type = "ioq"
input_buffer = "256KiB"
output_buffer = "256KiB"
speedup = 1.0
latency = "300ns"

[routing]
type = "updown"
select = "adaptive"

[nic]
mtu = "4KiB"

[traffic]
load = 1.0
message_size = "64KiB"
pattern = { type = "shift", offset = 8 }
"#;

fn accepted(overrides: &[(&str, &str)]) -> f64 {
    run(FAT_SPINE_LEAF, overrides).summary.accepted_load
}

#[test]
fn one_fat_uplink_carries_what_four_parallel_links_do() {
    let fat = accepted(&[]);
    let parallel = accepted(&[("topology.links_per_pair", "4")]);
    // Four 400 Gb/s links per pair carry the permutation in full.
    assert_close("four parallel links", parallel, 1.0, 0.01);
    // Within 3% of them (before fat links shared their crossbar side: 0.243).
    assert!((fat - parallel).abs() <= 0.03 * parallel, "fat uplinks {fat:.4}, parallel links {parallel:.4}");
}

#[test]
fn halving_the_fat_uplinks_halves_what_crosses_the_spines() {
    let full = accepted(&[]);
    let half = accepted(&[("topology.oversubscription", "1:0.5")]);
    // Before fat links shared their crossbar side, both gave 0.243.
    assert_close("accepted at 1:0.5 over accepted at 1:1", half / full, 0.5, 0.03);
}

#[test]
fn a_shared_buffer_switch_shares_its_fat_ports_too() {
    let ioq = "type = \"ioq\"\ninput_buffer = \"256KiB\"\noutput_buffer = \"256KiB\"\n";
    assert!(FAT_SPINE_LEAF.contains(ioq));
    let shared_buffer = FAT_SPINE_LEAF
        .replace(ioq, "type = \"shared_buffer\"\nport_buffer = \"512KiB\"\negress_cap = \"256KiB\"\n")
        + "\n[flow_control]\ntype = \"pfc\"\nxoff = \"128KiB\"\nxon = \"120KiB\"\n";
    let full = run(&shared_buffer, &[]).summary.accepted_load;
    let half = run(&shared_buffer, &[("topology.oversubscription", "1:0.5")]).summary.accepted_load;
    assert_close("shared buffer at 1:1", full, 1.0, 0.03);
    assert_close("shared buffer, 1:0.5 over 1:1", half / full, 0.5, 0.03);
}

/// One leaf's k hosts send to the other leaf's through one spine: at speedup 1 the
/// uplink k times faster than a host carries all k streams at full rate, where a link
/// as fast as a host carries one.
#[test]
fn an_uplink_k_times_faster_than_its_hosts_carries_k_streams_at_speedup_1() {
    for k in [2u32, 4] {
        let (k_text, offset) = (k.to_string(), k.to_string());
        let base = [
            ("topology.leaves", "2"),
            ("topology.spines", "1"),
            ("topology.hosts_per_leaf", k_text.as_str()),
            ("traffic.pattern.offset", offset.as_str()),
        ];
        let fat = accepted(&base);
        assert_close(&format!("{k} streams on a {k}x uplink"), fat, 1.0, 0.02);
        let ratio = format!("1:{}", 1.0 / k as f64);
        let mut thin = base.to_vec();
        thin.push(("topology.oversubscription", ratio.as_str()));
        let one = accepted(&thin);
        assert_close(&format!("{k} streams on a 1x uplink"), one, 1.0 / k as f64, 0.02);
    }
}

/// Output queues too small for a fast link's turn-around (the switch latency and a
/// transfer from a slower port) cost throughput at any load: the run says so, naming
/// the ports and the share of the link they can carry, and carries no more than that.
#[test]
fn an_output_buffer_too_small_for_a_fast_link_is_named_with_its_figure() {
    let small = [("switch.output_buffer", "64KiB")];
    let o: Vec<(String, String)> = small.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let config = load_config(FAT_SPINE_LEAF, &o, None).unwrap();
    let warnings = Simulation::new(&config).unwrap().warnings().to_vec();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let line = &warnings[0];
    // 1.6 Tb/s x (300 ns + 4 KiB at 400 Gb/s) = 76,384 B; 65,536 of them is 85.7%.
    for part in ["switch.output_buffer", "1,600 Gb/s", "76,384 B", "switch 0 port 8 and 15 more ports", "85.7%"] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    let report = run(FAT_SPINE_LEAF, &small);
    assert!(report.summary.accepted_load <= 0.857 + 0.01, "{}", report.summary.accepted_load);
    assert_eq!(report.notes.first(), Some(line), "the report's first note");
    // The buffers of the other tests cover it: no warning.
    let config = load_config(FAT_SPINE_LEAF, &[], None).unwrap();
    assert!(Simulation::new(&config).unwrap().warnings().is_empty());
}

#[test]
fn per_vc_paths_in_front_of_a_fast_port_are_named() {
    let o = vec![("switch.crossbar".to_string(), "per_vc".to_string())];
    let config = load_config(FAT_SPINE_LEAF, &o, None).unwrap();
    let warnings = Simulation::new(&config).unwrap().warnings().to_vec();
    assert!(warnings.iter().any(|w| w.contains("per_vc") && w.contains("at most 25.0%")), "{warnings:?}");
}
