"""The Python entry points: :func:`run` and :func:`resolve_config`.

A config is given as a path to a ``.toml`` file, as TOML text, or as a dict shaped like
the TOML file. Overrides (``set=``) are a dict of dotted keys such as ``"traffic.load"``
or ``"traffic.groups.0.pattern.type"`` to Python values.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Union

from snarl import _core
from snarl.report import Report

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]
"""A path to a .toml file, TOML text, or a dict shaped like the TOML file."""

ProgressLike = Union[bool, None, Callable[[float], object]]
"""False/None: quiet; True: a progress bar (on stderr, or in the cell's output in a Jupyter
notebook); a callable: called with the fraction done."""

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _tomllib  # type: ignore[no-redef]


def run(
    config: ConfigLike,
    set: Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the command's --set
    seed: int | None = None,
    progress: ProgressLike = False,
    *,
    baseline: str | None = None,
) -> Report:
    """Simulates an experiment and returns its :class:`~snarl.Report`.

    Args:
        config: a path (``str`` or ``Path``) to an existing ``.toml`` file, TOML text, or
            a dict shaped like the TOML file.
        set: overrides, dotted key -> value, applied on top of ``config`` (like the
            command's ``--set``). Values are numbers, bools, strings or lists;
            ``"100Gbps"`` and ``"25ns"`` are written as strings.
        seed: replaces the config's seed.
        progress: ``True`` draws a progress bar on stderr, or in the cell's output
            when run in a Jupyter notebook (:class:`NotebookProgress`); a callable
            receives the fraction done (0..1) a few times per second.
        baseline: for a run of victim and aggressor jobs, the victims' mean times alone
            as JSON (``{"victim": 1234.5}``, in the run's time unit), as a sweep hands
            the one baseline it ran to the points that share it; without it such a run
            first runs its victims alone itself.

    Numbers and lists may be numpy scalars and arrays (``np.float64(0.5)``,
    ``np.linspace(...)``), here and in ``config``: they are taken as the Python values
    they hold.

    Raises:
        ConfigError: the config is invalid (``.path`` names the key), or its file cannot
            be read as UTF-8 text (a directory, binary data; ``.path`` is ``<file>``).
        TopologyError: the fabric cannot be built as described.
        DeadlockError: the run stopped making progress.
        FileNotFoundError: ``config`` names a ``.toml`` file that does not exist.
        KeyboardInterrupt: the run was interrupted (Ctrl-C).
    """
    text = config_text(config)
    overrides = overrides_from(set)
    seed = _check_seed(seed)
    if progress is True and in_notebook():
        bar = NotebookProgress("simulating", done="simulated")
        try:
            summary_json, resolved, tables, notes, headlines = _core.run(
                text, overrides, seed, bar.update, baseline, config_origin(config)
            )
        finally:
            bar.close()
    elif progress is True:
        from snarl.progress import progress_bar

        with progress_bar() as update:
            summary_json, resolved, tables, notes, headlines = _core.run(
                text, overrides, seed, update, baseline, config_origin(config)
            )
    else:
        callback = progress if callable(progress) else None
        summary_json, resolved, tables, notes, headlines = _core.run(
            text, overrides, seed, callback, baseline, config_origin(config)
        )
    return Report(summary_json, resolved, tables, notes, headlines)


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (a notebook, JupyterLab, VS Code's notebooks,
    Colab), where a progress bar is drawn in the cell's output rather than on stderr (a
    terminal's IPython is not one). IPython is not imported for the question."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython half imported or replaced: not a kernel we can draw in
        return False
    kind = type(shell)
    return shell is not None and (kind.__name__ == "ZMQInteractiveShell" or "google.colab" in kind.__module__)


class NotebookProgress:
    """A progress bar in a Jupyter cell's output: an HTML ``<progress>`` element updated
    in place through an IPython display handle (no ipywidgets needed; a frontend without
    HTML shows the same as a line of text).

    For a run, ``update(fraction)`` with ``total`` 1 (:func:`run` with ``progress=True``
    in a notebook); for counted work, ``update(done, failed)`` with ``total`` the count
    (``None`` until known) and ``unit`` its name
    (``NotebookProgress("sweep", total=8, unit="points")``). Called with ``(done,
    failed, total)`` it is the progress callback of a sweep:
    ``snarl.sweep(..., progress=NotebookProgress("sweep", total=None, unit="points"))``.
    :meth:`close` draws the final state, which stays in the output with the time taken.
    Drawn at most every ``interval`` seconds, and when the work is complete.
    """

    def __init__(
        self,
        description: str,
        total: float | None = 1.0,
        unit: str | None = None,
        done: str | None = None,
        interval: float = 0.2,
    ) -> None:
        from IPython.display import display

        self.description = description
        self.done = done or f"{description}: done"
        self.total = total
        self.unit = unit
        self.interval = interval
        self.completed: float = 0.0
        self.failed = 0
        self.start = time.monotonic()
        self.drawn = -math.inf
        self.closed = False
        # Outside a notebook there is no cell to draw in (IPython's display would print).
        self.handle = display(self._bundle(), raw=True, display_id=True) if in_notebook() else None
        self.drawn = time.monotonic()

    def update(self, completed: float, failed: int = 0) -> None:
        """Moves the bar to ``completed`` (of ``total``), ``failed`` of which failed."""
        self.completed = max(float(completed), 0.0)
        if self.total is not None:
            self.completed = min(self.completed, self.total)
        self.failed = failed
        now = time.monotonic()
        if now - self.drawn >= self.interval or (self.total is not None and self.completed >= self.total):
            self._draw(now)

    def __call__(self, *args: Any) -> None:
        """As :meth:`update`: the bar is itself a progress callback, of a run
        (``fraction``) or of a sweep (``done, failed, total``)."""
        if len(args) == 3:
            self.total = float(args[2])
            args = args[:2]
        self.update(*args)

    def close(self) -> None:
        """Draws the final state: the time taken if complete, else where it stopped."""
        if not self.closed:
            self.closed = True
            self._draw(time.monotonic())

    def _draw(self, now: float) -> None:
        self.drawn = now
        if self.handle is not None:
            self.handle.update(self._bundle(), raw=True)

    def _bundle(self) -> dict[str, str]:
        import html

        elapsed = time.monotonic() - self.start
        if self.total is None:
            fraction = 0.0
        else:
            fraction = self.completed / self.total if self.total > 0 else 1.0
        if self.unit is None:
            count = f"{fraction:.0%}"
        else:
            of = f"/{self.total:,.0f}" if self.total is not None else ""
            count = f"{self.completed:,.0f}{of} {self.unit} done, {self.failed:,} failed"
        complete = self.total is not None and fraction >= 1.0
        if complete:
            text = f"{self.done} in {_clock(elapsed)}" + (f" ({count})" if self.unit else "")
        else:
            # As the progress lines of runs and sweeps in logs: what is done, the time
            # elapsed, the time left at the pace so far (once it means something).
            timing = f"elapsed {_clock(elapsed)}"
            if 0.02 <= fraction < 1.0 and elapsed >= 1.0:
                timing += f" · ETA {_clock(elapsed * (1 - fraction) / fraction)}"
            colon = ":" if self.unit else ""
            text = f"{self.description}{colon} {count} · {timing}" + (" (stopped)" if self.closed else "")
        bar = (
            f'<progress value="{fraction:.4f}" max="1" style="width: 20em; vertical-align: middle"></progress> '
            if not complete
            else ""
        )
        return {
            "text/plain": text,
            "text/html": f'<div class="snarl-progress" style="font-family: monospace">{bar}{html.escape(text)}</div>',
        }


def _clock(seconds: float) -> str:
    """``83.2`` -> ``0:01:23``."""
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def resolve_config(
    config: ConfigLike,
    set: Mapping[str, Any] | None = None,  # noqa: A002
    seed: int | None = None,
) -> str:
    """Validates ``config`` (as :func:`run` takes it) and returns it fully resolved as TOML.

    Every default is written out, so the text describes the experiment completely.
    Raises :class:`~snarl.ConfigError` for an invalid config.
    """
    seed = _check_seed(seed)
    return _core.resolve_config(config_text(config), overrides_from(set), seed, config_origin(config))


def _check_seed(seed: object) -> int | None:
    """A seed is None or an integer (an int or a numpy integer) in [0, 2^64); returns it
    as an int."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise _config_error("seed", f"must be an integer in [0, 2^64), found {seed}")
    return seed


def config_text(config: ConfigLike) -> str:
    """The text handed to the core: TOML (a file's content or the string itself), or a
    JSON object for a dict."""
    if isinstance(config, Mapping):
        try:
            return json.dumps(_plain(config, ""), allow_nan=False)
        except _NotAValue as e:
            raise _config_error(e.path, str(e)) from None
    if isinstance(config, os.PathLike):
        return read_config_file(Path(config))
    if isinstance(config, str):
        if _looks_like_path(config):
            return read_config_file(Path(config))
        return config
    raise TypeError(f"config must be a path, TOML text or a dict, not {type(config).__name__}")


def config_origin(config: ConfigLike) -> str | None:
    """The directory a config's relative ``include`` paths are read from: its file's, if
    it is a path (the current directory otherwise)."""
    if isinstance(config, os.PathLike) or (isinstance(config, str) and _looks_like_path(config)):
        return str(Path(config).absolute().parent)
    return None


def read_config_file(path: Path) -> str:
    """The text of a config file. Raises ``FileNotFoundError`` if there is none, and a
    :class:`~snarl.ConfigError` (at ``<file>``, as for invalid TOML) if it cannot be read
    as UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        reason = "is a directory, not a TOML file"
    except UnicodeDecodeError as e:
        reason = f"not a UTF-8 text file ({e.reason} at byte {e.start})"
    except OSError as e:
        reason = f"cannot read: {e.strerror or e}"
    raise _config_error("<file>", f"{path}: {reason}")


def _looks_like_path(text: str) -> bool:
    """A one-line string is a path if it names a file or a directory, or if it ends in
    ``.toml`` (so a missing file is reported as such, not as bad TOML)."""
    if "\n" in text or "=" in text or "[" in text:
        return False
    return os.path.exists(text) or text.strip().endswith(".toml")


def overrides_from(values: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``{"traffic.load": 0.5}`` -> ``[("traffic.load", "0.5")]`` (values as TOML text)."""
    if not values:
        return []
    if not isinstance(values, Mapping):
        raise TypeError(f"set must be a dict of dotted keys to values, not {type(values).__name__}")
    return [(str(key), toml_value(value, key=str(key))) for key, value in values.items()]


def toml_value(value: Any, key: str = "", top: bool = True) -> str:
    """Writes a Python value as a TOML value.

    A string that is already a TOML value (``"0.5"``, ``"[1, 2]"``) is passed on as
    TOML; any other string is quoted. Inside lists and tables strings are always quoted.
    numpy scalars and arrays are written as the Python values they hold.
    """
    value = plain_value(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        if top and _is_toml_value(value):
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(str(k))} = {toml_value(v, f'{key}.{k}', top=False)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, f"{key}.{i}", top=False) for i, v in enumerate(value)) + "]"
    if value is None:
        raise _config_error(key, "None is not a value: leave the key out to get its default")
    raise _config_error(key, f"cannot write a {type(value).__name__} as a config value")


def _is_toml_value(text: str) -> bool:
    """Whether ``text`` is one TOML value (``0.5``, ``true``, ``[1, 2]``, ``"x"``) and
    nothing more: ``"0.5\\nload = 1"`` is a string, or the core would drop its second line."""
    try:
        parsed = _tomllib.loads(f"v = {text}")
    except _tomllib.TOMLDecodeError:
        return False
    return parsed.keys() == {"v"}


def plain_value(value: Any) -> Any:
    """A numpy scalar or array as the Python value(s) it holds (``np.float64(0.5)`` ->
    ``0.5``, an array -> a list); any other value as it is."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


class _NotAValue(Exception):
    """A value of a dict config that has no TOML form, with its key path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _plain(value: Any, path: str) -> Any:
    """A dict config as plain JSON-able data (paths as str, tuples as lists, numpy values
    as Python values)."""
    value = plain_value(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}.{i}") for i, v in enumerate(value)]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise _NotAValue(path, f"must be a finite number, found {value}")
    if value is None:
        raise _NotAValue(path, "None is not a value: leave the key out to get its default")
    if isinstance(value, (str, int, float, bool)):
        return value
    raise _NotAValue(path, f"cannot write a {type(value).__name__} as a config value")


def _config_error(path: str, message: str) -> _core.ConfigError:
    """A ConfigError shaped like the core's: message, ``.path`` and ``.message``."""
    error = _core.ConfigError(f"config error at `{path}`: {message}")
    error.path = path
    error.message = message
    return error
