"""Figures that tell the truth, in words people use: groups addressed by name, a sweep
file's [labels] and [[figures]], a report that chooses its figures from what was swept
(no collapsed panel, no distribution pooled across a swept value, legends that fit and
speak the sweep file's words), duplicate points reported once, and `snarl plot`'s
options and queue series."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import snarl
from conftest import REPO, SWEEP_BASE, run_snarl
from snarl import html as report_html
from snarl import plots
from snarl.sweep import SweepError, load_spec, resolve_points

DEMO = REPO / "scenarios" / "demo" / "endpoint-congestion.toml"
WINDY = REPO / "scenarios" / "infiniband-cc" / "sweep-windy-forest.toml"


def figures_of(page: str) -> list[dict]:
    """The metadata the report records beside each figure (``data-figure``)."""
    return [json.loads(html.unescape(m)) for m in re.findall(r'<figure[^>]*\bdata-figure="([^"]*)"', page)]


def dotted_keys(spec) -> set[str]:
    """The dotted keys a sweep file names in [labels]."""
    return {key for key in spec.labels if "." in key}


def check_truthful(figures: list[dict], named: set[str]) -> None:
    """No panel whose points share one x value, no distribution (or curve) pooled across
    a swept value, no crowded legend, and no legend entry or title that is a raw dotted
    key the sweep file names."""
    assert figures
    for figure in figures:
        assert figure["drawn"], figure
        assert figure["pooled"] == [], figure
        assert figure["crowded"] == 0, figure
        if figure["distinct_x"] is not None:
            assert figure["distinct_x"] > 1, figure
        for text in [*figure["legend"], *figure["legend_titles"], figure["title"]]:
            for key in named:
                assert key not in text, (key, text, figure["title"])
            assert not re.search(r"\btraffic\.groups\.\d", text), (text, figure["title"])


# ----------------------------------------------------------------------------- sweeps


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    """The demo sweep cut down (3 loads, 2 seeds, short runs) and its report."""
    spec = load_spec(DEMO)
    spec = dataclasses.replace(
        spec,
        axes={**spec.axes, "traffic.load": [0.3, 0.6, 1.0], "seed": [1, 2]},
        set={"simulation.duration": "3000cycles", "simulation.warmup": "1000cycles"},
    )
    out = tmp_path_factory.mktemp("demo") / "out"
    table = snarl.sweep(spec, out, processes=2)
    assert (table["status"] == "ok").all()
    return out, spec, report_html.render(out)


@pytest.fixture(scope="module")
def windy_report(tmp_path_factory):
    """The windy-forest sweep cut down to a few short points on a 72-host fat-tree, with
    its [labels] and [[figures]] as shipped, and its report."""
    spec = load_spec(WINDY)
    spec = dataclasses.replace(
        spec,
        axes={"traffic.groups.B.pattern.parts.0.share": [0.0, 0.5, 1.0], "congestion_control": spec.axes["congestion_control"]},
        zip={"description": ["25% B nodes", "100% B nodes"], "traffic.groups.B.count": [18, 72], "traffic.groups.C.count": [43, 0]},
        set={"topology.radix": 12, "simulation.duration": "0.6ms", "simulation.warmup": "0.3ms", "simulation.window": "0.1ms"},
    )
    out = tmp_path_factory.mktemp("windy") / "out"
    table = snarl.sweep(spec, out, processes=2)
    assert (table["status"] == "ok").all(), table[["status", "error"]]
    return out, spec, report_html.render(out)


def test_the_demo_report_tells_the_truth_in_the_sweep_files_words(demo_report):
    out, spec, page = demo_report
    figures = figures_of(page)
    check_truthful(figures, dotted_keys(spec))
    first = figures[0]
    # The load curve of the group the scenario marks measured comes first.
    assert (first["kind"], first["x"], first["y"]) == ("load-curve", "groups.uniform.offered_load", "groups.uniform.accepted_load")
    assert "hotspot senders at full load, throttled" in first["legend"]
    assert "hotspot senders silent, unthrottled" in first["legend"]
    # The hotspot group's offered load is 0 or 1 whatever the load: its curve is drawn
    # against the swept load instead of piling onto two dots.
    hotspot = [f for f in figures if f["y"] == "groups.hotspot.accepted_load"]
    assert [f["x"] for f in hotspot] == ["traffic.load"]
    # The distribution of throughput holds the load at one value, a curve per setting.
    (cdf,) = [f for f in figures if f["kind"] == "cdf"]
    assert cdf["fixed"] == {"traffic.load": "1.0"} and len(cdf["legend"]) == 4
    # Time series are captioned by their settings, not by hashes alone.
    titles = [f["title"] for f in figures if f["kind"] in ("timeseries", "fabric")]
    assert "Throughput over time: hotspot senders at full load, throttled; offered load of the uniform hosts = 1.0" in titles
    # Tables and the swept keys' line speak the same words; values print as written.
    text = html.unescape(page)
    assert "hotspot cap (<code>traffic.groups.0.cap</code>, 2 values)" in text
    assert ">throttled</td>" in page and "0.08330000" not in page


def test_the_windy_forest_report_draws_its_declared_figure_first(windy_report):
    out, spec, page = windy_report
    figures = figures_of(page)
    check_truthful(figures, dotted_keys(spec))
    declared = [f for f in figures if f["declared"]]
    assert [f["y"] for f in declared] == ["receive_rate.non_hotspots", "total_throughput"]
    assert figures[: len(declared)] == declared
    headline = declared[0]
    assert headline["x"] == "traffic.groups.B.pattern.parts.0.share" and headline["hue"] == ["description"]
    assert headline["style"] == "congestion_control" and headline["distinct_x"] == 3
    legend = headline["legend"]
    assert {"25% B nodes", "100% B nodes", "IB CC on", "IB CC off"} <= set(legend)
    assert any(entry.startswith("tmax, the non-hotspots' bound") for entry in legend)
    assert len(legend) <= plots.MAX_LEGEND
    # The zipped keys move together: one direction, named by the description.
    assert not any("traffic.groups.B.count" in f["hue"] or "traffic.groups.B.count" in f["facet"] for f in figures)
    for figure in figures:
        assert figure["x"] not in ("offered_load",), figure  # every host offers the same load: no spread


def test_many_settings_get_panels_or_an_outside_legend(tmp_path):
    from matplotlib.figure import Figure

    import pandas as pd

    rows = [
        {"status": "ok", "offered": x, "goodput": x * k, "k": k, "m": m}
        for x in (0.1, 0.5, 1.0) for k in range(5) for m in range(4)
    ]
    points = pd.DataFrame(rows)
    fig = plots.load_curve(points, x="offered", y="goodput", hue=["m", "k"], by="offered", facet=["m"], ideal=False)
    meta = plots.describe(fig)
    assert meta["panels"] == 4 and meta["crowded"] == 0 and meta["distinct_x"] == 3
    fig = plots.load_curve(points, x="offered", y="goodput", hue=["k", "m"], by="offered", ideal=False)
    assert plots.describe(fig)["crowded"] == 0 and len(plots.describe(fig)["legend"]) == 20
    assert isinstance(fig, Figure)


# ----------------------------------------------------------------------------- names


def test_groups_are_addressed_by_name_as_well_as_by_index(tmp_path):
    (tmp_path / "base.toml").write_text(SWEEP_BASE)
    by_name = snarl.resolve_config(tmp_path / "base.toml", set={"traffic.groups.rest.load": 0.3})
    by_index = snarl.resolve_config(tmp_path / "base.toml", set={"traffic.groups.1.load": 0.3})
    assert by_name == by_index and "load = 0.3" in by_name
    with pytest.raises(snarl.ConfigError) as error:
        snarl.resolve_config(tmp_path / "base.toml", set={"traffic.groups.victims.load": 0.3})
    message = str(error.value)
    assert "no element named `victims`" in message and "`hot`, `rest`" in message
    done = run_snarl("run", tmp_path / "base.toml", "--set", "traffic.groups.victims.load=0.3")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "`hot`, `rest`" in done.stderr


def test_duplicate_points_are_run_and_reported_once(tmp_path):
    (tmp_path / "base.toml").write_text(SWEEP_BASE)
    (tmp_path / "sweep.toml").write_text(
        'base = "base.toml"\n[axes]\n"traffic.groups.hot.cap" = [1.0, 0.5]\n"traffic.groups.0.cap" = [0.5]\n'
    )
    # Both settings end with group 0's cap at 0.5 (the later override wins): one experiment.
    points = resolve_points(load_spec(tmp_path / "sweep.toml"))
    assert len(points) == 1 and len(points[0].aliases) == 1
    done = run_snarl("sweep", tmp_path / "sweep.toml", "--out", tmp_path / "out", "--processes", "1")
    assert done.returncode == 0, done.stderr
    assert "1 point (1 setting resolves to the config of another point: run and reported once)" in done.stderr
    import pandas as pd

    table = pd.read_parquet(tmp_path / "out" / "points.parquet")
    assert len(table) == 1
    info = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert len(info["points"]) == 1 and len(info["points"][0]["aliases"]) == 1
    page = html.unescape(report_html.render(tmp_path / "out"))
    assert "1 setting of the sweep resolves to the config of another point, run and listed once" in page


def test_labels_and_value_aliases_parse_as_written():
    spec_text = {
        "base": str(REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml"),
        "axes": {"traffic.groups.hotspot.cap": [1.0, 0.0833]},
        "labels": {
            "traffic.groups.hotspot.cap": {"name": "hotspot cap", "values": {"1": {"0": "unthrottled"}, "0.0833": "throttled"}},
            "traffic.load": "offered load",
        },
        "figures": [{"kind": "load-curve", "x": "traffic.load", "y": "accepted_load", "hue": "traffic.groups.hotspot.cap"}],
    }
    spec = load_spec(spec_text)
    assert spec.labels["traffic.groups.hotspot.cap"]["values"] == {"1.0": "unthrottled", "0.0833": "throttled"}
    assert spec.figures[0]["hue"] == ["traffic.groups.hotspot.cap"]
    names = plots.Names(spec.labels, ["hotspot", "uniform"])
    # A label given by group name applies to the key by index, and the other way round.
    assert names.alias("traffic.groups.0.cap", 1.0) == "unthrottled"
    assert names.alias("traffic.groups.hotspot.cap", 0.0833) == "throttled"
    assert names.key("traffic.groups.0.cap") == "hotspot cap"
    assert names.key("traffic.groups.1.load") == "offered load per host of uniform"
    assert plots.hue_label(["traffic.groups.0.cap"], 0.0833, names=names) == "throttled"
    assert plots.hue_label(["traffic.groups.1.load"], 0.5, names=names) == "offered load per host of uniform = 0.5"
    assert plots._value_text(0.0833) == "0.0833" and plots._value_text(1.0) == "1.0"
    assert plots._value_text(0.1 + 0.2) == "0.3"


@pytest.mark.parametrize(
    "body, expected",
    [
        ('[labels]\n"traffic.load" = 3\n', "must be a name"),
        ('[labels]\n"traffic.load" = { nom = "x" }\n', "unknown key `nom`"),
        ('[labels]\n"traffic.load" = { values = { "0.5" = 1 } }\n', "must be a string"),
        ('[[figures]]\nkind = "pie"\n', "kind must be one of"),
        ('[[figures]]\nkind = "load-curve"\nx = "traffic.load"\n', "needs y"),
        ('[[figures]]\nkind = "cdf"\nvalue = "accepted_load"\ncolour = "red"\n', "unknown key `colour`"),
    ],
)
def test_bad_labels_and_figures_are_refused(tmp_path, body, expected):
    (tmp_path / "base.toml").write_text(SWEEP_BASE)
    path = tmp_path / "sweep.toml"
    path.write_text(f'base = "base.toml"\n[axes]\n"traffic.load" = [0.3, 0.6]\n{body}')
    with pytest.raises(SweepError, match=re.escape(expected)):
        load_spec(path)


# ----------------------------------------------------------------------------- snarl plot


def test_snarl_plot_takes_titles_labels_scales_and_size(demo_report, tmp_path):
    out, _, _ = demo_report
    output = tmp_path / "curve.png"
    done = run_snarl(
        "plot", "load-curve", out, "-o", output, "--title", "My title", "--xlabel", "load", "--ylabel", "goodput",
        "--logy", "--size", "8x5", "--x", "groups.uniform.offered_load", "--y", "groups.uniform.accepted_load",
    )
    assert done.returncode == 0, done.stderr
    fig = plots.plot_directory(
        "load-curve", out, x="groups.uniform.offered_load", y="groups.uniform.accepted_load", title="My title",
        xlabel="load", ylabel="goodput", logy=True, size="8x5",
    )
    (ax,) = fig.axes
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), ax.get_yscale()) == ("My title", "load", "goodput", "log")
    assert list(fig.get_size_inches()) == [8.0, 5.0]
    # Keys by group name and values by alias, as the sweep file names them.
    fig = plots.plot_directory("load-curve", out, hue="traffic.groups.hotspot.cap", where=["traffic.groups.hotspot.load=hotspot senders at full load"])
    assert set(plots.describe(fig)["legend"]) >= {"throttled", "unthrottled"}
    bad = run_snarl("plot", "load-curve", out, "-o", tmp_path / "x.png", "--size", "big")
    assert bad.returncode == 2 and "--size" in bad.stderr


def test_snarl_plot_queues_draws_the_probed_queues(tmp_path):
    config = tmp_path / "probed.toml"
    config.write_text(
        '[simulation]\nduration = "20us"\nwindow = "2us"\n[topology]\ntype = "single_switch"\nhosts = 8\n'
        '[traffic]\nload = 0.9\npattern = { type = "hotspot" }\n'
        "[observe]\nqueues = [{ switch = 0, port = 0 }, { switch = 0, port = 1 }]\n"
    )
    done = run_snarl("run", config, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    output = tmp_path / "queues.png"
    done = run_snarl("plot", "queues", tmp_path / "run", "-o", output)
    assert done.returncode == 0, done.stderr
    assert output.stat().st_size > 0
    fig = plots.plot_directory("queues", tmp_path / "run")
    meta = plots.describe(fig)
    assert meta["legend"][:2] == ["switch 0 port 0", "switch 0 port 1"] and meta["distinct_x"] == 10


def test_snarl_plot_queues_draws_each_probed_ports_pauses_and_marks(tmp_path):
    """A PFC incast with RED marking: the queues table counts each probe's pause frames
    and marks, and the plot draws them port by port (the fabric-wide panel keeps only
    what the probes do not count)."""
    config = tmp_path / "incast.toml"
    config.write_text(
        '[simulation]\nduration = "60us"\nwindow = "5us"\n[topology]\ntype = "single_switch"\nhosts = 8\n'
        '[switch]\ntype = "shared_buffer"\nport_buffer = "512KiB"\negress_cap = "256KiB"\nspeedup = 2.0\n'
        '[flow_control]\ntype = "pfc"\nxoff = 50\nxon = 45\n'
        '[marking]\ntype = "red"\nkmin = "20KiB"\nkmax = "200KiB"\npmax = 0.1\n'
        '[traffic]\nload = 1.0\n'
        '[[traffic.groups]]\nname = "sink"\nhosts = [0]\npattern = { type = "silent" }\n'
        '[[traffic.groups]]\nname = "senders"\nrest = true\npattern = { type = "incast", destination = 0 }\n'
        "[observe]\nqueues = [{ switch = 0, port = 0 }, { switch = 0, port = 1 }]\n"
    )
    done = run_snarl("run", config, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    queues = pd.read_parquet(tmp_path / "run" / "queues.parquet")
    for column in ("pause_frames_sent", "pause_frames_received", "ecn_marks"):
        assert column in queues.columns, list(queues.columns)
    by_port = queues.groupby("port")[["pause_frames_sent", "ecn_marks"]].sum()
    assert by_port.loc[0, "ecn_marks"] > 0 and by_port.loc[1, "pause_frames_sent"] > 0, by_port
    output = tmp_path / "queues.png"
    done = run_snarl("plot", "queues", tmp_path / "run", "-o", output)
    assert done.returncode == 0, done.stderr
    assert output.stat().st_size > 0
    fig = plots.plot_directory("queues", tmp_path / "run")
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels[:3] == ["queue (KiB): mean, max dashed", "pause frames per window", "ECN marks per window"], labels
    # Each panel has a line per probe; pauses sent solid, received dashed.
    pauses = fig.axes[1]
    assert [line.get_linestyle() for line in pauses.get_lines()] == ["-", "--", "-", "--"]
    assert {line.get_label() for line in fig.axes[2].get_lines()} == {"switch 0 port 0", "switch 0 port 1"}
    # The fabric's pause frames and marks are drawn per port: its panel, if any, has the rest.
    if len(fig.axes) > 3:
        drawn = [line.get_label() for line in fig.axes[3].get_lines()]
        assert "pause frames" not in drawn and "ECN marks" not in drawn, drawn
