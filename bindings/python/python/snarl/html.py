"""``snarl report``: one self-contained HTML page of a sweep (or of several, one section
each).

The page holds everything it shows (figures as base64 PNG, styles inline, no external
resource), so it opens offline and can be mailed or archived as one file: the figures of
the sweep, the sweep spec and the base experiment, a table of the points, the tables the
points wrote and the versions of the software that computed them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


class ReportError(ValueError):
    """A directory that holds no sweep to report on."""


STYLE = """
:root { --fg: #1d2430; --muted: #5b6575; --line: #d9dee7; --accent: #2f5f9e; --bad: #b3261e; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; max-width: 1180px; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
p.meta { color: var(--muted); margin: 0 0 8px; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 18px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 10px; background: #fff; }
figure img { width: 100%; height: auto; display: block; }
figure.wide { grid-column: 1 / -1; }
figure.wide img { width: auto; max-width: 100%; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
pre { background: #f5f7fa; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px;
      overflow-x: auto; font-size: 13px; }
.table-wrap { overflow-x: auto; max-height: 640px; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { padding: 4px 10px; text-align: right; white-space: nowrap; border-bottom: 1px solid var(--line); }
th { background: #f0f3f8; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
tr.failed td { color: var(--bad); }
code { font-size: 13px; }
details { margin: 10px 0; }
summary { cursor: pointer; color: var(--accent); }
"""

# Marks the page as complete once every image has decoded (used by tests and tools that
# check a report renders: <body data-loaded="N"> where N is the number of images).
SCRIPT = """
(function () {
  function mark() {
    var images = document.images, loaded = 0;
    for (var i = 0; i < images.length; i++) {
      if (images[i].complete && images[i].naturalWidth > 0) loaded++;
    }
    document.body.setAttribute("data-images", String(images.length));
    if (loaded === images.length) document.body.setAttribute("data-loaded", String(loaded));
    else document.body.setAttribute("data-broken", String(images.length - loaded));
  }
  if (document.readyState === "complete") mark(); else window.addEventListener("load", mark);
})();
"""

MAX_TIMESERIES = 4
"""Points whose throughput over time the report shows."""


def _png(fig: Figure) -> str:
    """A figure as a data: URI of a PNG."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass
class Planned:
    """A figure the report means to draw: what it shows (the metadata the page records
    beside it) and how to draw it."""

    kind: str
    """``load-curve``, ``heatmap``, ``cdf``, ``timeseries`` or ``fabric``."""
    title: str
    caption: str
    make: Callable[[], Figure]
    x: str | None = None
    y: str | None = None
    hue: list[str] = field(default_factory=list)
    style: str | None = None
    facet: list[str] = field(default_factory=list)
    fixed: dict[str, Any] = field(default_factory=dict)
    """Swept keys held at one value (``traffic.load`` at its highest), by column."""
    pooled: list[str] = field(default_factory=list)
    """Swept keys (but seeds) whose values the figure mixes together: none, by design."""
    declared: bool = False
    """Drawn because the sweep file's ``[[figures]]`` asks for it."""
    wide: bool = False
    """Wider than a column of the page: it gets a row of its own."""


@dataclass
class Dimension:
    """A swept direction: one axis, or the keys of ``[zip]`` that move together (named
    by ``description`` if it is one of them, else by the first)."""

    column: str
    columns: list[str]


def dimensions(spec: Mapping[str, Any], ok: pd.DataFrame, keys: Sequence[str]) -> list[Dimension]:
    """The directions a sweep varies (seeds aside: they are replicates), each with more
    than one value among the points ``ok``."""
    varying = [k for k in keys if k != "seed" and k in ok.columns and ok[k].astype(str).nunique() > 1]
    zipped = [k for k in (spec.get("zip") or {}) if k in varying]
    found = [Dimension(k, [k]) for k in varying if k not in zipped]
    if zipped:
        head = "description" if "description" in zipped else zipped[0]
        found.append(Dimension(head, [head, *[k for k in zipped if k != head]]))
    return found


class _Planner:
    """Chooses a sweep's figures from what it swept (see :func:`plan_figures`)."""

    def __init__(self, directory: Path, points: pd.DataFrame, keys: list[str]) -> None:
        from snarl import plots

        self.directory = directory
        self.info = plots._sweep_info(directory)
        self.spec = self.info.get("spec") or {}
        self.names = plots.names_of(directory)
        self.ok = points[points["status"] == "ok"] if "status" in points else points
        self.keys = keys
        self.dims = dimensions(self.spec, self.ok, keys)
        self.seeds = f" Mean ± standard deviation over {self.ok['seed'].nunique()} seeds." if (
            "seed" in keys and "seed" in self.ok and self.ok["seed"].nunique() > 1
        ) else ""
        self.planned: list[Planned] = []
        self.primary = self._primary()

    # -- the sweep's directions

    def dim_of(self, column: str | None) -> Dimension | None:
        if column is None:
            return None
        canonical = self.names.canonical(column)
        return next((d for d in self.dims if any(self.names.canonical(c) == canonical for c in d.columns)), None)

    def _primary(self) -> Dimension | None:
        """The direction along x: the declared figures' x, else the load, else the
        numeric direction with the most values."""
        for figure in self.spec.get("figures") or []:
            found = self.dim_of(self.names.column(figure.get("x", ""), self.ok))
            if found is not None:
                return found
        found = self.dim_of("traffic.load")
        if found is not None:
            return found
        numeric = [d for d in self.dims if self._numeric(d.column)]
        return max(numeric, key=lambda d: self.ok[d.column].nunique(), default=None)

    def _numeric(self, column: str) -> bool:
        import pandas as pd

        return bool(pd.to_numeric(self.ok[column], errors="coerce").notna().all())

    def others(self, *used: Dimension | None) -> list[Dimension]:
        taken = {id(d) for d in used if d is not None}
        return [d for d in self.dims if id(d) not in taken]

    def covered(self, columns: Sequence[str | None]) -> list[Dimension]:
        return [d for d in (self.dim_of(c) for c in columns if c) if d is not None]

    def pooled(self, *columns: str | None, fixed: Mapping[str, Any] | None = None) -> list[str]:
        """The directions a figure over ``columns`` (and holding ``fixed``) mixes."""
        taken = {id(d) for d in self.covered([*columns, *(fixed or {})])}
        return [d.column for d in self.dims if id(d) not in taken]

    # -- checks

    def spread(self, rows: pd.DataFrame, x: str, by: str, groups: Sequence[str]) -> int:
        """The fewest distinct x values of a curve (one per value of ``by``, a curve per
        combination of ``groups``): 1 means its points collapse onto one x."""
        import pandas as pd

        if x not in rows.columns or by not in rows.columns or rows.empty:
            return 0
        from snarl.plots import distinct_values

        frame = rows.assign(_x=pd.to_numeric(rows[x], errors="coerce"), _by=rows[by].astype(str))
        magnitude = float(frame["_x"].abs().max()) if frame["_x"].notna().any() else 0.0
        fewest = None
        for _, curve in (frame.groupby(list(groups), dropna=False) if groups else [(None, frame)]):
            if x == by:
                distinct = curve["_by"].nunique()
            else:
                distinct = distinct_values(curve.groupby("_by")["_x"].mean(), magnitude)
            fewest = distinct if fewest is None else min(fewest, distinct)
        return fewest or 0

    def fit_hue(self, rows: pd.DataFrame, hue: list[str], facet: list[str]) -> tuple[list[str], list[str]]:
        """A legend that fits: more combinations than a legend holds get a panel per
        value of the first hue key."""
        from snarl import plots

        while len(hue) > 1 and plots._combinations(rows, hue) > plots.MAX_LEGEND:
            facet, hue = [*facet, hue[0]], hue[1:]
        return hue, facet

    def hue_of(self, *used: Dimension | None) -> list[str]:
        return [d.column for d in self.others(*used)]

    def each(self, hue: Sequence[str]) -> str:
        if not hue:
            return "."
        return f", one curve per value of {self._words(hue)}."

    def sentences(self, *parts: str) -> str:
        """Caption parts as sentences: each ends with a full stop."""
        return " ".join(p.strip().rstrip(".") + "." for p in parts if p and p.strip().rstrip("."))

    def _words(self, columns: Sequence[str]) -> str:
        words = [self.names.key(c) if c != "description" else "the setting described" for c in columns]
        return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]

    def at(self, fixed: Mapping[str, Any]) -> str:
        return "; ".join(f"{self.names.key(k)} = {self.names.value(k, v)}" if self.names.alias(k, v) is None
                         else self.names.value(k, v) for k, v in fixed.items())

    # -- the figures

    def plan(self) -> list[Planned]:
        if self.ok.empty:
            return []
        for figure in self.spec.get("figures") or []:
            self.declared(figure)
        self.load_curves()
        self.headlines()
        self.heatmaps()
        self.timeseries()
        self.distribution()
        return self.planned

    def add(self, planned: Planned) -> None:
        self.planned.append(planned)

    def curve(
        self, title: str, caption: str, x: str, y: str, hue: list[str], by: str, rows: pd.DataFrame | None = None,
        style: str | None = None, reference: str | None = None, ideal: bool | None = None, facet: Sequence[str] = (),
        fixed: Mapping[str, Any] | None = None, declared: bool = False, logx: bool = False, logy: bool = False,
    ) -> bool:
        """Plans a curve figure unless its points collapse onto one x value."""
        from snarl import plots

        rows = self.ok if rows is None else rows
        groups = [*hue, *([style] if style else []), *facet]
        if self.spread(rows, x, by, groups) < 2:
            return False
        hue, facet = self.fit_hue(rows, list(hue), list(facet))
        names = self.names

        def make() -> Figure:
            fig = plots.load_curve(rows, x=x, y=y, hue=hue, by=by, style=style, reference=reference, ideal=ideal,
                                   names=names, facet=facet or None)
            return plots.decorate(fig, logx=logx, logy=logy)

        panels = plots._combinations(rows, facet) if facet else 1
        self.add(Planned(
            "load-curve", title, caption, make, x=x, y=y, hue=hue, style=style, facet=list(facet), fixed=dict(fixed or {}),
            pooled=self.pooled(by, *hue, style, *facet, fixed=fixed), declared=declared, wide=panels > 1,
        ))
        return True

    def declared(self, figure: Mapping[str, Any]) -> None:
        from snarl import plots

        names = self.names
        column = lambda key: names.column(key, self.ok) if key else key  # noqa: E731
        where = list(figure.get("where") or [])
        try:
            rows = plots.where_rows(self.ok, where, names)
        except plots.PlotError as e:
            self.add(Planned(figure["kind"], figure.get("title") or "Declared figure", f"Not drawn: {e}",
                             _fail(str(e)), declared=True))
            return
        fixed = {}
        for condition in where:
            key = column(condition.partition("=")[0].strip())
            if key in rows.columns and rows[key].astype(str).nunique() == 1:
                fixed[key] = rows[key].iloc[0]
        x, y, style = column(figure.get("x")), column(figure.get("y")), column(figure.get("style"))
        reference, value = column(figure.get("reference")), column(figure.get("value"))
        facet = [column(f) for f in figure.get("facet") or []]
        used = self.covered([x, style, *facet, *fixed])
        hue = [column(h) for h in figure.get("hue") or []] or [
            d.column for d in self.others(*used) if plots._combinations(rows, [d.column]) > 1
        ]
        caption = figure.get("caption") or ""
        kind = figure["kind"]
        at = f"At {self.at(fixed)}" if fixed else ""
        curves = f"One curve per value of {self._words(hue)}" if hue else ""
        if kind == "load-curve":
            by = x if self.dim_of(x) is not None else (self.primary.column if self.primary else x)
            title = figure.get("title") or f"{names.key(y)} against {names.key(x)}"
            lines = f"line style by {names.key(style)}" if style else ""
            bound = f"{names.key(reference)} dotted" if reference else ""
            drawn = self.curve(
                title, self.sentences(caption, at, ", ".join(p for p in (curves, lines, bound) if p), self.seeds),
                x, y, hue, by, rows=rows, style=style,
                reference=reference, facet=facet, fixed=fixed, declared=True,
                logx=figure.get("logx", False), logy=figure.get("logy", False),
            )
            if not drawn:
                self.add(Planned(kind, title, f"Not drawn: every curve's points share one value of {names.key(x)}.",
                                 _fail("collapsed"), declared=True))
        elif kind == "heatmap":
            value = value or self._accepted()
            facet = facet or [d.column for d in self.others(*self.covered([x, y, *fixed]))]
            title = figure.get("title") or f"{names.key(value)} over {names.key(x)} and {names.key(y)}"
            self.add(Planned(
                "heatmap", title, self.sentences(caption, at, "Mean of each cell over seeds"),
                lambda: plots.heatmap(rows, x=x, y=y, value=value, facet=facet, names=names),
                x=x, y=y, facet=facet, fixed=fixed, pooled=self.pooled(x, y, *facet, fixed=fixed), declared=True,
                wide=True,
            ))
        else:
            self._distribution(figure.get("title") or f"Distribution of {names.key(value)}", self.sentences(caption, at),
                               value, rows, hue, fixed, declared=True)

    def _accepted(self) -> str:
        measured = self.names.measured
        column = f"groups.{measured}.accepted_load" if measured else "accepted_load"
        return column if column in self.ok.columns else "accepted_load"

    def load_curves(self) -> None:
        """Accepted against offered load: the measured group's (else all hosts'), then
        each other group's; against the swept direction where the offered load does not
        spread."""
        if not {"offered_load", "accepted_load"} <= set(self.ok.columns):
            return
        groups = sorted({plots_group(c) for c in self.ok.columns if c.startswith("groups.") and c.endswith(".accepted_load")})
        measured = self.names.measured if self.names.measured in groups else None
        order: list[str | None] = [measured] if measured else [None]
        if len(groups) > 1:
            order += [g for g in groups if g != measured]
        for group in order:
            prefix = f"groups.{group}." if group is not None else ""
            who = group if group is not None else "all hosts"
            offered, accepted = f"{prefix}offered_load", f"{prefix}accepted_load"
            if accepted not in self.ok.columns:
                continue
            primary = self.primary
            hue = self.hue_of(primary)
            by = primary.column if primary else offered
            label = f"Group {group}: accepted vs offered load" if group is not None else "Accepted vs offered load"
            lead = "The hosts of group " + group if group is not None else "Load per host as a fraction of its link capacity"
            if measured is not None and group == measured:
                lead += " (the group the scenario measures)"
            if self.curve(label, lead + self.each(hue) + self.seeds, offered, accepted, hue, by):
                continue
            if primary is not None and self._numeric(primary.column):
                whose = f"Group {group}" if group is not None else "All hosts"
                title = f"{whose}: accepted load against {self.names.key(primary.column)}"
                self.curve(
                    title,
                    f"The offered load of {who} does not change along {self.names.key(primary.column)}: "
                    "its accepted load is drawn against it instead" + self.each(hue) + self.seeds,
                    primary.column, accepted, hue, primary.column, ideal=False,
                )

    def headlines(self) -> None:
        for column, title in _headlines(self.directory).items():
            if column not in self.ok.columns:
                continue
            hue = self.hue_of(self.primary)
            by = self.primary.column if self.primary else "offered_load"
            caption = f"The summary's {column} over the measurement interval" + self.each(hue) + self.seeds
            if not self.curve(title, caption, "offered_load", column, hue, by, ideal=False) and self.primary is not None:
                if self._numeric(self.primary.column):
                    self.curve(title, caption, self.primary.column, column, hue, self.primary.column, ideal=False)

    def heatmaps(self) -> None:
        from snarl import plots

        dims, fixed, rows = list(self.dims), {}, self.ok
        if self.primary is not None and len(dims) >= 3:
            top = self._top(self.primary)
            fixed = {self.primary.column: top}
            rows = rows[rows[self.primary.column].astype(str) == str(top)]
            dims = self.others(self.primary)
        if len(dims) < 2:
            return
        x, y = dims[0].column, dims[1].column
        facets = [d.column for d in dims[2:]]
        if facets and plots._combinations(rows, facets) > plots.MAX_PANELS:
            return
        value = self._accepted()
        who = f"group {plots.group_figure(value)[0]}" if value.startswith("groups.") else "all hosts"
        where = f" at {self.at(fixed)}" if fixed else ""
        panels = f"; one panel per value of {self._words(facets)}" if facets else ""
        names = self.names
        self.add(Planned(
            "heatmap", f"Accepted load of {who} over {names.key(x)} and {names.key(y)}{where}",
            f"Mean of each cell over seeds{panels}.",
            lambda: plots.heatmap(rows, x=x, y=y, value=value, facet=facets, names=names),
            x=x, y=y, facet=facets, fixed=fixed, pooled=self.pooled(x, y, *facets, fixed=fixed),
            wide=bool(facets) or rows[x].nunique() > 6,
        ))

    def _top(self, dim: Dimension) -> Any:
        from snarl.plots import _magnitude

        return max(self.ok[dim.column].drop_duplicates(), key=_magnitude)

    def timeseries(self) -> None:
        from snarl import plots

        rows = self.ok
        if "seed" in self.keys and "seed" in rows:
            rows = rows[rows["seed"] == rows["seed"].min()]
        fixed = {}
        if self.primary is not None:
            top = self._top(self.primary)
            fixed = {self.primary.column: top}
            rows = rows[rows[self.primary.column].astype(str) == str(top)]
        hue = self.hue_of(self.primary)
        if hue:
            rows = rows.assign(_key=rows[hue].astype(str).agg("|".join, axis=1)).drop_duplicates(subset="_key")
        for _, row in rows.head(MAX_TIMESERIES).iterrows():
            point_id = str(row["point_id"])
            setting = self.names.settings({h: row[h] for h in hue}) if hue else ""
            where = "; ".join(p for p in (setting, self.at(fixed)) if p)
            title = "Throughput over time" + (f": {where}" if where else "")
            if (self.directory / "fabric" / f"{point_id}.parquet").is_file():
                self.add(Planned(
                    "fabric", title.replace("Throughput", "Throughput and flow and congestion control", 1),
                    "Accepted load per time window and group, and below the pause frames, marks, congestion "
                    f"notifications and drops per window; dashed lines mark the phases. Point {point_id}.",
                    lambda p=point_id: plots.plot_directory("fabric", self.directory, point=p),
                    x="time", hue=["group"], fixed={**fixed, **{h: row[h] for h in hue}},
                ))
                continue
            self.add(Planned(
                "timeseries", title,
                f"Accepted load per time window and group; dashed lines mark the phases. Point {point_id}.",
                lambda p=point_id: _timeseries_figure(self.directory, p),
                x="time", hue=["group"], fixed={**fixed, **{h: row[h] for h in hue}},
            ))

    def distribution(self) -> None:
        rows, fixed = self.ok, {}
        if self.primary is not None:
            top = self._top(self.primary)
            fixed = {self.primary.column: top}
            rows = rows[rows[self.primary.column].astype(str) == str(top)]
        self._distribution("Distribution of throughput over time", "", "accepted_load", rows,
                           self.hue_of(self.primary), fixed, windows=True)

    def _distribution(
        self, title: str, caption: str, value: str, rows: pd.DataFrame, hue: list[str], fixed: Mapping[str, Any],
        declared: bool = False, windows: bool = False,
    ) -> None:
        from snarl import plots

        # Too many curves for one legend: hold the first directions at one value.
        while hue and plots._combinations(rows, hue) > plots.MAX_LEGEND:
            column = hue.pop(0)
            top = max(rows[column].drop_duplicates(), key=plots._magnitude)
            fixed = {**fixed, column: top}
            rows = rows[rows[column].astype(str) == str(top)]
        names = self.names
        where = f" At {self.at(fixed)}." if fixed else ""
        seeds = " The windows of the seeds of a setting are pooled (replicates)." if self.seeds else ""
        if value in self.ok.columns and not windows:
            def make() -> Figure:
                name_of = plots.hue_labeller(rows, hue, names)
                curves = {name_of(v): r[value] for v, r in rows.groupby(hue)} if hue else {None: rows[value]}
                return plots.cdf(curves, xlabel=plots.label(value, plots._unit(rows, None), names))
            text = f"{caption}{where} One value per point" + self.each(hue)
        else:
            def make() -> Figure:
                return plots.window_cdf(self.directory, rows, value, hue, unit=plots._unit(rows, None), names=names)
            text = f"{caption}{where} Accepted load of all hosts per measured time window" + self.each(hue) + seeds
        self.add(Planned(
            "cdf", title, text.strip(), make, x=value, hue=list(hue), fixed=dict(fixed),
            pooled=self.pooled(*hue, fixed=fixed), declared=declared,
        ))


def plots_group(column: str) -> str:
    from snarl import plots

    return str(plots.group_figure(column)[0])


def _fail(message: str) -> Callable[[], Figure]:
    def make() -> Figure:
        from snarl.plots import PlotError

        raise PlotError(message)

    return make


def plan_figures(directory: str | os.PathLike[str]) -> list[Planned]:
    """The figures the report of a sweep directory draws, chosen from what it swept:
    first those its sweep file declares (``[[figures]]``), then the accepted load
    against the offered load of the group the scenario measures (``measured = true``;
    else of all hosts) and of each other group, the headline figures of the summary's
    sections, a heatmap over two other directions, a few points' throughput over time
    and the distribution of the throughput per window. A curve whose points would all
    share one x value is drawn against the swept direction instead, or not at all; no
    figure mixes the values of a swept key (but seeds, which are replicates): each gets
    a curve, a panel, or is held at one value, which the caption says; a legend of more
    than :data:`snarl.plots.MAX_LEGEND` entries becomes panels."""
    from snarl import plots

    directory = Path(directory)
    points = plots.load_points(directory)
    info = plots._sweep_info(directory)
    keys = [k for k in info.get("keys", []) if k in points.columns]
    return _Planner(directory, points, keys).plan()


def _figures(directory: Path, points: pd.DataFrame, keys: list[str]) -> list[tuple[str, str, str]]:
    """``(title, caption, data URI)`` of each figure of the sweep."""
    return [(title, caption, uri) for title, caption, uri, _ in _drawn(directory, points, keys)]


def _drawn(directory: Path, points: pd.DataFrame, keys: list[str]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(title, caption, data URI, metadata)`` of each figure of the sweep; the
    metadata are the plan's (kind, x, y, hue, style, facet, fixed, pooled, declared)
    and what the drawn figure shows (:func:`snarl.plots.describe`: legend entries,
    the fewest distinct x values of a panel, crowded legends)."""
    from snarl import plots

    drawn = []
    planner = _Planner(directory, points, keys)
    names = planner.names
    for planned in planner.plan():
        meta: dict[str, Any] = {
            "kind": planned.kind, "title": planned.title, "x": planned.x, "y": planned.y, "hue": planned.hue,
            "style": planned.style, "facet": planned.facet,
            "fixed": {k: names.value(k, v) for k, v in planned.fixed.items()},
            "pooled": planned.pooled, "declared": planned.declared, "wide": planned.wide,
        }
        try:
            fig = planned.make()
        except (plots.PlotError, KeyError, ValueError) as e:
            drawn.append((planned.title, f"Not drawn: {e}", "", {**meta, "drawn": False}))
            continue
        uri = _png(fig)
        # A figure grown by an outside legend, or of several panels, takes a row of its own.
        meta["wide"] = bool(planned.wide or fig.get_size_inches()[0] > 8.0)
        drawn.append((planned.title, planned.caption, uri, {**meta, "drawn": True, **plots.describe(fig)}))
    # Congestion trees, animated and as a strip, for the points that recorded them
    # ([observe.trees]).
    from snarl import trees

    ids = [str(p) for p in points.loc[points["status"] == "ok", "point_id"]] if "status" in points else []
    for figure in trees.report_figures(directory, ids[:MAX_TIMESERIES]):
        meta = {"kind": figure.kind, "title": figure.title, "drawn": bool(figure.uri), "wide": True}
        drawn.append((figure.title, figure.caption, figure.uri, meta))
    return drawn


def _headlines(directory: Path) -> dict[str, str]:
    """The headline figures the points' summaries have, ``section.key`` -> title, in
    the order the points give them."""
    from snarl.sweep import read_records

    headlines: dict[str, str] = {}
    for record in read_records(directory).values():
        for column, title in (record.get("headlines") or {}).items():
            headlines.setdefault(column, title)
    return headlines


def _timeseries_figure(directory: Path, point_id: str) -> Figure:
    from snarl import plots

    series, phases, unit, _ = plots.point_timeseries(directory, point_id)
    return plots.throughput_over_time(series, phases=phases, unit=unit)


def _cell(value: Any) -> tuple[str, bool]:
    """A table cell's text and whether it is text (left-aligned)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "", False
    if isinstance(value, bool):
        return str(value).lower(), True
    if isinstance(value, float):
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3e}", False
        return f"{value:,.4f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.1f}", False
    if isinstance(value, int):
        return f"{value:,}", False
    return str(value), True


def _swept_text(names: Any, points: pd.DataFrame, key: str) -> str:
    """``hotspot cap (<code>traffic.groups.0.cap</code>, 2 values)``."""
    words = names.key(key)
    count = points[key].astype(str).nunique()
    if words == key:
        return f"<code>{html.escape(key)}</code> ({count} values)"
    return f"{html.escape(words)} (<code>{html.escape(key)}</code>, {count} values)"


def _settings(names: Any, values: Mapping[str, Any]) -> str:
    return names.settings(values) if values else "the base"


def _points_table(points: pd.DataFrame, keys: list[str], names: Any = None) -> str:
    """The table of points: id, swept keys, status, the main figures per group, error.
    A swept key is headed by its name (its key in the tooltip), and its values called as
    the sweep file's ``[labels]`` call them."""
    from snarl import plots

    columns = ["point_id", *keys, "status", "offered_load", "accepted_load", "latency.mean", "latency.p99"]
    groups = sorted(
        {plots.group_figure(c)[0] for c in points.columns if c.startswith("groups.") and c.endswith(".accepted_load")}
    )
    if len(groups) > 1:
        columns += [f"groups.{g}.accepted_load" for g in groups]
    columns += [c for c in ("recovery.drop_depth", "recovery.time_to_recover") if c in points.columns]
    columns += ["error"]
    columns = [c for c in dict.fromkeys(columns) if c in points.columns]
    def heading(column: str) -> str:
        kind = "text" if column in ("point_id", "status", "error") else ""
        words = names.key(column) if names is not None and column in keys else column
        tip = f' title="{html.escape(column)}"' if words != column else ""
        return f'<th class="{kind}"{tip}>{html.escape(words)}</th>'

    head = "".join(heading(c) for c in columns)
    body = []
    for row in points[columns].itertuples(index=False):
        cells = []
        for column, value in zip(columns, row):
            text, is_text = _cell(value)
            if names is not None and column in keys and column != "description":
                alias = names.alias(column, value)
                if alias is not None:
                    text, is_text = alias, True
                elif isinstance(value, float) and math.isfinite(value):
                    text = plots._value_text(value)
            cells.append(f'<td class="{"text" if is_text else ""}">{html.escape(text)}</td>')
        failed = "status" in columns and row[columns.index("status")] != "ok"
        row_class = ' class="failed"' if failed else ""
        body.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _tables_table(directory: Path, points: pd.DataFrame) -> str:
    """One row per table the points wrote (every ``<table>/`` folder of the sweep): how
    many points have it, its columns and rows (from the first point's file)."""
    import pyarrow.parquet as pq

    from snarl.sweep import table_folders

    ids = [str(p) for p in points["point_id"]] if "point_id" in points else []
    rows = []
    for name in table_folders(directory):
        files = [directory / name / f"{i}.parquet" for i in ids]
        files = [f for f in files if f.is_file()]
        if not files:
            continue
        try:
            meta = pq.read_metadata(files[0])
            columns = ", ".join(meta.schema.to_arrow_schema().names)
            shape = f"{meta.num_rows:,}"
        except Exception as e:  # noqa: BLE001 - a damaged file is shown, not fatal
            columns, shape = f"cannot read {files[0].name}: {e}", "-"
        rows.append(
            f'<tr><td class="text"><code>{html.escape(name)}/&lt;point_id&gt;.parquet</code></td>'
            f"<td>{len(files):,}</td><td>{html.escape(shape)}</td>"
            f'<td class="text">{html.escape(columns)}</td></tr>'
        )
    if not rows:
        return "<p>No point wrote a table.</p>"
    head = '<th class="text">table</th><th>points</th><th>rows (first point)</th><th class="text">columns</th>'
    return (
        f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


def _versions_table(versions: dict[str, str]) -> str:
    rows = "".join(
        f'<tr><td class="text">{html.escape(k)}</td><td class="text">{html.escape(str(v))}</td></tr>'
        for k, v in versions.items()
    )
    return f'<table style="width:auto"><thead><tr><th class="text">software</th><th class="text">version</th></tr></thead><tbody>{rows}</tbody></table>'


def _section(directory: Path, anchor: str, nested: bool) -> tuple[str, str, list[str]]:
    """``(name, status, HTML parts)`` of one sweep; headings one level lower when the
    page holds several sweeps."""
    from snarl import plots

    try:
        points = plots.load_points(directory)
    except plots.PlotError as e:
        raise ReportError(str(e)) from None
    try:
        info = plots._sweep_info(directory)
    except plots.PlotError as e:
        raise ReportError(str(e)) from None
    keys = [k for k in info.get("keys", []) if k in points.columns]
    name = info.get("name") or directory.name
    total = len(info.get("points", [])) or len(points)
    ok = int((points["status"] == "ok").sum()) if "status" in points else len(points)
    failed = len(points) - ok
    missing = total - len(points)
    h1, h2 = ("h2", "h3") if nested else ("h1", "h2")

    names = plots.names_of(directory)
    figure_html = []
    for title, caption, uri, meta in _drawn(directory, points, keys):
        image = f'<img src="{uri}" alt="{html.escape(title)}">' if uri else ""
        wide = ' class="wide"' if meta.get("wide") else ""
        data = html.escape(json.dumps(meta, default=str), quote=True)
        figure_html.append(
            f'<figure{wide} data-figure="{data}">{image}<figcaption><b>{html.escape(title)}.</b> '
            f"{html.escape(caption)}</figcaption></figure>"
        )

    status = f"{len(points)} of {total} points computed, {ok} ok, {failed} failed"
    if missing:
        status += f", {missing} not yet run (resume with the same snarl sweep command)"
    spec_text = info.get("sweep_toml") or json.dumps(info.get("spec", {}), indent=2)
    base_text = info.get("base_toml") or ""
    recorded = info.get("versions") or {}
    description = (info.get("spec") or {}).get("description")

    parts = [
        f'<section id="{anchor}">',
        f"<{h1}>{html.escape(name)}</{h1}>",
        f'<p class="meta">{html.escape(status)} · ran on {html.escape(str(info.get("runner") or "-"))}'
        f" · results in <code>{html.escape(str(directory))}</code></p>",
    ]
    if description:
        parts.append(f"<p>{html.escape(description)}</p>")
    if keys:
        swept = ", ".join(_swept_text(names, points, k) for k in keys)
        parts.append(f"<p>Swept: {swept}.</p>")
    same = [p for p in info.get("points", []) if p.get("aliases")]
    if same:
        count = sum(len(p["aliases"]) for p in same)
        listed = "; ".join(
            f"{html.escape(_settings(names, alias))} = {html.escape(_settings(names, p.get('values') or {}))}"
            for p in same for alias in p["aliases"]
        )
        parts.append(
            f"<p>{count} setting{'s' if count != 1 else ''} of the sweep resolve{'s' if count == 1 else ''} to the "
            f"config of another point, run and listed once: {listed}.</p>"
        )
    parts += [
        f"<{h2}>Figures</{h2}>",
        f'<div class="figures">{"".join(figure_html) or "<p>No successful point to plot.</p>"}</div>',
        f"<{h2}>Points</{h2}>",
        "<p>One row per point; loads are per host, as fractions of the link capacity; "
        f"latencies in {html.escape(_time_unit(points))}. The full table is <code>points.parquet</code>.</p>",
        _points_table(points, keys, names),
        f"<{h2}>Tables</{h2}>",
        "<p>The tables of each point's run, one Parquet file per point.</p>",
        _tables_table(directory, points),
        f"<{h2}>Sweep</{h2}>",
        f"<pre>{html.escape(spec_text)}</pre>",
        f"<details><summary>Base experiment ({html.escape(str((info.get('spec') or {}).get('base', '')))})</summary>"
        f"<pre>{html.escape(base_text)}</pre></details>",
        f"<{h2}>Versions</{h2}>",
        "<p>Recorded when the sweep ran:</p>",
        _versions_table(recorded),
        "</section>",
    ]
    return name, status, parts


def render(*directories: str | os.PathLike[str]) -> str:
    """The HTML page of the sweeps in ``directories`` (one or more)."""
    from snarl.sweep import versions as current_versions

    if not directories:
        raise ReportError("no sweep directory given")
    nested = len(directories) > 1
    sections = [_section(Path(d), f"sweep-{i + 1}", nested) for i, d in enumerate(directories)]
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    now = current_versions()
    if nested:
        title = "snarl sweeps: " + "; ".join(name for name, _, _ in sections)
        contents = "".join(
            f'<li><a href="#sweep-{i + 1}">{html.escape(name)}</a> — {html.escape(status)}</li>'
            for i, (name, status, _) in enumerate(sections)
        )
        head = [
            f"<h1>{html.escape(title)}</h1>",
            f'<p class="meta">snarl {html.escape(now["snarl"])} sweep report · written {written}</p>',
            f"<ul>{contents}</ul>",
        ]
    else:
        title = sections[0][0]
        head = [f'<p class="meta">snarl {html.escape(now["snarl"])} sweep report · written {written}</p>']
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)} — snarl sweep report</title>",
        f"<style>{STYLE}</style></head>",
        "<body>",
        *(head if nested else []),
    ]
    for index, (_, _, section) in enumerate(sections):
        if not nested:
            section = [*section[:2], *head, *section[2:]]
        parts += section
    parts += [f"<script>{SCRIPT}</script>", "</body></html>", ""]
    return "\n".join(parts)


def _time_unit(points: pd.DataFrame) -> str:
    if "time_unit" in points and points["time_unit"].notna().any():
        return str(points["time_unit"].dropna().iloc[0])
    return "ns"


def write_report(directory: str | os.PathLike[str] | list[str | os.PathLike[str]], output: str | os.PathLike[str]) -> Path:
    """Writes the report of the sweep in ``directory`` (or of each of a list of sweep
    directories, one section each) to ``output``, atomically."""
    from snarl.sweep import _write_atomic

    directories = directory if isinstance(directory, (list, tuple)) else [directory]
    page = render(*directories)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(output, page.encode("utf-8"))
    return output

