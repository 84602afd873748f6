//! A collector from outside the crate, through the public API only: it counts packet
//! hops per window and adds a summary section and a table of its own, which reach the
//! report as the built-in collectors' do. Another samples the fabric's queues.

use crate::common::SINGLE_SWITCH;
use crate::python::assert_python_sees;
use snarl_core::observe::{Collector, FabricSample, Finish, QueueSide, TraceEvent};
use snarl_core::report::Section;
use snarl_core::{load_config, Column, ColumnData, Report, Simulation, Summary, Table};

/// Packet hops per window of `window` ps.
struct HopsPerWindow {
    window: u64,
    hops: Vec<u64>,
}

impl Collector for HopsPerWindow {
    fn on(&mut self, now: u64, event: &TraceEvent) {
        if let TraceEvent::Hop = event {
            let w = (now / self.window) as usize;
            if self.hops.len() <= w {
                self.hops.resize(w + 1, 0);
            }
            self.hops[w] += 1;
        }
    }

    fn summarise(&mut self, summary: &mut Summary, _finish: &Finish) {
        let total: u64 = self.hops.iter().sum();
        let busiest = self.hops.iter().copied().max().unwrap_or(0);
        let value = serde_json::json!({ "total": total, "busiest_window": busiest });
        summary.sections.set(Section::new("toy_hops", &value).note(format!("toy: {total} hops")));
    }

    fn tables(&self, report: &mut Report, finish: &Finish) {
        let time = (0..self.hops.len()).map(|w| (w as u64 * self.window) as f64 / finish.ps_per_unit).collect();
        report.add_table(
            "toy_hops",
            Table {
                columns: vec![
                    Column { name: "time".into(), data: ColumnData::F64(time) },
                    Column { name: "hops".into(), data: ColumnData::U64(self.hops.clone()) },
                ],
            },
        );
    }
}

#[test]
fn a_collector_from_outside_adds_a_section_and_a_table() {
    let config = load_config(SINGLE_SWITCH, &[], None).unwrap();
    let mut simulation = Simulation::new(&config).unwrap();
    simulation.add_collector(HopsPerWindow { window: 10_000_000, hops: Vec::new() });
    let report = simulation.run(&mut |_| true).unwrap();

    let json: serde_json::Value = serde_json::from_str(&report.summary_json()).unwrap();
    let section = &json["toy_hops"];
    assert_eq!(section["total"], report.summary.packet_hops, "{section}");
    assert!(section["busiest_window"].as_u64().unwrap() > 0, "{section}");
    // After the summary's sections and before the core's closing keys.
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    let at = |k: &str| keys.iter().position(|&x| x == k).unwrap();
    assert!(at("recovery") < at("toy_hops") && at("toy_hops") < at("sim_time"), "{keys:?}");
    assert_eq!(
        report.notes.last().map(String::as_str),
        Some(format!("toy: {} hops", report.summary.packet_hops).as_str())
    );

    let table = report.table("toy_hops").expect("the collector's table");
    assert!(table.rows() >= 20, "200 us in windows of 10 us (and a hop at the end): {}", table.rows());
    let Some(ColumnData::U64(hops)) = table.column("hops") else { panic!("hops column") };
    assert_eq!(hops.iter().sum::<u64>(), report.summary.packet_hops);
    assert!(report.tables.contains_key("timeseries"), "the built-in tables are still there");

    // Python's `Report` has the section, its line and the table, by name alone.
    if let Some(seen) = assert_python_sees(&config, &report) {
        assert_eq!(seen["summary"]["toy_hops"]["total"], report.summary.packet_hops);
        assert_eq!(seen["tables"]["toy_hops"]["columns"], serde_json::json!(["time", "hops"]));
        assert_eq!(seen["tables"]["toy_hops"]["sums"]["hops"], report.summary.packet_hops as f64);
    }
}

#[test]
fn a_run_without_it_has_neither() {
    let report = snarl_core::run(&load_config(SINGLE_SWITCH, &[], None).unwrap()).unwrap();
    assert!(!report.summary_json().contains("toy_hops"));
    assert!(report.table("toy_hops").is_none());
}

/// A collector from outside that samples the fabric (`Collector::next_sample`): every
/// 10 us from 5 us on it reads the switch's queues, what they hold and what their heads
/// wait for, through the read-only `FabricSample`.
struct QueueSampler {
    next: u64,
    times: Vec<u64>,
    busiest: u64,
    /// Input queues seen, and those whose head waited for an output queue.
    inputs: u64,
    waiting_for_outputs: u64,
}

impl Collector for QueueSampler {
    fn on(&mut self, _now: u64, _event: &TraceEvent) {}

    fn hears_events(&self) -> bool {
        false
    }

    fn next_sample(&self) -> Option<u64> {
        Some(self.next)
    }

    fn sample(&mut self, now: u64, fabric: &dyn FabricSample) {
        self.times.push(now);
        self.next += 10_000_000;
        let mut seen = Vec::new();
        fabric.each_queue(&mut |q| seen.push(*q));
        for q in seen {
            self.busiest = self.busiest.max(q.bytes);
            if q.side == QueueSide::Input {
                self.inputs += 1;
                let output = q.waits_for.map(|o| fabric.queue(o).side);
                self.waiting_for_outputs += u64::from(output == Some(QueueSide::Output));
            }
        }
    }
}

#[test]
fn a_collector_from_outside_samples_the_fabric_and_changes_nothing() {
    let config = load_config(SINGLE_SWITCH, &[], None).unwrap();
    let mut simulation = Simulation::new(&config).unwrap();
    let sampler = QueueSampler { next: 5_000_000, times: Vec::new(), busiest: 0, inputs: 0, waiting_for_outputs: 0 };
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    simulation.add_collector(Keep { sampler: Some(sampler), into: seen.clone() });
    let mut sampled = simulation.run(&mut |_| true).unwrap();
    let sampler = seen.lock().unwrap().take().expect("the sampler's state");
    // 200 us: samples at 5, 15, ..., 195 us.
    assert_eq!(sampler.times, (0..20).map(|k| 5_000_000 + k * 10_000_000).collect::<Vec<u64>>());
    assert!(sampler.busiest > 0 && sampler.inputs > 0, "queues were seen");
    assert_eq!(sampler.waiting_for_outputs, sampler.inputs, "every input's head waits for an output");
    let mut plain = snarl_core::run(&config).unwrap();
    sampled.summary.wall_seconds = 0.0;
    plain.summary.wall_seconds = 0.0;
    assert_eq!(sampled.summary_json(), plain.summary_json());
}

/// Hands the sampler back to the test when the run ends.
struct Keep {
    sampler: Option<QueueSampler>,
    into: std::sync::Arc<std::sync::Mutex<Option<QueueSampler>>>,
}

impl Collector for Keep {
    fn on(&mut self, _now: u64, _event: &TraceEvent) {}

    fn hears_events(&self) -> bool {
        false
    }

    fn next_sample(&self) -> Option<u64> {
        self.sampler.as_ref().and_then(|s| s.next_sample())
    }

    fn sample(&mut self, now: u64, fabric: &dyn FabricSample) {
        if let Some(s) = self.sampler.as_mut() {
            s.sample(now, fabric);
        }
    }

    fn summarise(&mut self, _summary: &mut Summary, _finish: &Finish) {
        *self.into.lock().unwrap() = self.sampler.take();
    }
}
