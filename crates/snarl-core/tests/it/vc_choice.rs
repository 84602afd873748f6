//! Which VC a packet takes: at injection (`nic.injection_vc`: its flow's, or the lowest
//! with room) and, under up/down routing, at every hop (`routing.vcs`: the one it was
//! injected on, or any with room). Seen through queue probes on the egress queues of
//! each VC: one flow, slowed by its receiver, backs up into the fabric, and the VCs its
//! packets wait on are the VCs it took.

use crate::common::{run, scenario_file};
use serde_json::Value;
use snarl_core::{load_config, Error, Simulation};

/// One flow, host 0 to host 2, at full rate into a receiver that drains at half of it:
/// two leaves under one spine (leaf 0: switch 0, leaf 1: switch 1, spine: switch 2;
/// a leaf's ports 0 and 1 lead to its hosts, port 2 to the spine), two VCs, credits.
const ONE_FLOW: &str = r#"
seed = 1

[simulation]
duration = "200us"
warmup = "20us"

[topology]
type = "spine_leaf"
leaves = 2
spines = 1
hosts_per_leaf = 2
links_per_pair = 1

[links]
host = { rate = "100Gbps", latency = "25ns" }
switch = { rate = "100Gbps", latency = "25ns" }

[switch]
vcs = 2
input_buffer = "16KiB"
output_buffer = "16KiB"

[nic]
mtu = "1KiB"
receive_cap = "50Gbps"

[traffic]
load = 1.0

[[traffic.groups]]
name = "sender"
hosts = [0]
pattern = { type = "incast", destination = 2 }

[[traffic.groups]]
name = "idle"
rest = true
load = 0.0

[observe]
queues = [
    { switch = 0, port = 2, priority = 0 },
    { switch = 0, port = 2, priority = 1 },
    { switch = 1, port = 0, priority = 0 },
    { switch = 1, port = 0, priority = 1 },
]
"#;

/// Mean bytes of each probed queue: leaf 0's uplink VC 0 and 1, then leaf 1's port to
/// host 2, VC 0 and 1.
fn mean_bytes(overrides: &[(&str, &str)]) -> [f64; 4] {
    let report = run(ONE_FLOW, overrides);
    let Some(Value::Array(probes)) =
        report.summary.sections.get("queues").map(|q| serde_json::to_value(q).expect("json"))
    else {
        panic!("the queues section");
    };
    let mean = |k: usize| probes[k]["mean_bytes"].as_f64().expect("mean_bytes");
    [mean(0), mean(1), mean(2), mean(3)]
}

#[test]
fn by_default_a_flow_keeps_one_vc_from_its_nic_to_its_receiver() {
    let [up0, up1, down0, down1] = mean_bytes(&[]);
    // The receiver's port backs up, on the flow's VC only.
    assert!(down0.max(down1) > 4096.0, "the receiver's queue should fill: {down0}, {down1}");
    assert!(down0 == 0.0 || down1 == 0.0, "one flow, one VC: {down0}, {down1}");
    assert!(up0 == 0.0 || up1 == 0.0, "one flow, one VC on the uplink: {up0}, {up1}");
    assert_eq!(down0 == 0.0, up0 == 0.0, "the same VC at every hop");
}

#[test]
fn lowest_with_room_spreads_a_blocked_flow_over_every_vc_it_keeps() {
    for scheduling in ["fifo", "round_robin"] {
        let [up0, up1, down0, down1] = mean_bytes(&[
            ("nic.injection_vc", "\"lowest_with_room\""),
            ("nic.scheduling", &format!("\"{scheduling}\"")),
        ]);
        // The NIC fills VC 0's credits, then sends on VC 1: both carry the flow, and
        // each keeps its VC to the receiver, whose queues on both VCs back up.
        for (what, bytes) in
            [("uplink VC 0", up0), ("uplink VC 1", up1), ("receiver VC 0", down0), ("receiver VC 1", down1)]
        {
            assert!(bytes > 1024.0, "{scheduling}: {what} holds {bytes} bytes on average");
        }
    }
}

#[test]
fn lowest_with_room_is_refused_under_congestion_isolation() {
    // Isolation keeps a flow's packets in order along one path and VC.
    let name = "lossless-ethernet/one-tree-ici-plus";
    let dir = std::path::PathBuf::from(format!("{}/../../scenarios/lossless-ethernet", env!("CARGO_MANIFEST_DIR")));
    let o = [("nic.injection_vc".to_string(), "\"lowest_with_room\"".to_string())];
    match snarl_core::load_config_in(&scenario_file(name), Some(&dir), &o, None) {
        Err(Error::Config { path, .. }) => assert_eq!(path, "nic.injection_vc"),
        other => panic!("expected a config error at nic.injection_vc, got {:?}", other.map(|_| ())),
    }
    assert!(snarl_core::load_config_in(&scenario_file(name), Some(&dir), &[], None).is_ok());
}

#[test]
fn any_vc_lets_a_flow_injected_on_one_vc_wait_on_every_vc_of_a_hop() {
    let keep = mean_bytes(&[("routing.select", "\"adaptive\"")]);
    assert!(keep[2] == 0.0 || keep[3] == 0.0, "kept: one VC at the receiver: {keep:?}");
    for select in ["random", "adaptive"] {
        let [_, _, down0, down1] =
            mean_bytes(&[("routing.vcs", "\"any\""), ("routing.select", &format!("\"{select}\""))]);
        // The flow is injected on one VC; the switches move its packets to whichever VC
        // has room, so the receiver's queues on both VCs back up.
        assert!(down0 > 1024.0 && down1 > 1024.0, "{select}: receiver VC 0 {down0}, VC 1 {down1}");
    }
}

#[test]
fn any_vc_is_refused_beyond_eight_vcs_and_only_up_down_has_it() {
    let o = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
    // A waiting request records its choice of VCs in a byte.
    let nine = o(&[("switch.vcs", "9"), ("routing.vcs", "\"any\"")]);
    let err = match load_config(ONE_FLOW, &nine, None) {
        Ok(config) => Simulation::new(&config).err().expect("nine VCs offered at once are refused"),
        Err(e) => e,
    };
    assert!(matches!(err, Error::Config { ref path, .. } if path == "routing.vcs"), "{err}");
    let dmodk = o(&[("routing", "{ type = \"dmodk\", vcs = \"any\" }")]);
    assert!(load_config(ONE_FLOW, &dmodk, None).is_err(), "dmodk has no vcs key");
}
