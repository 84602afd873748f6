"""A cache of runs: distinct experiments, each run once, kept in a directory.

``snarl findings`` and ``snarl calibrate`` need many runs of several scenarios with
various overrides, and the same run often serves several findings (and, in a
calibration, several points). A run is identified as a sweep's point is: by
:func:`snarl.sweep.point_hash` of its fully resolved config. So the cache is a sweep's
directory layout without the sweep: ``points/<id>.json`` (the record: values, status,
error, summary, resolved config) and ``<table>/<id>.parquet``, written by the sweep's
own machinery (:func:`snarl.sweep._run_points`: its local processes or Dask, its
victims-alone baselines, its atomic writes and crash records). A run with a record is
never run again, so an interrupted command resumes where it stopped; and one command
at a time writes the directory (the sweep's ``.lock``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snarl.sweep import Plan, Point, SweepSpec, point_hash

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]


class RunError(ValueError):
    """A run that cannot be made as described (an unreadable scenario, an invalid
    override), or a cache directory that cannot be used."""


@dataclass(frozen=True)
class RunSpec:
    """An experiment to run: a scenario file and overrides (dotted keys; ``seed`` sets
    the seed)."""

    scenario: Path
    """The scenario file (absolute)."""
    overrides: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        """``one-tree-dcqcn.toml`` or ``one-tree-dcqcn.toml with marking.kmin="10KB"``."""
        if not self.overrides:
            return self.scenario.name
        return f"{self.scenario.name} with " + ", ".join(f"{k}={v!r}" for k, v in self.overrides)


@dataclass
class Resolver:
    """Resolves run specs to sweep points (validated config and id), reading each
    scenario file once."""

    texts: dict[Path, str] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Resolved configs as data, by point id."""

    def point(self, spec: RunSpec) -> Point:
        """The point of ``spec``. Raises :class:`RunError` naming the scenario and the
        key the core refused."""
        from snarl import SnarlError, _core
        from snarl.api import _check_seed, config_text, overrides_from

        text = self.texts.get(spec.scenario)
        if text is None:
            if not spec.scenario.is_file():
                raise RunError(f"scenario {spec.scenario}: no such file")
            try:
                text = self.texts[spec.scenario] = config_text(spec.scenario)
            except (SnarlError, OSError) as e:
                raise RunError(f"scenario {spec.scenario}: {getattr(e, 'message', None) or e}") from None
        overrides = dict(spec.overrides)
        seed = overrides.pop("seed", None)
        try:
            # The scenario's relative `include` paths are read from its directory.
            resolved = _core.resolve_config(
                text, overrides_from(overrides), _check_seed(seed), str(spec.scenario.parent)
            )
        except (SnarlError, TypeError) as e:
            raise RunError(f"{spec.describe()}: {e}") from None
        values = {"scenario": str(spec.scenario), **dict(spec.overrides)}
        return Point(values=values, overrides=overrides, seed=seed, config=resolved, id=point_hash(resolved))


    def has_section(self, spec: RunSpec, key: str) -> bool:
        """Whether the run's resolved config has the section of ``key`` (the key less its
        last part: ``isolation`` for ``isolation.confirm``, ``traffic.groups.0`` for
        ``traffic.groups.0.cap``); a top-level key is always there. A setting that a
        run's mechanisms do not have (ICI's ``isolation.confirm`` on a run of PFC alone)
        is left out of that run rather than refused."""
        parts = key.split(".")[:-1]
        if not parts:
            return True
        point = self.point(spec)
        document = self.documents.get(point.id)
        if document is None:
            document = self.documents[point.id] = _tomllib.loads(point.config)
        current: Any = document
        for part in parts:
            if isinstance(current, Mapping) and part in current:
                current = current[part]
            elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
                current = current[int(part)]
            elif isinstance(current, list) and any(isinstance(t, Mapping) and t.get("name") == part for t in current):
                # A list of named tables addressed by name (traffic.groups.victims.cap).
                current = next(t for t in current if isinstance(t, Mapping) and t.get("name") == part)
            else:
                return False
        return isinstance(current, (Mapping, list))


@dataclass
class Result:
    """A finished run as the cache holds it: its record, and its tables on demand."""

    id: str
    record: Mapping[str, Any]
    out: Path

    @property
    def ok(self) -> bool:
        return self.record.get("status") == "ok"

    @property
    def error(self) -> str | None:
        return self.record.get("error")

    @property
    def summary(self) -> Mapping[str, Any]:
        return self.record.get("summary") or {}

    def tables(self) -> list[str]:
        """The names of the run's tables."""
        from snarl.sweep import table_folders

        return [name for name in table_folders(self.out) if (self.out / name / f"{self.id}.parquet").is_file()]

    def column(self, table: str, column: str) -> list[Any] | None:
        """A column of one of the run's tables as a list, missing values left out; None
        if the table has no such column. Raises ``FileNotFoundError`` for a table the run
        does not have."""
        import pyarrow.parquet as pq

        path = self.out / table / f"{self.id}.parquet"
        if not path.is_file():
            raise FileNotFoundError(path)
        schema = pq.read_schema(path)
        if column not in schema.names:
            return None
        values = pq.read_table(path, columns=[column]).column(column).to_pylist()
        return [v for v in values if v is not None and v == v]  # None and NaN: no value

    def columns(self, table: str) -> list[str]:
        import pyarrow.parquet as pq

        return list(pq.read_schema(self.out / table / f"{self.id}.parquet").names)


class Cache:
    """The run cache in a directory (see the module's docstring)."""

    MARKERS = ("points", "findings.json", "calibration.json")
    """What a directory that holds a cache has; any other non-empty directory is refused."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)

    def check(self) -> None:
        """Refuses a directory that cannot be written or that holds something else."""
        out = self.out
        if not out.exists():
            parent = out.absolute().parent
            existing = next((p for p in (parent, *parent.parents) if p.exists()), None)
            if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK):
                raise RunError(f"--out {out}: cannot create it (no writable directory above it)")
            return
        if not out.is_dir():
            raise RunError(f"--out {out}: exists and is not a directory")
        if not os.access(out, os.R_OK | os.W_OK | os.X_OK):
            raise RunError(f"--out {out}: cannot write into it (permission denied)")
        names = {p.name for p in out.iterdir()} - {".lock"}
        if names and not names & set(self.MARKERS):
            raise RunError(
                f"--out {out}: the directory holds files but no run cache (points/); give a new or empty directory"
            )

    def done(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` have a record."""
        return {i for i in ids if (self.out / "points" / f"{i}.json").is_file()}

    def results(self, ids: Iterable[str]) -> dict[str, Result]:
        """The records of ``ids`` that exist, by id."""
        from snarl.sweep import read_records

        records = read_records(self.out)
        return {i: Result(i, records[i], self.out) for i in ids if i in records}

    def run(
        self,
        points: Iterable[Point],
        workers: int | None = None,
        scheduler: str | None = None,
        processes: int | None = None,
        retry_failed: bool = False,
        progress: bool | Callable[[int, int, int], object] = False,
        on_start: Callable[[int, int, str | None], object] | None = None,
        label: str = "runs",
    ) -> dict[str, Result]:
        """Runs the distinct points without a record, each once, and returns every
        point's result by id. ``on_start(total, todo, runner)`` is called once the
        runner is up and the directory locked, before any run. ``progress``: ``True``
        draws a bar on stderr (``label`` on the runner); a callable gets ``(done,
        failed, total)`` after each run.

        Raises :class:`snarl.SweepError` (an unreachable scheduler, a locked directory)
        and ``OSError`` (a result that cannot be written; the runs recorded so far are
        kept). ``KeyboardInterrupt`` leaves the finished runs recorded."""
        from snarl.sweep import _BarReporter, _DaskRunner, _lock, _prepare_out, _ProcessRunner, _Runner, _run_points

        unique = list({p.id: p for p in points}.values())
        # The plan of a sweep of these points, for the sweep's runner; its spec is not used.
        plan = Plan(SweepSpec(base=self.out), unique, self.out, retry_failed=retry_failed)
        plan.refresh()
        runner: _Runner | None = None
        if plan.todo:
            if scheduler is not None:
                runner = _DaskRunner(address=scheduler)
            elif workers is not None:
                runner = _DaskRunner(workers=workers)
            else:
                runner = _ProcessRunner(min(processes or os.cpu_count() or 1, len(plan.todo)))
        lock: int | None = None
        finished = False
        try:
            lock = _lock(self.out)
            plan.refresh()  # another command may have finished runs before the lock was ours
            _prepare_out(self.out)
            if on_start is not None:
                on_start(len(plan.points), len(plan.todo), runner.description if runner and plan.todo else None)
            if plan.todo:
                if progress is True:
                    failed = sum(1 for r in plan.done.values() if r.get("status") != "ok")
                    bar = _BarReporter(len(plan.points), len(plan.done), failed, f"{label} on {runner.description}")
                    try:
                        _run_points(plan, runner, lambda done, failed, total: bar.update(done, failed))
                    finally:
                        bar.close()
                else:
                    _run_points(plan, runner, progress)
            finished = True
        finally:
            if runner is not None:
                runner.close(cancel=not finished)
            if lock is not None:
                os.close(lock)
        return self.results(p.id for p in unique)
