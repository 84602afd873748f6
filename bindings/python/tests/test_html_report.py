"""`snarl report`: one self-contained HTML page that renders offline in headless Chromium
with every image loaded and no console message."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

from conftest import assert_renders, page_images, render, run_snarl


def test_the_browser_check_catches_broken_pages(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom"); notDefined();</script></body></html>')
    dom, console = render(bad, tmp_path / "profile")
    assert "<body" in dom
    assert any("Uncaught ReferenceError" in line for line in console), console


def test_report_is_self_contained_and_renders_offline(small_sweep, tmp_path):
    output = tmp_path / "site" / "report.html"
    done = run_snarl("report", small_sweep, "-o", output)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(output)
    page = output.read_text(encoding="utf-8")

    # Everything is inside the page: images are data: URIs, nothing is fetched.
    sources = page_images(page)
    assert len(sources) >= 5
    # The spec, the table of points and the versions are there.
    text = html.unescape(page)
    assert "small sweep" in text and '"traffic.groups.0.cap" = [1.0, 0.5]' in text
    assert page.count("<tr") >= 8 + 1
    for point in (small_sweep / "points").glob("*.json"):
        assert point.stem in page
    assert "distributed" in page and "matplotlib" in page

    assert_renders(output, len(sources), tmp_path / "profile")


def test_report_of_a_directory_without_a_sweep(tmp_path):
    done = run_snarl("report", tmp_path, "-o", tmp_path / "r.html")
    assert done.returncode == 2
    assert done.stderr.startswith("snarl: error: ") and "not a sweep directory" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_one_report_of_several_sweeps(small_sweep, tmp_path):
    copy = tmp_path / "second"
    shutil.copytree(small_sweep, copy)
    info = json.loads((copy / "sweep.json").read_text())
    info["name"] = "second sweep"
    (copy / "sweep.json").write_text(json.dumps(info))
    output = tmp_path / "both.html"
    done = run_snarl("report", small_sweep, copy, "-o", output)
    assert done.returncode == 0, done.stderr
    page = output.read_text(encoding="utf-8")
    assert page.count("<section") == 2
    assert 'href="#sweep-1"' in page and 'href="#sweep-2"' in page
    assert "<h2>small sweep</h2>" in page and "<h2>second sweep</h2>" in page
    sources = re.findall(r'\bsrc="([^"]*)"', page)
    dom, console = render(output, tmp_path / "profile")
    assert f'data-loaded="{len(sources)}"' in dom
    assert console == []


def report_figures(directory: Path, monkeypatch) -> dict[str, list]:
    """The figures of the report of `directory`, by title."""
    from snarl import html as report_html

    made: list = []
    monkeypatch.setattr(report_html, "_png", lambda fig: made.append(fig) or "data:,")
    titles = [title for title, _, uri in report_html._figures(directory, *_points_and_keys(directory)) if uri]
    figures: dict[str, list] = {}
    for title, fig in zip(titles, made):
        figures.setdefault(title, []).append(fig)
    return figures


def _points_and_keys(directory: Path):
    import pandas as pd

    points = pd.read_parquet(directory / "points.parquet")
    keys = json.loads((directory / "sweep.json").read_text())["keys"]
    return points, keys


def test_distribution_of_throughput_pools_the_windows_of_the_seeds_at_one_load(small_sweep, monkeypatch):
    import pandas as pd

    (fig,) = report_figures(small_sweep, monkeypatch)["Distribution of throughput over time"]
    # One curve per cap, at the highest load: the loads are not pooled into one curve.
    assert len(fig.axes[0].lines) == 2
    pooled = sum(len(line.get_xdata()) - 1 for line in fig.axes[0].lines)  # a step line repeats its first value
    points = pd.read_parquet(small_sweep / "points.parquet")
    windows = 0
    for point in points[points["traffic.load"] == 0.6]["point_id"]:
        frame = pd.read_parquet(small_sweep / "timeseries" / f"{point}.parquet")
        windows += int((frame["group"] == "all").sum())  # no warm-up: every window is measured
    assert pooled == windows > 8  # the windows of both seeds, not one value per point


def test_report_heatmaps_have_a_panel_per_value_of_the_other_keys(tmp_path, monkeypatch):
    from conftest import SWEEP_BASE

    import snarl

    (tmp_path / "base.toml").write_text(SWEEP_BASE)
    (tmp_path / "sweep.toml").write_text(
        'base = "base.toml"\n[axes]\n"traffic.load" = [0.3, 0.6]\n"traffic.groups.0.cap" = [1.0, 0.5]\n'
        '"traffic.groups.0.load" = [0.5, 1.0]\n"traffic.process" = ["bernoulli", "poisson"]\n'
    )
    snarl.sweep(tmp_path / "sweep.toml", tmp_path / "out", processes=2)
    figures = report_figures(tmp_path / "out", monkeypatch)
    heatmaps = [title for title in figures if title.startswith("Accepted load of")]
    assert heatmaps, list(figures)
    for title in heatmaps:
        (fig,) = figures[title]
        panels = [ax.get_title() for ax in fig.axes if ax.texts]
        assert panels == ["traffic.process = bernoulli", "traffic.process = poisson"], (title, panels)


def test_group_names_with_dots_are_whole_in_the_report(tmp_path):
    from conftest import SWEEP_BASE

    import snarl
    from snarl.html import render

    (tmp_path / "base.toml").write_text(SWEEP_BASE.replace('"hot"', '"hot.spot"'))
    (tmp_path / "sweep.toml").write_text('base = "base.toml"\n[axes]\n"traffic.load" = [0.3, 0.6]\n"traffic.groups.0.cap" = [1.0, 0.5]\n')
    snarl.sweep(tmp_path / "sweep.toml", tmp_path / "out", processes=2)
    page = html.unescape(render(tmp_path / "out"))
    assert "Group hot.spot: accepted vs offered load" in page
    assert ">groups.hot.spot.accepted_load</th>" in page
