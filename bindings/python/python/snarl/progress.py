"""Progress on stderr: a rich bar on a terminal, lines for logs elsewhere.

Off a terminal (a batch job's log, a pipe) a bar cannot redraw itself, so runs and sweeps
print a line every few seconds instead: what is done of the total, what failed, the time
elapsed and an estimate of the time left, so that a SLURM log shows the job alive.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

DEFAULT_INTERVAL = 5.0
"""Seconds between two progress lines for logs (``--progress-interval``)."""


@contextmanager
def progress_bar(description: str = "simulating") -> Iterator[Callable[[float], None]]:
    """Shows a progress bar on stderr; yields the callback that moves it (fraction 0..1).

    The bar shows the fraction done, the time elapsed and an estimate of the time left;
    it is removed when the block ends, so only the results stay on the terminal.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=1.0)

        def update(fraction: float) -> None:
            bar.update(task, completed=min(max(fraction, 0.0), 1.0))

        yield update


def duration(seconds: float | None) -> str:
    """``0:01:05``, ``12:00:00``, ``2 days, 3:04:05``; ``?`` for an unknown duration."""
    if seconds is None or seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "?"
    whole = max(int(round(seconds)), 0)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{days} day{'s' if days != 1 else ''}, {text}" if days else text


def remaining(elapsed: float, fraction: float) -> float | None:
    """The time left at a steady pace: ``elapsed`` took ``fraction`` of the work."""
    if fraction <= 0.0:
        return None
    return elapsed * max(1.0 - fraction, 0.0) / fraction


def _write(stream: TextIO | None, line: str) -> bool:
    """Writes one line; False if the stream is gone (a closed pipe: progress stops, the
    work goes on)."""
    try:
        print(line, file=stream if stream is not None else sys.stderr, flush=True)
    except (OSError, ValueError):
        return False
    return True


class RunLines:
    """Progress of one run for logs, as the run's progress callback (fraction done).

    Every ``interval`` seconds: ``snarl: simulating NAME: 37% · elapsed 0:00:12 · ETA
    0:00:20``. With ``tenths``, also ``snarl: simulating NAME: 0%`` as the simulation
    starts (the callback's first call), a bare line per tenth done and ``... 100%`` at the
    end. ``interval`` 0 or None: no timed lines.
    """

    def __init__(
        self,
        name: str,
        interval: float | None = DEFAULT_INTERVAL,
        tenths: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.prefix = f"snarl: simulating {name}"
        self.interval = interval or 0.0
        self.tenths = tenths
        self.stream = stream
        self.clock = clock
        self.started: float | None = None
        self.last = 0.0
        self.printed_tenth = -1
        self.alive = True

    def line(self, fraction: float, now: float) -> str:
        """The timed line at ``fraction`` done."""
        elapsed = now - (self.started if self.started is not None else now)
        return (
            f"{self.prefix}: {100 * fraction:.0f}% · elapsed {duration(elapsed)} · "
            f"ETA {duration(remaining(elapsed, fraction))}"
        )

    def __call__(self, fraction: float) -> None:
        if not self.alive:
            return
        fraction = min(max(fraction, 0.0), 1.0)
        now = self.clock()
        if self.started is None:
            self.started = self.last = now
        if self.tenths:
            tenth = min(int(fraction * 10), 10)
            if tenth > self.printed_tenth:
                self.printed_tenth = tenth
                self.last = now
                self.alive = _write(self.stream, f"{self.prefix}: {10 * tenth}%")
                return
        if self.interval > 0 and fraction < 1.0 and now - self.last >= self.interval:
            self.last = now
            self.alive = _write(self.stream, self.line(fraction, now))


class CountLines:
    """Progress of many runs for logs (a sweep's points): a line every ``interval``
    seconds from a thread of its own, whether or not a run ended meanwhile::

        snarl sweep: 12/60 points done, 1 failed · elapsed 0:01:05 · ETA 0:05:20

    The estimate counts the runs done since :meth:`start` (not those an earlier,
    resumed sweep did). ``update(done, failed)`` after each run; :meth:`close` stops the
    thread.
    """

    def __init__(
        self,
        label: str,
        total: int,
        done: int = 0,
        failed: int = 0,
        unit: str = "points",
        interval: float = DEFAULT_INTERVAL,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = self.done_before = done
        self.failed = failed
        self.unit = unit
        self.interval = interval
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> CountLines:
        """Starts the thread that prints the lines (none if ``interval`` is not > 0)."""
        self.started = self.clock()
        if self.interval > 0 and self.thread is None:
            self.thread = threading.Thread(target=self._tick, name="snarl-progress", daemon=True)
            self.thread.start()
        return self

    def update(self, done: int, failed: int) -> None:
        with self.lock:
            self.done, self.failed = done, failed

    def line(self, now: float | None = None) -> str:
        """The line for the present state."""
        with self.lock:
            done, failed = self.done, self.failed
        elapsed = (self.clock() if now is None else now) - self.started
        fresh, left = done - self.done_before, self.total - done
        eta = None if fresh <= 0 else elapsed * left / fresh
        if left <= 0:
            eta = 0.0
        return (
            f"{self.label}: {done}/{self.total} {self.unit} done, {failed} failed · "
            f"elapsed {duration(elapsed)} · ETA {duration(eta)}"
        )

    def _tick(self) -> None:
        while not self.stopped.wait(self.interval):
            if not _write(self.stream, self.line()):
                return

    def close(self) -> None:
        self.stopped.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join()
        self.thread = None
