"""A rich progress bar for runs, drawn on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(description: str = "simulating") -> Iterator[Callable[[float], None]]:
    """Shows a progress bar on stderr; yields the callback that moves it (fraction 0..1).

    The bar is removed when the block ends, so only the results stay on the terminal.
    """
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=1.0)

        def update(fraction: float) -> None:
            bar.update(task, completed=min(max(fraction, 0.0), 1.0))

        yield update
