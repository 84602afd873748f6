//! snarl-core: a deterministic, packet-level simulator of congestion in lossless
//! HPC and data-center interconnects.
//!
//! The public surface is small: [`load_config`] turns TOML (plus `--set` overrides and a
//! seed) into a [`ValidConfig`]; [`run`] simulates it and returns a [`Report`]. Only a
//! validated config can be simulated.

pub mod cc;
pub mod config;
pub mod error;
pub mod flow_control;
pub mod install;
pub mod isolation;
pub mod kernel;
pub mod memory;
pub mod model;
pub mod nic;
pub mod observe;
pub mod packet;
pub mod report;
pub mod routing;
pub mod sim;
pub mod switch;
pub mod topology;
pub mod traffic;
pub mod units;

pub use config::{load_config, load_config_in, Config, ValidConfig};
pub use error::{BlockedQueue, Deadlock, Error, Result};
pub use report::{Column, ColumnData, Report, Summary, Table};
pub use sim::{Components, Simulation};

/// Simulates `config` to its end. Only a validated config runs:
///
/// ```no_run
/// let text = "[simulation]\nduration = \"10us\"\n[topology]\ntype = \"single_switch\"\nhosts = 4\n[traffic]\nload = 0.5\n";
/// let config = snarl_core::load_config(text, &[], None).unwrap();
/// let report = snarl_core::run(&config).unwrap();
/// ```
///
/// A plain `Config`, which may have been built or changed without validation, does not:
///
/// ```compile_fail
/// let text = "[simulation]\nduration = \"10us\"\n[topology]\ntype = \"single_switch\"\nhosts = 4\n[traffic]\nload = 0.5\n";
/// let config: snarl_core::Config = snarl_core::load_config(text, &[], None).unwrap().into_inner();
/// let report = snarl_core::run(&config).unwrap();
/// ```
pub fn run(config: &ValidConfig) -> Result<Report> {
    run_with_progress(config, &mut |_| true)
}

/// Simulates `config`, calling `progress(fraction_done)` now and then (at most a few
/// times per wall second); returning `false` stops the run with [`Error::Interrupted`].
/// A victim/aggressor run first runs its baseline (the victims alone: its first half of
/// the progress) and reports each victim's perf ratio against it.
pub fn run_with_progress(config: &ValidConfig, progress: &mut dyn FnMut(f64) -> bool) -> Result<Report> {
    let baseline = match traffic::jobs::Baseline::config_for(config)? {
        Some(quiet) => {
            let report = sim::Simulation::new(&quiet)?.run(&mut |f| progress(f / 2.0))?;
            Some(traffic::jobs::Baseline::of(&report))
        }
        None => None,
    };
    match baseline {
        Some(baseline) => run_against(config, baseline, &mut |f| progress(0.5 + f / 2.0)),
        None => sim::Simulation::new(config)?.run(progress),
    }
}

/// Simulates `config` with its victims measured against `baseline` (their times alone,
/// as a sweep that shares one baseline among its points hands it over).
pub fn run_against(
    config: &ValidConfig,
    baseline: traffic::jobs::Baseline,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<Report> {
    let mut simulation = sim::Simulation::new(config)?;
    simulation.measure_against(baseline);
    simulation.run(progress)
}

impl Config {
    /// The fully resolved config (every default written out) as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config always serialises")
    }
}
