"""What a run hands back: :class:`Report`."""

from __future__ import annotations

import json
from collections.abc import Sequence
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


class Report:
    """The results of one run.

    Attributes:
        summary: the summary as a dict: ``accepted_load``, ``offered_load``,
            ``latency`` (mean, p50, p95, p99, max), ``packets`` (injected, delivered,
            in_flight, dropped), ``fct`` (flows, fct, slowdown, buckets), ``groups``,
            ``counters``, ``sim_time``, ``seed``, ...
        config_toml: the fully resolved config (every default written out) as TOML.
    """

    def __init__(
        self,
        summary_json: str,
        columns: dict[str, Any],
        config_toml: str,
        rates: dict[str, Any] | None = None,
        fabric: dict[str, Any] | None = None,
    ) -> None:
        """Wraps the raw results of ``snarl._core.run`` (use :func:`snarl.run`)."""
        self._summary_json = summary_json
        self._columns = columns
        self._rate_columns = rates or {}
        self._fabric_columns = fabric or {}
        self.config_toml: str = config_toml
        self.summary: dict[str, Any] = json.loads(summary_json)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<snarl.Report offered_load={s.get('offered_load', float('nan')):.4f} "
            f"accepted_load={s.get('accepted_load', float('nan')):.4f} "
            f"groups={len(s.get('groups', {}))} timeseries_rows={self.to_arrow().num_rows}>"
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

    def to_arrow(self) -> pa.Table:
        """The time series as a pyarrow Table (numeric columns share the run's buffers)."""
        return self._arrow

    @cached_property
    def _arrow(self) -> pa.Table:
        """Builds the Table once from the run's columns."""
        return _table(self._columns)

    def rates_arrow(self) -> pa.Table:
        """The per-flow congestion-control rates as a pyarrow Table (see :attr:`rates`)."""
        return self._rates_arrow

    @cached_property
    def _rates_arrow(self) -> pa.Table:
        return _table(self._rate_columns)

    @cached_property
    def rates(self) -> pd.DataFrame:
        """Per-flow rates under congestion control: one row per rate change (``time``,
        ``src``, ``dst``, ``qp``, ``rate_gbps``); empty unless the config sets
        ``congestion_control.rate_series = true``."""
        return _frame(self._rate_columns, self._rates_arrow, RATE_COLUMNS)

    def fabric_arrow(self) -> pa.Table:
        """The fabric events as a pyarrow Table (see :attr:`fabric`)."""
        return self._fabric_arrow

    @cached_property
    def _fabric_arrow(self) -> pa.Table:
        return _table(self._fabric_columns)

    @cached_property
    def fabric(self) -> pd.DataFrame:
        """Flow- and congestion-control events per time window: ``time``,
        ``pause_frames``, ``resume_frames``, ``ecn_marks``, ``cnps``, ``rate_cuts``,
        ``packets_dropped``; empty in runs without PFC, tail drop, ECN or congestion
        control."""
        return _frame(self._fabric_columns, self._fabric_arrow, FABRIC_COLUMNS)

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Throughput per fixed time window: one row per (window, group), including the
        group ``all``."""
        return self.to_arrow().to_pandas(split_blocks=True)

    def write(self, directory: str | Path) -> None:
        """Writes ``summary.json``, ``config.toml`` and ``timeseries.parquet`` into
        ``directory`` (which must exist), ``rates.parquet`` when per-flow rates were
        recorded and ``fabric.parquet`` when the run had flow- or congestion-control
        events to count."""
        import pyarrow.parquet as pq

        directory = Path(directory)
        (directory / "summary.json").write_text(self._summary_json + "\n", encoding="utf-8")
        (directory / "config.toml").write_text(self.config_toml, encoding="utf-8")
        pq.write_table(self.to_arrow(), directory / "timeseries.parquet")
        if self._rate_columns:
            pq.write_table(self.rates_arrow(), directory / "rates.parquet")
        if self._fabric_columns:
            pq.write_table(self._fabric_arrow, directory / "fabric.parquet")


FABRIC_COLUMNS = ("time", "pause_frames", "resume_frames", "ecn_marks", "cnps", "rate_cuts", "packets_dropped")
RATE_COLUMNS = ("time", "src", "dst", "qp", "rate_gbps")


def _frame(columns: dict[str, Any], table: pa.Table, names: Sequence[str]) -> pd.DataFrame:
    """A DataFrame of an optional table: empty, with its column names, when the run has
    none."""
    import pandas as pd

    if not columns:
        return pd.DataFrame(columns=list(names))
    return table.to_pandas(split_blocks=True)


def _table(columns: dict[str, Any]) -> pa.Table:
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
