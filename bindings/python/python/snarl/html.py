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
import tempfile
import time
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


def _figures(directory: Path, points: pd.DataFrame, keys: list[str]) -> list[tuple[str, str, str]]:
    """``(title, caption, data URI)`` of each figure of the sweep."""
    from snarl import plots

    figures: list[tuple[str, str, str]] = []
    ok = points[points["status"] == "ok"] if "status" in points else points
    if ok.empty:
        return figures
    hue = plots.default_hue(keys, ok)
    each = f", one curve per value of {', '.join(hue)}." if hue else "."
    seeds = f" Mean ± standard deviation over {ok['seed'].nunique()} seeds." if "seed" in keys else ""

    def add(title: str, caption: str, make: Any) -> None:
        try:
            fig = make()
        except (plots.PlotError, KeyError, ValueError) as e:
            figures.append((title, f"Not drawn: {e}", ""))
            return
        figures.append((title, caption, _png(fig)))

    if {"offered_load", "accepted_load"} <= set(ok.columns):
        add(
            "Accepted vs offered load",
            "Load per host as a fraction of its link capacity" + each + seeds,
            lambda: plots.load_curve(ok, hue=hue),
        )
        group_columns = sorted(c for c in ok.columns if c.startswith("groups.") and c.endswith(".accepted_load"))
        if len(group_columns) > 1 and hue:
            for column in group_columns:
                group = plots.group_figure(column)[0]
                offered = f"groups.{group}.offered_load"
                if offered in ok.columns:
                    add(
                        f"Group {group}: accepted vs offered load",
                        f"The hosts of group {group}" + each + seeds,
                        lambda c=column, o=offered: plots.load_curve(ok, x=o, y=c, hue=hue),
                    )
    # The headline figure of each section of the summary the points have (the sections
    # name them in the records), against the offered load.
    for column, title in _headlines(directory).items():
        if column in ok.columns and "offered_load" in ok.columns:
            add(
                title,
                f"The summary's {column} over the measurement interval" + each + seeds,
                lambda c=column: plots.load_curve(ok, x="offered_load", y=c, hue=hue, ideal=False),
            )
    varying = [k for k in keys if k != "seed" and k in ok.columns and ok[k].nunique() > 1]
    cells, where = ok, ""
    if "traffic.load" in varying and len(varying) >= 3:
        # The load has its curves: the heatmaps show the other keys at the highest load.
        top = ok["traffic.load"].max()
        cells, where = ok[ok["traffic.load"] == top], f" at traffic.load = {plots._value_text(top)}"
        varying = [k for k in varying if k != "traffic.load"]
    if len(varying) >= 2:
        values = [c for c in cells.columns if c.startswith("groups.") and c.endswith(".accepted_load")]
        if len(values) < 2:
            values = ["accepted_load"]
        # The other keys get a panel per value: never averaged together in a cell.
        facets = varying[2:]
        panels = f"; one panel per value of {', '.join(facets)}" if facets else ""
        for value in values:
            who = f"group {plots.group_figure(value)[0]}" if value.startswith("groups.") else "all hosts"
            add(
                f"Accepted load of {who} over {varying[0]} and {varying[1]}{where}",
                f"Mean of each cell over seeds{panels}.",
                lambda v=value: plots.heatmap(cells, x=varying[0], y=varying[1], value=v, facet=facets),
            )
    for point_id in _timeseries_points(ok, keys, hue):
        if (directory / "fabric" / f"{point_id}.parquet").is_file():
            add(
                "Throughput and flow and congestion control over time",
                f"Point {point_id}: accepted load per time window and group, and below the pause frames, "
                "marks, congestion notifications and drops per window; dashed lines mark the phases.",
                lambda p=point_id: plots.plot_directory("fabric", directory, point=p),
            )
            continue
        add(
            "Throughput over time",
            f"Point {point_id}: accepted load per time window and group; dashed lines mark the phases.",
            lambda p=point_id: _timeseries_figure(directory, p),
        )
    add(
        "Distribution of throughput over time",
        "Accepted load of all hosts per measured time window, pooled over the points"
        + (f" of each value of {', '.join(hue)}." if hue else "."),
        lambda: plots.window_cdf(directory, ok, "accepted_load", hue),
    )
    return figures


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

    series, phases, unit, title = plots.point_timeseries(directory, point_id)
    return plots.throughput_over_time(series, phases=phases, unit=unit, title=title)


def _timeseries_points(ok: pd.DataFrame, keys: list[str], hue: list[str]) -> list[str]:
    """A few points worth a throughput-over-time figure: at the highest swept load and
    the first seed, one per value of ``hue``."""
    rows = ok
    if "seed" in keys and "seed" in rows:
        rows = rows[rows["seed"] == rows["seed"].min()]
    if "traffic.load" in keys and "traffic.load" in rows:
        rows = rows[rows["traffic.load"] == rows["traffic.load"].max()]
    if hue:
        rows = rows.drop_duplicates(subset=hue)
    return [str(p) for p in rows["point_id"].head(MAX_TIMESERIES)]


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


def _points_table(points: pd.DataFrame, keys: list[str]) -> str:
    """The table of points: id, swept keys, status, the main figures per group, error."""
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
    head = "".join(
        f'<th class="{"text" if c in ("point_id", "status", "error") else ""}">{html.escape(c)}</th>' for c in columns
    )
    body = []
    for row in points[columns].itertuples(index=False):
        cells = []
        for value in row:
            text, is_text = _cell(value)
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

    figure_html = []
    for title, caption, uri in _figures(directory, points, keys):
        image = f'<img src="{uri}" alt="{html.escape(title)}">' if uri else ""
        figure_html.append(
            f"<figure>{image}<figcaption><b>{html.escape(title)}.</b> {html.escape(caption)}</figcaption></figure>"
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
        swept = ", ".join(f"<code>{html.escape(k)}</code> ({points[k].nunique()} values)" for k in keys)
        parts.append(f"<p>Swept: {swept}.</p>")
    parts += [
        f"<{h2}>Figures</{h2}>",
        f'<div class="figures">{"".join(figure_html) or "<p>No successful point to plot.</p>"}</div>',
        f"<{h2}>Points</{h2}>",
        "<p>One row per point; loads are per host, as fractions of the link capacity; "
        f"latencies in {html.escape(_time_unit(points))}. The full table is <code>points.parquet</code>.</p>",
        _points_table(points, keys),
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
    from snarl.sweep import umask

    directories = directory if isinstance(directory, (list, tuple)) else [directory]
    page = render(*directories)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(page)
        os.chmod(temp, 0o666 & ~umask())
        os.replace(temp, output)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return output

