//! Same config and seed, same report, byte for byte (wall time aside).

use crate::common::*;

fn summary_without_wall_time(overrides: &[(&str, &str)]) -> String {
    let mut r = run(SINGLE_SWITCH, overrides);
    r.summary.wall_seconds = 0.0;
    r.summary_json()
}

#[test]
fn same_seed_same_summary() {
    let a = summary_without_wall_time(&[("traffic.load", "0.8")]);
    let b = summary_without_wall_time(&[("traffic.load", "0.8")]);
    assert_eq!(a, b);
}

#[test]
fn different_seed_different_summary() {
    let a = summary_without_wall_time(&[("seed", "1")]);
    let b = summary_without_wall_time(&[("seed", "2")]);
    assert_ne!(a, b);
}

#[test]
fn same_seed_same_time_series() {
    let a = run(SINGLE_SWITCH, &[("traffic.load", "0.9")]);
    let b = run(SINGLE_SWITCH, &[("traffic.load", "0.9")]);
    assert_eq!(a.tables, b.tables);
    assert!(a.table("timeseries").expect("a time series").rows() > 100);
}

#[test]
fn the_watchdog_interval_does_not_change_the_summary() {
    let a = summary_without_wall_time(&[("simulation.watchdog", "3us")]);
    let b = summary_without_wall_time(&[("simulation.watchdog", "500us")]);
    assert_eq!(a, b);
}
