//! How a fabric recovers from a burst: the throughput before it, how deep it drops, and
//! when it comes back.

use crate::report::Recovery;

/// Tolerance of "back to the pre-burst level".
const WITHIN: f64 = 0.05;

/// `throughput[w]` is the accepted load of window `w` (of `window` ps). The burst begins
/// at `burst_start` and ends at `burst_end` (when the offending senders are capped); the
/// pre-burst level is the mean over the windows from `measure_from` to the burst. The
/// fabric has recovered at the first window, after the end of the burst and after the
/// lowest window, back within 5% of that level. Only whole windows count: a last window
/// cut short by the run's `end` would read as a drop (its load is over a whole window).
/// Times in the result are in units of `ps_per_unit`, from the end of the burst.
pub fn recovery(
    throughput: &[f64],
    window: u64,
    measure_from: u64,
    burst_start: u64,
    burst_end: u64,
    end: u64,
    ps_per_unit: f64,
) -> Option<Recovery> {
    let throughput = &throughput[..throughput.len().min((end / window) as usize)];
    let first = measure_from.div_ceil(window) as usize;
    let before_end = (burst_start / window) as usize;
    if before_end <= first || before_end > throughput.len() {
        return None;
    }
    let baseline = &throughput[first..before_end];
    let pre_burst = baseline.iter().sum::<f64>() / baseline.len() as f64;
    let level = pre_burst * (1.0 - WITHIN);
    // The deepest window from the burst on (the first of equals): a congestion tree may
    // take a while to spread, so the throughput can hold up right after the burst and
    // collapse later. Recovery is the return from that trough.
    let (trough, lowest) = throughput[before_end..]
        .iter()
        .enumerate()
        .fold((0, f64::INFINITY), |(at, low), (w, &t)| if t < low { (w, t) } else { (at, low) });
    let from = (burst_end.div_ceil(window) as usize).max(before_end + trough);
    let back = (from..throughput.len()).find(|&w| throughput[w] >= level);
    Some(Recovery {
        pre_burst_load: pre_burst,
        lowest_load: lowest,
        drop_depth: (pre_burst - lowest).max(0.0),
        recovered: back.is_some(),
        time_to_recover: back.map(|w| ((w as u64 + 1) * window).saturating_sub(burst_end) as f64 / ps_per_unit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_depth_and_recovery_window() {
        // Windows of 10: level 0.8, burst at 50..60 drops to 0.2, back at window 9.
        let t = [0.8, 0.8, 0.8, 0.8, 0.8, 0.3, 0.2, 0.4, 0.7, 0.79, 0.8];
        let r = recovery(&t, 10, 0, 50, 60, 110, 1.0).unwrap();
        assert!((r.pre_burst_load - 0.8).abs() < 1e-12);
        assert!((r.drop_depth - 0.6).abs() < 1e-12);
        assert!(r.recovered);
        assert_eq!(r.time_to_recover, Some(40.0));
    }

    #[test]
    fn reports_no_recovery() {
        let t = [0.8, 0.8, 0.1, 0.1, 0.1];
        let r = recovery(&t, 10, 0, 20, 30, 50, 1.0).unwrap();
        assert!(!r.recovered);
        assert_eq!(r.time_to_recover, None);
    }

    #[test]
    fn a_late_collapse_is_not_a_recovery() {
        // Throughput holds up right after the burst (50..60), then the congestion tree
        // spreads and it never comes back.
        let t = [0.8, 0.8, 0.8, 0.8, 0.8, 0.78, 0.79, 0.5, 0.1, 0.1, 0.12];
        let r = recovery(&t, 10, 0, 50, 60, 110, 1.0).unwrap();
        assert!((r.lowest_load - 0.1).abs() < 1e-12);
        assert!(!r.recovered, "{r:?}");
    }

    #[test]
    fn no_drop_recovers_at_once() {
        let t = [0.8, 0.8, 0.8, 0.8, 0.8, 0.79, 0.8, 0.79, 0.8];
        let r = recovery(&t, 10, 0, 50, 60, 110, 1.0).unwrap();
        assert!(r.recovered);
        assert_eq!(r.time_to_recover, Some(10.0));
    }

    #[test]
    fn a_short_last_window_is_left_out() {
        // The run ends at 105, half-way through window 10, whose load over a whole window
        // reads as a quarter of the level: it is neither the trough nor a failure to recover.
        let t = [0.8, 0.8, 0.8, 0.8, 0.8, 0.3, 0.5, 0.7, 0.8, 0.8, 0.2];
        let r = recovery(&t, 10, 0, 50, 60, 105, 1.0).unwrap();
        assert!((r.lowest_load - 0.3).abs() < 1e-12, "{r:?}");
        assert!(r.recovered);
        assert_eq!(r.time_to_recover, Some(30.0));
        let counted = recovery(&t, 10, 0, 50, 60, 110, 1.0).unwrap();
        assert!(!counted.recovered, "the same window, whole, is a late collapse: {counted:?}");
    }
}
