"""`snarl compare`: runs side by side (a table with each run's difference to the first,
throughput, FCTs and congestion trees overlaid), as a self-contained HTML page that
renders in headless Chromium, or on the terminal; and `snarl report RUN_DIR`."""

from __future__ import annotations

import base64
import html
import io
import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import ONE_TREE_SHORT, REPO, assert_invariants, assert_renders, page_images, run_snarl


@pytest.fixture
def out(mechanism_runs: Path, tmp_path: Path) -> Path:
    """``out/none`` and ``out/dcqcn``: the one-tree runs cut to 300 µs (PFC alone, and
    with DCQCN), as ``snarl run --out`` writes them."""
    directory = tmp_path / "out"
    for cc in ("none", "dcqcn"):
        shutil.copytree(mechanism_runs / f"one-tree-{cc}", directory / cc)
    return directory


def test_compare_writes_one_page_that_renders(out, tmp_path):
    output = tmp_path / "cmp.html"
    done = run_snarl("compare", "out/none", "out/dcqcn", "-o", output, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(output)
    page = output.read_text(encoding="utf-8")
    text = html.unescape(page)
    assert "<title>snarl comparison: none, dcqcn</title>" in text
    # Each run has its column of the summary, and the config keys that differ are named.
    assert "<th>none</th>" in text and '<th colspan="2">dcqcn</th>' in text
    assert ">congestion_control.type</td>" in text
    # The figures: throughput per group and FCTs overlaid; no trees table, no tree figure.
    assert "<b>Throughput over time.</b>" in text and "<b>Flow completion times.</b>" in text
    assert "Not drawn" not in text and "Congestion trees" not in text
    sources = page_images(page)
    assert len(sources) == 2
    assert_renders(output, len(sources), tmp_path / "profile")


def test_the_differences_are_relative_to_the_first_run(out):
    from snarl import compare

    runs = compare.load_runs([out / "none", out / "dcqcn"]).runs
    assert [run.name for run in runs] == ["none", "dcqcn"]
    frame = compare.summary_frame(runs)
    victims = frame.loc[("group victims", "accepted load")]
    assert victims["dcqcn"] > victims["none"]  # DCQCN protects the victims
    assert victims["dcqcn vs none"] == pytest.approx(victims["dcqcn"] / victims["none"] - 1)
    assert frame.loc[("all hosts", "offered load"), "dcqcn vs none"] == 0.0  # one workload
    assert ("pfc", "pause_frames_sent") in frame.index  # the sections' figures too
    rows = {(row.section, row.label): row for row in compare.summary_rows(runs)}
    assert rows[("group victims", "accepted load")].verdict(1) == 1  # better
    assert rows[("all hosts", "offered load")].difference(1) == ("=", 0.0)
    keys = dict(compare.config_differences(runs))
    assert keys["congestion_control.type"] == [None, "dcqcn"]
    assert "description" not in keys


def test_compare_prints_the_table_on_the_terminal(out, tmp_path):
    done = run_snarl("compare", "out/none", "out/dcqcn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Summary (differences relative to none)" in done.stdout
    for text in ("none", "dcqcn", "group victims", "accepted load", "FCT p99 (ns)", "pause_frames_sent"):
        assert text in done.stdout, text
    summaries = {cc: json.loads((out / cc / "summary.json").read_text()) for cc in ("none", "dcqcn")}
    victims = [summaries[cc]["groups"]["victims"]["accepted_load"] for cc in ("none", "dcqcn")]
    assert f"{victims[1]:.4f} ({victims[1] / victims[0] - 1:+.1%})" in done.stdout
    assert "Config differences" in done.stdout and "congestion_control.type" in done.stdout
    assert not list(tmp_path.glob("*.html")) and sorted(p.name for p in out.iterdir()) == ["dcqcn", "none"]


def test_names_and_sweep_points(out, small_sweep, tmp_path):
    from snarl import compare

    # A sweep alone: its points, named by the swept values that differ.
    points = compare.load_runs([small_sweep]).runs
    assert len(points) == 8
    assert points[0].name == "load=0.3, cap=1, seed=1"
    assert len({run.name for run in points}) == 8
    # Beside other runs, after the sweep's --name; runs named by --name.
    output = tmp_path / "named.html"
    done = run_snarl(
        "compare", "out/none", small_sweep, "-o", output, "--name", "PFC alone", "--name", "small", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    text = html.unescape(output.read_text(encoding="utf-8"))
    assert "<th>PFC alone</th>" in text and '<th colspan="2">small: load=0.6, cap=0.5, seed=2</th>' in text
    page_images(output.read_text(encoding="utf-8"))
    # Without --name, beside other arguments, a sweep's points get its directory's name.
    names = [run.name for run in compare.load_runs([out / "none", small_sweep]).runs]
    assert names[1] == f"{small_sweep.name}: load=0.3, cap=1, seed=1"


@pytest.mark.parametrize(
    "args, message",
    [
        (["out/none", "empty"], "empty: not a sweep directory (no points.parquet) nor a run directory (no summary.json)"),
        (["out/none", "missing"], "missing: no such directory"),
        (["out/none", "out/none.toml"], "out/none.toml: not a directory"),
        (["out/none", "out/dcqcn", "--name", "a"], "--name: 1 name for 2 directories"),
        (["out/none", "out/none"], "two runs are named 'none'"),
        (["out/none", "out/dcqcn", "-o", "page.png"], "-o page.png: the page must be an .html file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(out, tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    (out / "none.toml").write_text("")
    done = run_snarl("compare", *args, *([] if "-o" in args else ["-o", "page.html"]), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr
    assert not list(tmp_path.glob("page.*"))


def test_report_of_a_run_directory(out, tmp_path):
    before = sorted(p.name for p in (out / "dcqcn").iterdir())
    done = run_snarl("report", "out/dcqcn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # Beside the run, not in it: `snarl run --out out/dcqcn` can still replace it.
    output = out / "dcqcn.html"
    assert done.stdout.strip() == str(output.resolve())
    assert sorted(p.name for p in (out / "dcqcn").iterdir()) == before
    page = output.read_text(encoding="utf-8")
    text = html.unescape(page)
    assert "<title>dcqcn</title>" in text and "run report" in text
    for title in ("Throughput over time", "Flow and congestion control over time", "Flow completion times",
                  "FCT slowdown by flow size"):
        assert f"<b>{title}.</b>" in text, title
    assert "Not drawn" not in text
    assert "<code>fabric.parquet</code>" in text and "[congestion_control]" in text
    sources = page_images(page)
    assert len(sources) == 4
    assert_renders(output, len(sources), tmp_path / "profile")
    # Several run directories: side by side, as snarl compare; runs and sweeps: refused.
    done = run_snarl("report", "out/none", "out/dcqcn", "-o", "both.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "snarl comparison: none, dcqcn" in (tmp_path / "both.html").read_text(encoding="utf-8")


def test_report_refuses_runs_and_sweeps_together(out, small_sweep, tmp_path):
    done = run_snarl("report", "out/none", small_sweep, "-o", "r.html", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("snarl: error: ") and "not both" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_congestion_trees_when_runs_have_them(out, tmp_path):
    from snarl import compare

    # A `trees` table as the tree collector writes it: one row per window and tree.
    trees = pd.DataFrame({
        "time": [100_000.0, 100_000.0, 110_000.0, 120_000.0],
        "root": ["switch 9 port 5", "switch 4 port 5", "switch 9 port 5", "switch 9 port 5"],
        "size": [7, 3, 12, 4],
    })
    trees.to_parquet(out / "dcqcn" / "trees.parquet")
    runs = compare.load_runs([out / "none", out / "dcqcn"]).runs
    assert compare.read_trees(runs[0]) is None
    read = compare.read_trees(runs[1])
    assert read["time"].tolist() == [100_000.0, 110_000.0, 120_000.0]
    assert read["trees"].tolist() == [2, 1, 1] and read["ports"].tolist() == [10, 12, 4]
    # A window index instead of a time: the window's start, from simulation.window (10 µs).
    trees.assign(window=[10, 10, 11, 12]).drop(columns="time").to_parquet(out / "dcqcn" / "trees.parquet")
    runs = compare.load_runs([out / "none", out / "dcqcn"]).runs
    assert compare.read_trees(runs[1])["time"].tolist() == [100_000.0, 110_000.0, 120_000.0]

    done = run_snarl("compare", "out/none", "out/dcqcn", "-o", "trees.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = html.unescape((tmp_path / "trees.html").read_text(encoding="utf-8"))
    assert "<b>Congestion trees over time.</b>" in text and "No trees table: none." in text
    assert len(page_images(text)) == 3


def test_runs_that_recorded_trees_show_them_drawn(out, tmp_path):
    from PIL import Image

    # The one-tree run of PFC alone, 300 µs, with its trees tracked: 15 windows of 20 µs.
    scenario = REPO / "scenarios" / "lossless-ethernet" / "one-tree-none.toml"
    sets = [arg for k, v in {**ONE_TREE_SHORT, "observe.trees": "{}"}.items() for arg in ("--set", f"{k}={v}")]
    done = run_snarl("run", scenario, *sets, "--out", "out/pfc-trees", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "pfc-trees" / "summary.json").read_text())
    assert_invariants(summary)
    windows = math.ceil(summary["sim_time"] / summary["trees"]["period"])

    # A run's page: the trees' sizes over time, then their animation and their strip.
    done = run_snarl("report", "out/pfc-trees", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (out / "pfc-trees.html").read_text(encoding="utf-8")
    text = html.unescape(page)
    assert "<b>Congestion trees over time.</b>" in text
    assert "<b>Congestion trees.</b> The fabric window by window (every window)" in text
    assert "<b>Congestion trees, window by window.</b> Every window side by side" in text
    sources = page_images(page, ("png", "gif"))
    gifs = [s for s in sources if s.startswith("data:image/gif;")]
    assert len(sources) == 4 + 1 + 2 and len(gifs) == 1
    with Image.open(io.BytesIO(base64.b64decode(gifs[0].partition(",")[2]))) as image:
        assert image.is_animated and image.n_frames == windows
    assert_renders(out / "pfc-trees.html", len(sources), tmp_path / "profile")

    # Beside a run without trees: the drawings of the one that has them, named.
    done = run_snarl("compare", "out/none", "out/pfc-trees", "-o", "cmp.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "cmp.html").read_text(encoding="utf-8")
    text = html.unescape(page)
    assert "No trees table: none." in text
    assert "<b>Congestion trees.</b> pfc-trees: the fabric window by window" in text
    assert "<b>Congestion trees, window by window.</b> pfc-trees: every window" in text
    sources = page_images(page, ("png", "gif"))
    assert len(sources) == 3 + 2 and sum(s.startswith("data:image/gif;") for s in sources) == 1
    assert_renders(tmp_path / "cmp.html", len(sources), tmp_path / "profile")
