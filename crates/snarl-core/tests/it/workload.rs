//! `[workload]` chooses the workload; open-loop traffic (`[traffic]`) is the default, and
//! naming it changes nothing.

use crate::common::{run, SINGLE_SWITCH};
use snarl_core::{load_config, Error};

#[test]
fn naming_the_default_workload_changes_nothing() {
    let plain = run(SINGLE_SWITCH, &[]);
    let named = run(&format!("[workload]\ntype = \"open_loop\"\n{SINGLE_SWITCH}"), &[]);
    let (mut a, mut b) = (plain.summary, named.summary);
    (a.wall_seconds, b.wall_seconds) = (0.0, 0.0);
    assert_eq!(a, b, "the same workload, the same run");
    // The resolved config of either reads as it did before `[workload]` existed.
    let config = load_config(SINGLE_SWITCH, &[("workload.type".into(), "\"open_loop\"".into())], None).unwrap();
    assert!(!config.to_toml().contains("[workload]"), "{}", config.to_toml());
}

#[test]
fn an_unknown_workload_is_refused_with_the_valid_names() {
    let set = [("workload.type".to_string(), "\"open_lop\"".to_string())];
    match load_config(SINGLE_SWITCH, &set, None) {
        Err(Error::Config { path, message }) => {
            assert_eq!(path, "workload.type");
            assert!(message.contains("`open_loop`"), "{message}");
        }
        other => panic!("expected a config error, got {other:?}"),
    }
    let stray =
        [("workload.type".to_string(), "\"open_loop\"".to_string()), ("workload.load".to_string(), "0.5".to_string())];
    match load_config(SINGLE_SWITCH, &stray, None) {
        Err(Error::Config { path, .. }) => assert_eq!(path, "workload.load"),
        other => panic!("expected a config error, got {other:?}"),
    }
}
