"""Congestion trees drawn (snarl.trees, `snarl plot tree`): the silent forest's 648-host
fat-tree (IB CC off, shortened to a few milliseconds) as an animation, one frame per
window, and as a strip of small multiples; one frame with --at; the registry of plot
kinds; the HTML report's animation and strip, loaded in a browser."""

from __future__ import annotations

import html
import json
import os
import re

import pandas as pd
import pytest

from snarl import plotkinds, trees

from conftest import REPO, assert_renders, page_images, run_snarl
from test_plots import assert_png

FOREST = REPO / "scenarios" / "infiniband-cc" / "silent-forest-cc-off.toml"
SHORT = [
    "--set", "observe.trees={}",
    "--set", "simulation.duration=4ms",
    "--set", "simulation.warmup=1ms",
    "--set", "simulation.window=500us",
]
WINDOWS = 8


@pytest.fixture(scope="module")
def forest(tmp_path_factory):
    """The silent forest, CC off, 4 ms in windows of 500 µs, with its trees tracked."""
    from conftest import assert_invariants

    where = tmp_path_factory.mktemp("forest")
    done = run_snarl("run", FOREST, *SHORT, "--out", where / "run")
    assert done.returncode == 0, done.stderr
    assert_invariants(json.loads((where / "run" / "summary.json").read_text()))
    return where / "run"


def test_the_run_writes_the_trees_and_the_fabric(forest):
    summary = json.loads((forest / "summary.json").read_text())
    assert len(summary["trees"]["roots"]) == 8, summary["trees"]
    topology = pd.read_parquet(forest / "topology.parquet")
    # 36 leaves of 18 hosts and 18 uplinks, 18 spines of 36 downlinks.
    assert len(topology) == 36 * 36 + 18 * 36
    assert sorted(topology.drop_duplicates("switch")["level"].value_counts().items()) == [(1, 36), (2, 18)]
    assert (topology["peer_kind"] == "host").sum() == 648
    ports = pd.read_parquet(forest / "tree_ports.parquet")
    assert set(ports["role"]) >= {"root", "egress", "ingress"}


def test_plot_tree_writes_an_animation_of_every_window_and_a_strip(cli, forest):
    done = cli("plot", "tree", forest)
    assert done.returncode == 0, done.stderr
    gif, png = forest / "tree.gif", forest / "tree.png"
    assert done.stdout.split() == [str(gif), str(png)]
    from PIL import Image

    with Image.open(gif) as image:
        assert image.format == "GIF"
        assert image.n_frames == WINDOWS
        assert image.is_animated
    assert_png(png)


def test_plot_tree_at_a_time_draws_its_window(cli, forest, tmp_path):
    done = cli("plot", "tree", forest, "--at", "2.2ms", "-o", tmp_path / "at.png")
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "at.png")
    done = cli("plot", "tree", forest, "--at", "2.2ms", "--hosts", "-o", tmp_path / "hosts.svg")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "hosts.svg").read_text().startswith("<?xml")
    data = trees.load(forest)
    assert len(data.windows) == WINDOWS
    assert data.window_at(2_200_000.0) == 4
    assert data.moving is not None and len(data.moving) == 8, "the forest's hotspots are marked"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--at", "9ms"], "windows span"),
        (["--at", "soon"], "cannot read the duration"),
        (["-o", "tree.jpg"], ".gif animation"),
        (["--mark", "nobody"], "no such group"),
    ],
)
def test_plot_tree_bad_input_is_one_line_exit_2(cli, forest, args, message):
    done = cli("plot", "tree", forest, *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_run_without_trees_says_how_to_get_them(cli, small_config, tmp_path):
    done = cli("run", small_config, "--out", "plain")
    assert done.returncode == 0, done.stderr
    done = cli("plot", "tree", tmp_path / "plain")
    assert done.returncode == 2 and "observe.trees" in done.stderr, done.stderr


def test_plot_kinds_are_registered_once(tmp_path):
    from snarl import plots

    kinds = plotkinds.kinds()
    # The figures of snarl.plots, as declared where they are drawn, then the trees.
    assert list(kinds) == [*plots.FIGURES, "tree"]
    assert plots.KINDS == tuple(plots.FIGURES)
    assert "load-curve" in kinds and "mechanisms" in kinds
    assert [name for name, kind in kinds.items() if kind.several] == ["mechanisms"]
    assert all(kind.help.strip() for kind in kinds.values()), [n for n, k in kinds.items() if not k.help.strip()]
    with pytest.raises(ValueError, match="twice"):
        plotkinds.register(plotkinds.PlotKind("tree", "again", lambda args: []))
    with pytest.raises(ValueError, match="twice"):
        plots.directory_figure("heatmap", "again")(lambda directory, request: None)
    with pytest.raises(ValueError, match="help"):
        plots.directory_figure("silent", "")
    with pytest.raises(plots.PlotError, match=r"unknown plot 'nope': expected one of load-curve, timeseries, "):
        plots.plot_directory("nope", tmp_path)
    # `snarl plot --help` gives each kind its line.
    done = run_snarl("plot", "--help", env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for name, kind in kinds.items():
        assert f"{name} {kind.help}" in text, name


def test_the_html_report_embeds_the_animation_of_a_point_with_trees(cli, tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text(
        f"""
name = "forest"
base = "{FOREST}"
[set]
"observe.trees" = {{}}
"simulation.duration" = "2ms"
"simulation.warmup" = "1ms"
"simulation.window" = "500us"
[axes]
seed = [1]
""",
        encoding="utf-8",
    )
    done = run_snarl("sweep", spec, "--out", tmp_path / "sweep", "--processes", "1")
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(tmp_path / "sweep" / "points.parquet")
    assert list(points["status"]) == ["ok"] and points["packets.dropped"].sum() == 0
    done = cli("report", tmp_path / "sweep", "-o", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    # The animation, and beside it the strip `snarl plot tree` draws.
    point = points["point_id"].iloc[0]
    text = html.unescape(page)
    assert f"<b>Congestion trees.</b> Point {point}: the fabric window by window (every window)" in text
    assert f"<b>Congestion trees, window by window.</b> Point {point}: every window side by side" in text
    figures = [json.loads(html.unescape(m)) for m in re.findall(r'data-figure="([^"]*)"', page)]
    assert [f["kind"] for f in figures if f["kind"].startswith("tree")] == ["tree", "tree-strip"]
    assert all(f["drawn"] for f in figures if f["kind"].startswith("tree"))
    sources = page_images(page, ("png", "gif"))
    assert sum(s.startswith("data:image/gif;") for s in sources) == 1
    # Every image, the animation and the strip included, loads in a browser.
    assert_renders(tmp_path / "report.html", len(sources), tmp_path / "profile")
