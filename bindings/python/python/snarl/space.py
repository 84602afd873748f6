"""The parameter space of a calibration: what a paper leaves unstated, and its points.

A space file declares the parameters ``snarl calibrate`` searches and the findings it
keeps out of the search::

    seed = 0                          # optional: the draws of --method random and sobol

    [[parameter]]
    key = "isolation.confirm"         # a dotted config key, set on every run that has its section
    range = [0.5, 8]                  # or values = [...]
    log = true                        # optional: log-spaced (range only)
    unit = "us"                       # optional: appended to a drawn number ("2.5us")
    integer = false                   # optional: round drawn numbers (range only)
    steps = 5                         # optional: values of a range in a grid
    why = "Section 4.1 says ICI confirms a root, not after how long"

    [holdout]
    findings = ["ici-plus-lasting-tree"]   # evaluated only at the chosen point

``why`` is required: a searched parameter is one the paper does not state, and the
reason is part of the result. A parameter the paper gives is not searched: the space is
refused if it names a key a finding's run sets, or one a finding (or the findings file)
marks ``given``. At least one finding is held out, so that the chosen point is checked
against a claim it was not fitted to.

Points: ``grid`` is the product of the parameters' values (a range gives ``steps``
values, or as many as ``--points`` allows); ``random`` draws ``--points`` points
uniformly (log-uniformly with ``log``); ``sobol`` takes them from a Sobol sequence,
which covers the space more evenly than random draws. Draws are seeded, and the first N
points of a larger ``--points`` are the N points of a smaller one, so a calibration can
be extended and resumed.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snarl.expressions import hint

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]

METHODS = ("grid", "random", "sobol")
FILE_KEYS = ("parameter", "holdout", "seed", "description")
PARAMETER_KEYS = ("key", "values", "range", "log", "unit", "integer", "steps", "why")
HOLDOUT_KEYS = ("findings",)
DEFAULT_POINTS = 16
"""Points of a random or Sobol search without --points."""
DEFAULT_STEPS = 5
"""Values of a range in a grid without `steps` or --points."""


class SpaceError(ValueError):
    """A space file that cannot be searched as written."""


@dataclass(frozen=True)
class Parameter:
    """A searched config key: its values, or a range to draw from."""

    key: str
    why: str
    values: tuple[Any, ...] | None = None
    range: tuple[float, float] | None = None
    log: bool = False
    unit: str | None = None
    integer: bool = False
    steps: int | None = None

    def at(self, u: float) -> Any:
        """The parameter's value at ``u`` in [0, 1): a value of the list, or a point of
        the range (log-spaced with ``log``)."""
        if self.values is not None:
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        assert self.range is not None
        lo, hi = self.range
        x = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))) if self.log else lo + u * (hi - lo)
        return self.value(x)

    def value(self, x: float) -> Any:
        """A drawn number as it is set: rounded (to an integer, or to 6 significant
        figures, which keeps the configs, and so the run ids, readable), with its unit."""
        number: int | float = int(round(x)) if self.integer else float(f"{x:.6g}")
        if isinstance(number, float) and number.is_integer() and abs(number) < 1e15 and self.unit:
            number = int(number)
        return f"{number}{self.unit}" if self.unit else number

    def grid(self, steps: int) -> list[Any]:
        """The parameter's values in a grid: its list, or ``steps`` values spanning the
        range, ends included."""
        if self.values is not None:
            return list(self.values)
        assert self.range is not None
        lo, hi = self.range
        if steps == 1:
            return [self.value(math.sqrt(lo * hi) if self.log else (lo + hi) / 2)]
        fractions = [i / (steps - 1) for i in range(steps)]
        if self.log:
            found = [self.value(math.exp(math.log(lo) + f * (math.log(hi) - math.log(lo)))) for f in fractions]
        else:
            found = [self.value(lo + f * (hi - lo)) for f in fractions]
        return list(dict.fromkeys(found))  # rounding to integers may merge values


@dataclass(frozen=True)
class Space:
    """A parsed space file."""

    path: Path
    parameters: tuple[Parameter, ...]
    holdout: tuple[str, ...]
    seed: int = 0
    description: str | None = None

    @property
    def keys(self) -> list[str]:
        return [p.key for p in self.parameters]

    def points(self, method: str, count: int | None = None) -> list[dict[str, Any]]:
        """The points of a search, each a dict of key -> value, in order. Raises
        :class:`SpaceError` for a grid larger than ``count``."""
        if method == "grid":
            return self._grid(count)
        count = DEFAULT_POINTS if count is None else count
        if method == "random":
            import numpy as np

            rng = np.random.default_rng(self.seed)
            # Point by point, so the first N points of a longer search are these N.
            rows = [[float(rng.random()) for _ in self.parameters] for _ in range(count)]
        elif method == "sobol":
            rows = sobol(count, len(self.parameters), self.seed)
        else:
            raise SpaceError(f"unknown method `{method}`{hint(method, METHODS)} (methods: {', '.join(METHODS)})")
        return [{p.key: p.at(u) for p, u in zip(self.parameters, row)} for row in rows]

    def _grid(self, count: int | None) -> list[dict[str, Any]]:
        listed = math.prod(len(p.values) for p in self.parameters if p.values is not None)
        free = [p for p in self.parameters if p.range is not None and p.steps is None]
        fixed = math.prod(p.steps for p in self.parameters if p.range is not None and p.steps is not None)
        steps = DEFAULT_STEPS
        if free and count is not None:
            steps = max(1, int((count / (listed * fixed)) ** (1 / len(free)) + 1e-9))
        axes = [p.grid(p.steps or steps) for p in self.parameters]
        total = math.prod(len(a) for a in axes)
        if count is not None and total > count:
            raise SpaceError(
                f"{self.path}: the grid has {total} points ({' x '.join(str(len(a)) for a in axes)}), more than "
                f"--points {count}: give --points {total}, fewer values, or --method random or sobol"
            )
        return [dict(zip(self.keys, combo)) for combo in itertools.product(*axes)]


def load(path: str | os.PathLike[str]) -> Space:
    """Reads and checks a space file. Raises :class:`SpaceError` naming the parameter
    and the key."""
    source = Path(path)
    try:
        data = _tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpaceError(f"{source}: no such space file") from None
    except IsADirectoryError:
        raise SpaceError(f"{source}: is a directory, not a space file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpaceError(f"{source}: cannot read: {e}") from None
    except _tomllib.TOMLDecodeError as e:
        raise SpaceError(f"{source}: not valid TOML: {e}") from None
    where = f"{source}: "
    _known(data, FILE_KEYS, where, "the space file")
    entries = data.get("parameter")
    if not isinstance(entries, list) or not entries:
        raise SpaceError(f"{where}no parameters: give at least one [[parameter]] table")
    parameters: list[Parameter] = []
    for index, entry in enumerate(entries, 1):
        if not isinstance(entry, Mapping):
            raise SpaceError(f"{where}parameter {index}: must be a [[parameter]] table")
        parameter = _parameter(entry, index, where)
        if any(p.key == parameter.key for p in parameters):
            raise SpaceError(f"{where}parameter `{parameter.key}` is declared twice")
        parameters.append(parameter)
    holdout = data.get("holdout")
    if holdout is None:
        raise SpaceError(
            f"{where}no [holdout]: name at least one finding kept out of the search, "
            'e.g. [holdout] findings = ["id"], to check the chosen point against a claim it was not fitted to'
        )
    if not isinstance(holdout, Mapping):
        raise SpaceError(f'{where}`holdout` must be a table: [holdout] findings = ["id", ...]')
    _known(holdout, HOLDOUT_KEYS, f"{where}[holdout]: ", "[holdout]")
    ids = holdout.get("findings")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise SpaceError(f'{where}[holdout] `findings` must be a list of finding ids, e.g. findings = ["id"]')
    if not ids:
        raise SpaceError(f"{where}[holdout] findings is empty: hold out at least one finding")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SpaceError(f"{where}`seed` must be a non-negative integer, found {seed!r}")
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise SpaceError(f"{where}`description` must be a string")
    return Space(source.absolute(), tuple(parameters), tuple(dict.fromkeys(ids)), seed, description)


def _parameter(entry: Mapping[str, Any], index: int, where: str) -> Parameter:
    key = entry.get("key")
    if not isinstance(key, str) or not key.strip():
        raise SpaceError(f"{where}parameter {index}: `key` is required: the dotted config key searched, e.g. \"marking.kmin\"")
    at = f"{where}parameter `{key}`: "
    _known(entry, PARAMETER_KEYS, at, "a parameter")
    why = entry.get("why")
    if not isinstance(why, str) or not why.strip():
        raise SpaceError(
            f"{at}`why` is required: say why the paper leaves this parameter unstated (a searched "
            "parameter is a choice snarl makes where the paper is silent)"
        )
    has_values, has_range = "values" in entry, "range" in entry
    if has_values == has_range:
        raise SpaceError(f"{at}give either `values = [...]` or `range = [lo, hi]`")
    for flag in ("log", "integer"):
        if not isinstance(entry.get(flag, False), bool):
            raise SpaceError(f"{at}`{flag}` must be true or false")
    unit = entry.get("unit")
    if unit is not None and (not isinstance(unit, str) or not unit):
        raise SpaceError(f'{at}`unit` must be a unit such as "us" or "KB"')
    steps = entry.get("steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise SpaceError(f"{at}`steps` must be a positive integer")
    if has_values:
        values = entry["values"]
        if not isinstance(values, list) or not values:
            raise SpaceError(f"{at}`values` must be a non-empty list")
        for name in ("log", "unit", "integer", "steps"):
            if name in entry:
                raise SpaceError(f"{at}`{name}` applies to a `range`, not to `values`")
        return Parameter(key=key, why=why.strip(), values=tuple(values))
    bounds = entry["range"]
    if (
        not isinstance(bounds, list)
        or len(bounds) != 2
        or not all(isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
    ):
        raise SpaceError(f"{at}`range` must be two numbers [lo, hi] (a unit goes in `unit`)")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not lo < hi:
        raise SpaceError(f"{at}`range` [{bounds[0]}, {bounds[1]}] is empty: lo must be below hi")
    log = bool(entry.get("log", False))
    if log and lo <= 0:
        raise SpaceError(f"{at}a `log` range must be above 0, found [{bounds[0]}, {bounds[1]}]")
    return Parameter(
        key=key, why=why.strip(), range=(lo, hi), log=log, unit=unit, integer=bool(entry.get("integer", False)), steps=steps
    )


def _known(data: Mapping[str, Any], known: Sequence[str], at: str, what: str) -> None:
    for key in data:
        if key not in known:
            raise SpaceError(f"{at}unknown key `{key}` in {what}{hint(key, known)} (keys: {', '.join(known)})")


def check_against(space: Space, fixed: Mapping[str, str], ids: Sequence[str]) -> None:
    """Refuses a space that searches a key the findings fix (a run's override, or one
    marked ``given``), or holds out findings that do not exist, or all of them."""
    for parameter in space.parameters:
        for key, why in fixed.items():
            if parameter.key == key or key.startswith(parameter.key + ".") or parameter.key.startswith(key + "."):
                given = "given" in why
                raise SpaceError(
                    f"{space.path}: parameter `{parameter.key}` cannot be searched: `{key}` is "
                    f"{'given by the paper' if given else 'fixed'} ({why}); "
                    "a calibration searches only what the paper leaves unstated"
                )
    for finding_id in space.holdout:
        if finding_id not in ids:
            raise SpaceError(
                f"{space.path}: [holdout] names no finding `{finding_id}`{hint(finding_id, ids)} "
                f"(findings: {', '.join(ids)})"
            )
    if len(set(space.holdout)) >= len(ids):
        raise SpaceError(f"{space.path}: [holdout] holds out every finding: leave at least one to search")


# ----------------------------------------------------------------------------- Sobol

# Primitive polynomials (degree s, coefficients a) and initial direction numbers m of
# dimensions 2 to 16 of Joe and Kuo's table (new-joe-kuo-6.21201); the first dimension is
# the van der Corput sequence.
_SOBOL = (
    (1, 0, (1,)),
    (2, 1, (1, 3)),
    (3, 1, (1, 3, 1)),
    (3, 2, (1, 1, 1)),
    (4, 1, (1, 1, 3, 3)),
    (4, 4, (1, 3, 5, 13)),
    (5, 2, (1, 1, 5, 5, 17)),
    (5, 4, (1, 1, 5, 5, 5)),
    (5, 7, (1, 1, 7, 11, 19)),
    (5, 11, (1, 1, 5, 1, 1)),
    (5, 13, (1, 1, 1, 3, 11)),
    (5, 14, (1, 3, 5, 5, 31)),
    (6, 1, (1, 3, 3, 9, 7, 49)),
    (6, 13, (1, 1, 1, 15, 21, 21)),
    (6, 16, (1, 3, 1, 13, 27, 49)),
)
_BITS = 30


def sobol(count: int, dimensions: int, seed: int = 0) -> list[list[float]]:
    """The first ``count`` points of a ``dimensions``-dimensional Sobol sequence in
    [0, 1), each dimension shifted by a random digit (XOR) drawn from ``seed``: the
    shift keeps the sequence's even spread and takes its first point off the corner."""
    import numpy as np

    if dimensions > len(_SOBOL) + 1:
        raise SpaceError(f"sobol: at most {len(_SOBOL) + 1} parameters, found {dimensions}; use --method random")
    directions = [[1 << (_BITS - 1 - i) for i in range(_BITS)]]
    for s, a, m in _SOBOL[: dimensions - 1]:
        v = [m[i] << (_BITS - 1 - i) for i in range(s)]
        for i in range(s, _BITS):
            value = v[i - s] ^ (v[i - s] >> s)
            for k in range(1, s):
                if (a >> (s - 1 - k)) & 1:
                    value ^= v[i - k]
            v.append(value)
        directions.append(v)
    shifts = [int(x) for x in np.random.default_rng(seed).integers(0, 1 << _BITS, size=dimensions)]
    points = []
    state = [0] * dimensions
    for index in range(count):
        if index:
            bit = ((index ^ (index - 1)) + 1).bit_length() - 2  # the lowest zero bit of index - 1
            for d in range(dimensions):
                state[d] ^= directions[d][bit]
        points.append([((state[d] ^ shifts[d]) / (1 << _BITS)) for d in range(dimensions)])
    return points
