"""``snarl compare``: runs side by side.

``snarl compare RUN_OR_SWEEP... [-o page.html] [--name NAME ...]`` puts runs next to
each other: each argument is a ``snarl run --out`` directory (one run) or a
``snarl sweep --out`` directory (each of its successful points a run, named by its swept
values). Runs are named by their directory name unless ``--name`` names each argument.

- :func:`load_runs` reads the runs (:class:`Run`); a directory that is neither a run
  nor a sweep is a :class:`CompareError`;
- :func:`summary_rows` / :func:`summary_frame`: their summaries in one table, a row per
  figure (the whole fabric, each group, the recovery, every numeric figure of the
  summary's sections), with each run's difference to the first;
- :func:`config_differences`: the keys of the resolved configs whose values differ;
- :func:`throughput_figure` (throughput per group over time, a curve per run),
  :func:`fct_figure` (FCT distributions per group), :func:`trees_figure`
  (congestion-tree sizes over time, for runs with a ``trees`` table, read by
  :func:`read_trees`); :func:`tree_figures`: each run's trees drawn on its fabric, an
  animation and a strip (runs with ``[observe.trees]``, as ``snarl plot tree``);
- :func:`render` / :func:`write_page`: one self-contained HTML page of it all (the
  figures as embedded PNGs, the resolved configs), as ``snarl report`` writes for a
  sweep; :func:`print_summary`: the table on the terminal (rich).

One run alone gives a run's page (``snarl report RUN_DIR``): its summary, its
throughput, flow- and congestion-control events, FCTs and trees over time (with the
trees' animation and strip), its tables and its config.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from snarl.trees import PageFigure

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]


class CompareError(ValueError):
    """A directory that holds no run to compare, names that do not fit, or results that
    cannot be read."""


RUN = "run"
SWEEP = "sweep"


def kind_of(directory: str | os.PathLike[str]) -> str:
    """``"run"`` for a ``snarl run --out`` directory (it has ``summary.json``),
    ``"sweep"`` for a ``snarl sweep --out`` directory (``points.parquet``);
    :class:`CompareError` (one line) for anything else."""
    path = Path(directory)
    if not path.exists():
        raise CompareError(f"{path}: no such directory")
    if not path.is_dir():
        raise CompareError(f"{path}: not a directory (give a `snarl run --out` or `snarl sweep --out` directory)")
    if (path / "points.parquet").is_file():
        return SWEEP
    if (path / "summary.json").is_file():
        return RUN
    raise CompareError(
        f"{path}: not a sweep directory (no points.parquet) nor a run directory (no summary.json): "
        "write one with `snarl run FILE.toml --out DIR` or `snarl sweep SWEEP.toml --out DIR`"
    )


# ----------------------------------------------------------------------------- runs


@dataclass(eq=False)
class Run:
    """One run to compare: a ``snarl run --out`` directory, or one point of a sweep
    directory (``point`` is its id)."""

    name: str
    directory: Path
    summary: dict[str, Any]
    config_toml: str = ""
    point: str | None = None
    _frames: dict[str, pd.DataFrame | None] = field(default_factory=dict, repr=False)

    @property
    def source(self) -> str:
        """Where the run's results are: ``out/none``, or ``out/sweep point 1a2b...``."""
        return f"{self.directory} point {self.point}" if self.point else str(self.directory)

    @property
    def unit(self) -> str:
        """The run's time unit (``ns``, or ``cycles``)."""
        return str(self.summary.get("time_unit") or "ns")

    @cached_property
    def config(self) -> dict[str, Any]:
        """The run's resolved config as a dict (empty if it was not written)."""
        if not self.config_toml:
            return {}
        try:
            return _tomllib.loads(self.config_toml)
        except ValueError as e:
            raise CompareError(f"{self.source}: cannot read its config as TOML: {e}") from None

    def table_path(self, name: str) -> Path:
        """The file of the run's table ``name`` (which may not exist)."""
        if self.point is None:
            return self.directory / f"{name}.parquet"
        return self.directory / name / f"{self.point}.parquet"

    @property
    def table_names(self) -> list[str]:
        """The names of the tables the run wrote, sorted."""
        if self.point is None:
            return sorted(p.stem for p in self.directory.glob("*.parquet"))
        return sorted(
            p.name for p in self.directory.iterdir() if p.is_dir() and (p / f"{self.point}.parquet").is_file()
        )

    def table(self, name: str) -> pd.DataFrame | None:
        """The run's table ``name``, or ``None`` if it has none; :class:`CompareError`
        if the file cannot be read."""
        if name not in self._frames:
            path = self.table_path(name)
            self._frames[name] = _read_parquet(path) if path.is_file() else None
        return self._frames[name]


def _read_parquet(path: Path) -> pd.DataFrame:
    import pandas as pd
    from pyarrow import ArrowException

    try:
        return pd.read_parquet(path)
    except (OSError, ValueError, ArrowException) as e:
        raise CompareError(f"{path}: cannot read it as Parquet: {e}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CompareError(f"{path}: cannot read it as JSON: {e}") from None


def _read_run(directory: Path, name: str) -> Run:
    summary = _read_json(directory / "summary.json")
    if not isinstance(summary, dict):
        raise CompareError(f"{directory / 'summary.json'}: not the summary of a run")
    config_path = directory / "config.toml"
    try:
        config = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""
    except OSError as e:
        raise CompareError(f"{config_path}: cannot read it: {e.strerror or e}") from None
    return Run(name=name, directory=directory, summary=summary, config_toml=config)


def _value_text(value: Any) -> str:
    """A swept value in a run's name: ``0.5``, ``dcqcn``, a table by its ``type`` and
    its other keys."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, dict):
            value = decoded
        else:
            return value
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        rest = ", ".join(f"{k} {_value_text(v)}" for k, v in value.items() if k != "type")
        if "type" not in value:
            return rest
        return f"{value['type']} ({rest})" if rest else str(value["type"])
    return str(value)


def _short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each dotted key by its shortest ending that no other key shares and that does not
    start with an index: ``traffic.load`` -> ``load``, ``traffic.groups.0.cap`` ->
    ``cap``, or ``groups.0.cap`` beside ``traffic.groups.1.cap``."""
    parts = {key: key.split(".") for key in keys}
    short = {}
    for key, words in parts.items():
        for length in range(1, len(words) + 1):
            ending = words[-length:]
            if ending[0].isdigit() and length < len(words):
                continue
            if not any(other != key and theirs[-length:] == ending for other, theirs in parts.items()):
                short[key] = ".".join(ending)
                break
        else:
            short[key] = key
    return short


def _sweep_runs(directory: Path, prefix: str | None) -> tuple[list[Run], int]:
    """The successful points of a sweep directory as runs, named by the swept values
    that differ between them (a swept ``description`` alone when it tells them apart),
    after ``prefix: `` if given; and how many points were left out (failed)."""
    import pandas as pd

    points = _read_parquet(directory / "points.parquet")
    if "point_id" not in points.columns:
        raise CompareError(f"{directory / 'points.parquet'}: not the table of a sweep (no point_id column)")
    ok = points[points["status"] == "ok"] if "status" in points.columns else points
    if ok.empty:
        raise CompareError(f"{directory}: no successful point to compare")
    records = []
    for point_id in ok["point_id"].astype(str):
        path = directory / "points" / f"{point_id}.json"
        record = _read_json(path) if path.is_file() else {}
        if not isinstance(record, dict) or not isinstance(record.get("summary"), dict):
            raise CompareError(f"{path}: no summary of point {point_id}")
        records.append((point_id, record))
    values = [record.get("values") or {} for _, record in records]
    keys = list(dict.fromkeys(k for v in values for k in v))
    texts = pd.DataFrame([{k: json.dumps(v.get(k), sort_keys=True, default=str) for k in keys} for v in values])
    varying = [k for k in keys if texts[k].nunique() > 1] if len(records) > 1 else keys
    if "description" in varying and texts["description"].nunique() == len(records):
        varying = ["description"]
    short = _short_keys(varying)
    runs = []
    for (point_id, record), value in zip(records, values):
        parts = [
            _value_text(value[k]) if k == "description" else f"{short[k]}={_value_text(value[k])}"
            for k in varying if k in value
        ]
        name = ", ".join(parts) or point_id
        runs.append(
            Run(
                name=f"{prefix}: {name}" if prefix else name,
                directory=directory,
                summary=record["summary"],
                config_toml=str(record.get("config") or ""),
                point=point_id,
            )
        )
    return runs, len(points) - len(ok)


@dataclass
class Loaded:
    """What :func:`load_runs` found: the runs, in order, and the points of sweeps it
    left out because they failed (directory -> count)."""

    runs: list[Run]
    failed: dict[Path, int] = field(default_factory=dict)


def load_runs(
    directories: Sequence[str | os.PathLike[str]], names: Sequence[str] | None = None
) -> Loaded:
    """The runs of ``directories`` (run and sweep directories, in order): a run
    directory is one run named by its directory name (or its entry of ``names``); a
    sweep directory gives its successful points, named by their swept values (after its
    entry of ``names``, or after its directory name when other arguments are given).

    :class:`CompareError` for a directory that is neither, ``names`` of another length
    than ``directories``, or two runs of one name."""
    paths = [Path(d) for d in directories]
    if not paths:
        raise CompareError("no run or sweep directory given")
    if names is not None:
        names = [str(n).strip() for n in names]
        if len(names) != len(paths):
            raise CompareError(
                f"--name: {len(names)} name{'s' if len(names) != 1 else ''} for {len(paths)} "
                f"director{'ies' if len(paths) != 1 else 'y'}: give one --name per RUN_OR_SWEEP, in order"
            )
        if not all(names):
            raise CompareError("--name: an empty name")
    kinds = [kind_of(path) for path in paths]
    loaded = Loaded(runs=[])
    for index, (path, kind) in enumerate(zip(paths, kinds)):
        given = names[index] if names is not None else None
        if kind == RUN:
            loaded.runs.append(_read_run(path, given or path.resolve().name))
        else:
            prefix = given if given is not None else (path.resolve().name if len(paths) > 1 else None)
            runs, failed = _sweep_runs(path, prefix)
            loaded.runs.extend(runs)
            if failed:
                loaded.failed[path] = failed
    seen: dict[str, Run] = {}
    for run in loaded.runs:
        if run.name in seen:
            raise CompareError(
                f"two runs are named {run.name!r} ({seen[run.name].source} and {run.source}): "
                "name each argument with --name"
            )
        seen[run.name] = run
    return loaded


# ----------------------------------------------------------------------------- summary table

LOAD, GBPS, TIME, COUNT, RATIO, FIGURE = "load", "gbps", "time", "count", "ratio", "figure"
"""How a row's figures are written."""

HIGHER, LOWER, NEUTRAL = 1, -1, 0
"""Which way a figure is better (``NEUTRAL``: neither, or it depends)."""


@dataclass
class Row:
    """One figure of the summary table: its values per run (``None`` where a run has
    none) and their differences to the first run's."""

    section: str
    label: str
    values: list[Any]
    kind: str = FIGURE
    better: int = NEUTRAL

    def text(self, index: int) -> str:
        """The value of run ``index`` as written in the table."""
        return _format(self.values[index], self.kind)

    def difference(self, index: int) -> tuple[str, float | None]:
        """Run ``index``'s difference to the first run: ``("+12.5%", 0.125)``,
        ``("=", 0.0)``, an absolute difference when the first run's value is zero
        (``("+7", None)``), ``("differs", None)`` for text; ``("", None)`` when either
        has no value."""
        return _difference(self.values[index], self.values[0])

    def verdict(self, index: int) -> int:
        """+1 if run ``index`` is better than the first by more than 1% (or the first has
        zero), -1 if worse, 0 otherwise or for a neutral figure."""
        if self.better == NEUTRAL:
            return 0
        value, first = self.values[index], self.values[0]
        if not _is_number(value) or not _is_number(first) or value == first:
            return 0
        relative = _difference(value, first)[1]
        if relative is not None and abs(relative) < 0.01:
            return 0
        return self.better if value > first else -self.better


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _difference(value: Any, first: Any) -> tuple[str, float | None]:
    if value is None or first is None:
        return "", None
    if _is_number(value) and _is_number(first):
        if value == first:
            return "=", 0.0
        if first == 0:
            change = value - first
            return (f"{change:+,}" if isinstance(change, int) else f"{change:+,.4g}"), None
        relative = (value - first) / abs(first)
        return f"{relative:+.1%}", relative
    if isinstance(value, float) and isinstance(first, float) and math.isnan(value) and math.isnan(first):
        return "=", None
    return ("=" if value == first else "differs"), None


def _format(value: Any, kind: str) -> str:
    """A figure as the table writes it: loads with 4 decimals, Gb/s with 2, times with 1
    below 1000 (else whole), counts with separators; ``-`` for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    if not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "-" if math.isnan(value) else str(value)
    if kind == LOAD:
        return f"{value:,.4f}"
    if kind == GBPS:
        return f"{value:,.2f}"
    if kind == RATIO:
        return f"{value:,.2f}"
    if kind == TIME:
        return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) or (kind == COUNT and float(value).is_integer()):
        return f"{int(value):,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


SUMMARY_KEYS = frozenset({
    "accepted_load", "offered_load", "received_load", "accepted_gbps", "offered_gbps", "received_gbps", "latency",
    "network_latency", "message_latency", "packets", "fct", "groups", "counters", "recovery", "sim_time",
    "stopped_after", "measure_from", "time_unit", "seed", "events", "packet_hops", "wall_seconds",
})
"""The summary's own keys (every other key is a section of a mechanism), as
``snarl.cli.SUMMARY_KEYS``."""


def _get(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _figures(unit: str, flows: bool, whole: bool) -> list[tuple[str, str, str, int]]:
    """``(label, key path, kind, better)`` of the figures of the whole fabric
    (``whole``) or of a group."""
    rows = [
        ("offered load", "offered_load", LOAD, NEUTRAL),
        ("accepted load", "accepted_load", LOAD, HIGHER),
        ("received load", "received_load", LOAD, HIGHER),
        ("accepted Gb/s per host", "accepted_gbps", GBPS, HIGHER),
        (f"latency mean ({unit})", "latency.mean", TIME, LOWER),
        (f"latency p99 ({unit})", "latency.p99", TIME, LOWER),
    ]
    if not whole:
        rows.insert(0, ("hosts", "hosts", COUNT, NEUTRAL))
    if flows:
        fct = "fct.fct" if whole else "fct"
        slowdown = "fct.slowdown" if whole else "slowdown"
        rows += [
            ("flows completed", "fct.flows" if whole else "flows", COUNT, HIGHER),
            (f"FCT p50 ({unit})", f"{fct}.p50", TIME, LOWER),
            (f"FCT p99 ({unit})", f"{fct}.p99", TIME, LOWER),
            ("FCT slowdown p50", f"{slowdown}.p50", RATIO, LOWER),
            ("FCT slowdown p99", f"{slowdown}.p99", RATIO, LOWER),
        ]
    rows += [
        ("packets delivered", "packets.delivered", COUNT, HIGHER),
        ("packets dropped", "packets.dropped", COUNT, LOWER),
    ]
    return rows


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """The scalar figures of a section, by dotted key (lists are left out)."""
    if isinstance(value, Mapping):
        found: list[tuple[str, Any]] = []
        for key, inner in value.items():
            found += _leaves(inner, f"{prefix}.{key}" if prefix else str(key))
        return found
    if isinstance(value, list):
        return []
    return [(prefix, value)]


def summary_rows(runs: Sequence[Run]) -> list[Row]:
    """The rows of the summary table, grouped by ``section``: ``all hosts``, one per
    group (when the runs have several), ``recovery`` (runs with a disturbance), then
    each section of the summaries (``pfc``, ``isolation``, ...) with every scalar
    figure it holds. A row is left out when no run has its figure."""
    summaries = [run.summary for run in runs]
    unit = runs[0].unit if runs else "ns"
    rows: list[Row] = []

    def add(section: str, label: str, values: list[Any], kind: str = FIGURE, better: int = NEUTRAL) -> None:
        if any(v is not None for v in values):
            rows.append(Row(section, label, values, kind, better))

    flows = any((_get(s, "fct.flows") or 0) > 0 for s in summaries)
    for label, path, kind, better in _figures(unit, flows, whole=True):
        add("all hosts", label, [_get(s, path) for s in summaries], kind, better)
    groups = list(dict.fromkeys(g for s in summaries for g in (s.get("groups") or {})))
    if len(groups) > 1:
        for group in groups:
            figures = [(s.get("groups") or {}).get(group) for s in summaries]
            has_flows = any((_get(f, "flows") or 0) > 0 for f in figures)
            for label, path, kind, better in _figures(unit, has_flows, whole=False):
                add(f"group {group}", label, [_get(f, path) for f in figures], kind, better)
    recoveries = [s.get("recovery") for s in summaries]
    if any(isinstance(r, Mapping) for r in recoveries):
        for label, key, kind, better in (
            ("load before the disturbance", "pre_burst_load", LOAD, NEUTRAL),
            ("lowest load", "lowest_load", LOAD, HIGHER),
            ("drop depth", "drop_depth", LOAD, LOWER),
            ("recovered", "recovered", FIGURE, NEUTRAL),
            (f"time to recover ({unit})", "time_to_recover", TIME, LOWER),
        ):
            add("recovery", label, [_get(r, key) for r in recoveries], kind, better)
    names = list(dict.fromkeys(k for s in summaries for k in s if k not in SUMMARY_KEYS))
    for name in names:
        flat = [dict(_leaves(s.get(name))) if isinstance(s.get(name), Mapping) else {} for s in summaries]
        keys = list(dict.fromkeys(k for f in flat for k in f))
        for key in keys:
            add(name, key, [f.get(key) for f in flat])
    counters = [s.get("counters") or {} for s in summaries]
    for key in dict.fromkeys(k for c in counters for k in c):
        values = [c.get(key) for c in counters]
        if any(v for v in values):
            add("counters", key.replace("_", " "), values, COUNT)
    return rows


def summary_frame(runs: Sequence[Run]) -> pd.DataFrame:
    """The summary table as a DataFrame: index ``(section, figure)``, a column per run
    (its name) with its values, and beside each run but the first a column
    ``<name> vs <first>``: its difference to the first run, relative (a fraction) where
    the first run's value is not zero."""
    import pandas as pd

    rows = summary_rows(runs)
    data: dict[str, list[Any]] = {}
    for index, run in enumerate(runs):
        data[run.name] = [row.values[index] for row in rows]
        if index:
            data[f"{run.name} vs {runs[0].name}"] = [row.difference(index)[1] for row in rows]
    frame = pd.DataFrame(data, index=pd.MultiIndex.from_tuples([(r.section, r.label) for r in rows], names=["section", "figure"]))
    return frame


def _flatten_config(value: Any, prefix: str = "") -> dict[str, Any]:
    """A resolved config as ``dotted.key -> scalar`` (tables of arrays by index, lists
    of scalars whole)."""
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, inner in value.items():
            flat.update(_flatten_config(inner, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
        flat = {}
        for index, inner in enumerate(value):
            flat.update(_flatten_config(inner, f"{prefix}.{index}"))
        return flat
    return {prefix: value}


IGNORED_CONFIG_KEYS = ("description",)
"""Config keys left out of the differences (free text)."""


def config_differences(runs: Sequence[Run]) -> list[tuple[str, list[Any]]]:
    """``(dotted key, values per run)`` of every key of the resolved configs whose
    value is not the same in all runs (``None`` where a run's config lacks it); the
    ``description`` is left out. Empty for one run, or runs without configs."""
    if len(runs) < 2:
        return []
    flats = [_flatten_config(run.config) for run in runs]
    keys = list(dict.fromkeys(k for f in flats for k in f))
    differing = []
    for key in keys:
        if key.split(".")[0] in IGNORED_CONFIG_KEYS:
            continue
        values = [f.get(key) for f in flats]
        texts = {json.dumps(v, sort_keys=True, default=str) for v in values}
        if len(texts) > 1:
            differing.append((key, values))
    return differing


def _config_text(value: Any, most: int = 60) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= most else text[: most - 1] + "…"


# ----------------------------------------------------------------------------- terminal


def print_summary(runs: Sequence[Run], console: Any = None, failed: Mapping[Path, int] | None = None) -> None:
    """The summary table (and the config keys that differ) on the terminal, with rich:
    a column per run, each run but the first with its difference to the first."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=max(120, 32 + 22 * len(runs)))
    rows = summary_rows(runs)
    table = Table(
        title=_markup(f"Summary ({'differences relative to ' + runs[0].name if len(runs) > 1 else runs[0].name})"),
        title_justify="left",
    )
    table.add_column("figure", justify="left")
    for run in runs:
        table.add_column(_markup(run.name), justify="right", overflow="fold")
    section = None
    for row in rows:
        if row.section != section:
            if section is not None:
                table.add_section()
            section = row.section
            table.add_row(f"[bold]{_markup(section)}[/bold]", *([""] * len(runs)))
        cells = [_markup(row.text(0))]
        for index in range(1, len(runs)):
            text, _ = row.difference(index)
            colour = {1: "green", -1: "red"}.get(row.verdict(index))
            diff = f" [{colour}]({_markup(text)})[/{colour}]" if colour and text else (f" [dim]({_markup(text)})[/dim]" if text else "")
            cells.append(_markup(row.text(index)) + diff)
        table.add_row(f"  {_markup(row.label)}", *cells)
    console.print(table)
    differing = config_differences(runs)
    if differing:
        config = Table(title="Config differences", title_justify="left")
        config.add_column("key", justify="left")
        for run in runs:
            config.add_column(_markup(run.name), justify="left", overflow="fold")
        for key, values in differing:
            config.add_row(_markup(key), *(_markup(_config_text(v, 40)) for v in values))
        console.print(config)
    elif len(runs) > 1 and all(run.config_toml for run in runs):
        console.print("The resolved configs are the same (apart from their descriptions).")
    for directory, count in (failed or {}).items():
        console.print(f"{_markup(str(directory))}: {count} failed point{'s' if count != 1 else ''} left out")


def _markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# ----------------------------------------------------------------------------- figures

FIGSIZE_PANEL = (4.8, 3.4)
"""Inches of one panel of the overlaid figures."""
MAX_COLUMNS = 3
"""Panels side by side, at most."""


def _time_scale(times: Iterable[float], unit: str) -> tuple[float, str]:
    """``(divisor, unit shown)`` for a time axis: µs from 100 µs, ms from 100 ms."""
    if unit != "ns":
        return 1.0, unit
    top = max((float(t) for t in times), default=0.0)
    if top >= 1e8:
        return 1e6, "ms"
    if top >= 1e5:
        return 1e3, "µs"
    return 1.0, "ns"


def _duration(text: Any, unit: str) -> float | None:
    """A config's duration (``"100us"``, ``"2000cycles"`` or a number) in ``unit``."""
    from snarl import plots

    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        return None
    try:
        return float(plots.parse_duration(text, unit))
    except (ValueError, plots.PlotError):
        return None


def _phases(runs: Sequence[Run]) -> list[tuple[float, str]]:
    """``(time, label)`` of the phases of the runs' timelines (``traffic.phases``),
    when every run that has phases has the same; none when they differ (a figure of
    several timelines shades none)."""
    timelines = set()
    for run in runs:
        phases = (run.config.get("traffic") or {}).get("phases") or []
        marks = []
        for phase in phases:
            at = _duration(phase.get("at"), run.unit) if isinstance(phase, Mapping) else None
            if at is not None:
                marks.append((at, str(phase.get("label") or phase.get("group") or "")))
        if marks:
            timelines.add(tuple(sorted(marks)))
    return list(timelines.pop()) if len(timelines) == 1 else []


def _grid(panels: int, extra_height: float = 0.6) -> tuple[Figure, list[Any]]:
    from snarl import plots

    columns = min(MAX_COLUMNS, max(panels, 1))
    rows = math.ceil(max(panels, 1) / columns)
    width, height = FIGSIZE_PANEL
    fig = plots.figure_class()(figsize=(width * columns, height * rows + extra_height), dpi=110, layout="constrained")
    axes = list(fig.subplots(rows, columns, squeeze=False).flat)
    for ax in axes[panels:]:
        ax.remove()
    return fig, axes[:panels]


def _colours(names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A colour and a line style per curve: ten colours, then dashed, dotted."""
    styles = ("-", "--", ":", "-.")
    return {name: (f"C{i % 10}", styles[(i // 10) % len(styles)]) for i, name in enumerate(names)}


def _overlay(
    panels: Mapping[str, Mapping[str, tuple[Any, Any]]],
    xlabel: str,
    ylabel: str,
    phases: Sequence[tuple[float, str]] = (),
    scale: float = 1.0,
    logx: bool = False,
    markers: bool = False,
    legend_title: str | None = None,
    ylim: tuple[float, float] | None = None,
    notes: Mapping[str, str] | None = None,
) -> Figure:
    """A grid of panels (title -> curves, name -> ``(x, y)``), each curve in one colour
    throughout, one legend below; phases shaded."""
    import numpy as np

    names = list(dict.fromkeys(name for curves in panels.values() for name in curves))
    colours = _colours(names)
    fig, axes = _grid(len(panels))
    for ax, (title, curves) in zip(axes, panels.items()):
        end = max((float(np.nanmax(np.asarray(x, dtype=float))) for x, _ in curves.values() if len(x)), default=0.0)
        for name, (x, y) in curves.items():
            colour, style = colours[name]
            ax.plot(
                np.asarray(x, dtype=float) / scale, np.asarray(y, dtype=float), color=colour, linestyle=style,
                linewidth=1.3, marker="o" if markers else None, markersize=3.5, label=name,
            )
        marks = [(at, text) for at, text in phases if at < end]
        for index, (at, text) in enumerate(marks):
            stop = marks[index + 1][0] if index + 1 < len(marks) else end
            ax.axvspan(at / scale, stop / scale, color="0.5", alpha=0.16 if index % 2 == 0 else 0.07, linewidth=0)
            if text:
                ax.annotate(
                    text, xy=(at / scale, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                    textcoords="offset points", rotation=90, va="top", ha="left", fontsize=7, color="0.3",
                )
        if notes and title in notes:
            ax.text(0.5, 0.5, notes[title], transform=ax.transAxes, ha="center", va="center", color="0.4", fontsize=8)
        if logx:
            ax.set_xscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        else:
            ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both" if logx else "major", alpha=0.3)
    seen: dict[str, Any] = {}
    for ax in axes:
        for line in ax.get_lines():
            seen.setdefault(line.get_label(), line)
    handles = [seen[n] for n in names if n in seen]
    if handles:
        # As many names to a row as fit the figure's width (about 12 characters an inch).
        longest = max(len(h.get_label()) for h in handles) + 5
        fit = max(1, int(fig.get_figwidth() * 12 / longest))
        fig.legend(
            handles, [h.get_label() for h in handles], loc="outside lower center", title=legend_title,
            ncols=min(len(handles), fit, 6), frameon=False, fontsize="small",
        )
    return fig


def _groups(frames: Sequence[pd.DataFrame]) -> list[str]:
    """The groups of the time series, in order: every group but ``all`` when there are
    several, else ``all``."""
    names = list(dict.fromkeys(g for frame in frames for g in frame["group"].astype(str)))
    others = [g for g in names if g != "all"]
    return others if len(others) > 1 else (["all"] if "all" in names else names)


def throughput_figure(runs: Sequence[Run], y: str = "accepted_load") -> Figure:
    """The throughput (``y`` of the ``timeseries`` tables) per window: a panel per
    group, a curve per run; for one run, one panel with a curve per group. The phases of
    the first run that has some are shaded. :class:`CompareError` if no run has a time
    series."""
    series = {run.name: run.table("timeseries") for run in runs}
    frames = {name: frame for name, frame in series.items() if frame is not None and {"time", "group", y} <= set(frame.columns)}
    if not frames:
        raise CompareError(f"no run has a time series with {y}")
    unit = runs[0].unit
    scale, shown = _time_scale((frame["time"].max() for frame in frames.values()), unit)
    groups = _groups(list(frames.values()))

    def curve(frame: pd.DataFrame, group: str) -> tuple[Any, Any]:
        rows = frame[frame["group"].astype(str) == group].sort_values("time")
        return rows["time"].to_numpy(), rows[y].to_numpy()

    if len(runs) == 1:
        (frame,) = frames.values()
        panels = {"throughput per group": {group: curve(frame, group) for group in groups}}
        title = "group"
    else:
        panels = {
            f"group {group}": {name: curve(frame, group) for name, frame in frames.items() if group in set(frame["group"].astype(str))}
            for group in groups
        }
        title = None
    from snarl import plots

    return _overlay(
        panels, f"time ({shown})", plots.label(y, unit) if y in ("accepted_load", "offered_load") else y,
        phases=_phases(runs), scale=scale, legend_title=title,
    )


FCT_QUANTILES = (("min", 0.0), ("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))
"""The points of an FCT distribution a summary gives."""


def fct_distribution(run: Run, group: str | None) -> tuple[list[float], list[float]] | None:
    """``(FCTs, cumulative fractions)`` of the flows of ``group`` (``None``: every flow)
    of a run, in its time unit: the summary's min, p50, p95, p99 and max (the runs keep
    no per-flow table); ``None`` when the run completed no flow there."""
    figures = _get(run.summary, f"groups.{group}") if group is not None else run.summary.get("fct")
    if not isinstance(figures, Mapping) or not (figures.get("flows") or 0) > 0:
        return None
    fct = figures.get("fct")
    if not isinstance(fct, Mapping):
        return None
    points = [(float(fct[k]), q) for k, q in FCT_QUANTILES if _is_number(fct.get(k))]
    if len(points) < 2:
        return None
    return [p[0] for p in points], [p[1] for p in points]


def flow_groups(runs: Sequence[Run]) -> list[str]:
    """The groups whose flows completed in some run, in order."""
    groups = list(dict.fromkeys(g for run in runs for g in (run.summary.get("groups") or {})))
    return [g for g in groups if any(fct_distribution(run, g) is not None for run in runs)]


def fct_figure(runs: Sequence[Run]) -> Figure:
    """The distribution of flow completion times: a panel per group with flows (every
    flow when there is one group), a curve per run through its summary's min, p50, p95,
    p99 and max, on a log scale; one run: one panel, a curve per group.
    :class:`CompareError` when no run completed a flow."""
    groups = flow_groups(runs)
    if len(groups) <= 1:
        groups = [None] if any(fct_distribution(run, None) for run in runs) else []
    if not groups:
        raise CompareError("no run completed a flow")
    unit = runs[0].unit
    scale, shown = (1e3, "µs") if unit == "ns" else (1.0, unit)

    def curves(group: str | None) -> dict[str, tuple[Any, Any]]:
        found = {run.name: fct_distribution(run, group) for run in runs}
        return {name: (x, y) for name, value in found.items() if value is not None for x, y in [value]}

    if len(runs) == 1:
        run = runs[0]
        panels = {"FCT per group": {str(g or "all flows"): fct_distribution(run, g) for g in groups}}
        panels = {title: {k: v for k, v in c.items() if v is not None} for title, c in panels.items()}
        legend = "group"
    else:
        panels = {f"group {g}" if g is not None else "all flows": curves(g) for g in groups}
        legend = None
    return _overlay(
        panels, f"flow completion time ({shown})", "fraction of flows", scale=scale, logx=True, markers=True,
        legend_title=legend, ylim=(0, 1.02),
    )


def read_trees(run: Run) -> pd.DataFrame | None:
    """The congestion trees of a run per window, from its ``trees`` table (one row per
    window and tree: ``time`` or ``window``, ``root``, ``size`` in ports): ``time`` (in
    the run's unit), ``trees`` (distinct roots) and ``ports`` (their summed sizes) per
    window; ``None`` when the run has no ``trees`` table, or one without a time and a
    size. A window index (``window``) is turned into the window's start with the
    config's ``simulation.window``."""
    frame = run.table("trees")
    if frame is None or frame.empty and not len(frame.columns):
        return None
    size = next((c for c in ("size", "ports", "size_ports") if c in frame.columns), None)
    if size is None:
        return None
    if "time" in frame.columns:
        times = frame["time"].astype(float)
    elif "window" in frame.columns:
        width = _duration((run.config.get("simulation") or {}).get("window"), run.unit)
        times = frame["window"].astype(float) * (width if width else 1.0)
    else:
        return None
    data = frame.assign(_time=times, _size=frame[size].astype(float))
    grouped = data.groupby("_time", sort=True)
    trees = grouped["root"].nunique() if "root" in data.columns else grouped["_size"].count()
    result = trees.rename("trees").to_frame()
    result["ports"] = grouped["_size"].sum()
    result["largest"] = grouped["_size"].max()
    return result.rename_axis("time").reset_index()


def trees_figure(runs: Sequence[Run]) -> Figure | None:
    """Congestion trees over time, a curve per run that has a ``trees`` table: the ports
    in trees per window, and the trees (roots) per window; ``None`` when no run has
    one."""
    trees = {run.name: read_trees(run) for run in runs}
    trees = {name: frame for name, frame in trees.items() if frame is not None}
    if not trees:
        return None
    unit = runs[0].unit
    scale, shown = _time_scale((frame["time"].max() for frame in trees.values() if len(frame)), unit)
    panels = {
        "ports in congestion trees": {n: (f["time"].to_numpy(), f["ports"].to_numpy()) for n, f in trees.items()},
        "congestion trees (roots)": {n: (f["time"].to_numpy(), f["trees"].to_numpy()) for n, f in trees.items()},
    }
    return _overlay(panels, f"time ({shown})", "per window", phases=_phases(runs), scale=scale)


def tree_figures(runs: Sequence[Run]) -> list[PageFigure]:
    """Each run's congestion trees on its fabric, for the runs that recorded them
    (``[observe.trees]``): its animation and its strip (:func:`snarl.trees.page_figures`,
    the drawings of ``snarl plot tree``), titled by the run's name; beside other runs,
    captioned by it too."""
    from snarl import trees

    found = []
    for run in runs:
        if trees.recorded(run.directory, run.point):
            label = run.name if len(runs) > 1 else None
            found += trees.page_figures(run.directory, run.point, label=label, title=run.name)
    return found


# ----------------------------------------------------------------------------- HTML

EXTRA_STYLE = """
.figures { grid-template-columns: 1fr; }
.table-wrap.whole { max-height: none; }
td.diff { color: var(--muted); font-size: 12px; text-align: left; padding-left: 2px; }
td.better { color: #1c7c3a; } td.worse { color: var(--bad); }
tr.section th { text-align: left; background: #f7f9fc; position: static; }
td.text.key { font-family: ui-monospace, monospace; font-size: 12px; }
"""


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def figures(runs: Sequence[Run]) -> list[tuple[str, str, str]]:
    """``(title, caption, data URI or "")`` of each figure of the page that overlays the
    runs (an empty URI with the reason in the caption when a figure cannot be drawn);
    the trees drawn on each run's fabric follow them (:func:`tree_figures`)."""
    from snarl import plots

    found: list[tuple[str, str, str]] = []
    single = len(runs) == 1

    def add(title: str, caption: str, make: Callable[[], Figure | None]) -> None:
        try:
            fig = make()
        except (CompareError, plots.PlotError, KeyError, ValueError) as e:
            found.append((title, f"Not drawn: {e}", ""))
            return
        if fig is not None:
            found.append((title, caption, _png(fig)))

    each = "a curve per group" if single else "a panel per group, a curve per run"
    add(
        "Throughput over time",
        f"Accepted load per time window ({each}), as a fraction of the hosts' link capacity; the phases of the "
        "timeline shaded.",
        lambda: throughput_figure(runs),
    )
    if single and runs[0].table("fabric") is not None:
        run = runs[0]
        add(
            "Flow and congestion control over time",
            "Accepted load per window and group, and below the pause frames, marks, congestion notifications and "
            "drops per window; dashed lines mark the phases.",
            lambda: plots.congestion_over_time(
                run.table("timeseries"), run.table("fabric"), phases=_phases([run]), unit=run.unit, title=run.name,
            ),
        )
    if any(fct_distribution(run, None) for run in runs):
        add(
            "Flow completion times",
            "Cumulative fraction of the flows completed within a time, through the summary's minimum, p50, p95, "
            f"p99 and maximum ({'a curve per group' if single else 'a panel per group with flows, a curve per run'}); "
            "log scale.",
            lambda: fct_figure(runs),
        )
        if single:
            buckets = (runs[0].summary.get("fct") or {}).get("buckets") or []
            add(
                "FCT slowdown by flow size",
                "Slowdown (FCT over the ideal FCT of the flow alone) p50, p95 and p99 per flow-size bucket.",
                lambda: plots.fct_slowdown(buckets, title=runs[0].name),
            )
    having = [run.name for run in runs if read_trees(run) is not None]
    if having:
        missing = [run.name for run in runs if run.name not in having]
        without = f" No trees table: {', '.join(missing)}." if missing else ""
        add(
            "Congestion trees over time",
            "Ports in congestion trees (summed over the trees) and the number of trees per window, from the "
            f"runs' trees tables.{without}",
            lambda: trees_figure(runs),
        )
    return found


def _summary_html(runs: Sequence[Run]) -> str:
    rows = summary_rows(runs)
    several = len(runs) > 1
    head = ['<th class="text">figure</th>']
    for index, run in enumerate(runs):
        span = ' colspan="2"' if several and index else ""
        head.append(f"<th{span}>{html.escape(run.name)}</th>")
    width = 1 + len(runs) + (len(runs) - 1 if several else 0)
    body, section = [], None
    for row in rows:
        if row.section != section:
            section = row.section
            body.append(f'<tr class="section"><th colspan="{width}">{html.escape(section)}</th></tr>')
        cells = [f'<td class="text">{html.escape(row.label)}</td>', f"<td>{html.escape(row.text(0))}</td>"]
        for index in range(1, len(runs)):
            text, _ = row.difference(index)
            verdict = {1: " better", -1: " worse"}.get(row.verdict(index), "")
            cells.append(f"<td>{html.escape(row.text(index))}</td>")
            cells.append(f'<td class="diff{verdict}">{html.escape(text)}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="table-wrap whole"><table><thead><tr>{"".join(head)}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
    )


def _config_html(runs: Sequence[Run]) -> str:
    differing = config_differences(runs)
    if not differing:
        if all(run.config_toml for run in runs):
            return "<p>The runs' resolved configs are the same (apart from their descriptions).</p>"
        return "<p>Not every run has its resolved config (<code>config.toml</code>).</p>"
    head = '<th class="text">key</th>' + "".join(f'<th class="text">{html.escape(run.name)}</th>' for run in runs)
    body = "".join(
        f'<tr><td class="text key">{html.escape(key)}</td>'
        + "".join(f'<td class="text">{html.escape(_config_text(v))}</td>' for v in values)
        + "</tr>"
        for key, values in differing
    )
    return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _runs_html(runs: Sequence[Run]) -> str:
    head = (
        '<th class="text">run</th><th class="text">results</th><th>seed</th><th>simulated</th>'
        '<th class="text">tables</th>'
    )
    body = []
    for run in runs:
        s = run.summary
        simulated = f"{_format(s.get('sim_time'), TIME)} {run.unit}" if s.get("sim_time") is not None else "-"
        body.append(
            f'<tr><td class="text">{html.escape(run.name)}</td><td class="text"><code>{html.escape(run.source)}</code></td>'
            f"<td>{html.escape(_format(s.get('seed'), COUNT))}</td><td>{html.escape(simulated)}</td>"
            f'<td class="text">{html.escape(", ".join(run.table_names) or "none")}</td></tr>'
        )
    return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _tables_html(run: Run) -> str:
    """One row per table of a run: its file, rows and columns."""
    import pyarrow.parquet as pq

    rows = []
    for name in run.table_names:
        path = run.table_path(name)
        try:
            meta = pq.read_metadata(path)
            columns, count = ", ".join(meta.schema.to_arrow_schema().names), f"{meta.num_rows:,}"
        except Exception as e:  # noqa: BLE001 - a damaged file is shown, not fatal
            columns, count = f"cannot read {path.name}: {e}", "-"
        rows.append(
            f'<tr><td class="text"><code>{html.escape(path.name)}</code></td><td>{html.escape(count)}</td>'
            f'<td class="text">{html.escape(columns)}</td></tr>'
        )
    if not rows:
        return "<p>The run wrote no table.</p>"
    head = '<th class="text">table</th><th>rows</th><th class="text">columns</th>'
    return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _figure_html(title: str, caption: str, uri: str, wide: bool = False) -> str:
    image = f'<img src="{uri}" alt="{html.escape(title)}">' if uri else ""
    kind = ' class="wide"' if wide else ""
    return f"<figure{kind}>{image}<figcaption><b>{html.escape(title)}.</b> {html.escape(caption)}</figcaption></figure>"


def render(runs: Sequence[Run], failed: Mapping[Path, int] | None = None, title: str | None = None) -> str:
    """The HTML page of ``runs``: one run's page, or several side by side (their
    summaries with differences to the first, the config keys that differ, the figures
    overlaid); self-contained (figures as data: URIs, styles inline)."""
    from snarl.html import SCRIPT, STYLE
    from snarl.sweep import versions

    if not runs:
        raise CompareError("no run to show")
    several = len(runs) > 1
    names = ", ".join(run.name for run in runs)
    if title is None:
        title = f"snarl comparison: {names}" if several else runs[0].name
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    kind = "comparison" if several else "run report"
    meta = f"snarl {versions()['snarl']} {kind} · written {written}"
    if not several:
        meta += f" · results in <code>{html.escape(runs[0].source)}</code>"
    else:
        meta = html.escape(meta)
    figure_html = [_figure_html(fig_title, caption, uri) for fig_title, caption, uri in figures(runs)]
    # The trees' drawings at their own size (an animation scaled up blurs), a row each.
    figure_html += [_figure_html(f.title, f.caption, f.uri, wide=True) for f in tree_figures(runs)]
    left_out = "".join(
        f"<li><code>{html.escape(str(d))}</code>: {n} failed point{'s' if n != 1 else ''} left out</li>"
        for d, n in (failed or {}).items()
    )
    description = str(runs[0].config.get("description") or "").strip() if not several else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{STYLE}{EXTRA_STYLE}</style></head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{meta}</p>',
    ]
    if description:
        parts.append(f"<p>{html.escape(description)}</p>")
    if several:
        parts += ["<h2>Runs</h2>", _runs_html(runs)]
        if left_out:
            parts.append(f"<ul>{left_out}</ul>")
    parts += [
        "<h2>Summary</h2>",
        (
            f"<p>Each run's figures, and beside each run but the first its difference to the first run "
            f"(<b>{html.escape(runs[0].name)}</b>): relative where the first run's figure is not zero, in green "
            "where better and red where worse by more than 1% (for loads, latencies, FCTs and packets). Loads are per "
            f"host, as fractions of the link capacity; times in {html.escape(runs[0].unit)}.</p>"
            if several else
            f"<p>Loads are per host, as fractions of the link capacity; times in {html.escape(runs[0].unit)}.</p>"
        ),
        _summary_html(runs),
    ]
    if several:
        parts += ["<h2>Config differences</h2>", "<p>The keys of the resolved configs whose values differ.</p>", _config_html(runs)]
    parts += [
        "<h2>Figures</h2>",
        f'<div class="figures">{"".join(figure_html) or "<p>Nothing to plot.</p>"}</div>',
    ]
    if not several:
        parts += ["<h2>Tables</h2>", "<p>The tables of the run, one Parquet file each.</p>", _tables_html(runs[0])]
    parts.append("<h2>Config</h2>" if not several else "<h2>Configs</h2>")
    for run in runs:
        text = run.config_toml or "(no config.toml)"
        if several:
            parts.append(f"<details><summary>{html.escape(run.name)}</summary><pre>{html.escape(text)}</pre></details>")
        else:
            parts.append(f"<details><summary>The resolved config</summary><pre>{html.escape(text)}</pre></details>")
    parts += [f"<script>{SCRIPT}</script>", "</body></html>", ""]
    return "\n".join(parts)


def write_page(
    directories: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    names: Sequence[str] | None = None,
    title: str | None = None,
) -> Path:
    """Writes the page of the runs of ``directories`` (:func:`load_runs`) to
    ``output``, atomically; returns its path."""
    from snarl.sweep import _write_atomic

    loaded = load_runs(directories, names)
    page = render(loaded.runs, loaded.failed, title)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(output, page.encode("utf-8"))
    return output
