//! The scenarios shipped in `scenarios/basics`, run as tests against analysis and the
//! literature. Runs are shortened where the asserted quantity is already stable.

use crate::common::*;

const FAT_TREE_1024: &str = include_str!("../../../../scenarios/basics/fat-tree-1024-uniform.toml");
const SPINE_LEAF: &str = include_str!("../../../../scenarios/basics/spine-leaf-oversubscribed.toml");
const SILENT_FOREST: &str = include_str!("../../../../scenarios/basics/fat-tree-648-hotspot.toml");
const INCAST: &str = include_str!("../../../../scenarios/basics/single-switch-incast.toml");

/// A full-bisection fat-tree keeps up with uniform traffic at 90% load.
#[test]
fn fat_tree_1024_uniform_at_0_9_accepts_at_least_0_85() {
    let r = run(FAT_TREE_1024, &[("traffic.load", "0.9")]);
    assert_eq!(r.summary.groups["default"].hosts, 1024);
    assert!(r.summary.accepted_load >= 0.85, "accepted {}", r.summary.accepted_load);
}

/// At 1:0.5 oversubscription, a permutation whose flows all cross the spines is capped
/// at half the host capacity.
#[test]
fn spine_leaf_half_oversubscribed_caps_cross_leaf_permutation_at_0_5() {
    let r = run(SPINE_LEAF, &[]);
    assert_close("accepted", r.summary.accepted_load, 0.5, 0.03);
}

/// Without oversubscription the same permutation runs near line rate: the cap above is
/// the uplinks', not the model's.
#[test]
fn spine_leaf_without_oversubscription_carries_the_permutation() {
    let r = run(SPINE_LEAF, &[("topology.oversubscription", "1:1"), ("routing.type", "dmodk")]);
    assert!(r.summary.accepted_load > 0.9, "accepted {}", r.summary.accepted_load);
}

#[test]
fn incast_scenario_fills_the_receiver_link() {
    let r = run(INCAST, &[("simulation.duration", "200us")]);
    assert_close("receiver", r.summary.groups["receiver"].received_load, 1.0, 0.02);
    assert_close("each sender", r.summary.groups["senders"].accepted_load, 1.0 / 7.0, 0.01);
}

/// Gran et al. (Table II, hotspots without CC): the hotspots receive at line rate while
/// the uniform senders, victims of head-of-line blocking in the congestion trees, get a
/// small fraction of what they offer (0.168 of 2.7 Gb/s received in the paper).
#[test]
fn silent_forest_collapses_the_victims() {
    let r = run(SILENT_FOREST, &[]);
    let g = &r.summary.groups;
    let victims = &g["victims"];
    assert!(victims.offered_load > 0.6, "victims offer {}", victims.offered_load);
    assert!(
        victims.accepted_load < 0.25 * victims.offered_load,
        "victims accepted {} of {} offered",
        victims.accepted_load,
        victims.offered_load
    );
    assert!(g["hotspots"].received_load > 0.9, "hotspots receive {}", g["hotspots"].received_load);
}

/// Without the contributors, the same victims get everything they offer.
#[test]
fn silent_forest_victims_are_fine_without_hotspot_traffic() {
    let r = run(SILENT_FOREST, &[("traffic.groups.1.load", "0.0"), ("simulation.duration", "1ms")]);
    let victims = &r.summary.groups["victims"];
    assert_close("victims", victims.accepted_load, victims.offered_load, 0.03);
}

/// A group of `count = 0` is empty: the run goes on without it, its figures are zero, and
/// the hosts fall to the other groups (a sweep may zip a role down to no host).
#[test]
fn an_empty_group_runs_and_reports_zero() {
    let text = r#"
        [simulation]
        duration = "50us"
        [topology]
        type = "single_switch"
        hosts = 4
        [traffic]
        load = 0.5
        [[traffic.groups]]
        name = "gone"
        count = 0
        pattern = { type = "incast", destination = 0 }
        [[traffic.groups]]
        name = "others"
        rest = true
    "#;
    let r = run(text, &[]);
    let gone = &r.summary.groups["gone"];
    assert_eq!(gone.hosts, 0);
    assert_eq!((gone.offered_load, gone.accepted_load, gone.received_load), (0.0, 0.0, 0.0));
    assert_eq!(r.summary.groups["others"].hosts, 4);
    assert_close("the others", r.summary.groups["others"].accepted_load, 0.5, 0.1);
}
