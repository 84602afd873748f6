"""The kinds of ``snarl plot``, in one registry: the command takes its choices, its help
and each kind's own options from here, and a new kind is registered once, in the module
that draws it (:func:`register`).

A kind is a :class:`PlotKind`: its name, a line of help, the options of its own it adds
to ``snarl plot`` and ``write(args)``, which draws from the parsed command line and
writes the files, returning them. The figures of :mod:`snarl.plots` are declared there,
each on the function that draws it (``@directory_figure(name, help)``, gathered in
``plots.FIGURES``), and registered here as a family with their help: one figure each,
PNG, SVG or PDF, drawn by :func:`snarl.plots.plot_directory` (and from several run
directories by :func:`snarl.plots.plot_mechanisms`). ``tree`` (:mod:`snarl.trees`)
writes an animation and a strip.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PlotKind:
    name: str
    help: str
    """A line for ``snarl plot --help``."""
    write: Callable[[argparse.Namespace], list[Path]]
    """Draws from the parsed ``snarl plot`` arguments, writes, returns the files written."""
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    """Adds the kind's own options to the ``snarl plot`` parser."""
    several: bool = False
    """Takes several DIRs."""


class PlotKindError(ValueError):
    """A plot that cannot be drawn as asked (the command's exit code 2)."""


_REGISTRY: dict[str, PlotKind] = {}


def register(kind: PlotKind) -> PlotKind:
    """Adds ``kind`` to ``snarl plot`` (a second kind of the same name is an error)."""
    if kind.name in _REGISTRY and _REGISTRY[kind.name] is not kind:
        raise ValueError(f"plot kind {kind.name!r} is registered twice")
    _REGISTRY[kind.name] = kind
    return kind


def kinds() -> dict[str, PlotKind]:
    """Every kind of ``snarl plot``, by name (importing nothing heavy: no matplotlib)."""
    if not _REGISTRY:
        _register_builtins()
    return dict(_REGISTRY)


def _register_builtins() -> None:
    from snarl import plots

    for figure in plots.FIGURES.values():
        writer = _figure_writer(figure.name, figure.several)
        register(PlotKind(figure.name, figure.help, writer, several=figure.several))
    register(
        PlotKind(
            "tree",
            "congestion trees window by window: an animated GIF and a strip of small multiples "
            "(runs with [observe.trees])",
            _write_tree,
            _tree_arguments,
        )
    )


def _figure_writer(kind: str, several: bool) -> Callable[[argparse.Namespace], list[Path]]:
    """One figure of :mod:`snarl.plots`, as ``snarl plot`` always drew it; a figure of
    several directories (``mechanisms``) by :func:`snarl.plots.plot_mechanisms`."""

    def write(args: argparse.Namespace) -> list[Path]:
        from snarl.plots import PlotError, decorate, parse_figure_size, plot_directory, plot_mechanisms

        output = args.output or args.dir[0] / f"{kind}.png"
        if output.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise PlotKindError(f"-o {output}: the figure must be a .png, .svg or .pdf file")
        try:
            if several:
                # Its labels and default title come from the directories' names.
                if args.group is not None and len(args.group) > 1:
                    raise PlotError("mechanisms plots one group: give --group once")
                fig = plot_mechanisms(
                    args.dir, group=args.group[0] if args.group else None, labels=args.labels, title=args.title,
                    where=args.where,
                )
                fig = decorate(fig, xlabel=args.xlabel, ylabel=args.ylabel, logx=args.logx, logy=args.logy,
                               size=parse_figure_size(args.size) if args.size else None)
            else:
                fig = plot_directory(
                    kind, args.dir[0], x=args.x, y=args.y, hue=args.hue, value=args.value, point=args.point,
                    groups=args.group, where=args.where, style=args.style, reference=args.ref, title=args.title,
                    xlabel=args.xlabel, ylabel=args.ylabel, logx=args.logx, logy=args.logy, size=args.size,
                )
        except PlotError as e:
            raise PlotKindError(str(e)) from None
        output.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(output)
        return [output]

    return write


def _tree_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--at", metavar="TIME",
        help="draw the one window holding TIME, e.g. 1.2ms (tree; default: every window)",
    )
    parser.add_argument(
        "--hosts", action="store_true", help="draw the hosts too (tree; default: the switches only)"
    )
    parser.add_argument(
        "--mark", action="append", metavar="GROUP",
        help="mark the hosts of this traffic group (tree; repeatable; default: the shared hotspots and "
        "the groups named hotspot(s), victim(s) or V)",
    )


def _write_tree(args: argparse.Namespace) -> list[Path]:
    from snarl import trees
    from snarl.plots import PlotError

    try:
        return trees.write(
            args.dir[0], output=args.output, at=args.at, point=args.point, hosts=args.hosts, mark=args.mark
        )
    except (trees.TreeError, PlotError) as e:
        raise PlotKindError(str(e)) from None
