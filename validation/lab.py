"""Running the papers' experiments (cached, in parallel) and laying out their tables."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

import snarl
from snarl.sweep import baselines_of, load_spec, point_hash, run_point, victims_alone

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"


class ValidationError(RuntimeError):
    """A run of the validation failed (its error is in the message)."""


@dataclass(frozen=True)
class Job:
    """One run: a scenario (``folder/name`` under ``scenarios/``, no ``.toml``), its
    overrides and seed, and the values that tell it apart in a table."""

    scenario: str
    set: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    values: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.values.items())
        return f"{self.scenario}" + (f" ({shown})" if shown else "")


@dataclass
class Result:
    """What a run left: its summary and, on demand, its tables."""

    job: Job
    summary: dict[str, Any]
    directory: Path

    def get(self, dotted: str) -> Any:
        """The summary's value at ``a.b.c``, or None where it has none."""
        value: Any = self.summary
        for part in dotted.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        return value

    def table(self, name: str) -> pd.DataFrame:
        return pd.read_parquet(self.directory / f"{name}.parquet")

    def series(self, group: str = "all", column: str = "accepted_load") -> pd.Series:
        """``column`` of the time series of ``group``, indexed by window start."""
        frame = self.table("timeseries")
        frame = frame[frame["group"] == group]
        return pd.Series(frame[column].to_numpy(), index=frame["time"].to_numpy(), name=column)


@dataclass
class Table:
    """A table of figures, the paper's beside snarl's, with notes under it."""

    title: str
    columns: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.columns))) + "|")
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += self.notes
        return "\n".join(lines) + "\n"


def num(value: Any, digits: int = 3) -> str:
    """A figure with ``digits`` decimals and thousands separators, or "-" for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def mean(values: Iterable[float | None]) -> float:
    """The mean of the values that exist (NaN if none does)."""
    present = [v for v in values if v is not None and not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan


def window_mean(series: pd.Series, start: float, end: float) -> float:
    """Mean of the windows that start in [start, end)."""
    inside = series[(series.index >= start) & (series.index < end)]
    return float(inside.mean()) if len(inside) else math.nan


def lossless_breach(summary: Mapping[str, Any]) -> str | None:
    """What breaks the lossless invariants in a run's summary (packets conserved, none
    dropped), or None. Packets an in-order receiver discarded (out of sequence, sent
    again by go-back-N) reached their host: they count as conserved, not as lost."""
    p = summary["packets"]
    if p["injected"] != p["delivered"] + p["in_flight"] + p["dropped"] + p.get("discarded", 0):
        return f"packets not conserved: {p}"
    if p["dropped"]:
        return f"{p['dropped']} packets dropped in a lossless fabric"
    return None


class Lab:
    """Runs jobs in worker processes, caching each run's summary and tables under
    ``out/runs/<id>`` (``id``: the hash of the resolved config, as a sweep's points)."""

    def __init__(self, out: Path, quick: bool = False, processes: int | None = None, log: TextIO = sys.stderr):
        self.out = out
        self.quick = quick
        self.processes = processes or os.cpu_count() or 1
        self.log = log
        self.runs_done = 0
        self.seconds_run = 0.0

    def pick(self, full: Any, quick: Any) -> Any:
        """``full`` for the validation, ``quick`` for its shortened check."""
        return quick if self.quick else full

    def sweep_jobs(
        self,
        sweep_file: str,
        quick_set: Mapping[str, Any] | None = None,
        quick_axes: Mapping[str, list[Any]] | None = None,
        keep: Sequence[str] = (),
    ) -> list[Job]:
        """The points of a sweep file under ``scenarios/`` as jobs. Quick: the first row
        of ``[zip]`` and the first value of each axis (or the values of ``quick_axes``),
        but all of the axes named in ``keep`` (``"zip"``: all rows of ``[zip]``), and
        ``quick_set`` on top of its ``[set]`` and of the values its points take."""
        spec = load_spec(SCENARIOS / f"{sweep_file}.toml")
        base = spec.base.relative_to(SCENARIOS).with_suffix("").as_posix()
        fixed = dict(spec.set)
        if self.quick:
            spec.axes = {k: v if k in keep else list((quick_axes or {}).get(k, v[:1])) for k, v in spec.axes.items()}
            if "zip" not in keep:
                spec.zip = {k: v[:1] for k, v in spec.zip.items()}
        shortened = dict(quick_set or {}) if self.quick else {}
        jobs = []
        for values in spec.points():
            values = {k: shortened.get(k, v) for k, v in values.items()}
            overrides = {**fixed, **values, **shortened}
            seed = overrides.pop("seed", None)
            jobs.append(Job(base, overrides, seed, values))
        return jobs

    def runs(self, what: str, jobs: Sequence[Job]) -> list[Result]:
        """Runs ``jobs`` (those not cached), ``what`` naming them in the log; returns their
        results in order. Raises :class:`ValidationError` if any failed."""
        configs = [snarl.resolve_config(SCENARIOS / f"{j.scenario}.toml", set=dict(j.set), seed=j.seed) for j in jobs]
        ids = [point_hash(c) for c in configs]
        todo = {i: (jobs[n], configs[n]) for n, i in enumerate(ids) if not (self._dir(i) / "summary.json").is_file()}
        cached = len(set(ids)) - len(todo)
        self.say(f"{what}: {len(jobs)} runs" + (f", {cached} cached" if cached else ""))
        if todo:
            self._execute(what, todo)
        return [Result(job, json.loads((self._dir(i) / "summary.json").read_text()), self._dir(i)) for job, i in zip(jobs, ids)]

    def _dir(self, point: str) -> Path:
        return self.out / "runs" / point

    def _execute(self, what: str, todo: Mapping[str, tuple[Job, str]]) -> None:
        failures: list[str] = []
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(self.processes, len(todo)), mp_context=context) as pool:
            baselines, orphans = self._baselines(what, todo, pool, failures)
            futures = {
                pool.submit(run_point, config, baselines.get(point)): point
                for point, (_, config) in todo.items()
                if point not in orphans
            }
            for done, future in enumerate(as_completed(futures), 1):
                point = futures[future]
                job = todo[point][0]
                result = future.result()
                if result["status"] != "ok":
                    failures.append(f"{job.describe()}: {result['error']}")
                    continue
                broken = lossless_breach(json.loads(result["summary"]))
                if broken:
                    failures.append(f"{job.describe()}: {broken}")
                    continue
                self._store(point, todo[point][1], result)
                self.runs_done += 1
                self.seconds_run += result["wall_seconds"]
                self.say(f"  {what} {done}/{len(futures)}: {job.describe()}, {result['wall_seconds']:.1f} s")
        if failures:
            raise ValidationError(f"{what}: {len(failures)} run(s) failed; first: {failures[0]}")

    def _baselines(
        self, what: str, todo: Mapping[str, tuple[Job, str]], pool: ProcessPoolExecutor, failures: list[str]
    ) -> tuple[dict[str, str], set[str]]:
        """Runs, once each, the victims alone of the victim/aggressor runs in ``todo``
        (cached under ``out/baselines``, shared by every run with the same placement,
        victims and fabric, as a sweep shares them). Returns each run's victims' times,
        and the runs whose baseline failed (recorded in ``failures``), not to be run."""
        wanted = baselines_of((point, config) for point, (_, config) in todo.items())
        folder = self.out / "baselines"
        missing = {b: config for b, (config, _) in wanted.items() if not (folder / f"{b}.json").is_file()}
        if missing:
            self.say(f"{what}: {len(missing)} baseline run(s) first (the victims alone)")
        futures = {pool.submit(run_point, config): b for b, config in missing.items()}
        for future in as_completed(futures):
            result = future.result()
            broken = result["error"] if result["status"] != "ok" else lossless_breach(json.loads(result["summary"]))
            if broken:
                failures.append(f"the victims alone of {what}: {broken}")
                continue
            _write_atomic(folder / f"{futures[future]}.json", victims_alone(result["summary"]))
        times: dict[str, str] = {}
        orphans: set[str] = set()
        for b, (_, points) in wanted.items():
            path = folder / f"{b}.json"
            if path.is_file():
                times.update(dict.fromkeys(points, path.read_text()))
            else:
                orphans.update(points)
        return times, orphans

    def _store(self, point: str, config: str, result: Mapping[str, Any]) -> None:
        """Writes a run's tables, then its summary: a run counts as cached once its
        summary is there, so a run cut short is run again."""
        directory = self._dir(point)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "config.toml").write_text(config)
        for name, data in result["tables"].items():
            (directory / f"{name}.parquet").write_bytes(data)
        _write_atomic(directory / "summary.json", result["summary"])

    def say(self, line: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {line}", file=self.log, flush=True)


def _write_atomic(path: Path, text: str) -> None:
    """Writes ``path`` whole or not at all (a validation cut short leaves no half file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    temporary.replace(path)
