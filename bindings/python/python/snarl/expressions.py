"""The expressions of findings files: a small, safe language over run summaries.

A finding says what snarl's runs must show as an expression, such as::

    dcqcn.groups.victims.accepted_load >= 2 * none.groups.victims.accepted_load
    max(dcqcn.tables.fabric.cnps) >= 8 * plus.isolation.peak_cnps_per_window

The text is parsed by Python's :mod:`ast` and only a short list of node kinds is
accepted: numbers, strings and booleans; ``+ - * / // % **`` and unary minus;
comparisons (chained, as in Python); ``and``, ``or``, ``not``; ``a if c else b``;
calls of :data:`FUNCTIONS`; and paths. A path starts with a run's name and goes down
the run's summary JSON by attributes (``dcqcn.counters.cnps_sent``) or subscripts for
keys that are not identifiers or list items (``r.groups["job-1"].fct.p99``,
``r.fct.buckets[0].flows``). Nothing is ever handed to :func:`eval`: a findings file
cannot run code, only read figures.

Paths are resolved by the caller's ``lookup`` (see :class:`Expression.evaluate`), so the
evaluator knows nothing of where summaries live; it checks the run names statically
(:meth:`Expression.runs`) so that a misspelt run is refused before anything runs.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]
"""A path as its parts: the run's name, then keys (str) and list indices (int)."""


class ExpressionError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why, and
    ``path`` names the path it concerns, if any."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class NoValue(ExpressionError):
    """A path whose value is null in the run (a percentile of no flows, say), or an
    operation without a result (a division by zero): the expression has no value at
    this run, which is the run's result, not a mistake of the file."""


def _mean(values: Any) -> float:
    items = _numbers(values, "mean")
    if not items:
        raise NoValue("mean() of no values")
    return sum(items) / len(items)


def _numbers(values: Any, name: str) -> list[Any]:
    if not isinstance(values, (list, tuple)):
        raise ExpressionError(f"{name}() takes a list (a table column, a summary list), found {describe(values)}")
    return list(values)


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[..., Any]:
    """min/max as in Python: of several values, or of one list (a table column)."""

    def call(*args: Any) -> Any:
        if len(args) == 1:
            items = _numbers(args[0], name)
            if not items:
                raise NoValue(f"{name}() of no values")
            return pick(items)
        if not args:
            raise ExpressionError(f"{name}() takes values or one list")
        return pick(args)

    return call


def _one(name: str, function: Callable[[Any], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        if len(args) != 1:
            raise ExpressionError(f"{name}() takes one argument, found {len(args)}")
        return function(args[0])

    return call


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": _extreme("min", min),
    "max": _extreme("max", max),
    "abs": _one("abs", abs),
    "sum": _one("sum", lambda values: sum(_numbers(values, "sum"))),
    "mean": _one("mean", _mean),
    "len": _one("len", lambda values: len(_numbers(values, "len"))),
}
"""The functions an expression may call. ``min``/``max`` take values or one list (a
table column such as ``r.tables.fabric.cnps``); ``sum``, ``mean`` and ``len`` a list."""

CONSTANTS = {"true": True, "false": False}
"""TOML's spelling of the booleans, beside Python's ``True`` and ``False``."""

RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS) | {"True", "False", "None"}
"""Names a run may not take: they mean something else in an expression."""

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def path_text(path: Sequence[str | int]) -> str:
    """``("r", "groups", "job-1", "fct")`` -> ``r.groups["job-1"].fct``."""
    text = str(path[0])
    for part in path[1:]:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}"
        else:
            text += f'["{part}"]'
    return text


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text and its checked syntax tree."""

    text: str
    tree: ast.expr

    def paths(self) -> list[Path]:
        """Every path the expression reads, in order."""
        found: list[Path] = []
        _collect_paths(self.tree, found)
        return found

    def runs(self) -> list[str]:
        """The run names the expression's paths start with, each once, in order."""
        return list(dict.fromkeys(str(path[0]) for path in self.paths()))

    def evaluate(self, lookup: Callable[[Path], Any]) -> Any:
        """The expression's value; ``lookup`` gives the value at a path (raising
        :class:`ExpressionError` for a path that does not exist).

        Raises :class:`NoValue` when a path is null or an operation has no result, and
        :class:`ExpressionError` for anything else that goes wrong."""
        return _Evaluator(lookup).value(self.tree)


def parse(text: str) -> Expression:
    """Parses and checks an expression. Raises :class:`ExpressionError` for a syntax
    error or a construct the language does not have (an unknown function, a lambda, a
    keyword argument...)."""
    if not isinstance(text, str):
        raise ExpressionError(f"must be an expression in a string, found {describe(text)}")
    if not text.strip():
        raise ExpressionError("is empty: give an expression")
    # One line: a long expression may span lines of a TOML multi-line string.
    text = " ".join(text.split())
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as e:
        where = f" at column {e.offset}" if e.offset else ""
        raise ExpressionError(f"`{text}` is not an expression{where}: {e.msg}") from None
    _check(tree)
    return Expression(text, tree)


def _check(node: ast.AST) -> None:
    """Refuses every node the language does not have, naming it."""
    if isinstance(node, ast.Constant):
        if node.value is None or not isinstance(node.value, (bool, int, float, str)):
            raise ExpressionError(f"`{ast.unparse(node)}` is not a number, a string or a boolean")
        return
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        _path_of(node)
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left)
        _check(node.right)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        _check(node.operand)
        return
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value)
        return
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        for value in (node.left, *node.comparators):
            _check(value)
        return
    if isinstance(node, ast.IfExp):
        for value in (node.test, node.body, node.orelse):
            _check(value)
        return
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS:
            what = f"`{name}`" if name else f"`{ast.unparse(node.func)}`"
            suggestion = hint(name, FUNCTIONS)
            raise ExpressionError(f"unknown function {what}{suggestion} (functions: {', '.join(FUNCTIONS)})")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError(f"`{ast.unparse(node)}`: functions take plain arguments")
        for argument in node.args:
            _check(argument)
        return
    raise ExpressionError(
        f"`{ast.unparse(node)}` is not part of the language (numbers, paths into run summaries, "
        f"arithmetic, comparisons, and/or/not, {', '.join(FUNCTIONS)})"
    )


def _path_of(node: ast.expr) -> Path | None:
    """The path a Name/Attribute/Subscript chain spells (None for a constant name such as
    ``true``). Raises :class:`ExpressionError` for any other shape."""
    parts: list[str | int] = []
    current = node
    while True:
        if isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        elif isinstance(current, ast.Subscript):
            key = current.slice
            if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub) and isinstance(key.operand, ast.Constant):
                key = ast.Constant(-key.operand.value) if type(key.operand.value) is int else key  # [-1]: the last
            if not (isinstance(key, ast.Constant) and isinstance(key.value, (str, int)) and not isinstance(key.value, bool)):
                raise ExpressionError(
                    f"`{ast.unparse(current)}`: a subscript is a key in quotes or a list index, e.g. "
                    '`r.groups["job-1"]` or `r.fct.buckets[0]`'
                )
            parts.append(key.value)
            current = current.value
        elif isinstance(current, ast.Name):
            if current.id in FUNCTIONS:
                raise ExpressionError(f"`{current.id}` is a function: call it, `{current.id}(...)`")
            if current.id in CONSTANTS or current.id in ("True", "False"):
                if parts:
                    raise ExpressionError(f"`{ast.unparse(node)}`: `{current.id}` is a boolean, not a run")
                return None
            parts.append(current.id)
            return tuple(reversed(parts))
        else:
            raise ExpressionError(f"`{ast.unparse(node)}` is not a path: a path starts with a run's name")


def _collect_paths(node: ast.AST, found: list[Path]) -> None:
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        path = _path_of(node)  # type: ignore[arg-type]
        if path is not None:
            found.append(path)
        return
    children = node.args if isinstance(node, ast.Call) else ast.iter_child_nodes(node)  # not the function's name
    for child in children:
        _collect_paths(child, found)


class _Evaluator:
    """Walks a checked tree (see :func:`_check`)."""

    def __init__(self, lookup: Callable[[Path], Any]) -> None:
        self.lookup = lookup

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            path = _path_of(node)
            if path is None:  # true, false, True, False
                return node.id in ("true", "True")  # type: ignore[union-attr]
            found = self.lookup(path)
            if found is None:
                raise NoValue(f"`{path_text(path)}` is null in the run (no value)", path_text(path))
            return found
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(self.truth(v) for v in node.values)
            return any(self.truth(v) for v in node.values)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return not self.truth(node.operand)
            operand = self.number(node.operand)
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.BinOp):
            left, right = self.number(node.left), self.number(node.right)
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
                raise NoValue(f"`{ast.unparse(node)}` divides by zero")
            if isinstance(node.op, ast.Pow) and abs(right) > 1024:
                raise ExpressionError(f"`{ast.unparse(node)}`: an exponent beyond 1024")
            try:
                return _BINARY[type(node.op)](left, right)
            except (OverflowError, ValueError) as e:
                raise NoValue(f"`{ast.unparse(node)}`: {e}") from None
        if isinstance(node, ast.Compare):
            left = self.value(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.value(right_node)
                if not _comparable(left, right, op):
                    raise ExpressionError(
                        f"`{ast.unparse(node)}`: cannot compare {describe(left)} {_SYMBOLS[type(op)]} {describe(right)}"
                    )
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.value(node.body) if self.truth(node.test) else self.value(node.orelse)
        if isinstance(node, ast.Call):
            name = node.func.id  # type: ignore[attr-defined]
            args = [self.value(a) for a in node.args]
            try:
                return FUNCTIONS[name](*args)
            except TypeError as e:
                raise ExpressionError(f"`{ast.unparse(node)}`: {e}") from None
        raise ExpressionError(f"`{ast.unparse(node)}` is not part of the language")  # pragma: no cover - _check

    def number(self, node: ast.expr) -> Any:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ExpressionError(f"`{ast.unparse(node)}` is {describe(value)}, not a number")
        if isinstance(value, float) and math.isnan(value):
            raise NoValue(f"`{ast.unparse(node)}` is not a number (NaN)")
        return value

    def truth(self, node: ast.expr) -> bool:
        value = self.value(node)
        if not isinstance(value, bool):
            raise ExpressionError(
                f"`{ast.unparse(node)}` is {describe(value)}, not true or false: and/or/not/if take comparisons"
            )
        return value


def _comparable(left: Any, right: Any, op: ast.cmpop) -> bool:
    numeric = (int, float)
    if isinstance(left, numeric) and isinstance(right, numeric):
        return True
    if isinstance(op, (ast.Eq, ast.NotEq)):
        return type(left) is type(right) or (isinstance(left, numeric) and isinstance(right, numeric))
    return isinstance(left, str) and isinstance(right, str)


def describe(value: Any) -> str:
    """What a value is, for messages: ``a table of keys (fct, groups, ...)``, ``the string "x"``."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:8]) + (", ..." if len(value) > 8 else "")
        return f"a table of keys ({keys})"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} values"
    return type(value).__name__


def closest(found: str, valid: Iterable[str]) -> str | None:
    """The valid name nearest ``found`` by Damerau-Levenshtein distance, if it is near
    enough (at most half the longer name, and at least 2): the rule of the core's
    ``error::closest``, so that snarl suggests names alike everywhere."""
    best: tuple[int, str] | None = None
    for name in valid:
        distance = _distance(found, name)
        if distance <= max(max(len(name), len(found)) // 2, 2) and (best is None or distance < best[0]):
            best = (distance, name)
    return best[1] if best else None


def hint(found: str | None, valid: Iterable[str]) -> str:
    """``; did you mean `x`?`` when a valid name is near ``found``, else nothing."""
    name = closest(found, valid) if found else None
    return f"; did you mean `{name}`?" if name else ""


def _distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment: adjacent transpositions)."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]
