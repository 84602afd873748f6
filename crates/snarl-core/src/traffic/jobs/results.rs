//! What jobs measured: each iteration's time (the mean over ranks of the time from the
//! end of the rank's barrier to the end of its collective), its algorithm and bus
//! bandwidth (NCCL-tests' formulas), and the first measured iterations step by step.
//! The summary's `jobs` section holds a [`JobSummary`] per job; the `iterations` and
//! `steps` tables hold the rows.

use super::baseline::Baseline;
use super::collective::Collective;
use super::config::{JobConfig, Role};
use crate::observe::Finish;
use crate::report::text::num;
use crate::report::{Column, ColumnData, Report, Section, Summary, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One step of one rank: when its sends were posted and when it completed (ps).
#[derive(Clone, Copy, Debug)]
pub struct StepRecord {
    pub iteration: u32,
    pub rank: u32,
    pub step: u32,
    pub start: u64,
    pub end: u64,
}

/// A job's measurements as the run goes.
pub struct JobRecord {
    name: String,
    collective: Collective,
    role: Role,
    ranks: usize,
    size: u64,
    warmup: u32,
    /// Per iteration: the ranks' times summed (ps) and how many ranks finished it.
    sums: Vec<u128>,
    finished: Vec<u32>,
    timeline: std::ops::Range<u32>,
    steps: Vec<StepRecord>,
    /// The ideal bus bandwidth against NIC goodput and against line rate (GB/s).
    ideal: Option<(f64, f64)>,
}

impl JobRecord {
    pub fn new(job: &JobConfig, ranks: usize, timeline: u32, ideal: Option<(f64, f64)>) -> JobRecord {
        JobRecord {
            name: job.name.clone(),
            collective: job.collective,
            role: job.role,
            ranks,
            size: job.size.0,
            warmup: job.warmup,
            sums: Vec::new(),
            finished: Vec::new(),
            timeline: job.warmup..job.warmup.saturating_add(timeline),
            steps: Vec::new(),
            ideal,
        }
    }

    pub fn step_done(&mut self, step: StepRecord) {
        if self.timeline.contains(&step.iteration) {
            self.steps.push(step);
        }
    }

    pub fn iteration_done(&mut self, iteration: u32, took: u64) {
        let i = iteration as usize;
        if self.sums.len() <= i {
            self.sums.resize(i + 1, 0);
            self.finished.resize(i + 1, 0);
        }
        self.sums[i] += took as u128;
        self.finished[i] += 1;
    }

    /// The iterations every rank finished: (iteration, mean time in ps).
    fn iterations(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let n = self.ranks as u32;
        (0..self.sums.len())
            .filter(move |&i| self.finished[i] == n)
            .map(move |i| (i as u32, self.sums[i] as f64 / self.ranks as f64))
    }

    /// Algorithm and bus bandwidth (GB/s, 10^9 bytes) of an iteration of `time` ps.
    fn bandwidth(&self, time: f64) -> (Option<f64>, Option<f64>) {
        let bytes = self.collective.algbw_bytes(self.size, self.ranks);
        let algbw = bytes.filter(|_| time > 0.0).map(|b| b / (time / 1e12) / 1e9);
        (algbw, algbw.map(|a| a * self.collective.bus_factor(self.ranks)))
    }
}

/// A job in the summary's `jobs` section (times in the run's time unit).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct JobSummary {
    pub collective: String,
    pub role: String,
    pub ranks: u64,
    /// Bytes, as the collective defines its size.
    pub size: u64,
    /// Iterations every rank finished after the warm-up.
    pub iterations: u64,
    /// Their mean, fastest and slowest time (null without any).
    pub time: Option<f64>,
    pub time_min: Option<f64>,
    pub time_max: Option<f64>,
    /// Algorithm and bus bandwidth of the mean time (GB/s; null for a barrier).
    pub algbw: Option<f64>,
    pub busbw: Option<f64>,
    /// A victim beside aggressors: its mean time alone (the baseline run), that over its
    /// time here (`perf_ratio`: 1 unharmed, 0.2 five times slower) and the inverse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<f64>,
    /// NCCL engine: the collective as the NCCL test report prints it, in ns and GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none", flatten)]
    pub nccl: Option<NcclSummary>,
}

/// An NCCL-engine job's figures, as the NCCL test report prints them. `ideal_gbps` is
/// k x the NIC's payload rate (`ideal::nics_worth`); `_raw` the same against line rate.
/// A flow is one connection's chunk stream of one collective on one queue pair.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct NcclSummary {
    pub time_ns: Option<f64>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
    pub ideal_gbps: Option<f64>,
    pub ideal_pct: Option<f64>,
    pub ideal_raw_gbps: Option<f64>,
    pub ideal_raw_pct: Option<f64>,
    pub flows: u64,
    pub fct_min_ns: Option<f64>,
    pub fct_p50_ns: Option<f64>,
    pub fct_p95_ns: Option<f64>,
    pub fct_max_ns: Option<f64>,
}

impl NcclSummary {
    fn new(record: &JobRecord, mean_ps: Option<f64>, busbw: Option<f64>, fcts: &[u64]) -> NcclSummary {
        let mut sorted = fcts.to_vec();
        sorted.sort_unstable();
        // Nearest rank: the smallest value at or above the fraction q of the flows.
        let at = |q: f64| {
            (!sorted.is_empty()).then(|| {
                let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
                sorted[k] as f64 / 1e3
            })
        };
        let (algbw, _) = mean_ps.map_or((None, None), |t| record.bandwidth(t));
        let pct = |ideal: f64| busbw.map(|b| 100.0 * b / ideal);
        NcclSummary {
            time_ns: mean_ps.map(|t| t / 1e3),
            algbw_gbps: algbw,
            busbw_gbps: busbw,
            ideal_gbps: record.ideal.map(|i| i.0),
            ideal_pct: record.ideal.and_then(|i| pct(i.0)),
            ideal_raw_gbps: record.ideal.map(|i| i.1),
            ideal_raw_pct: record.ideal.and_then(|i| pct(i.1)),
            flows: sorted.len() as u64,
            fct_min_ns: at(0.0),
            fct_p50_ns: at(0.5),
            fct_p95_ns: at(0.95),
            fct_max_ns: at(1.0),
        }
    }
}

pub fn summarise<'a>(
    records: impl Iterator<Item = (&'a JobRecord, Option<&'a [u64]>)>,
    baseline: Option<&Baseline>,
    summary: &mut Summary,
    finish: &Finish,
) {
    let unit = finish.ps_per_unit;
    let mut jobs = BTreeMap::new();
    let mut notes = Vec::new();
    for (record, fcts) in records {
        let measured: Vec<f64> = record.iterations().filter(|(i, _)| *i >= record.warmup).map(|(_, t)| t).collect();
        let mean = (!measured.is_empty()).then(|| measured.iter().sum::<f64>() / measured.len() as f64);
        let (algbw, busbw) = mean.map_or((None, None), |t| record.bandwidth(t));
        let extreme = |pick: fn(f64, f64) -> f64| measured.iter().copied().reduce(pick).map(|t| t / unit);
        let job = JobSummary {
            collective: record.collective.name().to_string(),
            role: match record.role {
                Role::Victim => "victim",
                Role::Aggressor => "aggressor",
            }
            .to_string(),
            ranks: record.ranks as u64,
            size: record.size,
            iterations: measured.len() as u64,
            time: mean.map(|t| t / unit),
            time_min: extreme(f64::min),
            time_max: extreme(f64::max),
            algbw,
            busbw,
            nccl: fcts.map(|f| NcclSummary::new(record, mean, busbw, f)),
            ..JobSummary::default()
        };
        let mut job = job;
        if let (Some(alone), Some(here)) = (baseline.and_then(|b| b.victims.get(&record.name)), job.time) {
            job.baseline_time = Some(*alone);
            job.perf_ratio = Some(alone / here);
            job.slowdown = Some(here / alone);
        }
        notes.push(match (job.time, job.busbw) {
            (Some(t), Some(bw)) => format!(
                "job {} ({}, {} ranks): {} iterations, mean {} {}, busbw {} GB/s",
                record.name,
                job.collective,
                job.ranks,
                job.iterations,
                num(t, 1),
                finish.time_unit,
                num(bw, 2)
            ),
            (Some(t), None) => format!(
                "job {} ({}, {} ranks): {} iterations, mean {} {}",
                record.name,
                job.collective,
                job.ranks,
                job.iterations,
                num(t, 1),
                finish.time_unit
            ),
            _ => {
                format!("job {} ({}, {} ranks): no measured iteration finished", record.name, job.collective, job.ranks)
            }
        });
        if let Some(ratio) = job.perf_ratio {
            notes.push(format!(
                "job {}: perf_ratio {} against {} {} alone (slowdown {}x)",
                record.name,
                num(ratio, 3),
                num(job.baseline_time.unwrap_or(f64::NAN), 1),
                finish.time_unit,
                num(1.0 / ratio, 2)
            ));
        }
        jobs.insert(record.name.clone(), job);
    }
    let mut section = Section::new("jobs", &jobs);
    for line in notes {
        section = section.note(line);
    }
    summary.sections.set(section);
}

pub fn tables<'a>(records: impl Iterator<Item = &'a JobRecord> + Clone, report: &mut Report, finish: &Finish) {
    let unit = finish.ps_per_unit;
    let (mut job, mut iteration, mut time, mut algbw, mut busbw, mut measured) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for record in records.clone() {
        for (i, t) in record.iterations() {
            let (a, b) = record.bandwidth(t);
            job.push(record.name.clone());
            iteration.push(i as u64);
            time.push(t / unit);
            algbw.push(a.unwrap_or(f64::NAN));
            busbw.push(b.unwrap_or(f64::NAN));
            measured.push(u64::from(i >= record.warmup));
        }
    }
    report.add_table(
        "iterations",
        Table {
            columns: vec![
                Column { name: "job".into(), data: ColumnData::Str(job) },
                Column { name: "iteration".into(), data: ColumnData::U64(iteration) },
                Column { name: "time".into(), data: ColumnData::F64(time) },
                Column { name: "algbw".into(), data: ColumnData::F64(algbw) },
                Column { name: "busbw".into(), data: ColumnData::F64(busbw) },
                Column { name: "measured".into(), data: ColumnData::U64(measured) },
            ],
        },
    );
    let (mut job, mut iteration, mut rank, mut step, mut start, mut end) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for record in records {
        for s in &record.steps {
            job.push(record.name.clone());
            iteration.push(s.iteration as u64);
            rank.push(s.rank as u64);
            step.push(s.step as u64);
            start.push(s.start as f64 / unit);
            end.push(s.end as f64 / unit);
        }
    }
    report.add_table(
        "steps",
        Table {
            columns: vec![
                Column { name: "job".into(), data: ColumnData::Str(job) },
                Column { name: "iteration".into(), data: ColumnData::U64(iteration) },
                Column { name: "rank".into(), data: ColumnData::U64(rank) },
                Column { name: "step".into(), data: ColumnData::U64(step) },
                Column { name: "start".into(), data: ColumnData::F64(start) },
                Column { name: "end".into(), data: ColumnData::F64(end) },
            ],
        },
    );
}
