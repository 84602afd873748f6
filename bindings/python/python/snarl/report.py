"""What a run hands back: :class:`Report`."""

from __future__ import annotations

import json
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
        ``<name>.parquet`` into ``directory`` (which must exist)."""
        import pyarrow.parquet as pq

        directory = Path(directory)
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


def _flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"latency": {"p99": 1}}`` -> ``{"latency_p99": 1}``."""
    flat: dict[str, Any] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}_"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
