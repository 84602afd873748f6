"""Calibration: search the parameters a paper leaves unstated for the points where its
findings hold.

``snarl calibrate FINDINGS --space SPACE --out DIR`` takes a findings file
(:mod:`snarl.findings`) and a space file (:mod:`snarl.space`). Each point of the space
sets its parameter values on every run of every finding not held out (every run that has
the parameter's section: :func:`snarl.findings.plan`); the findings are evaluated at each
point, and the report says

- the points where every searched finding holds;
- the best points by the number of findings held;
- for each pair of findings, at how many points both hold (a pair that never does is a
  contradiction in snarl's model, whatever the parameters: worth knowing before fitting);
- the held-out findings at the best point: a check on claims the point was not chosen for;
- which parameters matter: the variance, over a parameter's values, of the mean number
  of findings held.

Runs go through the run cache (:mod:`snarl.runs`), so points that share a run share its
result and an interrupted calibration resumes without running anything twice. ``DIR``
gets ``calibration.parquet`` and ``calibration.csv`` (a row per point: its values, the
number held, and each finding's ``holds`` and ``value``), ``calibration.json`` (the
report) and ``calibration.png`` (findings held over the two most influential
parameters).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snarl.findings import Finding, FindingsError, FindingsFile, Outcome, evaluate_all, plan, show, unused
from snarl.runs import Cache, Resolver, RunError
from snarl.space import Space, SpaceError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

TABLE = "calibration"
BEST = 5
"""Best points the report lists."""


@dataclass
class Calibration:
    """A finished calibration: the points, each searched finding's outcome at each, and
    the held-out findings at the best point."""

    findings: FindingsFile
    space: Space
    method: str
    points: list[dict[str, Any]]
    searched: list[Finding]
    outcomes: list[list[Outcome]]
    """Per point, per searched finding."""
    holdout: list[Outcome] = field(default_factory=list)
    """The held-out findings at the best point."""
    runs: int = 0
    """Distinct runs of the search."""
    failed_runs: int = 0

    @property
    def held(self) -> list[int]:
        """How many searched findings hold at each point."""
        return [sum(1 for o in row if o.holds) for row in self.outcomes]

    @property
    def all_hold(self) -> list[int]:
        """The points where every searched finding holds."""
        return [i for i, n in enumerate(self.held) if n == len(self.searched)]

    def ranking(self) -> list[int]:
        """Points by findings held, most first (ties in the order of the search)."""
        held = self.held
        return sorted(range(len(self.points)), key=lambda i: (-held[i], i))

    @property
    def best(self) -> int:
        return self.ranking()[0]

    def together(self) -> list[list[int]]:
        """For each pair of searched findings, the points where both hold (the diagonal:
        where each holds)."""
        n = len(self.searched)
        counts = [[0] * n for _ in range(n)]
        for row in self.outcomes:
            holding = [k for k, o in enumerate(row) if o.holds]
            for a in holding:
                for b in holding:
                    counts[a][b] += 1
        return counts

    def influence(self) -> dict[str, float]:
        """For each parameter, the variance over its values (ranges drawn at random:
        over bins of equal counts) of the mean number of findings held: how well its
        value alone separates the points that hold more from those that hold fewer."""
        held = self.held
        scores = {}
        for parameter in self.space.parameters:
            groups = _groups([p[parameter.key] for p in self.points], parameter.unit)
            means = [sum(held[i] for i in group) / len(group) for group in groups]
            mean = sum(means) / len(means)
            scores[parameter.key] = sum((m - mean) ** 2 for m in means) / len(means)
        return scores

    def influential(self) -> list[str]:
        """The parameters, most influential first (ties in declaration order)."""
        scores = self.influence()
        return sorted(scores, key=lambda k: -scores[k])

    def table(self) -> pd.DataFrame:
        """A row per point: ``point``, the parameter values, ``held``, ``all_hold``, and
        each searched finding's ``<id>.holds``, ``<id>.value`` (``<id>.error`` when it
        has one somewhere)."""
        import pandas as pd

        from snarl.sweep import _uniform_column

        rows = []
        for index, (values, row) in enumerate(zip(self.points, self.outcomes)):
            record: dict[str, Any] = {"point": index, **values}
            record["held"] = sum(1 for o in row if o.holds)
            record["all_hold"] = record["held"] == len(self.searched)
            for o in row:
                record[f"{o.finding.id}.holds"] = o.holds
                record[f"{o.finding.id}.value"] = _cell(o)
            rows.append(record)
        frame = pd.DataFrame(rows)
        for key in self.space.keys:
            frame[key] = _uniform_column(frame[key])
        for k, finding in enumerate(self.searched):
            frame[f"{finding.id}.holds"] = frame[f"{finding.id}.holds"].astype("boolean")
            frame[f"{finding.id}.value"] = _uniform_column(frame[f"{finding.id}.value"])
            errors = [row[k].error for row in self.outcomes]
            if any(errors):
                frame[f"{finding.id}.error"] = pd.Series(errors, dtype="object")
        return frame

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (``calibration.json``)."""
        ids = [f.id for f in self.searched]
        together = self.together()
        best = self.best
        return {
            "findings_file": str(self.findings.path),
            "space_file": str(self.space.path),
            "method": self.method,
            "parameters": [
                {"key": p.key, "why": p.why, "values": list(p.values) if p.values is not None else None,
                 "range": list(p.range) if p.range else None, "log": p.log, "unit": p.unit}
                for p in self.space.parameters
            ],
            "searched": ids,
            "holdout": list(self.space.holdout),
            "points": len(self.points),
            "runs": self.runs,
            "failed_runs": self.failed_runs,
            "all_hold": [{"point": i, "values": self.points[i]} for i in self.all_hold],
            "best": [
                {"point": i, "values": self.points[i], "held": self.held[i],
                 "not_holding": [o.finding.id for o in self.outcomes[i] if not o.holds]}
                for i in self.ranking()[:BEST]
            ],
            "together": {a: {b: together[i][j] for j, b in enumerate(ids)} for i, a in enumerate(ids)},
            "never_together": [[ids[i], ids[j]] for i in range(len(ids)) for j in range(i + 1, len(ids)) if not together[i][j]],
            "holdout_at_best": {"point": best, "values": self.points[best], "findings": [o.to_dict() for o in self.holdout]},
            "influence": self.influence(),
        }


def _cell(outcome: Outcome) -> Any:
    """A finding's value as a table cell: the number, or its values (a list, or a table
    by label) as JSON text."""
    value = outcome.to_dict()["value"]
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    return json.dumps(value)


def _number(value: Any, unit: str | None) -> float | None:
    """A parameter value as a number (``"2.5us"`` with unit ``us`` -> 2.5), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and unit and value.endswith(unit):
        try:
            return float(value[: -len(unit)])
        except ValueError:
            return None
    return None


def _groups(values: Sequence[Any], unit: str | None, most: int = 8) -> list[list[int]]:
    """The indices of ``values`` grouped by value; numbers with more than ``most``
    distinct values are cut into up to 5 bins of equal counts instead."""
    keys = [json.dumps(v, sort_keys=True) for v in values]
    distinct = list(dict.fromkeys(keys))
    numbers = [_number(v, unit) for v in values]
    if len(distinct) > most and all(n is not None for n in numbers):
        order = sorted(range(len(values)), key=lambda i: numbers[i])  # type: ignore[arg-type, return-value]
        bins = max(2, min(5, len(values) // 3))
        return [chunk for chunk in (order[b * len(order) // bins : (b + 1) * len(order) // bins] for b in range(bins)) if chunk]
    return [[i for i, k in enumerate(keys) if k == d] for d in distinct]


# ----------------------------------------------------------------------------- running


def prepare(findings_path: str | os.PathLike[str], space_path: str | os.PathLike[str]) -> tuple[FindingsFile, Space]:
    """Reads both files and checks the space against the findings. Raises
    :class:`snarl.findings.FindingsError` or :class:`snarl.space.SpaceError`."""
    from snarl import findings as findings_module
    from snarl import space as space_module

    findings = findings_module.load(findings_path)
    space = space_module.load(space_path)
    space_module.check_against(space, findings.fixed_keys(), findings.ids())
    return findings, space


def calibrate(
    findings: FindingsFile,
    space: Space,
    out: str | os.PathLike[str],
    method: str = "grid",
    count: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    processes: int | None = None,
    retry_failed: bool = False,
    progress: bool | Callable[[int, int, int], object] = False,
    on_start: Callable[[str, int, int, str | None], object] | None = None,
) -> Calibration:
    """Runs the search and the held-out check, and writes the table, the report and
    the figure into ``out``. ``on_start(stage, total, todo, runner)`` is called as each
    stage's runs start (``stage``: ``"search"``, then ``"holdout"``).

    Raises :class:`snarl.space.SpaceError` (a grid larger than ``count``),
    :class:`snarl.runs.RunError` (an invalid point, an unusable ``out``),
    :class:`snarl.findings.FindingsError` (an expression naming what the runs do not
    have) and what :meth:`snarl.runs.Cache.run` raises."""
    cache = Cache(out)
    cache.check()
    points = space.points(method, count)
    held_out = set(space.holdout)
    searched = [f for f in findings.findings if f.id not in held_out]
    resolver = Resolver()
    planned = []
    for index, values in enumerate(points):
        try:
            planned.append(plan(searched, values, resolver))
        except RunError as e:
            raise RunError(f"point {index} ({_describe(values)}): {e}") from None
        if index == 0:  # which runs a parameter applies to does not depend on its value
            try:
                unused(planned[0], values, f"{space.path}: parameter")
            except FindingsError as e:
                raise SpaceError(str(e)) from None

    def starting(stage: str) -> Callable[[int, int, str | None], object] | None:
        if on_start is None:
            return None
        return lambda total, todo, runner: on_start(stage, total, todo, runner)

    every = [p for one in planned for p in one.points()]
    results = cache.run(
        every, workers, scheduler, processes, retry_failed, progress, starting("search"), label="calibration"
    )
    outcomes = [evaluate_all(searched, one, results) for one in planned]
    calibration = Calibration(findings, space, method, points, searched, outcomes)
    calibration.runs = len(results)
    calibration.failed_runs = sum(1 for r in results.values() if not r.ok)

    holdout = [findings.find(i) for i in space.holdout]
    best = calibration.best
    try:
        at_best = plan(holdout, points[best], resolver)
    except RunError as e:
        raise RunError(f"held-out findings at point {best} ({_describe(points[best])}): {e}") from None
    extra = cache.run(
        at_best.points(), workers, scheduler, processes, retry_failed, progress, starting("holdout"), label="held-out"
    )
    calibration.holdout = evaluate_all(holdout, at_best, extra)
    calibration.failed_runs += sum(1 for r in extra.values() if not r.ok and r.id not in results)
    write(calibration, Path(out))
    return calibration


def _describe(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items())


def write(calibration: Calibration, out: Path) -> None:
    """``calibration.parquet``, ``.csv``, ``.json`` and ``.png`` in ``out``."""
    import io

    from snarl.sweep import _write_atomic, versions

    frame = calibration.table()
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    _write_atomic(out / f"{TABLE}.parquet", buffer.getvalue())
    _write_atomic(out / f"{TABLE}.csv", frame.to_csv(index=False).encode("utf-8"))
    data = {**calibration.to_dict(), "versions": versions()}
    _write_atomic(out / f"{TABLE}.json", (json.dumps(data, indent=1, default=str) + "\n").encode("utf-8"))
    figure = plot(calibration)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    _write_atomic(out / f"{TABLE}.png", buffer.getvalue())


# ----------------------------------------------------------------------------- the figure


def plot(calibration: Calibration) -> Figure:
    """Findings held over the two most influential parameters: a dot per combination of
    their values seen, coloured (and labelled) by the mean number of searched findings
    held there, the best point starred. With one parameter, findings held against it."""
    from matplotlib.figure import Figure

    keys = calibration.influential()[:2]
    parameters = {p.key: p for p in calibration.space.parameters}
    held = calibration.held
    total = len(calibration.searched)
    figure = Figure(figsize=(6.4, 4.8), dpi=150, layout="constrained")
    axes = figure.add_subplot()
    positions = {key: _axis(axes, "x" if n == 0 else "y", parameters[key], [p[key] for p in calibration.points]) for n, key in enumerate(keys)}

    cells: dict[tuple[float, float], list[int]] = {}
    for index, point in enumerate(calibration.points):
        x = positions[keys[0]](point[keys[0]])
        y = positions[keys[1]](point[keys[1]]) if len(keys) > 1 else float(held[index])
        cells.setdefault((x, y), []).append(held[index])
    xs = [c[0] for c in cells]
    ys = [c[1] for c in cells]
    means = [sum(v) / len(v) for v in cells.values()]
    if len(keys) > 1:
        dots = axes.scatter(xs, ys, c=means, cmap="viridis", vmin=0, vmax=max(total, 1), s=260 if len(cells) <= 64 else 60, edgecolors="black", linewidths=0.4)
        if len(cells) <= 64:
            for x, y, m in zip(xs, ys, means):
                axes.annotate(f"{m:.3g}", (x, y), ha="center", va="center", fontsize=7, color="white" if m < 0.6 * total else "black")
        figure.colorbar(dots, ax=axes, label=f"findings held (of {total} searched)")
        best = calibration.points[calibration.best]
        axes.scatter([positions[keys[0]](best[keys[0]])], [positions[keys[1]](best[keys[1]])], marker="*", s=420, facecolors="none", edgecolors="red", linewidths=1.5, label="the best point")
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=8, frameon=False)
    else:
        axes.scatter(xs, ys, s=40)
        axes.set_ylabel(f"findings held (of {total} searched)")
        axes.set_ylim(-0.3, total + 0.3)
    scores = calibration.influence()
    axes.set_title(
        f"{calibration.findings.paper or calibration.findings.path.name}: findings held, {calibration.method} "
        f"of {len(calibration.points)} points\n(influence: "
        + ", ".join(f"{k} {scores[k]:.3g}" for k in calibration.influential()) + ")",
        fontsize=8,
    )
    return figure


def _axis(axes: Any, which: str, parameter: Any, values: Sequence[Any]) -> Callable[[Any], float]:
    """Sets up one axis of the figure for a parameter's values and returns how a value
    maps onto it: numbers (log-scaled with ``log``) or one tick per distinct value."""
    label = f"{parameter.key}" + (f" ({parameter.unit})" if parameter.unit else "")
    set_label = axes.set_xlabel if which == "x" else axes.set_ylabel
    set_label(label)
    numbers = [_number(v, parameter.unit) for v in values]
    if all(n is not None for n in numbers):
        if parameter.log:
            (axes.set_xscale if which == "x" else axes.set_yscale)("log")
        return lambda v: float(_number(v, parameter.unit))  # type: ignore[arg-type]
    distinct = list(dict.fromkeys(json.dumps(v, sort_keys=True) for v in values))
    ticks = (axes.set_xticks if which == "x" else axes.set_yticks)
    ticks(range(len(distinct)), [_tick(json.loads(d)) for d in distinct])
    return lambda v: float(distinct.index(json.dumps(v, sort_keys=True)))


def _tick(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


# ----------------------------------------------------------------------------- the report


def print_report(calibration: Calibration, out: Path, console: Any = None) -> None:
    """The report as rich tables on stdout."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=150)
    c = calibration
    keys = c.space.keys
    n, ids = len(c.searched), [f.id for f in c.searched]
    held = c.held
    console.print(
        f"[bold]snarl calibrate[/bold] {c.findings.path.name}: {len(c.points)} points ({c.method}), "
        f"{n} searched findings, {len(c.space.holdout)} held out, {c.runs} runs"
        + (f", [red]{c.failed_runs} failed[/red] (their findings do not hold there)" if c.failed_runs else "")
    )

    def points_table(title: str, indices: Sequence[int], with_held: bool) -> Table:
        table = Table(title=title, title_justify="left")
        table.add_column("point", justify="right")
        for key in keys:
            table.add_column(key, justify="right")
        if with_held:
            table.add_column("held", justify="right")
            table.add_column("not holding", overflow="fold")
        for i in indices:
            cells = [str(i), *(show(c.points[i][k]) for k in keys)]
            if with_held:
                cells += [f"{held[i]} of {n}", ", ".join(o.finding.id for o in c.outcomes[i] if not o.holds) or "-"]
            table.add_row(*cells)
        return table

    everywhere = c.all_hold
    title = f"Points where all {n} searched findings hold: {len(everywhere)} of {len(c.points)}"
    if everywhere:
        console.print(points_table(title + (" (the first 10)" if len(everywhere) > 10 else ""), everywhere[:10], False))
    else:
        console.print(title)
    console.print(points_table(f"Best points by findings held (of {n})", c.ranking()[:BEST], True))

    together = c.together()
    matrix = Table(title="Held together: points where both hold (diagonal: each)", title_justify="left")
    matrix.add_column("finding")
    for k in range(n):
        matrix.add_column(str(k + 1), justify="right")
    for a in range(n):
        cells = []
        for b in range(n):
            count = together[a][b]
            cells.append(f"[red]never[/red]" if count == 0 and a != b else str(count))
        matrix.add_row(f"{a + 1}. {ids[a]}", *cells)
    console.print(matrix)
    never = [(ids[a], ids[b]) for a in range(n) for b in range(a + 1, n) if not together[a][b]]
    if never:
        console.print("never together: " + "; ".join(f"{a} and {b}" for a, b in never), soft_wrap=True)

    best = c.best
    table = Table(
        title=f"Held-out findings at the best point ({best}: {_describe(c.points[best])})", title_justify="left"
    )
    for name in ("finding", "paper", "paper's value", "snarl's value", "holds"):
        table.add_column(name, no_wrap=name in ("finding", "holds"), overflow="fold")
    for o in c.holdout:
        colour = {True: "green", False: "red", None: "yellow"}[o.holds]
        table.add_row(o.finding.id, o.finding.paper, o.finding.paper_value, o.value_text(), f"[{colour}]{o.holds_text()}[/{colour}]")
    console.print(table)
    for o in c.holdout:
        if o.error:
            console.print(f"{o.finding.id}: {o.error}", soft_wrap=True)
    scores = c.influence()
    console.print("influence (variance of the mean held per value): " + ", ".join(f"{k} {scores[k]:.3g}" for k in c.influential()))
    console.print(f"table {out / (TABLE + '.parquet')} (and .csv), report {out / (TABLE + '.json')}, figure {out / (TABLE + '.png')}")
