//! `snarl._core`: the thin PyO3 layer between snarl-core and the `snarl` Python package.
//!
//! One file per core concept: [`errors`] maps the core's error enum to Python exception
//! classes, [`config`] loads and resolves configs (TOML text or a JSON dict), [`run`]
//! simulates with the GIL released and hands back the report.

use pyo3::prelude::*;

mod config;
mod errors;
mod run;

/// The compiled half of the `snarl` package. Use the `snarl` package, not this module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(config::resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(config::baseline_config, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    Ok(())
}
