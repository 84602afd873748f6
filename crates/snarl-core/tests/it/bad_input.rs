//! Bad input is refused before anything runs, with the key path and a hint.

use crate::common::SINGLE_SWITCH;
use snarl_core::{load_config, Error};

fn config_error(overrides: &[(&str, &str)]) -> (String, String) {
    let o: Vec<(String, String)> = overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    match load_config(SINGLE_SWITCH, &o, None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn misspelt_key() {
    let (path, message) = config_error(&[("traffic.lod", "0.5")]);
    assert_eq!(path, "traffic.lod");
    assert!(message.contains("`load`"), "{message}");
}

#[test]
fn wrong_variant() {
    let (path, message) = config_error(&[("routing.type", "ecmpp")]);
    assert_eq!(path, "routing.type");
    assert!(message.contains("`ecmp`"), "{message}");
}

#[test]
fn negative_load() {
    let (path, _) = config_error(&[("traffic.load", "-0.5")]);
    assert_eq!(path, "traffic.load");
}

#[test]
fn keys_that_would_change_nothing_are_refused() {
    // Crossbar allocation is round robin; a key that offered no other choice is gone.
    let (path, _) = config_error(&[("switch.arbiter", "round_robin")]);
    assert_eq!(path, "switch.arbiter");
}

#[test]
fn mtu_beyond_32_bit_packet_sizes() {
    let big = [("nic.mtu", "8GiB"), ("switch.input_buffer", "8GiB"), ("switch.output_buffer", "8GiB")];
    let (path, message) = config_error(&big);
    assert_eq!(path, "nic.mtu");
    assert!(message.contains("at most 1GiB"), "{message}");
}

#[test]
fn windows_by_the_billion_are_refused() {
    let (path, message) = config_error(&[("simulation.duration", "1s"), ("simulation.window", "1ps")]);
    assert_eq!(path, "simulation.window");
    assert!(message.contains("use at least 100ns"), "{message}");
}

#[test]
fn bad_unit() {
    let (path, message) = config_error(&[("links.host.rate", "100 parsecs")]);
    assert!(path.starts_with("links.host.rate"), "{path}");
    assert!(message.contains("unknown rate unit"), "{message}");
}

#[test]
fn impossible_topology_is_refused_before_the_run() {
    let o = vec![("topology.hosts".to_string(), "1".to_string())];
    let e = load_config(SINGLE_SWITCH, &o, None).unwrap_err();
    assert!(matches!(e, Error::Config { ref path, .. } if path == "topology.hosts"), "{e}");
}

#[test]
fn group_larger_than_fabric() {
    let text = format!("{SINGLE_SWITCH}\n[[traffic.groups]]\nname = \"big\"\ncount = 9\n");
    let config = load_config(&text, &[], None).unwrap();
    let e = snarl_core::run(&config).unwrap_err();
    assert!(matches!(e, Error::Config { ref path, .. } if path == "traffic.groups.0"), "{e}");
}

/// Hotspot regions split the senders' own group, one host at least per region: more
/// regions than hosts (known only once the groups are placed), another host set, or a
/// random choice among the hotspots are refused at their key.
#[test]
fn hotspot_regions_that_cannot_be_formed_are_refused() {
    let group = |pattern: &str| {
        format!("{SINGLE_SWITCH}\n[[traffic.groups]]\nname = \"hs\"\ncount = 5\npattern = {{ {pattern} }}\n")
    };
    let too_many = group("type = \"hotspot\", hotspots = 6, among = \"group\", regions = true");
    let config = load_config(&too_many, &[], None).unwrap();
    match snarl_core::run(&config) {
        Err(Error::Config { path, message }) => {
            assert_eq!(path, "traffic.groups.0.pattern.hotspots");
            assert!(message.contains("5 host(s) of group `hs`"), "{message}");
        }
        other => panic!("expected a config error, got {:?}", other.map(|r| r.summary.accepted_load)),
    }
    let refused = [
        ("type = \"hotspot\", hotspots = 2, among = \"all\", regions = true", "traffic.groups.0.pattern.regions"),
        (
            "type = \"hotspot\", hotspots = 2, among = \"group\", assign = \"random\", regions = true",
            "traffic.groups.0.pattern.assign",
        ),
    ];
    for (pattern, want) in refused {
        match load_config(&group(pattern), &[], None) {
            Err(Error::Config { path, .. }) => assert_eq!(path, want, "{pattern}"),
            other => panic!("{pattern}: expected a config error, got {other:?}"),
        }
    }
    // As many regions as hosts would leave nobody to send: the group is refused as silent.
    let one_each = group("type = \"hotspot\", hotspots = 5, among = \"group\", regions = true");
    let e = snarl_core::run(&load_config(&one_each, &[], None).unwrap()).unwrap_err();
    assert!(matches!(e, Error::Config { ref path, .. } if path == "traffic.groups.0.pattern"), "{e}");
    let fine = group("type = \"hotspot\", hotspots = 2, among = \"group\", regions = true");
    assert!(snarl_core::run(&load_config(&fine, &[], None).unwrap()).is_ok());
}

/// A load so small that 1 - p rounds to 1 made the Bernoulli sampler loop forever: any
/// load in (0, 1] finishes, whether a group's or a phase's, and such a group generates
/// nothing within the run.
#[test]
fn tiny_loads_finish() {
    let tiny = ["1e-17", "1e-300", "2.2250738585072014e-308"]; // the last is f64::MIN_POSITIVE
    for process in ["bernoulli", "poisson", "periodic"] {
        let text = format!(
            "{SINGLE_SWITCH}
[[traffic.groups]]
name = \"a\"
count = 2
load = {}
[[traffic.groups]]
name = \"b\"
count = 2
load = {}
[[traffic.phases]]
at = \"50us\"
group = \"a\"
load = {}
[[traffic.phases]]
at = \"60us\"
group = \"b\"
load = {}
",
            tiny[0], tiny[1], tiny[2], tiny[0]
        );
        let report = crate::common::run(&text, &[("traffic.process", &format!("\"{process}\""))]);
        for group in ["a", "b"] {
            assert_eq!(report.summary.groups[group].offered_load, 0.0, "{process}: group {group}");
        }
        assert!(report.summary.groups["default"].accepted_load > 0.4, "{process}");
    }
}

/// A pattern that gives none of its group's hosts a destination (other than itself) is
/// refused with its key path instead of sending nothing in silence.
#[test]
fn patterns_without_destination_are_refused() {
    let group = |pattern: &str, count: u32| {
        format!("{SINGLE_SWITCH}\n[[traffic.groups]]\nname = \"solo\"\ncount = {count}\npattern = {pattern}\n")
    };
    let phase =
        "[[traffic.phases]]\nat = \"50us\"\ngroup = \"solo\"\npattern = { type = \"uniform\", among = \"group\" }\n";
    let refused = [
        (group("{ type = \"uniform\", among = \"group\" }", 1), "traffic.groups.0.pattern"),
        (group("{ type = \"permutation\", among = \"group\" }", 1), "traffic.groups.0.pattern"),
        (group("{ type = \"shift\", offset = 3, among = \"group\" }", 3), "traffic.groups.0.pattern"),
        (group("{ type = \"hotspot\", among = \"group\" }", 1), "traffic.groups.0.pattern"),
        (group("{ type = \"incast\", destination = 0 }", 1), "traffic.groups.0.pattern"),
        (format!("{}{phase}", group("{ type = \"uniform\" }", 1)), "traffic.phases.0.pattern"),
        (format!("{SINGLE_SWITCH}\npattern = {{ type = \"shift\", offset = 8 }}\n"), "traffic.pattern"),
    ];
    for (text, want) in refused {
        let config = load_config(&text, &[], None).unwrap_or_else(|e| panic!("{e}\n{text}"));
        match snarl_core::run(&config) {
            Err(Error::Config { path, message }) => {
                assert_eq!(path, want, "{message}");
                assert!(message.contains("no host of group") && message.contains("silent"), "{message}");
            }
            other => panic!("{text}: expected a config error, got {:?}", other.map(|r| r.summary.accepted_load)),
        }
    }
    // A hotspot among its own group does not send to itself, but the others do; a group
    // that does not send may have any pattern.
    for text in [
        group("{ type = \"hotspot\", among = \"group\" }", 3),
        format!("{}load = 0.0\n", group("{ type = \"uniform\", among = \"group\" }", 1)),
    ] {
        let config = load_config(&text, &[], None).unwrap();
        assert!(snarl_core::run(&config).is_ok(), "{text}");
    }
}

#[test]
fn voq_on_a_shared_buffer_switch_is_refused_at_its_key() {
    let shared = [("switch.type", "shared_buffer"), ("flow_control.type", "none")];
    let (path, message) = config_error(&[&shared[..], &[("switch.input_queuing", "voq")]].concat());
    assert_eq!(path, "switch.input_queuing");
    assert!(message.contains("`ioq` switches only"), "{message}");
    let (_, message) = config_error(&[("switch.input_queuing", "vqo")]);
    assert!(message.contains("did you mean `voq`"), "{message}");
}

#[test]
fn a_receive_cap_without_credits_or_switches_or_rate_is_refused_at_its_key() {
    let (path, message) = config_error(&[("nic.receive_cap", "0Gbps")]);
    assert_eq!(path, "nic.receive_cap");
    assert!(message.contains("positive"), "{message}");
    let pfc = [("switch.type", "shared_buffer"), ("flow_control.type", "pfc")];
    let pfc = [&pfc[..], &[("flow_control.xoff", "8"), ("flow_control.xon", "4"), ("nic.receive_cap", "10Gbps")]];
    let (path, message) = config_error(&pfc.concat());
    assert_eq!(path, "nic.receive_cap");
    assert!(message.contains("credit flow control"), "{message}");
    let o = vec![("topology".to_string(), "{ type = \"back_to_back\" }".to_string())];
    let o = [o, vec![("nic.receive_cap".to_string(), "10Gbps".to_string())]].concat();
    match load_config(SINGLE_SWITCH, &o, None) {
        Err(Error::Config { path, message }) => {
            assert_eq!(path, "nic.receive_cap");
            assert!(message.contains("attached to switches"), "{message}");
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

/// A congestion control whose notifications (64 B) cannot fit a switch buffer would
/// never send one: it is refused at the buffer's key, not run as if it acted.
#[test]
fn congestion_control_with_buffers_smaller_than_a_notification_is_refused() {
    let tiny = [("nic.mtu", "32B"), ("switch.input_buffer", "32B"), ("switch.output_buffer", "32B")];
    for cc in ["ibcc", "dcqcn", "per_pair"] {
        let mut o = tiny.to_vec();
        o.push(("congestion_control.type", cc));
        let (path, message) = config_error(&o);
        assert_eq!(path, "switch.input_buffer", "{cc}: {message}");
        assert!(message.contains("64 B congestion notification"), "{message}");
    }
    // Without congestion control the same buffers are fine.
    let o: Vec<(String, String)> = tiny.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert!(load_config(SINGLE_SWITCH, &o, None).is_ok());
}

/// A group listing a host twice, or named with a control character, is refused at the
/// key (both were accepted: `[0, 0, 1]` as two hosts, a NUL reaching the HTML raw).
#[test]
fn groups_with_repeated_hosts_or_unprintable_names_are_refused() {
    let group =
        |name: &str, hosts: &str| format!("{SINGLE_SWITCH}\n[[traffic.groups]]\nname = \"{name}\"\nhosts = {hosts}\n");
    let error = |text: String| match load_config(&text, &[], None) {
        Err(Error::Config { path, message }) => (path, message),
        other => panic!("expected a config error, got {other:?}"),
    };
    let (path, message) = error(group("pair", "[0, 0, 1]"));
    assert_eq!(path, "traffic.groups.0.hosts.1");
    assert!(message.contains("host 0 is listed twice"), "{message}");
    let (path, _) = error(group("a\\u0000b", "[0, 1]"));
    assert_eq!(path, "traffic.groups.0.name");
    assert!(load_config(&group("pair", "[0, 1]"), &[], None).is_ok());
}

/// Settings that could have no effect are refused rather than run as if they acted.
#[test]
fn settings_that_could_never_act_are_refused() {
    // UGAL's redraw reconsiders waiting packets' routes; a VoQ switch never does.
    let text = SINGLE_SWITCH.replace(
        "type = \"single_switch\"\nhosts = 8",
        "type = \"dragonfly\"\nhosts_per_switch = 2\nswitches_per_group = 4\nglobal_links_per_switch = 2",
    );
    let o: Vec<(String, String)> =
        [("routing.type", "ugal"), ("routing.redraw", "true"), ("switch.input_queuing", "voq")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    match load_config(&text, &o, None) {
        Err(Error::Config { path, .. }) => assert_eq!(path, "routing.redraw"),
        other => panic!("expected a config error, got {other:?}"),
    }
    // Congestion isolation that no egress queue could ever trigger.
    let isolation = [
        ("switch.type", "shared_buffer"),
        ("switch.egress_cap", "64KiB"),
        ("switch.port_buffer", "512KiB"),
        ("flow_control.type", "pfc"),
        ("flow_control.xoff", "50"),
        ("flow_control.xon", "45"),
        ("isolation.type", "ci"),
        ("isolation.detect", "32"),
    ];
    let (path, message) = config_error(&isolation);
    assert_eq!(path, "isolation.detect", "{message}");
    assert!(message.contains("nothing would ever be detected"), "{message}");
}
