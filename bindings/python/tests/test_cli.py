"""The snarl command (snarl.cli), run as a subprocess like a user would."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import REPO, SMALL, assert_invariants, start_snarl, wait_for_line

SUMMARY_KEYS = {
    "accepted_load",
    "offered_load",
    "latency",
    "packets",
    "groups",
    "counters",
    "sim_time",
    "wall_seconds",
    "events",
    "fct",
}


def without_wall_time(text: str) -> str:
    """The summary JSON with the one non-deterministic figure blanked out."""
    blanked, count = re.subn(r'"wall_seconds": [^,\n}]+', '"wall_seconds": 0', text)
    assert count == 1, text
    return blanked


def test_json_summary_has_the_stable_keys(cli, small_config):
    done = cli("run", small_config, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # stdout is exactly one JSON object
    assert SUMMARY_KEYS <= summary.keys()
    assert {"mean", "p50", "p95", "p99", "max"} <= summary["latency"].keys()
    assert {"injected", "delivered", "in_flight", "dropped"} <= summary["packets"].keys()
    assert summary["packets"]["injected"] > 0
    assert summary["packets"]["delivered"] > 0
    assert 0 < summary["accepted_load"] <= summary["offered_load"] + 0.05
    assert summary["events"] > 0
    assert summary["groups"], "at least one group of hosts"


def test_json_summary_has_fct_by_flow_size(cli, small_config):
    done = cli("run", small_config, "--json", "--set", "traffic.size_distribution=web_search")
    assert done.returncode == 0, done.stderr
    fct = json.loads(done.stdout)["fct"]
    assert {"flows", "fct", "slowdown", "buckets"} <= fct.keys()
    assert [b["label"] for b in fct["buckets"]] == ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]
    assert sum(b["flows"] for b in fct["buckets"]) == fct["flows"]
    for bucket in fct["buckets"]:
        assert {"min_bytes", "max_bytes", "flows", "fct", "slowdown"} <= bucket.keys()
        assert {"mean", "p50", "p95", "p99", "max"} <= bucket["slowdown"].keys()
    assert fct["buckets"][-1]["max_bytes"] is None


def test_unknown_size_distribution_is_bad_input(cli, small_config):
    done = cli("run", small_config, "--set", "traffic.size_distribution=websearch")
    assert done.returncode == 2
    assert "traffic.size_distribution" in done.stderr and "web_search" in done.stderr, done.stderr


def test_json_is_the_only_output(cli, small_config):
    done = cli("run", small_config, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # stderr is not a terminal: no progress bar
    assert done.stdout.startswith("{") and done.stdout.rstrip().endswith("}")


def test_same_seed_gives_identical_json(cli, small_config):
    first = cli("run", small_config, "--json", "--seed", "7")
    second = cli("run", small_config, "--json", "--seed", "7")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert without_wall_time(first.stdout) == without_wall_time(second.stdout)
    assert json.loads(first.stdout)["seed"] == 7


def test_different_seed_gives_different_results(cli, small_config):
    first = cli("run", small_config, "--json", "--seed", "1")
    second = cli("run", small_config, "--json", "--seed", "2")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    for summary in (a, b):
        summary.pop("wall_seconds")
        summary.pop("seed")
    assert a != b


def test_set_changes_offered_load(cli, small_config):
    default = json.loads(cli("run", small_config, "--json").stdout)
    lowered = cli("run", small_config, "--json", "--set", "traffic.load=0.2")
    assert lowered.returncode == 0, lowered.stderr
    low = json.loads(lowered.stdout)
    assert low["offered_load"] < default["offered_load"]
    assert low["offered_load"] == pytest.approx(0.2, abs=0.1)
    assert default["offered_load"] == pytest.approx(0.5, abs=0.15)


def test_out_writes_summary_config_and_timeseries(cli, small_config, tmp_path):
    done = cli("run", small_config, "--json", "--seed", "3", "--out", "results")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results"
    assert sorted(p.name for p in out.iterdir()) == ["config.toml", "summary.json", "timeseries.parquet"]
    assert (out / "summary.json").read_text().strip() == done.stdout.strip()
    config = tomllib.loads((out / "config.toml").read_text())
    assert config["seed"] == 3
    assert config["traffic"]["load"] == 0.5
    assert config["topology"] == {"type": "single_switch", "hosts": 8}
    table = pq.read_table(out / "timeseries.parquet")
    assert table.num_rows > 0
    assert table.num_columns > 1
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".results")], "no staging left"


def test_out_replaces_a_previous_result(cli, small_config, tmp_path):
    assert cli("run", small_config, "--out", "results", "--seed", "1").returncode == 0
    done = cli("run", small_config, "--out", "results", "--seed", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "results" / "summary.json").read_text())["seed"] == 2


def test_out_refuses_a_directory_with_other_files(cli, small_config, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    done = cli("run", small_config, "--out", "mine")
    assert done.returncode == 2
    assert done.stderr.startswith("snarl: error: --out mine") and done.stderr.count("\n") == 1
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_table_output_shows_loads_latency_and_packets(cli, small_config):
    done = cli("run", small_config)
    assert done.returncode == 0, done.stderr
    for word in ("offered", "accepted", "p99", "injected", "delivered", "all"):
        assert word in done.stdout, word
    assert done.stderr == ""


SPRAYED_IN_ORDER = """
[simulation]
duration = "100us"

[topology]
type = "spine_leaf"
leaves = 2
spines = 2
hosts_per_leaf = 4

[routing]
type = "spray"

[nic]
receiver = "in_order"

[traffic]
load = 1.0
message_size = "16KiB"
"""


def test_packets_discarded_by_in_order_receivers_get_a_column_and_rows_add_up(cli, write_config):
    done = cli("run", write_config(SPRAYED_IN_ORDER), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["packets"].get("discarded", 0) > 0, summary["packets"]
    assert_invariants(summary)
    table = cli("run", write_config(SPRAYED_IN_ORDER))
    assert "discarded" in table.stdout, table.stdout


STOP_AFTER = f"""{SMALL}
[simulation.stop_after]
group = "senders"
messages = 50

[[traffic.groups]]
name = "senders"
count = 4
"""


def test_a_run_that_stops_early_says_so(cli, write_config):
    path = write_config(STOP_AFTER)
    done = cli("run", path, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    stop = summary["stopped_after"]
    assert (stop["group"], stop["messages"]) == ("senders", 50)
    assert summary["sim_time"] == stop["at"] < 20_000
    assert summary["groups"]["senders"]["flows"] == 50
    assert_invariants(summary)
    done = cli("run", path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"stopped after 50 messages of senders at [\d,]+ ns", done.stdout), done.stdout
    done = cli("run", path, "--set", "simulation.stop_after.messages=1000000")
    assert done.returncode == 0, done.stderr
    assert "not stopped: senders completed fewer than 1,000,000 messages in the run" in done.stdout, done.stdout
    done = cli("run", path, "--json", "--set", "simulation.stop_after.messages=1000000")
    assert json.loads(done.stdout)["stopped_after"]["at"] is None


BAD_INPUTS = {
    "misspelt key": (["--set", "traffic.lod=0.3"], ["traffic.lod", "load"]),
    "wrong variant": (["--set", "topology.type=singel_switch"], ["topology.type", "single_switch"]),
    "negative load": (["--set", "traffic.load=-0.5"], ["traffic.load"]),
    "one host": (["--set", "topology.hosts=1"], ["topology.hosts"]),
    "set without =": (["--set", "traffic.load"], ["--set", "traffic.load", "KEY=VALUE"]),
    "set without key": (["--set", "=0.5"], ["--set"]),
    "bad seed": (["--seed", "minus-one"], ["--seed"]),
    "set with a line break": (["--set", "traffic.load=0.5\ntraffic.lod=1"], ["--set traffic.load=", "line break"]),
    "stop after no group": (
        ["--set", "simulation.stop_after.group=default", "--set", "simulation.stop_after.messages=5"],
        ["simulation.stop_after.group", "traffic.groups"],
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_nothing_written(cli, small_config, tmp_path, case):
    args, expected = BAD_INPUTS[case]
    done = cli("run", small_config, "--out", "never", *args)
    assert_refused(done, expected)
    assert not (tmp_path / "never").exists()


def assert_refused(done: subprocess.CompletedProcess[str], expected: list[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("snarl: error: ")
    for text in expected:
        assert text in lines[0], (text, lines[0])


IMPOSSIBLE = {
    "fat tree of radix 3": (
        '[simulation]\nduration = "20us"\n[topology]\ntype = "fat_tree"\nradix = 3\nlevels = 2\n[traffic]\nload = 0.5\n',
        ["radix"],
    ),
    "single switch, one host": (SMALL.replace("hosts = 8", "hosts = 1"), ["topology.hosts"]),
    "invalid TOML": ("[simulation\nduration = 1\n", ["TOML"]),
    "missing section": ('[simulation]\nduration = "20us"\n[traffic]\nload = 0.5\n', ["topology"]),
}


@pytest.mark.parametrize("case", IMPOSSIBLE, ids=list(IMPOSSIBLE))
def test_impossible_or_invalid_config_is_refused(cli, write_config, tmp_path, case):
    text, expected = IMPOSSIBLE[case]
    done = cli("run", write_config(text), "--out", "never")
    assert_refused(done, expected)
    assert not (tmp_path / "never").exists()


def test_missing_file_is_refused(cli, tmp_path):
    done = cli("run", "no-such-experiment.toml", "--json", "--out", "never")
    assert_refused(done, ["no-such-experiment.toml", "no such file"])
    assert not (tmp_path / "never").exists()


def test_non_utf8_file_is_refused(cli, tmp_path):
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00garbage")
    assert_refused(cli("run", "binary.toml"), ["binary.toml", "UTF-8"])


def test_no_command_prints_usage_and_exits_2(cli):
    done = cli()
    assert done.returncode == 2
    assert done.stdout == ""
    assert "usage" in done.stderr


def test_version(cli):
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("snarl ")


def test_console_script_is_installed(small_config):
    script = Path(sys.executable).with_name("snarl")
    if not script.exists():
        pytest.skip("the snarl console script is not installed next to this Python")
    done = subprocess.run([script, "run", small_config, "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_invariants(json.loads(done.stdout))


def test_deadlock_exits_3_and_writes_nothing(monkeypatch, capsys, small_config, tmp_path):
    from snarl import _core, cli

    def deadlocked(*args, **kwargs):
        raise _core.DeadlockError("deadlock: no packet moved for 1ms; blocked: switch 0 port 3")

    monkeypatch.setattr(_core, "run", deadlocked)
    code = cli.main(["run", str(small_config), "--json", "--out", str(tmp_path / "never")])
    out, err = capsys.readouterr()
    assert code == 3
    assert out == ""
    assert err == "snarl: error: deadlock: no packet moved for 1ms; blocked: switch 0 port 3\n"
    assert not (tmp_path / "never").exists()


def test_interrupted_run_exits_130(monkeypatch, capsys, small_config, tmp_path):
    from snarl import _core, cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "run", interrupted)
    code = cli.main(["run", str(small_config), "--out", str(tmp_path / "never")])
    out, err = capsys.readouterr()
    assert code == 130
    assert out == ""
    assert "interrupted" in err
    assert not (tmp_path / "never").exists()


LONG = SMALL.replace('duration = "20us"', 'duration = "10s"').replace("hosts = 8", "hosts = 64")
"""A run of minutes."""

STARTED = "snarl: simulating "
"""The start of the line `snarl run --progress` writes as the simulation starts: its
readiness line."""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(("stop", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_a_long_run(write_config, tmp_path, stop, code, word):
    """The signal reaches Python while the run holds no GIL: the run stops."""
    path = write_config(LONG)
    process = start_snarl("run", path, "--json", "--progress", "--out", tmp_path / "never")
    try:
        assert wait_for_line(process.stderr, STARTED).rstrip().endswith(": 0%")
        process.send_signal(stop)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code, err
    assert out == ""
    assert err == f"snarl: {word}\n"
    assert not (tmp_path / "never").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".never")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_while_snarl_starts_exits_130(write_config, tmp_path):
    """A Ctrl-C while the package is still being imported (its compiled core is
    loaded, much else is not) stops the command with one line, not a traceback."""
    path = write_config(LONG)
    process = start_snarl("run", path, "--json", "--out", tmp_path / "never")
    try:
        maps = Path(f"/proc/{process.pid}/maps")
        while process.poll() is None and "snarl/_core" not in maps.read_text():
            time.sleep(0.001)  # polls the readiness condition: the core is mapped
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert (out, err) == ("", "snarl: interrupted\n")
    assert not (tmp_path / "never").exists()


def test_progress_lines_for_logs(cli, small_config):
    done = cli("run", small_config, "--json", "--progress")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "snarl: simulating small.toml: 0%"
    assert lines[-1] == "snarl: simulating small.toml: 100%"
    assert json.loads(done.stdout)["packets"]["delivered"] > 0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_out_files_follow_the_umask(small_config, tmp_path):
    from conftest import run_snarl

    done = run_snarl("run", small_config, "--out", tmp_path / "results", preexec_fn=lambda: os.umask(0o002))
    assert done.returncode == 0, done.stderr
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "results").iterdir()}
    assert modes == {name: oct(0o664) for name in ("config.toml", "summary.json", "timeseries.parquet")}
    assert oct((tmp_path / "results").stat().st_mode & 0o777) == oct(0o775)


BASIC_SCENARIOS = sorted((REPO / "scenarios" / "basics").glob("*.toml"))


@pytest.mark.parametrize("scenario", BASIC_SCENARIOS, ids=[p.stem for p in BASIC_SCENARIOS])
def test_basic_scenarios_run(cli, scenario):
    done = cli("run", scenario, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["packets"]["delivered"] > 0


def test_out_writes_rates_with_a_rate_series(cli, small_config, tmp_path):
    done = cli(
        "run", small_config, "--json", "--out", "results",
        "--set", "congestion_control.type=dcqcn", "--set", "congestion_control.rate_series=true",
        "--set", "traffic.pattern.type=incast", "--set", "traffic.pattern.destination=0",
        "--set", "traffic.load=1.0", "--set", "switch.speedup=2.0", "--set", "switch.output_buffer=\"1MiB\"",
        "--set", "simulation.duration=\"200us\"",
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results"
    assert "rates.parquet" in {p.name for p in out.iterdir()}
    table = pq.read_table(out / "rates.parquet")
    assert table.column_names == ["time", "src", "dst", "qp", "rate_gbps"]
    assert table.num_rows > 0


def test_plot_mechanisms_compares_run_directories(cli, mechanism_runs, tmp_path):
    from PIL import Image

    none, dcqcn = mechanism_runs / "one-tree-none", mechanism_runs / "one-tree-dcqcn"
    output = tmp_path / "figures" / "mechanisms.png"
    done = cli("plot", "mechanisms", none, dcqcn, "-o", output, "--labels", "PFC alone,DCQCN", "--title", "one tree")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(output) and done.stderr == ""
    with Image.open(output) as image:
        assert image.format == "PNG" and image.size[0] > 2 * image.size[1]  # three panels side by side
    done = cli("plot", "mechanisms", none, dcqcn, "--group", "hotspot", "-o", tmp_path / "hotspot.svg")
    assert done.returncode == 0, done.stderr
    assert "<svg" in (tmp_path / "hotspot.svg").read_text()


PLOT_MECHANISMS_REFUSED = {
    "not a run directory": (["mechanisms", "{none}", "{empty}"], ["{empty}: not a run directory (no summary.json)", "snarl run"]),
    "no such directory": (["mechanisms", "{none}", "{tmp}/nowhere"], ["nowhere: no such directory"]),
    "labels for fewer runs": (["mechanisms", "{none}", "{dcqcn}", "--labels", "pfc"], ["--labels: 1 name for 2 runs"]),
    "two groups": (["mechanisms", "{none}", "{dcqcn}", "--group", "victims", "--group", "hotspot"], ["one group"]),
    "unknown group": (["mechanisms", "{none}", "{dcqcn}", "--group", "nope"], ["no group 'nope'", "victims"]),
    "another kind of two directories": (["timeseries", "{none}", "{dcqcn}"], ["plot timeseries draws one DIR (2 given)"]),
}


@pytest.mark.parametrize("case", PLOT_MECHANISMS_REFUSED, ids=list(PLOT_MECHANISMS_REFUSED))
def test_plot_mechanisms_bad_input_is_one_line_exit_2(cli, mechanism_runs, tmp_path, case):
    args, expected = PLOT_MECHANISMS_REFUSED[case]
    (tmp_path / "empty").mkdir()
    names = {
        "none": mechanism_runs / "one-tree-none", "dcqcn": mechanism_runs / "one-tree-dcqcn",
        "empty": tmp_path / "empty", "tmp": tmp_path,
    }
    done = cli("plot", *(a.format(**names) for a in args), "-o", tmp_path / "never.png")
    assert_refused(done, [e.format(**names) for e in expected])
    assert not (tmp_path / "never.png").exists()


def test_a_sweep_json_that_is_not_an_object_is_one_line_and_exit_2(cli, tmp_path):
    sweep = tmp_path / "odd"
    sweep.mkdir()
    pd.DataFrame({"point_id": ["a"], "status": ["ok"], "accepted_load": [0.5]}).to_parquet(sweep / "points.parquet")
    (sweep / "sweep.json").write_text("[1, 2]", encoding="utf-8")
    for args in (("report", str(sweep), "-o", str(tmp_path / "r.html")), ("plot", "load-curve", str(sweep))):
        done = cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "sweep.json" in lines[0] and "JSON object" in lines[0], done.stderr
