"""``snarl check``: validate a scenario, a fabric preset or a sweep file, and say what it
would run, without running it.

A file is checked as the command that runs it checks it: a scenario (or a preset) by the
core's validation (:func:`snarl.resolve_config`: every key, every value, the fabric and
the memory estimate), a sweep file by :func:`snarl.sweep.plan`'s (the spec, then every
point). So a file that passes runs, and a file that fails names the key path::

    import snarl.check

    checked = snarl.check.check("scenarios/demo/endpoint-congestion.toml")
    checked.kind          # "sweep"
    len(checked.points)   # 120
    print("\\n".join(checked.lines()))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snarl.sweep import Point, SweepSpec

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]

SCENARIO, PRESET, SWEEP = "scenario", "preset", "sweep"
"""The kinds of file :func:`check` takes."""

PRESET_WORKLOAD = {"traffic.load": 0.1}
"""The stand-in workload a fabric preset is checked with (a preset has none: the
scenarios that include it add theirs)."""

SHOWN_POINTS = 10
"""Points a sweep's printout lists, unless asked for every one."""


class CheckError(ValueError):
    """A file that is neither a scenario nor a sweep (a findings or a search-space file):
    its message says which command takes it."""


@dataclass
class Checked:
    """A file that passed the checks, and what it would run."""

    path: Path
    kind: str
    """``"scenario"``, ``"preset"`` (a fabric without a workload, which scenarios
    include) or ``"sweep"``."""
    resolved: str
    """The resolved config (TOML, every default written out): the scenario's, or the
    sweep's first point's. A preset's holds the stand-in workload
    :data:`PRESET_WORKLOAD`."""
    points: list[Point] = field(default_factory=list)
    """A sweep's points, in order (each with its values, seed and id)."""
    spec: SweepSpec | None = None

    def lines(self, every_point: bool = False) -> list[str]:
        """What the file would run, as lines for a terminal."""
        if self.kind == SWEEP:
            return self._sweep_lines(every_point)
        if self.kind == PRESET:
            head = [
                f"{self.path}: a valid fabric preset (no [traffic] or [workload]: a scenario includes it "
                "and adds its workload)",
            ]
            return head + ["  " + line for line in config_lines(self.resolved, skip=("traffic",))]
        return [f"{self.path}: a valid scenario; it would run:"] + ["  " + line for line in config_lines(self.resolved)]

    def _sweep_lines(self, every_point: bool) -> list[str]:
        assert self.spec is not None
        spec, points = self.spec, self.points
        name = f" `{spec.name}`" if spec.name else ""
        lines = [
            f"{self.path}: a valid sweep{name} of {len(points)} point{'s' if len(points) != 1 else ''} "
            f"over {_relative(spec.base, self.path)}",
        ]
        for table, values in (("axes", spec.axes), ("zip", spec.zip)):
            if values:
                lines.append(f"[{table}]" + (" (a product)" if table == "axes" else " (varied together)"))
                lines += [f"  {key}: {_values_text(items)}" for key, items in values.items()]
        if spec.set:
            lines.append("[set] (every point)")
            lines += [f"  {key} = {_value_text(value)}" for key, value in spec.set.items()]
        shown = points if every_point or len(points) <= SHOWN_POINTS else points[:SHOWN_POINTS]
        more = "" if len(shown) == len(points) else f" (the first {len(shown)}; --all lists every one)"
        lines.append(f"points{more}:")
        width = len(str(len(points)))
        for number, point in enumerate(shown, 1):
            values = ", ".join(f"{k}={_value_text(v)}" for k, v in point.values.items()) or "(the base)"
            lines.append(f"  {number:>{width}}  {point.id}  {values}")
        if len(shown) < len(points):
            lines.append(f"  ... {len(points) - len(shown)} more")
        if points:
            lines.append("the first point, resolved:")
            lines += ["  " + line for line in config_lines(self.resolved)]
        return lines


def check(
    path: str | os.PathLike[str],
    set: Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the command's --set
    seed: int | None = None,
) -> Checked:
    """Checks a scenario, a fabric preset or a sweep file and returns what it would run.

    A file with a top-level ``base`` is a sweep file; any other is a scenario, or a
    preset if it has no workload (``[traffic]`` or ``[workload]``). ``set`` and ``seed``
    apply to a scenario as :func:`snarl.run`'s do (a sweep sets its own).

    Raises:
        FileNotFoundError: there is no such file.
        ConfigError: the scenario is invalid (``.path`` names the key).
        SweepError: the sweep file, or one of its points, is invalid (the message names
            the key and the point).
        CheckError: the file is a findings or a search-space file.
    """
    from snarl import ConfigError
    from snarl.api import read_config_file, resolve_config
    from snarl.sweep import SweepError, load_spec, resolve_points

    path = Path(path)
    text = read_config_file(path)
    try:
        data = _tomllib.loads(text)
    except _tomllib.TOMLDecodeError:
        data = {}  # the core's message names the line
    if "base" in data:
        if set or seed is not None:
            raise SweepError(f"{path}: a sweep sets its own values: --set and --seed apply to a scenario")
        spec = load_spec(path)
        points = resolve_points(spec)
        return Checked(path, SWEEP, points[0].config if points else "", points, spec)
    if "finding" in data:
        raise CheckError(f"{path}: a findings file, not a scenario or a sweep: `snarl findings {path}` runs it")
    if "parameter" in data:
        raise CheckError(
            f"{path}: a search space, not a scenario or a sweep: `snarl calibrate FINDINGS.toml --space {path}` "
            "searches it"
        )
    try:
        return Checked(path, SCENARIO, resolve_config(path, set, seed))
    except ConfigError as e:
        if getattr(e, "path", None) != "traffic" or "traffic" in data or "workload" in data:
            raise
    # No workload: a fabric preset. Its fabric is checked with a stand-in workload.
    overrides = {**PRESET_WORKLOAD, **(set or {})}
    return Checked(path, PRESET, resolve_config(path, overrides, seed))


def config_lines(resolved: str, skip: tuple[str, ...] = ()) -> list[str]:
    """A resolved config in short, one line per section, whatever its sections:
    ``topology: k_ary_n_tree (k 4, n 3)``; the seed and the description's first line
    first."""
    data = _tomllib.loads(resolved)
    head = []
    if "seed" in data:
        head.append(f"seed {_value_text(data['seed'])}")
    description = str(data.get("description") or "").strip()
    if description:
        first = description.splitlines()[0].strip()
        head.append(f"description: {first}" + (" ..." if "\n" in description else ""))
    lines = head
    for key, value in data.items():
        if key in ("seed", "description") or key in skip:
            continue
        lines.append(f"{key}: {_item_text(value)}")
    return lines


def _item_text(value: Any, nested: bool = False) -> str:
    """A value in short: a table as ``type (key value, ...)``, a list of tables by their
    names or types (or their count), a scalar as TOML would write it."""
    if isinstance(value, Mapping):
        parts = [f"{k} {_item_text(v, nested=True)}" for k, v in value.items() if k != "type"]
        kind = str(value["type"]) if "type" in value else ""
        if not parts:
            return kind or "(empty)"
        inner = ", ".join(parts)
        return f"{kind} ({inner})" if kind else f"({inner})" if nested else inner
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for label in ("name", "type"):
            labels = [str(v[label]) for v in value if label in v]
            if len(labels) == len(value):
                return f"{len(value)} ({_values_text(labels)})"
        return f"{len(value)}"
    return _value_text(value)


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_value_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return _values_text(value, brackets=True)
    return str(value)


def _values_text(values: list[Any], brackets: bool = False, most: int = 8) -> str:
    """``0.1, 0.2, ..., 1.0 (10 values)``: a long list cut in the middle."""
    texts = [_value_text(v) for v in values]
    if len(texts) > most:
        shown = ", ".join(texts[: most - 2]) + ", ..., " + texts[-1]
        text = f"{shown} ({len(texts)} values)"
    else:
        text = ", ".join(texts)
    return f"[{text}]" if brackets else text


def _relative(base: Path, sweep_file: Path) -> str:
    """The base as the sweep file names it (relative to its folder when inside it)."""
    try:
        return str(base.relative_to(sweep_file.absolute().parent))
    except ValueError:
        return str(base)
