"""The examples in docs/examples run as written (each in a fresh interpreter) and their
runs pass the invariants."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd

from conftest import REPO, assert_invariants
from test_plots import assert_png

EXAMPLES = REPO / "docs" / "examples"


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_run_one(tmp_path):
    done = run_example("run_one.py", str(tmp_path / "out"))
    lines = done.stdout.splitlines()
    assert lines[0].startswith("hotspot cap 1.0") and lines[1].startswith("hotspot cap 0.0833")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert_invariants(summary)
    # Throttling the hotspot senders lets the uniform hosts through.
    assert summary["groups"]["uniform"]["accepted_load"] > 0.9


def test_sweep_loads(tmp_path):
    out = tmp_path / "sweep"
    done = run_example("sweep_loads.py", str(out))
    table = pd.read_parquet(out / "points.parquet")
    assert len(table) == 8 and (table["status"] == "ok").all()
    for record in (out / "points").glob("*.json"):
        assert_invariants(json.loads(record.read_text())["summary"])
    assert_png(out / "load-curve.png")
    assert "figure:" in done.stdout
    throttled = table[(table["traffic.groups.0.cap"] < 1) & (table["traffic.load"] == 1.0)]
    unthrottled = table[(table["traffic.groups.0.cap"] == 1) & (table["traffic.load"] == 1.0)]
    assert throttled["groups.uniform.accepted_load"].iloc[0] > 2 * unthrottled["groups.uniform.accepted_load"].iloc[0]


def test_plot_timeseries(tmp_path):
    done = run_example("plot_timeseries.py", str(tmp_path))
    assert "recovered after" in done.stdout
    assert_invariants(json.loads((tmp_path / "summary.json").read_text()))
    assert_png(tmp_path / "throughput.png")


def test_the_sweep_file_of_the_guide_is_valid(tmp_path):
    import re

    from snarl.sweep import load_spec, resolve_points

    guide = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")
    block = re.search(r'```toml\n(name = "load curve".*?)```', guide, re.S).group(1)
    base = REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml"
    path = tmp_path / "sweep.toml"
    path.write_text(block.replace('"hotspot-fat-tree-small.toml"', f'"{base}"', 1), encoding="utf-8")
    assert len(resolve_points(load_spec(path))) == 5 * 2 * 3 * 2  # as the guide says


def test_pfc_vs_dcqcn(tmp_path):
    done = run_example("pfc_vs_dcqcn.py", str(tmp_path))
    none, dcqcn = done.stdout.splitlines()
    assert none.startswith("none: victims accept") and dcqcn.startswith("dcqcn: victims accept")
    # DCQCN protects the victims: at least twice what they get under PFC alone.
    accepted = [float(line.split("accept ")[1].split(" of")[0]) for line in (none, dcqcn)]
    assert accepted[1] >= 2 * accepted[0], done.stdout
    for cc in ("none", "dcqcn"):
        assert_png(tmp_path / f"fabric-{cc}.png")
