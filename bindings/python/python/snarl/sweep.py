"""Sweeps: one experiment run over a grid of overrides, on local processes or a Dask cluster.

A sweep file is TOML::

    name = "load curve"            # optional
    base = "experiment.toml"       # relative to the sweep file, or absolute

    [axes]                         # every combination of these (a product)
    "traffic.load" = [0.2, 0.4, 0.6]
    seed = [1, 2, 3]

    [zip]                          # optional: lists of equal length that vary together
    "traffic.groups.0.cap" = [1.0, 0.09]
    "traffic.groups.0.load" = [1.0, 1.0]

    [set]                          # optional: fixed overrides of every point
    "simulation.duration" = "50us"

    [labels]                       # optional: the words figures and tables use
    "traffic.load" = "offered load"
    "traffic.groups.0.cap" = { name = "hotspot cap", values = { "1.0" = "unthrottled", "0.0833" = "throttled" } }

    [[figures]]                    # optional: the report's headline figures, drawn first
    kind = "load-curve"            # load-curve (y against x), heatmap or cdf
    x = "traffic.load"
    y = "groups.uniform.accepted_load"
    hue = "traffic.groups.0.cap"

A list of named tables is addressed by name as well as by index
(``traffic.groups.hotspot.cap`` is ``traffic.groups.0.cap`` when group 0 is named
``hotspot``).

A point is a dict of dotted key -> value (``seed`` sets the seed). Its id is the first 16
hex digits of the SHA-256 of its fully resolved config, so the same experiment always
gets the same id: two settings that resolve to the same config are one point, run and
reported once (the other settings are kept as its ``aliases``). Results go to a directory:

``points/<id>.json``
    one record per finished point (written atomically as soon as the point ends; a
    failed point's has its ``error``, and ``crash``, the signal or exit code of its
    worker process, if that died);
``<table>/<id>.parquet``
    each table of the point's run (see :attr:`snarl.Report.tables`), one folder per
    table: ``timeseries/`` (every point), ``fabric/`` (flow- and congestion-control
    events per window, for points with such mechanisms), ``rates/`` (per-flow rates,
    when recorded), and any other table the run returns;
``points.parquet``
    one row per point: ``point_id``, the axis values (columns named by their dotted
    keys), ``status`` (``"ok"`` or ``"failed"``), ``error`` and every summary figure
    flattened with dots (``latency.p99``, ``groups.uniform.accepted_load``, ...);
``sweep.json``
    the spec and the versions of snarl, Python and the libraries.

Running a sweep again in the same directory computes only the points without a record,
so an interrupted sweep resumes where it stopped and never runs a point twice. One sweep
at a time writes a directory: it holds the lock of ``.lock`` (which names its pid) while
it runs; another one is refused.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import itertools
import json
import numbers
import os
import platform
import re
import signal
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import pandas as pd

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]

SpecLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "SweepSpec"]
"""A path to a sweep file, or a dict shaped like one (``base`` relative to the working
directory), or a :class:`SweepSpec`."""

SPEC_KEYS = ("name", "base", "axes", "zip", "set", "description", "labels", "figures")
LABEL_KEYS = ("name", "values")
"""The keys of a label given as a table: ``{ name = "...", values = { VALUE = "..." } }``."""
FIGURE_KINDS = ("load-curve", "heatmap", "cdf")
"""What a sweep file's ``[[figures]]`` may draw."""
FIGURE_KEYS = (
    "kind", "title", "caption", "x", "y", "hue", "style", "reference", "value", "facet", "where", "logx", "logy",
)
"""The keys of a ``[[figures]]`` entry."""
ID_LENGTH = 16
SWEEP_FILE = "sweep.json"
RECORDS = "points"
BASELINES = "baselines"
"""The victims' times alone of the sweep's victim/aggressor points, one file per distinct
baseline (``<baseline id>.json``)."""
TIMESERIES = "timeseries"
TABLE = "points.parquet"
LOCK = ".lock"
"""Held by the sweep that writes the directory (see :func:`_lock`)."""
DEFAULT_INTERVAL = 5.0
"""Seconds between two progress lines when stderr is not a terminal."""


class SweepError(ValueError):
    """A sweep that cannot run as described: a bad sweep file, an invalid point, an
    output directory that is not a sweep's, an unreachable scheduler."""


@dataclass
class SweepSpec:
    """A parsed sweep file."""

    base: Path
    """The base experiment (absolute path)."""
    axes: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    set: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    description: str | None = None
    source: Path | None = None
    """The sweep file, if the spec was read from one."""
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``[labels]``: per dotted key (or column), its ``name`` (or None) and its
    ``values``, value text -> what to call it (see :func:`parse_labels`)."""
    figures: list[dict[str, Any]] = field(default_factory=list)
    """``[[figures]]``: the report's headline figures (see :func:`parse_figures`)."""

    @property
    def keys(self) -> list[str]:
        """The varying keys: the axes, then the zipped keys."""
        return [*self.axes, *self.zip]

    def points(self) -> list[dict[str, Any]]:
        """Every point: the product of the axes and of the rows of ``zip``, in order
        (the last axis varies fastest, the zipped rows slowest)."""
        rows = list(zip(*self.zip.values())) if self.zip else [()]
        points = []
        for zipped in rows:
            for combo in itertools.product(*self.axes.values()):
                point = dict(zip(self.axes, combo))
                point.update(zip(self.zip, zipped))
                points.append(point)
        return points

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain data (written to ``sweep.json``)."""
        data: dict[str, Any] = {"base": str(self.base)}
        if self.name is not None:
            data["name"] = self.name
        if self.description is not None:
            data["description"] = self.description
        data.update(axes=self.axes, zip=self.zip, set=self.set)
        if self.labels:
            data["labels"] = self.labels
        if self.figures:
            data["figures"] = self.figures
        if self.source is not None:
            data["source"] = str(self.source)
        return data


@dataclass
class Point:
    """One point of a sweep, validated: its values, overrides, seed, resolved config and id."""

    values: dict[str, Any]
    overrides: dict[str, Any]
    seed: int | None
    config: str
    id: str
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """Other settings of the sweep that resolve to the same config: run and reported
    once, as this point."""


def load_spec(spec: SpecLike) -> SweepSpec:
    """Reads and checks a sweep file (or dict). Raises :class:`SweepError`."""
    if isinstance(spec, SweepSpec):
        return spec
    source: Path | None = None
    if isinstance(spec, Mapping):
        data = {key: _plain_values(value) for key, value in spec.items()}
        root = Path.cwd()
    elif isinstance(spec, (str, os.PathLike)):
        source = Path(spec)
        try:
            text = source.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SweepError(f"{source}: no such sweep file") from None
        except IsADirectoryError:
            raise SweepError(f"{source}: is a directory, not a sweep file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise SweepError(f"{source}: cannot read: {e}") from None
        try:
            data = _tomllib.loads(text)
        except _tomllib.TOMLDecodeError as e:
            raise SweepError(f"{source}: not valid TOML: {e}") from None
        root = source.absolute().parent
        source = source.absolute()
    else:
        raise TypeError(f"a sweep is a path or a dict, not {type(spec).__name__}")

    where = f"{source}: " if source else ""
    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise SweepError(f"{where}unknown key `{unknown[0]}` in the sweep file (expected {', '.join(SPEC_KEYS)})")
    if "base" not in data:
        raise SweepError(f"{where}missing `base`: the experiment TOML the sweep varies")
    if not isinstance(data["base"], (str, os.PathLike)):
        raise SweepError(f"{where}`base` must be a path to a .toml file")
    base = Path(data["base"])
    if not base.is_absolute():
        base = root / base
    if not base.is_file():
        raise SweepError(f"{where}base experiment {base}: no such file")

    tables: dict[str, dict[str, Any]] = {}
    for table in ("axes", "zip", "set"):
        value = data.get(table, {})
        if not isinstance(value, Mapping):
            raise SweepError(f"{where}`{table}` must be a table of dotted keys")
        tables[table] = dict(value)
    for table in ("axes", "zip"):
        for key, values in tables[table].items():
            if not isinstance(values, list):
                raise SweepError(f"{where}{table}.\"{key}\" must be a list of values, found {values!r}")
            if not values:
                raise SweepError(f"{where}{table}.\"{key}\" is empty: give at least one value")
    lengths = {key: len(values) for key, values in tables["zip"].items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f'"{k}" has {n}' for k, n in lengths.items())
        raise SweepError(f"{where}the lists of [zip] must have equal lengths: {listed}")
    seen: dict[str, str] = {}
    for table in ("axes", "zip", "set"):
        for key in tables[table]:
            if key in seen:
                raise SweepError(f"{where}`{key}` appears in both [{seen[key]}] and [{table}]")
            seen[key] = table
    for name in ("name", "description"):
        if name in data and not isinstance(data[name], str):
            raise SweepError(f"{where}`{name}` must be a string")
    return SweepSpec(
        base=base.absolute(),
        axes=tables["axes"],
        zip=tables["zip"],
        set=tables["set"],
        name=data.get("name"),
        description=data.get("description"),
        source=source,
        labels=parse_labels(data.get("labels", {}), where),
        figures=parse_figures(data.get("figures", []), where),
    )


def parse_labels(labels: Any, where: str = "") -> dict[str, dict[str, Any]]:
    """``[labels]`` of a sweep file, checked: each entry is ``KEY = "name"`` or ``KEY = {
    name = "...", values = { VALUE = "...", ... } }`` (both keys optional), and comes back
    as ``{"name": str | None, "values": {value text: name}}``. A value is spelt as a TOML
    key: ``"0.0833"`` (quoted), or bare, ``0.0833``, which TOML reads as a dotted key and
    which is joined back; a swept table (``congestion_control``) is named by its
    ``type`` (``none = "IB CC off"``). Raises :class:`SweepError`."""
    if not isinstance(labels, Mapping):
        raise SweepError(f"{where}`labels` must be a table: dotted key = \"name\" or {{ name = ..., values = {{ ... }} }}")
    parsed: dict[str, dict[str, Any]] = {}
    for key, entry in labels.items():
        at = f"{where}labels.\"{key}\""
        if isinstance(entry, str):
            parsed[key] = {"name": entry, "values": {}}
            continue
        if not isinstance(entry, Mapping):
            raise SweepError(f"{at} must be a name (a string) or a table {{ name = ..., values = {{ ... }} }}, found {entry!r}")
        unknown = sorted(set(entry) - set(LABEL_KEYS))
        if unknown:
            raise SweepError(f"{at}: unknown key `{unknown[0]}` (expected {', '.join(LABEL_KEYS)})")
        name = entry.get("name")
        if name is not None and not isinstance(name, str):
            raise SweepError(f"{at}.name must be a string")
        values = entry.get("values", {})
        if not isinstance(values, Mapping):
            raise SweepError(f"{at}.values must be a table: value = \"name\"")
        flat: dict[str, str] = {}
        for text, alias in _joined(values):
            if not isinstance(alias, str):
                raise SweepError(f"{at}.values.\"{text}\" must be a string (what to call the value), found {alias!r}")
            flat[text] = alias
        parsed[key] = {"name": name, "values": flat}
    return parsed


def _joined(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{"0": {"0833": "x"}}`` (TOML's reading of the bare key ``0.0833``) ->
    ``("0.0833", "x")``."""
    for key, value in table.items():
        if isinstance(value, Mapping):
            yield from _joined(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def parse_figures(figures: Any, where: str = "") -> list[dict[str, Any]]:
    """``[[figures]]`` of a sweep file, checked: each has a ``kind`` (load-curve, heatmap
    or cdf) and the columns it needs (``x`` and ``y`` for a load curve or a heatmap,
    ``value`` for a cdf); ``hue`` and ``facet`` may be a column or a list of columns,
    ``where`` a list of ``KEY=VALUE``. Raises :class:`SweepError`."""
    if isinstance(figures, Mapping):
        figures = [figures]
    if not isinstance(figures, list):
        raise SweepError(f"{where}`figures` must be a list of tables ([[figures]])")
    parsed = []
    for index, figure in enumerate(figures):
        at = f"{where}figures.{index}"
        if not isinstance(figure, Mapping):
            raise SweepError(f"{at} must be a table with a kind")
        unknown = sorted(set(figure) - set(FIGURE_KEYS))
        if unknown:
            raise SweepError(f"{at}: unknown key `{unknown[0]}` (expected {', '.join(FIGURE_KEYS)})")
        kind = figure.get("kind")
        if kind not in FIGURE_KINDS:
            raise SweepError(f"{at}.kind must be one of {', '.join(FIGURE_KINDS)}, found {kind!r}")
        entry: dict[str, Any] = {"kind": kind}
        for name in ("title", "caption", "x", "y", "style", "reference", "value"):
            if name in figure:
                if not isinstance(figure[name], str) or not figure[name]:
                    raise SweepError(f"{at}.{name} must be a non-empty string")
                entry[name] = figure[name]
        for name in ("hue", "facet", "where"):
            if name in figure:
                value = figure[name]
                value = [value] if isinstance(value, str) else value
                if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                    raise SweepError(f"{at}.{name} must be a column or a list of columns")
                entry[name] = list(value)
        for name in ("logx", "logy"):
            if name in figure:
                if not isinstance(figure[name], bool):
                    raise SweepError(f"{at}.{name} must be true or false")
                entry[name] = figure[name]
        needs = {"load-curve": ("x", "y"), "heatmap": ("x", "y"), "cdf": ("value",)}[kind]
        missing = [n for n in needs if n not in entry]
        if missing:
            raise SweepError(f"{at}: a {kind} needs {' and '.join(missing)}")
        parsed.append(entry)
    return parsed


def _plain_values(value: Any) -> Any:
    """numpy scalars and arrays, at any depth of a dict spec, as Python values: the points
    and their ids are then those of the same spec written with plain numbers."""
    from snarl.api import plain_value

    value = plain_value(value)
    if isinstance(value, Mapping):
        return {key: _plain_values(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_values(item) for item in value]
    return value


def resolve_points(spec: SweepSpec) -> list[Point]:
    """Validates every point with :func:`snarl.resolve_config` and gives each its id.

    Settings that resolve to the same config as an earlier point are that point (listed
    in its ``aliases``): run and reported once. Raises :class:`SweepError` naming the
    first invalid point.
    """
    from snarl import SnarlError
    from snarl import _core
    from snarl.api import _check_seed, config_text, overrides_from

    try:
        base_text = config_text(spec.base)
    except (SnarlError, OSError) as e:  # binary data, say: its message names the file
        raise SweepError(f"base experiment: {getattr(e, 'message', None) or e}") from None
    points = []
    ids: dict[str, Point] = {}
    for values in spec.points():
        merged = {**spec.set, **values}
        seed = merged.pop("seed", None)
        try:
            # The base's relative `include` paths are read from its directory.
            resolved = _core.resolve_config(base_text, overrides_from(merged), _check_seed(seed), str(spec.base.parent))
        except (SnarlError, TypeError) as e:
            raise SweepError(f"point {_describe(values)}: {e}") from None
        point_id = point_hash(resolved)
        if point_id in ids:
            ids[point_id].aliases.append(values)
            continue
        ids[point_id] = Point(values=values, overrides=merged, seed=seed, config=resolved, id=point_id)
        points.append(ids[point_id])
    return points


def duplicates_text(points: Iterable[Point]) -> str:
    """``""``, or what a sweep says of the settings that are the same experiment as
    another point: ``" (2 settings resolve to the config of another point: run and
    reported once)"``."""
    count = sum(len(p.aliases) for p in points)
    if not count:
        return ""
    return (
        f" ({count} setting{'s' if count != 1 else ''} resolve{'s' if count == 1 else ''} to the config of "
        "another point: run and reported once)"
    )


def point_hash(resolved_config: str) -> str:
    """The id of a point: the first 16 hex digits of the SHA-256 of its resolved config."""
    return hashlib.sha256(resolved_config.encode("utf-8")).hexdigest()[:ID_LENGTH]


def _describe(values: Mapping[str, Any]) -> str:
    """``traffic.load=0.5, seed=2`` (or ``(the base)`` for a point without values)."""
    return ", ".join(f"{k}={v!r}" for k, v in values.items()) or "(the base)"


# ----------------------------------------------------------------------------- running


def run_point(config: str, baseline: str | None = None) -> dict[str, Any]:
    """Runs one point from its resolved config (in a worker process) and returns what
    the client writes: ``status``, ``error``, ``summary`` (JSON text), ``tables`` (each
    table of the run as Parquet bytes, by name), ``headlines`` (the summary's headline
    figures, ``section.key`` -> title) and ``wall_seconds``. ``baseline``: the victims'
    times alone (JSON), for a victim/aggressor point whose baseline the sweep ran.

    Errors of the run are returned, not raised, so a failing point is recorded like any
    other.
    """
    import snarl

    started = time.perf_counter()
    try:
        report = snarl.run(config, baseline=baseline)
        return {
            "status": "ok",
            "error": None,
            "summary": report.to_json(),
            "tables": report.parquet_tables(),
            "headlines": report.headlines,
            "wall_seconds": time.perf_counter() - started,
        }
    except Exception as e:  # noqa: BLE001 - recorded with the point
        return {
            "status": "failed",
            "error": f"{type(e).__name__}: {e}",
            "summary": None,
            "wall_seconds": time.perf_counter() - started,
        }


class _Runner:
    """Where points run: ``submit(config, baseline) -> future``, ``as_completed(futures)``,
    ``close()``; ``dashboard``: the address of its Dask dashboard, if any."""

    description = "runner"
    dask = False
    """Whether it is a Dask cluster (which may have a dashboard)."""

    @property
    def dashboard(self) -> str | None:
        return None

    def submit(self, config: str, baseline: str | None = None) -> Any:
        raise NotImplementedError

    def as_completed(self, futures: Iterable[Any]) -> Iterable[Any]:
        raise NotImplementedError

    def close(self, cancel: bool = False) -> None:
        raise NotImplementedError


class _ProcessRunner(_Runner):
    """Local worker processes (``spawn``: safe whatever threads the parent has), each
    running one point at a time. A worker does not import the caller's ``__main__``
    (:func:`_main_not_imported`): a script may call :func:`sweep` at its top level,
    without the ``if __name__ == "__main__":`` guard.

    A worker that dies (a signal, ``os._exit``) fails the point it was running, with the
    cause, and is replaced: its neighbours run on, as they do on Dask, whose nannies
    restart a lost worker and reschedule its tasks. (A ``ProcessPoolExecutor`` breaks
    instead, failing every pending point.) Workers end with the sweep, even a killed one.
    """

    def __init__(self, processes: int) -> None:
        import multiprocessing
        from multiprocessing import resource_tracker

        self.description = f"{processes} local process{'es' if processes != 1 else ''}"
        self.context = multiprocessing.get_context("spawn")
        # Started by the first worker otherwise, multiprocessing's resource tracker would
        # unblock the signals _start blocks, as it starts.
        resource_tracker.ensure_running()
        self.queue: collections.deque[tuple[concurrent.futures.Future[Any], tuple[str, str | None]]] = (
            collections.deque()
        )
        self.workers = [self._start() for _ in range(processes)]

    def _start(self) -> _Worker:
        here, there = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(there, os.getpid()), daemon=True, name="snarl-worker")
        # The worker inherits these signals blocked, from its first instruction on: a
        # Ctrl-C (or a SIGTERM) of the process group is the parent's to handle, and the
        # parent ends its workers. (Here they wait until unblocked: none is lost.)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _PARENT_SIGNALS)
        try:
            with _main_not_imported():
                process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        there.close()
        return _Worker(process, here)

    def submit(self, config: str, baseline: str | None = None) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.queue.append((future, (config, baseline)))
        return future

    def as_completed(self, futures: Iterable[Any]) -> Iterable[Any]:
        from multiprocessing.connection import wait

        pending = set(futures)
        while pending:
            self._dispatch()
            busy = [w for w in self.workers if w.future is not None]
            if not busy:
                raise RuntimeError("futures of another runner were given")
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if worker.connection in ready or worker.process.sentinel in ready:
                    future = self._collect(worker)
                    pending.discard(future)
                    yield future

    def _dispatch(self) -> None:
        """Hands queued points to idle workers, replacing those that died idle."""
        for index in range(len(self.workers)):
            while self.queue and self.workers[index].future is None:
                worker = self.workers[index]
                if not worker.process.is_alive():
                    worker = self.workers[index] = self._replace(worker)
                future, config = self.queue.popleft()
                try:
                    worker.connection.send(config)
                except OSError:  # it died just now: the point goes to its replacement
                    self.queue.appendleft((future, config))
                    self.workers[index] = self._replace(worker)
                    continue
                worker.future = future

    def _collect(self, worker: _Worker) -> concurrent.futures.Future[Any]:
        """The future of a worker's point, with its result, or its crash if the worker
        died running it (the worker is then replaced)."""
        future = worker.future
        assert future is not None
        worker.future = None
        try:
            future.set_result(worker.connection.recv())
        except (EOFError, OSError):
            future.set_result(_crash_result(self._end(worker)))
            self.workers[self.workers.index(worker)] = self._start()
        return future

    def _replace(self, worker: _Worker) -> _Worker:
        self._end(worker)
        return self._start()

    @staticmethod
    def _end(worker: _Worker, kill: bool = False) -> int:
        """Ends a worker (an idle one reads the end of its pipe and exits; a dead one is
        reaped) and returns its exit code."""
        if kill:
            worker.process.kill()
        worker.connection.close()
        worker.process.join()
        return worker.process.exitcode if worker.process.exitcode is not None else 0

    def close(self, cancel: bool = False) -> None:
        for worker in self.workers:
            self._end(worker, kill=cancel or worker.future is not None)
        self.workers = []


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_not_imported() -> Iterator[None]:
    """Starts ``spawn`` processes that do not import the caller's ``__main__``.

    ``spawn`` runs the parent's main script (or module) again in each new process, as
    ``__mp_main__``, so that functions defined there can be unpickled. A worker runs only
    :func:`run_point` of snarl's own, and needs none of it; importing it would run a
    script's top level again, and a script without the ``if __name__ == "__main__":``
    guard would start a sweep of its own in every worker (which fails). While a process
    starts, ``__main__`` is a stand-in without a file or a spec, as in an interactive
    session, which ``spawn`` leaves alone."""
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main
            else:
                del sys.modules["__main__"]


@dataclass
class _Worker:
    """A local worker process, the parent's end of its pipe, and the point it runs."""

    process: Any
    connection: Any
    future: concurrent.futures.Future[Any] | None = None


_PARENT_SIGNALS = {signal.SIGINT, signal.SIGTERM}
"""Signals a worker leaves to its parent (they stay blocked in the worker)."""


def _serve(connection: Any, parent: int) -> None:
    """A worker process: runs the resolved configs it receives, sends back each result,
    and ends at the end of its pipe, when killed, or when its parent dies."""
    _end_with_parent(parent)
    while True:
        try:
            config, baseline = connection.recv()
        except EOFError:
            return
        connection.send(run_point(config, baseline))


def _end_with_parent(parent: int) -> None:
    """Has Linux kill this process when its parent dies, of whatever (SIGKILL included),
    so that no worker outlives its sweep; elsewhere a worker ends when its pipe does."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request
        os._exit(1)


def _crash_result(exit_code: int) -> dict[str, Any]:
    """The failure of a point whose worker died: the signal that killed it, or its exit
    code."""
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        crash: dict[str, Any] = {"signal": -exit_code, "signal_name": name}
        cause = f"was killed by signal {-exit_code} ({name})"
    else:
        crash = {"exit_code": exit_code}
        cause = f"exited with code {exit_code}"
    return {
        "status": "failed",
        "error": f"WorkerCrash: the worker process running this point {cause}",
        "crash": crash,
        "summary": None,
    }


class _DaskRunner(_Runner):
    """A Dask cluster: a new LocalCluster of ``workers`` processes, or the scheduler at
    ``address``."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        import logging

        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SweepError(
                "running on Dask needs dask.distributed: pip install 'dask[distributed]'"
            ) from None
        self.cluster = None
        if address is not None:
            _check_reachable(address)
            try:
                self.client = Client(address, timeout="10s", set_as_default=False)
            except Exception as e:  # noqa: BLE001 - any failure to connect is bad input
                reason = " ".join(str(e).split()) or type(e).__name__
                raise SweepError(f"cannot connect to the Dask scheduler at {address}: {reason}") from None
            self.description = f"the Dask scheduler at {address}"
        else:
            assert workers is not None
            # Its workers start while the cluster starts: like local processes, they need
            # not import the caller's __main__ (a script without the __main__ guard).
            with _main_not_imported():
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0" if _has_dashboard() else None,
                    silence_logs=logging.ERROR,
                )
            self.client = Client(self.cluster, set_as_default=False)
            self.description = f"a Dask LocalCluster of {workers} worker{'s' if workers != 1 else ''}"

    dask = True

    @property
    def dashboard(self) -> str | None:
        """The address of the scheduler's dashboard; None if it serves none (the
        dashboard needs bokeh)."""
        try:
            services = self.client.scheduler_info().get("services", {})
            return self.client.dashboard_link if "dashboard" in services else None
        except Exception:  # noqa: BLE001 - a dashboard is a convenience
            return None

    def submit(self, config: str, baseline: str | None = None) -> Any:
        return self.client.submit(run_point, config, baseline, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterable[Any]:
        from dask.distributed import as_completed

        return as_completed(list(futures), loop=self.client.loop)

    def close(self, cancel: bool = False) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def _has_dashboard() -> bool:
    """Whether a Dask scheduler started here can serve its dashboard (it needs bokeh)."""
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


_WALLTIME = re.compile(r"^(\d+-)?\d+(:\d{1,2}){0,2}$")
"""SLURM's time formats: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S."""

_MEMORY = re.compile(r"^\d+(\.\d+)?\s*[kmgtp]i?b?$", re.IGNORECASE)
"""A size with its unit, as dask-jobqueue reads a job's memory: 64GB, 500MiB, 1.5T."""


def slurm_memory(value: object) -> str:
    """A job's memory, checked: ``64GB``, ``500MiB`` (ValueError otherwise)."""
    if not isinstance(value, str) or not _MEMORY.match(value.strip()):
        raise ValueError(f"{value!r} is not a size with its unit, such as 64GB or 500MiB")
    return value.strip()


def slurm_walltime(value: object) -> str:
    """A job's time limit, checked: SLURM's ``04:00:00``, ``1-00:00:00``, ``90`` (minutes)."""
    if not isinstance(value, str) or not _WALLTIME.match(value.strip()):
        raise ValueError(f"{value!r} is not in SLURM's time format, such as 04:00:00 or 1-00:00:00")
    return value.strip()


def slurm_name(value: object) -> str:
    """A partition's or an account's name, checked: one word."""
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value.strip()):
        raise ValueError(f"{value!r} is not a name (one word)")
    return value.strip()


@dataclass
class Slurm:
    """A sweep's Dask workers as SLURM batch jobs (dask-jobqueue's ``SLURMCluster``, the
    ``slurm`` extra: ``pip install 'snarl[slurm]'``).

    Each job runs ``cores`` single-threaded Dask workers, one simulation per core, with
    ``memory`` between them. What is not given comes from dask-jobqueue's configuration
    (``jobqueue.slurm`` in ``~/.config/dask/jobqueue.yaml``); ``cores`` and ``memory`` must
    be known one way or the other.
    """

    jobs: int = 1
    """Batch jobs to start (each is a SLURM job of ``cores`` workers)."""
    cores: int | None = None
    """Cores per job, and as many worker processes."""
    memory: str | None = None
    """Memory per job (``"64GB"``), shared by its workers."""
    walltime: str | None = None
    """Time limit of each job, in SLURM's format (``"04:00:00"``, ``"1-00:00:00"``)."""
    queue: str | None = None
    """The partition (``#SBATCH -p``)."""
    account: str | None = None
    """The account charged (``#SBATCH -A``)."""

    @classmethod
    def of(cls, value: Slurm | Mapping[str, Any]) -> Slurm:
        """A :class:`Slurm` from itself or a dict of its fields, checked (raises
        :class:`SweepError`)."""
        if isinstance(value, Slurm):
            options = value
        elif isinstance(value, Mapping):
            names = [f.name for f in dataclasses.fields(cls)]
            unknown = sorted(set(value) - set(names))
            if unknown:
                raise SweepError(f"slurm: unknown option `{unknown[0]}` (expected {', '.join(names)})")
            options = cls(**value)
        else:
            raise TypeError(f"slurm must be a snarl.sweep.Slurm or a dict, not {type(value).__name__}")
        options.check()
        return options

    def check(self) -> None:
        """Refuses options SLURM would not take, before any job starts."""
        for name in ("jobs", "cores"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise SweepError(f"slurm {name}: expected a positive integer, found {value!r}")
        for name, check in (("memory", slurm_memory), ("walltime", slurm_walltime), ("queue", slurm_name), ("account", slurm_name)):
            value = getattr(self, name)
            if value is not None:
                try:
                    check(value)
                except ValueError as e:
                    raise SweepError(f"slurm {name}: {e}") from None

    def describe(self) -> str:
        """``a SLURM cluster of 4 jobs x 32 cores (queue compute)``."""
        cores = self.cores if self.cores is not None else _slurm_config("cores")
        where = f" (queue {self.queue})" if self.queue else ""
        return f"a SLURM cluster of {self.jobs} job{'s' if self.jobs != 1 else ''} x {cores} cores{where}"


def _slurm_config(name: str) -> Any:
    """dask-jobqueue's configured value of ``jobqueue.slurm.NAME`` (None if unset)."""
    import dask

    return dask.config.get(f"jobqueue.slurm.{name}", None)


def slurm_cluster(options: Slurm | Mapping[str, Any], dashboard_address: str | None = None) -> Any:
    """A dask-jobqueue ``SLURMCluster`` for ``options``: its scheduler runs here, no job
    is submitted yet (``cluster.scale(jobs=N)`` does). One single-threaded worker per
    core. ``dashboard_address``: where the scheduler serves its dashboard (default
    dask-jobqueue's, ``:8787``). Raises :class:`SweepError` if dask-jobqueue is not
    installed or the options are incomplete."""
    options = Slurm.of(options)
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise SweepError(
            "--slurm needs dask-jobqueue: pip install 'snarl[slurm]' (or pip install dask-jobqueue)"
        ) from None
    cores = options.cores if options.cores is not None else _slurm_config("cores")
    memory = options.memory if options.memory is not None else _slurm_config("memory")
    if cores is None:
        raise SweepError("--slurm needs --cores N: the cores of each job (one simulation runs per core)")
    if memory is None:
        raise SweepError("--slurm needs --memory SIZE: the memory of each job, e.g. --memory 64GB")
    given: dict[str, Any] = {
        "walltime": options.walltime,
        "queue": options.queue,
        "account": options.account,
    }
    if dashboard_address is not None:
        given["scheduler_options"] = {"dashboard_address": dashboard_address}
    try:
        return SLURMCluster(
            cores=int(cores),
            processes=int(cores),
            memory=str(memory),
            job_name="snarl-worker",
            silence_logs="error",
            **{k: v for k, v in given.items() if v is not None},
        )
    except (ValueError, TypeError) as e:
        raise SweepError(f"--slurm: {' '.join(str(e).split())}") from None


def slurm_job_script(options: Slurm | Mapping[str, Any]) -> str:
    """The batch script each SLURM job of a sweep would run (``SLURMCluster.job_script()``),
    without submitting anything. Raises :class:`SweepError` as :func:`slurm_cluster`."""
    cluster = slurm_cluster(options, dashboard_address=":0")  # any free port: it serves nothing
    try:
        return cluster.job_script()
    finally:
        cluster.close()


class _SlurmRunner(_DaskRunner):
    """Dask workers started as SLURM batch jobs; the scheduler runs here, in the sweep's
    process. The jobs end (``scancel``) with the sweep."""

    def __init__(self, options: Slurm | Mapping[str, Any]) -> None:
        import shutil

        from dask.distributed import Client

        options = Slurm.of(options)
        if shutil.which("sbatch") is None:
            raise SweepError(
                "--slurm: no `sbatch` on this machine: run the sweep on a SLURM login node "
                "(with --dry-run it prints the job script anywhere)"
            )
        self.cluster = slurm_cluster(options)
        try:
            self.cluster.scale(jobs=options.jobs)
            self.client = Client(self.cluster, set_as_default=False)
        except BaseException:
            self.cluster.close()
            raise
        self.description = options.describe()


def _check_reachable(address: str) -> None:
    """Refuses a malformed scheduler address, and a TCP one where nothing listens, fast
    and without leaving a half-made client behind."""
    import socket

    from distributed.comm import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location)
    except (ValueError, TypeError) as e:
        raise SweepError(f"bad Dask scheduler address {address!r}: {e} (expected e.g. tcp://host:8786)") from None
    if scheme not in ("tcp", "tls"):
        return
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise SweepError(f"cannot connect to the Dask scheduler at {address}: {reason}") from None


# ----------------------------------------------------------------------------- files


def _write_atomic(path: Path, data: bytes) -> None:
    """Writes ``data`` to a temporary file beside ``path``, then renames it into place,
    with the mode a new file gets under the umask (the temporary file's is 0600)."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def umask() -> int:
    """The process's umask (reading it means setting it: set it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_records(out: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The records of the finished points in a sweep directory, by point id."""
    records = {}
    directory = Path(out) / RECORDS
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: the point runs again
        if isinstance(record, dict) and record.get("point_id") == path.stem:
            records[path.stem] = record
    return records


def _check_out(out: Path) -> None:
    """Refuses an output directory that is a file or holds something else than a sweep."""
    if not out.exists():
        parent = out.absolute().parent
        existing = next((p for p in (parent, *parent.parents) if p.exists()), None)
        if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK):
            raise SweepError(f"--out {out}: cannot create it (no writable directory above it)")
        return
    if not out.is_dir():
        raise SweepError(f"--out {out}: exists and is not a directory")
    if not os.access(out, os.R_OK | os.W_OK | os.X_OK):
        raise SweepError(f"--out {out}: cannot write into it (permission denied)")
    if any(p.name != LOCK for p in out.iterdir()) and not (out / SWEEP_FILE).is_file():
        raise SweepError(f"--out {out}: the directory holds files but no {SWEEP_FILE}; give a new or empty directory")


def versions() -> dict[str, str]:
    """Versions of snarl, Python and the libraries a sweep uses."""
    import importlib.metadata

    import snarl

    found = {"snarl": snarl.__version__, "python": platform.python_version()}
    for package in ("numpy", "pandas", "pyarrow", "dask", "distributed", "matplotlib"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"latency": {"p99": 1}}`` -> ``{"latency.p99": 1}``; lists become JSON text."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, Mapping):
            continue
        elif isinstance(value, list):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def build_table(points: list[Point], records: Mapping[str, Mapping[str, Any]], keys: list[str]) -> pd.DataFrame:
    """One row per point that has a record, in the sweep's order."""
    import pandas as pd

    rows = []
    for point in points:
        record = records.get(point.id)
        if record is None:
            continue
        row: dict[str, Any] = {"point_id": point.id}
        row.update({key: point.values.get(key) for key in keys})
        row["status"] = record.get("status")
        row["error"] = record.get("error")
        summary = record.get("summary") or {}
        for name, value in flatten(summary).items():
            if name not in row:
                row[name] = value
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["point_id", *keys, "status", "error"] if not rows else None)
    for column in keys:
        if column in frame:
            frame[column] = _uniform_column(frame[column])
    if "error" in frame:
        frame["error"] = frame["error"].astype("object")
    return frame


def _uniform_column(column: pd.Series) -> pd.Series:
    """An axis column Parquet can store: mixed types (e.g. numbers and strings) or lists
    are written as text."""
    kinds = {type(v) for v in column if v is not None}
    if kinds <= {int, float, bool} and not (bool in kinds and len(kinds) > 1):
        return column
    if kinds <= {str}:
        return column
    return column.map(lambda v: v if isinstance(v, str) else json.dumps(v))


def write_table(out: Path, frame: pd.DataFrame) -> None:
    """Writes ``points.parquet`` atomically."""
    import io

    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    _write_atomic(out / TABLE, buffer.getvalue())


# ----------------------------------------------------------------------------- the sweep


@dataclass
class Plan:
    """A checked sweep, ready to run: spec, points, the output directory, what is done."""

    spec: SweepSpec
    points: list[Point]
    out: Path
    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    retry_failed: bool = False
    """Whether points recorded as failed run again."""
    replaced: list[str] = field(default_factory=list)
    baselines_run: int = 0
    """Baselines (victims alone) this sweep ran; the points sharing one reuse it."""
    """Points of another sweep recorded in the output directory, removed before this one
    runs (``force``)."""

    @property
    def todo(self) -> list[Point]:
        """The points without a record."""
        return [p for p in self.points if p.id not in self.done]

    def refresh(self) -> None:
        """Reads which points are done from the records in the output directory."""
        ids = {p.id for p in self.points}
        done = {k: v for k, v in read_records(self.out).items() if k in ids}
        if self.retry_failed:
            done = {k: v for k, v in done.items() if v.get("status") == "ok"}
        self.done = done


def plan(spec: SpecLike, out: str | os.PathLike[str], retry_failed: bool = False, force: bool = False) -> Plan:
    """Checks a sweep completely (spec, every point, the output directory) without
    writing anything. An output directory holding points of another sweep (records whose
    point is not one of this sweep's) is refused, unless ``force``: then they are removed
    when the sweep starts. Raises :class:`SweepError`."""
    parsed = load_spec(spec)
    out = Path(out)
    _check_out(out)
    checked = Plan(parsed, resolve_points(parsed), out, retry_failed=retry_failed)
    ids = {p.id for p in checked.points}
    foreign = sorted(k for k in read_records(out) if k not in ids) if out.is_dir() else []
    if foreign and not force:
        raise SweepError(
            f"--out {out}: holds {len(foreign)} point(s) of another sweep (e.g. {foreign[0]}); "
            "give a new directory, or --force to replace them"
        )
    checked.replaced = foreign
    checked.refresh()
    return checked


def execute(
    plan: Plan,
    workers: int | None = None,
    scheduler: str | None = None,
    processes: int | None = None,
    progress: bool | Callable[[int, int, int], object] = False,
    on_start: Callable[[str | None], object] | None = None,
    *,
    slurm: Slurm | Mapping[str, Any] | None = None,
    progress_interval: float = DEFAULT_INTERVAL,
    on_dashboard: Callable[[str | None], object] | None = None,
) -> pd.DataFrame:
    """Runs the points of ``plan`` not yet done and returns the table of every point.

    ``workers``: a new Dask LocalCluster of that many worker processes; ``scheduler``: the
    address of a running Dask scheduler; ``slurm``: Dask workers as SLURM batch jobs
    (:class:`Slurm`); otherwise ``processes`` local processes (default: one per CPU).
    ``progress``: ``True`` draws a bar on stderr if it is a terminal, else prints a line
    every ``progress_interval`` seconds; a callable gets ``(done, failed, total)`` after
    each point. ``on_start`` is called with a description of the runner (``None`` if
    nothing is left to run) once it is up and the directory is this sweep's (locked, with
    its ``sweep.json``), before any point runs; then, on a Dask cluster,
    ``on_dashboard`` with the address of its dashboard (``None`` if it serves none).
    """
    chosen = [name for name, value in (("workers", workers), ("scheduler", scheduler), ("slurm", slurm)) if value is not None]
    if len(chosen) > 1:
        raise SweepError(f"give one of workers, scheduler and slurm, not {' and '.join(chosen)}")
    workers, processes = _count("workers", workers), _count("processes", processes)
    if slurm is not None:
        slurm = Slurm.of(slurm)

    out = plan.out
    runner: _Runner | None = None
    if plan.todo:
        if slurm is not None:
            runner = _SlurmRunner(slurm)
        elif scheduler is not None:
            runner = _DaskRunner(address=scheduler)
        elif workers is not None:
            runner = _DaskRunner(workers=workers)
        else:
            runner = _ProcessRunner(min(processes or os.cpu_count() or 1, len(plan.todo)))
    lock: int | None = None
    described = finished = False
    try:
        lock = _lock(out)
        plan.refresh()  # another sweep may have finished points before the lock was ours
        _prepare_out(out)
        _remove_points(out, plan.replaced)
        _write_sweep_json(plan, runner)
        described = True
        if on_start is not None:
            on_start(runner.description if runner else None)
        if on_dashboard is not None and runner is not None and runner.dask:
            on_dashboard(runner.dashboard)
        _run_points(plan, runner, progress, progress_interval)
        finished = True
    finally:
        if runner is not None:
            runner.close(cancel=not finished)
        try:
            if described:
                # Whatever happened, the table holds every point recorded so far.
                write_table(out, build_table(plan.points, read_records(out), plan.spec.keys))
        finally:
            if lock is not None:
                os.close(lock)
    import pandas as pd

    return pd.read_parquet(out / TABLE)


def _count(name: str, value: object) -> int | None:
    """None, or a positive integer (an int or a numpy integer) as an int."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise SweepError(f"{name} must be a positive integer, found {value!r}")
    return int(value)


def _run_points(
    plan: Plan,
    runner: _Runner | None,
    progress: bool | Callable[[int, int, int], object],
    interval: float = DEFAULT_INTERVAL,
) -> None:
    """Runs the points not yet done on ``runner`` and writes each as it finishes."""
    out = plan.out
    done = dict(plan.done)
    failed = sum(1 for r in done.values() if r.get("status") != "ok")
    total = len(plan.points)
    report = _progress_reporter(progress, total, len(done), failed, runner, interval)
    try:
        if runner is not None:
            baselines = _run_baselines(plan, runner)
            futures = {}
            for point in plan.todo:
                baseline = baselines.get(point.id)
                if isinstance(baseline, dict):  # its baseline failed: so does the point
                    record = _write_point(out, point, baseline)
                    done[point.id] = record
                    failed += 1
                    report.update(len(done), failed)
                    continue
                futures[runner.submit(point.config, baseline[1] if baseline else None)] = point
            for future in runner.as_completed(futures):
                point = futures[future]
                result = _result_of(future)
                if point.id in baselines:
                    result = {**result, "baseline": baselines[point.id][0]}
                record = _write_point(out, point, result)
                done[point.id] = record
                if record["status"] != "ok":
                    failed += 1
                report.update(len(done), failed)
    finally:
        report.close()


def _result_of(future: Any) -> dict[str, Any]:
    """A finished point's result, or its failure if its worker was lost or the task
    cancelled."""
    try:
        return future.result()
    except Exception as e:  # noqa: BLE001 - a lost worker, a cancelled task
        return {"status": "failed", "error": f"{type(e).__name__}: {e}", "summary": None}


def baselines_of(points: Iterable[tuple[str, str]]) -> dict[str, tuple[str, list[str]]]:
    """The distinct baselines of ``points`` (id, resolved config): for each baseline id,
    its config (the victims alone: same nodes, seed and fabric, aggressors silent) and the
    ids of the points that share it. Points without a victim beside an aggressor have
    none."""
    from snarl._core import baseline_config

    wanted: dict[str, tuple[str, list[str]]] = {}
    for point, config in points:
        alone = baseline_config(config)
        if alone is not None:
            wanted.setdefault(point_hash(alone), (alone, []))[1].append(point)
    return wanted


def victims_alone(summary: str) -> str:
    """The victims' times in a baseline run's summary (JSON text), as JSON text: what
    :func:`run_point` takes as ``baseline``."""
    jobs = json.loads(summary).get("jobs", {})
    victims = {name: job["time"] for name, job in jobs.items() if job.get("role") == "victim" and job.get("time") is not None}
    return json.dumps(victims, sort_keys=True)


def _run_baselines(plan: Plan, runner: _Runner) -> dict[str, tuple[str, str] | dict[str, Any]]:
    """Runs, once each, the distinct baselines of the points to run (their victims alone:
    same nodes, seed and fabric, aggressors silent), keeping each in
    ``baselines/<id>.json`` for later sweeps of the same directory. Returns, for each
    point with a baseline, (baseline id, the victims' times as JSON), or the failed result
    of its baseline. ``plan.baselines_run`` counts the baselines run now."""
    wanted = baselines_of((point.id, point.config) for point in plan.todo)
    folder = plan.out / BASELINES
    found: dict[str, tuple[str, str] | dict[str, Any]] = {}
    futures = {}
    for baseline, (config, _) in wanted.items():
        path = folder / f"{baseline}.json"
        if path.is_file():
            found[baseline] = (baseline, path.read_text(encoding="utf-8"))
        else:
            futures[runner.submit(config)] = baseline
    for future in runner.as_completed(futures):
        baseline = futures[future]
        result = _result_of(future)
        if result["status"] != "ok":
            error = f"its baseline (the victims alone) failed: {result['error']}"
            found[baseline] = {"status": "failed", "error": error, "summary": None, "baseline": baseline}
            continue
        text = victims_alone(result["summary"])
        folder.mkdir(exist_ok=True)
        _write_atomic(folder / f"{baseline}.json", text.encode("utf-8"))
        found[baseline] = (baseline, text)
    plan.baselines_run = len(futures)
    return {point: found[baseline] for baseline, (_, points) in wanted.items() for point in points}


def _remove_points(out: Path, ids: list[str]) -> None:
    """Removes the records and tables of the points ``ids`` (another sweep's)."""
    for point in ids:
        (out / RECORDS / f"{point}.json").unlink(missing_ok=True)
        for name in table_folders(out):
            (out / name / f"{point}.parquet").unlink(missing_ok=True)


def _prepare_out(out: Path) -> None:
    """The folders of a results directory (the records'; each table's is made with its
    first file), without the temporary files of a sweep killed while writing."""
    (out / RECORDS).mkdir(exist_ok=True)
    folders = [out / RECORDS, *(out / name for name in table_folders(out))]
    for leftover in [path for folder in folders for path in folder.glob(".*.tmp")]:
        leftover.unlink(missing_ok=True)


def table_folders(out: str | os.PathLike[str]) -> list[str]:
    """The names of the tables a sweep directory holds (its folders of ``<id>.parquet``
    files), sorted."""
    from snarl.report import TABLE_NAME

    out = Path(out)
    if not out.is_dir():
        return []
    return sorted(
        p.name
        for p in out.iterdir()
        if p.name not in (RECORDS, BASELINES) and TABLE_NAME.match(p.name) and p.is_dir()
    )


def _lock(out: Path) -> int:
    """Creates ``out`` if need be and takes its lock, so that one sweep at a time writes
    it; returns the open lock file, which holds the lock until it is closed.

    The lock is ``flock``'s: it ends with its process however that ends, so the lock file
    of a dead sweep blocks nothing. The file holds the holder's pid, for the message of
    the sweep that finds the directory taken."""
    import fcntl

    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise SweepError(f"--out {out}: cannot write into it: {e.strerror or e}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(lock, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(lock)
        raise SweepError(
            f"--out {out}: another snarl sweep (pid {holder}) is writing this directory; "
            "run this one again once it has ended"
        ) from None
    os.ftruncate(lock, 0)
    os.pwrite(lock, f"{os.getpid()}\n".encode("ascii"), 0)
    return lock


def _write_point(out: Path, point: Point, result: Mapping[str, Any]) -> dict[str, Any]:
    """Writes a finished point: each of its tables as ``<table>/<id>.parquet``, then its
    record (all atomically)."""
    from snarl.report import TABLE_NAME

    summary = json.loads(result["summary"]) if result.get("summary") else None
    for name, data in (result.get("tables") or {}).items():
        if not TABLE_NAME.match(name) or name in (RECORDS, BASELINES):
            raise ValueError(f"point {point.id}: table name {name!r} cannot name a folder of the sweep")
        (out / name).mkdir(exist_ok=True)
        _write_atomic(out / name / f"{point.id}.parquet", data)
    record = {
        "point_id": point.id,
        "values": point.values,
        "status": result["status"],
        "error": result.get("error"),
        "crash": result.get("crash"),
        "wall_seconds": result.get("wall_seconds"),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "summary": summary,
        "headlines": result.get("headlines") or {},
        "config": point.config,
    }
    if result.get("baseline"):
        record["baseline"] = result["baseline"]
    text = json.dumps(record, indent=1, allow_nan=True) + "\n"
    _write_atomic(out / RECORDS / f"{point.id}.json", text.encode("utf-8"))
    return record


def _write_sweep_json(plan: Plan, runner: _Runner | None) -> None:
    """``sweep.json``: the spec, the points, the versions."""
    spec = plan.spec
    data = {
        "name": spec.name or (spec.source.stem if spec.source else spec.base.stem),
        "spec": spec.to_dict(),
        "sweep_toml": spec.source.read_text(encoding="utf-8") if spec.source else None,
        "base_toml": spec.base.read_text(encoding="utf-8"),
        "keys": spec.keys,
        "points": [
            {"point_id": p.id, "values": p.values, **({"aliases": p.aliases} if p.aliases else {})} for p in plan.points
        ],
        "versions": versions(),
        "runner": runner.description if runner else None,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    _write_atomic(plan.out / SWEEP_FILE, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


class _Reporter:
    """Progress of a sweep: nothing, a callback, or a rich bar on stderr."""

    def __init__(self, callback: Callable[[int, int, int], object] | None, total: int) -> None:
        self.callback = callback
        self.total = total

    def update(self, done: int, failed: int) -> None:
        if self.callback is not None:
            self.callback(done, failed, self.total)

    def close(self) -> None:
        pass


class _BarReporter(_Reporter):
    """A rich progress bar: points done of total, failed, elapsed, ETA."""

    def __init__(self, total: int, done: int, failed: int, description: str) -> None:
        super().__init__(None, total)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("points · [red]{task.fields[failed]} failed[/red]"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.bar.start()
        self.task = self.bar.add_task(description, total=total, completed=done, failed=failed)

    def update(self, done: int, failed: int) -> None:
        self.bar.update(self.task, completed=done, failed=failed)

    def close(self) -> None:
        self.bar.stop()


class _LinesReporter(_Reporter):
    """Progress lines for logs (stderr is not a terminal): ``snarl sweep: 12/60 points
    done, 1 failed · elapsed 0:01:05 · ETA 0:05:20`` every ``interval`` seconds."""

    def __init__(self, total: int, done: int, failed: int, interval: float) -> None:
        super().__init__(None, total)
        from snarl.progress import CountLines

        self.lines = CountLines("snarl sweep", total, done, failed, interval=interval).start()

    def update(self, done: int, failed: int) -> None:
        self.lines.update(done, failed)

    def close(self) -> None:
        self.lines.close()


def _progress_reporter(
    progress: bool | Callable[[int, int, int], object],
    total: int,
    done: int,
    failed: int,
    runner: _Runner | None,
    interval: float = DEFAULT_INTERVAL,
) -> _Reporter:
    if progress is True:
        if not sys.stderr.isatty():
            if interval and interval > 0:
                return _LinesReporter(total, done, failed, interval)
            return _Reporter(None, total)
        where = f"sweep on {runner.description}" if runner else "sweep"
        return _BarReporter(total, done, failed, where)
    if callable(progress):
        return _Reporter(progress, total)
    return _Reporter(None, total)


def sweep(
    spec_or_path: SpecLike,
    out: str | os.PathLike[str],
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool | Callable[[int, int, int], object] = False,
    processes: int | None = None,
    retry_failed: bool = False,
    force: bool = False,
    slurm: Slurm | Mapping[str, Any] | None = None,
    progress_interval: float = DEFAULT_INTERVAL,
) -> pd.DataFrame:
    """Runs a sweep into ``out`` and returns its table (as ``points.parquet``).

    Args:
        spec_or_path: a sweep file, or a dict shaped like one (``base`` relative to the
            working directory).
        out: the results directory; if it holds an earlier run of the sweep, only the
            points without a record run.
        workers: run on a new Dask LocalCluster of this many worker processes.
        scheduler: run on the Dask cluster whose scheduler has this address
            (``"tcp://host:8786"``).
        progress: ``True`` draws a progress bar on stderr when it is a terminal, and
            prints a line every ``progress_interval`` seconds otherwise (a batch job's
            log): points done of the total, failed, elapsed, ETA; a callable receives
            ``(done, failed, total)`` after each point.
        processes: local worker processes when neither ``workers`` nor ``scheduler``
            is given (default: one per CPU).
        retry_failed: run again the points recorded as failed.
        force: replace the points of another sweep that ``out`` holds (refused
            otherwise: the table would mix two sweeps).
        slurm: run on Dask workers started as SLURM batch jobs: a :class:`Slurm`, or a
            dict of its fields (``{"jobs": 4, "cores": 32, "memory": "64GB",
            "walltime": "04:00:00", "queue": "compute"}``); needs dask-jobqueue (the
            ``slurm`` extra) and ``sbatch``.
        progress_interval: seconds between two progress lines off a terminal.

    Worker processes do not import the caller's ``__main__``: a plain script may call
    ``snarl.sweep`` at its top level, without ``if __name__ == "__main__":``.

    Numbers and lists in a dict spec may be numpy scalars and arrays (an axis of
    ``np.linspace(0.1, 1.0, 10)``): they are taken as the Python values they hold.

    A point whose run fails, or whose worker process dies running it, is recorded as
    failed (its record tells the error, or the signal or exit code of the worker) and the
    sweep goes on: only that point fails.

    Raises:
        SweepError: the sweep file, a point, or ``out`` is invalid, the scheduler cannot
            be reached, or another sweep is writing ``out``; nothing has run and nothing
            is written.
        OSError: a result could not be written (e.g. the disk is full); the points
            recorded before are kept, and the sweep resumes when run again.
        KeyboardInterrupt: the sweep was interrupted (Ctrl-C); likewise resumable.
    """
    return execute(
        plan(spec_or_path, out, retry_failed, force), workers, scheduler, processes, progress,
        slurm=slurm, progress_interval=progress_interval,
    )


def load(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of a sweep directory (``points.parquet``)."""
    import pandas as pd

    return pd.read_parquet(Path(out) / TABLE)


def load_timeseries(out: str | os.PathLike[str], point_id: str | None = None) -> pd.DataFrame:
    """The time series of one point, or of every point with a ``point_id`` column."""
    return load_table(out, TIMESERIES, point_id)


def load_table(out: str | os.PathLike[str], name: str, point_id: str | None = None) -> pd.DataFrame:
    """The table ``name`` (``"timeseries"``, ``"fabric"``, ...) of one point, or of every
    point that has it with a ``point_id`` column."""
    import pandas as pd

    directory = Path(out) / name
    if point_id is not None:
        return pd.read_parquet(directory / f"{point_id}.parquet")
    frames = []
    for path in sorted(directory.glob("*.parquet")):
        frame = pd.read_parquet(path)
        frame.insert(0, "point_id", path.stem)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

