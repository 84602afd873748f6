"""Shared fixtures. Every test that simulates goes through `simulate` or `cli`, which
check the invariants of every run: packets are conserved and none is dropped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import snarl

REPO = Path(__file__).resolve().parents[3]
"""The repository root (bindings/python/tests -> .)."""

SMALL = """\
[simulation]
duration = "20us"

[topology]
type = "single_switch"
hosts = 8

[traffic]
load = 0.5
"""
"""A run that takes milliseconds: 8 hosts on one switch for 20 µs."""


def assert_invariants(summary: dict[str, Any]) -> None:
    """Packets are conserved (injected = delivered + in flight + discarded by in-order
    receivers), in total and per group of senders, the groups add up to the total, and
    nothing is dropped (lossless)."""
    packets = summary["packets"]
    kept = packets["delivered"] + packets["in_flight"] + packets.get("discarded", 0)
    assert packets["injected"] == kept, packets
    assert packets["dropped"] == 0, packets
    for name, group in summary["groups"].items():
        counts = group["packets"]
        kept = counts["delivered"] + counts["in_flight"] + counts.get("discarded", 0)
        assert counts["injected"] == kept, (name, counts)
        assert counts["dropped"] == 0, (name, counts)
    for key in ("injected", "delivered", "in_flight"):
        assert sum(g["packets"][key] for g in summary["groups"].values()) == packets[key], key
    assert summary["counters"].get("packets_dropped", 0) == 0


@pytest.fixture
def small_config(tmp_path: Path) -> Path:
    """The small experiment as a .toml file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    return path


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str, str], Path]:
    """Writes TOML text to a file in tmp_path and returns its path."""

    def write(text: str, name: str = "experiment.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def simulate() -> Callable[..., snarl.Report]:
    """`snarl.run`, checking the invariants of the report."""

    def run(*args: Any, **kwargs: Any) -> snarl.Report:
        report = snarl.run(*args, **kwargs)
        assert_invariants(report.summary)
        return report

    return run


def run_snarl(
    *args: str | os.PathLike[str], cwd: Path | None = None, timeout: float = 300, **options: Any
) -> subprocess.CompletedProcess[str]:
    """Runs `python -m snarl ARGS` and returns the finished process (text output);
    `options` go to `subprocess.run` (env, preexec_fn, ...)."""
    return subprocess.run(
        [sys.executable, "-m", "snarl", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **options,
    )


def start_snarl(*args: str | os.PathLike[str], **options: Any) -> subprocess.Popen[str]:
    """Starts `python -m snarl ARGS` with its stderr (text) and stdout piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "snarl", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        **options,
    )


def wait_for_line(stream: Any, start: str) -> str:
    """Reads lines of `stream` until one starts with `start`, a process's readiness line,
    and returns it (fails at the end of the stream)."""
    seen = []
    for line in stream:
        if line.startswith(start):
            return line
        seen.append(line)
    raise AssertionError(f"no line starting with {start!r}; the process wrote: {''.join(seen)!r}")


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux: from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # ended meanwhile
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def wait_ended(pids: list[int], timeout: float = 120) -> list[int]:
    """Waits until each process has ended (exited or died; a zombie whose new parent
    does not reap it has ended); returns those still running after `timeout`."""
    import select

    running = []
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([handle], [], [], timeout)[0]:
                running.append(pid)
        finally:
            os.close(handle)
    return running


CRASHING_RUNS = """\
import os
import re
import signal

import snarl

_run = snarl.run


# The run of a point dies as a segfault or an abort would take its worker down: seed 13
# by SIGKILL, seed 14 by os._exit(3).
def run(config, *args, **kwargs):
    if isinstance(config, str) and re.search(r"^seed = 13$", config, re.M):
        os.kill(os.getpid(), signal.SIGKILL)
    if isinstance(config, str) and re.search(r"^seed = 14$", config, re.M):
        os._exit(3)
    return _run(config, *args, **kwargs)


snarl.run = run
"""


@pytest.fixture
def crashing_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a snarl process whose runs of seeds 13 and 14 kill their
    process: a sitecustomize module, which every Python process of that environment
    (workers included) imports first."""
    directory = tmp_path_factory.mktemp("crashing-runs")
    (directory / "sitecustomize.py").write_text(CRASHING_RUNS, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")]))}


def without_root_privileges() -> Callable[[], None] | None:
    """For `preexec_fn`: a process of root that file permissions apply to, as to any user
    (it loses the capabilities that bypass them); None when not root."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_capbset_drop = 24
        for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
            if libc.prctl(pr_capbset_drop, capability) != 0:
                raise OSError(ctypes.get_errno(), "cannot drop a capability")

    return drop


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs the snarl command in tmp_path; a successful run's summary (on stdout with
    --json, and in --out DIR) is checked for the invariants."""

    def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        done = run_snarl(*args, cwd=tmp_path)
        if done.returncode == 0:
            strings = [str(a) for a in args]
            if "--json" in strings:
                assert_invariants(json.loads(done.stdout))
            if "--out" in strings:
                out = tmp_path / strings[strings.index("--out") + 1]
                assert_invariants(json.loads((out / "summary.json").read_text()))
        return done

    return run


SWEEP_BASE = """\
[simulation]
duration = "20us"
window = "1us"

[topology]
type = "single_switch"
hosts = 8

[traffic]
load = 0.5

[[traffic.groups]]
name = "hot"
count = 4
pattern = { type = "hotspot", among = "group" }

[[traffic.groups]]
name = "rest"
rest = true

[[traffic.phases]]
at = "10us"
group = "hot"
cap = 0.2
label = "hot senders capped"
"""
"""A small experiment with two groups and a phase, the base of `small_sweep`."""

SWEEP = """\
name = "small sweep"
base = "base.toml"

[axes]
"traffic.load" = [0.3, 0.6]
"traffic.groups.0.cap" = [1.0, 0.5]
seed = [1, 2]
"""
"""Eight points of a few milliseconds each."""


@pytest.fixture(scope="session")
def small_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep directory of eight points (run once per test session); every
    point's summary passes the invariants."""
    directory = tmp_path_factory.mktemp("small-sweep")
    (directory / "base.toml").write_text(SWEEP_BASE, encoding="utf-8")
    (directory / "sweep.toml").write_text(SWEEP, encoding="utf-8")
    table = snarl.sweep(directory / "sweep.toml", directory / "out", processes=2)
    assert len(table) == 8 and (table["status"] == "ok").all(), table[["status", "error"]]
    for record in (directory / "out" / "points").glob("*.json"):
        assert_invariants(json.loads(record.read_text(encoding="utf-8"))["summary"])
    return directory / "out"


ONE_TREE_SHORT = {
    "simulation.duration": "300us",
    "simulation.warmup": "50us",
    "traffic.phases.0.at": "100us",
    "traffic.phases.1.at": "250us",
}
"""The lossless-Ethernet one-tree scenarios cut to 300 µs (the tree from 100 to 250 µs):
under a second each."""


@pytest.fixture(scope="session")
def mechanism_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of two `snarl run --out` results of one congestion tree, with PFC
    alone (`one-tree-none`) and with DCQCN (`one-tree-dcqcn`), run once per session."""
    directory = tmp_path_factory.mktemp("mechanisms")
    for cc in ("none", "dcqcn"):
        report = snarl.run(REPO / "scenarios" / "lossless-ethernet" / f"one-tree-{cc}.toml", set=ONE_TREE_SHORT)
        assert_invariants(report.summary)
        out = directory / f"one-tree-{cc}"
        out.mkdir()
        report.write(out)
    return directory


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    """The headless browser, or a skip if none is installed (.ci/run installs chromium)."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    pytest.skip("chromium is not installed (apt-get install chromium; .ci/run tries to): cannot render the report")


def render(page: Path, profile: Path) -> tuple[str, list[str]]:
    """Loads ``page`` offline in headless Chromium; returns the DOM after the load event
    and the console messages the page produced."""
    done = subprocess.run(
        [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return done.stdout, console


def assert_renders(page: Path, images: int, profile: Path) -> None:
    """The page loads in headless Chromium with every image decoded (the page's script
    counts them on its body) and no console message."""
    dom, console = render(page, profile)
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    assert attributes.get("data-images") == str(images), attributes
    assert attributes.get("data-loaded") == str(images), attributes
    assert "data-broken" not in attributes
    assert console == []


def page_images(page: str, kinds: tuple[str, ...] = ("png",)) -> list[str]:
    """The image sources of an HTML page, checked to be embedded as data: URIs of the
    given image types and nothing to be fetched."""
    sources = re.findall(r'\bsrc="([^"]*)"', page)
    assert sources and all(s.startswith(tuple(f"data:image/{k};base64," for k in kinds)) for s in sources)
    assert not re.search(r'<link\b|\bhref="https?:|\bsrc="https?:|@import|url\(http', page)
    return sources
