"""snarl: a deterministic packet-level simulator of congestion in lossless fabrics.

Describe an experiment in TOML (or a dict), run it, and get tidy tables back::

    import snarl

    report = snarl.run("experiment.toml", set={"traffic.load": 0.7}, seed=3)
    report.summary["accepted_load"]
    report.groups        # one row per node group
    report.timeseries    # throughput per time window and group

    table = snarl.sweep("sweep.toml", "out/sweep")   # many runs, one row per point

Errors derive from :class:`SnarlError`: :class:`ConfigError` (a ``ValueError`` whose
``path`` names the offending key), :class:`TopologyError`, :class:`DeadlockError` and
:class:`InternalError`. An interrupted run raises ``KeyboardInterrupt``. A sweep that
cannot run as described raises :class:`SweepError` before any point runs.

``snarl.sweep`` is the function; its module's helpers are imported with
``from snarl.sweep import load_spec, resolve_points, ...``. Figures are in
:mod:`snarl.plots`.

In a Jupyter notebook a report shows its headline figures and its throughput over time,
the figures of :mod:`snarl.plots` show as images (no ``%matplotlib`` needed), and
``snarl.run(..., progress=True)`` draws its bar in the cell (see
``docs/examples/quickstart.ipynb``).
"""

# First, so that the `snarl` command stops cleanly on Ctrl-C while the rest is imported.
from snarl._startup import guard_command_start_up

guard_command_start_up()

from snarl._core import (  # noqa: E402
    ConfigError,
    DeadlockError,
    InternalError,
    SnarlError,
    TopologyError,
)
from snarl._core import __version__ as __version__  # noqa: E402
from snarl.api import resolve_config, run  # noqa: E402
from snarl.report import Report  # noqa: E402
from snarl.sweep import SweepError  # noqa: E402
from snarl.sweep import sweep as sweep  # noqa: E402

__all__ = [
    "ConfigError",
    "DeadlockError",
    "InternalError",
    "Report",
    "SnarlError",
    "SweepError",
    "TopologyError",
    "__version__",
    "resolve_config",
    "run",
    "sweep",
]
