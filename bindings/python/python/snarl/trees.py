"""Congestion trees drawn: ``snarl plot tree DIR``.

A run with ``[observe.trees]`` writes three tables (``docs/config.md``): ``trees`` (a row
per window and root), ``tree_ports`` (a row per window, root and port of its tree, with
the port's role: ``root``, ``egress``, a blocked egress, ``ingress``, the far end of a
blocked link) and ``topology`` (a row per wired switch port: where the switch is drawn,
its level or group, and what the port leads to). This module draws the fabric from them,
computing nothing of the wiring itself:

- switches by level for trees (fat-trees, k-ary n-trees, spine-leaf: leaves at the
  bottom), by group for Dragonfly, Megafly and HyperX (the groups round a circle, each
  group's switches round its place), round a circle otherwise; hosts only on request
  (``hosts=True``): a 648-host fat-tree is drawn as its 54 switches;
- links grey when free, in the colour of their tree when blocked in one (a colour per
  tree, half transparent where trees overlap); a red dot at each congested root port, a
  dot of the tree's colour at each blocked egress; switches filled with the colour of a
  tree they are in; under each switch a triangle sized by the hosts blocked behind it
  (or, with the hosts drawn, their links in the tree's colour);
- the hosts of named groups marked, a row of marks per group, labelled by its name (by
  default the groups named hotspot(s), victim(s) or V, and the shared hotspots of the
  ``hotspots`` table as they move): under their switch, or on the host when hosts are
  drawn.

One frame per window of the trees: a sample each, ``period`` long (the summary's
``trees.period``; by default the time series' window). :func:`animate` writes them as
an animated GIF (matplotlib's ``PillowWriter``), :func:`strip` draws them as small
multiples (PNG, SVG or PDF), :func:`frame` draws one (``--at TIME``); :func:`write` does
what ``snarl plot tree`` does. :func:`page_figures` gives the same animation and strip,
as data: URIs, to the HTML pages (``snarl report`` of a sweep or of a run,
``snarl compare``). The figures are built without pyplot (see :mod:`snarl.plots`).
"""

from __future__ import annotations

import base64
import math
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

STRIP_PANELS = 24
"""Windows a strip shows at most (evenly spread over the run when it has more)."""
REPORT_FRAMES = 60
"""Frames of the animation the HTML report embeds, at most (evenly spread)."""
REPORT_DPI = (60, 80)
"""Pixels per inch of the animation and of the strip an HTML page embeds: enough to
read them, and a page of several runs stays a few megabytes."""
FPS = 4
"""Frames per second of the animation."""
MARKED = re.compile(r"^(hot[-_ ]?spots?|victims?|v)$", re.IGNORECASE)
"""Traffic groups whose hosts are marked by default."""

FREE = "#c8ccd2"
ROOT = "#c62828"
PALETTE = ("#ef6c00", "#6a1b9a", "#00838f", "#2e7d32", "#ad1457", "#1565c0", "#827717", "#4e342e", "#00695c", "#5d4037")
"""Colours of the trees, in the order their roots first appear."""
HOTSPOT = "#d50000"
HOSTS = "#455a64"
VICTIM = "#1e88e5"


class TreeError(ValueError):
    """A directory without the tables of tracked trees."""


@dataclass
class Trees:
    """What the drawings read of one run: its tables, windows and marked hosts."""

    topology: pd.DataFrame
    trees: pd.DataFrame
    ports: pd.DataFrame
    windows: list[float]
    """Start of each window of the trees (a sample's period each) over the run, in ``unit``."""
    width: float
    unit: str
    title: str
    marks: dict[str, set[int]] = field(default_factory=dict)
    """Marked hosts by label (the whole run)."""
    moving: pd.DataFrame | None = None
    """Shared hotspots: ``host``, ``start``, ``end`` (marked while they are hotspots)."""

    def window_at(self, time: float) -> int:
        """The window holding ``time`` (in ``unit``)."""
        if not self.windows:
            raise TreeError("the run has no window")
        index = int((time - self.windows[0]) // self.width) if self.width > 0 else 0
        if not 0 <= index < len(self.windows):
            end = self.windows[-1] + self.width
            raise TreeError(f"--at {time:g} {self.unit}: the run's windows span 0 to {end:g} {self.unit}")
        return index


def load(directory: str | Path, point: str | None = None, mark: Sequence[str] | None = None) -> Trees:
    """The tables of the trees of a run directory (``snarl run --out``) or of one point of
    a sweep directory (by default its first successful one). ``mark``: the traffic groups
    whose hosts are marked (default: the shared hotspots, and the groups named hotspot(s),
    victim(s) or V)."""
    from snarl import plots

    directory = Path(directory)
    if not directory.is_dir():
        raise TreeError(f"{directory}: no such directory")
    try:
        topology = plots.point_table(directory, "topology", point)
        trees = plots.point_table(directory, "trees", point)
        ports = plots.point_table(directory, "tree_ports", point)
    except plots.PlotError as e:
        raise TreeError(f"{e}; runs with [observe.trees] record trees (--set observe.trees={{}})") from None
    summary, title = plots.point_summary(directory, point)
    unit = summary.get("time_unit", "ns")
    # The trees' windows: a sample's period each, over the run.
    width = float((summary.get("trees") or {}).get("period") or 0.0)
    end = float(summary.get("sim_time") or 0.0)
    if width <= 0:
        raise TreeError(f"{directory}: the summary has no trees section; runs with [observe.trees] have one")
    windows = [k * width for k in range(max(1, math.ceil(end / width - 1e-9)))]
    moving = None
    try:
        moving = plots.point_table(directory, "hotspots", point)
    except plots.PlotError:
        pass
    hosts = topology[topology["peer_kind"] == "host"]
    groups = sorted(set(hosts["host_group"])) if "host_group" in hosts else []
    if mark is None:
        chosen = [g for g in groups if MARKED.match(str(g))]
    else:
        unknown = [g for g in mark if g not in groups]
        if unknown:
            raise TreeError(f"--mark {', '.join(unknown)}: no such group (the run's: {', '.join(groups) or 'none'})")
        chosen = list(mark)
        moving = None
    marks = {g: set(int(h) for h in hosts.loc[hosts["host_group"] == g, "peer"]) for g in chosen}
    return Trees(topology, trees, ports, windows, width, unit, title, marks, moving)


# -- layout -------------------------------------------------------------------------


@dataclass
class Layout:
    """Where each switch (and host) is drawn, and the links between them."""

    switches: dict[int, tuple[float, float]]
    hosts: dict[int, tuple[float, float]]
    """Where each host would be drawn (beside its switch), drawn or not."""
    links: list[tuple[int, int, int, int]]
    """(switch, port, peer switch, peer port), each switch-to-switch link once."""
    size: float
    """A length of the drawing's scale (for markers' offsets)."""
    rows: bool
    """Switches are in rows by level (trees)."""


def layout(topology: pd.DataFrame) -> Layout:
    """The drawing's places from the ``topology`` table: rows by level for trees (leaves
    at the bottom), groups round a circle for fabrics with groups, a circle otherwise."""
    per_switch = topology.drop_duplicates("switch").sort_values("switch")
    ids = [int(s) for s in per_switch["switch"]]
    levels = dict(zip(ids, (int(v) for v in per_switch["level"])))
    places: dict[int, tuple[float, float]] = {}
    grouped = "group" in topology.columns
    rows = not grouped and any(levels.values())
    if rows:
        for level in sorted(set(levels.values())):
            members = [s for s in ids if levels[s] == level]
            for i, s in enumerate(members):
                places[s] = ((i + 0.5) / len(members), float(level))
        size = 1.0 / max(len([s for s in ids if levels[s] == 1]), 1)
    elif grouped:
        group_of = dict(zip(ids, (int(g) for g in per_switch["group"])))
        groups = sorted(set(group_of.values()))
        radius = 1.0
        inner = min(0.35, math.pi / max(len(groups), 1) * 0.8)
        for gi, g in enumerate(groups):
            angle = 2 * math.pi * gi / len(groups)
            cx, cy = radius * math.cos(angle), radius * math.sin(angle)
            members = sorted(s for s in ids if group_of[s] == g)
            top = max(levels[s] for s in members)
            for i, s in enumerate(members):
                # Within a group, higher levels (a megafly's spines) farther out.
                r = inner * (0.55 + 0.45 * (levels[s] - 1) / max(top - 1, 1)) if top > 1 else inner
                a = angle + math.pi + 2 * math.pi * (i + 0.5) / len(members)
                places[s] = (cx + r * math.cos(a), cy + r * math.sin(a))
        size = inner / 2
    else:
        for i, s in enumerate(ids):
            a = 2 * math.pi * i / max(len(ids), 1)
            places[s] = (math.cos(a), math.sin(a))
        size = 2 * math.pi / max(len(ids), 1) / 2
    hosts: dict[int, tuple[float, float]] = {}
    host_rows = topology[topology["peer_kind"] == "host"].sort_values(["switch", "port"])
    if rows:
        count = max(len(host_rows), 1)
        for i, h in enumerate(int(h) for h in host_rows["peer"]):
            hosts[h] = ((i + 0.5) / count, 0.0)
    else:
        by_switch = host_rows.groupby("switch")["peer"].apply(list)
        for s, members in by_switch.items():
            x, y = places[int(s)]
            norm = math.hypot(x, y) or 1.0
            for i, h in enumerate(members):
                spread = (i - (len(members) - 1) / 2) * 0.25 * size
                ox, oy = x / norm, y / norm
                hosts[int(h)] = (x + 1.2 * size * ox - spread * oy, y + 1.2 * size * oy + spread * ox)
    links = []
    wires = topology[topology["peer_kind"] == "switch"]
    for s, p, q, qp in zip(wires["switch"], wires["port"], wires["peer"], wires["peer_port"]):
        if (int(s), int(p)) < (int(q), int(qp)):
            links.append((int(s), int(p), int(q), int(qp)))
    return Layout(places, hosts, links, size, rows)


# -- drawing ------------------------------------------------------------------------


class _Canvas:
    """One drawing of the fabric in an Axes: the free fabric once, each window's trees
    over it (replaced frame by frame)."""

    def __init__(self, ax: Axes, data: Trees, hosts: bool, legend: bool = True, small: bool = False) -> None:
        from matplotlib.collections import LineCollection

        self.ax, self.data, self.show_hosts, self.small = ax, data, hosts, small
        self.layout = layout(data.topology)
        lay = self.layout
        topo = data.topology
        self.peer = {
            (int(s), int(p)): (str(k), int(q))
            for s, p, k, q in zip(topo["switch"], topo["port"], topo["peer_kind"], topo["peer"])
        }
        self.host_switch = {int(q): int(s) for s, k, q in zip(topo["switch"], topo["peer_kind"], topo["peer"]) if k == "host"}
        # Roots get their colours in the order they first appear in the run.
        self.colour: dict[tuple[int, int, int], str] = {}
        if not data.trees.empty:
            ordered = data.trees.sort_values(["window", "root_switch", "root_port", "root_vc"])
            for key in zip(ordered["root_switch"], ordered["root_port"], ordered["root_vc"]):
                key = tuple(int(k) for k in key)
                self.colour.setdefault(key, PALETTE[len(self.colour) % len(PALETTE)])
        width = 0.4 if small else 0.6
        segments = [(lay.switches[s], lay.switches[q]) for s, _, q, _ in lay.links]
        ax.add_collection(LineCollection(segments, colors=FREE, linewidths=width, zorder=1))
        if hosts:
            host_lines = [(lay.switches[self.host_switch[h]], xy) for h, xy in lay.hosts.items()]
            ax.add_collection(LineCollection(host_lines, colors=FREE, linewidths=width * 0.6, zorder=1))
            xs, ys = zip(*lay.hosts.values()) if lay.hosts else ((), ())
            ax.scatter(xs, ys, s=3 if small else 5, color="#9aa0a8", zorder=2, linewidths=0)
        self.switch_size = self._switch_size()
        xs, ys = zip(*lay.switches.values())
        ax.scatter(xs, ys, s=self.switch_size, marker="s", color="#eceff1", edgecolors="#78828c", linewidths=0.5, zorder=3)
        self._limits()
        ax.set_aspect("equal" if not lay.rows else "auto")
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(False)
        self.overlay: list[Any] = []
        if legend:
            self._legend()

    def _switch_size(self) -> float:
        count = len(self.layout.switches)
        base = 60.0 if count <= 64 else 30.0 if count <= 300 else 12.0
        return base / (3.0 if self.small else 1.0)

    def _limits(self) -> None:
        places = list(self.layout.switches.values())
        if self.show_hosts:
            places += list(self.layout.hosts.values())
        else:
            # Room for the marks beside the switches.
            rows = len(self.data.marks) + (self.data.moving is not None)
            places += [self._below(s, 2.0 + 0.3 * rows) for s in self.layout.switches]
        xs, ys = [p[0] for p in places], [p[1] for p in places]
        pad = 0.04 * max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
        self.ax.set_xlim(min(xs) - pad, max(xs) + pad)
        self.ax.set_ylim(min(ys) - pad, max(ys) + pad)

    def _legend(self) -> None:
        from matplotlib.lines import Line2D

        handles = [
            Line2D([], [], color=FREE, lw=1.5, label="free link"),
            Line2D([], [], color=PALETTE[0], lw=2.5, label="blocked in a tree\n(a colour per tree)"),
            Line2D([], [], color=PALETTE[0], marker="o", lw=0, markersize=4, label="blocked port"),
            Line2D([], [], color=ROOT, marker="o", lw=0, markersize=7, label="congested root port"),
            Line2D([], [], color=HOSTS, marker="v", lw=0, markersize=7, label="hosts blocked"),
        ]
        for label, colour, marker, size in self._mark_styles():
            handles.append(Line2D([], [], color=colour, marker=marker, lw=0, markersize=math.sqrt(size) * 1.3, label=label))
        self.ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize="small")

    @staticmethod
    def _is_victims(group: str) -> bool:
        return bool(re.match(r"^(victims?|v)$", group, re.IGNORECASE))

    def _below(self, switch: int, scale: float = 1.0) -> tuple[float, float]:
        """Just beside a switch, away from the fabric's core (below a tree's leaves)."""
        x, y = self.layout.switches[switch]
        if self.layout.rows:
            return x, y - 0.22 * scale
        norm = math.hypot(x, y) or 1.0
        d = 0.8 * self.layout.size * scale
        return x + d * x / norm, y + d * y / norm

    def _port_at(self, switch: int, port: int) -> tuple[float, float]:
        """Where port ``port`` of ``switch`` is drawn: on its link, near the switch."""
        x, y = self.layout.switches[switch]
        kind, far = self.peer.get((switch, port), ("", -1))
        if kind == "switch":
            fx, fy = self.layout.switches[far]
        elif kind == "host" and self.show_hosts:
            fx, fy = self.layout.hosts[far]
        else:
            fx, fy = self._below(switch, 2.0)
        t = 0.12 if kind == "switch" else 0.35
        return x + t * (fx - x), y + t * (fy - y)

    def draw(self, window: int) -> int:
        """Draws the trees of window ``window`` over the free fabric (replacing those of
        the window drawn before); returns how many there are."""
        from matplotlib.collections import LineCollection

        for artist in self.overlay:
            artist.remove()
        self.overlay = []
        ax, lay, data = self.ax, self.layout, self.data
        rows = data.ports[data.ports["window"] == window] if not data.ports.empty else data.ports
        lines, line_colours = [], []
        dots: dict[str, list[Any]] = {"x": [], "y": [], "c": []}
        root_places: list[tuple[float, float]] = []
        fill: dict[int, str] = {}
        blocked_hosts: dict[int, tuple[int, str]] = {}
        roots = set()
        small = 0.5 if self.small else 1.0
        for s, p, role, rs, rp, rv in zip(
            rows["switch"], rows["port"], rows["role"], rows["root_switch"], rows["root_port"], rows["root_vc"]
        ):
            s, p, key = int(s), int(p), (int(rs), int(rp), int(rv))
            colour = self.colour.get(key, PALETTE[0])
            roots.add(key)
            fill.setdefault(s, colour)
            kind, far = self.peer.get((s, p), ("", -1))
            if "egress" in role and kind == "switch":
                lines.append((lay.switches[s], lay.switches[far]))
                line_colours.append(colour)
            if "ingress" in role and kind == "host":
                count, _ = blocked_hosts.get(s, (0, colour))
                blocked_hosts[s] = (count + 1, colour)
                if self.show_hosts:
                    lines.append((lay.switches[s], lay.hosts[far]))
                    line_colours.append(colour)
            # Ports: roots, and blocked egresses (the ingress at a blocked link's far end
            # is that link's end; a host's, the triangle under its switch).
            if role.startswith("root"):
                root_places.append(self._port_at(s, p))
            elif "egress" in role:
                x, y = self._port_at(s, p)
                dots["x"].append(x)
                dots["y"].append(y)
                dots["c"].append(colour)
        if lines:
            self.overlay.append(
                ax.add_collection(
                    LineCollection(lines, colors=line_colours, linewidths=1.6 * small + 0.3, alpha=0.75, zorder=4)
                )
            )
        if fill:
            switches = sorted(fill)
            xs, ys = zip(*(lay.switches[s] for s in switches))
            self.overlay.append(
                ax.scatter(xs, ys, s=self.switch_size, marker="s", color=[fill[s] for s in switches], alpha=0.85,
                           edgecolors="#37474f", linewidths=0.5, zorder=5)
            )
        if dots["x"]:
            self.overlay.append(ax.scatter(dots["x"], dots["y"], s=7 * small, c=dots["c"], linewidths=0, zorder=6))
        if root_places:
            xs, ys = zip(*root_places)
            self.overlay.append(
                ax.scatter(xs, ys, s=34 * small, color=ROOT, edgecolors="white", linewidths=0.6, zorder=8)
            )
        if blocked_hosts and not self.show_hosts:
            switches = sorted(blocked_hosts)
            places = [self._below(s) for s in switches]
            top = max(c for c, _ in blocked_hosts.values())
            self.overlay.append(
                ax.scatter([p[0] for p in places], [p[1] for p in places], marker="v",
                           s=[(8 + 50 * blocked_hosts[s][0] / top) * small for s in switches],
                           color=HOSTS, zorder=6, linewidths=0)
            )
        self._marks(window)
        return len(roots)

    def _mark_styles(self) -> list[tuple[str, str, str, float]]:
        """(label, colour, marker, size) of each set of marked hosts, in drawing order: the
        marked groups by name, then the shared hotspots."""
        styles = []
        others = iter([("#2e7d32", "^", 14), ("#6a1b9a", "p", 14), ("#ef6c00", "s", 10), ("#00838f", "h", 14)])
        for group in self.data.marks:
            if self._is_victims(group):
                styles.append((group, VICTIM, "d", 10.0))
            elif re.match(r"^hot", group, re.IGNORECASE):
                styles.append((group, HOTSPOT, "*", 45.0))
            else:
                colour, marker, size = next(others, ("#546e7a", "o", 10))
                styles.append((group, colour, marker, float(size)))
        if self.data.moving is not None:
            styles.append(("shared hotspots", HOTSPOT, "*", 45.0))
        return styles

    def _marks(self, window: int) -> None:
        data = self.data
        small = 0.5 if self.small else 1.0
        time = data.windows[window] if window < len(data.windows) else 0.0
        sets = [set(hosts) for hosts in data.marks.values()]
        if data.moving is not None:
            m = data.moving
            now = m[(m["start"] < time + data.width) & (m["end"] > time)] if not m.empty else m
            sets.append(set(int(h) for h in now["host"]))
        for row, (hosts, (_, colour, marker, size)) in enumerate(zip(sets, self._mark_styles())):
            hosts = [h for h in hosts if h in self.host_switch]
            if not hosts:
                continue
            if self.show_hosts:
                places = [self.layout.hosts[h] for h in hosts]
            else:
                # A row of marks per set, under (or beside) the switches of its hosts.
                depth = 1.8 + 0.3 * row
                places = list({self.host_switch[h]: self._below(self.host_switch[h], depth) for h in hosts}.values())
            xs, ys = zip(*places)
            self.overlay.append(
                self.ax.scatter(xs, ys, s=size * small, marker=marker, color=colour, zorder=7, linewidths=0)
            )


def _time_text(time: float, unit: str) -> str:
    """``1250000`` ns -> ``1.25 ms``."""
    if unit != "ns":
        return f"{time:g} {unit}"
    for scale, name in ((1e6, "ms"), (1e3, "µs")):
        if abs(time) >= scale:
            return f"{time / scale:.4g} {name}"
    return f"{time:g} ns"


def _caption(data: Trees, window: int, count: int) -> str:
    start = data.windows[window] if window < len(data.windows) else 0.0
    trees = "no tree" if count == 0 else f"{count} tree{'s' if count != 1 else ''}"
    return f"{_time_text(start, data.unit)}: {trees}"


def _new_figure(size: tuple[float, float]) -> Figure:
    from snarl import plots

    return plots.figure_class()(figsize=size, dpi=plots.DPI, layout="constrained")


def _frame_size(data: Trees, hosts: bool) -> tuple[float, float]:
    rows = layout(data.topology).rows
    return (9.0, 4.8) if rows else (8.0, 6.4)


def frame(data: Trees, window: int, hosts: bool = False, ax: Axes | None = None) -> Figure:
    """The trees of window ``window`` (an index; :meth:`Trees.window_at` finds the one
    holding a time)."""
    from snarl import plots

    fig, ax = plots._canvas(ax, _frame_size(data, hosts))
    canvas = _Canvas(ax, data, hosts)
    count = canvas.draw(window)
    ax.set_title(f"{data.title}\n{_caption(data, window, count)}", fontsize="medium")
    return fig


def strip_windows(data: Trees, panels: int = STRIP_PANELS) -> list[int]:
    """The windows a strip shows: every one, or ``panels`` evenly spread over the run."""
    n = len(data.windows)
    if n <= panels:
        return list(range(n))
    return sorted({round(i * (n - 1) / (panels - 1)) for i in range(panels)})


def strip(data: Trees, hosts: bool = False, windows: Sequence[int] | None = None) -> Figure:
    """The windows' trees as small multiples (by default every window, or
    :data:`STRIP_PANELS` evenly spread over a longer run)."""
    chosen = list(windows) if windows is not None else strip_windows(data)
    if not chosen:
        raise TreeError("the run has no window to draw")
    columns = min(6, len(chosen))
    rows = math.ceil(len(chosen) / columns)
    panel = (2.6, 1.8) if layout(data.topology).rows else (2.4, 2.4)
    fig = _new_figure((panel[0] * columns + 1.6, panel[1] * rows + 0.6))
    axes = fig.subplots(rows, columns, squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= len(chosen):
            ax.set_visible(False)
            continue
        canvas = _Canvas(ax, data, hosts, legend=(i == columns - 1), small=True)
        count = canvas.draw(chosen[i])
        ax.set_title(_caption(data, chosen[i], count), fontsize="small")
    fig.suptitle(f"Congestion trees: {data.title}", fontsize="medium")
    return fig


def animate(data: Trees, path: str | Path, hosts: bool = False, fps: float = FPS, windows: Sequence[int] | None = None, dpi: float | None = None) -> Path:
    """Writes the windows' trees (every window by default) as an animated GIF at
    ``path``, one frame per window."""
    from matplotlib.animation import PillowWriter

    chosen = list(windows) if windows is not None else list(range(len(data.windows)))
    if not chosen:
        raise TreeError("the run has no window to draw")
    fig = _new_figure(_frame_size(data, hosts))
    ax = fig.add_subplot()
    canvas = _Canvas(ax, data, hosts)

    def draw(window: int) -> None:
        count = canvas.draw(window)
        ax.set_title(f"{data.title}\n{_caption(data, window, count)}", fontsize="medium")

    # Every frame keeps the layout of the first: a changing title moves nothing.
    draw(chosen[0])
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    writer = PillowWriter(fps=fps)
    path = Path(path)
    with writer.saving(fig, str(path), dpi=dpi or 80):
        for i, window in enumerate(chosen):
            if i:
                draw(window)
            writer.grab_frame()
    return path


def write(
    directory: str | Path,
    output: str | Path | None = None,
    at: str | None = None,
    point: str | None = None,
    hosts: bool = False,
    mark: Sequence[str] | None = None,
    fps: float = FPS,
) -> list[Path]:
    """What ``snarl plot tree DIR`` writes: the animation (``DIR/tree.gif``) and the strip
    (``DIR/tree.png``), or with ``output`` the one its suffix names (``.gif``, or a strip
    as ``.png``, ``.svg`` or ``.pdf``); with ``at`` (a time, ``"1.2ms"``) the one frame of
    the window holding it (``DIR/tree-at-<at>.png`` by default). Returns the files."""
    from snarl import plots

    directory = Path(directory)
    data = load(directory, point, mark)
    out = Path(output) if output is not None else None
    if out is not None and out.suffix.lower() not in (".gif", ".png", ".svg", ".pdf"):
        raise TreeError(f"-o {out}: a tree plot is a .gif animation, or a .png, .svg or .pdf figure")
    written: list[Path] = []
    if at is not None:
        try:
            window = data.window_at(plots.parse_duration(at, data.unit))
        except plots.PlotError as e:
            raise TreeError(f"--at {at}: {e}") from None
        target = out or directory / f"tree-at-{re.sub(r'[^0-9A-Za-z.]+', '', at)}.png"
        if target.suffix.lower() == ".gif":
            written.append(animate(data, target, hosts=hosts, fps=fps, windows=[window]))
        else:
            fig = frame(data, window, hosts=hosts)
            target.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(target)
            written.append(target)
        return written
    targets = [out] if out is not None else [directory / "tree.gif", directory / "tree.png"]
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix.lower() == ".gif":
            written.append(animate(data, target, hosts=hosts, fps=fps))
        else:
            strip(data, hosts=hosts).savefig(target)
            written.append(target)
    return written


TABLES = ("trees", "tree_ports", "topology")
"""The tables a run with ``[observe.trees]`` writes, which the drawings read."""


def recorded(directory: str | Path, point: str | None = None) -> bool:
    """Whether a run directory (``point`` None), or point ``point`` of a sweep
    directory, recorded trees: whether it has every table the drawings read."""
    directory = Path(directory)
    if point is None:
        return all((directory / f"{name}.parquet").is_file() for name in TABLES)
    return all((directory / name / f"{point}.parquet").is_file() for name in TABLES)


class PageFigure(NamedTuple):
    """A figure of the trees for an HTML page (``snarl report``, ``snarl compare``)."""

    title: str
    caption: str
    uri: str
    """The image as a data: URI; "" when it could not be drawn (the caption says why)."""
    kind: str
    """``tree`` (the animation) or ``tree-strip`` (the small multiples)."""


def page_figures(
    directory: str | Path, point: str | None = None, label: str | None = None, title: str | None = None
) -> list[PageFigure]:
    """The trees of one run for an HTML page: its animation (a GIF of at most
    :data:`REPORT_FRAMES` windows) and its strip of small multiples (a PNG, as
    ``snarl plot tree`` draws it), or one figure without an image saying why they cannot
    be drawn. The run is a run directory, or point ``point`` of a sweep directory;
    ``label`` starts the captions (which run they show) and ``title`` replaces the
    drawings' own (the run's directory, or the point's swept values)."""
    from snarl import plots

    def caption(text: str) -> str:
        return f"{label}: {text}" if label else text[:1].upper() + text[1:]

    try:
        data = load(directory, point)
        if title is not None:
            data.title = title
        windows = strip_windows(data, REPORT_FRAMES)
        with tempfile.TemporaryDirectory(prefix="snarl-trees-") as scratch:
            path = animate(data, Path(scratch) / "tree.gif", windows=windows, dpi=REPORT_DPI[0])
            gif = _data_uri("gif", path.read_bytes())
        panels = strip_windows(data)
        png = _data_uri("png", plots.figure_png(strip(data, windows=panels), dpi=REPORT_DPI[1]))
    except (TreeError, plots.PlotError, ValueError, KeyError) as e:
        return [PageFigure("Congestion trees", caption(f"not drawn: {e}"), "", "tree")]
    return [
        PageFigure(
            "Congestion trees",
            caption(
                f"the fabric window by window ({_shown(windows, data)}): links blocked in a tree in its colour, "
                "congested roots in red, triangles for the hosts blocked behind a switch."
            ),
            gif,
            "tree",
        ),
        PageFigure(
            "Congestion trees, window by window",
            caption(f"{_shown(panels, data)} side by side, each titled by its start and its number of trees."),
            png,
            "tree-strip",
        ),
    ]


def _shown(windows: Sequence[int], data: Trees) -> str:
    total = len(data.windows)
    if len(windows) == total:
        return "every window" if total != 1 else "its one window"
    return f"{len(windows)} of its {total} windows"


def _data_uri(kind: str, image: bytes) -> str:
    return f"data:image/{kind};base64," + base64.b64encode(image).decode("ascii")


def report_figures(directory: str | Path, points: Sequence[str]) -> list[PageFigure]:
    """For the HTML report of a sweep: the animation and the strip of each of ``points``
    that recorded trees (:func:`page_figures`)."""
    directory = Path(directory)
    figures = []
    for point in points:
        if recorded(directory, point):
            figures += page_figures(directory, point, label=f"Point {point}")
    return figures
