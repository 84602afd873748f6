//! Running a simulation: the GIL is released for the whole run and re-acquired only now
//! and then, to let Python handle signals (Ctrl-C) and to report progress.

use crate::config;
use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use snarl_core::{ColumnData, Error, Table};
use std::time::{Duration, Instant};

/// `(summary_json, resolved_toml, tables, notes, headlines)`: `tables` maps each table's
/// name to a dict of its columns, `notes` are the lines the summary's sections give for
/// the printout, `headlines` maps the sections' headline figures (`section.key`) to
/// their titles.
type RunOutput<'py> = (String, String, Bound<'py, PyDict>, Vec<String>, Bound<'py, PyDict>);

/// Least wall time between two calls of the progress callback during a run. Signals are
/// checked at every visit of the core (every ~100 ms), whether or not the callback is due.
const PROGRESS_EVERY: Duration = Duration::from_millis(150);

/// Simulates a config and returns `(summary_json, resolved_toml, tables, notes,
/// headlines)`.
///
/// `text` is TOML or a JSON object, `overrides` `(dotted.key, value)` pairs, `seed`
/// replaces the config's seed. `progress(fraction_done)` is called with 0.0 once the
/// config is loaded and checked (as the simulation starts), at most every ~150 ms of wall
/// time after that, and once with 1.0 at the end. `tables` holds every table of the
/// report (`Report::tables`: those the run has), by name; each maps its column names to
/// numpy arrays (numbers) or lists of str. `notes` are the lines of the summary's sections
/// (`Report::notes`), `headlines` their headline figures (`Report::headlines`). Ctrl-C (or an exception raised by `progress`)
/// stops the run and is raised here. `baseline`: the victims' times alone as JSON (an
/// object of job name to time), for a victim/aggressor run whose baseline a sweep ran
/// once for many points; without it such a run computes its own first. `origin`: the
/// directory of the config's file, where its relative `include` paths are read.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), seed = None, progress = None, baseline = None, origin = None))]
pub fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    progress: Option<PyObject>,
    baseline: Option<&str>,
    origin: Option<&str>,
) -> PyResult<RunOutput<'py>> {
    let config = config::load(py, text, origin, &overrides, seed)?;
    let baseline: Option<snarl_core::traffic::jobs::Baseline> = match baseline {
        Some(json) => Some(serde_json::from_str(json).map_err(|e| {
            crate::errors::config_error(py, "baseline", &format!("not the victims' times as JSON: {e}"))
        })?),
        None => None,
    };
    let resolved = config.to_toml();
    // A Ctrl-C while the config loaded stops here, before the run.
    py.check_signals()?;
    if let Some(callback) = &progress {
        callback.call1(py, (0.0,))?;
    }

    let (result, python_error) = py.allow_threads(|| {
        let mut python_error: Option<PyErr> = None;
        let mut last_progress = Instant::now();
        let mut visit = |fraction: f64| -> bool {
            // The end (1.0) is reported below, once, after the run.
            if fraction >= 1.0 {
                return true;
            }
            let progress_due = last_progress.elapsed() >= PROGRESS_EVERY;
            if progress_due {
                last_progress = Instant::now();
            }
            Python::with_gil(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(callback) if progress_due => callback.call1(py, (fraction,)).map(drop),
                    _ => Ok(()),
                });
                match outcome {
                    Ok(()) => true,
                    Err(e) => {
                        python_error = Some(e);
                        false
                    }
                }
            })
        };
        let result = match baseline {
            Some(baseline) => snarl_core::run_against(&config, baseline, &mut visit),
            None => snarl_core::run_with_progress(&config, &mut visit),
        };
        (result, python_error)
    });

    // A Python exception (KeyboardInterrupt from a signal, or one raised by the progress
    // callback) is the reason the run stopped: it wins over the core's `Interrupted`.
    if let Some(error) = python_error {
        return Err(error);
    }
    let report = result.map_err(|e: Error| to_py(py, e))?;
    if let Some(callback) = &progress {
        callback.call1(py, (1.0,))?;
    }
    let tables = PyDict::new(py);
    for (name, table) in &report.tables {
        tables.set_item(name, table_to_dict(py, table)?)?;
    }
    let headlines = PyDict::new(py);
    for (column, title) in report.headlines() {
        headlines.set_item(column, title)?;
    }
    Ok((report.summary_json(), resolved, tables, report.notes, headlines))
}

/// Columns as a dict: numbers become numpy arrays over a bytes buffer (one copy out of
/// Rust, none after), strings a list of str.
fn table_to_dict<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let frombuffer = py.import("numpy")?.getattr("frombuffer")?;
    let dict = PyDict::new(py);
    for column in &table.columns {
        let value = match &column.data {
            ColumnData::F64(values) => frombuffer.call1((native_bytes(py, values, |v| v.to_ne_bytes())?, "=f8"))?,
            ColumnData::U64(values) => frombuffer.call1((native_bytes(py, values, |v| v.to_ne_bytes())?, "=u8"))?,
            ColumnData::Str(values) => PyList::new(py, values)?.into_any(),
        };
        dict.set_item(&column.name, value)?;
    }
    Ok(dict)
}

/// Copies 8-byte numbers into a new bytes object in native byte order.
fn native_bytes<'py, T: Copy>(
    py: Python<'py>,
    values: &[T],
    to_bytes: fn(T) -> [u8; 8],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * 8, |buffer| {
        for (chunk, value) in buffer.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&to_bytes(*value));
        }
        Ok(())
    })
}
