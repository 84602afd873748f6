//! snarl-core: a deterministic, packet-level simulator of congestion in lossless
//! HPC and data-center interconnects.
//!
//! The public surface is small: [`load_config`] turns TOML (plus `--set` overrides and a
//! seed) into a validated [`Config`]; [`run`] simulates it and returns a [`Report`].

pub mod cc;
pub mod config;
pub mod error;
pub mod flow_control;
pub mod kernel;
pub mod memory;
pub mod nic;
pub mod observe;
pub mod packet;
pub mod report;
pub mod routing;
pub mod switch;
pub mod topology;
pub mod traffic;
pub mod units;

pub use config::{load_config, Config};
pub use error::{BlockedQueue, Deadlock, Error, Result};
pub use kernel::Simulation;
pub use report::{Column, ColumnData, Report, Summary, Table};

/// Simulates `config` to its end.
pub fn run(config: &Config) -> Result<Report> {
    run_with_progress(config, &mut |_| true)
}

/// Simulates `config`, calling `progress(fraction_done)` now and then (at most a few
/// times per wall second); returning `false` stops the run with [`Error::Interrupted`].
pub fn run_with_progress(config: &Config, progress: &mut dyn FnMut(f64) -> bool) -> Result<Report> {
    kernel::Simulation::new(config)?.run(progress)
}

impl Config {
    /// The fully resolved config (every default written out) as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config always serialises")
    }
}
