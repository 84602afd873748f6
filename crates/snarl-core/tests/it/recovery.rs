//! Postigo et al. (SNTA'24), Section 4: the hotspot region throttled in steady state
//! (Figure 2), and the recovery of the fabric after a hotspot burst, with one hotspot
//! region (Figure 3) or seven (Figure 4). The runs follow the recovery scenarios: 20,000
//! cycles of uniform traffic at full load, a burst of the hotspot senders at full load,
//! then the senders capped below their hotspot's limit; here for 40,000 cycles after the
//! burst (the scenarios run 140,000), seed 1. Throughput is the accepted load of all
//! servers per 1,000-cycle window, as the paper plots it. Where snarl does not match the
//! paper, the test asserts snarl's value and docs/validation.md says why.

use crate::common::*;

/// Cycles simulated after the burst.
const AFTER: u64 = 40_000;

/// Accepted load per window: (window start in cycles, load).
type Series = Vec<(f64, f64)>;

/// Accepted load of all servers per whole 1,000-cycle window (window start in cycles, load),
/// for `fabric` with one or seven hotspot regions and a burst of `burst` cycles (0: the
/// senders are capped from cycle 20,000 on, the steady state of Figure 2).
fn throughput(fabric: &str, regions: u32, burst: u64) -> Series {
    throughput_capped(fabric, regions, burst, None)
}

/// [`throughput`] with the hotspot senders' cap after the burst replaced by `cap` (the
/// control runs: "1.0" leaves them uncapped).
fn throughput_capped(fabric: &str, regions: u32, burst: u64, control: Option<&str>) -> Series {
    let text = scenario_file(&format!("endpoint-congestion/recovery-{fabric}"));
    let caps = match fabric {
        "hyperx" => ["0.0079", "0.0588"],
        "megafly" => ["0.0075", "0.0555"],
        _ => ["0.0090", "0.0714"],
    };
    let (pattern, cap) = if regions == 1 {
        ("{ type = \"hotspot\", hotspots = 1, among = \"group\" }", caps[0])
    } else {
        ("{ type = \"hotspot\", hotspots = 7, among = \"group\", regions = true }", caps[1])
    };
    let cap = control.unwrap_or(cap);
    let end = format!("{}cycles", 20_000 + burst);
    let duration = format!("{}cycles", 20_000 + burst + AFTER);
    let o = [
        ("traffic.phases.0.pattern", pattern),
        ("traffic.phases.1.cap", cap),
        ("traffic.phases.1.at", end.as_str()),
        ("simulation.duration", duration.as_str()),
    ];
    let report = run(&text, &o);
    let series = report.table("timeseries").expect("a time series");
    let (
        Some(snarl_core::ColumnData::F64(time)),
        Some(snarl_core::ColumnData::Str(group)),
        Some(snarl_core::ColumnData::F64(load)),
    ) = (series.column("time"), series.column("group"), series.column("accepted_load"))
    else {
        panic!("unexpected time series columns");
    };
    // Whole windows only: the last may be cut short by the end of the run.
    let end = (20_000 + burst + AFTER) as f64;
    (0..time.len()).filter(|&i| group[i] == "all" && time[i] + 1_000.0 <= end).map(|i| (time[i], load[i])).collect()
}

/// Mean throughput over [from, to) cycles.
fn mean(series: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = series.iter().filter(|(t, _)| *t >= from && *t < to).map(|&(_, a)| a).collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// What a burst did: the lowest window after it began, and the cycles from the cap until
/// the first window after that trough back within 5% of `stationary` (None: not by the end).
fn recovery(series: &[(f64, f64)], burst: u64, stationary: f64) -> (f64, Option<f64>) {
    let cap = 20_000.0 + burst as f64;
    let after: Vec<(f64, f64)> = series.iter().copied().filter(|(t, _)| *t >= 20_000.0).collect();
    let (trough_at, trough) = after.iter().copied().fold((0.0, f64::INFINITY), |m, p| if p.1 < m.1 { p } else { m });
    let back = after.iter().find(|&&(t, a)| t >= trough_at && t >= cap && a >= 0.95 * stationary);
    (trough, back.map(|&(t, _)| t + 1_000.0 - cap))
}

/// How close the last 10,000 cycles after a 1,000-cycle burst must come to snarl's value:
/// tight enough that the fabric with its hotspot senders left uncapped (total collapse,
/// the control of `the_recovery_ends_fail_without_the_cap`) falls outside it.
const LONG_END: f64 = 0.01;

/// Figure 2 and Figure 3 (one hotspot region), seed 1. Measured (docs/validation.md):
///
/// | fabric | throttled steady state | 100-cycle burst: trough, back after | 1,000: last 10,000 cycles |
/// |---|---|---|---|
/// | fat-tree | 0.873 (paper 0.87) | 0.374, 6,900 cycles | 0.052 |
/// | HyperX | 0.869 (0.88) | 0.419, not within 40,000 (0.705 at the end) | 0.031 |
/// | Megafly | 0.863 (0.81) | 0.460, not within 40,000 (0.555) | 0.022 |
/// | Dragonfly | 0.813 (0.77) | 0.788, 4,900 cycles | 0.211 |
///
/// As in the paper: every steady state but the Megafly's within 0.05 (the Megafly's, like
/// its saturation, sits 0.05 above); the fat-tree and the Dragonfly back from a 100-cycle
/// burst within 25,000 and 10,000 cycles; the Dragonfly losing less in the trough than the
/// fat-tree and the Megafly; the fat-tree below 0.2 after a 1,000-cycle burst. Unlike the
/// paper, the HyperX and the Megafly do not recover from a 100-cycle burst within 40,000
/// cycles and stay near zero after a 1,000-cycle one: asserted at snarl's values, within
/// 0.05 (the 100-cycle burst) and `LONG_END` (the 1,000-cycle one).
#[test]
fn hotspot_bursts_and_recovery_follow_figures_2_and_3() {
    let fabrics = ["fat-tree", "hyperx", "megafly", "dragonfly"];
    let runs: Vec<[Series; 3]> = std::thread::scope(|scope| {
        let handles: Vec<_> = fabrics
            .iter()
            .map(|f| scope.spawn(move || [throughput(f, 1, 0), throughput(f, 1, 100), throughput(f, 1, 1000)]))
            .collect();
        handles.into_iter().map(|h| h.join().expect("recovery runs")).collect()
    });
    // (steady state and its tolerance, the 100-cycle burst's recovery: Ok(within cycles)
    // or Err(last 10,000 cycles), the 1,000-cycle burst's last 10,000 cycles)
    type Expected = ((f64, f64), Result<f64, f64>, f64);
    let expected: [Expected; 4] = [
        ((0.87, 0.05), Ok(25_000.0), 0.052),
        ((0.88, 0.05), Err(0.705), 0.031),
        ((0.863, 0.02), Err(0.555), 0.022),
        ((0.77, 0.05), Ok(10_000.0), 0.211),
    ];
    let mut troughs = Vec::new();
    let mut steady_states = Vec::new();
    for ((fabric, [steady, short, long]), ((value, tolerance), short_burst, long_end)) in
        fabrics.iter().zip(&runs).zip(expected)
    {
        let stationary = mean(steady, 30_000.0, 60_000.0);
        assert_close(&format!("{fabric} throttled steady state"), stationary, value, tolerance);
        steady_states.push(stationary);
        let (trough, back) = recovery(short, 100, stationary);
        troughs.push(trough);
        match short_burst {
            Ok(within) => {
                let back = back.unwrap_or_else(|| panic!("{fabric}: no recovery from a 100-cycle burst"));
                assert!(back <= within, "{fabric}: back after {back} cycles, not within {within}");
            }
            Err(end) => {
                assert_eq!(back, None, "{fabric} now recovers from a 100-cycle burst: update docs/validation.md");
                assert_close(&format!("{fabric} after a 100-cycle burst"), mean(short, 50_100.0, 60_100.0), end, 0.05);
            }
        }
        assert_close(
            &format!("{fabric} after a 1,000-cycle burst"),
            mean(long, 51_000.0, 61_000.0),
            long_end,
            LONG_END,
        );
    }
    let [fat_tree, hyperx, megafly, dragonfly] = steady_states[..] else { unreachable!() };
    readme_says(&format!("the fabric keeps {hyperx:.2}, {fat_tree:.2}, {megafly:.2} and {dragonfly:.2}"));
    let [fat_tree, _, megafly, dragonfly] = troughs[..] else { unreachable!() };
    assert!(dragonfly > fat_tree.max(megafly), "troughs: {troughs:?}");
    assert!(mean(&runs[0][2], 51_000.0, 61_000.0) < 0.2, "the fat-tree after a 1,000-cycle burst");
}

/// Figure 4 (seven hotspot regions), seed 1. The paper has the HyperX and the Dragonfly
/// recover from a 1,000-cycle burst within 20,000 cycles of its start and the fat-tree
/// from a 500-cycle one. snarl's Dragonfly recovers, within 29,000 cycles of the cap
/// (asserted within 35,000); its HyperX stays at 0.215 and its fat-tree at 0.340 over the
/// last 10,000 of 40,000 cycles (asserted within 0.05): docs/validation.md.
#[test]
fn recovery_with_seven_hotspot_regions_follows_figure_4() {
    let runs: Vec<(f64, Series, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = [("dragonfly", 1000), ("hyperx", 1000), ("fat-tree", 500)]
            .into_iter()
            .map(|(f, burst)| {
                scope.spawn(move || (mean(&throughput(f, 7, 0), 30_000.0, 60_000.0), throughput(f, 7, burst), burst))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("recovery runs")).collect()
    });
    let (stationary, series, burst) = &runs[0];
    let back = recovery(series, *burst, *stationary).1.expect("the Dragonfly recovers");
    assert!(back <= 35_000.0, "the Dragonfly back after {back} cycles");
    for ((stationary, series, burst), (fabric, end)) in runs[1..].iter().zip([("hyperx", 0.215), ("fat-tree", 0.340)]) {
        assert_eq!(recovery(series, *burst, *stationary).1, None, "{fabric} now recovers: update docs/validation.md");
        let cap = 20_000.0 + *burst as f64;
        assert_close(&format!("{fabric} after the burst"), mean(series, cap + 30_000.0, cap + 40_000.0), end, 0.05);
    }
}

/// The control of the 1,000-cycle recovery ends: with the hotspot senders left uncapped
/// after the burst, the fat-tree and the HyperX end lower, outside the window
/// `hotspot_bursts_and_recovery_follow_figures_2_and_3` asserts around the capped value
/// (so that test fails if the cap stops working). snarl's Megafly ends collapsed with the
/// cap or without it (measured 0.022 and 0.020): the cap does not rescue it, unlike the
/// paper's, and this test pins that too (docs/validation.md).
#[test]
fn the_recovery_ends_fail_without_the_cap() {
    let fabrics = [("fat-tree", 0.052, true), ("hyperx", 0.031, true), ("megafly", 0.022, false)];
    let ends: Vec<f64> = std::thread::scope(|scope| {
        let handles: Vec<_> = fabrics
            .iter()
            .map(|&(f, _, _)| {
                scope.spawn(move || mean(&throughput_capped(f, 1, 1000, Some("1.0")), 51_000.0, 61_000.0))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("control runs")).collect()
    });
    for (&(fabric, capped, cap_matters), uncapped) in fabrics.iter().zip(ends) {
        let apart = (uncapped - capped).abs() > LONG_END;
        assert_eq!(apart, cap_matters, "{fabric}: uncapped {uncapped:.3} against capped {capped}");
    }
}
