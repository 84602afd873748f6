"""Figures of sweeps and runs: pure functions of DataFrames that return a matplotlib Figure.

Figures are built without pyplot (no GUI, no global state, nothing left open in a
script): save them with ``fig.savefig("plot.png")`` (PNG, SVG or PDF by extension). In
Jupyter a figure shows itself as an image, in a fresh kernel too (no ``%matplotlib``, no
pyplot import needed): the figures are :class:`SnarlFigure`, a matplotlib ``Figure`` with
``_repr_png_``.

Every function takes ``ax=``, a matplotlib ``Axes`` to draw into instead of a new figure
(``fig, ax = plt.subplots()``; a panel of a figure of your own), and then returns the
figure that ``ax`` belongs to. A figure of several panels (:func:`heatmap` with facets,
:func:`congestion_over_time`, :func:`iteration_times`, :func:`mechanisms`) divides the
place of one given ``Axes`` among its panels, or takes one ``Axes`` per panel.

- :func:`load_curve`: accepted vs offered load (mean ± std over seeds), one curve per
  value of a ``hue`` column;
- :func:`throughput_over_time`: accepted load per time window and group, with the
  phases of the timeline marked;
- :func:`heatmap`: a value over two swept keys, annotated cells, a panel per value of
  the keys it is given to facet by;
- :func:`cdf`: empirical cumulative distributions;
- :func:`fct_slowdown`: FCT slowdown percentiles (p50, p95, p99) by flow-size bucket;
- :func:`congestion_over_time`: throughput per group above, and below the pause frames,
  ECN marks, CNPs and drops per window that flow and congestion control produced;
- :func:`flow_rates`: the rate of congestion-controlled flows over time (DCQCN's cuts
  and recoveries);
- :func:`mechanisms`: congestion-management mechanisms side by side, one colour per run:
  a group's throughput and the CNPs per window, and its FCT percentiles.

:func:`plot_directory` draws them from a sweep directory (``snarl sweep --out``) or a run
directory (``snarl run --out``), as the ``snarl plot`` command does;
:func:`plot_mechanisms` draws :func:`mechanisms` from several run directories. Each kind
it draws is declared once, on the function that draws it (:func:`directory_figure`):
:data:`FIGURES` holds them, and ``snarl plot`` (:mod:`snarl.plotkinds`) takes its kinds
and their help from there.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LOAD = "fraction of link capacity"
TITLE_WIDTH = 90
"""Characters of a plot title per line."""
FIGSIZE = (6.4, 4.2)
DPI = 150
MAX_PANELS = 12
"""Panels of a heatmap faceted by the keys off its axes, at most."""
MAX_WIDTH = 16.0
"""Inches of panels side by side, at most."""
LEGEND_INSIDE = 6
"""Legend entries that may sit inside the axes; a longer legend goes outside, on the right."""
MAX_LEGEND = 12
"""Legend entries of one panel, at most: more get a panel each (see :func:`load_curve`'s
``facet``)."""

_FIGURES = {
    "offered_load": ("offered load", LOAD),
    "accepted_load": ("accepted load", LOAD),
    "received_load": ("received load", LOAD),
    "accepted_gbps": ("accepted throughput", "Gb/s"),
    "offered_gbps": ("offered throughput", "Gb/s"),
    "latency_mean": ("mean packet latency", "{unit}"),
    "packets_delivered": ("packets delivered", "per window"),
    "sim_time": ("simulated time", "{unit}"),
    "wall_seconds": ("wall time", "s"),
    "events": ("events", None),
    "load": ("offered load per host", LOAD),
    "cap": ("injection cap", LOAD),
    "seed": ("seed", None),
    "pre_burst_load": ("pre-burst accepted load", LOAD),
    "lowest_load": ("lowest accepted load", LOAD),
    "drop_depth": ("throughput drop", LOAD),
    "time_to_recover": ("time to recover", "{unit}"),
    "total_throughput": ("total network throughput", "Gb/s"),
    "tmax": ("tmax, the non-hotspots' bound", "Gb/s"),
}
_RECEIVERS = {"hotspots": "hotspots", "non_hotspots": "non-hotspots", "all": "all hosts"}
_LATENCIES = {"latency": "packet latency", "network_latency": "network latency", "message_latency": "message latency"}
_STATS = {"mean": "mean", "p50": "median", "p95": "p95", "p99": "p99", "max": "max"}


class PlotError(ValueError):
    """A figure that cannot be drawn from the given data (a missing column, no data)."""


def label(column: str, unit: str = "ns", names: Names | None = None) -> str:
    """An axis label with its unit for a column of a sweep table or a time series:
    ``accepted_load`` -> ``accepted load (fraction of link capacity)``,
    ``groups.uniform.latency.p99`` -> ``p99 packet latency of uniform (ns)``,
    ``traffic.groups.0.cap`` -> ``traffic.groups.0.cap (fraction of link capacity)``, or
    with ``names`` (a sweep's labels and group names, :class:`Names`) the name the sweep
    file gives it, else ``injection cap of hotspot (fraction of link capacity)``."""
    if names is not None:
        return names.axis(column, unit)
    group, parts = group_figure(column)
    if len(parts) >= 2 and parts[0] == "recovery":
        parts = parts[1:]
    text: str | None = None
    units: str | None = None
    if len(parts) == 2 and parts[0] in _LATENCIES and parts[1] in _STATS:
        text, units = f"{_STATS[parts[1]]} {_LATENCIES[parts[0]]}", "{unit}"
    elif len(parts) == 2 and parts[0] == "receive_rate" and parts[1] in _RECEIVERS:
        text, units = f"mean receive rate, {_RECEIVERS[parts[1]]}", "Gb/s"
    elif len(parts) == 2 and parts[0] == "packets":
        text, units = f"packets {parts[1].replace('_', ' ')}", None
    elif len(parts) == 1 and parts[0] in _FIGURES:
        text, units = _FIGURES[parts[0]]
    if text is None:
        # A swept config key: keep the dotted key (it is what the user wrote), with the
        # unit of the figure it names when known.
        last = column.split(".")[-1]
        units = _FIGURES.get(last, (None, None))[1]
        text = column
    elif group is not None:
        text = f"{text} of {group}"
    if units:
        return f"{text} ({units.format(unit=unit)})"
    return text


def group_figure(column: str) -> tuple[str | None, list[str]]:
    """``groups.<name>.<figure>`` -> ``(name, figure parts)``, where the name may hold
    dots (``groups.hot.spot.latency.p99`` -> ``("hot.spot", ["latency", "p99"])``): the
    figure is what the end of the column names. Any other column: ``(None, its parts)``."""
    parts = column.split(".")
    if len(parts) < 3 or parts[0] != "groups":
        return None, parts
    if len(parts) >= 4 and (parts[-2] in _LATENCIES and parts[-1] in _STATS or parts[-2] in ("packets", "fct", "slowdown")):
        return ".".join(parts[1:-2]), parts[-2:]
    return ".".join(parts[1:-1]), parts[-1:]


def _new_figure(figsize: tuple[float, float] = FIGSIZE) -> Figure:
    """A figure without pyplot, laid out tightly (constrained layout), that shows itself
    in Jupyter (:class:`SnarlFigure`)."""
    return figure_class()(figsize=figsize, dpi=DPI, layout="constrained")


NOTEBOOK_DPI = 100
"""Pixels per inch of a figure as a notebook shows it (its PNG keeps the figure's own
resolution, so it stays sharp on high-density screens)."""

_FIGURE_CLASS: type[Figure] | None = None


def figure_class() -> type[Figure]:
    """:class:`SnarlFigure`, the class of the figures this module returns (defined on
    first use, so that importing the module does not import matplotlib)."""
    global _FIGURE_CLASS
    if _FIGURE_CLASS is None:
        from matplotlib.figure import Figure

        class SnarlFigure(Figure):
            """A matplotlib ``Figure`` that shows itself as a PNG image in Jupyter (or any
            IPython display), without pyplot and without ``%matplotlib``. It is not
            registered with pyplot: ``plt.show()`` does not show it and nothing keeps it
            alive once unreferenced, so scripts that draw many figures leak none."""

            def _repr_png_(self) -> tuple[bytes, dict[str, int]]:
                width, height = self.get_size_inches()
                size = {"width": round(width * NOTEBOOK_DPI), "height": round(height * NOTEBOOK_DPI)}
                return figure_png(self), size

        SnarlFigure.__module__ = __name__
        SnarlFigure.__qualname__ = "SnarlFigure"
        _FIGURE_CLASS = SnarlFigure
    return _FIGURE_CLASS


def __getattr__(name: str) -> Any:
    """``plots.SnarlFigure`` (see :func:`figure_class`)."""
    if name == "SnarlFigure":
        return figure_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def figure_png(fig: Any, dpi: float | None = None) -> bytes:
    """The PNG image of a figure (at its own resolution unless ``dpi`` is given)."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi or "figure")
    return buffer.getvalue()


def _is_axes(value: Any) -> bool:
    from matplotlib.axes import Axes

    return isinstance(value, Axes)


def _root(ax: Any) -> Figure:
    """The figure an Axes is drawn in (the top-level one, for an Axes of a subfigure)."""
    return ax.get_figure(root=True)


def _canvas(ax: Any, figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Any]:
    """``(figure, Axes)`` a plot of one panel draws into: a new figure and its Axes, or
    ``ax`` and its figure."""
    if ax is None:
        fig = _new_figure(figsize)
        return fig, fig.add_subplot()
    if not _is_axes(ax):
        raise PlotError(f"ax must be a matplotlib Axes (e.g. from plt.subplots()), not {type(ax).__name__}")
    return _root(ax), ax


def _panels(
    ax: Any,
    count: int,
    figsize: tuple[float, float],
    what: str,
    rows: int = 1,
    columns: int = 1,
    sharex: bool = False,
    width_ratios: Sequence[float] | None = None,
    height_ratios: Sequence[float] | None = None,
) -> tuple[Any, list[Any], bool]:
    """``(figure, axes, gridded)`` for a plot of ``count`` panels, laid out in ``rows`` x
    ``columns``: a new figure's grid; the place of one given ``Axes`` divided into that
    grid; or ``count`` given Axes, one per panel. ``axes`` has ``rows * columns`` Axes
    for a grid (``gridded``; the caller removes those it leaves empty), else ``count``.
    ``figure`` is the (sub)figure the panels are in."""
    if ax is None:
        fig = _new_figure(figsize)
        grid = fig.subplots(
            rows, columns, squeeze=False, sharex=sharex,
            gridspec_kw={"width_ratios": width_ratios, "height_ratios": height_ratios},
        )
        return fig, list(grid.flat), True
    if _is_axes(ax) and rows * columns == 1:
        return ax.figure, [ax], True
    if _is_axes(ax):
        spec = ax.get_subplotspec()
        if spec is None:
            raise PlotError(f"ax: {what} divides the place of the given Axes among its panels: give an Axes of a grid (plt.subplots())")
        fig = ax.figure
        ax.remove()
        cells = spec.subgridspec(rows, columns, width_ratios=width_ratios, height_ratios=height_ratios)
        axes: list[Any] = []
        for index in range(rows * columns):
            share = axes[0] if sharex and axes else None
            axes.append(fig.add_subplot(cells[index // columns, index % columns], sharex=share))
        if sharex:  # as fig.subplots(sharex=True): the times under the bottom row only
            for above in axes[: (rows - 1) * columns]:
                above.tick_params(labelbottom=False)
        return fig, axes, True
    import numpy as np

    axes = list(np.asarray(ax, dtype=object).flat) if not isinstance(ax, (str, bytes)) else []
    if len(axes) != count or not all(_is_axes(a) for a in axes):
        found = f"{len(axes)} Axes" if all(_is_axes(a) for a in axes) else f"a {type(ax).__name__}"
        raise PlotError(
            f"ax: {what} draws {count} panel{'s' if count != 1 else ''}: give one Axes (its place is divided "
            f"among them) or {count} Axes, one per panel, not {found}"
        )
    return axes[0].figure, axes, False


def _suptitle(fig: Any, own: bool, first: Any, title: str | None, **options: Any) -> None:
    """A figure's title: above the figure when it is the plot's own (or a subfigure of
    the user's), else on the first panel (the user's figure keeps its own title)."""
    if not title:
        return
    from matplotlib.figure import SubFigure

    if own or isinstance(fig, SubFigure):
        fig.suptitle(title, **options)
    else:
        first.set_title(f"{title}\n{first.get_title()}".rstrip(), fontsize="medium")


def _value_text(value: Any) -> str:
    """An axis value for a legend or a tick, as the sweep file writes it: ``0.5``,
    ``0.0833``, ``1.0``, ``uniform`` (a float by its shortest exact spelling; float noise
    such as ``0.30000000000000004`` to 6 digits); a table (swept as a whole, stored as
    JSON) by its ``type`` and its other keys: ``dcqcn (cnp_interval 4us, rate_ai 2Gbps)``."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == int(value) and abs(value) < 1e15:
            return f"{value:.1f}"
        text = repr(value)
        digits = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        return text if len(digits) <= 10 else f"{value:.6g}"
    table = _as_table(value)
    if table is not None:
        rest = ", ".join(f"{k} {_value_text(v)}" for k, v in table.items() if k != "type")
        if "type" not in table:
            return rest
        return f"{table['type']} ({rest})" if rest else str(table["type"])
    return str(value)


def _ok(points: pd.DataFrame) -> pd.DataFrame:
    """The points that ran successfully."""
    if "status" in points:
        points = points[points["status"] == "ok"]
    return points


def _require(frame: pd.DataFrame, *columns: str | None) -> None:
    missing = [c for c in columns if c is not None and c not in frame.columns]
    if missing:
        known = ", ".join(c for c in frame.columns if not c.startswith("groups."))[:400]
        raise PlotError(f"no column {', '.join(map(repr, missing))} in the data (columns: {known}, ...)")


def _unit(frame: pd.DataFrame, unit: str | None) -> str:
    if unit is not None:
        return unit
    if "time_unit" in frame and len(frame):
        return str(frame["time_unit"].dropna().iloc[0]) if frame["time_unit"].notna().any() else "ns"
    return "ns"


def hue_columns(hue: str | Sequence[str] | None) -> list[str]:
    """``None`` -> ``[]``, ``"a"`` -> ``["a"]``, ``"a,b"`` or ``["a", "b"]`` -> ``["a", "b"]``."""
    if hue is None:
        return []
    if isinstance(hue, str):
        return [h.strip() for h in hue.split(",") if h.strip()]
    return list(hue)


def hue_label(hues: Sequence[str], value: Any, short: Sequence[bool] = (), names: Names | None = None) -> str:
    """A legend entry: ``traffic.groups.0.cap = 0.5, seed = 1``. Where ``short`` holds
    for a column, its tables are named by their ``type`` alone; a swept ``description``
    (free text that names the point, as a sweep's ``[zip]`` sets it) stands alone. With
    ``names`` (:class:`Names`) a key is called by its name (``hotspot cap = 0.5``) and a
    value with an alias by the alias alone (``throttled``)."""
    values = value if isinstance(value, tuple) else (value,)
    short = list(short) + [False] * (len(hues) - len(short))

    def entry(h: str, v: Any, s: bool) -> str:
        if h == "description":
            return str(v)
        if names is not None:
            alias = names.alias(h, v)
            if alias is not None:
                return alias
            return f"{names.key(h)} = {_type_of(v) if s else _value_text(v)}"
        return f"{h} = {_type_of(v) if s else _value_text(v)}"

    return ", ".join(entry(h, v, s) for h, v, s in zip(hues, values, short))


def hue_labeller(points: pd.DataFrame, hues: Sequence[str], names: Names | None = None) -> Callable[[Any], str]:
    """Legend entries for the hue values of ``points``: a column of swept tables whose
    types all differ (a topology per fabric) is labelled by the types alone, so that
    the legend does not crowd out the plot."""
    short = []
    for h in hues:
        kinds = [_type_of(v) for v in points[h].drop_duplicates()]
        short.append(all(k is not None for k in kinds) and len(set(kinds)) == len(kinds))
    return lambda value: hue_label(hues, value, short, names)


# ----------------------------------------------------------------------------- names

_GROUP_KEY = re.compile(r"^traffic\.groups\.([^.]+)\.(.+)$")
_KEY_WORDS = {
    "traffic.load": "offered load per host",
    "description": "setting",
    "seed": "seed",
    "congestion_control": "congestion control",
    "routing": "routing",
    "topology": "topology",
}


class Names:
    """The words a sweep's figures and tables use for its keys and values: the names
    its sweep file gives them (``[labels]``), and its groups' names.

    ``labels`` maps a dotted key (a swept key, or any column) to a name, or to
    ``{"name": ..., "values": {value text: alias}}`` (:func:`snarl.sweep.parse_labels`);
    ``groups`` are the names of ``traffic.groups`` in order, so that
    ``traffic.groups.hotspot.cap`` and ``traffic.groups.0.cap`` are one key, and an
    unnamed ``traffic.groups.0.cap`` reads ``injection cap of hotspot``; ``measured`` is
    the group the scenario marks ``measured = true``, if any."""

    def __init__(
        self, labels: Mapping[str, Any] | None = None, groups: Sequence[str] = (), measured: str | None = None
    ) -> None:
        self.groups = [str(g) for g in groups]
        self.measured = measured
        self.labels: dict[str, dict[str, Any]] = {}
        for key, entry in (labels or {}).items():
            if isinstance(entry, str):
                entry = {"name": entry, "values": {}}
            self.labels[self.canonical(key)] = {"name": entry.get("name"), "values": dict(entry.get("values") or {})}

    def canonical(self, key: str) -> str:
        """``traffic.groups.<name>.x`` -> ``traffic.groups.<index>.x`` (any other key as it is)."""
        match = _GROUP_KEY.match(key)
        if match and not match.group(1).isdigit() and match.group(1) in self.groups:
            return f"traffic.groups.{self.groups.index(match.group(1))}.{match.group(2)}"
        return key

    def named(self, key: str) -> str | None:
        """The name the sweep file gives ``key``, if any."""
        entry = self.labels.get(self.canonical(key))
        return entry.get("name") if entry else None

    def key(self, key: str) -> str:
        """The words for a swept key or column: its name in the sweep file, else
        ``injection cap of hotspot`` for ``traffic.groups.0.cap``, ``offered load per
        host`` for ``traffic.load``, else the key."""
        given = self.named(key)
        if given:
            return given
        if key in _KEY_WORDS:
            return _KEY_WORDS[key]
        match = _GROUP_KEY.match(self.canonical(key))
        if match:
            index, rest = match.groups()
            group = self.groups[int(index)] if index.isdigit() and int(index) < len(self.groups) else index
            words = _FIGURES[rest][0] if rest in _FIGURES else rest
            return f"{words} of {group}"
        return key

    def alias(self, key: str, value: Any) -> str | None:
        """What the sweep file calls ``value`` of ``key``, if it names it: by its text,
        as the same number, or (a swept table) by its ``type``."""
        entry = self.labels.get(self.canonical(key))
        if not entry or not entry["values"]:
            return None
        aliases = entry["values"]
        kind = _type_of(value)
        for text, alias in aliases.items():
            if kind is not None and text == kind:
                return alias
            if text in (str(value), _value_text(value)):
                return alias
            try:
                if not isinstance(value, bool) and float(text) == float(value):
                    return alias
            except (TypeError, ValueError):
                pass
        return None

    def value(self, key: str, value: Any) -> str:
        """A value of ``key`` as a tick or a title says it: its alias, else its text."""
        alias = self.alias(key, value)
        return alias if alias is not None else (_type_of(value) or _value_text(value))

    def setting(self, key: str, value: Any) -> str:
        """``hotspot cap = 0.0833``, or the alias alone (``throttled``), or a
        description as it is."""
        if key == "description":
            return str(value)
        alias = self.alias(key, value)
        return alias if alias is not None else f"{self.key(key)} = {_type_of(value) or _value_text(value)}"

    def settings(self, values: Mapping[str, Any]) -> str:
        """The settings of a point in words, comma-separated."""
        return ", ".join(self.setting(k, v) for k, v in values.items())

    def column(self, key: str, points: pd.DataFrame) -> str:
        """The column of ``points`` that ``key`` names: itself, the same key with its
        group by index or by name (``traffic.groups.hotspot.cap`` for a sweep that swept
        ``traffic.groups.0.cap``), or a column the sweep file gives that name."""
        if key in points.columns:
            return key
        canonical = self.canonical(key)
        for column in points.columns:
            if self.canonical(str(column)) == canonical:
                return str(column)
        for column in points.columns:
            if self.named(str(column)) == key:
                return str(column)
        return key

    def axis(self, column: str, unit: str = "ns") -> str:
        """An axis label: the column's name with its unit."""
        given = self.named(column)
        base = label(column, unit)
        if given:
            units = re.search(r" \(([^()]*)\)$", base)
            return f"{given} ({units.group(1)})" if units and units.group(1) not in given else given
        canonical = self.canonical(column)
        if column in _KEY_WORDS or _GROUP_KEY.match(canonical):
            last = canonical.split(".")[-1]
            units = _FIGURES.get(last, (None, None))[1]
            words = self.key(column)
            return f"{words} ({units.format(unit=unit)})" if units else words
        return base


def names_of(directory: Path) -> Names:
    """The :class:`Names` of a sweep directory: its sweep file's ``[labels]`` and the
    groups of its first point's resolved config (``Names()`` for a run directory)."""
    if not _is_sweep(directory):
        config = _read_text(directory / "config.toml", _read_toml, "TOML") if (directory / "config.toml").is_file() else {}
        return Names({}, *_groups_of(config))
    spec = _sweep_info(directory).get("spec") or {}
    config: dict[str, Any] = {}
    for path in sorted((directory / "points").glob("*.json"))[:1]:
        record = _read_json(path)
        if isinstance(record, dict) and record.get("config"):
            config = _read_toml(record["config"])
    return Names(spec.get("labels") or {}, *_groups_of(config))


def _groups_of(config: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """``(names of traffic.groups, the measured group or None)`` of a resolved config."""
    groups = [g for g in (config.get("traffic", {}).get("groups") or []) if isinstance(g, Mapping)]
    names = [str(g.get("name", i)) for i, g in enumerate(groups)]
    measured = next((str(g.get("name")) for g in groups if g.get("measured")), None)
    return names, measured


def _as_table(value: Any) -> Mapping[str, Any] | None:
    """A swept table (a dict, or the JSON a points table stores it as), else ``None``."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _type_of(value: Any) -> str | None:
    """The ``type`` of a swept table, else ``None``."""
    table = _as_table(value)
    return str(table["type"]) if table is not None and "type" in table else None


def _numeric(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``frame`` with ``columns`` as floats (missing values as NaN)."""
    import pandas as pd

    return frame.assign(**{c: pd.to_numeric(frame[c], errors="coerce").astype(float) for c in columns})


def load_curve(
    points: pd.DataFrame,
    x: str = "offered_load",
    y: str = "accepted_load",
    hue: str | Sequence[str] | None = None,
    by: str | None = None,
    unit: str | None = None,
    title: str | None = None,
    ideal: bool | None = None,
    style: str | None = None,
    reference: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    names: Names | None = None,
    facet: str | Sequence[str] | None = None,
) -> Figure:
    """Accepted vs offered load, or any ``y`` against any ``x``: one curve per value of
    ``hue`` (a column, or several whose combinations each get a curve), points at the
    mean over the rows that share ``by`` (by default the swept ``traffic.load`` if
    present, else ``x``) with error bars of ± one standard deviation (e.g. over seeds).

    ``style`` is a column whose values get a line style each, the curves of one ``hue``
    value keeping their colour: the value without a mechanism (a table of type
    ``"none"``, or ``"none"``, ``False``) is dashed, as in "CC off dashed"; the legend
    then lists the colours and the line styles apart (a few entries, not their product).
    ``reference`` is a column drawn as a dotted line per ``hue`` value (an upper
    bound such as ``tmax``). An ``x`` of durations (``"2.5ms"``) is read as time, one of
    sizes (``"64KiB"``) as bytes on a log scale.
    ``ideal`` draws the line y = x (default: when both axes are loads).
    ``names`` (:class:`Names`) gives the keys and values their sweep file's words.
    ``facet`` (a column, or several) draws one panel per value, side by side on one y
    scale. A legend of more than :data:`LEGEND_INSIDE` entries goes outside the axes.
    """
    points = _ok(points)
    facets = hue_columns(facet)
    if facets:
        _require(points, *facets)
        panels = list(points.groupby(facets, sort=True, dropna=False))
        if len(panels) > MAX_PANELS:
            raise PlotError(f"{len(panels)} panels, one per value of {', '.join(facets)}: choose fewer (--where KEY=VALUE)")
        columns = min(len(panels), 3)
        rows = -(-len(panels) // columns)
        own = ax is None
        fig, grid, gridded = _panels(ax, len(panels), (columns * 5.0 + 2.4, rows * 3.8 + 0.5), "a load curve with facets",
                                     rows=rows, columns=columns)
        name_of = hue_labeller(points, facets, names)
        for index, (panel, (key, rows_of)) in enumerate(zip(grid, panels)):
            _load_curve(rows_of, x, y, hues=hue_columns(hue), by=by, unit=unit, title=None, ideal=ideal, style=style,
                        reference=reference, ax=panel, names=names, legend=index == 0)
            panel.set_title(name_of(key), fontsize="medium")
            if index:
                panel.sharey(grid[0])
        for panel in grid[len(panels):]:
            panel.remove()
        _suptitle(fig, own, grid[0], title)
        return _root(grid[0])
    return _load_curve(points, x, y, hues=hue_columns(hue), by=by, unit=unit, title=title, ideal=ideal, style=style,
                       reference=reference, ax=ax, names=names)


def _load_curve(
    points: pd.DataFrame, x: str, y: str, hues: list[str], by: str | None, unit: str | None, title: str | None,
    ideal: bool | None, style: str | None, reference: str | None, ax: Any, names: Names | None, legend: bool = True,
) -> Figure:
    import numpy as np

    if by is None:
        by = "traffic.load" if "traffic.load" in points.columns else x
    styles = [style] if style else []
    _require(points, x, y, by, *hues, *styles, reference)
    if points.empty:
        raise PlotError("no successful point to plot")
    unit = _unit(points, unit)
    x_label = label(x, unit, names)
    sizes = points[x].map(lambda v: isinstance(v, str) and parse_size(v) is not None).all()
    if sizes:
        points = points.assign(**{x: [parse_size(v) for v in points[x]]})
        x_label = f"{names.key(x) if names else x.split('.')[-1].replace('_', ' ')} (bytes)"
    elif points[x].map(lambda v: isinstance(v, str)).any():
        top = max(parse_duration(str(v), unit) for v in points[x])
        scale, time_unit = (1e6, "ms") if top >= 1e6 else (1e3, "µs") if top >= 1e3 else (1.0, unit)
        points = points.assign(**{x: [parse_duration(str(v), unit) / scale for v in points[x]]})
        x_label = f"{names.key(x) if names else x.split('.')[-1].replace('_', ' ')} ({time_unit})"
    points = _numeric(points, x, y, *([reference] if reference else []))
    own = ax is None
    fig, ax = _canvas(ax)
    name_of = hue_labeller(points, hues, names)
    # Values in order, but descriptions (free text) in the sweep's order.
    ordered = "description" not in hues
    hue_values = [None] if not hues else [v for v, _ in points.groupby(hues, sort=ordered, dropna=False)]
    colours = {_key(v): f"C{i % 10}" for i, v in enumerate(hue_values)}
    style_values = [] if not style else sorted(points[style].drop_duplicates(), key=_is_off)
    dashes = {_key(v): ("--" if _is_off(v) else ["-", ":", "-."][i % 3]) for i, v in enumerate(style_values)}
    style_name = (lambda v: names.value(style, v)) if names and style else (lambda v: f"{style} = {_type_of(v) or _value_text(v)}")
    handles = []
    for value, rows in [(None, points)] if not hues else list(points.groupby(hues, sort=ordered, dropna=False)):
        for kind, curve in [(None, rows)] if not style else list(rows.groupby(style, sort=False, dropna=False)):
            stats = curve.groupby(by, sort=True).agg(
                x=(x, "mean"), y=(y, "mean"), std=(y, lambda s: float(np.std(s, ddof=1)) if len(s) > 1 else 0.0)
            )
            stats = stats.sort_values("x")
            entry = [name_of(value)] if hues else []
            if style:
                entry.append(style_name(kind))
            handles.append(
                ax.errorbar(
                    stats["x"], stats["y"], yerr=stats["std"], marker="o", markersize=4, capsize=3,
                    label=", ".join(entry) or None, color=colours[_key(value)],
                    linestyle=dashes.get(_key(kind), "-") if style else "-",
                )
            )
        if reference:
            bound = rows.groupby(by, sort=True).agg(x=(x, "mean"), y=(reference, "mean")).sort_values("x")
            reference_name = names.key(reference) if names else reference.split(".")[-1]
            (line,) = ax.plot(
                bound["x"], bound["y"], linestyle=":", color=colours[_key(value)], linewidth=1.2,
                label=reference_name + (f" ({name_of(value)})" if hues else ""),
            )
            handles.append(line)
    if ideal is None:
        ideal = x.split(".")[-1] in ("offered_load", "load") and y.split(".")[-1] in ("accepted_load", "received_load")
    if ideal:
        low = min(0.0, float(points[x].min()))
        high = float(max(points[x].max(), points[y].max()))
        (line,) = ax.plot([low, high], [low, high], linestyle=":", color="0.5", linewidth=1, label="accepted = offered",
                          gid=GUIDE)
        handles.append(line)
    if sizes:
        ax.set_xscale("log", base=2)
        ticks = sorted(points[x].drop_duplicates())
        ax.set_xticks(ticks, [_size_text(t) for t in ticks])
    ax.set_xlabel(x_label)
    ax.set_ylabel(label(y, unit, names))
    ax.grid(True, alpha=0.3)
    if legend and (hues or ideal or style or reference):
        if style or (reference and hues):
            # Colours and line styles apart: a few entries, not every combination.
            from matplotlib.lines import Line2D

            shown = [Line2D([], [], color=colours[_key(v)], marker="o", markersize=4, label=name_of(v))
                     for v in hue_values] if hues else []
            shown += [Line2D([], [], color="0.2", linestyle=dashes[_key(v)], label=style_name(v)) for v in style_values]
            if reference:
                shown.append(Line2D([], [], color="0.2", linestyle=":", linewidth=1.2,
                                    label=(names.key(reference) if names else reference.split(".")[-1])
                                    + (" (dotted, in each curve's colour)" if hues else "")))
            if ideal:
                shown.append(Line2D([], [], color="0.5", linestyle=":", linewidth=1, label="accepted = offered"))
        else:
            shown = [h for h in handles if h.get_label() and not h.get_label().startswith("_")]
        place_legend(ax, shown, [h.get_label() for h in shown], title=_legend_title(hues, names), grow=own)
    if title:
        ax.set_title(title)
    return fig


GUIDE = "snarl-guide"
"""The ``gid`` of lines that guide the eye (y = x): not data, left out of :func:`describe`."""


def _legend_title(hues: Sequence[str], names: Names | None) -> str | None:
    """A legend's title: the name of its one key when its entries are values alone."""
    return None


def place_legend(
    ax: Any, handles: Sequence[Any], labels: Sequence[str], title: str | None = None, grow: bool = False,
    **options: Any,
) -> Any:
    """A legend that does not cover the data: inside the axes (where matplotlib finds
    room) for up to :data:`LEGEND_INSIDE` entries, else outside them, on the right (and
    with ``grow``, the figure widened by the legend's width, so the axes keep theirs)."""
    if not handles:
        return None
    options = {"frameon": False, "fontsize": "small", **options}
    if len(handles) > LEGEND_INSIDE:
        if grow:
            fig = _root(ax)
            width, height = fig.get_size_inches()
            longest = max((len(str(text)) for text in labels), default=10)
            fig.set_size_inches(width + min(6.0, 0.8 + 0.065 * longest), height)
        return ax.legend(handles, labels, title=title, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         borderaxespad=0.0, **options)
    return ax.legend(handles, labels, title=title, **options)


def _key(value: Any) -> str:
    """A hashable stand-in for a curve's value (swept tables are dicts)."""
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (dict, list, tuple)) else repr(value)


def _is_off(value: Any) -> bool:
    """Whether a style value means "no mechanism": a table of type ``none``, ``"none"``,
    ``"off"`` or ``False``."""
    kind = _type_of(value)
    if kind is not None:
        return kind == "none"
    return value is False or (isinstance(value, str) and value.lower() in ("none", "off"))


def throughput_over_time(
    timeseries: pd.DataFrame,
    phases: Sequence[Mapping[str, Any]] | Sequence[tuple[float, str]] | None = None,
    groups: Iterable[str] | None = None,
    y: str = "accepted_load",
    unit: str = "ns",
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Throughput (``y``, by default accepted load) per time window, one line per group,
    with a dashed vertical line and its label at each phase.

    ``timeseries`` has the columns of :attr:`snarl.Report.timeseries` (``time``,
    ``group``, ...). ``groups`` defaults to every group but ``all`` (or ``all`` alone
    when there is one group). ``phases`` are ``(time, label)`` pairs or dicts with
    ``at`` (a number in ``unit`` or a duration such as ``"20000cycles"``) and ``label``.
    """
    _require(timeseries, "time", "group", y)
    names = list(dict.fromkeys(timeseries["group"]))
    if groups is None:
        groups = [g for g in names if g != "all"] if len(names) > 2 else (["all"] if "all" in names else names)
    groups = list(groups)
    unknown = [g for g in groups if g not in names]
    if unknown:
        raise PlotError(f"no group {unknown[0]!r} in the time series (groups: {', '.join(names)})")
    fig, ax = _canvas(ax, (7.2, 4.2))
    scale, shown = _time_axis(timeseries["time"], unit)
    for group in groups:
        rows = timeseries[timeseries["group"] == group].sort_values("time")
        ax.plot(rows["time"] / scale, rows[y], linewidth=1.2, label=str(group))
    marks = [(at / scale, text) for at, text in _phase_marks(phases, unit)]
    span = float(timeseries["time"].max() - timeseries["time"].min()) / scale or 1.0
    for index, (at, text) in enumerate(marks):
        ax.axvline(at, color="0.3", linestyle="--", linewidth=0.9)
        if not text:
            continue
        # A label goes right of its line, or left when the next phase follows closely.
        crowded = index + 1 < len(marks) and marks[index + 1][0] - at < 0.04 * span
        ax.annotate(
            text,
            xy=(at, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(-3 if crowded else 3, -3),
            textcoords="offset points",
            rotation=90,
            va="top",
            ha="right" if crowded else "left",
            fontsize=8,
            color="0.25",
        )
    ax.set_xlabel(f"time ({shown})")
    ax.set_ylabel(label(y, unit))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(title="group", frameon=False)
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


def _time_axis(times: Any, unit: str) -> tuple[float, str]:
    """``(divisor, unit)`` that keeps a time axis in ns readable: µs from 100 µs on,
    ms from 100 ms on (cycles stay cycles)."""
    if unit != "ns":
        return 1.0, unit
    top = float(max(times, default=0.0))
    if top >= 1e8:
        return 1e6, "ms"
    if top >= 1e5:
        return 1e3, "µs"
    return 1.0, unit


def _phase_marks(phases: Any, unit: str) -> list[tuple[float, str]]:
    """``(time in unit, label)`` of each phase."""
    marks = []
    for phase in phases or []:
        if isinstance(phase, Mapping):
            at, text = phase.get("at"), phase.get("label") or ""
            if not text and phase.get("group"):
                text = str(phase["group"])
        else:
            at, text = phase
        if isinstance(at, str):
            at = parse_duration(at, unit)
        marks.append((float(at), str(text)))
    return marks


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ps|ns|us|µs|ms|s|cycles?)\s*$")
_NANOSECONDS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "cycle": 1.0, "cycles": 1.0}


_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(B|KiB|MiB|GiB|KB|MB|GB)\s*$")
_BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def parse_size(text: str) -> float | None:
    """``"64KiB"`` -> 65536.0 bytes, or None for text that is not a size."""
    match = _SIZE.match(text)
    return float(match.group(1)) * _BYTES[match.group(2)] if match else None


def _size_text(size: float) -> str:
    """65536.0 -> ``"64KiB"``: the largest binary unit that divides the size."""
    for unit in ("GiB", "MiB", "KiB"):
        if size >= _BYTES[unit] and size % _BYTES[unit] == 0:
            return f"{int(size // _BYTES[unit])}{unit}"
    return f"{size:g}B"


def parse_duration(text: str, unit: str = "ns") -> float:
    """``"20us"`` -> 20000.0 in ns (or cycles: one cycle is one nanosecond)."""
    match = _DURATION.match(text)
    if not match:
        raise PlotError(f"cannot read the duration {text!r}")
    nanoseconds = float(match.group(1)) * _NANOSECONDS[match.group(2)]
    return nanoseconds  # "ns" and "cycles" are the same number


def heatmap(
    points: pd.DataFrame,
    x: str,
    y: str,
    value: str = "accepted_load",
    unit: str | None = None,
    fmt: str = ".3g",
    cmap: str = "viridis",
    title: str | None = None,
    facet: str | Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    names: Names | None = None,
) -> Figure:
    """``value`` over two swept keys, every cell annotated with its number: the mean over
    the rows of the cell, e.g. over seeds. ``names`` (:class:`Names`) gives the keys and
    values their sweep file's words.

    ``facet`` (a column, or several) draws one panel per value (or combination), on one
    colour scale: give it every other key the rows vary, or their values are averaged
    together in the cells.
    """
    import numpy as np

    points = _ok(points)
    facets = hue_columns(facet)
    _require(points, x, y, value, *facets)
    if points.empty:
        raise PlotError("no successful point to plot")
    unit = _unit(points, unit)
    points = _numeric(points, value)
    panels = list(points.groupby(facets, sort=True, dropna=False)) if facets else [(None, points)]
    if len(panels) > MAX_PANELS:
        raise PlotError(
            f"a heatmap over {x} and {y} needs {len(panels)} panels, one per value of {', '.join(facets)}: "
            "choose fewer (--where KEY=VALUE) or other axes (--x, --y)"
        )
    tables = [(key, _by_magnitude(rows.pivot_table(index=y, columns=x, values=value, aggfunc="mean"))) for key, rows in panels]
    finite = np.concatenate([t.to_numpy(dtype=float).ravel() for _, t in tables])
    finite = finite[np.isfinite(finite)]
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    cells_x = max(t.shape[1] for _, t in tables)
    cells_y = max(t.shape[0] for _, t in tables)
    width, height = max(5.2, 1.1 * cells_x + 2.0), max(3.6, 0.7 * cells_y + 1.6)
    columns = max(1, min(len(tables), 3, int(MAX_WIDTH // width)))  # wide panels go one above the other
    rows = -(-len(tables) // columns)
    own = ax is None
    fig, grid, gridded = _panels(
        ax, len(tables), (columns * width + 1.2, rows * height + (0.4 if title else 0.0)), "a heatmap with facets",
        rows=rows, columns=columns,
    )
    name_of = hue_labeller(points, facets, names)
    tick = (lambda key, v: names.value(key, v)) if names else (lambda key, v: _value_text(v))
    image = None
    for index, (ax, (key, table)) in enumerate(zip(grid, tables)):
        data = table.to_numpy(dtype=float)
        image = ax.imshow(data, cmap=cmap, aspect="auto", origin="lower", vmin=low, vmax=high)
        for (i, j), number in np.ndenumerate(data):
            if math.isfinite(number):
                color = "black" if number > (low + high) / 2 else "white"
                ax.text(j, i, format(number, fmt), ha="center", va="center", color=color, fontsize=9)
        ax.set_xticks(range(data.shape[1]), [tick(x, v) for v in table.columns])
        ax.set_yticks(range(data.shape[0]), [tick(y, v) for v in table.index])
        if not gridded or index // columns == rows - 1 or index + columns >= len(tables):
            ax.set_xlabel(label(x, unit, names))
        if not gridded or index % columns == 0:
            ax.set_ylabel(label(y, unit, names))
        if facets:
            ax.set_title(name_of(key), fontsize="medium")
    for ax in grid[len(tables):]:
        ax.remove()
    colorbar = fig.colorbar(image, ax=grid[: len(tables)])
    colorbar.set_label(label(value, unit, names))
    if facets:
        _suptitle(fig, own, grid[0], title)
    elif title:
        grid[0].set_title(title)
    return _root(grid[0])


def _magnitude(value: Any) -> tuple[int, float, str]:
    """A sort key that orders numbers, sizes (``"2MiB"`` before ``"16MiB"``) and durations
    (``"1us"`` before ``"10ms"``) by what they measure, and other text by its spelling."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    text = str(value)
    size = parse_size(text)
    if size is not None:
        return (0, size, "")
    if _DURATION.match(text):
        return (0, parse_duration(text), "")
    return (1, 0.0, text)


def _by_magnitude(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its rows and columns in the order of :func:`_magnitude`."""
    return table.loc[sorted(table.index, key=_magnitude), sorted(table.columns, key=_magnitude)]


def cdf(
    values: Any,
    xlabel: str = "value",
    ylabel: str = "cumulative fraction",
    legend_title: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Empirical CDF of ``values`` (array-like), or one curve per entry of a mapping
    ``{legend label: values}``."""
    import numpy as np

    series = dict(values) if isinstance(values, Mapping) else {None: values}
    own = ax is None
    fig, ax = _canvas(ax)
    drawn = 0
    for name, data in series.items():
        data = np.asarray(list(data) if not hasattr(data, "__array__") else data, dtype=float)
        data = np.sort(data[np.isfinite(data)])
        if data.size == 0:
            continue
        fraction = np.arange(1, data.size + 1) / data.size
        ax.step(np.concatenate([[data[0]], data]), np.concatenate([[0.0], fraction]), where="post",
                label=None if name is None else str(name))
        drawn += 1
    if drawn == 0:
        raise PlotError("no finite value to plot")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if any(name is not None for name in series):
        handles = [line for line in ax.get_lines() if line.get_label() and not line.get_label().startswith("_")]
        place_legend(ax, handles, [h.get_label() for h in handles], title=legend_title, grow=own)
    if title:
        ax.set_title(title)
    return fig


_PERCENTILES = ("p50", "p95", "p99")


def fct_slowdown(
    buckets: Sequence[Mapping[str, Any]] | pd.DataFrame,
    percentiles: Sequence[str] = _PERCENTILES,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """FCT slowdown by flow-size bucket: one line per percentile (default p50, p95 and
    p99) over the buckets, on a log scale, with the number of flows under each bucket.

    ``buckets`` is the ``fct.buckets`` list of a summary, or
    :attr:`snarl.Report.fct_buckets`. Buckets without flows are left out."""
    from snarl.report import fct_bucket_frame

    frame = buckets if not isinstance(buckets, Sequence) else fct_bucket_frame(list(buckets))
    columns = [f"slowdown_{p}" for p in percentiles]
    if not frame.empty:
        _require(frame, "flows", *columns)
        frame = frame[frame["flows"] > 0]
    if frame.empty:
        raise PlotError("no completed flow to plot (flows are counted from the end of warm-up)")
    fig, ax = _canvas(ax)
    positions = list(range(len(frame)))
    for percentile, column in zip(percentiles, columns):
        ax.plot(positions, frame[column].astype(float), marker="o", label=_STATS.get(percentile, percentile))
    ax.set_yscale("log")
    ax.set_xticks(positions, [f"{label}\n{flows:,} flows" for label, flows in zip(frame.index, frame["flows"])])
    ax.set_xlabel("flow size")
    ax.set_ylabel("FCT slowdown (FCT / ideal FCT)")
    ax.axhline(1.0, color="0.5", linestyle=":", linewidth=1)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(frameon=False, fontsize="small")
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


_FABRIC_EVENTS = {
    "pause_frames": "pause frames",
    "ecn_marks": "ECN marks",
    "cnps": "CNPs",
    "fecn_marks": "FECN marks",
    "becns": "BECNs",
    "congestion_marks": "congestion marks",
    "marked_acks": "marked ACKs",
    "packets_dropped": "drops",
}

# The congestion notifications per window, in each family's own terms: the `fabric`
# table's column and its name (Ethernet's CNPs, InfiniBand's BECNs, the per-pair
# control's marked ACKs).
_NOTIFICATIONS = {"cnps": "CNPs", "becns": "BECNs", "marked_acks": "marked ACKs"}


def default_group(timeseries: Mapping[str, pd.DataFrame]) -> str:
    """The group :func:`mechanisms` plots when none is named: ``victims`` where every
    run has it (the congestion studies' measured group), else ``all`` (the whole
    fabric, as the InfiniBand studies measure it)."""
    if timeseries and all("victims" in set(frame["group"]) for frame in timeseries.values() if "group" in frame):
        return "victims"
    return "all"


def congestion_over_time(
    timeseries: pd.DataFrame,
    fabric: pd.DataFrame,
    phases: Sequence[Mapping[str, Any]] | Sequence[tuple[float, str]] | None = None,
    groups: Iterable[str] | None = None,
    unit: str = "ns",
    title: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """Two panels on one time axis: accepted load per window and group (as
    :func:`throughput_over_time`), and the events per window of :attr:`snarl.Report.fabric`
    (pause frames, ECN or FECN marks, CNPs or BECNs, drops; those that never happen are
    left out), with
    the phases marked on both."""
    _require(timeseries, "time", "group", "accepted_load")
    _require(fabric, "time")
    names = list(dict.fromkeys(timeseries["group"]))
    groups = list(groups) if groups is not None else [g for g in names if g != "all"] or names
    _, (top, bottom), _ = _panels(
        ax, 2, (7.2, 6.0), "congestion_over_time", rows=2, sharex=True, height_ratios=[3, 2]
    )
    scale, shown = _time_axis(timeseries["time"], unit)
    for group in groups:
        rows = timeseries[timeseries["group"] == group].sort_values("time")
        top.plot(rows["time"] / scale, rows["accepted_load"], linewidth=1.2, label=str(group))
    top.set_ylabel(label("accepted_load", unit))
    top.set_ylim(bottom=0)
    top.legend(title="group", frameon=False, fontsize="small")
    drawn = 0
    for column, name in _FABRIC_EVENTS.items():
        if column in fabric.columns and fabric[column].sum() > 0:
            bottom.plot(fabric["time"] / scale, fabric[column], linewidth=1.1, label=name)
            drawn += 1
    if drawn == 0:
        bottom.text(0.5, 0.5, "no pause frame, mark, notification or drop", transform=bottom.transAxes, ha="center", color="0.4")
    else:
        bottom.legend(frameon=False, fontsize="small")
    bottom.set_ylabel("events per window")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel(f"time ({shown})")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
        for at, _ in _phase_marks(phases, unit):
            ax.axvline(at / scale, color="0.3", linestyle="--", linewidth=0.9)
    if title:
        top.set_title(title, fontsize="medium")
    return _root(top)


def flow_rates(
    rates: pd.DataFrame,
    flows: int = 8,
    unit: str = "ns",
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """The rate of each congestion-controlled flow over time, as steps (a flow runs at its
    last rate until the next change), for the ``flows`` flows with the most changes.

    ``rates`` has the columns of :attr:`snarl.Report.rates` (``time``, ``src``, ``dst``,
    ``qp``, ``rate_gbps``); a flow is at line rate before its first row."""
    _require(rates, "time", "src", "dst", "qp", "rate_gbps")
    if rates.empty:
        raise PlotError("no rate change to plot (set congestion_control.rate_series = true)")
    keys = ["src", "dst", "qp"]
    busiest = rates.groupby(keys).size().sort_values(ascending=False, kind="stable").head(flows)
    fig, ax = _canvas(ax, (7.2, 4.2))
    scale, shown = _time_axis(rates["time"], unit)
    for (src, dst, qp), _ in busiest.items():
        rows = rates[(rates["src"] == src) & (rates["dst"] == dst) & (rates["qp"] == qp)].sort_values("time", kind="stable")
        ax.step(rows["time"] / scale, rows["rate_gbps"], where="post", linewidth=1.1, label=f"{src} → {dst}" + (f" qp {qp}" if qp else ""))
    ax.set_xlabel(f"time ({shown})")
    ax.set_ylabel("flow rate (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(title="flow", frameon=False, fontsize="small")
    if title:
        ax.set_title(title, fontsize="medium")
    return fig


def iteration_times(
    iterations: pd.DataFrame, unit: str = "ns", title: str | None = None, ax: Axes | Sequence[Axes] | None = None
) -> Figure:
    """Each job's iteration times in order (the warm-up hollow), and on the right their
    distribution after the warm-up, one box per job: how steady the victims were, and
    what the aggressors did meanwhile.

    ``iterations`` has the columns of the ``iterations`` table (``job``, ``iteration``,
    ``time``, ``measured``)."""
    _require(iterations, "job", "iteration", "time", "measured")
    if iterations.empty:
        raise PlotError("no finished iteration to plot (did the jobs run?)")
    jobs = list(dict.fromkeys(iterations["job"]))
    own = ax is None
    fig, (over, spread), _ = _panels(ax, 2, (9.0, 4.2), "iteration_times", columns=2, width_ratios=[3, 1])
    scale, shown = _time_axis(iterations["time"], unit)
    boxes = []
    for job in jobs:
        rows = iterations[iterations["job"] == job].sort_values("iteration", kind="stable")
        measured = rows["measured"].astype(bool)
        line = over.plot(rows["iteration"], rows["time"] / scale, linewidth=1.0, label=job)[0]
        over.scatter(rows["iteration"][measured], rows["time"][measured] / scale, color=line.get_color(), s=14)
        over.scatter(
            rows["iteration"][~measured], rows["time"][~measured] / scale, facecolors="none", edgecolors=line.get_color(), s=14
        )
        boxes.append((rows["time"][measured] / scale).to_numpy())
    over.set_xlabel("iteration (hollow: warm-up)")
    over.set_ylabel(f"iteration time ({shown})")
    over.set_ylim(bottom=0)
    over.grid(True, alpha=0.3)
    over.legend(title="job", frameon=False, fontsize="small")
    spread.boxplot(boxes, tick_labels=jobs, showfliers=True)
    spread.set_ylim(over.get_ylim())
    spread.set_title("after the warm-up", fontsize="small")
    spread.grid(True, axis="y", alpha=0.3)
    _suptitle(fig, own, over, title, fontsize="medium")
    return _root(over)


def rank_timeline(
    steps: pd.DataFrame, job: str | None = None, unit: str = "ns", title: str | None = None, ax: Axes | None = None
) -> Figure:
    """One job's ranks over time, step by step (the ``steps`` table: the first measured
    iterations): a bar per rank and step from when its sends were posted to when it
    completed, coloured by step, so waits and stragglers show as gaps and long bars."""
    _require(steps, "job", "iteration", "rank", "step", "start", "end")
    jobs = list(dict.fromkeys(steps["job"]))
    if not jobs:
        raise PlotError("no step to plot: the steps table is empty")
    job = job or jobs[0]
    if job not in jobs:
        raise PlotError(f"no job {job!r} in the steps table (jobs: {', '.join(jobs)})")
    rows = steps[steps["job"] == job]
    ranks = int(rows["rank"].max()) + 1
    fig, ax = _canvas(ax, (8.0, max(3.0, min(9.0, 0.18 * ranks + 1.6))))
    scale, shown = _time_axis(rows["end"], unit)
    import matplotlib

    colours = matplotlib.colormaps["viridis"]
    last = max(int(rows["step"].max()), 1)
    for rank, mine in rows.groupby("rank", sort=True):
        bars = [(s / scale, (e - s) / scale) for s, e in zip(mine["start"], mine["end"])]
        ax.broken_barh(bars, (rank - 0.4, 0.8), facecolors=[colours(k / last) for k in mine["step"]], linewidth=0)
    ax.set_xlabel(f"time ({shown})")
    ax.set_ylabel("rank")
    ax.set_ylim(-0.6, ranks - 0.4)
    ax.grid(True, axis="x", alpha=0.3)
    iterations = sorted(rows["iteration"].unique())
    ax.set_title(
        title or f"{job}: iteration{'s' if len(iterations) > 1 else ''} {', '.join(map(str, iterations))}, steps by colour",
        fontsize="medium",
    )
    return fig


def fct_percentiles(summary: Mapping[str, Any], group: str | None = None) -> tuple[dict[str, float] | None, bool]:
    """``({p50, p95, p99}, of the group)``: the flow completion times of ``group`` in a
    run's summary (``groups.<group>.fct``), else those of every flow (``fct.fct``), in
    the run's time unit; ``(None, False)`` when the run completed no flow."""
    figures = ((summary.get("groups") or {}).get(group) or {}).get("fct") if group is not None else None
    own = _percentiles(figures)
    if own is not None:
        return own, True
    overall = summary.get("fct") or {}
    return _percentiles(overall.get("fct") if isinstance(overall.get("fct"), Mapping) else overall), False


def _percentiles(figures: Any) -> dict[str, float] | None:
    if not isinstance(figures, Mapping):
        return None
    values = {p: figures.get(p) for p in _PERCENTILES}
    if any(not isinstance(v, (int, float)) or not math.isfinite(v) for v in values.values()):
        return None
    return {p: float(v) for p, v in values.items()}


def with_gbps(timeseries: pd.DataFrame, summary: Mapping[str, Any]) -> pd.DataFrame:
    """``timeseries`` with a column ``accepted_gbps``: the accepted load per window (a
    fraction of each host's link) in Gb/s per host, at the ratio of Gb/s to load of each
    group in ``summary`` (``groups.<name>.offered_gbps / offered_load``, else the
    accepted figures). ``timeseries`` unchanged when the summary gives no ratio for a
    group of it."""
    if "accepted_gbps" in timeseries.columns or "accepted_load" not in timeseries.columns:
        return timeseries
    groups = dict(summary.get("groups") or {})
    groups.setdefault("all", summary)
    ratios = {}
    for name in dict.fromkeys(timeseries["group"]):
        figures = groups.get(name) or {}
        ratio = None
        for gbps, load in (("offered_gbps", "offered_load"), ("accepted_gbps", "accepted_load")):
            a, b = figures.get(gbps), figures.get(load)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 and math.isfinite(a / b):
                ratio = a / b
                break
        if ratio is None:
            return timeseries
        ratios[name] = ratio
    return timeseries.assign(accepted_gbps=timeseries["accepted_load"] * timeseries["group"].map(ratios).astype(float))


def mechanisms(
    timeseries: Mapping[str, pd.DataFrame],
    fabric: Mapping[str, pd.DataFrame | None] | None = None,
    summaries: Mapping[str, Mapping[str, Any]] | None = None,
    group: str | None = None,
    y: str | None = None,
    phases: Sequence[Mapping[str, Any]] | Sequence[tuple[float, str]] | None = None,
    unit: str = "ns",
    title: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """Congestion-management mechanisms side by side, one colour per run (the keys of
    ``timeseries``, in order, are the legend's names), in three panels:

    1. the throughput of ``group`` (by default :func:`default_group`) per time window
       (``y``: by default ``accepted_gbps``
       when every run's series has it, see :func:`with_gbps`, else ``accepted_load``),
       with the interval of each phase shaded and labelled;
    2. the congestion notifications per window, in each family's terms (the ``cnps``
       column of each run's :attr:`snarl.Report.fabric` for Ethernet, ``becns`` for
       InfiniBand, ``marked_acks`` for the per-pair control; zero for a run without
       any, e.g. PFC alone), on a symmetric log
       scale when the counts span more than two decades;
    3. the p50, p95 and p99 flow completion time of ``group`` (``summaries``: each run's
       summary, see :func:`fct_percentiles`; every flow's when the group has none), one
       bar per run in each percentile's group, in µs when ``unit`` is ns.

    ``fabric`` and ``summaries`` are keyed like ``timeseries``; a run missing from them
    has no notification and no FCT bar. ``phases`` are those of
    :func:`throughput_over_time`.
    """
    import numpy as np

    runs = list(timeseries)
    if not runs:
        raise PlotError("no run to plot")
    if group is None:
        group = default_group(timeseries)
    fabric = dict(fabric or {})
    summaries = dict(summaries or {})
    for name in runs:
        frame = timeseries[name]
        _require(frame, "time", "group")
        if group not in set(frame["group"]):
            groups = ", ".join(map(str, dict.fromkeys(frame["group"])))
            raise PlotError(f"{name}: no group {group!r} in the time series (groups: {groups}); choose one with --group")
    if y is None:
        y = "accepted_gbps" if all("accepted_gbps" in timeseries[n].columns for n in runs) else "accepted_load"
    for name in runs:
        try:
            _require(timeseries[name], y)
        except PlotError as e:
            raise PlotError(f"{name}: {e}") from None
    colours = {name: f"C{i % 10}" for i, name in enumerate(runs)}
    series = {name: timeseries[name][timeseries[name]["group"] == group].sort_values("time") for name in runs}
    end = max(float(s["time"].max()) for s in series.values() if len(s))
    scale, shown = _time_axis([end], unit)

    own = ax is None
    fig, (load_ax, cnp_ax, fct_ax), gridded = _panels(
        ax, 3, (min(MAX_WIDTH, 14.5), 4.6), "mechanisms", columns=3, width_ratios=[4, 4, 3]
    )
    if gridded:
        cnp_ax.sharex(load_ax)

    # 1. Throughput of the group per window.
    for name in runs:
        rows = series[name]
        load_ax.plot(rows["time"] / scale, rows[y].astype(float), linewidth=1.3, color=colours[name], label=name)
    what = "accepted throughput per host (Gb/s)" if y == "accepted_gbps" else label(y, unit)
    load_ax.set_ylabel(what)
    load_ax.set_ylim(bottom=0)
    load_ax.set_title(f"throughput of {group}", fontsize="medium")

    # 2. Congestion notifications per window, in each run's own terms.
    peaks, kinds = [], set()
    for name in runs:
        events = fabric.get(name)
        column = next((c for c in _NOTIFICATIONS if events is not None and c in events.columns), None)
        if column is not None and "time" in events.columns and len(events):
            kinds.add(_NOTIFICATIONS[column])
            events = events.sort_values("time")
            times, counts = events["time"].to_numpy(dtype=float), events[column].to_numpy(dtype=float)
        else:
            times, counts = series[name]["time"].to_numpy(dtype=float), np.zeros(len(series[name]))
        cnp_ax.plot(times / scale, counts, linewidth=1.3, color=colours[name], label=name)
        peaks.extend(counts[counts > 0].tolist())
    window = _window(series[runs[0]]["time"])
    per = f"per {_duration_text(window, unit)} window" if window else "per window"
    notifications = " and ".join(sorted(kinds)) or "CNPs"
    cnp_ax.set_ylabel(f"{notifications} {per}")
    if peaks and max(peaks) / min(peaks) > 100:
        cnp_ax.set_yscale("symlog", linthresh=1.0)
    # No floor at zero: the line of a run without notifications would hide in the axis.
    cnp_ax.set_title(f"{notifications} sent", fontsize="medium")

    for ax in (load_ax, cnp_ax):
        ax.set_xlabel(f"time ({shown})")
        ax.grid(True, alpha=0.3)
    _shade_phases((load_ax, cnp_ax), phases, unit, scale, end)

    # 3. FCT percentiles: a group of bars per percentile, a bar per run.
    fct_scale, fct_unit = (1e3, "µs") if unit == "ns" else (1.0, unit)
    width = 0.8 / len(runs)
    whose = set()
    for index, name in enumerate(runs):
        figures, own = fct_percentiles(summaries.get(name) or {}, group)
        if figures is None:
            continue
        whose.add(own)
        positions = [p + (index - (len(runs) - 1) / 2) * width for p in range(len(_PERCENTILES))]
        fct_ax.bar(positions, [figures[p] / fct_scale for p in _PERCENTILES], width=width * 0.95,
                   color=colours[name], label=name)
    if not whose:
        fct_ax.text(0.5, 0.5, "no completed flow", transform=fct_ax.transAxes, ha="center", color="0.4")
    fct_ax.set_xticks(range(len(_PERCENTILES)), list(_PERCENTILES))
    flows = f"of {group}" if whose == {True} else "of all flows" if whose == {False} else f"of {group} (all flows where it has none)"
    fct_ax.set_ylabel(f"flow completion time ({fct_unit})")
    fct_ax.set_title(f"FCT {flows}", fontsize="medium")
    fct_ax.set_ylim(bottom=0)
    fct_ax.grid(True, axis="y", alpha=0.3)

    handles = [line for line in load_ax.get_lines() if line.get_label() in colours]
    if own:
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center",
                   ncols=min(len(runs), 6), frameon=False)
    else:  # the user's figure may not leave room below: the legend goes in a panel
        load_ax.legend(handles, [h.get_label() for h in handles], frameon=False, fontsize="small")
    _suptitle(fig, own, load_ax, title)
    return _root(load_ax)


def _window(times: Any) -> float | None:
    """The width of the time windows of a series: the most common step between them."""
    import numpy as np

    steps = np.diff(np.unique(np.asarray(times, dtype=float)))
    if steps.size == 0:
        return None
    values, counts = np.unique(steps, return_counts=True)
    return float(values[np.argmax(counts)])


def _duration_text(value: float, unit: str) -> str:
    """``10000`` ns -> ``10 µs``."""
    if unit != "ns":
        return f"{value:g} {unit}"
    for scale, name in ((1e6, "ms"), (1e3, "µs")):
        if value >= scale:
            return f"{value / scale:g} {name}"
    return f"{value:g} ns"


def _shade_phases(axes: Sequence[Any], phases: Any, unit: str, scale: float, end: float) -> None:
    """Each phase's interval (to the next phase, or to ``end``) shaded on ``axes``, in
    two alternating greys, and its label at the top of the first."""
    marks = sorted((at, text) for at, text in _phase_marks(phases, unit) if at < end)
    for index, (at, text) in enumerate(marks):
        stop = marks[index + 1][0] if index + 1 < len(marks) else end
        for ax in axes:
            ax.axvspan(at / scale, stop / scale, color="0.5", alpha=0.16 if index % 2 == 0 else 0.07, linewidth=0)
        if text:
            axes[0].annotate(
                text, xy=(at / scale, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                textcoords="offset points", rotation=90, va="top", ha="left", fontsize=8, color="0.25",
            )


# ----------------------------------------------------------------------------- directories


def read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file of a results directory; :class:`PlotError` if it cannot be read
    (truncated, overwritten, not Parquet)."""
    import pandas as pd
    from pyarrow import ArrowException

    try:
        return pd.read_parquet(path)
    except (OSError, ValueError, ArrowException) as e:
        raise PlotError(f"{path}: cannot read it as Parquet: {e}") from None


def _read_text(path: Path, parse: Callable[[str], Any], what: str) -> Any:
    """A text file of a results directory parsed by ``parse``; :class:`PlotError` if it
    cannot be read or parsed."""
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PlotError(f"{path}: cannot read it as {what}: {e}") from None


def _read_json(path: Path) -> Any:
    return _read_text(path, json.loads, "JSON")


def _sweep_info(directory: Path) -> dict[str, Any]:
    """The sweep's ``sweep.json`` (``{}`` if there is none or it cannot be read);
    :class:`PlotError` if it is JSON but not an object."""
    try:
        info = json.loads((directory / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(info, dict):
        raise PlotError(f"{directory / 'sweep.json'}: expected a JSON object (the sweep's spec), found {type(info).__name__}")
    return info


def swept_keys(directory: Path, points: pd.DataFrame) -> list[str]:
    """The keys a sweep varies (from ``sweep.json``), those with several values first."""
    keys = _sweep_info(directory).get("keys") or []
    keys = [k for k in keys if k in points.columns]
    return sorted(keys, key=lambda k: points[k].nunique(dropna=False) <= 1)


def default_hue(
    keys: list[str], points: pd.DataFrame, exclude: Iterable[str] = ("seed", "traffic.load"), along: str | None = None
) -> list[str]:
    """The swept keys, but seeds and the load, that take several values: each of their
    combinations gets a curve. With ``along`` (the x axis) a swept key, neither it nor the
    keys that move with it (zipped with it, one value per x) make curves."""
    skip = set(exclude) | ({along} if along else set())
    hue = [k for k in keys if k not in skip and k in points and points[k].nunique(dropna=False) > 1]
    if along in keys:
        as_text = points.astype(str)
        hue = [k for k in hue if as_text.groupby(along)[k].nunique().max() > 1]
    return hue


def phases_of(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The phases of a resolved config (``traffic.phases``) with their ``at`` and ``label``."""
    return [dict(p) for p in (config.get("traffic", {}).get("phases") or [])]


def _read_toml(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


TABLE_HINTS = {
    "timeseries": "did the point fail?",
    "fabric": "only runs with PFC, tail drop, ECN or congestion control have one",
    "rates": "runs with congestion_control.rate_series = true have one",
    "iterations": "runs of jobs ([workload] type = \"jobs\") have one",
    "steps": "runs of jobs ([workload] type = \"jobs\") have one",
}
"""Why a known table may be missing, for the error that says so."""


def _is_sweep(directory: Path) -> bool:
    return (directory / "points.parquet").is_file()


def table_path(directory: Path, name: str, point: str | None = None) -> Path:
    """The file of table ``name`` in a run directory (``<name>.parquet``) or of one point
    of a sweep directory (``<name>/<id>.parquet``; by default its first successful
    point); :class:`PlotError`, naming the tables there are, if there is none."""
    if not _is_sweep(directory):
        path = directory / f"{name}.parquet"
        there = sorted(p.stem for p in directory.glob("*.parquet"))
    else:
        point = _sweep_point(directory, point)
        path = directory / name / f"{point}.parquet"
        there = [t for t in _sweep_tables(directory) if (directory / t / f"{point}.parquet").is_file()]
    if not path.is_file():
        where = f"point {point}" if _is_sweep(directory) else str(directory)
        hint = f"; {TABLE_HINTS[name]}" if name in TABLE_HINTS else ""
        raise PlotError(f"{where}: no table {name!r} (tables: {', '.join(there) or 'none'}{hint})")
    return path


def _sweep_tables(directory: Path) -> list[str]:
    from snarl.sweep import table_folders

    return table_folders(directory)


def point_table(directory: Path, name: str, point: str | None = None) -> pd.DataFrame:
    """Table ``name`` of a run directory or of one point of a sweep directory (by default
    its first successful point); a point's table has the column ``point_id`` first, as
    every per-point table read back from a sweep."""
    path = table_path(directory, name, point)
    frame = read_parquet(path)
    return with_point_id(frame, path.stem) if _is_sweep(directory) else frame


def with_point_id(frame: pd.DataFrame, point_id: str) -> pd.DataFrame:
    """``frame`` (a table of one point of a sweep) with the column ``point_id`` first, if
    it has none: the shape of every per-point table read back from a sweep."""
    if "point_id" not in frame.columns:
        frame = frame.copy(deep=False)
        frame.insert(0, "point_id", point_id)
    return frame


def point_timeseries(directory: Path, point: str | None = None) -> tuple[pd.DataFrame, list[dict[str, Any]], str, str]:
    """``(timeseries, phases, time unit, title)`` of a run directory or of one point of a
    sweep directory (by default its first successful point)."""
    series = point_table(directory, "timeseries", point)
    if not _is_sweep(directory):
        config = _read_text(directory / "config.toml", _read_toml, "TOML") if (directory / "config.toml").is_file() else {}
        summary = _read_json(directory / "summary.json") if (directory / "summary.json").is_file() else {}
        return series, phases_of(config), summary.get("time_unit", "ns"), directory.name
    point = _sweep_point(directory, point)
    record = _point_record(directory, point)
    config = _read_toml(record["config"]) if record.get("config") else {}
    unit = (record.get("summary") or {}).get("time_unit", "ns")
    return series, phases_of(config), unit, _point_title(record, point)


def _sweep_point(directory: Path, point: str | None) -> str:
    """The id of the point of a sweep directory that ``point`` (a unique prefix) names,
    or of its first successful point."""
    points = load_points(directory)
    if point is None:
        ok = _ok(points)
        if ok.empty:
            raise PlotError(f"{directory}: no successful point")
        return str(ok["point_id"].iloc[0])
    matches = [str(p) for p in points["point_id"] if str(p).startswith(point)]
    if len(matches) != 1:
        raise PlotError(f"{directory}: {'no' if not matches else 'more than one'} point with id {point!r}")
    return matches[0]


def _point_record(directory: Path, point: str) -> dict[str, Any]:
    path = directory / "points" / f"{point}.json"
    record = _read_json(path) if path.is_file() else {}
    if not isinstance(record, dict):
        raise PlotError(f"{path}: not the record of a point")
    return record


def _point_title(record: Mapping[str, Any], point: str) -> str:
    """``traffic.load = 0.5, seed = 1``: the swept values of a point, wrapped to the
    width of a figure."""
    import textwrap

    values = record.get("values") or {}
    text = ", ".join(f"{k} = {_value_text(v)}" for k, v in values.items()) or point
    return "\n".join(textwrap.wrap(text, width=TITLE_WIDTH))


def point_summary(directory: Path, point: str | None = None) -> tuple[dict[str, Any], str]:
    """``(summary, title)`` of a run directory or of one point of a sweep directory (by
    default its first successful point)."""
    if (directory / "summary.json").is_file() and not _is_sweep(directory):
        return _read_json(directory / "summary.json"), directory.name
    point = _sweep_point(directory, point)
    record = _point_record(directory, point)
    if not record.get("summary"):
        raise PlotError(f"{directory}: point {point} has no summary (did it fail?)")
    return record["summary"], _point_title(record, point)


def load_points(directory: Path) -> pd.DataFrame:
    """The table of a sweep directory; :class:`PlotError` if there is none, or if it is
    not one."""
    path = directory / "points.parquet"
    if not path.is_file():
        raise PlotError(f"{directory}: no points.parquet (not a sweep directory: run `snarl sweep` first)")
    points = read_parquet(path)
    _require(points, "point_id", "status")
    return points


@dataclass(frozen=True)
class FigureRequest:
    """What ``snarl plot KIND DIR`` asks of a figure besides its kind (``None``: the
    kind's default). Each kind reads the options it has a use for and ignores the rest,
    as the command always did."""

    x: str | None = None
    y: str | None = None
    hue: str | Sequence[str] | None = None
    value: str | None = None
    point: str | None = None
    groups: Sequence[str] | None = None
    where: Sequence[str] | None = None
    style: str | None = None
    reference: str | None = None
    ax: Any = None


_Draw = Callable[[Path, FigureRequest], "Figure"]
"""``draw(directory, request)``: a figure of :func:`plot_directory`."""


@dataclass(frozen=True)
class DirectoryFigure:
    """A kind of :func:`plot_directory` and of ``snarl plot``: its name, its line of
    ``snarl plot --help`` and ``draw(directory, request)``, which returns the figure."""

    name: str
    help: str
    draw: _Draw
    several: bool = False
    """Drawn from several run directories too (``snarl plot mechanisms A B``, by
    :func:`plot_mechanisms`)."""


FIGURES: dict[str, DirectoryFigure] = {}
"""The kinds :func:`plot_directory` draws, by name, in the order they are declared (the
order ``snarl plot --help`` lists them)."""


def directory_figure(name: str, help: str, several: bool = False) -> Callable[[_Draw], _Draw]:
    """Declares the decorated ``draw(directory, request)`` as the figure ``name`` of
    :func:`plot_directory` and ``snarl plot``, described by ``help``. The declaration is
    the kind's only mention: the command's choices, its help and the error naming the
    kinds all come from :data:`FIGURES`."""
    if not help:
        raise ValueError(f"plot kind {name!r} needs a line of help")

    def declare(draw: _Draw) -> _Draw:
        if name in FIGURES:
            raise ValueError(f"plot kind {name!r} is declared twice")
        FIGURES[name] = DirectoryFigure(name, help, draw, several)
        return draw

    return declare


def plot_directory(
    kind: str,
    directory: str | Path,
    x: str | None = None,
    y: str | None = None,
    hue: str | Sequence[str] | None = None,
    value: str | None = None,
    point: str | None = None,
    groups: Sequence[str] | None = None,
    where: Sequence[str] | None = None,
    style: str | None = None,
    reference: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    size: tuple[float, float] | str | None = None,
) -> Figure:
    """The figure ``snarl plot KIND DIR`` draws, with sensible defaults from the sweep
    (``kind``: one of :data:`FIGURES`).

    ``where`` (``["traffic.load=0.5", ...]``) keeps the points of a sweep that have those
    values. A heatmap has one panel per value of the swept keys (but seeds) that are not
    on its axes. Keys, values and groups are called as the sweep file's ``[labels]``
    name them (:class:`Names`). ``title``, ``xlabel``, ``ylabel``, ``logx``, ``logy`` and
    ``size`` (inches, ``(8, 5)`` or ``"8x5"``) override the figure's (see
    :func:`decorate`). ``ax``: the Axes to draw into (see the module's help)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise PlotError(f"{directory}: no such directory")
    if isinstance(size, str):
        size = parse_figure_size(size)
    figure = FIGURES.get(kind)
    if figure is None:
        raise PlotError(f"unknown plot {kind!r}: expected one of {', '.join(FIGURES)}")
    request = FigureRequest(x, y, hue, value, point, groups, where, style, reference, ax)
    fig = figure.draw(directory, request)
    return decorate(fig, title=title, xlabel=xlabel, ylabel=ylabel, logx=logx, logy=logy, size=size)


@dataclass(frozen=True)
class _Swept:
    """What a figure of a sweep's table starts from: the points ``--where`` keeps, the
    swept keys, and the request's columns as the table names them (the sweep file's
    ``[labels]`` resolved)."""

    names: Names
    points: pd.DataFrame
    keys: list[str]
    x: str | None
    y: str | None
    hue: list[str]
    style: str | None


def _swept(directory: Path, request: FigureRequest) -> _Swept:
    names = names_of(directory)
    points = where_rows(load_points(directory), request.where, names)
    # Every column the request names is resolved, used by the kind or not: a misspelt
    # one is an error, whichever figure it was given to.
    return _Swept(
        names=names,
        points=points,
        keys=swept_keys(directory, points),
        x=names.column(request.x, points) if request.x else request.x,
        y=names.column(request.y, points) if request.y else request.y,
        hue=[names.column(h, points) for h in hue_columns(request.hue)],
        style=names.column(request.style, points) if request.style else request.style,
    )


@directory_figure("load-curve", "accepted vs offered load, mean and std over seeds, a curve per swept value (a sweep)")
def _load_curve_figure(directory: Path, request: FigureRequest) -> Figure:
    swept = _swept(directory, request)
    x = swept.x or "offered_load"
    hue = swept.hue or default_hue(swept.keys, swept.points, along=x)
    if swept.style:
        hue = [h for h in hue if h != swept.style]
    facet = None
    if _combinations(swept.points, hue) > MAX_LEGEND and len(hue) > 1:
        facet, hue = hue[:1], hue[1:]
    return load_curve(
        swept.points, x=x, y=swept.y or "accepted_load", hue=hue, style=swept.style, reference=request.reference,
        by=swept.x if swept.x and swept.style else None, ax=request.ax, names=swept.names, facet=facet,
    )


@directory_figure("timeseries", "accepted load per time window and group, the phases marked (a run, or a sweep's --point)")
def _timeseries_figure(directory: Path, request: FigureRequest) -> Figure:
    series, phases, unit, title = point_timeseries(directory, request.point)
    return throughput_over_time(
        series, phases=phases, groups=request.groups, y=request.y or "accepted_load", unit=unit, title=title,
        ax=request.ax,
    )


@directory_figure("heatmap", "a --value over two swept keys (--x, --y), a panel per value of the others (a sweep)")
def _heatmap_figure(directory: Path, request: FigureRequest) -> Figure:
    swept = _swept(directory, request)
    varying = [k for k in swept.keys if k != "seed" and swept.points[k].nunique() > 1]
    x = swept.x or (varying[0] if varying else None)
    y = swept.y or (varying[1] if len(varying) > 1 else None)
    if x is None or y is None:
        raise PlotError("a heatmap needs two swept keys: give --x and --y")
    facets = [k for k in varying if k not in (x, y)]
    return heatmap(
        swept.points, x=x, y=y, value=request.value or "accepted_load", facet=facets, ax=request.ax, names=swept.names
    )


@directory_figure("cdf", "the distribution of a --value over the points, or of a time-series column over their windows")
def _cdf_figure(directory: Path, request: FigureRequest) -> Figure:
    swept = _swept(directory, request)
    value = request.value or "accepted_load"
    hue = swept.hue or default_hue(swept.keys, swept.points)
    ok = _ok(swept.points)
    unit = _unit(ok, None)
    if value in swept.points.columns:
        name_of = hue_labeller(ok, hue, swept.names)
        curves = {name_of(v): rows[value] for v, rows in ok.groupby(hue)} if hue else {None: ok[value]}
        return cdf(curves, xlabel=label(value, unit, swept.names), legend_title=None, ax=request.ax)
    return window_cdf(directory, ok, value, hue, request.groups, unit, ax=request.ax, names=swept.names)


@directory_figure("fct", "FCT slowdown p50, p95 and p99 by flow-size bucket")
def _fct_figure(directory: Path, request: FigureRequest) -> Figure:
    summary, title = point_summary(directory, request.point)
    return fct_slowdown((summary.get("fct") or {}).get("buckets") or [], title=title, ax=request.ax)


@directory_figure("fabric", "throughput per group above, pause frames, marks, CNPs and drops per window below")
def _fabric_figure(directory: Path, request: FigureRequest) -> Figure:
    series, phases, unit, title = point_timeseries(directory, request.point)
    fabric = point_table(directory, "fabric", request.point)
    return congestion_over_time(
        series, fabric, phases=phases, groups=request.groups, unit=unit, title=title, ax=request.ax
    )


@directory_figure("rates", "the rates of congestion-controlled flows over time (congestion_control.rate_series)")
def _rates_figure(directory: Path, request: FigureRequest) -> Figure:
    rates = point_table(directory, "rates", request.point)
    summary, title = point_summary(directory, request.point)
    return flow_rates(rates, unit=summary.get("time_unit", "ns"), title=title, ax=request.ax)


@directory_figure(
    "mechanisms",
    "mechanisms side by side, a colour per run: a group's throughput, CNPs and FCTs (several run DIRs, or a sweep)",
    several=True,
)
def _mechanisms_figure(directory: Path, request: FigureRequest) -> Figure:
    groups = request.groups
    if groups is not None and len(groups) > 1:
        raise PlotError("mechanisms plots one group: give --group once")
    return plot_mechanisms([directory], group=groups[0] if groups else None, where=request.where, ax=request.ax)


@directory_figure("iterations", "each job's iteration times, and their spread after the warm-up (runs of jobs)")
def _iterations_figure(directory: Path, request: FigureRequest) -> Figure:
    summary, title = point_summary(directory, request.point)
    table = point_table(directory, "iterations", request.point)
    return iteration_times(table, unit=summary.get("time_unit", "ns"), title=title, ax=request.ax)


@directory_figure("timeline", "one job's ranks over time, step by step (--group JOB; runs of jobs)")
def _timeline_figure(directory: Path, request: FigureRequest) -> Figure:
    summary, _ = point_summary(directory, request.point)
    table = point_table(directory, "steps", request.point)
    job = request.groups[0] if request.groups else None
    return rank_timeline(table, job=job, unit=summary.get("time_unit", "ns"), ax=request.ax)


@directory_figure("queues", "the probed queues per window, with pause frames and marks (observe.queues)")
def _queues_figure(directory: Path, request: FigureRequest) -> Figure:
    point = request.point
    queues = point_table(directory, "queues", point)
    summary, title = point_summary(directory, point)
    fabric_path = table_path(directory, "fabric", point) if _has_table(directory, "fabric", point) else None
    fabric = read_parquet(fabric_path) if fabric_path is not None else None
    return queue_series(queues, fabric, unit=summary.get("time_unit", "ns"), title=title, ax=request.ax)


KINDS = tuple(FIGURES)
"""The names of :data:`FIGURES`, in order: what :func:`plot_directory` draws."""


def _combinations(points: pd.DataFrame, columns: Sequence[str]) -> int:
    """How many combinations of values of ``columns`` the rows of ``points`` hold."""
    if not columns:
        return 1
    return len(points[list(columns)].astype(str).drop_duplicates())


def _has_table(directory: Path, name: str, point: str | None) -> bool:
    try:
        table_path(directory, name, point)
    except PlotError:
        return False
    return True


def where_rows(points: pd.DataFrame, where: Sequence[str] | None, names: Names | None = None) -> pd.DataFrame:
    """The rows of ``points`` whose columns hold the given values (``KEY=VALUE``, the
    value as a legend writes it, as the same number, or as the sweep file's ``[labels]``
    call it; a key by its column or as the sweep file names it)."""
    for condition in where or []:
        key, sep, text = (part.strip() for part in condition.partition("="))
        if not sep or not key:
            raise PlotError(f"--where {condition!r}: expected KEY=VALUE, e.g. --where traffic.load=0.5")
        if names is not None:
            key = names.column(key, points)
        _require(points, key)
        kept = points[points[key].map(lambda v, t=text: _is_value(v, t) or (names is not None and names.alias(key, v) == t))]
        if kept.empty:
            values = ", ".join(sorted({_value_text(v) for v in points[key]}))
            raise PlotError(f"--where {condition}: no point has {key} = {text} (it has {values})")
        points = kept
    return points


def _is_value(value: Any, text: str) -> bool:
    """Whether ``text`` names ``value``: as written, as a legend writes it, or as the
    same number."""
    if text in (str(value), _value_text(value)):
        return True
    try:
        return float(value) == float(text)
    except (TypeError, ValueError):
        return False


def window_cdf(
    directory: Path, ok: pd.DataFrame, value: str = "accepted_load", hue: Sequence[str] = (),
    groups: Sequence[str] | None = None, unit: str = "ns", ax: Axes | None = None, names: Names | None = None,
) -> Figure:
    """CDF of a time-series column over the measured windows (from ``measure_from`` on)
    of every point of ``ok`` (rows of the sweep's table), one curve per value of
    ``hue``: the windows of the points that share a hue value are pooled, so give it
    every key the rows vary but seeds (or keep one value of the others, :func:`where_rows`)."""
    hue = list(hue)
    group = (groups or ["all"])[0]
    name_of = hue_labeller(ok, hue, names)
    curves: dict[Any, list[Any]] = {}
    for _, row in ok.iterrows():
        path = directory / "timeseries" / f"{row['point_id']}.parquet"
        if not path.is_file():
            continue
        series = with_point_id(read_parquet(path), str(row["point_id"]))
        if value not in series.columns:
            raise PlotError(f"no column {value!r} in the points or the time series")
        start = row.get("measure_from", 0.0)
        start = 0.0 if start is None or (isinstance(start, float) and math.isnan(start)) else float(start)
        rows = series[(series["group"] == group) & (series["time"] >= start)]
        name = name_of(tuple(row[h] for h in hue)) if hue else None
        curves.setdefault(name, []).extend(rows[value].tolist())
    if not curves:
        raise PlotError(f"{directory}: no time series to plot")
    who = "all hosts" if group == "all" else group
    return cdf(curves, xlabel=f"{label(value, unit, names)} per window, {who}", ax=ax)


def describe(fig: Any) -> dict[str, Any]:
    """What a figure shows, read from what it draws (the report records it beside each
    figure): ``panels`` (data panels), ``distinct_x`` (the fewest distinct x values of
    the data of a panel: the points of a curve, a heatmap's columns; ``None`` without
    data), ``legend`` (every legend entry, in order), ``legend_titles``, ``crowded``
    (legends of more than :data:`LEGEND_INSIDE` entries drawn inside their axes)."""
    import numpy as np

    legends, panels = list(fig.legends), []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        legend = ax.get_legend()
        if legend is not None:
            legends.append(legend)
        xs: list[float] = []
        data = False
        for line in ax.get_lines():
            if line.get_gid() == GUIDE or line.get_transform() != ax.transData:
                continue
            values = np.asarray(line.get_xdata(), dtype=float)
            values = values[np.isfinite(values)]
            if values.size:
                data = True
                xs.extend(values.tolist())
        for image in ax.get_images():
            data = True
            xs.extend(range(np.asarray(image.get_array()).shape[1]))
        for collection in ax.collections:  # scatter (not error bars' line collections)
            if type(collection).__name__ != "PathCollection":
                continue
            offsets = np.asarray(collection.get_offsets(), dtype=float)
            if offsets.size:
                data = True
                xs.extend(offsets[:, 0].tolist())
        if data:
            panels.append(distinct_values(xs))
    entries = [text.get_text() for legend in legends for text in legend.get_texts()]
    titles = [legend.get_title().get_text() for legend in legends if legend.get_title().get_text()]
    figure_legends = {id(legend) for legend in fig.legends}
    crowded = sum(
        1 for legend in legends
        if id(legend) not in figure_legends and len(legend.get_texts()) > LEGEND_INSIDE and _inside(legend)
    )
    return {
        "panels": len(panels),
        "distinct_x": min(panels) if panels else None,
        "legend": entries,
        "legend_titles": titles,
        "crowded": crowded,
    }


SAME_X = 0.005
"""x values closer than this fraction of the largest |x| are one value (a group's
offered load that wavers by a packet is not a spread)."""


def distinct_values(values: Any, magnitude: float | None = None) -> int:
    """How many distinct values ``values`` holds, counting as one those closer than
    :data:`SAME_X` of ``magnitude`` (by default their largest absolute value)."""
    import numpy as np

    data = np.asarray(list(values), dtype=float)
    data = data[np.isfinite(data)]
    if data.size == 0:
        return 0
    scale = magnitude if magnitude else float(np.abs(data).max())
    if scale == 0:
        return 1
    data = np.sort(data)
    return 1 + int(np.count_nonzero(np.diff(data) > SAME_X * scale))


def _inside(legend: Any) -> bool:
    """Whether a legend of an Axes is anchored inside it (not placed outside by
    :func:`place_legend`)."""
    anchor = legend.get_bbox_to_anchor()
    box = anchor.transformed(legend.axes.transAxes.inverted())
    return box.x0 < 1.0 and box.y0 < 1.0 and box.x1 > 0.0 and box.y1 > 0.0


def decorate(
    fig: Any,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    size: tuple[float, float] | None = None,
) -> Any:
    """A figure with what ``snarl plot --title --xlabel --ylabel --logx --logy --size``
    asks: the title above the figure (above its panel if it has one), the axis labels
    of every data panel that has one, log scales, the size in inches."""
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    if title is not None:
        if len(axes) == 1:
            axes[0].set_title(title)
        else:
            fig.suptitle(title)
    for ax in axes:
        if xlabel is not None and ax.get_xlabel():
            ax.set_xlabel(xlabel)
        if ylabel is not None and ax.get_ylabel():
            ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
    if size is not None:
        fig.set_size_inches(*size)
    return fig


def parse_figure_size(text: str) -> tuple[float, float]:
    """``"8x5"`` or ``"8,5"`` (inches) -> ``(8.0, 5.0)``; :class:`PlotError` otherwise."""
    parts = re.split(r"[x,×]", text.strip().lower())
    try:
        width, height = (float(p) for p in parts)
    except ValueError:
        raise PlotError(f"--size {text!r}: expected WIDTHxHEIGHT in inches, e.g. --size 8x5") from None
    if not (0 < width <= 100 and 0 < height <= 100):
        raise PlotError(f"--size {text!r}: width and height are inches between 0 and 100")
    return width, height


# The per-port counts of the ``queues`` table (runs with PFC, runs that mark): the pause
# frames each probed port sent upstream and received from downstream, and the marks in
# each probed queue, named as the ``fabric`` table names the fabric's.
_PROBE_PAUSES = {"pause_frames_sent": "sent", "pause_frames_received": "received"}
_PROBE_MARKS = {"ecn_marks": "ECN marks", "fecn_marks": "FECN marks", "congestion_marks": "congestion marks"}


def queue_series(
    queues: pd.DataFrame,
    fabric: pd.DataFrame | None = None,
    unit: str = "ns",
    title: str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """The probed queues (``observe.queues``) window by window: each probe's mean
    occupancy (solid) and maximum (thin, dashed) in KiB, one colour per probe. When the
    ``queues`` table counts them (runs with PFC, runs that mark), the PFC pause frames
    each probed port sent upstream (solid) and received from downstream (dashed) per
    window, in a panel, and the marks in each probed queue, in another; any other
    per-probe column in a panel of its own. Below, when ``fabric`` is given, the
    fabric-wide events per window that the probes do not count port by port (all of its
    pause frames and marks with a ``queues`` table from before the per-port counts)."""
    from matplotlib.lines import Line2D

    _require(queues, "time", "switch", "port", "mean_bytes")
    if queues.empty:
        raise PlotError("the queues table is empty (no window recorded)")
    keys = [c for c in ("switch", "port", "priority") if c in queues.columns]
    pauses = [c for c in _PROBE_PAUSES if c in queues.columns]
    marks = [c for c in _PROBE_MARKS if c in queues.columns]
    extra = [c for c in queues.columns if c not in (*keys, "time", "point_id", "mean_bytes", "max_bytes", *pauses, *marks)
             and str(queues[c].dtype) != "object"]
    # The fabric's pause frames and marks are drawn port by port when the probes count them.
    counted = ({"pause_frames"} if pauses else set()) | set(marks)
    events = [c for c in _FABRIC_EVENTS
              if fabric is not None and c in fabric.columns and c not in counted and fabric[c].sum() > 0]
    count = 1 + (1 if pauses else 0) + len(marks) + len(extra) + (1 if events else 0)
    own = ax is None
    fig, axes, _ = _panels(ax, count, (7.6, 3.2 + 2.2 * (count - 1)), "queue_series", rows=count, sharex=True)
    pause_panel = axes[1] if pauses else None
    mark_panels = dict(zip(marks, axes[1 + len(pauses[:1]):]))
    extra_panels = dict(zip(extra, axes[1 + len(pauses[:1]) + len(marks):]))
    scale, shown = _time_axis(queues["time"], unit)
    probes = list(queues.groupby(keys, sort=True))
    for index, (key, rows) in enumerate(probes):
        key = key if isinstance(key, tuple) else (key,)
        where = dict(zip(keys, key))
        name = f"switch {where['switch']} port {where['port']}" + (
            f" prio {where['priority']}" if where.get("priority") and len(set(queues.get("priority", [0]))) > 1 else ""
        )
        rows = rows.sort_values("time")
        colour = f"C{index % 10}"
        time = rows["time"] / scale
        axes[0].plot(time, rows["mean_bytes"] / 1024, color=colour, linewidth=1.3, label=name)
        if "max_bytes" in rows:
            axes[0].plot(time, rows["max_bytes"] / 1024, color=colour, linewidth=0.8, linestyle="--")
        if pause_panel is not None:
            for column in pauses:
                style = "-" if column == "pause_frames_sent" else "--"
                pause_panel.plot(time, rows[column], color=colour, linewidth=1.2, linestyle=style, label=name)
        for column, panel in (*mark_panels.items(), *extra_panels.items()):
            panel.plot(time, rows[column], color=colour, linewidth=1.2, label=name)
    axes[0].set_ylabel("queue (KiB): mean, max dashed")
    axes[0].set_ylim(bottom=0)
    handles = [line for line in axes[0].get_lines() if not line.get_label().startswith("_")]
    place_legend(axes[0], handles, [h.get_label() for h in handles], title="probe")
    if pause_panel is not None:
        pause_panel.set_ylabel("pause frames per window")
        pause_panel.set_ylim(bottom=0)
        styles = [Line2D([], [], color="0.3", linestyle="-" if c == "pause_frames_sent" else "--") for c in pauses]
        labels = [f"{_PROBE_PAUSES[c]} ({'upstream' if c == 'pause_frames_sent' else 'from downstream'})" for c in pauses]
        pause_panel.legend(styles, labels, frameon=False, fontsize="small")
    for column, panel in mark_panels.items():
        panel.set_ylabel(f"{_PROBE_MARKS[column]} per window")
        panel.set_ylim(bottom=0)
    for column, panel in extra_panels.items():
        panel.set_ylabel(column.replace("_", " ") + " per window")
    if events:
        panel = axes[-1]
        fabric = fabric.sort_values("time")
        for column in events:
            panel.plot(fabric["time"] / scale, fabric[column], linewidth=1.1, label=_FABRIC_EVENTS[column])
        panel.set_ylabel("whole fabric, per window")
        panel.set_ylim(bottom=0)
        place_legend(panel, panel.get_lines(), [line.get_label() for line in panel.get_lines()])
    for panel in axes:
        panel.grid(True, alpha=0.3)
    axes[-1].set_xlabel(f"time ({shown})")
    _suptitle(fig, own, axes[0], title, fontsize="medium")
    return _root(axes[0])


# ----------------------------------------------------------------------------- mechanisms

_SEPARATORS = "-_. "


def common_prefix(names: Sequence[str]) -> str:
    """The longest prefix that every name shares, ends at a separator (``-``, ``_``,
    ``.``, space) and leaves something of each: ``one-tree-none``, ``one-tree-dcqcn`` ->
    ``one-tree-``; ``""`` for fewer than two names, or none shared."""
    import os

    names = list(names)
    if len(names) < 2:
        return ""
    shared = os.path.commonprefix(names)
    for cut in range(len(shared), 0, -1):
        if shared[cut - 1] in _SEPARATORS and all(len(n) > cut for n in names):
            return shared[:cut]
    return ""


def _label_list(labels: str | Sequence[str] | None, count: int) -> list[str] | None:
    """``--labels a,b,c`` as a list of ``count`` names; :class:`PlotError` otherwise."""
    if labels is None:
        return None
    names = [n.strip() for n in labels.split(",")] if isinstance(labels, str) else [str(n).strip() for n in labels]
    if len(names) != count:
        raise PlotError(f"--labels: {len(names)} name{'s' if len(names) != 1 else ''} for {count} run{'s' if count != 1 else ''}")
    if not all(names):
        raise PlotError("--labels: an empty name; give one name per run, comma-separated")
    return names


def _unique(labels: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in labels:
        if name in seen:
            raise PlotError(f"two runs would both be labelled {name!r}: name them with --labels a,b,...")
        seen.add(name)


def _read_run(directory: Path) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    """``(summary, timeseries, fabric or None, config)`` of a ``snarl run --out``
    directory; its other tables are not read."""
    if not directory.is_dir():
        raise PlotError(f"{directory}: no such directory")
    if _is_sweep(directory):
        raise PlotError(f"{directory}: a sweep directory; give it alone (a curve per point), or give run directories")
    if not (directory / "summary.json").is_file():
        raise PlotError(f"{directory}: not a run directory (no summary.json): write one with `snarl run FILE.toml --out DIR`")
    summary = _read_json(directory / "summary.json")
    if not isinstance(summary, dict):
        raise PlotError(f"{directory / 'summary.json'}: not the summary of a run")
    timeseries = read_parquet(table_path(directory, "timeseries"))
    fabric_path = directory / "fabric.parquet"
    fabric = read_parquet(fabric_path) if fabric_path.is_file() else None
    config_path = directory / "config.toml"
    config = _read_text(config_path, _read_toml, "TOML") if config_path.is_file() else {}
    return summary, timeseries, fabric, config


def _sweep_runs(directory: Path, where: Sequence[str] | None) -> tuple[list[str], list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame | None, dict[str, Any]]]]:
    """The successful points of a sweep directory: their names (the swept
    ``description`` if any, else the swept values that differ between them) and their
    ``(summary, timeseries, fabric or None, config)``."""
    every = _ok(load_points(directory))
    points = _ok(where_rows(every, where)) if where else every
    if points.empty:
        raise PlotError(f"{directory}: no successful point")
    keys = swept_keys(directory, every)
    # The keys that differ between the points plotted, else (one point kept by --where)
    # between all of them.
    varying = [k for k in keys if points[k].nunique(dropna=False) > 1] or [
        k for k in keys if every[k].nunique(dropna=False) > 1
    ]
    if "description" in keys and points["description"].nunique(dropna=False) == len(points):
        columns = ["description"]
    else:
        columns = (["description"] if "description" in keys else []) + [k for k in varying if k != "description"]
    name_of = hue_labeller(points, columns)
    names, runs = [], []
    for _, row in points.iterrows():
        point = str(row["point_id"])
        names.append(name_of(tuple(row[c] for c in columns)) if columns else point)
        record = _point_record(directory, point)
        if not record.get("summary"):
            raise PlotError(f"{directory}: point {point} has no summary")
        timeseries = point_table(directory, "timeseries", point)
        fabric_path = directory / "fabric" / f"{point}.parquet"
        fabric = with_point_id(read_parquet(fabric_path), point) if fabric_path.is_file() else None
        config = _read_toml(record["config"]) if record.get("config") else {}
        runs.append((record["summary"], timeseries, fabric, config))
    return names, runs


def plot_mechanisms(
    directories: Sequence[str | Path],
    group: str | None = None,
    labels: str | Sequence[str] | None = None,
    title: str | None = None,
    where: Sequence[str] | None = None,
    ax: Axes | Sequence[Axes] | None = None,
) -> Figure:
    """The figure ``snarl plot mechanisms DIR [DIR ...]`` draws (:func:`mechanisms`): one
    run per ``snarl run --out`` directory, named by its directory without the prefix
    they all share (``one-tree-none``, ``one-tree-dcqcn`` -> ``none``, ``dcqcn``; the
    prefix, ``one-tree``, is the default title); or one run per successful point of a
    single sweep directory (``where`` keeps some), named by its swept ``description``,
    else by its swept values that differ, titled by the sweep's name.

    ``labels`` (``"a,b,c"`` or a list) names the runs instead, in order; ``group`` is the
    group plotted (default: :func:`default_group`). Tables other than ``timeseries`` and ``fabric``
    are not read."""
    paths = [Path(d) for d in directories]
    if not paths:
        raise PlotError("no directory to plot")
    if len(paths) == 1 and paths[0].is_dir() and _is_sweep(paths[0]):
        names, runs = _sweep_runs(paths[0], where)
        default_title = str(_sweep_info(paths[0]).get("name") or paths[0].resolve().name)
    else:
        if where:
            raise PlotError("--where picks points of a sweep directory; run directories are given one by one")
        runs = [_read_run(path) for path in paths]
        full = [path.resolve().name for path in paths]
        prefix = common_prefix(full)
        names = [name[len(prefix):] for name in full]
        default_title = prefix.rstrip(_SEPARATORS)
    names = _label_list(labels, len(runs)) or names
    _unique(names)
    summaries = {name: run[0] for name, run in zip(names, runs)}
    first = runs[0][0]
    phases = next((phases_of(run[3]) for run in runs if phases_of(run[3])), [])
    return mechanisms(
        {name: with_gbps(run[1], run[0]) for name, run in zip(names, runs)},
        {name: run[2] for name, run in zip(names, runs)},
        summaries,
        group=group,
        phases=phases,
        unit=str(first.get("time_unit", "ns")),
        title=(default_title if title is None else title) or None,
        ax=ax,
    )
