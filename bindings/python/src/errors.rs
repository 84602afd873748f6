//! One Python exception class per variant of `snarl_core::Error`.
//!
//! `SnarlError` is the base of every snarl exception. The others also derive from the
//! builtin that callers already catch: `ConfigError` and `TopologyError` are
//! `ValueError`s (bad input), `DeadlockError` and `InternalError` are `RuntimeError`s.
//! An interrupted run raises the builtin `KeyboardInterrupt`. The match over the core's
//! variants has no wildcard arm: a new variant must be given its class here.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use pyo3::PyTypeInfo;
use snarl_core::{Deadlock, Error};

create_exception!(snarl, SnarlError, PyException, "Base class of every error raised by snarl.");

/// A class deriving from `SnarlError` and one builtin exception, created once.
struct DualClass {
    name: &'static str,
    builtin: fn(Python<'_>) -> Bound<'_, PyType>,
    doc: &'static str,
    cell: GILOnceCell<Py<PyType>>,
}

impl DualClass {
    const fn new(name: &'static str, builtin: fn(Python<'_>) -> Bound<'_, PyType>, doc: &'static str) -> Self {
        DualClass { name, builtin, doc, cell: GILOnceCell::new() }
    }

    fn get<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyType>> {
        self.cell
            .get_or_try_init(py, || {
                let bases = PyTuple::new(py, [SnarlError::type_object(py), (self.builtin)(py)])?;
                let namespace = PyDict::new(py);
                namespace.set_item("__module__", "snarl")?;
                namespace.set_item("__qualname__", self.name)?;
                namespace.set_item("__doc__", self.doc)?;
                let class = py.get_type::<PyType>().call1((self.name, bases, namespace))?;
                Ok::<_, PyErr>(class.downcast_into::<PyType>()?.unbind())
            })
            .map(|class| class.bind(py))
    }
}

static CONFIG_ERROR: DualClass = DualClass::new(
    "ConfigError",
    |py| py.get_type::<PyValueError>(),
    "A config (file, dict or --set override) is invalid.\n\n\
     `path` is the dotted key path of the problem (e.g. \"traffic.load\"), `message` \
     what is wrong there.",
);
static TOPOLOGY_ERROR: DualClass =
    DualClass::new("TopologyError", |py| py.get_type::<PyValueError>(), "The fabric cannot be built as described.");
static DEADLOCK_ERROR: DualClass = DualClass::new(
    "DeadlockError",
    |py| py.get_type::<PyRuntimeError>(),
    "The run stopped making progress: packets were in flight but none moved for the \
     watchdog interval, or switch queues waited on each other in a cycle for that long.\n\n\
     `blocked` lists the blocked queues (at most ten, those on cycles first), each a dict \
     with `switch`, `port`, `vc`, `side` (\"input\" or \"output\"), `toward` (the output \
     port a virtual output queue holds packets for; None otherwise), `packets`, \
     `credit_bytes` (outputs; None for inputs) and `on_cycle`; `cycles` is the number of \
     cycles of waits (0: the whole fabric stopped), `at` the time it was found.",
);
static INTERNAL_ERROR: DualClass = DualClass::new(
    "InternalError",
    |py| py.get_type::<PyRuntimeError>(),
    "A broken internal invariant: a bug in snarl, never the user's fault.",
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SnarlError", SnarlError::type_object(py))?;
    for class in [&CONFIG_ERROR, &TOPOLOGY_ERROR, &DEADLOCK_ERROR, &INTERNAL_ERROR] {
        m.add(class.name, class.get(py)?)?;
    }
    Ok(())
}

/// The deadlock's blocked queues as a list of dicts, and its counts, as attributes.
fn raise_deadlock(py: Python<'_>, text: String, deadlock: &Deadlock) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let instance = DEADLOCK_ERROR.get(py)?.call1((text,))?;
        let blocked = PyList::empty(py);
        for q in &deadlock.blocked {
            let entry = PyDict::new(py);
            entry.set_item("switch", q.switch)?;
            entry.set_item("port", q.port)?;
            entry.set_item("vc", q.vc)?;
            entry.set_item("side", q.side)?;
            entry.set_item("toward", q.toward)?;
            entry.set_item("packets", q.packets)?;
            entry.set_item("credit_bytes", q.credit_bytes)?;
            entry.set_item("on_cycle", q.on_cycle)?;
            blocked.append(entry)?;
        }
        instance.setattr("blocked", blocked)?;
        instance.setattr("cycles", deadlock.cycles)?;
        instance.setattr("at", &deadlock.at)?;
        instance.setattr("in_flight", deadlock.in_flight)?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

/// Instantiates `class(message)` and sets the given attributes on the instance.
fn raise(py: Python<'_>, class: &DualClass, message: String, attrs: &[(&str, &str)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let instance = class.get(py)?.call1((message,))?;
        for (name, value) in attrs {
            instance.setattr(*name, *value)?;
        }
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

/// A config error at `path` (used by the bindings' own checks, e.g. JSON to TOML).
pub fn config_error(py: Python<'_>, path: &str, message: &str) -> PyErr {
    to_py(py, Error::config(path, message))
}

/// Maps a core error to its Python exception.
pub fn to_py(py: Python<'_>, error: Error) -> PyErr {
    let text = error.to_string();
    match error {
        Error::Config { path, message } => {
            raise(py, &CONFIG_ERROR, text, &[("path", path.as_str()), ("message", message.as_str())])
        }
        Error::Topology(_) => raise(py, &TOPOLOGY_ERROR, text, &[]),
        Error::Deadlock(deadlock) => raise_deadlock(py, text, &deadlock),
        Error::Interrupted(_) => PyKeyboardInterrupt::new_err(text),
        Error::Invariant(_) => raise(py, &INTERNAL_ERROR, text, &[]),
    }
}
