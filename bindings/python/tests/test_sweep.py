"""Sweeps (snarl.sweep and `snarl sweep`): local processes and Dask give the same table,
an interrupted sweep resumes without running a point twice, bad sweep files are refused
before anything runs."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import snarl
from conftest import (
    SMALL,
    assert_invariants,
    children,
    run_snarl,
    start_snarl,
    wait_ended,
    wait_for_line,
    without_root_privileges,
)

# The module (the package exports a function of the same name).
sweep_module = importlib.import_module("snarl.sweep")

# Wall-clock figures differ from run to run; everything else is deterministic.
NONDETERMINISTIC = ("wall_seconds",)


def write_sweep(directory: Path, body: str, base: str = SMALL, name: str = "sweep.toml") -> Path:
    """Writes the small experiment as base.toml and a sweep file over it."""
    (directory / "base.toml").write_text(base, encoding="utf-8")
    path = directory / name
    path.write_text('base = "base.toml"\n' + body, encoding="utf-8")
    return path


def check_sweep_dir(out: Path, expected_points: int) -> pd.DataFrame:
    """The table holds every point once; every successful point's summary passes the
    invariants and has its time series."""
    table = pd.read_parquet(out / "points.parquet")
    assert len(table) == expected_points
    assert table["point_id"].is_unique
    records = {p.stem: json.loads(p.read_text()) for p in (out / "points").glob("*.json")}
    assert set(records) == set(table["point_id"])
    for point_id, record in records.items():
        if record["status"] == "ok":
            assert_invariants(record["summary"])
            assert (out / "timeseries" / f"{point_id}.parquet").is_file()
    info = json.loads((out / "sweep.json").read_text())
    assert {"snarl", "python", "dask", "pandas", "pyarrow"} <= info["versions"].keys()
    assert len(info["points"]) == expected_points
    return table


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table sorted by point id, without wall-clock columns."""
    columns = [c for c in table.columns if not c.split(".")[-1] in NONDETERMINISTIC]
    return table[columns].sort_values("point_id").reset_index(drop=True)


LOADS_X_SEEDS = """
name = "loads"
[axes]
"traffic.load" = [0.2, 0.4, 0.6, 0.8]
seed = [1, 2]
"""


def test_points_are_the_product_of_axes_and_zip(tmp_path):
    path = write_sweep(
        tmp_path,
        """
[axes]
"traffic.load" = [0.2, 0.4]
seed = [1, 2, 3]
[zip]
"topology.hosts" = [4, 8]
"simulation.duration" = ["10us", "20us"]
[set]
"traffic.process" = "poisson"
""",
    )
    from snarl.sweep import load_spec

    spec = load_spec(path)
    points = spec.points()
    assert len(points) == 2 * 3 * 2
    assert points[0] == {"traffic.load": 0.2, "seed": 1, "topology.hosts": 4, "simulation.duration": "10us"}
    assert {(p["topology.hosts"], p["simulation.duration"]) for p in points} == {(4, "10us"), (8, "20us")}
    assert spec.keys == ["traffic.load", "seed", "topology.hosts", "simulation.duration"]


def test_point_ids_are_stable_hashes_of_the_resolved_config(tmp_path):
    from snarl.sweep import load_spec, point_hash, resolve_points

    path = write_sweep(tmp_path, LOADS_X_SEEDS)
    first = resolve_points(load_spec(path))
    again = resolve_points(load_spec(path))
    assert [p.id for p in first] == [p.id for p in again]
    assert len({p.id for p in first}) == 8
    point = first[3]
    resolved = snarl.resolve_config(tmp_path / "base.toml", set={"traffic.load": point.values["traffic.load"]}, seed=point.values["seed"])
    assert point.id == point_hash(resolved)
    assert len(point.id) == 16 and int(point.id, 16) >= 0


def test_dask_local_cluster_gives_the_same_table_as_local_processes(tmp_path):
    path = write_sweep(tmp_path, LOADS_X_SEEDS)
    local = snarl.sweep(path, tmp_path / "local", processes=2)
    dask = snarl.sweep(path, tmp_path / "dask", workers=2)
    local_dir = check_sweep_dir(tmp_path / "local", 8)
    check_sweep_dir(tmp_path / "dask", 8)
    assert (local["status"] == "ok").all()
    assert {"point_id", "traffic.load", "seed", "status", "error", "accepted_load", "latency.p99",
            "groups.default.accepted_load", "packets.delivered"} <= set(local.columns)
    pd.testing.assert_frame_equal(comparable(local), comparable(dask))
    pd.testing.assert_frame_equal(comparable(local), comparable(local_dir))
    # The time series too, point by point.
    for point_id in local["point_id"]:
        a = pd.read_parquet(tmp_path / "local" / "timeseries" / f"{point_id}.parquet")
        b = pd.read_parquet(tmp_path / "dask" / "timeseries" / f"{point_id}.parquet")
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b)
    # More load, more throughput.
    means = local.groupby("traffic.load")["accepted_load"].mean()
    assert means.is_monotonic_increasing
    info = json.loads((tmp_path / "dask" / "sweep.json").read_text())
    assert info["name"] == "loads"
    assert "LocalCluster" in info["runner"]


def test_sweep_on_an_existing_dask_scheduler(tmp_path):
    from dask.distributed import LocalCluster

    path = write_sweep(tmp_path, '[axes]\n"traffic.load" = [0.3, 0.6]\n')
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        done = run_snarl("sweep", path, "--out", tmp_path / "out", "--scheduler", cluster.scheduler_address)
    assert done.returncode == 0, done.stderr
    table = check_sweep_dir(tmp_path / "out", 2)
    assert (table["status"] == "ok").all()
    assert "scheduler" in json.loads((tmp_path / "out" / "sweep.json").read_text())["runner"]


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    # Minimal routing resolves but cannot route a single switch: the run fails.
    path = write_sweep(tmp_path, '[axes]\n"routing.type" = ["updown", "minimal"]\nseed = [1, 2]\n')
    done = run_snarl("sweep", path, "--out", tmp_path / "out", "--processes", "2")
    assert done.returncode == 4, done.stderr  # the sweep ran, but not every point
    table = check_sweep_dir(tmp_path / "out", 4)
    failed = table[table["status"] == "failed"]
    assert set(failed["routing.type"]) == {"minimal"} and len(failed) == 2
    assert all("ConfigError" in e and "distance-based" in e for e in failed["error"])
    ok = table[table["status"] == "ok"]
    assert len(ok) == 2 and ok["error"].isna().all() and (ok["accepted_load"] > 0).all()
    assert "4 points (2 failed)" in done.stdout
    # Failed points are not run again, unless asked.
    again = run_snarl("sweep", path, "--out", tmp_path / "out", "--processes", "1")
    assert "4 already done, 0 to run" in again.stderr and again.returncode == 4
    retry = run_snarl("sweep", path, "--out", tmp_path / "out", "--processes", "1", "--retry-failed")
    assert "2 already done, 2 to run" in retry.stderr and retry.returncode == 4
    check_sweep_dir(tmp_path / "out", 4)


CRASHES = '[axes]\nseed = [1, 13, 2, 14, 3, 4]\n'
"""Six points, two of which kill their worker (see `crashing_runs`)."""


def test_a_crashing_point_fails_alone_and_records_its_cause(tmp_path, crashing_runs):
    path = write_sweep(tmp_path, CRASHES)
    out = tmp_path / "out"
    done = run_snarl("sweep", path, "--out", out, "--processes", "2", env=crashing_runs)
    assert done.returncode == 4, done.stderr
    assert "6 points (2 failed)" in done.stdout
    table = check_sweep_dir(out, 6)
    assert sorted(table.loc[table["status"] == "failed", "seed"]) == [13, 14]
    assert (table.loc[~table["seed"].isin([13, 14]), "status"] == "ok").all(), table[["seed", "status", "error"]]
    records = {r["values"]["seed"]: r for r in map(json.loads, map(Path.read_text, (out / "points").glob("*.json")))}
    assert records[13]["crash"] == {"signal": signal.SIGKILL.value, "signal_name": "SIGKILL"}
    assert "killed by signal 9 (SIGKILL)" in records[13]["error"]
    assert records[14]["crash"] == {"exit_code": 3}
    assert "exited with code 3" in records[14]["error"]
    assert records[1]["crash"] is None

    # Retried, the crashing points crash again, and again alone.
    ok = {p.name: p.read_bytes() for p in (out / "points").glob("*.json") if json.loads(p.read_text())["status"] == "ok"}
    retry = run_snarl("sweep", path, "--out", out, "--processes", "2", "--retry-failed", env=crashing_runs)
    assert retry.returncode == 4, retry.stderr
    assert "6 points, 4 already done, 2 to run" in retry.stderr
    table = check_sweep_dir(out, 6)
    assert sorted(table.loc[table["status"] == "failed", "seed"]) == [13, 14]
    assert {name: (out / "points" / name).read_bytes() for name in ok} == ok


def test_a_crashing_point_fails_alone_on_one_process(tmp_path, crashing_runs):
    """The worker that replaces a dead one runs the points after it."""
    path = write_sweep(tmp_path, CRASHES)
    done = run_snarl("sweep", path, "--out", tmp_path / "out", "--processes", "1", env=crashing_runs)
    assert done.returncode == 4, done.stderr
    table = check_sweep_dir(tmp_path / "out", 6)
    assert sorted(table.loc[table["status"] == "failed", "seed"]) == [13, 14]


def test_a_killed_sweep_resumes_without_rerunning_or_duplicating_points(tmp_path):
    # Twelve points of about a tenth of a second each, one at a time.
    path = write_sweep(
        tmp_path,
        '[set]\n"simulation.duration" = "15ms"\n[axes]\n"traffic.load" = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]\nseed = [1, 2]\n',
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "snarl", "sweep", str(path), "--out", str(out), "--processes", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches its workers
    )
    records = out / "points"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and len(list(records.glob("*.json"))) < 3:
            if process.poll() is not None:
                break
            time.sleep(0.01)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finished = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in records.glob("*.json")}
    assert 3 <= len(finished) < 12, f"{len(finished)} points finished before the kill: make them slower"

    done = run_snarl("sweep", path, "--out", out, "--processes", "2")
    assert done.returncode == 0, done.stderr
    assert f"12 points, {len(finished)} already done, {12 - len(finished)} to run" in done.stderr
    table = check_sweep_dir(out, 12)
    assert (table["status"] == "ok").all()
    # The records of the points finished before the kill are untouched.
    for name, (mtime, content) in finished.items():
        assert (records / name).stat().st_mtime_ns == mtime, name
        assert (records / name).read_bytes() == content, name
    assert not list(records.glob(".*.tmp"))

    # A third run has nothing to do and changes no record.
    before = {p.name: p.stat().st_mtime_ns for p in records.glob("*.json")}
    again = run_snarl("sweep", path, "--out", out)
    assert again.returncode == 0 and "12 already done, 0 to run" in again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in records.glob("*.json")} == before
    check_sweep_dir(out, 12)


BAD_SWEEPS = {
    "unknown axis key": ('[axes]\n"traffic.lod" = [0.1, 0.2]\n', "unknown key `lod`; did you mean `load`?"),
    "unknown key in set": ('[set]\n"topology.hostz" = 4\n[axes]\nseed = [1]\n', "topology.hostz"),
    "invalid value of one point": ('[axes]\n"traffic.load" = [0.5, 1.5]\n', "traffic.load=1.5"),
    "empty axis": ('[axes]\n"traffic.load" = []\n', "is empty"),
    "axis not a list": ('[axes]\n"traffic.load" = 0.5\n', "must be a list"),
    "zip of unequal lengths": ('[zip]\n"traffic.load" = [0.1, 0.2]\nseed = [1, 2, 3]\n', "equal lengths"),
    "unknown top-level key": ('[axis]\nseed = [1]\n', "unknown key `axis`"),
    "same key twice": ('[axes]\nseed = [1]\n[set]\nseed = 2\n', "both"),
    "bad seed": ('[axes]\nseed = [1, -2]\n', "seed"),
}


@pytest.mark.parametrize("case", BAD_SWEEPS, ids=list(BAD_SWEEPS))
def test_bad_sweep_files_are_refused_before_anything_runs(tmp_path, case):
    body, expected = BAD_SWEEPS[case]
    path = write_sweep(tmp_path, body)
    done = run_snarl("sweep", path, "--out", tmp_path / "out")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(snarl.SweepError):
        snarl.sweep(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_missing_files_and_bad_runners_are_refused(tmp_path):
    out = tmp_path / "out"
    cases = [
        (write_sweep(tmp_path, "[axes]\nseed = [1]\n").with_name("absent.toml"), [], "no such sweep file"),
    ]
    no_base = tmp_path / "no-base.toml"
    no_base.write_text("[axes]\nseed = [1]\n")
    cases.append((no_base, [], "missing `base`"))
    missing_base = tmp_path / "missing-base.toml"
    missing_base.write_text('base = "elsewhere/none.toml"\n[axes]\nseed = [1]\n')
    cases.append((missing_base, [], "none.toml: no such file"))
    good = tmp_path / "sweep.toml"
    cases.append((good, ["--scheduler", "tcp://127.0.0.1:1"], "cannot connect to the Dask scheduler"))
    cases.append((good, ["--scheduler", "not-an-address"], "bad Dask scheduler address"))
    cases.append((good, ["--workers", "0"], "positive integer"))
    cases.append((good, ["--workers", "2", "--processes", "2"], "not allowed with"))
    for path, extra, expected in cases:
        done = run_snarl("sweep", path, "--out", out, *extra)
        assert done.returncode == 2, (path, extra, done.stderr)
        assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
        assert expected in done.stderr, done.stderr
        assert not out.exists()


def test_out_must_be_a_sweep_directory(tmp_path):
    path = write_sweep(tmp_path, '[axes]\nseed = [1]\n')
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    done = run_snarl("sweep", path, "--out", other)
    assert done.returncode == 2 and "no sweep.json" in done.stderr
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


def test_another_sweep_into_a_sweep_directory_is_refused_unless_forced(tmp_path):
    first = write_sweep(tmp_path, "[axes]\nseed = [1, 2]\n", name="first.toml")
    second = write_sweep(tmp_path, "[axes]\nseed = [3]\n", name="second.toml")
    out = tmp_path / "out"
    assert run_snarl("sweep", first, "--out", out).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"}
    done = run_snarl("sweep", second, "--out", out)
    assert done.returncode == 2, done.stderr
    assert "2 point(s) of another sweep" in done.stderr and "--force" in done.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".lock"} == before
    # The same sweep again resumes (nothing to run); one that extends it keeps its points.
    assert run_snarl("sweep", first, "--out", out).returncode == 0
    # --force replaces the other sweep's points: the table and the records are the new
    # sweep's alone.
    assert run_snarl("sweep", second, "--out", out, "--force").returncode == 0
    check_sweep_dir(out, 1)


def test_sweep_api_from_a_dict_with_progress_callback(tmp_path, monkeypatch):
    (tmp_path / "base.toml").write_text(SMALL)
    monkeypatch.chdir(tmp_path)
    calls = []
    table = snarl.sweep(
        {"base": "base.toml", "axes": {"topology.hosts": [4, 8]}, "set": {"traffic.load": 0.3}},
        "out",
        processes=1,
        progress=lambda done, failed, total: calls.append((done, failed, total)),
    )
    assert calls == [(1, 0, 2), (2, 0, 2)]
    assert sorted(table["topology.hosts"]) == [4, 8]
    assert sorted(table["groups.default.hosts"]) == [4, 8]
    check_sweep_dir(tmp_path / "out", 2)


def test_an_axis_of_whole_tables(tmp_path):
    path = write_sweep(tmp_path, '[axes]\n"routing" = [{ type = "updown" }, { type = "dmodk" }]\n')
    table = snarl.sweep(path, tmp_path / "out", processes=1)
    check_sweep_dir(tmp_path / "out", 2)
    assert (table["status"] == "ok").all()
    assert sorted(json.loads(v)["type"] for v in table["routing"]) == ["dmodk", "updown"]


LONG_POINTS = '[set]\n"simulation.duration" = "80ms"\n[axes]\n"traffic.load" = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]\nseed = [1, 2]\n'
"""Twelve points of about a second each."""

ENDLESS_POINTS = '[set]\n"simulation.duration" = "10s"\n[axes]\nseed = [1, 2, 3, 4]\n'
"""Points of minutes each: the sweep is still running when the test is done with it."""

READY = "snarl sweep: "
"""The start of the line `snarl sweep` writes once its workers are up and the directory
is its own: its readiness line."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, waits on pidfds")
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_workers_end_with_the_sweep(tmp_path, stop):
    path = write_sweep(tmp_path, ENDLESS_POINTS)
    out = tmp_path / "out"
    process = start_snarl("sweep", path, "--out", out, "--processes", "2", start_new_session=True)
    try:
        wait_for_line(process.stderr, READY)
        workers = children(process.pid)
        assert len(workers) >= 2, workers  # two workers (and multiprocessing's resource tracker)
        process.send_signal(stop)  # to the sweep alone, not to its process group
        _, stderr = process.communicate(timeout=120)
        assert wait_ended(workers) == [], "workers outlived their sweep"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if stop == signal.SIGTERM:
        # A clean stop: the table of what is done (nothing yet) is written.
        assert process.returncode == 143, stderr
        assert stderr.rstrip().endswith("snarl: terminated")
        assert len(pd.read_parquet(out / "points.parquet")) == 0
    else:
        assert process.returncode == -signal.SIGKILL


def test_ctrl_c_as_the_sweep_starts_exits_130_and_resumes(tmp_path):
    path = write_sweep(tmp_path, LONG_POINTS)
    out = tmp_path / "out"
    process = start_snarl("sweep", path, "--out", out, "--processes", "2", start_new_session=True)
    wait_for_line(process.stderr, READY)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the workers get it too
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert stderr.rstrip().endswith("snarl: interrupted")
    assert "Traceback" not in stderr
    finished = len(list((out / "points").glob("*.json")))
    assert len(pd.read_parquet(out / "points.parquet")) == finished
    done = run_snarl("sweep", path, "--out", out, "--processes", "2")
    assert done.returncode == 0, done.stderr
    assert f"{finished} already done, {12 - finished} to run" in done.stderr
    check_sweep_dir(out, 12)


def test_a_second_sweep_on_the_same_directory_is_refused_naming_the_first(tmp_path):
    path = write_sweep(tmp_path, ENDLESS_POINTS)
    out = tmp_path / "out"
    first = start_snarl("sweep", path, "--out", out, "--processes", "1", start_new_session=True)
    try:
        wait_for_line(first.stderr, READY)
        second = run_snarl("sweep", path, "--out", out, "--processes", "1")
        assert second.returncode == 2, second.stderr
        assert second.stderr.startswith("snarl: error: ") and second.stderr.count("\n") == 1, second.stderr
        assert f"another snarl sweep (pid {first.pid})" in second.stderr
        with pytest.raises(snarl.SweepError, match=f"pid {first.pid}"):
            snarl.sweep(path, out, processes=1)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    # The lock ended with the killed sweep: the file it leaves blocks no other sweep.
    assert (out / ".lock").read_text().strip() == str(first.pid)
    short = write_sweep(tmp_path, "[axes]\nseed = [1, 2]\n", name="short.toml")
    done = run_snarl("sweep", short, "--out", out, "--processes", "1")
    assert done.returncode == 0, done.stderr
    check_sweep_dir(out, 2)


def test_ctrl_c_stops_the_sweep_keeps_finished_points_and_resumes(tmp_path):
    path = write_sweep(
        tmp_path,
        '[set]\n"simulation.duration" = "80ms"\n[axes]\n"traffic.load" = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]\nseed = [1, 2]\n',
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "snarl", "sweep", str(path), "--out", str(out), "--processes", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # Ctrl-C reaches the whole process group, as in a terminal
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "points").glob("*.json"))) < 2 and process.poll() is None:
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    finished = len(list((out / "points").glob("*.json")))
    assert process.returncode == 130, stderr
    assert stderr.rstrip().endswith("snarl: interrupted")
    assert 2 <= finished < 12
    assert len(pd.read_parquet(out / "points.parquet")) == finished  # the table of what is done

    done = run_snarl("sweep", path, "--out", out, "--processes", "2")
    assert done.returncode == 0, done.stderr
    assert f"{finished} already done, {12 - finished} to run" in done.stderr
    check_sweep_dir(out, 12)


def test_shipped_sweeps_resolve_every_point():
    """The sweep files under scenarios/ name existing keys and give distinct points."""
    repo = Path(__file__).resolve().parents[3]
    files = sorted(repo.glob("scenarios/*/sweep-*.toml"))
    assert any(f.name == "sweep-saturation.toml" for f in files)
    for path in files:
        spec = sweep_module.load_spec(path)
        points = sweep_module.resolve_points(spec)
        expected = 1
        for values in spec.axes.values():
            expected *= len(values)
        if spec.zip:
            expected *= len(next(iter(spec.zip.values())))
        assert len(points) == expected, path.name


def test_a_base_that_is_not_utf8_is_refused(tmp_path):
    path = write_sweep(tmp_path, "[axes]\nseed = [1, 2]\n")
    (tmp_path / "base.toml").write_bytes(b"\xff\xfe\x00not text")
    done = run_snarl("sweep", path, "--out", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "base.toml: not a UTF-8 text file" in done.stderr
    with pytest.raises(snarl.SweepError, match="not a UTF-8 text file"):
        snarl.sweep(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_existing_out_that_cannot_be_written_is_refused(tmp_path):
    path = write_sweep(tmp_path, "[axes]\nseed = [1, 2]\n")
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        done = run_snarl("sweep", path, "--out", out, preexec_fn=without_root_privileges())
    finally:
        out.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "cannot write into it" in done.stderr
    assert list(out.iterdir()) == []


def test_a_full_disk_stops_the_sweep_with_one_line_and_it_resumes(tmp_path, monkeypatch, capsys):
    from snarl import cli

    path = write_sweep(tmp_path, "[axes]\nseed = [1, 2, 3, 4]\n")
    out = tmp_path / "out"
    write = sweep_module._write_atomic
    written = []

    def fill_up(target: Path, data: bytes) -> None:
        if target.parent.name == "points" and len(written) == 2:
            raise OSError(28, os.strerror(28), str(target))  # ENOSPC
        write(target, data)
        if target.parent.name == "points":
            written.append(target)

    monkeypatch.setattr(sweep_module, "_write_atomic", fill_up)
    code = cli.main(["sweep", str(path), "--out", str(out), "--processes", "1"])
    err = capsys.readouterr().err
    assert code == 2, err
    error = [line for line in err.splitlines() if line.startswith("snarl: error: ")]
    assert len(error) == 1 and "No space left on device" in error[0] and "run the same command again" in error[0]
    assert "Traceback" not in err
    assert len(list((out / "points").glob("*.json"))) == 2
    assert not list((out / "points").glob(".*.tmp"))

    monkeypatch.setattr(sweep_module, "_write_atomic", write)
    done = run_snarl("sweep", path, "--out", out, "--processes", "1")
    assert done.returncode == 0, done.stderr
    assert "4 points, 2 already done, 2 to run" in done.stderr
    check_sweep_dir(out, 4)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_sweep_files_follow_the_umask(tmp_path, mask):
    path = write_sweep(tmp_path, "[axes]\nseed = [1]\n")
    out = tmp_path / "out"
    previous = os.umask(mask)
    try:
        snarl.sweep(path, out, processes=1)
    finally:
        os.umask(previous)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"points.parquet", "sweep.json", ".lock"}
    assert {p.relative_to(out).as_posix(): oct(p.stat().st_mode & 0o777) for p in files} == {
        p.relative_to(out).as_posix(): oct(0o666 & ~mask) for p in files
    }


def test_numpy_axes_give_the_points_of_plain_values(tmp_path, monkeypatch):
    import numpy as np

    (tmp_path / "base.toml").write_text(SMALL)
    monkeypatch.chdir(tmp_path)
    plain = {"base": "base.toml", "axes": {"traffic.load": [0.2, 0.4], "seed": [1, 2]}, "set": {"topology.hosts": 4}}
    numpy = {
        "base": "base.toml",
        "axes": {"traffic.load": list(np.linspace(0.2, 0.4, 2)), "seed": np.array([1, 2])},
        "set": {"topology.hosts": np.int64(4)},
    }
    expected = snarl.sweep(plain, "plain", processes=np.int64(2))
    table = snarl.sweep(numpy, "numpy", processes=2)
    pd.testing.assert_frame_equal(comparable(table), comparable(expected))
    info = json.loads((tmp_path / "numpy" / "sweep.json").read_text())
    assert info["spec"]["axes"] == {"traffic.load": [0.2, 0.4], "seed": [1, 2]}
