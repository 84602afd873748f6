"""Type stubs of the compiled module ``snarl._core`` (use the ``snarl`` package instead)."""

from typing import Callable

import numpy as np
import numpy.typing as npt

__version__: str

class SnarlError(Exception):
    """Base class of every error raised by snarl."""

class ConfigError(SnarlError, ValueError):
    """A config (file, dict or override) is invalid.

    ``path`` is the dotted key path of the problem, ``message`` what is wrong there.
    """

    path: str
    message: str

class TopologyError(SnarlError, ValueError):
    """The fabric cannot be built as described."""

class DeadlockError(SnarlError, RuntimeError):
    """The run stopped making progress for the watchdog interval (wholly, or in a cycle
    of queues waiting on each other)."""

    blocked: list[dict[str, object]]
    cycles: int
    at: str
    in_flight: int

class InternalError(SnarlError, RuntimeError):
    """A broken internal invariant: a bug in snarl."""

def resolve_config(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    seed: int | None = None,
    origin: str | None = None,
) -> str:
    """Validates a config (TOML, or a JSON object) and returns it fully resolved as TOML;
    its relative `include` paths are read from `origin`."""

def run(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    seed: int | None = None,
    progress: Callable[[float], object] | None = None,
    baseline: str | None = None,
    origin: str | None = None,
) -> tuple[
    str,
    str,
    dict[str, dict[str, npt.NDArray[np.float64] | npt.NDArray[np.uint64] | list[str]]],
    list[str],
    dict[str, str],
]:
    """Simulates a config; returns ``(summary_json, resolved_toml, tables, notes,
    headlines)``: ``tables`` maps the name of each table the run has (``timeseries``
    always; the others those of the mechanisms and collectors the run has) to its
    columns, name -> numpy array or list of str; ``notes`` are the lines the summary's
    sections give for the printout of a run, in summary order; ``headlines`` maps the
    sections' headline figures (``section.key``) to their titles.

    The GIL is released during the run. ``progress(fraction)`` is called at most every
    ~150 ms and once with 1.0 at the end; Ctrl-C stops the run with ``KeyboardInterrupt``.
    """

def baseline_config(text: str) -> str | None:
    """The victims-alone baseline of a victim/aggressor config (resolved TOML), or None."""
