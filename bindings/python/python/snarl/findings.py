"""Findings as data: a paper's claims, the runs that test them, and whether snarl agrees.

A findings file (``scenarios/<folder>/findings.toml``) lists what a paper finds, each
claim with the runs it needs and two expressions (:mod:`snarl.expressions`) over those
runs' summaries: ``value``, snarl's figure to show beside the paper's, and ``holds``,
whether snarl reproduces the claim::

    paper = "Merino et al., Improving dynamic congestion isolation in data-center networks"
    given = ["topology.k"]                  # optional: keys the paper states, for every finding

    [[finding]]
    id = "dcqcn-protects-victims"
    paper = "Section 4.3, Figure 3"
    says = "DCQCN keeps the victims' throughput that PFC alone loses to the tree"
    paper_value = "about 2x"
    value = "dcqcn.groups.victims.accepted_load / none.groups.victims.accepted_load"
    holds = "dcqcn.groups.victims.accepted_load >= 2 * none.groups.victims.accepted_load"
    given = ["traffic.load"]                # optional: keys this finding's paper text states
    format = ".2f"                          # optional: how `value` is shown

    [finding.runs]
    none = { scenario = "one-tree-none.toml" }
    dcqcn = { scenario = "one-tree-dcqcn.toml", set = { "simulation.duration" = "1ms" } }

    [[finding.control]]                     # optional: the mechanism switched off
    why = "DCQCN's marking off"
    runs.dcqcn = { set = { "cc.kmin" = "1GB", "cc.kmax" = "1GB" } }

Scenario paths are relative to the findings file; ``set`` holds overrides by quoted
dotted key, as a sweep's ``[set]`` does. ``value`` may be a list of expressions (shown
joined by "vs") or a table of them by label (``{ marks = "...", CNPs = "..." }``).

A control changes some of the finding's runs (``scenario`` replaces a run's scenario,
``set`` adds overrides to its own) so that the mechanism the finding credits is gone:
there the finding must not hold, which shows that it can fail. ``snarl findings
--controls`` runs the controls of the findings that hold; the reproduction tests run
every shipped findings file so. A finding is thus written once, and ``snarl findings``
reports it side by side with the paper's while ``snarl calibrate`` searches the
parameters the paper leaves unstated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snarl.expressions import RESERVED, Expression, ExpressionError, NoValue, describe, hint, parse, path_text
from snarl.runs import Result, RunSpec

if TYPE_CHECKING:
    from snarl.runs import Resolver
    from snarl.sweep import Point

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]

FILE_KEYS = ("paper", "description", "given", "finding")
FINDING_KEYS = ("id", "paper", "says", "paper_value", "runs", "value", "holds", "given", "format", "control")
RUN_KEYS = ("scenario", "set")
CONTROL_KEYS = ("why", "runs")
REQUIRED = ("id", "paper", "says", "paper_value", "runs", "value", "holds")
TABLES = "tables"
"""The path part that leads from a run into its tables: ``r.tables.fabric.cnps`` is the
``cnps`` column of the run's ``fabric`` table, a list for ``max``, ``sum``, ..."""


class FindingsError(ValueError):
    """A findings file that cannot be used as written, or an expression that names a
    run or a key the runs do not have: bad input, reported as one line."""


@dataclass(frozen=True)
class RunRef:
    """A run a finding needs: its name in the finding's expressions, its scenario and
    overrides."""

    name: str
    scenario: Path
    set: Mapping[str, Any]

    def spec(self, extra: Mapping[str, Any] | None = None) -> RunSpec:
        """The run with ``extra`` overrides applied after its own."""
        merged = {**self.set, **(extra or {})}
        return RunSpec(self.scenario, tuple(merged.items()))


@dataclass(frozen=True)
class Control:
    """A finding's runs with its mechanism switched off, where it must not hold."""

    why: str
    """What the control takes away ("the cap off", "ICI+ replaced by ICI")."""
    runs: Mapping[str, RunRef]
    """The finding's runs, those the control changes replaced."""


@dataclass(frozen=True)
class Finding:
    """One claim of the paper, and how snarl checks it."""

    id: str
    paper: str
    says: str
    paper_value: str
    runs: Mapping[str, RunRef]
    value: tuple[Expression, ...]
    labels: tuple[str, ...] | None
    """The values' labels, when ``value`` is a table (``{ marks = "...", CNPs = "..." }``)."""
    holds: Expression
    given: tuple[str, ...] = ()
    format: str | None = None
    controls: tuple[Control, ...] = ()

    def fixed_keys(self) -> dict[str, str]:
        """The keys this finding fixes, each with what fixes it: a run's ``set`` or
        ``given``."""
        fixed = {key: f"finding `{self.id}` marks it `given`" for key in self.given}
        for run in self.runs.values():
            for key in run.set:
                fixed.setdefault(key, f"finding `{self.id}`'s run `{run.name}` sets it")
        return fixed


@dataclass(frozen=True)
class FindingsFile:
    """A parsed findings file."""

    path: Path
    findings: tuple[Finding, ...]
    paper: str | None = None
    description: str | None = None
    given: tuple[str, ...] = ()

    def find(self, finding_id: str) -> Finding:
        for finding in self.findings:
            if finding.id == finding_id:
                return finding
        raise KeyError(finding_id)

    def ids(self) -> list[str]:
        return [f.id for f in self.findings]

    def fixed_keys(self) -> dict[str, str]:
        """Every key a finding fixes or the file marks given, with what fixes it."""
        fixed = {key: "the findings file marks it `given`" for key in self.given}
        for finding in self.findings:
            for key, why in finding.fixed_keys().items():
                fixed.setdefault(key, why)
        return fixed


def load(path: str | os.PathLike[str]) -> FindingsFile:
    """Reads and checks a findings file: every key known, every expression parsed,
    every run name an expression uses declared, every scenario a file. Raises
    :class:`FindingsError` naming the finding and the key."""
    source = Path(path)
    try:
        data = _tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FindingsError(f"{source}: no such findings file") from None
    except IsADirectoryError:
        raise FindingsError(f"{source}: is a directory, not a findings file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise FindingsError(f"{source}: cannot read: {e}") from None
    except _tomllib.TOMLDecodeError as e:
        raise FindingsError(f"{source}: not valid TOML: {e}") from None
    where = f"{source}: "
    _known_keys(data, FILE_KEYS, where, "the findings file")
    entries = data.get("finding")
    if not isinstance(entries, list) or not entries:
        raise FindingsError(f"{where}no findings: give at least one [[finding]] table")
    root = source.absolute().parent
    findings: list[Finding] = []
    for index, entry in enumerate(entries, 1):
        if not isinstance(entry, Mapping):
            raise FindingsError(f"{where}finding {index}: must be a [[finding]] table")
        finding = _finding(entry, index, root, where)
        if any(f.id == finding.id for f in findings):
            raise FindingsError(f"{where}two findings have the id `{finding.id}`: ids name findings, give each its own")
        findings.append(finding)
    for name in ("paper", "description"):
        if name in data and not isinstance(data[name], str):
            raise FindingsError(f"{where}`{name}` must be a string")
    return FindingsFile(
        path=source.absolute(),
        findings=tuple(findings),
        paper=data.get("paper"),
        description=data.get("description"),
        given=_keys_list(data.get("given", []), f"{where}`given`"),
    )


def _finding(entry: Mapping[str, Any], index: int, root: Path, where: str) -> Finding:
    """One [[finding]] table, checked."""
    finding_id = entry.get("id")
    if not isinstance(finding_id, str) or not finding_id.strip():
        raise FindingsError(f"{where}finding {index}: `id` is required: a short name such as \"dcqcn-protects-victims\"")
    at = f"{where}finding `{finding_id}`: "
    _known_keys(entry, FINDING_KEYS, at, "a finding")
    for key in REQUIRED:
        if key not in entry:
            raise FindingsError(f"{at}missing `{key}`")
    for key in ("paper", "says", "paper_value"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise FindingsError(f"{at}`{key}` must be a non-empty string")
    runs = _runs(entry["runs"], root, at)
    value = entry["value"]
    labels: tuple[str, ...] | None = None
    if isinstance(value, Mapping):
        labels, values = tuple(value), list(value.values())
    else:
        values = value if isinstance(value, list) else [value]
    if not values:
        raise FindingsError(f"{at}`value` is empty: give an expression")
    parsed = tuple(_expression(text, "value", runs, at) for text in values)
    holds = _expression(entry["holds"], "holds", runs, at)
    form = entry.get("format")
    if form is not None:
        try:
            format(1.5, form)
        except (TypeError, ValueError):
            raise FindingsError(f"{at}`format` {form!r} is not a number format such as \".2f\" or \",.0f\"") from None
    return Finding(
        id=finding_id,
        paper=entry["paper"].strip(),
        says=" ".join(entry["says"].split()),
        paper_value=entry["paper_value"].strip(),
        runs=runs,
        value=parsed,
        labels=labels,
        holds=holds,
        given=_keys_list(entry.get("given", []), f"{at}`given`"),
        format=form,
        controls=_controls(entry.get("control", []), runs, root, at),
    )


def _runs(data: Any, root: Path, at: str) -> dict[str, RunRef]:
    if not isinstance(data, Mapping) or not data:
        raise FindingsError(f"{at}`runs` must be a table of named runs, e.g. runs.dcqcn = {{ scenario = \"x.toml\" }}")
    runs = {}
    for name, run in data.items():
        if not name.isidentifier() or name in RESERVED or name == TABLES:
            raise FindingsError(
                f"{at}run name `{name}`: expressions name runs, so a name is an identifier (letters, digits, _) "
                f"other than {', '.join(sorted(RESERVED | {TABLES}))}"
            )
        if not isinstance(run, Mapping):
            raise FindingsError(f"{at}runs.{name} must be a table: {{ scenario = \"file.toml\", set = {{ ... }} }}")
        _known_keys(run, RUN_KEYS, f"{at}runs.{name}: ", "a run")
        path = _scenario_path(run.get("scenario"), root, f"{at}runs.{name}: ")
        overrides = run.get("set", {})
        if not isinstance(overrides, Mapping):
            raise FindingsError(f"{at}runs.{name}: `set` must be a table of dotted keys, e.g. set = {{ \"traffic.load\" = 0.5 }}")
        runs[name] = RunRef(name, path, dict(overrides))
    return runs


def _controls(data: Any, runs: Mapping[str, RunRef], root: Path, at: str) -> tuple[Control, ...]:
    """The [[finding.control]] tables: each changes some of the finding's runs."""
    example = '[[finding.control]] why = "the cap off", runs.r = { set = { "key" = 1.0 } }'
    if not isinstance(data, list) or not all(isinstance(c, Mapping) for c in data):
        raise FindingsError(f"{at}`control` must be [[finding.control]] tables: {example}")
    controls = []
    for index, entry in enumerate(data, 1):
        here = f"{at}control {index}: "
        _known_keys(entry, CONTROL_KEYS, here, "a control")
        why = entry.get("why")
        if not isinstance(why, str) or not why.strip():
            raise FindingsError(f"{here}`why` is required: what the control switches off, e.g. \"the cap off\"")
        changes = entry.get("runs")
        if not isinstance(changes, Mapping) or not changes:
            raise FindingsError(f"{here}`runs` must name the runs it changes: {example}")
        replaced = dict(runs)
        for name, change in changes.items():
            if name not in runs:
                raise FindingsError(f"{here}runs.{name}: not a run of the finding{hint(name, runs)} (its runs: {', '.join(runs)})")
            if not isinstance(change, Mapping) or not change:
                raise FindingsError(f"{here}runs.{name} must be a table with `scenario` and/or `set`")
            _known_keys(change, RUN_KEYS, f"{here}runs.{name}: ", "a control's run")
            own = runs[name]
            scenario = own.scenario
            if "scenario" in change:
                path = _scenario_path(change["scenario"], root, f"{here}runs.{name}: ")
                scenario = path
            overrides = change.get("set", {})
            if not isinstance(overrides, Mapping):
                raise FindingsError(f"{here}runs.{name}: `set` must be a table of dotted keys")
            replaced[name] = RunRef(name, scenario, {**own.set, **overrides})
        controls.append(Control(" ".join(why.split()), replaced))
    return tuple(controls)


def _scenario_path(scenario: Any, root: Path, at: str) -> Path:
    """A run's scenario file, relative to the findings file; it must exist."""
    if not isinstance(scenario, str) or not scenario:
        raise FindingsError(f"{at}`scenario` is required: the experiment's TOML file")
    path = Path(scenario) if Path(scenario).is_absolute() else root / scenario
    if not path.is_file():
        raise FindingsError(f"{at}scenario {path}: no such file")
    return path.absolute()


def _expression(text: Any, key: str, runs: Mapping[str, RunRef], at: str) -> Expression:
    """Parses one expression and checks that every run it reads is declared."""
    try:
        expression = parse(text)
    except ExpressionError as e:
        raise FindingsError(f"{at}`{key}`: {e}") from None
    for path in expression.paths():
        name = str(path[0])
        if name not in runs:
            raise FindingsError(
                f"{at}`{key}`: `{path_text(path)}`: unknown run `{name}`{hint(name, runs)} "
                f"(the finding's runs: {', '.join(runs)})"
            )
    return expression


def _known_keys(data: Mapping[str, Any], known: Sequence[str], at: str, what: str) -> None:
    for key in data:
        if key not in known:
            raise FindingsError(f"{at}unknown key `{key}` in {what}{hint(key, known)} (keys: {', '.join(known)})")


def _keys_list(value: Any, at: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(k, str) and k for k in value):
        raise FindingsError(f"{at} must be a list of dotted keys, e.g. [\"topology.k\"]")
    return tuple(value)


# ----------------------------------------------------------------------------- evaluation


@dataclass
class ControlOutcome:
    """A finding at one of its controls: it must not hold there."""

    control: Control
    holds: bool | None
    error: str | None = None

    @property
    def fails(self) -> bool:
        """Whether the control shows the finding can fail: it does not hold there (a
        figure without a value, a deadlocked run, is no such proof)."""
        return self.holds is False

    def to_dict(self) -> dict[str, Any]:
        return {"why": self.control.why, "holds": self.holds, "error": self.error}


@dataclass
class Outcome:
    """A finding evaluated on its runs: snarl's values, whether the claim holds, or why
    there is no answer (a run failed, a figure has no value)."""

    finding: Finding
    values: list[Any] | None = None
    holds: bool | None = None
    error: str | None = None
    runs: dict[str, str] = field(default_factory=dict)
    """The id of each of the finding's runs (its record in the cache)."""
    controls: list[ControlOutcome] | None = None
    """The finding at each of its controls, when they were run (``--controls``)."""

    def controls_text(self) -> str:
        """How the controls went: "-" when not run or none, else "fails in k of n"."""
        if not self.controls:
            return "-"
        failing = sum(1 for c in self.controls if c.fails)
        return f"fails in {failing} of {len(self.controls)}"

    def unproven(self) -> list[ControlOutcome]:
        """The controls where a finding that holds does not fail: it cannot fail there."""
        return [c for c in self.controls or [] if not c.fails]

    def value_text(self) -> str:
        """snarl's value(s) as shown: formatted, joined by "vs"."""
        if self.values is None:
            return "-"
        shown = [show(v, self.finding.format) for v in self.values]
        if self.finding.labels:
            return ", ".join(f"{label} {text}" for label, text in zip(self.finding.labels, shown))
        return " vs ".join(shown)

    def holds_text(self) -> str:
        return {True: "yes", False: "no", None: "error"}[self.holds]

    def _plain_values(self) -> Any:
        """The value, the list of values, or the values by label."""
        if self.values is None:
            return None
        if self.finding.labels:
            return dict(zip(self.finding.labels, self.values))
        return self.values[0] if len(self.values) == 1 else self.values

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        return {
            "id": f.id,
            "paper": f.paper,
            "says": f.says,
            "paper_value": f.paper_value,
            "value": self._plain_values(),
            "value_text": self.value_text(),
            "holds": self.holds,
            "error": self.error,
            "runs": self.runs,
            "expressions": {"value": [e.text for e in f.value], "holds": f.holds.text},
            "controls": None if self.controls is None else [c.to_dict() for c in self.controls],
        }


def evaluate(finding: Finding, results: Mapping[str, Result], values: bool = True) -> Outcome:
    """Evaluates ``finding`` on the results of its runs, by run name (``holds`` only
    unless ``values``).

    A failed run, or a figure without a value at these runs (null, a division by zero),
    gives an outcome with its ``error``. Raises :class:`FindingsError` for what the file
    must fix: a path the runs do not have, an expression of the wrong kind."""
    outcome = Outcome(finding, runs={name: result.id for name, result in results.items()})
    failed = [name for name in finding.runs if not results[name].ok]
    if failed:
        outcome.error = "; ".join(f"run `{n}` failed: {results[n].error}" for n in failed)
        return outcome
    lookup = _lookup(results)
    try:
        outcome.values = [e.evaluate(lookup) for e in finding.value] if values else None
    except NoValue as e:
        outcome.error = f"value: {e}"
    except ExpressionError as e:
        raise FindingsError(f"finding `{finding.id}`: `value`: {e}") from None
    try:
        holds = finding.holds.evaluate(lookup)
    except NoValue as e:
        outcome.error = f"holds: {e}"
        return outcome
    except ExpressionError as e:
        raise FindingsError(f"finding `{finding.id}`: `holds`: {e}") from None
    if not isinstance(holds, bool):
        raise FindingsError(
            f"finding `{finding.id}`: `holds` gives {describe(holds)}, not true or false: write a comparison"
        )
    outcome.holds = holds
    return outcome


def _lookup(results: Mapping[str, Result]) -> Callable[[tuple[str | int, ...]], Any]:
    """Resolves a path: the run's summary, key by key; ``r.tables.T.C`` a table's column."""

    def lookup(path: tuple[str | int, ...]) -> Any:
        result = results[str(path[0])]
        current: Any = result.summary
        for depth, part in enumerate(path[1:], 1):
            if depth == 1 and part == TABLES and TABLES not in current:
                return _column(result, path)
            here = path_text(path[:depth])
            if isinstance(current, Mapping):
                if part not in current:
                    keys = [str(k) for k in current]
                    if depth == 1:
                        keys.append(TABLES)
                    raise ExpressionError(
                        f"`{path_text(path)}`: no key `{part}` in `{here}`{hint(str(part), keys)} (keys: {_list(keys)})",
                        path_text(path),
                    )
                current = current[part]
            elif isinstance(current, list):
                if not isinstance(part, int) or not -len(current) <= part < len(current):
                    raise ExpressionError(
                        f"`{path_text(path)}`: `{here}` is a list of {len(current)}: index it with [0] to [{len(current) - 1}]",
                        path_text(path),
                    )
                current = current[part]
            else:
                raise ExpressionError(f"`{path_text(path)}`: `{here}` is {describe(current)}, it has no keys", path_text(path))
        if isinstance(current, Mapping):
            raise ExpressionError(
                f"`{path_text(path)}` is {describe(current)}, not a value: go down to one of them", path_text(path)
            )
        return current

    return lookup


def _column(result: Result, path: tuple[str | int, ...]) -> list[Any]:
    """``r.tables.TABLE.COLUMN``: the column's values (a list)."""
    text = path_text(path)
    names = result.tables()
    if len(path) != 4:
        raise ExpressionError(
            f"`{text}`: a table's column is `{path[0]}.tables.TABLE.COLUMN` (the run's tables: {_list(names)})", text
        )
    table, column = str(path[2]), str(path[3])
    if table not in names:
        raise ExpressionError(
            f"`{text}`: the run has no table `{table}`{hint(table, names)} (its tables: {_list(names)})", text
        )
    values = result.column(table, column)
    if values is None:
        columns = result.columns(table)
        raise ExpressionError(
            f"`{text}`: no column `{column}` in table `{table}`{hint(column, columns)} (columns: {_list(columns)})", text
        )
    return values


def _list(names: Sequence[str], most: int = 12) -> str:
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "") if names else "none"


def show(value: Any, form: str | None = None) -> str:
    """A value as the report shows it: ``form`` if given (a number format), else
    integers with separators and floats with three significant figures or whole units."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and form:
        return format(value, form)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        return f"{value:.3g}"
    if isinstance(value, list):
        return f"[{len(value)} values]"
    return str(value)


# ----------------------------------------------------------------------------- the command


@dataclass
class Planned:
    """The runs of a set of findings, resolved: for each finding, its run names' points."""

    runs: dict[str, dict[str, Point]]
    """finding id -> run name -> the run's point (its resolved config and id)."""
    applied: set[str] = field(default_factory=set)
    """The overrides given to :func:`plan` that some run has the section of."""

    def points(self) -> list[Point]:
        """The distinct points, in order of first use."""
        unique: dict[str, Point] = {}
        for by_name in self.runs.values():
            for point in by_name.values():
                unique.setdefault(point.id, point)
        return list(unique.values())


def plan(findings: Sequence[Finding], extra: Mapping[str, Any] | None = None, resolver: Resolver | None = None) -> Planned:
    """Resolves the runs of ``findings`` with ``extra`` overrides applied after each
    run's own, to each run that has the override's section (see
    :meth:`snarl.runs.Resolver.has_section`: ``isolation.confirm`` is set on the runs
    with isolation and leaves PFC alone's as they are, which then serve every value).
    Raises :class:`snarl.runs.RunError` naming the finding and run whose config is
    invalid."""
    from snarl.runs import Resolver

    resolver = resolver or Resolver()
    planned = Planned({})
    for finding in findings:
        planned.runs[finding.id] = _points(finding.runs, dict(extra or {}), resolver, planned, f"finding `{finding.id}`")
    return planned


def plan_controls(outcomes: Sequence[Outcome], extra: Mapping[str, Any] | None = None, resolver: Resolver | None = None) -> Planned:
    """Resolves the control runs of the findings that hold (a finding that does not
    hold needs no proof that it can fail), as :func:`plan` does; the control's runs
    are planned under the key ``<finding id>/<control index>``."""
    from snarl.runs import Resolver

    resolver = resolver or Resolver()
    planned = Planned({})
    for outcome in outcomes:
        if not outcome.holds:
            continue
        for index, control in enumerate(outcome.finding.controls):
            where = f"finding `{outcome.finding.id}`, control `{control.why}`"
            planned.runs[f"{outcome.finding.id}/{index}"] = _points(control.runs, dict(extra or {}), resolver, planned, where)
    return planned


def _points(runs: Mapping[str, RunRef], extra: dict[str, Any], resolver: Resolver, planned: Planned, where: str) -> dict[str, Point]:
    """Each run's point, with the ``extra`` overrides whose section it has."""
    from snarl.runs import RunError

    points = {}
    for name, ref in runs.items():
        try:
            own = ref.spec()
            applied = {k: v for k, v in extra.items() if resolver.has_section(own, k)}
            planned.applied.update(applied)
            points[name] = resolver.point(ref.spec(applied)) if applied else resolver.point(own)
        except RunError as e:
            raise RunError(f"{where}, run `{name}`: {e}") from None
    return points


def unused(planned: Planned, extra: Mapping[str, Any], what: str) -> None:
    """Refuses overrides that no run has the section of: a misspelt section, or a
    setting of a mechanism none of the runs has. ``what`` names them (``--set``)."""
    for key in extra:
        if key not in planned.applied:
            section = key.rsplit(".", 1)[0]
            raise FindingsError(
                f"{what} `{key}`: no run has the section `{section}`, so it would change nothing "
                "(a setting applies to the runs whose config has its section)"
            )


def evaluate_all(findings: Sequence[Finding], planned: Planned, results: Mapping[str, Result]) -> list[Outcome]:
    """Every finding evaluated on its planned runs' results (by run id)."""
    return [
        evaluate(f, {name: results[point.id] for name, point in planned.runs[f.id].items()}) for f in findings
    ]


def evaluate_controls(outcomes: Sequence[Outcome], planned: Planned, results: Mapping[str, Result]) -> None:
    """Fills each held finding's ``controls`` with the finding evaluated at its
    control runs (planned by :func:`plan_controls`)."""
    for outcome in outcomes:
        if not outcome.holds:
            continue
        outcome.controls = []
        for index, control in enumerate(outcome.finding.controls):
            points = planned.runs[f"{outcome.finding.id}/{index}"]
            try:
                at = evaluate(outcome.finding, {name: results[point.id] for name, point in points.items()}, values=False)
            except FindingsError as e:
                raise FindingsError(f"{e} (at its control `{control.why}`)") from None
            outcome.controls.append(ControlOutcome(control, at.holds, at.error))


def set_values(items: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``--set`` pairs as values: TOML values as what they are (``seed=3`` an integer, as
    a findings file's ``set`` has it), anything else as a string (``0us``)."""
    values = {}
    for key, text in items:
        try:
            values[key] = _tomllib.loads(f"v = {text}")["v"]
        except _tomllib.TOMLDecodeError:
            values[key] = text
    return values


def overridden(file: FindingsFile, extra: Mapping[str, Any]) -> list[str]:
    """Notes of what ``extra`` (``--set``) replaces: a run's own override, or a key the
    paper gives."""
    notes = []
    fixed = file.fixed_keys()
    for key in extra:
        if key in fixed:
            notes.append(f"--set {key}: {fixed[key]}; --set replaces it in every run")
    return notes


def write_report(out: Path, file: FindingsFile, outcomes: Sequence[Outcome], extra: Mapping[str, Any]) -> None:
    """``findings.json``: the file, the overrides, every outcome, the versions."""
    from snarl.sweep import _write_atomic, versions

    data = {
        "findings_file": str(file.path),
        "paper": file.paper,
        "set": dict(extra),
        "findings": [o.to_dict() for o in outcomes],
        "held": sum(1 for o in outcomes if o.holds),
        "total": len(outcomes),
        "versions": versions(),
    }
    _write_atomic(out / "findings.json", (json.dumps(data, indent=1, default=str) + "\n").encode("utf-8"))


def print_table(file: FindingsFile, outcomes: Sequence[Outcome], console: Any = None) -> None:
    """The findings as a rich table: finding, paper, the paper's value, snarl's, holds;
    then the errors, one line each."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=150)  # a file or a pipe: no reason to wrap at 80
    held = sum(1 for o in outcomes if o.holds)
    title = f"Findings of {file.paper or file.path.name}: {held} of {len(outcomes)} hold"
    table = Table(title=title, title_justify="left")
    controls = any(o.controls is not None for o in outcomes)
    for name in ("finding", "paper", "paper's value", "snarl's value", "holds") + (("controls",) if controls else ()):
        table.add_column(name, no_wrap=name in ("finding", "holds"), overflow="fold")
    for o in outcomes:
        colour = {True: "green", False: "red", None: "yellow"}[o.holds]
        row = [o.finding.id, o.finding.paper, o.finding.paper_value, o.value_text(), f"[{colour}]{o.holds_text()}[/{colour}]"]
        if controls:
            shown = o.controls_text()
            row.append(f"[red]{shown}[/red]" if o.unproven() else shown)
        table.add_row(*row)
    console.print(table)
    for o in outcomes:
        if o.error:
            console.print(f"{o.finding.id}: {o.error}", soft_wrap=True)


def markdown_table(file: FindingsFile, outcomes: Sequence[Outcome]) -> str:
    """The findings as the Markdown table docs/validation.md carries (generated, never
    hand-copied: a test compares the two)."""
    held = sum(1 for o in outcomes if o.holds)
    cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = [
        f"{held} of {len(outcomes)} findings hold.",
        "",
        "| finding | paper | paper's value | snarl's value | holds |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        row = (o.finding.id, o.finding.paper, o.finding.paper_value, o.value_text(), o.holds_text())
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"
