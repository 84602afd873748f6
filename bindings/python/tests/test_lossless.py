"""Lossless Ethernet from Python: the PFC and DCQCN figures of a run, the fabric event
table and its plot, and drops reported (never hidden) when flow control is off."""

from __future__ import annotations

import json

import pandas as pd

import snarl
from snarl import plots
from snarl.report import FABRIC_COLUMNS

from conftest import REPO, run_snarl
from test_plots import assert_png

ONE_TREE = REPO / "scenarios" / "lossless-ethernet" / "one-tree-dcqcn.toml"
SHORT = ["--set", "simulation.duration=400us", "--set", "traffic.phases.1.at=350us"]


def test_pfc_and_dcqcn_run_writes_and_plots_its_fabric_events(cli, tmp_path):
    done = cli("run", ONE_TREE, *SHORT, "--out", "one-tree")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "one-tree"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pfc"]["pause_frames_sent"] > 0
    assert summary["counters"]["ecn_marks"] > 0 and summary["counters"]["cnps_sent"] > 0
    fabric = pd.read_parquet(out / "fabric.parquet")
    assert list(fabric.columns) == list(FABRIC_COLUMNS)
    assert fabric["pause_frames"].sum() == summary["pfc"]["pause_frames_sent"]
    assert fabric["cnps"].sum() == summary["counters"]["cnps_sent"]
    done = cli("plot", "fabric", "one-tree", "-o", "fabric.png")
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "fabric.png")


def test_out_twice_replaces_the_result_of_a_pfc_and_dcqcn_run(cli, tmp_path):
    first = cli("run", ONE_TREE, *SHORT, "--seed", "1", "--out", "again")
    assert first.returncode == 0, first.stderr
    out = tmp_path / "again"
    assert sorted(p.name for p in out.iterdir()) == ["config.toml", "fabric.parquet", "summary.json", "timeseries.parquet"]
    second = cli("run", ONE_TREE, *SHORT, "--seed", "2", "--out", "again")
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in out.iterdir()) == ["config.toml", "fabric.parquet", "summary.json", "timeseries.parquet"]
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    # A foreign file is still refused, and the directory left as it was.
    (out / "notes.txt").write_text("keep me")
    third = cli("run", ONE_TREE, *SHORT, "--out", "again")
    assert third.returncode == 2 and "notes.txt" in third.stderr, third.stderr
    assert json.loads((out / "summary.json").read_text())["seed"] == 2


def test_runs_without_such_mechanisms_have_no_fabric_table(simulate):
    report = simulate("[simulation]\nduration = \"10us\"\n[topology]\ntype = \"single_switch\"\nhosts = 4\n[traffic]\nload = 0.3\n")
    assert report.fabric.empty and list(report.fabric.columns) == list(FABRIC_COLUMNS)


def test_tail_drop_reports_its_drops():
    text = ONE_TREE.read_text().replace('type = "pfc"\nxoff = 50\nxon = 45', 'type = "none"')
    overrides = {"simulation.duration": "300us", "traffic.phases.1.at": "250us", "congestion_control": {"type": "none"}}
    report = snarl.run(text, set=overrides)
    packets = report.summary["packets"]
    assert packets["dropped"] > 0
    assert packets["injected"] == packets["delivered"] + packets["in_flight"] + packets["dropped"]
    assert report.fabric["packets_dropped"].sum() == packets["dropped"]
    assert "pfc" not in report.summary
    fig = plots.congestion_over_time(report.timeseries, report.fabric, unit="ns")
    assert len(fig.axes) == 2


def test_sweep_points_keep_their_fabric_events(write_config, tmp_path):
    spec = write_config(
        f'base = "{ONE_TREE}"\n'
        "[set]\n"
        '"simulation.duration" = "300us"\n"traffic.phases.1.at" = "250us"\n'
        "[axes]\n"
        'congestion_control = [{ type = "none" }, { type = "dcqcn", cnp_interval = "4us" }]\n',
        "sweep.toml",
    )
    done = run_snarl("sweep", spec, "--out", tmp_path / "sweep")
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "sweep" / "fabric").glob("*.parquet"))) == 2
    fig = plots.plot_directory("fabric", tmp_path / "sweep")
    assert len(fig.axes) == 2
    fig = plots.plot_directory("load-curve", tmp_path / "sweep", y="groups.victims.accepted_load")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # Swept tables of different types are named by their type alone.
    assert "congestion control = none" in labels and "congestion control = dcqcn" in labels, labels
    done = run_snarl("report", tmp_path / "sweep", "-o", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    # Both points share one offered load: no "pause frames over load" panel (it would collapse to
    # one x), but each point's fabric events under its throughput.
    assert "flow and congestion control over time" in page and "pause frames" in page


def test_run_prints_the_pfc_figures_and_probed_queues(cli):
    done = cli("run", ONE_TREE, *SHORT, "--set", "observe.queues=[{switch=0,port=1}]")
    assert done.returncode == 0, done.stderr
    assert "PFC:" in done.stdout and "pause frames" in done.stdout, done.stdout
    assert "queue switch 0 port 1 priority 0" in done.stdout and "between Kmin and Kmax" in done.stdout


def test_flow_rates_plot_shows_dcqcn_cuts(cli, tmp_path):
    done = cli("run", ONE_TREE, *SHORT, "--set", "congestion_control.rate_series=true", "--out", "rates")
    assert done.returncode == 0, done.stderr
    rates = pd.read_parquet(tmp_path / "rates" / "rates.parquet")
    assert (rates["rate_gbps"] < 50).any(), "contributors are cut well below line rate"
    done = cli("plot", "rates", "rates", "-o", "rates.png")
    assert done.returncode == 0, done.stderr
    assert_png(tmp_path / "rates.png")
    fig = plots.flow_rates(rates, flows=3)
    assert len(fig.axes[0].get_lines()) == 3


def test_run_prints_the_receive_rates_and_ib_cc_figures(cli):
    """The InfiniBand silent forest, cut to 2 ms: its receive rates and IB CC's marks."""
    forest = REPO / "scenarios" / "infiniband-cc" / "silent-forest-cc-on.toml"
    done = cli("run", forest, "--set", "simulation.duration=2ms", "--set", "simulation.warmup=1ms")
    assert done.returncode == 0, done.stderr
    assert "receive rate per host (Gb/s): hotspots 13." in done.stdout, done.stdout
    assert "tmax 2.708 Gb/s" in done.stdout
    assert "IB CC:" in done.stdout and "FECN marks" in done.stdout and "BECNs" in done.stdout


def test_isolation_run_prints_and_writes_its_figures(cli, tmp_path):
    """ICI+ on the one-tree scenario, cut short: the summary's isolation section, its
    line in the printout, and the per-window isolation table that sums to it."""
    ici_plus = REPO / "scenarios" / "lossless-ethernet" / "one-tree-ici-plus.toml"
    done = cli("run", ici_plus, *SHORT, "--out", "ici-plus")
    assert done.returncode == 0, done.stderr
    assert "isolation:" in done.stdout and "entries taken" in done.stdout, done.stdout
    summary = json.loads((tmp_path / "ici-plus" / "summary.json").read_text())
    iso = summary["isolation"]
    assert iso["cft_allocations"] > 0 and iso["reordered_packets"] == 0
    assert iso["marks_victims"] == 0, "ICI+ marks only what isolation points at"
    table = pd.read_parquet(tmp_path / "ici-plus" / "isolation.parquet")
    for column in ["cft_allocations", "cft_releases", "isolated_packets", "marks_isolated"]:
        assert table[column].sum() == iso[column], column
    assert table["cnps"].max() == iso["peak_cnps_per_window"]
    report = snarl.run(ici_plus, set={"simulation.duration": "400us", "traffic.phases.1.at": "350us"})
    assert report.summary["isolation"] == iso
    assert set(report.tables) >= {"isolation", "fabric", "timeseries"}
