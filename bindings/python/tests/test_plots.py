"""Figures (snarl.plots and `snarl plot`): each writes a valid image of non-trivial size
with the expected labels and legend entries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_snarl
from snarl import plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path, min_bytes: int = 10_000) -> None:
    """A PNG file of non-trivial size whose header is sound and whose pixels are not blank."""
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE), path
    assert len(data) >= min_bytes, (path, len(data))
    from PIL import Image

    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        width, height = image.size
        assert width >= 400 and height >= 300
        colors = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colors is not None and len(colors) > 10  # drawn, not blank


def legend_texts(fig) -> list[str]:
    legend = fig.axes[0].get_legend()
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


@pytest.fixture
def points() -> pd.DataFrame:
    """A synthetic sweep table: 3 loads x 2 caps x 3 seeds."""
    rng = np.random.default_rng(0)
    rows = []
    for load in (0.2, 0.5, 0.8):
        for cap in (1.0, 0.09):
            for seed in (1, 2, 3):
                accepted = min(load, 0.6 if cap == 1.0 else 0.75) + rng.normal(0, 0.01)
                rows.append({
                    "point_id": f"{load}-{cap}-{seed}",
                    "traffic.load": load,
                    "traffic.groups.0.cap": cap,
                    "seed": seed,
                    "status": "ok",
                    "offered_load": load + rng.normal(0, 0.005),
                    "accepted_load": accepted,
                    "latency.p99": 100 + 1000 * load,
                    "time_unit": "cycles",
                })
    rows.append({**rows[0], "point_id": "failed", "status": "failed", "accepted_load": None})
    return pd.DataFrame(rows)


def test_load_curve(points, tmp_path):
    fig = plots.load_curve(points, hue="traffic.groups.0.cap")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "offered load (fraction of link capacity)"
    assert ax.get_ylabel() == "accepted load (fraction of link capacity)"
    assert legend_texts(fig) == ["traffic.groups.0.cap = 0.09", "traffic.groups.0.cap = 1.0", "accepted = offered"]
    # One marker per load on each curve, at the mean over the seeds, with error bars.
    containers = ax.containers
    assert len(containers) == 2
    line = containers[1].lines[0]
    assert len(line.get_xdata()) == 3
    ok = points[(points["status"] == "ok") & (points["traffic.groups.0.cap"] == 1.0)]
    expected = ok.groupby("traffic.load")["accepted_load"].mean().to_numpy()
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), expected.astype(float))
    fig.savefig(tmp_path / "load.png")
    assert_png(tmp_path / "load.png")


def test_load_curve_of_another_figure_with_units(points, tmp_path):
    fig = plots.load_curve(points, x="traffic.load", y="latency.p99")
    assert fig.axes[0].get_ylabel() == "p99 packet latency (cycles)"
    assert fig.axes[0].get_xlabel() == "traffic.load (fraction of link capacity)"
    assert fig.axes[0].get_legend() is None  # one curve, no ideal line: no legend
    fig.savefig(tmp_path / "latency.svg")
    assert (tmp_path / "latency.svg").read_text().lstrip().startswith("<?xml")


def test_heatmap_orders_sizes_and_durations_by_magnitude():
    """The study's heatmaps: vector sizes from 8 B up and burst pauses from 1 us up, not
    in the order of their spelling; every cell keeps its own number."""
    sizes, pauses = ["8B", "512B", "32KiB", "2MiB", "16MiB"], ["1us", "100us", "10ms"]
    rows = [
        {"status": "ok", "time_unit": "ns", "workload.jobs.0.size": size, "workload.jobs.1.burst.pause": pause,
         "jobs.victim.perf_ratio": 0.1 * i + 0.01 * j}
        for i, size in enumerate(reversed(sizes))
        for j, pause in enumerate(reversed(pauses))
    ]
    fig = plots.heatmap(
        pd.DataFrame(rows), x="workload.jobs.1.burst.pause", y="workload.jobs.0.size", value="jobs.victim.perf_ratio"
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == sizes
    assert [t.get_text() for t in ax.get_xticklabels()] == pauses
    # The bottom-left cell is 8 B with a 1 us pause: the last size and pause written above.
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert texts[(0, 0)] == format(0.1 * 4 + 0.01 * 2, ".3g")
    assert texts[(4, 2)] == "0"


def test_load_curve_over_message_sizes_with_zipped_keys():
    """A victim's bandwidth over its message size: sizes read as bytes on a log scale,
    labelled as written; the iterations zipped with the size make no curves of their own,
    the aggressor swept beside them does."""
    rows = [
        {"status": "ok", "time_unit": "ns", "seed": seed, "workload.jobs.0.size": size,
         "workload.jobs.0.iterations": iterations, "workload.jobs.1.collective": aggressor,
         "jobs.victim.busbw": bw}
        for size, iterations, bw in (("64KiB", 20, 10.0), ("1MiB", 20, 20.0), ("16MiB", 6, 24.0))
        for aggressor in ("alltoall", "incast")
        for seed in (1, 2)
    ]
    points = pd.DataFrame(rows)
    keys = ["workload.jobs.0.size", "workload.jobs.0.iterations", "workload.jobs.1.collective", "seed"]
    hue = plots.default_hue(keys, points, along="workload.jobs.0.size")
    assert hue == ["workload.jobs.1.collective"]
    fig = plots.load_curve(points, x="workload.jobs.0.size", y="jobs.victim.busbw", hue=hue)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "size (bytes)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["64KiB", "1MiB", "16MiB"]
    curve = ax.containers[0].lines[0]
    np.testing.assert_allclose(np.asarray(curve.get_xdata(), dtype=float), [65536, 2**20, 2**24])
    assert plots.parse_size("2MiB") == 2**21 and plots.parse_size("2ms") is None


def test_load_curve_with_styles_a_reference_and_durations(tmp_path):
    """The windy and moving forests: one colour per B share, CC off dashed, the bound
    dotted; lifetimes written as durations are read as time."""
    rows = []
    for share in (0.25, 1.0):
        for p in (0.0, 0.5, 1.0):
            for cc, gain in (({"type": "none"}, 1.0), ({"type": "ibcc"}, 3.0)):
                rows.append({
                    "status": "ok", "traffic.groups.0.fraction": share, "share": p,
                    "congestion_control": json.dumps(cc), "receive_rate.non_hotspots": gain * (1 - p) + share,
                    "tmax": 5.0 * (1 - p), "time_unit": "ns",
                })
    points = pd.DataFrame(rows)
    fig = plots.load_curve(
        points, x="share", y="receive_rate.non_hotspots", hue="traffic.groups.0.fraction",
        style="congestion_control", reference="tmax", by="share",
    )
    ax = fig.axes[0]
    assert ax.get_ylabel() == "mean receive rate, non-hotspots (Gb/s)"
    curves = {c.get_label(): c.lines[0] for c in ax.containers}
    assert set(curves) == {
        f"traffic.groups.0.fraction = {s}, congestion_control = {t}" for s in (0.25, 1.0) for t in ("none", "ibcc")
    }
    off, on = curves["traffic.groups.0.fraction = 0.25, congestion_control = none"], curves[
        "traffic.groups.0.fraction = 0.25, congestion_control = ibcc"]
    assert off.get_linestyle() == "--" and on.get_linestyle() == "-"
    assert off.get_color() == on.get_color()
    np.testing.assert_allclose(np.asarray(on.get_ydata(), dtype=float), [3.25, 1.75, 0.25])
    bounds = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert len(bounds) == 2 and list(bounds[0].get_ydata()) == [5.0, 2.5, 0.0]
    moving = pd.DataFrame({
        "status": "ok", "time_unit": "ns", "traffic.hotspots.lifetime": ["10ms", "2ms", "1ms"],
        "receive_rate.all": [0.7, 0.8, 0.9],
    })
    fig = plots.load_curve(moving, x="traffic.hotspots.lifetime", y="receive_rate.all")
    assert fig.axes[0].get_xlabel() == "lifetime (ms)"
    assert list(fig.axes[0].containers[0].lines[0].get_xdata()) == [1.0, 2.0, 10.0]
    fig.savefig(tmp_path / "forest.png")
    assert_png(tmp_path / "forest.png")


def test_throughput_over_time_marks_phases():
    times = np.arange(0, 10_000, 100.0)
    frame = pd.concat(
        pd.DataFrame({"time": times, "group": group, "accepted_load": level + 0 * times})
        for group, level in (("hot", 0.2), ("rest", 0.8), ("all", 0.5))
    )
    fig = plots.throughput_over_time(
        frame, phases=[{"at": "5us", "label": "burst"}, (7000.0, "capped")], unit="ns"
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (ns)"
    assert ax.get_ylabel() == "accepted load (fraction of link capacity)"
    assert legend_texts(fig) == ["hot", "rest"]  # "all" only when asked
    marks = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == "--"]
    assert marks == [5000.0, 7000.0]
    assert {t.get_text() for t in ax.texts} == {"burst", "capped"}
    fig = plots.throughput_over_time(frame, groups=["all"])
    assert legend_texts(fig) == ["all"]
    with pytest.raises(plots.PlotError, match="no group 'nope'"):
        plots.throughput_over_time(frame, groups=["nope"])


def test_heatmap_annotates_every_cell(points, tmp_path):
    fig = plots.heatmap(points, x="traffic.load", y="traffic.groups.0.cap", value="accepted_load")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "traffic.load (fraction of link capacity)"
    assert ax.get_ylabel() == "traffic.groups.0.cap (fraction of link capacity)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.2", "0.5", "0.8"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.09", "1.0"]
    assert len(ax.texts) == 6
    assert fig.axes[1].get_ylabel() == "accepted load (fraction of link capacity)"  # the colour bar
    fig.savefig(tmp_path / "heat.png")
    assert_png(tmp_path / "heat.png")


def test_cdf(tmp_path):
    rng = np.random.default_rng(1)
    fig = plots.cdf({"throttled": rng.random(200), "unthrottled": rng.random(50) * 2}, xlabel="latency (ns)")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "latency (ns)" and ax.get_ylabel() == "cumulative fraction"
    assert legend_texts(fig) == ["throttled", "unthrottled"]
    assert ax.lines[0].get_ydata()[-1] == pytest.approx(1.0)
    fig.savefig(tmp_path / "cdf.pdf")
    assert (tmp_path / "cdf.pdf").read_bytes().startswith(b"%PDF")
    fig = plots.cdf([3, 1, 2, float("nan")])
    assert fig.axes[0].get_legend() is None
    with pytest.raises(plots.PlotError):
        plots.cdf([float("nan")])


def bucket(label: str, flows: int, p50: float, p95: float, p99: float) -> dict:
    stats = {"mean": p50, "p50": p50, "p95": p95, "p99": p99, "max": p99}
    return {"label": label, "min_bytes": 0, "max_bytes": None, "flows": flows, "fct": stats, "slowdown": stats}


def test_fct_slowdown_by_bucket(tmp_path):
    buckets = [
        bucket("<10KB", 900, 3.0, 40.0, 300.0),
        bucket("10KB-100KB", 80, 2.0, 10.0, 50.0),
        bucket("100KB-1MB", 0, 0.0, 0.0, 0.0),  # no flows: left out
        bucket(">=1MB", 20, 1.2, 1.8, 2.5),
    ]
    fig = plots.fct_slowdown(buckets, title="web search")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "FCT slowdown (FCT / ideal FCT)"
    assert legend_texts(fig) == ["median", "p95", "p99"]
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["<10KB", "10KB-100KB", ">=1MB"]
    assert "900 flows" in ax.get_xticklabels()[0].get_text()
    p99 = ax.lines[2]
    assert list(p99.get_ydata()) == [300.0, 50.0, 2.5]
    fig.savefig(tmp_path / "fct.png")
    assert_png(tmp_path / "fct.png")
    with pytest.raises(plots.PlotError, match="no completed flow"):
        plots.fct_slowdown([bucket("<10KB", 0, 0, 0, 0)])
    with pytest.raises(plots.PlotError, match="no completed flow"):
        plots.fct_slowdown([])


def test_snarl_plot_fct_of_a_run_directory(cli, small_config, tmp_path):
    done = cli("run", small_config, "--out", "run", "--set", "traffic.size_distribution=hadoop")
    assert done.returncode == 0, done.stderr
    done = run_snarl("plot", "fct", tmp_path / "run", "-o", tmp_path / "fct.png")
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "fct.png")
    fig = plots.plot_directory("fct", tmp_path / "run")
    assert fig.axes[0].get_yscale() == "log" and legend_texts(fig) == ["median", "p95", "p99"]


def test_fabric_plot_needs_fabric_events(small_sweep):
    # The small sweep runs a credit fabric without congestion control: nothing to show.
    with pytest.raises(plots.PlotError, match="no table 'fabric' .tables: timeseries; only runs with PFC"):
        plots.plot_directory("fabric", small_sweep)


def test_swept_tables_are_labelled_by_their_type():
    assert plots.hue_label(["routing"], '{"type": "ugal", "information": "global"}') == "routing = ugal (information global)"
    assert plots.hue_label(["routing"], {"type": "dmodk"}) == "routing = dmodk"
    assert plots.hue_label(["traffic.load"], 0.5) == "traffic.load = 0.5"


def test_tables_of_distinct_types_are_named_by_their_type_alone():
    import pandas as pd

    fabrics = pd.DataFrame(
        {"topology": ['{"type": "hyperx", "sides": [6, 6, 6]}', '{"type": "fat_tree", "radix": 16}'] * 2}
    )
    name = plots.hue_labeller(fabrics, ["topology"])
    assert name('{"type": "hyperx", "sides": [6, 6, 6]}') == "topology = hyperx"
    # Two tables of one type keep their parameters, or the legend could not tell them apart.
    variants = pd.DataFrame({"routing": ['{"type": "ugal", "threshold": 0}', '{"type": "ugal", "threshold": 64}']})
    name = plots.hue_labeller(variants, ["routing"])
    assert name('{"type": "ugal", "threshold": 64}') == "routing = ugal (threshold 64)"


def test_labels():
    assert plots.label("groups.uniform.latency.p99", "cycles") == "p99 packet latency of uniform (cycles)"
    assert plots.label("groups.hot.accepted_load") == "accepted load of hot (fraction of link capacity)"
    assert plots.label("recovery.time_to_recover", "ns") == "time to recover (ns)"
    assert plots.label("seed") == "seed"


# fabric, rates and mechanisms need mechanisms the small sweep has not; iterations and
# timeline a run of jobs (test_jobs.py draws them); queues probes (test_figures.py).
@pytest.mark.parametrize(
    "kind", [k for k in plots.KINDS if k not in ("fabric", "rates", "mechanisms", "iterations", "timeline", "queues")]
)
def test_snarl_plot_writes_each_kind(small_sweep, tmp_path, kind):
    output = tmp_path / f"{kind}.png"
    done = run_snarl("plot", kind, small_sweep, "-o", output)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(output)
    assert_png(output)


def test_snarl_plot_defaults_come_from_the_sweep(small_sweep):
    fig = plots.plot_directory("load-curve", small_sweep)
    # Keys in words: group 0 by its name.
    assert legend_texts(fig)[:2] == ["injection cap of hot = 0.5", "injection cap of hot = 1.0"]
    fig = plots.plot_directory("heatmap", small_sweep)
    assert fig.axes[0].get_xlabel().startswith("offered load per host")
    assert fig.axes[0].get_ylabel().startswith("injection cap of hot")
    fig = plots.plot_directory("timeseries", small_sweep)
    assert {t.get_text() for t in fig.axes[0].texts} == {"hot senders capped"}
    assert legend_texts(fig) == ["hot", "rest"]
    fig = plots.plot_directory("cdf", small_sweep, value="groups.rest.accepted_load")
    assert len(legend_texts(fig)) == 2


def test_snarl_plot_of_a_run_directory(cli, tmp_path):
    from conftest import SWEEP_BASE

    (tmp_path / "exp.toml").write_text(SWEEP_BASE)
    assert cli("run", "exp.toml", "--out", "run").returncode == 0
    done = run_snarl("plot", "timeseries", tmp_path / "run", "-o", tmp_path / "ts.svg")
    assert done.returncode == 0, done.stderr
    assert "<svg" in (tmp_path / "ts.svg").read_text()


def test_snarl_plot_bad_input(small_sweep, tmp_path):
    cases = [
        (["plot", "pie", small_sweep], "invalid choice"),
        (["plot", "heatmap", tmp_path], "no points.parquet"),
        (["plot", "load-curve", small_sweep, "--y", "nope"], "no column 'nope'"),
        (["plot", "load-curve", small_sweep, "-o", tmp_path / "x.gif"], ".png, .svg or .pdf"),
        (["plot", "timeseries", small_sweep, "--point", "zzzz"], "no point with id"),
        (["plot", "timeline", small_sweep], "runs of jobs"),
    ]
    for args, expected in cases:
        done = run_snarl(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("snarl: error: ") and expected in done.stderr, done.stderr
    assert not (tmp_path / "x.gif").exists()


def test_sweep_json_keys_order_the_defaults(small_sweep):
    info = json.loads((small_sweep / "sweep.json").read_text())
    assert info["keys"] == ["traffic.load", "traffic.groups.0.cap", "seed"]


def test_group_names_may_hold_dots():
    assert plots.label("groups.hot.spot.latency.p99", "ns") == "p99 packet latency of hot.spot (ns)"
    assert plots.label("groups.hot.spot.accepted_load") == "accepted load of hot.spot (fraction of link capacity)"
    assert plots.label("groups.a.b.packets.delivered") == "packets delivered of a.b"
    assert plots.group_figure("groups.hot.spot.accepted_load") == ("hot.spot", ["accepted_load"])


@pytest.fixture
def mixed_sweep(tmp_path) -> Path:
    """A sweep directory whose routing is swept but on no heatmap axis: a cell averaged
    over it would read 0.587 where its two runs gave 0.968 and 0.205."""
    rows = []
    for routing, accepted in (("minimal", 0.968), ("ugal", 0.205)):
        for load in (0.5, 1.0):
            for cap in (0.5, 1.0):
                rows.append({
                    "point_id": f"{routing}-{load}-{cap}", "traffic.load": load, "traffic.groups.0.cap": cap,
                    "routing.type": routing, "status": "ok", "accepted_load": accepted if (load, cap) == (1.0, 1.0) else 0.5,
                })
    pd.DataFrame(rows).to_parquet(tmp_path / "points.parquet")
    keys = ["traffic.load", "traffic.groups.0.cap", "routing.type"]
    (tmp_path / "sweep.json").write_text(json.dumps({"keys": keys}))
    return tmp_path


def cell_texts(ax) -> list[str]:
    return sorted(t.get_text() for t in ax.texts)


def test_heatmap_has_a_panel_per_value_of_the_keys_off_its_axes(mixed_sweep):
    fig = plots.plot_directory("heatmap", mixed_sweep, x="traffic.load", y="traffic.groups.0.cap")
    panels = [ax for ax in fig.axes if ax.texts]
    assert [ax.get_title() for ax in panels] == ["routing.type = minimal", "routing.type = ugal"]
    assert "0.968" in cell_texts(panels[0]) and "0.205" in cell_texts(panels[1])
    assert not any("0.587" in cell_texts(ax) for ax in panels)
    # One colour scale for both panels.
    assert {ax.images[0].get_clim() for ax in panels} == {(0.205, 0.968)}
    fig = plots.plot_directory("heatmap", mixed_sweep, x="traffic.load", y="traffic.groups.0.cap", where=["routing.type=ugal"])
    assert [cell_texts(ax) for ax in fig.axes if ax.texts] == [["0.205", "0.5", "0.5", "0.5"]]


def test_snarl_plot_heatmap_where(mixed_sweep, tmp_path):
    done = run_snarl("plot", "heatmap", mixed_sweep, "-o", tmp_path / "h.png", "--where", "routing.type=minimal")
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "h.png", min_bytes=5_000)
    done = run_snarl("plot", "heatmap", mixed_sweep, "-o", tmp_path / "h.png", "--where", "routing.type=dmodk")
    assert done.returncode == 2
    assert "no point has routing.type = dmodk (it has minimal, ugal)" in done.stderr


def test_a_heatmap_with_too_many_panels_is_refused():
    rows = [{"x": x, "y": y, "k": k, "status": "ok", "accepted_load": 0.5} for x in (1, 2) for y in (1, 2) for k in range(plots.MAX_PANELS + 1)]
    with pytest.raises(plots.PlotError, match="needs 13 panels, one per value of k"):
        plots.heatmap(pd.DataFrame(rows), x="x", y="y", facet="k")


def corrupt(path: Path) -> None:
    path.write_bytes(b"\x00 not what it was \xff")


def test_corrupted_results_are_one_line_exit_2(small_sweep, cli, small_config, tmp_path):
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(small_sweep, sweep)
    first, second = (p.stem for p in sorted((sweep / "points").glob("*.json"))[:2])
    corrupt(sweep / "timeseries" / f"{first}.parquet")
    corrupt(sweep / "points" / f"{second}.json")
    assert cli("run", small_config, "--out", "run").returncode == 0
    corrupt(tmp_path / "run" / "summary.json")
    broken = tmp_path / "broken"
    shutil.copytree(small_sweep, broken)
    corrupt(broken / "points.parquet")
    cases = [
        (["plot", "timeseries", sweep, "--point", first], f"{first}.parquet: cannot read it as Parquet"),
        (["plot", "fct", sweep, "--point", second], f"{second}.json: cannot read it as JSON"),
        (["plot", "fct", tmp_path / "run"], "summary.json: cannot read it as JSON"),
        (["plot", "load-curve", broken], "points.parquet: cannot read it as Parquet"),
        (["report", broken], "points.parquet: cannot read it as Parquet"),
    ]
    for args, expected in cases:
        done = run_snarl(*args, "-o", tmp_path / "figure.png" if args[0] == "plot" else tmp_path / "r.html")
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("snarl: error: ") and done.stderr.count("\n") == 1, done.stderr
        assert expected in done.stderr, done.stderr


def test_an_output_that_cannot_be_written_is_one_line_exit_2(small_sweep, tmp_path):
    (tmp_path / "file").write_text("a file, not a directory")
    for args in (["plot", "load-curve", small_sweep, "-o", tmp_path / "file" / "f.png"], ["report", small_sweep, "-o", tmp_path / "file" / "r.html"]):
        done = run_snarl(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(f"snarl: error: -o {tmp_path / 'file'}") and done.stderr.count("\n") == 1, done.stderr


def test_the_windy_forest_sweep_plots_with_cc_off_dashed_and_tmax(tmp_path):
    """The shipped windy-forest sweep, cut to 2 shares, 2 B fractions and 300 us, runs,
    and `snarl plot` draws it as the paper does: one colour per B fraction, CC off
    dashed, tmax dotted."""
    repo = Path(__file__).resolve().parents[3]
    shipped = (repo / "scenarios" / "infiniband-cc" / "sweep-windy-forest.toml").read_text()
    spec = shipped.replace('base = "windy-forest-25-cc-off.toml"', f'base = "{repo}/scenarios/infiniband-cc/windy-forest-25-cc-off.toml"')
    spec = spec.replace("[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]", "[0.2, 0.8]")
    spec = spec.replace('["25% B nodes", "50% B nodes", "75% B nodes", "100% B nodes"]', '["25% B nodes", "100% B nodes"]')
    spec = spec.replace("[162, 324, 486, 648]", "[162, 648]").replace("[389, 259, 130, 0]", "[389, 0]")
    spec += '\n[set]\n"simulation.duration" = "300us"\n"simulation.warmup" = "100us"\n"simulation.window" = "50us"\n'
    (tmp_path / "windy.toml").write_text(spec)
    done = run_snarl("sweep", tmp_path / "windy.toml", "--out", tmp_path / "windy", "--processes", "2")
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(tmp_path / "windy" / "points.parquet")
    assert len(points) == 8 and (points["status"] == "ok").all()
    assert {"receive_rate.non_hotspots", "total_throughput", "tmax"} <= set(points.columns)
    np.testing.assert_allclose(
        points.sort_values(["description", "traffic.groups.0.pattern.parts.0.share"])["tmax"].to_numpy()[::2],
        [13.5 * 0.8, 13.5 * 0.2, (97 + 162 * 0.8) * 13.5 / 648, (97 + 162 * 0.2) * 13.5 / 648],
    )
    output = tmp_path / "windy.png"
    done = run_snarl(
        "plot", "load-curve", tmp_path / "windy", "--x", "traffic.groups.0.pattern.parts.0.share",
        "--y", "receive_rate.non_hotspots", "--hue", "description", "--style", "congestion_control",
        "--ref", "tmax", "-o", output,
    )
    assert done.returncode == 0, done.stderr
    assert_png(output)
    fig = plots.plot_directory(
        "load-curve", tmp_path / "windy", x="traffic.groups.0.pattern.parts.0.share",
        y="receive_rate.non_hotspots", hue="description", style="congestion_control", reference="tmax",
    )
    # The key given by index names the column the sweep file names by group (B); the
    # sweep file's [labels] call the values.
    curves = {c.get_label(): c.lines[0] for c in fig.axes[0].containers}
    assert set(curves) == {
        f"{b} B nodes, IB CC {cc}" for b in ("25%", "100%") for cc in ("off", "on")
    }, "a swept description names its curves by itself"
    assert all(line.get_linestyle() == ("--" if "CC off" in name else "-") for name, line in curves.items())


# ----------------------------------------------------------------------------- mechanisms


def test_common_prefix_ends_at_a_separator():
    assert plots.common_prefix(["one-tree-none", "one-tree-dcqcn"]) == "one-tree-"
    # Not "one-tree-ici", which would leave nothing of the first name.
    assert plots.common_prefix(["one-tree-ici", "one-tree-ici-dcqcn"]) == "one-tree-"
    assert plots.common_prefix(["tree_ci", "tree_ici"]) == "tree_"
    assert plots.common_prefix(["pfc", "dcqcn"]) == ""
    assert plots.common_prefix(["one-tree-none"]) == ""


def mechanism_panels(fig):
    """The throughput, CNP and FCT panels of a mechanisms figure."""
    assert len(fig.axes) == 3
    return fig.axes


def test_mechanisms_side_by_side(mechanism_runs, tmp_path):
    runs = [mechanism_runs / "one-tree-none", mechanism_runs / "one-tree-dcqcn"]
    fig = plots.plot_mechanisms(runs)
    throughput, cnps, fct = mechanism_panels(fig)
    # The directory names less their common prefix name the runs; the prefix is the title.
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["none", "dcqcn"]
    assert fig.get_suptitle() == "one-tree"
    assert [line.get_label() for line in throughput.get_lines()] == ["none", "dcqcn"]
    assert [line.get_label() for line in cnps.get_lines()] == ["none", "dcqcn"]
    assert len(fct.patches) == 3 * 2
    # The victims' accepted load per window, in Gb/s per host (100 Gb/s links).
    series = pd.read_parquet(runs[0] / "timeseries.parquet")
    victims = series[series["group"] == "victims"].sort_values("time")
    np.testing.assert_allclose(throughput.get_lines()[0].get_ydata(), victims["accepted_load"] * 100.0)
    assert throughput.get_ylabel() == "accepted throughput per host (Gb/s)"
    # PFC alone sends no CNP; DCQCN does, the counts of its fabric table.
    pfc, dcqcn = (np.asarray(line.get_ydata(), dtype=float) for line in cnps.get_lines())
    assert len(pfc) > 0 and (pfc == 0).all()
    fabric = pd.read_parquet(runs[1] / "fabric.parquet")
    assert dcqcn.sum() == fabric["cnps"].sum() > 0
    assert cnps.get_ylabel() == "CNPs per 10 µs window"
    # Bars: p50, p95, p99 of the victims' FCT in µs, one per run in each group, one
    # colour per run across the panels.
    assert [t.get_text() for t in fct.get_xticklabels()] == ["p50", "p95", "p99"]
    for index, run in enumerate(runs):
        summary = json.loads((run / "summary.json").read_text())
        expected = [summary["groups"]["victims"]["fct"][p] / 1000 for p in ("p50", "p95", "p99")]
        bars = fct.containers[index]
        assert [bar.get_height() for bar in bars] == pytest.approx(expected)
        colour = throughput.get_lines()[index].get_color()
        assert cnps.get_lines()[index].get_color() == colour
        assert all(matplotlib_colour(bar.get_facecolor()) == matplotlib_colour(colour) for bar in bars)
    assert fct.get_ylabel() == "flow completion time (µs)" and fct.get_title() == "FCT of victims"
    # The congestion tree's interval shaded and labelled.
    assert {t.get_text() for t in throughput.texts} == {"congestion tree", "tree ends"}
    fig.savefig(tmp_path / "mechanisms.png")
    assert_png(tmp_path / "mechanisms.png")


def matplotlib_colour(colour) -> tuple[float, ...]:
    from matplotlib.colors import to_rgb

    return tuple(round(c, 4) for c in to_rgb(colour))


def test_mechanisms_labels_title_and_other_tables(mechanism_runs, tmp_path):
    import shutil

    # A run directory may hold tables the figure does not draw (isolation, ...).
    for name in ("run-pfc", "run-dcqcn"):
        shutil.copytree(mechanism_runs / f"one-tree-{'none' if name == 'run-pfc' else 'dcqcn'}", tmp_path / name)
    pd.DataFrame({"time": [0.0, 10_000.0], "isolated": [0, 3]}).to_parquet(tmp_path / "run-dcqcn" / "isolation.parquet")
    runs = [tmp_path / "run-pfc", tmp_path / "run-dcqcn"]
    fig = plots.plot_mechanisms(runs)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["pfc", "dcqcn"] and fig.get_suptitle() == "run"
    fig = plots.plot_mechanisms(runs, labels="PFC alone, DCQCN", title="one congestion tree")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["PFC alone", "DCQCN"]
    assert fig.get_suptitle() == "one congestion tree"
    fig = plots.plot_mechanisms(runs, group="contributors")
    assert fig.axes[2].get_title() == "FCT of contributors"
    with pytest.raises(plots.PlotError, match="--labels: 1 name for 2 runs"):
        plots.plot_mechanisms(runs, labels="one")
    with pytest.raises(plots.PlotError, match="no group 'nope' in the time series"):
        plots.plot_mechanisms(runs, group="nope")
    with pytest.raises(plots.PlotError, match="not a run directory"):
        plots.plot_mechanisms([runs[0], tmp_path])
    with pytest.raises(plots.PlotError, match="both be labelled 'pfc'"):
        plots.plot_mechanisms([runs[0], runs[0]])


def test_mechanisms_of_a_sweep_name_each_point(tmp_path):
    from conftest import ONE_TREE_SHORT, REPO

    import snarl

    base = REPO / "scenarios" / "lossless-ethernet" / "one-tree-dcqcn.toml"
    overrides = "\n".join(f'"{k}" = "{v}"' for k, v in ONE_TREE_SHORT.items())
    (tmp_path / "sweep.toml").write_text(
        f'name = "PFC against DCQCN"\nbase = "{base}"\n[set]\n{overrides}\n'
        '[axes]\ncongestion_control = [{ type = "none" }, { type = "dcqcn", cnp_interval = "4us" }]\n'
    )
    table = snarl.sweep(tmp_path / "sweep.toml", tmp_path / "out", processes=1)
    assert (table["status"] == "ok").all()
    fig = plots.plot_directory("mechanisms", tmp_path / "out")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["congestion_control = none", "congestion_control = dcqcn"]
    assert fig.get_suptitle() == "PFC against DCQCN"
    throughput, cnps, fct = mechanism_panels(fig)
    assert len(throughput.get_lines()) == 2 and len(fct.patches) == 6
    pfc, dcqcn = (np.asarray(line.get_ydata(), dtype=float) for line in cnps.get_lines())
    assert (pfc == 0).all() and dcqcn.sum() > 0
    fig = plots.plot_mechanisms([tmp_path / "out"], where=["congestion_control=dcqcn (cnp_interval 4us)"])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["congestion_control = dcqcn"]
    # A swept description names its point by itself.
    points = pd.read_parquet(tmp_path / "out" / "points.parquet")
    points["description"] = ["PFC alone", "DCQCN"]
    points.to_parquet(tmp_path / "out" / "points.parquet")
    info = json.loads((tmp_path / "out" / "sweep.json").read_text())
    (tmp_path / "out" / "sweep.json").write_text(json.dumps({**info, "keys": [*info["keys"], "description"]}))
    fig = plots.plot_mechanisms([tmp_path / "out"])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["PFC alone", "DCQCN"]


# ----------------------------------------------------------------------------- ax=


def _series() -> pd.DataFrame:
    times = np.arange(0, 10_000, 100.0)
    return pd.concat(
        pd.DataFrame({"time": times, "group": group, "accepted_load": level + 0 * times})
        for group, level in (("victims", 0.2), ("rest", 0.8), ("all", 0.5))
    )


def _fabric() -> pd.DataFrame:
    times = np.arange(0, 10_000, 100.0)
    return pd.DataFrame({"time": times, "pause_frames": (times > 5000).astype(int), "cnps": (times > 3000).astype(int)})


def _rates() -> pd.DataFrame:
    return pd.DataFrame({"time": [0.0, 10.0, 20.0, 5.0], "src": [0, 0, 0, 1], "dst": [2, 2, 2, 2], "qp": [0, 0, 0, 0],
                         "rate_gbps": [100.0, 50.0, 75.0, 40.0]})


def _iterations() -> pd.DataFrame:
    return pd.DataFrame({"job": ["a"] * 4 + ["b"] * 4, "iteration": [0, 1, 2, 3] * 2,
                         "time": [5.0, 4.0, 4.1, 3.9, 8.0, 7.0, 7.2, 6.9], "measured": [0, 1, 1, 1] * 2})


def _steps() -> pd.DataFrame:
    return pd.DataFrame({"job": ["a"] * 4, "iteration": [1] * 4, "rank": [0, 1, 0, 1], "step": [0, 0, 1, 1],
                         "start": [0.0, 0.0, 2.0, 2.5], "end": [2.0, 2.5, 4.0, 4.5]})


def _single_panels(points):
    """(name, draw(ax)) of every plot of one panel."""
    buckets = [bucket("<10KB", 900, 3.0, 40.0, 300.0)]
    return [
        ("load_curve", lambda ax: plots.load_curve(points, hue="traffic.groups.0.cap", ax=ax)),
        ("throughput_over_time", lambda ax: plots.throughput_over_time(_series(), phases=[(5000.0, "burst")], ax=ax)),
        ("heatmap", lambda ax: plots.heatmap(points, x="traffic.load", y="traffic.groups.0.cap", ax=ax)),
        ("cdf", lambda ax: plots.cdf([1.0, 2.0, 3.0], ax=ax)),
        ("fct_slowdown", lambda ax: plots.fct_slowdown(buckets, ax=ax)),
        ("flow_rates", lambda ax: plots.flow_rates(_rates(), ax=ax)),
        ("rank_timeline", lambda ax: plots.rank_timeline(_steps(), ax=ax)),
    ]


def _multi_panels(points):
    """(name, panels, draw(ax)) of every plot of several panels."""
    faceted = points.assign(seed=points["seed"].astype(str))
    summaries = {"x": {"fct": {"fct": {"p50": 1.0, "p95": 2.0, "p99": 3.0}}}}
    return [
        ("heatmap with facets", 3,
         lambda ax: plots.heatmap(faceted, x="traffic.load", y="traffic.groups.0.cap", facet="seed", ax=ax)),
        ("congestion_over_time", 2, lambda ax: plots.congestion_over_time(_series(), _fabric(), ax=ax)),
        ("iteration_times", 2, lambda ax: plots.iteration_times(_iterations(), ax=ax)),
        ("mechanisms", 3, lambda ax: plots.mechanisms({"x": _series()}, {"x": _fabric()}, summaries, title="t", ax=ax)),
    ]


def drawn(ax) -> bool:
    return bool(ax.lines or ax.images or ax.collections or ax.patches or ax.containers)


def test_every_plot_of_one_panel_draws_into_a_given_axes(points):
    from matplotlib.figure import Figure

    for name, draw in _single_panels(points):
        fig = Figure()
        other, ax = fig.subplots(1, 2)
        assert draw(ax) is fig, name
        assert drawn(ax) and not drawn(other), name
        assert fig.axes[:2] == [other, ax], name  # nothing added but a heatmap's colour bar
        assert len(fig.axes) == (3 if name == "heatmap" else 2), name


def test_every_plot_of_several_panels_divides_a_given_axes_or_takes_one_per_panel(points):
    from matplotlib.figure import Figure

    for name, panels, draw in _multi_panels(points):
        # One Axes: its place is divided among the panels, the figure's other Axes kept.
        fig = Figure(layout="constrained")
        other, ax = fig.subplots(1, 2)
        assert draw(ax) is fig, name
        assert ax not in fig.axes and other in fig.axes and not drawn(other), name
        colour_bar = 1 if name.startswith("heatmap") else 0
        assert sum(drawn(a) for a in fig.axes) == panels + colour_bar, name
        # One Axes per panel.
        fig = Figure(layout="constrained")
        axes = fig.subplots(1, panels)
        assert draw(axes) is fig, name
        assert all(drawn(a) for a in axes), name
        # Another number of Axes is refused, naming how many it takes.
        with pytest.raises(plots.PlotError, match=f"draws {panels} panels"):
            draw(Figure().subplots(1, panels + 1))


def test_ax_must_be_an_axes(points):
    with pytest.raises(plots.PlotError, match="ax must be a matplotlib Axes"):
        plots.cdf([1.0, 2.0], ax="left")


def test_plots_of_a_directory_draw_into_a_given_axes(small_sweep):
    from matplotlib.figure import Figure

    for kind in ("load-curve", "timeseries", "cdf"):
        fig = Figure()
        ax = fig.add_subplot()
        assert plots.plot_directory(kind, small_sweep, ax=ax) is fig, kind
        assert drawn(ax), kind


def test_figures_are_snarl_figures_outside_pyplot():
    import sys

    fig = plots.cdf([1.0, 2.0, 3.0])
    assert isinstance(fig, plots.SnarlFigure)
    data, size = fig._repr_png_()
    assert data.startswith(PNG_SIGNATURE) and size["width"] == round(fig.get_size_inches()[0] * plots.NOTEBOOK_DPI)
    if "matplotlib.pyplot" in sys.modules:  # not one of pyplot's figures: nothing keeps it open
        import matplotlib.pyplot as plt

        assert all(plt.figure(n) is not fig for n in plt.get_fignums())


def test_tables_of_a_sweep_point_have_its_point_id(small_sweep):
    points = pd.read_parquet(small_sweep / "points.parquet")
    first = str(points["point_id"].iloc[0])
    series = plots.point_table(small_sweep, "timeseries", first[:6])
    assert list(series.columns[:2]) == ["point_id", "time"]
    assert (series["point_id"] == first).all()
    series, *_ = plots.point_timeseries(small_sweep)
    assert series.columns[0] == "point_id"
