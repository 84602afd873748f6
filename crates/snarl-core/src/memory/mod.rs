//! Memory: what a run will need ([`estimate`]), what the machine can give it
//! ([`available`]), and allocation that fails with an error instead of aborting
//! ([`fallible`]). [`check`] refuses a config whose estimate exceeds
//! `simulation.max_memory` (default: the memory available) before anything is built.

mod available;
mod estimate;
pub mod fallible;
pub mod huge_pages;
pub mod prefetch;

pub use available::{available, FALLBACK};
pub(crate) use estimate::{bytes_of, mul, sum};
pub use estimate::{estimate, Estimate, SERIES};

use crate::config::Config;
use crate::error::{Error, Result};

/// Key path of memory refusals: the limit a user lowers to be refused earlier.
pub const MEMORY_KEY: &str = "simulation.max_memory";

/// The estimate of `config`, or a config error if it exceeds the limit: at
/// `simulation.window` when the time series alone exceed it, at `simulation.max_memory`
/// otherwise. The message names the fabric's size and the estimate.
pub fn check(config: &Config) -> Result<Estimate> {
    let estimate = estimate(config);
    let (limit, source) = match config.simulation.max_memory {
        Some(bytes) => (bytes.0, "set by `simulation.max_memory`"),
        None => available(),
    };
    let total = estimate.total();
    if total <= limit {
        return Ok(estimate);
    }
    let f = &estimate.fabric;
    let limit_text = format!("{} ({source})", human(limit));
    let series = estimate.part(SERIES);
    if series > limit {
        let duration = config.simulation.duration;
        return Err(Error::config(
            "simulation.window",
            format!(
                "the time series of a {duration} run in windows this narrow need about {} alone, more than the {} \
                 the run may use: widen the window",
                human(series),
                limit_text
            ),
        ));
    }
    let largest: Vec<String> = {
        let mut parts = estimate.parts.clone();
        parts.sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
        parts.iter().take(3).map(|(what, bytes)| format!("{what} {}", human(*bytes))).collect()
    };
    Err(Error::config(
        MEMORY_KEY,
        format!(
            "the fabric of {} hosts and {} switches ({} ports) needs an estimated {} ({}), more than the {}: \
             make it smaller or raise `{MEMORY_KEY}`",
            thousands(f.hosts),
            thousands(f.switches()),
            thousands(f.ports()),
            human(total),
            largest.join(", "),
            limit_text
        ),
    ))
}

/// Bytes for people: "512 B", "4.0 KiB", "9.6 GiB", "1.2 EiB".
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// 4210688 -> "4,210,688"; the saturated u64::MAX reads "more than 10^19".
fn thousands(n: u64) -> String {
    if n == u64::MAX {
        return "more than 10^19".into();
    }
    crate::report::text::int(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(4096), "4.0 KiB");
        assert_eq!(human(10_307_921_510), "9.6 GiB");
        assert_eq!(human(u64::MAX), "16.0 EiB");
        assert_eq!(thousands(4_210_688), "4,210,688");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(u64::MAX), "more than 10^19");
    }
}
