"""Batch and cluster use: progress lines for logs, sweeps from scripts without the
``__main__`` guard, every summary section in the printout, ``snarl sweep --slurm`` and
``snarl check``."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SMALL, SWEEP, SWEEP_BASE, assert_invariants, run_snarl

import snarl
from snarl.cli import _silent_sections, main, sections
from snarl.progress import CountLines, RunLines, duration
from snarl.sweep import load_spec, resolve_points

MID = """\
[simulation]
duration = "40ms"

[topology]
type = "single_switch"
hosts = 64

[traffic]
load = 0.5
"""
"""A run of a second or two: long enough for several progress lines 0.2 s apart."""

RUN_LINE = re.compile(r"^snarl: simulating mid\.toml: \d+% · elapsed \d+:\d\d:\d\d · ETA (\d+:\d\d:\d\d|\?)$")
SWEEP_LINE = re.compile(r"^snarl sweep: \d+/3 points done, 0 failed · elapsed \d+:\d\d:\d\d · ETA (\d+:\d\d:\d\d|\?)$")


# ----------------------------------------------------------------------------- progress


def test_a_piped_run_prints_progress_lines_before_its_summary(tmp_path):
    """`snarl run ... | cat`: stderr is not a terminal, so the run prints timed lines
    (done, elapsed, ETA) as it goes, all before the summary."""
    path = tmp_path / "mid.toml"
    path.write_text(MID, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "snarl", "run", str(path), "--progress-interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one pipe: the order of the lines is the order written
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith(f"snarl {path}"))
    progress = [i for i, line in enumerate(lines) if line.startswith("snarl: simulating")]
    assert progress, done.stdout
    assert max(progress) < summary, done.stdout
    for i in progress:
        assert RUN_LINE.match(lines[i]), lines[i]


def test_progress_lines_are_off_with_interval_zero_and_a_bad_interval_is_refused(small_config):
    quiet = run_snarl("run", small_config, "--json", "--progress-interval", "0")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    bad = run_snarl("run", small_config, "--progress-interval", "-1")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "--progress-interval" in bad.stderr, bad.stderr


def test_a_piped_sweep_prints_progress_lines(tmp_path):
    (tmp_path / "base.toml").write_text(MID.replace("40ms", "10ms"), encoding="utf-8")
    (tmp_path / "sweep.toml").write_text('base = "base.toml"\n[axes]\nseed = [1, 2, 3]\n', encoding="utf-8")
    done = run_snarl(
        "sweep", "sweep.toml", "--out", "out", "--processes", "1", "--progress-interval", "0.2", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "snarl sweep: 3 points, 0 already done, 3 to run on 1 local process", lines
    ticks = [line for line in lines[1:] if line.startswith("snarl sweep: ")]
    assert ticks, done.stderr
    for line in ticks:
        assert SWEEP_LINE.match(line), line
    assert done.stdout.startswith("3 points (0 failed)")


def test_run_lines_time_and_tenths():
    now = [0.0]
    stream = io.StringIO()
    lines = RunLines("x.toml", interval=5, stream=stream, clock=lambda: now[0])
    for t, fraction in ((0, 0.0), (1, 0.1), (6, 0.5), (7, 0.6), (12, 0.75), (13, 1.0)):
        now[0] = t
        lines(fraction)
    assert stream.getvalue().splitlines() == [
        "snarl: simulating x.toml: 50% · elapsed 0:00:06 · ETA 0:00:06",
        "snarl: simulating x.toml: 75% · elapsed 0:00:12 · ETA 0:00:04",
    ]
    stream = io.StringIO()
    tenths = RunLines("x.toml", interval=0, tenths=True, stream=stream, clock=lambda: 0.0)
    for fraction in (0.0, 0.05, 0.31, 1.0):
        tenths(fraction)
    assert stream.getvalue().splitlines() == [f"snarl: simulating x.toml: {p}%" for p in (0, 30, 100)]


def test_count_lines_estimate_from_the_points_done_since_the_start():
    now = [100.0]
    lines = CountLines("snarl sweep", total=10, done=2, failed=1, interval=0, clock=lambda: now[0]).start()
    assert lines.line() == "snarl sweep: 2/10 points done, 1 failed · elapsed 0:00:00 · ETA ?"
    now[0] = 140.0
    lines.update(6, 1)
    # 4 points in 40 s: the 4 left take 40 s more.
    assert lines.line() == "snarl sweep: 6/10 points done, 1 failed · elapsed 0:00:40 · ETA 0:00:40"
    lines.close()
    assert duration(3725) == "1:02:05" and duration(90000) == "1 day, 1:00:00" and duration(None) == "?"


def test_a_dask_sweep_prints_its_dashboard_once(tmp_path):
    (tmp_path / "base.toml").write_text(SMALL, encoding="utf-8")
    (tmp_path / "sweep.toml").write_text('base = "base.toml"\n[axes]\nseed = [1, 2]\n', encoding="utf-8")
    done = run_snarl("sweep", "sweep.toml", "--out", "out", "--workers", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dashboard = [
        line for line in done.stderr.splitlines()
        if line.startswith(("snarl sweep: Dask dashboard at ", "snarl sweep: the Dask scheduler serves no dashboard"))
    ]
    assert len(dashboard) == 1, done.stderr


# ----------------------------------------------------------------------------- scripts

SCRIPT = """\
import snarl

# No `if __name__ == "__main__":` guard: the workers must not run this again.
print("sweeping", flush=True)
table = snarl.sweep({{"base": "base.toml", "axes": {{"seed": [1, 2, 3]}}}}, "out", {where})
print("STATUS", " ".join(table["status"]))
"""


@pytest.mark.parametrize("where", ["processes=2", "workers=1"])
def test_a_script_without_the_main_guard_sweeps(tmp_path, where):
    (tmp_path / "base.toml").write_text(SMALL, encoding="utf-8")
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT.format(where=where), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["sweeping", "STATUS ok ok ok"], done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    for record in (tmp_path / "out" / "points").glob("*.json"):
        assert_invariants(json.loads(record.read_text(encoding="utf-8"))["summary"])


# ----------------------------------------------------------------------------- sections

SECTIONS_TOML = """\
[simulation]
duration = "200us"
window = "20us"

[topology]
type = "single_switch"
hosts = 5

[switch]
type = "shared_buffer"
port_buffer = "512KiB"
egress_cap = "256KiB"
speedup = 2.0

[flow_control]
type = "pfc"
xoff = 50
xon = 45

[congestion_control]
type = "ibcc"

[traffic]
load = 1.0
pattern = { type = "incast", destination = 4 }

[observe]
queues = [{ switch = 0, port = 4 }]
"""
"""A run with several sections: PFC, IB CC and a probed queue."""


def _letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def test_snarl_run_prints_every_section_of_the_summary(write_config, cli):
    path = write_config(SECTIONS_TOML)
    report = snarl.run(path)
    found = sections(report.summary)
    assert {"pfc", "ibcc", "queues"} <= set(found), list(found)
    done = cli("run", path)
    assert done.returncode == 0, done.stderr
    for note in report.notes:
        assert note in done.stdout, note
    printed = _letters(done.stdout)
    for name in found:
        assert _letters(name).rstrip("s") in printed, f"section {name} is not in the printout"


def test_snarl_run_prints_the_recovery_of_a_run_with_phases(write_config, cli):
    done = cli("run", write_config(SWEEP_BASE))
    assert done.returncode == 0, done.stderr
    assert re.search(r"^recovery: pre_burst_load [0-9.]+, lowest_load [0-9.]+, drop_depth", done.stdout, re.M), done.stdout
    quiet = cli("run", write_config(SMALL, "small.toml"))
    assert "recovery" not in quiet.stdout


def test_a_section_without_a_note_gets_a_generic_line():
    summary = {
        "seed": 1,
        "groups": {},
        "mine": {"hops": 7, "per": {"a": 1.5, "b": [1, 2]}},
        "total_throughput": 1234.5,
        "empty": {},
        "recovery": None,
    }
    lines = _silent_sections(summary, ["a note of its own: total throughput 1,234.5 Gb/s"])
    assert lines == ["mine: hops 7, per.a 1.5, per.b [1, 2]", "empty: (empty)"]
    summary["recovery"] = {"lowest_load": 0.25, "time_to_recover": None}
    assert _silent_sections(summary, [])[0] == "recovery: lowest_load 0.25, time_to_recover -"


# ----------------------------------------------------------------------------- SLURM


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "base.toml").write_text(SWEEP_BASE, encoding="utf-8")
    (tmp_path / "sweep.toml").write_text(SWEEP, encoding="utf-8")
    return tmp_path


def test_slurm_dry_run_prints_the_job_script(sweep_dir):
    done = run_snarl(
        "sweep", "sweep.toml", "--out", "out", "--slurm", "--jobs", "3", "--cores", "8", "--memory", "16GB",
        "--walltime", "02:30:00", "--queue", "short", "--account", "proj42", "--dry-run", cwd=sweep_dir,
    )
    assert done.returncode == 0, done.stderr
    script = done.stdout
    assert script.startswith("#!"), script
    for line in ("#SBATCH -p short", "#SBATCH -A proj42", "#SBATCH --cpus-per-task=8", "#SBATCH -t 02:30:00"):
        assert line in script.splitlines(), script
    assert re.search(r"^#SBATCH --mem=\d+G$", script, re.M), script
    # One single-threaded worker per core: one simulation each.
    assert "--nthreads 1" in script and "--nworkers 8" in script, script
    assert done.stderr == (
        "snarl sweep: dry run: 8 points, 0 already done, 8 would run on a SLURM cluster of 3 jobs x 8 cores "
        "(queue short)\n"
    )
    assert not (sweep_dir / "out").exists()


def test_slurm_without_dask_jobqueue_is_one_line_exit_2(sweep_dir, tmp_path_factory):
    hidden = tmp_path_factory.mktemp("no-jobqueue")
    (hidden / "sitecustomize.py").write_text("import sys\nsys.modules['dask_jobqueue'] = None\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(hidden)}
    for extra in (["--dry-run"], []):
        done = run_snarl(
            "sweep", "sweep.toml", "--out", "out", "--slurm", "--cores", "4", "--memory", "8GB", *extra,
            cwd=sweep_dir, env=env,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            "snarl: error: --slurm needs dask-jobqueue: pip install 'snarl[slurm]' (or pip install dask-jobqueue)\n"
        )
        assert done.stdout == "" and not (sweep_dir / "out").exists()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--cores", "4"], "--cores sets a SLURM job: it needs --slurm"),
        (["--slurm", "--processes", "2"], "argument --processes: not allowed with argument --slurm"),
        (["--slurm", "--cores", "2", "--memory", "1GB", "--walltime", "4h"], "argument --walltime: '4h' is not in SLURM's time format"),
        (["--slurm", "--cores", "2", "--memory", "lots"], "argument --memory: 'lots' is not a size"),
        (["--slurm", "--cores", "0", "--memory", "1GB"], "argument --cores: invalid count 0"),
        (["--slurm", "--memory", "1GB", "--dry-run"], "--slurm needs --cores N"),
        (["--slurm", "--cores", "2", "--dry-run"], "--slurm needs --memory SIZE"),
    ],
)
def test_slurm_options_are_checked(sweep_dir, capsys, monkeypatch, arguments, expected):
    monkeypatch.chdir(sweep_dir)
    code = main(["sweep", "sweep.toml", "--out", "out", *arguments])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith(f"snarl: error: {expected}") and err.count("\n") == 1, err
    assert out == "" and not (sweep_dir / "out").exists()


@pytest.mark.skipif(shutil.which("sbatch") is not None, reason="a SLURM machine: sbatch would submit jobs")
def test_slurm_without_sbatch_is_one_line_exit_2(sweep_dir, capsys, monkeypatch):
    monkeypatch.chdir(sweep_dir)
    code = main(["sweep", "sweep.toml", "--out", "out", "--slurm", "--cores", "2", "--memory", "1GB"])
    out, err = capsys.readouterr()
    assert code == 2 and err.startswith("snarl: error: --slurm: no `sbatch` on this machine"), err
    assert not (sweep_dir / "out").exists()


# ----------------------------------------------------------------------------- snarl check


def shipped_files() -> list[Path]:
    """Every scenario, preset and sweep file in scenarios/ (findings and search spaces
    are not scenarios)."""
    return sorted(
        p for p in (REPO / "scenarios").rglob("*.toml") if p.name != "findings.toml" and not p.name.startswith("space-")
    )


def test_check_passes_every_shipped_scenario_and_sweep(capsys):
    files = shipped_files()
    assert len(files) > 50
    failed = {}
    for path in files:
        code = main(["check", str(path)])
        out, err = capsys.readouterr()
        first = out.splitlines()[0] if out else ""
        if code != 0 or not first.startswith(f"{path}: a valid "):
            failed[str(path.relative_to(REPO))] = err or first
    assert not failed, failed


def test_check_a_scenario_prints_its_resolved_config_in_short(cli, small_config):
    done = cli("check", small_config, "--set", "traffic.load=0.7", "--seed", "9")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{small_config}: a valid scenario; it would run:"
    assert "  seed 9" in lines and "  topology: single_switch (hosts 8)" in lines, lines
    assert any(line.startswith("  traffic: load 0.7") for line in lines), lines
    resolved = cli("check", small_config, "--set", "traffic.load=0.7", "--seed", "9", "--resolved")
    assert resolved.stdout == snarl.resolve_config(small_config, set={"traffic.load": 0.7}, seed=9)
    assert done.stderr == resolved.stderr == ""


def test_check_a_sweep_prints_its_points_axes_and_first_point(cli, sweep_dir):
    points = resolve_points(load_spec(sweep_dir / "sweep.toml"))
    done = cli("check", sweep_dir / "sweep.toml")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.splitlines()[0] == f"{sweep_dir / 'sweep.toml'}: a valid sweep `small sweep` of 8 points over base.toml"
    for line in ('  traffic.load: 0.3, 0.6', '  traffic.groups.0.cap: 1.0, 0.5', '  seed: 1, 2'):
        assert line in out.splitlines(), out
    for number, point in enumerate(points, 1):
        assert f"  {number}  {point.id}  " in out, out
    assert "the first point, resolved:" in out and "  seed 1" in out
    first = cli("check", sweep_dir / "sweep.toml", "--resolved")
    assert first.stdout == points[0].config


def test_check_lists_the_first_points_of_a_long_sweep_unless_all(cli, sweep_dir):
    (sweep_dir / "long.toml").write_text('base = "base.toml"\n[axes]\nseed = ' + str(list(range(1, 13))) + "\n")
    short = cli("check", sweep_dir / "long.toml")
    assert "points (the first 10; --all lists every one):" in short.stdout and "  ... 2 more" in short.stdout
    every = cli("check", sweep_dir / "long.toml", "--all")
    assert "seed=12" in every.stdout and "more" not in every.stdout


def test_check_a_preset(cli):
    done = cli("check", REPO / "scenarios" / "presets" / "haicgu-roce.toml")
    assert done.returncode == 0, done.stderr
    assert "a valid fabric preset" in done.stdout.splitlines()[0]
    assert "traffic:" not in done.stdout and "  topology: single_switch (hosts 10)" in done.stdout.splitlines()


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        (SMALL.replace("load = 0.5", "lod = 0.5"), "`traffic.lod`", "load"),
        (SMALL.replace('type = "single_switch"', 'type = "single_swich"'), "`topology.type`", "single_switch"),
        (SMALL.replace('duration = "20us"', 'duration = "20 parsecs"'), "`simulation.duration`", ""),
    ],
)
def test_check_a_broken_scenario_exits_2_naming_the_key(cli, write_config, text, key, hint):
    done = cli("check", write_config(text, "broken.toml"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert key in done.stderr and hint in done.stderr, done.stderr


def test_check_a_broken_sweep_exits_2_naming_the_point_and_key(cli, sweep_dir):
    (sweep_dir / "broken.toml").write_text('base = "base.toml"\n[axes]\n"traffic.lod" = [0.1, 0.2]\n')
    done = cli("check", sweep_dir / "broken.toml")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("snarl: error: point traffic.lod=0.1: config error at `traffic.lod`"), done.stderr
    assert "did you mean `load`" in done.stderr and done.stderr.count("\n") == 1
    (sweep_dir / "unknown.toml").write_text('base = "base.toml"\n[axis]\nseed = [1]\n')
    done = cli("check", sweep_dir / "unknown.toml")
    assert done.returncode == 2 and "unknown key `axis`" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("path", "command"),
    [("lossless-ethernet/findings.toml", "snarl findings"), ("lossless-ethernet/space-ici.toml", "snarl calibrate")],
)
def test_check_says_which_command_takes_findings_and_spaces(cli, path, command):
    done = cli("check", REPO / "scenarios" / path)
    assert done.returncode == 2 and command in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_check_refuses_overrides_of_a_sweep_and_a_missing_file(cli, sweep_dir, tmp_path):
    done = cli("check", sweep_dir / "sweep.toml", "--set", "traffic.load=0.2")
    assert done.returncode == 2 and "--set and --seed apply to a scenario" in done.stderr
    missing = cli("check", tmp_path / "nope.toml")
    assert missing.returncode == 2 and missing.stderr == f"snarl: error: {tmp_path / 'nope.toml'}: no such file\n"
