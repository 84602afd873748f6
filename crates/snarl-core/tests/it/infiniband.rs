//! The InfiniBand congestion-control study (Gran et al., "Exploring the scope of the
//! InfiniBand congestion control mechanism", IPDPS 2012) on the scenarios of
//! `scenarios/infiniband-cc/`. The paper's findings (Table II, Figures 8 to 10, Frame I)
//! and the control runs that show each can fail are data in
//! `scenarios/infiniband-cc/findings.toml`, run by `bindings/python/tests/
//! test_reproductions.py` (`snarl findings --controls`): a finding is written once. Here:
//! the figures the README quotes.

use crate::common::*;
use snarl_core::Report;

fn ib(scenario: &str, overrides: &[(&str, &str)]) -> Report {
    run(&scenario_file(&format!("infiniband-cc/{scenario}")), overrides)
}

/// A figure of the summary by its dotted key (`receive_rate.non_hotspots`).
fn figure(r: &Report, key: &str) -> f64 {
    let summary = serde_json::to_value(&r.summary).unwrap();
    let value = key.split('.').fold(&summary, |v, k| &v[k]);
    value.as_f64().unwrap_or_else(|| panic!("no figure `{key}` in the summary"))
}

/// The runs of `scenario` with CC off and on, side by side (two threads).
fn off_and_on(scenario: &str, overrides: &[(&str, &str)]) -> (Report, Report) {
    std::thread::scope(|s| {
        let off = s.spawn(|| ib(&format!("{scenario}-cc-off"), overrides));
        let on = ib(&format!("{scenario}-cc-on"), overrides);
        (off.join().unwrap(), on)
    })
}

/// Table II, the silent forest, as the README quotes it (the findings file asserts the
/// paper's factors): the victims and the total with CC off and on, and IB CC at work
/// within its table.
#[test]
fn the_readme_quotes_the_silent_forest() {
    let (off, on) = off_and_on("silent-forest", &[]);
    let non = (figure(&off, "receive_rate.non_hotspots"), figure(&on, "receive_rate.non_hotspots"));
    let total = (figure(&off, "total_throughput"), figure(&on, "total_throughput"));
    readme_says(&format!(
        "IB CC lifts the victims from {:.2} to {:.2} Gb/s (paper: 0.17 to 2.25) and the total from {:.0} to {:.0} Gb/s",
        non.0, non.1, total.0, total.1
    ));
    assert!(figure(&on, "ibcc.fecn_marks") > 0.0 && figure(&on, "ibcc.becns") > 0.0);
    assert!(figure(&on, "ibcc.ccti_max") <= 127.0);
}
