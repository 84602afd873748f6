"""What a run hands back: :class:`Report`."""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]


TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
"""What a table's name looks like (it names its file, ``<name>.parquet``)."""


class TableNotFoundError(KeyError):
    """:meth:`Report.table` was asked for a table the run does not have.

    ``name`` is the table asked for, ``available`` the names of the run's tables.
    """

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = list(available)
        listed = ", ".join(self.available) or "none"
        super().__init__(f"no table {name!r} in this report (its tables: {listed})")

    def __str__(self) -> str:
        return str(self.args[0])


class Report:
    """The results of one run.

    Attributes:
        summary: the summary as a dict: ``accepted_load``, ``offered_load``,
            ``latency`` (mean, p50, p95, p99, max), ``packets`` (injected, delivered,
            in_flight, dropped), ``fct`` (flows, fct, slowdown, buckets), ``groups``,
            ``counters``, ``sim_time``, ``seed``, ...
        config_toml: the fully resolved config (every default written out) as TOML.

        notes: the lines the summary's sections (the mechanisms the run has) give for
            the printout of a run, in summary order.
        headlines: the sections' headline figures, ``section.key`` -> title (what a
            sweep's report plots against the load).

    The run's tables are :attr:`tables` (name -> DataFrame), each also by
    :meth:`table` and as an attribute (``report.<name>``). ``timeseries`` is in every
    run; ``rates`` in runs that record per-flow rates
    (``congestion_control.rate_series``); ``fabric`` in runs with pause frames, tail
    drop, ECN or congestion control; the others with the mechanisms or collectors that
    make them. Whatever tables the core returns are here, and written by :meth:`write`,
    by name.

    In Jupyter a report shows itself (``_repr_html_``): its headline figures per group
    (offered and accepted load, latency p50 and p99, packets) above the accepted load
    over time.
    """

    def __init__(
        self,
        summary_json: str,
        config_toml: str,
        tables: Mapping[str, Mapping[str, Any]] | None = None,
        notes: Sequence[str] | None = None,
        headlines: Mapping[str, str] | None = None,
    ) -> None:
        """Wraps the raw results of ``snarl._core.run``: ``(summary_json, config_toml,
        tables, notes, headlines)`` where ``tables`` maps each table's name to its
        columns (use :func:`snarl.run`)."""
        tables = dict(tables or {})
        for name in tables:
            if not isinstance(name, str) or not TABLE_NAME.match(name):
                raise ValueError(f"table name {name!r}: expected lowercase letters, digits and _ (it names a file)")
        self._summary_json = summary_json
        self._columns: dict[str, Mapping[str, Any]] = dict(sorted(tables.items()))
        self._arrows: dict[str, pa.Table] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self.config_toml: str = config_toml
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.notes: list[str] = list(notes or ())
        self.headlines: dict[str, str] = dict(headlines or {})

    def __getattr__(self, name: str) -> pd.DataFrame:
        """``report.<name>``: the table ``name`` (:meth:`table`), for a table the run
        has; an ``AttributeError`` for any other name."""
        columns = self.__dict__.get("_columns")
        if name.startswith("_") or columns is None or name not in columns:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.table(name)

    def __repr__(self) -> str:
        s = self.summary
        tables = ", ".join(f"{name}:{self.table_arrow(name).num_rows}" for name in self._columns)
        return (
            f"<snarl.Report offered_load={s.get('offered_load', float('nan')):.4f} "
            f"accepted_load={s.get('accepted_load', float('nan')):.4f} "
            f"groups={len(s.get('groups', {}))} tables=({tables})>"
        )

    def _repr_html_(self) -> str:
        """The report as a notebook shows it: the headline figures per group, the
        sections' lines, the tables, and the accepted load over time as an embedded PNG."""
        return self._html

    @cached_property
    def _html(self) -> str:
        return summary_html(self)

    def to_json(self) -> str:
        """The summary as the core wrote it: deterministic JSON (same config and seed,
        same text apart from ``wall_seconds``)."""
        return self._summary_json

    @cached_property
    def config(self) -> dict[str, Any]:
        """The fully resolved config as a dict (parsed from :attr:`config_toml`)."""
        return _tomllib.loads(self.config_toml)

    @cached_property
    def groups(self) -> pd.DataFrame:
        """One row per node group (index ``group``); nested figures are flattened into
        columns such as ``latency_p99`` and ``packets_delivered`` (the naming of the
        time series)."""
        import pandas as pd

        rows = {name: _flatten(figures) for name, figures in self.summary.get("groups", {}).items()}
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "group"
        return frame

    @cached_property
    def fct_buckets(self) -> pd.DataFrame:
        """Flow completion times by flow size: one row per bucket of ``summary["fct"]``
        (index ``label``: ``<10KB`` ... ``>=1MB``), with ``min_bytes``, ``max_bytes``
        (missing for the last bucket), ``flows`` and flattened figures such as
        ``fct_p99`` (in the run's time unit) and ``slowdown_p50``."""
        buckets = (self.summary.get("fct") or {}).get("buckets") or []
        return fct_bucket_frame(buckets)

    # ------------------------------------------------------------------------- tables

    @property
    def table_names(self) -> list[str]:
        """The names of the run's tables, sorted."""
        return list(self._columns)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the run, name -> DataFrame (sorted by name)."""
        return {name: self.table(name) for name in self._columns}

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name`` as a DataFrame (built once, then shared).

        Raises:
            TableNotFoundError: (a ``KeyError``) the run has no table ``name``; the
                message names the tables it has.
        """
        frame = self._frames.get(name)
        if frame is None:
            frame = self._frames[name] = self.table_arrow(name).to_pandas(split_blocks=True)
        return frame

    def table_arrow(self, name: str) -> pa.Table:
        """The table ``name`` as a pyarrow Table (numeric columns share the run's
        buffers). Raises :class:`TableNotFoundError` as :meth:`table` does."""
        table = self._arrows.get(name)
        if table is None:
            if name not in self._columns:
                raise TableNotFoundError(name, self.table_names)
            table = self._arrows[name] = _table(self._columns[name])
        return table

    def _known(self, name: str, columns: Sequence[str]) -> pd.DataFrame:
        """A table the convenience properties name: empty, with its usual columns, when
        the run has none."""
        if name in self._columns:
            return self.table(name)
        import pandas as pd

        return pd.DataFrame(columns=list(columns))

    def _known_arrow(self, name: str) -> pa.Table:
        if name in self._columns:
            return self.table_arrow(name)
        import pyarrow as pa

        return pa.table({})

    @property
    def timeseries(self) -> pd.DataFrame:
        """Throughput per fixed time window: one row per (window, group), including the
        group ``all`` (``table("timeseries")``)."""
        return self._known("timeseries", ())

    def to_arrow(self) -> pa.Table:
        """The time series as a pyarrow Table (``table_arrow("timeseries")``)."""
        return self._known_arrow("timeseries")

    @property
    def rates(self) -> pd.DataFrame:
        """Per-flow rates under congestion control: one row per rate change (``time``,
        ``src``, ``dst``, ``qp``, ``rate_gbps``); empty unless the config sets
        ``congestion_control.rate_series = true`` (``table("rates")``)."""
        return self._known("rates", RATE_COLUMNS)

    def rates_arrow(self) -> pa.Table:
        """The per-flow congestion-control rates as a pyarrow Table (see :attr:`rates`)."""
        return self._known_arrow("rates")

    @property
    def fabric(self) -> pd.DataFrame:
        """Flow- and congestion-control events per time window: ``time``,
        ``pause_frames``, ``resume_frames``, ``ecn_marks``, ``cnps``, ``rate_cuts``,
        ``packets_dropped`` (the marks, notifications and rate cuts named in the run's
        congestion-control family's own terms: ``docs/config.md``); empty in runs without pause frames,
        tail drop, ECN or congestion control (``table("fabric")``)."""
        return self._known("fabric", FABRIC_COLUMNS)

    def fabric_arrow(self) -> pa.Table:
        """The fabric events as a pyarrow Table (see :attr:`fabric`)."""
        return self._known_arrow("fabric")

    def parquet_tables(self) -> dict[str, bytes]:
        """Every table as the bytes of a Parquet file, by name."""
        import io

        import pyarrow.parquet as pq

        files = {}
        for name in self._columns:
            buffer = io.BytesIO()
            pq.write_table(self.table_arrow(name), buffer)
            files[name] = buffer.getvalue()
        return files

    def write(self, directory: str | Path) -> None:
        """Writes ``summary.json``, ``config.toml`` and every table as
        ``<name>.parquet`` into ``directory``, created (with its parents) if need be; files
        of those names already there are replaced."""
        import pyarrow.parquet as pq

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "summary.json").write_text(self._summary_json + "\n", encoding="utf-8")
        (directory / "config.toml").write_text(self.config_toml, encoding="utf-8")
        for name in self._columns:
            pq.write_table(self.table_arrow(name), directory / f"{name}.parquet")


OUTPUT_FILES = frozenset({"summary.json", "config.toml"})
"""The files :meth:`Report.write` writes besides the tables."""


def is_output_file(name: str) -> bool:
    """Whether a file called ``name`` is one :meth:`Report.write` writes: ``summary.json``,
    ``config.toml`` or a table's ``<name>.parquet``."""
    stem, dot, suffix = name.rpartition(".")
    return name in OUTPUT_FILES or (dot == "." and suffix == "parquet" and TABLE_NAME.match(stem) is not None)


FABRIC_COLUMNS = ("time", "pause_frames", "resume_frames", "ecn_marks", "cnps", "rate_cuts", "packets_dropped")
RATE_COLUMNS = ("time", "src", "dst", "qp", "rate_gbps")


def _table(columns: Mapping[str, Any]) -> pa.Table:
    """A pyarrow Table of the core's columns (numeric columns share the run's buffers)."""
    import pyarrow as pa

    arrays = {}
    for name, values in columns.items():
        if isinstance(values, list):
            arrays[name] = pa.array(values, type=pa.string())
        else:
            arrays[name] = pa.array(values)  # zero-copy from the numpy array
    return pa.table(arrays)


def fct_bucket_frame(buckets: list[dict[str, Any]]) -> pd.DataFrame:
    """The ``buckets`` of an ``fct`` summary as a DataFrame indexed by ``label``."""
    import pandas as pd

    frame = pd.DataFrame([_flatten(bucket) for bucket in buckets])
    if frame.empty:
        frame = pd.DataFrame(columns=["label", "min_bytes", "max_bytes", "flows"])
    frame = frame.set_index("label")
    frame["max_bytes"] = pd.to_numeric(frame["max_bytes"], errors="coerce")
    return frame


# ----------------------------------------------------------------------------- notebook display

_HTML_COLUMNS = (
    # (heading, path in a group's figures, kind)
    ("hosts", ("hosts",), "count"),
    ("offered load", ("offered_load",), "load"),
    ("accepted load", ("accepted_load",), "load"),
    ("latency p50", ("latency", "p50"), "time"),
    ("latency p99", ("latency", "p99"), "time"),
    ("packets injected", ("packets", "injected"), "count"),
    ("delivered", ("packets", "delivered"), "count"),
    ("in flight", ("packets", "in_flight"), "count"),
    ("dropped", ("packets", "dropped"), "count"),
)
"""The columns of a report's table in a notebook: the headline figures of each group."""

_CELL = "padding: 2px 8px; text-align: {align}"
_HEAD = "padding: 2px 8px; text-align: {align}; border-bottom: 1px solid #999"


def _figure(figures: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = figures
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _cell(value: Any, kind: str) -> str:
    """A number of the report's table as text: loads to 3 decimals, times to 4 digits,
    counts with thousands separators; a missing figure as a dash."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "–"
    if isinstance(value, float) and not math.isfinite(value):
        return "–"
    if kind == "load":
        return f"{value:.3f}"
    if kind == "count":
        return f"{int(value):,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def summary_html(report: Report) -> str:
    """The HTML a notebook shows for a report (``Report._repr_html_``): a line on the
    run, a table of the headline figures per group and for the whole run (``all``), the
    sections' lines, the run's tables, and the accepted load per group over time as a
    base64 PNG (left out, with the reason, when it cannot be drawn)."""
    summary = report.summary
    unit = str(summary.get("time_unit", "ns"))
    esc = html.escape
    parts = ['<div class="snarl-report">']
    facts = [f"seed {summary.get('seed', '–')}"]
    if isinstance(summary.get("sim_time"), (int, float)):
        measured = summary.get("measure_from")
        since = f", measured from {_cell(measured, 'time')}" if isinstance(measured, (int, float)) and measured else ""
        facts.append(f"{_cell(summary['sim_time'], 'time')} {unit} simulated{since}")
    if isinstance(summary.get("events"), int):
        facts.append(f"{summary['events']:,} events")
    if isinstance(summary.get("wall_seconds"), (int, float)):
        facts.append(f"{summary['wall_seconds']:.2f} s of wall time")
    parts.append(f"<p><strong>snarl.Report</strong>: {esc(', '.join(facts))}</p>")

    heads = "".join(
        f'<th style="{_HEAD.format(align="right")}">{esc(name)}{f" ({esc(unit)})" if kind == "time" else ""}</th>'
        for name, _, kind in _HTML_COLUMNS
    )
    rows = [f'<tr><th style="{_HEAD.format(align="left")}">group</th>{heads}</tr>']
    groups = summary.get("groups") or {}
    everything = dict(summary)
    if groups and "hosts" not in everything:
        hosts = [g.get("hosts") for g in groups.values()]
        if all(isinstance(h, int) for h in hosts):
            everything["hosts"] = sum(hosts)
    for name, figures, strong in [*((n, f, False) for n, f in groups.items()), ("all", everything, True)]:
        right = _CELL.format(align="right")
        cells = "".join(f'<td style="{right}">{_cell(_figure(figures, path), kind)}</td>' for _, path, kind in _HTML_COLUMNS)
        label = f"<strong>{esc(str(name))}</strong>" if strong else esc(str(name))
        rows.append(f'<tr><td style="{_CELL.format(align="left")}">{label}</td>{cells}</tr>')
    parts.append('<table style="border-collapse: collapse">' + "".join(rows) + "</table>")
    parts.append(
        "<p style=\"font-size: smaller\">Loads per host as fractions of the link capacity; "
        f"latencies in {esc(unit)}.</p>"
    )

    fct = summary.get("fct") or {}
    if isinstance(fct.get("flows"), int) and fct["flows"] > 0:
        times, slowdown = fct.get("fct") or {}, fct.get("slowdown") or {}
        parts.append(
            f"<p>{fct['flows']:,} flows completed: FCT p50 {_cell(times.get('p50'), 'time')}, "
            f"p99 {_cell(times.get('p99'), 'time')} {esc(unit)}; slowdown p50 "
            f"{_cell(slowdown.get('p50'), 'time')}, p99 {_cell(slowdown.get('p99'), 'time')}</p>"
        )
    if report.notes:
        parts.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in report.notes) + "</ul>")
    if report.table_names:
        listed = ", ".join(
            f"<code>{esc(name)}</code> ({report.table_arrow(name).num_rows:,} rows)" for name in report.table_names
        )
        parts.append(f"<p>Tables (<code>report.&lt;name&gt;</code>): {listed}</p>")
    parts.append(_throughput_image(report, unit))
    parts.append("</div>")
    return "\n".join(part for part in parts if part)


def _throughput_image(report: Report, unit: str) -> str:
    """The accepted load per group over time as an ``<img>`` with a base64 PNG; a line
    saying why when there is none."""
    import base64

    if "timeseries" not in report.table_names or report.table_arrow("timeseries").num_rows == 0:
        return ""
    try:
        from snarl import plots

        fig = plots.figure_class()(figsize=(6.4, 3.2), dpi=100, layout="constrained")
        ax = fig.add_subplot()
        plots.throughput_over_time(report.timeseries, phases=plots.phases_of(report.config), unit=unit, ax=ax)
        ax.set_ylabel("accepted load")  # the table's note gives its unit
        data = base64.b64encode(plots.figure_png(fig, dpi=150)).decode("ascii")
    except Exception as e:  # a display never fails: it says why there is no plot
        return f"<p>(no plot of the time series: {html.escape(f'{type(e).__name__}: {e}')})</p>"
    return (
        '<img alt="accepted load per group over time" style="max-width: 100%" width="640" '
        f'src="data:image/png;base64,{data}"/>'
    )


def _flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"latency": {"p99": 1}}`` -> ``{"latency_p99": 1}``."""
    flat: dict[str, Any] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}_"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
