"""The ``snarl`` command.

``snarl run FILE.toml [--set dotted.key=value ...] [--seed N] [--json] [--out DIR] [--progress-interval S]``
``snarl sweep SWEEP.toml --out DIR [--workers N | --scheduler ADDRESS | --processes N | --slurm ...] [--dry-run]``
  (``--slurm --jobs N --cores N --memory SIZE [--walltime T] [--queue P] [--account A]``:
  Dask workers as SLURM batch jobs; ``--slurm --dry-run`` prints the job script)
``snarl check FILE.toml [--set k=v ...] [--seed N] [--all] [--resolved]`` (validates a
  scenario, a fabric preset or a sweep file and prints what it would run, running nothing)
``snarl plot KIND DIR [-o FILE] [--title T] [--xlabel T] [--ylabel T] [--logx] [--logy] [--size WxH]``
  (KIND: one of the kinds of ``snarl.plotkinds``, listed by ``snarl plot --help``: load-curve,
  timeseries, heatmap, ..., timeline; queues: the probed queues per window; tree: congestion
  trees window by window, an animated GIF and a strip, ``--at TIME`` one window)
``snarl plot mechanisms DIR [DIR ...] [-o FILE] [--group NAME] [--labels a,b,...] [--title TEXT]``
  (congestion-management mechanisms side by side, a run per ``snarl run --out`` DIR named
  by its directory less the prefix all share, or a point per run of one sweep DIR: the
  group's throughput and CNPs per window, and its FCT p50, p95, p99)
``snarl report DIR [DIR ...] [-o report.html]`` (sweep directories, or run directories: a
  run's page, as ``snarl compare`` writes it)
``snarl compare RUN_OR_SWEEP ... [-o page.html] [--name NAME ...]`` (runs side by side: their
  summaries with differences to the first, throughput, FCTs and congestion trees overlaid;
  a sweep gives its points; without -o, the table on the terminal; see snarl.compare)
``snarl findings FINDINGS.toml [--out DIR] [--set k=v ...] [--json]`` (a paper's findings: the
  paper's value, snarl's, and whether each holds; see snarl.findings)
``snarl calibrate FINDINGS.toml --space SPACE.toml --out DIR [--points N] [--method grid|random|sobol]``
  (search the parameters the paper leaves unstated for where its findings hold; see snarl.calibrate)

Off a terminal (a batch job's log, a pipe), ``snarl run`` and ``snarl sweep`` print a
progress line on stderr every ``--progress-interval`` seconds (default 5; 0: none).

Exit codes: 0 success; 2 bad input (unreadable file, invalid config, impossible fabric,
bad arguments), with one line ``snarl: error: ...`` on stderr and nothing written;
3 deadlock; 4 a sweep whose table holds failed points, or runs of ``snarl findings`` or
``snarl calibrate`` that failed (each recorded with its error; ``--retry-failed`` runs them
again); 1 internal error; 130 interrupted (Ctrl-C, SIGINT);
143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_DEADLOCK = 3
EXIT_POINTS_FAILED = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143



class Failure(Exception):
    """Ends the command with a one-line message on stderr and an exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT, one_line: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.one_line = one_line


class Terminated(KeyboardInterrupt):
    """SIGTERM: stops the command as Ctrl-C does (cleanly: a sweep keeps its finished
    points and its table), with exit code 143."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        """Reports a usage error as a :class:`Failure` (one line, exit 2)."""
        raise Failure(message)


class _ListFormatter(argparse.HelpFormatter):
    """Fills each line of a description or an epilog on its own, so that a list keeps a
    line per entry: an indented ``name  text`` line wraps its text under itself."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re
        import textwrap

        lines = []
        for line in text.splitlines():
            hanging = re.match(r"\s+\S+\s+", line)
            lines.append(textwrap.fill(
                line, width, initial_indent=indent, subsequent_indent=indent + " " * (hanging.end() if hanging else 0),
                break_on_hyphens=False,
            ))
        return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    """The command line: ``snarl [--version] run FILE.toml [options]``."""
    from snarl import __version__

    parser = _Parser(
        prog="snarl",
        description="Deterministic packet-level simulation of congestion in lossless fabrics.",
    )
    parser.add_argument("--version", action="version", version=f"snarl {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = commands.add_parser(
        "run",
        help="simulate one experiment",
        description="Simulate the experiment described by a TOML file and print its summary.",
    )
    run.add_argument("file", metavar="FILE.toml", help="the experiment")
    run.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config value by its dotted key, e.g. --set traffic.load=0.7 (repeatable)",
    )
    run.add_argument("--seed", type=_seed, help="replace the config's seed")
    run.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON object on stdout, and nothing else",
    )
    run.add_argument(
        "--progress",
        action="store_true",
        help="report progress on stderr even when it is not a terminal: a line as the simulation starts, then one per tenth done",
    )
    _progress_interval_argument(run)
    run.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="write summary.json, config.toml (fully resolved) and every table of the run as NAME.parquet "
        "(timeseries.parquet, ...) to DIR, replacing an earlier --out of snarl run there",
    )
    run.set_defaults(handler=_run)

    sweep = commands.add_parser(
        "sweep",
        help="run an experiment over a grid of overrides",
        description=(
            "Run every point of a sweep file (a base experiment, [axes] combined as a product, "
            "[zip] lists varied together, fixed [set] overrides) on local processes or a Dask "
            "cluster. Each finished point is written at once; running the sweep again in the "
            "same directory computes only the missing points."
        ),
    )
    sweep.add_argument("file", metavar="SWEEP.toml", help="the sweep file")
    sweep.add_argument("--out", metavar="DIR", type=Path, required=True, help="the results directory")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive, metavar="N", help="run on a new local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster of this scheduler (tcp://host:8786)")
    where.add_argument("--processes", type=_positive, metavar="N", help="local worker processes (default: one per CPU)")
    where.add_argument(
        "--slurm", action="store_true",
        help="run on Dask workers started as SLURM batch jobs (dask-jobqueue: pip install 'snarl[slurm]'); "
        "the scheduler runs in this process, on the login node",
    )
    slurm = sweep.add_argument_group("SLURM (with --slurm)")
    slurm.add_argument("--jobs", type=_positive, metavar="N", help="batch jobs to start (default 1)")
    slurm.add_argument("--cores", type=_positive, metavar="N", help="cores per job: as many single-threaded workers, one simulation each")
    slurm.add_argument("--memory", type=_slurm_value("memory"), metavar="SIZE", help="memory per job, e.g. 64GB")
    slurm.add_argument("--walltime", type=_slurm_value("walltime"), metavar="TIME", help="time limit per job, e.g. 04:00:00 or 1-00:00:00")
    slurm.add_argument("--queue", type=_slurm_value("name"), metavar="PARTITION", help="the partition (#SBATCH -p)")
    slurm.add_argument("--account", type=_slurm_value("name"), metavar="ACCOUNT", help="the account charged (#SBATCH -A)")
    sweep.add_argument("--retry-failed", action="store_true", help="run again the points recorded as failed")
    sweep.add_argument("--force", action="store_true", help="replace the points of another sweep that DIR holds")
    sweep.add_argument(
        "--dry-run", action="store_true",
        help="check the sweep and say what would run, running nothing; with --slurm, print the job script",
    )
    _progress_interval_argument(sweep)
    sweep.set_defaults(handler=_sweep)

    check = commands.add_parser(
        "check",
        help="validate a scenario or a sweep file and print what it would run",
        description=(
            "Validate a scenario (or a fabric preset that scenarios include) or a sweep file with the checks "
            "`snarl run` and `snarl sweep` make, and print what it would run: a scenario's resolved config in "
            "short; a sweep's points, axes and first point. Nothing runs and nothing is written."
        ),
    )
    check.add_argument("file", metavar="FILE.toml", help="a scenario, a fabric preset or a sweep file")
    check.add_argument(
        "--set", dest="overrides", metavar="KEY=VALUE", action="append", default=[],
        help="override a config value of a scenario, as for snarl run (repeatable)",
    )
    check.add_argument("--seed", type=_seed, help="replace a scenario's seed")
    check.add_argument("--all", action="store_true", help="list every point of a sweep (default: the first ten)")
    check.add_argument(
        "--resolved", action="store_true",
        help="print the whole resolved config (of a sweep: of its first point) as TOML on stdout",
    )
    check.set_defaults(handler=_check)

    from snarl.plotkinds import kinds

    plot_kinds = kinds()
    width = max(len(name) for name in plot_kinds)
    plot = commands.add_parser(
        "plot",
        help="plot the results of a sweep or a run",
        description="Plot a sweep directory (or a `snarl run --out` directory) as PNG, SVG or PDF "
        "(tree: an animated GIF too).",
        epilog="kinds:\n" + "\n".join(f"  {k.name:<{width}}  {k.help}" for k in plot_kinds.values()),
        formatter_class=_ListFormatter,
    )
    plot.add_argument("kind", metavar="KIND", choices=list(plot_kinds), help="what to draw: one of the kinds below")
    plot.add_argument(
        "dir", metavar="DIR", type=Path, nargs="+",
        help="a sweep directory or a run's --out directory (mechanisms: several run directories, or one sweep)",
    )
    plot.add_argument("-o", "--output", metavar="FILE", type=Path, help="the figure (.png, .svg or .pdf; default DIR/KIND.png, in the first DIR)")
    plot.add_argument("--x", help="column on the x axis")
    plot.add_argument("--y", help="column on the y axis")
    plot.add_argument("--hue", help="column(s), comma-separated, whose values get one curve each")
    plot.add_argument("--value", help="column shown (heatmap, cdf)")
    plot.add_argument("--style", help="column whose values get a line style each, the off value dashed (load-curve)")
    plot.add_argument(
        "--ref", help="column drawn as a dotted reference line per curve, e.g. a bound the summary holds (load-curve)"
    )
    plot.add_argument("--point", metavar="ID", help="the point whose time series or FCTs are plotted (timeseries, fct)")
    plot.add_argument("--group", action="append", help="node group(s) plotted (timeseries, cdf; repeatable; mechanisms: one, default victims where every run has it, else all; timeline: the job, default the first)")
    plot.add_argument("--labels", metavar="A,B,...", help="the legend's names of the runs, in order (mechanisms; default: the directory names less their common prefix)")
    plot.add_argument("--title", help="the figure's title (mechanisms: default the common prefix of the directory names, or the sweep's name)")
    plot.add_argument("--xlabel", help="the x axis' label (every panel that has one)")
    plot.add_argument("--ylabel", help="the y axis' label (every panel that has one)")
    plot.add_argument("--logx", action="store_true", help="a log scale on x")
    plot.add_argument("--logy", action="store_true", help="a log scale on y")
    plot.add_argument("--size", metavar="WxH", help="the figure's size in inches, e.g. --size 8x5")
    plot.add_argument(
        "--where",
        action="append",
        metavar="KEY=VALUE",
        help="keep the points of a sweep with this value of a column, e.g. --where traffic.load=0.5 (repeatable)",
    )
    for plot_kind in plot_kinds.values():
        if plot_kind.arguments is not None:
            plot_kind.arguments(plot)
    plot.set_defaults(handler=_plot)

    report = commands.add_parser(
        "report",
        help="write a self-contained HTML report of a sweep or a run",
        description=(
            "Write one HTML page (figures embedded) of one or more sweep directories, or of run directories "
            "(`snarl run --out`: a run's page; several: side by side, as `snarl compare`), that opens offline."
        ),
    )
    report.add_argument(
        "dir", metavar="DIR", type=Path, nargs="+",
        help="a sweep directory (several: one section each) or a run's --out directory",
    )
    report.add_argument(
        "-o", "--output", metavar="FILE", type=Path,
        help="the page (default: report.html in the first sweep DIR; of run directories, DIR.html beside the first)",
    )
    report.set_defaults(handler=_report)

    compare = commands.add_parser(
        "compare",
        help="put runs side by side: one table, overlaid figures",
        description=(
            "Compare runs: their summaries in one table with each run's difference to the first, the config keys "
            "that differ, and (with -o) one HTML page with throughput over time per group, FCT distributions and "
            "congestion-tree sizes overlaid. Each argument is a `snarl run --out` directory (a run, named by its "
            "directory) or a `snarl sweep --out` directory (each successful point a run, named by its values)."
        ),
    )
    compare.add_argument("dir", metavar="RUN_OR_SWEEP", type=Path, nargs="+", help="a run's or a sweep's --out directory")
    compare.add_argument(
        "-o", "--output", metavar="FILE", type=Path,
        help="write the comparison as one self-contained HTML page (default: print the table on the terminal)",
    )
    compare.add_argument(
        "--name", dest="names", metavar="NAME", action="append",
        help="the name of each argument's run, in order: once per RUN_OR_SWEEP (a sweep's points get it as a prefix)",
    )
    compare.set_defaults(handler=_compare)

    findings = commands.add_parser(
        "findings",
        help="check a paper's findings against snarl's runs",
        description=(
            "Run the runs a findings file needs (each distinct run once, cached in --out), evaluate every "
            "finding and print the paper's value beside snarl's, and whether the finding holds. With "
            "--controls, run each held finding's controls too (its mechanism switched off: it must not hold "
            "there). The exit code is 0 whether the findings hold or not: it is a report."
        ),
    )
    findings.add_argument("file", metavar="FINDINGS.toml", help="the findings file")
    findings.add_argument("--out", metavar="DIR", type=Path, help="keep the runs (and findings.json) here; again, only the missing runs run")
    findings.add_argument(
        "--set", dest="overrides", metavar="KEY=VALUE", action="append", default=[],
        help="override a config value in every run that has its section, e.g. --set switch.input_buffer=64KiB (repeatable)",
    )
    findings.add_argument(
        "--controls", action="store_true",
        help="also run the controls of the findings that hold, and show whether each fails there (as it must)",
    )
    output = findings.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the findings as one JSON object on stdout")
    output.add_argument("--markdown", action="store_true", help="print the findings as a Markdown table (as docs/validation.md has them)")
    _runner_arguments(findings)
    findings.set_defaults(handler=_findings)

    calibrate = commands.add_parser(
        "calibrate",
        help="search unstated parameters for where a paper's findings hold",
        description=(
            "Run every point of a parameter space (each sets its values on the runs of the findings not "
            "held out that have the keys' sections), report where the findings hold, which pairs never hold together and the held-out "
            "findings at the best point; write DIR/calibration.{parquet,csv,json,png}. Runs are cached in "
            "DIR: again, only the missing runs run."
        ),
    )
    calibrate.add_argument("file", metavar="FINDINGS.toml", help="the findings file")
    calibrate.add_argument("--space", metavar="SPACE.toml", type=Path, required=True, help="the parameters searched, and the held-out findings")
    calibrate.add_argument("--out", metavar="DIR", type=Path, required=True, help="the run cache and the results")
    calibrate.add_argument("--points", type=_positive, metavar="N", help="random, sobol: the points (default 16); grid: at most N (ranges get as many steps as fit)")
    calibrate.add_argument("--method", choices=("grid", "random", "sobol"), default="grid", help="how points are chosen (default grid)")
    _runner_arguments(calibrate)
    calibrate.set_defaults(handler=_calibrate)
    return parser


def _runner_arguments(parser: argparse.ArgumentParser) -> None:
    """Where runs run, as for ``snarl sweep``, and --retry-failed."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive, metavar="N", help="run on a new local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster of this scheduler (tcp://host:8786)")
    where.add_argument("--processes", type=_positive, metavar="N", help="local worker processes (default: one per CPU)")
    parser.add_argument("--retry-failed", action="store_true", help="run again the runs recorded as failed")


def _progress_interval_argument(parser: argparse.ArgumentParser) -> None:
    """``--progress-interval SECONDS``: the time between two progress lines for logs."""
    parser.add_argument(
        "--progress-interval", type=_interval, metavar="SECONDS", default=5.0,
        help="when stderr is not a terminal (a batch job's log), print a progress line (done, failed, "
        "elapsed, ETA) every SECONDS (default 5; 0: none)",
    )


def _interval(text: str) -> float:
    """A non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid interval {text!r}: expected seconds, e.g. 5 or 0.5") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"invalid interval {text}: expected seconds >= 0")
    return value


def _slurm_value(kind: str) -> Callable[[str], str]:
    """An argument type checking a SLURM option (memory, walltime, a name) as
    :class:`snarl.sweep.Slurm` does."""

    def parse(text: str) -> str:
        from snarl.sweep import slurm_memory, slurm_name, slurm_walltime

        check = {"memory": slurm_memory, "walltime": slurm_walltime, "name": slurm_name}[kind]
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return parse


def _positive(text: str) -> int:
    """A positive integer argument."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: expected a positive integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text}: expected a positive integer")
    return value


def _seed(text: str) -> int:
    """Parses ``--seed``: an integer in [0, 2^64) (decimal, or 0x.. hexadecimal)."""
    try:
        seed = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected a non-negative integer") from None
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"invalid seed {text}: expected an integer in [0, 2^64)")
    return seed


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``snarl`` command and returns its exit code."""
    previous = _stop_handlers()
    try:
        # Until here, Ctrl-C ends the process at once (snarl._startup): nothing is written.
        _handle_stop_signals(previous)
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help(sys.stderr)
            return EXIT_BAD_INPUT
        return int(args.handler(args))
    except Failure as failure:
        _error(str(failure), failure.one_line)
        return failure.code
    except Terminated:
        print("snarl: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("snarl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `snarl run x.toml --json | head`): not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


_stop_signal: int | None = None
"""The stop signal (SIGINT or SIGTERM) the command has received, if any."""


def _stop_handlers() -> dict[int, Any]:
    """The handlers of the stop signals the command replaces while it runs: none off the
    main thread (only it handles signals), nor an ignored one (a background job of a
    script)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    return {number: h for number, h in handlers.items() if h is not None and h is not signal.SIG_IGN}


def _handle_stop_signals(numbers: Iterable[int]) -> None:
    global _stop_signal
    _stop_signal = None
    for number in numbers:
        signal.signal(number, _stop)


def _stop(signum: int, frame: object) -> None:
    """A stop signal raises KeyboardInterrupt (:class:`Terminated` for SIGTERM), which
    unwinds the command cleanly: a run checks for it as it goes, a sweep writes its
    table. A second one ends the process at once."""
    global _stop_signal
    if _stop_signal is not None:
        os.write(2, b"snarl: stopped at once\n")
        os._exit(128 + _stop_signal)
    _stop_signal = signum
    _check_stop()


def _check_stop() -> None:
    """Raises the exception of the stop signal received, if any: again, in case the code
    it interrupted swallowed it (``compile()``, importing a module, can)."""
    if _stop_signal == signal.SIGTERM:
        raise Terminated
    if _stop_signal is not None:
        raise KeyboardInterrupt


def _error(message: str, one_line: bool = True) -> None:
    """Writes ``snarl: error: <message>`` on stderr, as one line unless told otherwise."""
    if one_line:
        message = " ".join(message.split())
    print(f"snarl: error: {message.rstrip()}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    """``snarl run``: check the input, simulate, write --out, print the summary."""
    from snarl import _core
    from snarl.report import Report

    overrides = [_parse_override(item) for item in args.overrides]
    text = _read_config(args.file)
    if args.out is not None:
        _check_out(args.out)

    name = Path(args.file).name
    # Relative `include` paths are read from the file's directory.
    origin = str(Path(args.file).absolute().parent)
    _check_stop()
    try:
        if sys.stderr.isatty():
            from snarl.progress import progress_bar

            with progress_bar(f"simulating {name}") as update:
                outputs = _core.run(text, overrides, args.seed, _checking(update), None, origin)
        else:
            # For logs: a timed line (done, elapsed, ETA) every --progress-interval
            # seconds; with --progress also the start and a line per tenth.
            from snarl.progress import RunLines

            lines = RunLines(name, args.progress_interval, tenths=args.progress)
            outputs = _core.run(text, overrides, args.seed, _checking(lines), None, origin)
    except (_core.ConfigError, _core.TopologyError) as e:
        raise Failure(str(e), EXIT_BAD_INPUT) from None
    except _core.DeadlockError as e:
        # The report of blocked ports may span lines: keep them.
        raise Failure(str(e), EXIT_DEADLOCK, one_line=False) from None
    except _core.SnarlError as e:
        raise Failure(f"{e} (this is a bug in snarl)", EXIT_INTERNAL) from None

    report = Report(*outputs)
    _check_stop()
    if args.out is not None:
        _write_out(report, args.out)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
        sys.stdout.flush()
    else:
        _print_tables(report, args.file)
    return EXIT_OK


def _checking(update: Callable[[float], None] | None) -> Callable[[float], None]:
    """The run's progress callback: checks for a stop signal (the run calls back every
    ~150 ms), then moves the bar or prints the lines of ``update``, if any."""

    def callback(fraction: float) -> None:
        _check_stop()
        if update is not None:
            update(fraction)

    return callback


def _sweep(args: argparse.Namespace) -> int:
    """``snarl sweep``: check the whole sweep, then run the missing points."""
    from snarl.sweep import Slurm, SweepError, duplicates_text, execute, plan, slurm_job_script

    slurm_options = {
        name: getattr(args, name) for name in ("jobs", "cores", "memory", "walltime", "queue", "account")
    }
    if not args.slurm:
        given = [name for name, value in slurm_options.items() if value is not None]
        if given:
            raise Failure(f"--{given[0]} sets a SLURM job: it needs --slurm")
    try:
        slurm = None
        if args.slurm:
            slurm = Slurm.of({**{k: v for k, v in slurm_options.items() if v is not None}, "jobs": args.jobs or 1})
            _need_slurm_support()
        checked = plan(args.file, args.out, retry_failed=args.retry_failed, force=args.force)
        if args.dry_run:
            # What would run, and where; with --slurm, the job script each job would run.
            total, todo = len(checked.points), len(checked.todo)
            script = slurm_job_script(slurm) if slurm is not None else None
            where = slurm.describe() if slurm is not None else _runner_text(args, todo)
            print(
                f"snarl sweep: dry run: {total} point{'s' if total != 1 else ''}{duplicates_text(checked.points)}, "
                f"{total - todo} already done, {todo} would run on {where}",
                file=sys.stderr, flush=True,
            )
            if script is not None:
                sys.stdout.write(script)
                sys.stdout.flush()
            return EXIT_OK

        def announce(runner: str | None) -> None:
            # Once the runner is up and the directory ours: the sweep's readiness line.
            _check_stop()
            total, todo = len(checked.points), len(checked.todo)
            where = f" on {runner}" if runner else ""
            print(
                f"snarl sweep: {total} point{'s' if total != 1 else ''}{duplicates_text(checked.points)}, "
                f"{total - todo} already done, {todo} to run{where}",
                file=sys.stderr,
                flush=True,
            )

        def dashboard(address: str | None) -> None:
            # Once, on a Dask cluster: where to watch the workers.
            if address:
                print(f"snarl sweep: Dask dashboard at {address}", file=sys.stderr, flush=True)
            else:
                print("snarl sweep: the Dask scheduler serves no dashboard (it needs bokeh)", file=sys.stderr, flush=True)

        table = execute(
            checked,
            workers=args.workers,
            scheduler=args.scheduler,
            processes=args.processes,
            # A bar on a terminal, else a line every --progress-interval seconds.
            progress=sys.stderr.isatty() or args.progress_interval > 0,
            on_start=announce,
            slurm=slurm,
            progress_interval=args.progress_interval,
            on_dashboard=dashboard,
        )
    except SweepError as e:
        raise Failure(str(e)) from None
    except OSError as e:
        # A full disk, say: each point is written whole or not at all, so the sweep resumes.
        raise Failure(
            f"--out {args.out}: cannot write the results: {e.strerror or e}; the points recorded so far "
            "are kept: run the same command again to resume"
        ) from None
    failed = int((table["status"] != "ok").sum()) if len(table) else 0
    print(f"{len(table)} points ({failed} failed) in {args.out / 'points.parquet'}")
    return EXIT_POINTS_FAILED if failed else EXIT_OK


def _check(args: argparse.Namespace) -> int:
    """``snarl check``: validate a scenario, a preset or a sweep file; say what it would run."""
    from snarl import ConfigError, TopologyError
    from snarl.check import CheckError, check
    from snarl.sweep import SweepError

    overrides = dict(_parse_override(item) for item in args.overrides)
    try:
        checked = check(args.file, overrides or None, args.seed)
    except FileNotFoundError:
        raise Failure(f"{args.file}: no such file") from None
    except (ConfigError, TopologyError, SweepError, CheckError) as e:
        raise Failure(str(e)) from None
    if args.resolved:
        sys.stdout.write(checked.resolved if checked.resolved.endswith("\n") else checked.resolved + "\n")
    else:
        for line in checked.lines(every_point=args.all):
            print(line)
    return EXIT_OK


def _need_slurm_support() -> None:
    """Refuses --slurm at once, before the sweep is checked, without dask-jobqueue."""
    from snarl.sweep import SweepError

    try:
        import dask_jobqueue  # noqa: F401
    except ImportError:
        raise SweepError(
            "--slurm needs dask-jobqueue: pip install 'snarl[slurm]' (or pip install dask-jobqueue)"
        ) from None


def _runner_text(args: argparse.Namespace, todo: int) -> str:
    """Where ``snarl sweep`` would run its points, for --dry-run."""
    if args.scheduler is not None:
        return f"the Dask scheduler at {args.scheduler}"
    if args.workers is not None:
        return f"a Dask LocalCluster of {args.workers} worker{'s' if args.workers != 1 else ''}"
    processes = min(args.processes or os.cpu_count() or 1, max(todo, 1))
    return f"{processes} local process{'es' if processes != 1 else ''}"


def _plot(args: argparse.Namespace) -> int:
    """``snarl plot``: the figures of a sweep or run directory, as the kind writes them."""
    from snarl.plotkinds import PlotKindError, kinds

    kind = kinds()[args.kind]
    if not kind.several and len(args.dir) > 1:
        raise Failure(f"plot {args.kind} draws one DIR ({len(args.dir)} given); `snarl plot mechanisms` compares several")
    try:
        written = kind.write(args)
    except PlotKindError as e:
        raise Failure(str(e)) from None
    except OSError as e:
        where = f"-o {args.output}" if args.output else str(getattr(e, "filename", None) or args.dir[0])
        raise Failure(f"{where}: cannot write: {e.strerror or e}") from None
    for path in written:
        print(path)
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    """``snarl report``: the HTML page of sweep directories, or of run directories (a
    run's page, or runs side by side: :mod:`snarl.compare`)."""
    from snarl import compare
    from snarl.html import ReportError, write_report
    from snarl.plots import PlotError

    output = args.output or args.dir[0] / "report.html"
    try:
        kinds = {compare.kind_of(d) for d in args.dir}
        if kinds == {compare.RUN}:
            # Beside the run's directory, not in it: `snarl run --out` replaces a
            # directory only if it holds nothing but a run's files.
            run_dir = args.dir[0].resolve()
            output = args.output or run_dir.with_name(run_dir.name + ".html")
            compare.write_page(list(args.dir), output)
        elif kinds == {compare.SWEEP}:
            write_report(list(args.dir), output)
        else:
            raise Failure("give sweep directories or run directories, not both (`snarl compare` takes both)")
    except (ReportError, PlotError, compare.CompareError) as e:
        raise Failure(str(e)) from None
    except OSError as e:
        raise Failure(f"-o {output}: cannot write: {e.strerror or e}") from None
    print(output)
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    """``snarl compare``: runs side by side, as an HTML page (-o) or a table."""
    from snarl import compare

    if args.output is not None and args.output.suffix.lower() not in (".html", ".htm"):
        raise Failure(f"-o {args.output}: the page must be an .html file")
    try:
        if args.output is None:
            loaded = compare.load_runs(args.dir, args.names)
            compare.print_summary(loaded.runs, failed=loaded.failed)
            return EXIT_OK
        compare.write_page(args.dir, args.output, args.names)
    except compare.CompareError as e:
        raise Failure(str(e)) from None
    except OSError as e:
        raise Failure(f"-o {args.output}: cannot write: {e.strerror or e}") from None
    print(args.output)
    return EXIT_OK


def _findings(args: argparse.Namespace) -> int:
    """``snarl findings``: run what the findings need, print the table."""
    from snarl import findings
    from snarl.runs import Cache, RunError
    from snarl.sweep import SweepError

    extra = findings.set_values([_parse_override(item) for item in args.overrides])
    with tempfile.TemporaryDirectory(prefix="snarl-findings-") as scratch:
        out = args.out or Path(scratch)
        try:
            file = findings.load(args.file)
            planned = findings.plan(file.findings, extra)
            findings.unused(planned, extra, "--set")
            for note in findings.overridden(file, extra):
                print(f"snarl: note: {note}", file=sys.stderr)
            cache = Cache(out)
            cache.check()
            results = cache.run(
                planned.points(), args.workers, args.scheduler, args.processes, args.retry_failed,
                progress=sys.stderr.isatty(), on_start=_announce("snarl findings"), label="findings",
            )
            outcomes = findings.evaluate_all(file.findings, planned, results)
            if args.controls:
                controls = findings.plan_controls(outcomes, extra)
                control_results = cache.run(
                    controls.points(), args.workers, args.scheduler, args.processes, args.retry_failed,
                    progress=sys.stderr.isatty(), on_start=_announce("snarl findings: controls"), label="controls",
                )
                findings.evaluate_controls(outcomes, controls, control_results)
                results = {**results, **control_results}
                for outcome in outcomes:
                    for control in outcome.unproven():
                        state = "has no value" if control.holds is None else "holds"
                        print(
                            f"snarl: note: finding `{outcome.finding.id}` {state} with {control.control.why} too: "
                            "the control does not show that it can fail", file=sys.stderr,
                        )
            if args.out is not None:
                findings.write_report(out, file, outcomes, extra)
        except (findings.FindingsError, RunError, SweepError) as e:
            raise Failure(str(e)) from None
        except OSError as e:
            raise Failure(f"--out {out}: cannot write the results: {e.strerror or e}; run the same command again to resume") from None
    if args.json:
        data = {"findings": [o.to_dict() for o in outcomes], "held": sum(1 for o in outcomes if o.holds), "total": len(outcomes)}
        sys.stdout.write(json.dumps(data, default=str) + "\n")
    elif args.markdown:
        sys.stdout.write(findings.markdown_table(file, outcomes))
    else:
        findings.print_table(file, outcomes)
    return EXIT_POINTS_FAILED if any(not r.ok for r in results.values()) else EXIT_OK


def _calibrate(args: argparse.Namespace) -> int:
    """``snarl calibrate``: check both files, run the points, report."""
    from snarl import calibrate
    from snarl.findings import FindingsError
    from snarl.runs import RunError
    from snarl.space import SpaceError
    from snarl.sweep import SweepError

    announce = _announce("snarl calibrate")
    try:
        file, space = calibrate.prepare(args.file, args.space)
        result = calibrate.calibrate(
            file, space, args.out, args.method, args.points, args.workers, args.scheduler, args.processes,
            args.retry_failed, progress=sys.stderr.isatty(),
            on_start=lambda stage, total, todo, runner: announce(total, todo, runner, "" if stage == "search" else "held-out findings: "),
        )
    except (FindingsError, SpaceError, RunError, SweepError) as e:
        raise Failure(str(e)) from None
    except OSError as e:
        raise Failure(f"--out {args.out}: cannot write the results: {e.strerror or e}; run the same command again to resume") from None
    calibrate.print_report(result, args.out)
    return EXIT_POINTS_FAILED if result.failed_runs else EXIT_OK


def _announce(command: str) -> Callable[..., None]:
    """The readiness line of a command that runs through the run cache, once its runner
    is up: ``snarl findings: 6 runs, 2 already done, 4 to run on 2 local processes``."""

    def announce(total: int, todo: int, runner: str | None, stage: str = "") -> None:
        _check_stop()
        where = f" on {runner}" if runner else ""
        print(
            f"{command}: {stage}{total} run{'s' if total != 1 else ''}, {total - todo} already done, {todo} to run{where}",
            file=sys.stderr,
            flush=True,
        )

    return announce


def _parse_override(item: str) -> tuple[str, str]:
    """Splits ``--set key=value`` at the first ``=``. A value on several lines is refused:
    the lines after the first would be read as other keys, or lost."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise Failure(f"--set {item!r}: expected KEY=VALUE with a dotted key, e.g. --set traffic.load=0.5")
    if "\n" in value.strip() or "\r" in value.strip():
        raise Failure(f"--set {key.strip()}=...: the value holds a line break; give it on one line")
    return key.strip(), value.strip()


def _read_config(file: str) -> str:
    """The text of the experiment file; any failure to read it is bad input."""
    from snarl import ConfigError
    from snarl.api import read_config_file

    try:
        return read_config_file(Path(file))
    except FileNotFoundError:
        raise Failure(f"{file}: no such file") from None
    except ConfigError as e:
        raise Failure(e.message) from None


def _check_out(out: Path) -> None:
    """Refuses an --out that cannot be written, before the run. An existing directory is
    replaced if it holds only what ``--out`` writes (``summary.json``, ``config.toml``,
    tables as ``<name>.parquet``): an earlier result, of any run."""
    from snarl.report import is_output_file

    if out.exists():
        if not out.is_dir():
            raise Failure(f"--out {out}: exists and is not a directory")
        others = sorted(p.name for p in out.iterdir() if not (p.is_file() and is_output_file(p.name)))
        if others:
            raise Failure(
                f"--out {out}: the directory holds other files ({', '.join(others[:3])}"
                f"{', ...' if len(others) > 3 else ''}); give a new or empty directory"
            )
    parent = out.absolute().parent
    existing = next((p for p in (parent, *parent.parents) if p.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK):
        raise Failure(f"--out {out}: cannot create it (no writable directory above it)")


def _write_out(report: Any, out: Path) -> None:
    """Writes the results into a temporary directory beside ``out``, then renames it
    into place, so ``out`` holds a complete result or nothing new."""
    from snarl.sweep import umask

    parent = out.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as e:
        raise Failure(f"--out {out}: {e.strerror or e}") from None
    try:
        staging.chmod(0o777 & ~umask())
        report.write(staging)
        if out.exists():
            previous = staging.with_name(staging.name + ".old")
            os.rename(out, previous)
            os.rename(staging, out)
            shutil.rmtree(previous, ignore_errors=True)
        else:
            os.rename(staging, out)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise Failure(f"--out {out}: cannot write the results: {e.strerror or e}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _print_tables(report: Any, file: str) -> None:
    """The summary as rich tables on stdout: load, latency and packets per group."""
    from rich.console import Console
    from rich.table import Table

    s = report.summary
    unit = s.get("time_unit", "ns")
    groups: dict[str, dict[str, Any]] = dict(s.get("groups", {}))
    total = {key: s.get(key) for key in ("accepted_load", "offered_load", "received_load", "accepted_gbps")}
    total.update(latency=s.get("latency", {}), packets=s.get("packets", {}))
    total["hosts"] = sum(g.get("hosts", 0) for g in groups.values()) if groups else None
    # One row per group, and the total when there is more than one group.
    rows = [*groups.items(), ("all", total)] if len(groups) > 1 else list(groups.items()) or [("all", total)]

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120)  # a file or a pipe: no reason to wrap at 80
    console.print(f"[bold]snarl[/bold] {file}")
    console.print(
        f"seed {s.get('seed')} · {_num(s.get('sim_time'), 0)} {unit} simulated, measured from "
        f"{_num(s.get('measure_from'), 0)} · {_int(s.get('events'))} events in {_num(s.get('wall_seconds'), 2)} s"
    )
    stop = s.get("stopped_after")
    if stop:
        messages, group = _int(stop.get("messages")), stop.get("group")
        if stop.get("at") is None:
            console.print(f"not stopped: {group} completed fewer than {messages} messages in the run")
        else:
            console.print(f"stopped after {messages} messages of {group} at {_num(stop['at'], 0)} {unit}")

    load = Table(title="Load (fraction of link capacity, per host)", title_justify="left")
    for name in ("group", "hosts", "offered", "accepted", "received", "accepted Gb/s"):
        load.add_column(name, justify="left" if name == "group" else "right")
    for name, g in rows:
        load.add_row(
            name,
            _int(g.get("hosts")),
            _num(g.get("offered_load"), 4),
            _num(g.get("accepted_load"), 4),
            _num(g.get("received_load"), 4),
            _num(g.get("accepted_gbps"), 2),
        )

    latency = Table(title=f"Packet latency ({unit})", title_justify="left")
    for name in ("group", "mean", "p50", "p95", "p99", "max"):
        latency.add_column(name, justify="left" if name == "group" else "right")
    for name, g in rows:
        lat = g.get("latency") or {}
        latency.add_row(name, *(_latency(lat.get(k)) for k in ("mean", "p50", "p95", "p99", "max")))

    packets = Table(title="Packets", title_justify="left")
    # In-order receivers discard packets that arrive out of sequence (the summary has the
    # key only when some were): a column of its own then, so the rows still add up.
    keys = ["injected", "delivered", "in_flight", "dropped"]
    if any((g.get("packets") or {}).get("discarded") for _, g in rows):
        keys.append("discarded")
    for name in ["group"] + [k.replace("_", " ") for k in keys]:
        packets.add_column(name, justify="left" if name == "group" else "right")
    for name, g in rows:
        p = g.get("packets") or {}
        packets.add_row(name, *(_int(p.get(k, 0)) for k in keys))

    console.print(load, latency, packets)
    flows = [(name, g) for name, g in rows if g.get("flows")]
    if flows:
        fct = Table(title=f"Flow completion (FCT in {unit}; slowdown = FCT / ideal FCT)", title_justify="left")
        for name in ("group", "flows", "FCT p50", "FCT p99", "slowdown p50", "slowdown p95", "slowdown p99"):
            fct.add_column(name, justify="left" if name == "group" else "right")
        for name, g in flows:
            f, d = g.get("fct") or {}, g.get("slowdown") or {}
            fct.add_row(
                name, _int(g.get("flows")), _latency(f.get("p50")), _latency(f.get("p99")),
                *(_num(d.get(k), 2) for k in ("p50", "p95", "p99")),
            )
        console.print(fct)
    # What the summary's sections (the mechanisms the run has) say of themselves, then
    # those that say nothing, generically: no section of the summary goes unprinted.
    for note in report.notes:
        console.print(note, soft_wrap=True)
    for line in _silent_sections(s, report.notes):
        console.print(line, soft_wrap=True, markup=False)
    counters = {k: v for k, v in (s.get("counters") or {}).items() if v}
    if counters:
        console.print("counters: " + ", ".join(f"{k} {_int(v)}" for k, v in counters.items()))


SUMMARY_KEYS = frozenset({
    "accepted_load", "offered_load", "received_load", "accepted_gbps", "offered_gbps", "latency",
    "network_latency", "message_latency", "packets", "fct", "groups", "counters", "recovery", "sim_time",
    "stopped_after", "measure_from", "time_unit", "seed", "events", "packet_hops", "wall_seconds",
})
"""The summary's own keys (the core's `Summary`); every other key is a section of a
mechanism or collector the run has."""

OCCASIONAL_KEYS = ("recovery",)
"""The summary's own keys that only some runs fill (the others have null) and the tables
of the printout do not show: printed as sections are."""


def sections(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary's sections, by name, in summary order."""
    return {k: v for k, v in summary.items() if k not in SUMMARY_KEYS}


def _silent_sections(summary: dict[str, Any], notes: Sequence[str]) -> list[str]:
    """A line for each section that no note speaks for, its figures flattened: `name: key
    value, key value`. A note speaks for a section when it names it, in words, run
    together or in the singular, whatever the case (`Hop counts`, `HOPCOUNT` and `hop
    count` all name `hop_counts`)."""
    said = ["".join(c for c in note.lower() if c.isalnum()) for note in notes]
    lines = []
    occasional = {k: summary[k] for k in OCCASIONAL_KEYS if summary.get(k) is not None}
    for name, value in {**occasional, **sections(summary)}.items():
        word = "".join(c for c in name.lower() if c.isalnum())
        words = {word, word[:-1] if word.endswith("s") and len(word) > 3 else word}
        if any(w in text for w in words for text in said):
            continue
        lines.append(f"{name}: {_section_text(value)}")
    return lines


def _section_text(value: Any, most: int = 24) -> str:
    """A section's value on one line: numbers with separators, nested keys dotted, at most
    ``most`` figures."""
    if not isinstance(value, (dict, list)):
        return _figure(value)
    flat: list[tuple[str, Any]] = []

    def walk(prefix: str, item: Any) -> None:
        if isinstance(item, dict):
            for key, inner in item.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(item, list) and any(isinstance(v, (dict, list)) for v in item):
            for index, inner in enumerate(item):
                walk(f"{prefix}.{index}" if prefix else str(index), inner)
        else:
            flat.append((prefix, item))

    walk("", value)
    if not flat:
        return "(empty)"
    shown = [f"{key} {_figure(item)}" if key else _figure(item) for key, item in flat[:most]]
    more = f", ... ({len(flat) - most} more in --json)" if len(flat) > most else ""
    return ", ".join(shown) + more


def _figure(value: Any) -> str:
    """One figure of a section: an integer with separators, a float with 4 significant
    decimals at most, text as it is, "-" for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_figure(v) for v in value) + "]"
    return str(value)


def _num(value: Any, digits: int) -> str:
    """A number with thousands separators and ``digits`` decimals; "-" if missing."""
    return "-" if value is None else f"{value:,.{digits}f}"


def _latency(value: Any) -> str:
    """A latency: one decimal below 1000, whole units above."""
    if value is None:
        return "-"
    return _num(value, 1 if abs(value) < 1000 else 0)


def _int(value: Any) -> str:
    """An integer with thousands separators; "-" if missing."""
    return "-" if value is None else f"{value:,}"
