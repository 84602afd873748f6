//! The baseline of a victim/aggressor run: the same config with the aggressors silent
//! (`workload.quiet`), so the same nodes, seed and fabric. A victim's `perf_ratio` is its
//! mean iteration time there over its time beside the aggressors (the study's heatmap
//! value: 1 unharmed, 0.2 five times slower). A sweep runs each distinct baseline once
//! and hands it to every point that shares it.

use super::collective::Collective;
use super::config::{JobConfig, Role};
use super::results::JobSummary;
use crate::config::ValidConfig;
use crate::error::Result;
use crate::report::Report;
use crate::traffic::WorkloadConfig;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Each victim's mean iteration time alone, in the run's time unit (JSON: an object of
/// job name to time).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Baseline {
    pub victims: BTreeMap<String, f64>,
}

impl Baseline {
    /// The victims' times of a baseline run's report (those with a measured iteration).
    pub fn of(report: &Report) -> Baseline {
        let jobs: BTreeMap<String, JobSummary> = report.summary.section("jobs").unwrap_or_default();
        let victims =
            jobs.into_iter().filter(|(_, j)| j.role == "victim").filter_map(|(n, j)| Some((n, j.time?))).collect();
        Baseline { victims }
    }

    /// The run `config`'s victims are measured against, if it has victims and aggressors
    /// and asks for a baseline (`workload.baseline`, on by default).
    pub fn config_for(config: &ValidConfig) -> Result<Option<ValidConfig>> {
        let WorkloadConfig::Jobs(jobs) = &config.workload else { return Ok(None) };
        let has = |role| jobs.jobs.iter().any(|j| j.role == role);
        if jobs.quiet || !jobs.baseline || !has(Role::Victim) || !has(Role::Aggressor) {
            return Ok(None);
        }
        let mut quiet = (**config).clone();
        if let WorkloadConfig::Jobs(jobs) = &mut quiet.workload {
            jobs.quiet = true;
            // What a silent aggressor would have run does not matter: one baseline
            // serves every aggressor on the same nodes (its name and nodes stay, as the
            // placement and the groups follow them).
            for job in jobs.jobs.iter_mut().filter(|j| j.role == Role::Aggressor) {
                *job = JobConfig {
                    name: std::mem::take(&mut job.name),
                    nodes: job.nodes.clone(),
                    role: Role::Aggressor,
                    collective: Collective::Barrier,
                    size: Bytes(0),
                    ..JobConfig::template()
                };
            }
        }
        ValidConfig::new(quiet).map(Some)
    }
}
