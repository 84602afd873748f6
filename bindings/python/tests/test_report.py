"""snarl.Report (snarl.report), on hand-made results and on a real run."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import snarl
from snarl import Report

from conftest import run_snarl

SUMMARY = {
    "accepted_load": 0.4,
    "offered_load": 0.5,
    "groups": {
        "aggressors": {"hosts": 2, "accepted_load": 0.3, "latency": {"p99": 900.0}, "packets": {"delivered": 5}},
        "victims": {"hosts": 6, "accepted_load": 0.45, "latency": {"p99": 300.0}, "packets": {"delivered": 9}},
    },
    "packets": {"injected": 14, "delivered": 14, "in_flight": 0, "dropped": 0},
}


def made_report() -> tuple[Report, dict]:
    columns = {
        "time": np.array([0.0, 0.0, 10.0, 10.0]),
        "group": ["all", "victims", "all", "victims"],
        "delivered_bytes": np.array([4096, 0, 8192, 4096], dtype=np.uint64),
    }
    summary_json = json.dumps(SUMMARY, indent=2)
    return Report(summary_json, 'seed = 1\n[traffic]\nload = 0.5\n', {"timeseries": columns}), columns


def test_summary_config_and_json():
    report, _ = made_report()
    assert report.summary == SUMMARY
    assert report.to_json() == json.dumps(SUMMARY, indent=2)
    assert report.config == {"seed": 1, "traffic": {"load": 0.5}}
    assert "accepted_load=0.4000" in repr(report)


def test_groups_one_row_per_group_with_flat_columns():
    report, _ = made_report()
    groups = report.groups
    assert isinstance(groups, pd.DataFrame)
    assert list(groups.index) == ["aggressors", "victims"]
    assert groups.index.name == "group"
    assert groups.loc["victims", "latency_p99"] == 300.0
    assert groups.loc["aggressors", "packets_delivered"] == 5


def test_timeseries_keeps_columns_types_and_buffers():
    report, columns = made_report()
    frame = report.timeseries
    assert list(frame.columns) == ["time", "group", "delivered_bytes"]
    assert len(frame) == 4
    assert frame["delivered_bytes"].dtype == np.uint64
    assert list(frame["group"]) == ["all", "victims", "all", "victims"]
    # The arrow column shares the numpy buffer: no copy on the way.
    arrow = report.to_arrow().column("time").chunk(0)
    assert arrow.buffers()[1].address == columns["time"].ctypes.data


def test_write_creates_the_summary_config_and_one_file_per_table(tmp_path):
    report, _ = made_report()
    report.write(tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text()) == SUMMARY
    assert (tmp_path / "config.toml").read_text() == report.config_toml
    assert pq.read_table(tmp_path / "timeseries.parquet").num_rows == 4


def test_write_creates_its_directory(tmp_path):
    report, _ = made_report()
    out = tmp_path / "runs" / "first"
    report.write(out)
    assert json.loads((out / "summary.json").read_text()) == SUMMARY
    report.write(out)  # again: the files are replaced
    assert sorted(p.name for p in out.iterdir()) == ["config.toml", "summary.json", "timeseries.parquet"]


def test_a_report_shows_itself_as_html():
    """In a notebook: a line on the run, a table of the headline figures per group and
    for the whole run (a missing figure as a dash), and the time series' plot, or why
    there is none (here: no accepted_load column)."""
    report, _ = made_report()
    page = report._repr_html_()
    assert page.startswith('<div class="snarl-report">') and page.endswith("</div>")
    rows = page.split("<tr>")[1:]
    assert len(rows) == 1 + 3  # the headings, both groups and all
    assert ">aggressors<" in rows[1] and ">0.300<" in rows[1] and ">900<" in rows[1]
    assert "<strong>all</strong>" in rows[3] and ">8<" in rows[3] and ">0.500<" in rows[3] and ">14<" in rows[3]
    assert ">–<" in rows[1]  # no offered load in this summary
    assert "latency p99 (ns)" in rows[0]
    assert "<code>timeseries</code> (4 rows)" in page
    assert "no plot of the time series: PlotError: no column &#x27;accepted_load&#x27;" in page


def test_a_real_report_shows_its_throughput_plot(simulate, small_config):
    report = simulate(small_config)
    page = report._repr_html_()
    assert '<img alt="accepted load per group over time"' in page and "data:image/png;base64," in page
    assert page is report._repr_html_()  # drawn once


def test_real_report(simulate, small_config):
    report = simulate(small_config)
    assert len(report.timeseries) == report.to_arrow().num_rows > 0
    assert set(report.groups.index) == set(report.summary["groups"])
    assert "latency_p99" in report.groups.columns
    assert report.config["topology"]["hosts"] == 8
    assert json.loads(report.to_json()) == report.summary


def test_fct_buckets_of_a_run_with_a_size_distribution(simulate, small_config):
    report = simulate(small_config, set={"traffic.size_distribution": "hadoop", "traffic.process": "poisson"})
    fct = report.summary["fct"]
    buckets = report.fct_buckets
    assert list(buckets.index) == ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]
    assert buckets.index.name == "label"
    assert buckets["flows"].sum() == fct["flows"] > 0
    assert list(buckets["min_bytes"]) == [0, 10_000, 100_000, 1_000_000]
    assert buckets["max_bytes"].iloc[:3].tolist() == [10_000, 100_000, 1_000_000]
    assert np.isnan(buckets["max_bytes"].iloc[3])
    assert {"fct_p99", "slowdown_p50", "slowdown_max"} <= set(buckets.columns)
    assert (buckets.loc[buckets["flows"] > 0, "slowdown_p50"] >= 0.99).all()
    groups = report.groups
    assert {"flows", "fct_p50", "slowdown_p99"} <= set(groups.columns)
    assert groups["flows"].sum() == fct["flows"]


def test_fct_buckets_without_a_summary():
    report, _ = made_report()
    assert report.fct_buckets.empty


def test_an_unknown_table_is_an_error_naming_the_tables_there_are(simulate, small_config):
    report = simulate(small_config)
    with pytest.raises(KeyError) as caught:
        report.table("nope")
    error = caught.value
    from snarl.report import TableNotFoundError

    assert isinstance(error, TableNotFoundError)
    assert error.name == "nope" and error.available == ["timeseries"]
    assert str(error) == "no table 'nope' in this report (its tables: timeseries)"
    pd.testing.assert_frame_equal(report.table("timeseries"), report.timeseries)
    assert list(report.tables) == ["timeseries"]


# Every Python process of this environment (sweep workers included) imports this first: the
# core's runs return one table more, as a table added in Rust alone would.
EXTRA_TABLE = """
import numpy as np
import snarl._core as core

_run = core.run


def run(*args, **kwargs):
    summary_json, resolved, tables, *rest = _run(*args, **kwargs)
    extra = {"probe": np.arange(3, dtype=np.uint64), "label": ["a", "b", "c"]}
    return summary_json, resolved, {**tables, "probe_extra": extra}, *rest


core.run = run
"""


@pytest.fixture
def extra_table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a snarl process whose core returns a table ``probe_extra``
    besides the real ones."""
    directory = tmp_path_factory.mktemp("extra-table")
    (directory / "sitecustomize.py").write_text(EXTRA_TABLE, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")]))}


def test_a_table_of_the_core_reaches_the_report_without_python_knowing_it(monkeypatch, small_config):
    real = snarl._core.run

    def run(*args, **kwargs):
        summary_json, resolved, tables, *rest = real(*args, **kwargs)
        return summary_json, resolved, {**tables, "probe_extra": {"probe": np.arange(3, dtype=np.uint64)}}, *rest

    monkeypatch.setattr(snarl._core, "run", run)
    report = snarl.run(small_config)
    assert list(report.tables) == ["probe_extra", "timeseries"]
    assert list(report.tables["probe_extra"]["probe"]) == [0, 1, 2]
    assert report.table("probe_extra")["probe"].dtype == np.uint64
    assert len(report.timeseries) > 0


def test_a_table_of_the_core_is_written_by_run_and_sweep_and_reported(extra_table, small_config, tmp_path):
    done = run_snarl("run", small_config, "--out", tmp_path / "run", env=extra_table)
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert files == ["config.toml", "probe_extra.parquet", "summary.json", "timeseries.parquet"]
    extra = pd.read_parquet(tmp_path / "run" / "probe_extra.parquet")
    assert list(extra["probe"]) == [0, 1, 2] and list(extra["label"]) == ["a", "b", "c"]
    # Again into its own output: replaced.
    done = run_snarl("run", small_config, "--out", tmp_path / "run", "--seed", "9", env=extra_table)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["seed"] == 9

    spec = tmp_path / "sweep.toml"
    spec.write_text(f'base = "{small_config}"\n[axes]\nseed = [1, 2]\n', encoding="utf-8")
    done = run_snarl("sweep", spec, "--out", tmp_path / "sweep", "--processes", "1", env=extra_table)
    assert done.returncode == 0, done.stderr
    points = pd.read_parquet(tmp_path / "sweep" / "points.parquet")
    for point_id in points["point_id"]:
        extra = pd.read_parquet(tmp_path / "sweep" / "probe_extra" / f"{point_id}.parquet")
        assert list(extra["probe"]) == [0, 1, 2]
        assert (tmp_path / "sweep" / "timeseries" / f"{point_id}.parquet").is_file()

    done = run_snarl("report", tmp_path / "sweep", "-o", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report.html").read_text()
    assert "probe_extra/&lt;point_id&gt;.parquet" in page and "probe, label" in page
    assert "timeseries/&lt;point_id&gt;.parquet" in page


PROBED = """\
[simulation]
duration = "20us"
window = "2us"

[topology]
type = "single_switch"
hosts = 8

[traffic]
load = 0.9
pattern = { type = "incast", destination = 0 }

[[observe.queues]]
switch = 0
port = 0
"""


def test_a_collector_of_the_core_alone_reaches_the_report_the_files_and_the_page(tmp_path):
    """The `queues` table comes from a collector of the Rust core that Python code never
    names: it reaches Report.tables, `run --out` and the HTML report as it is."""
    report = snarl.run(PROBED)
    queues = report.table("queues")
    assert list(queues.columns) == ["time", "switch", "port", "priority", "mean_bytes", "max_bytes"]
    assert len(queues) == 10 and (queues["switch"] == 0).all() and (queues["port"] == 0).all()
    # An incast on host 0 at 90% of seven links builds its egress queue.
    assert queues["max_bytes"].max() > 0 and (queues["mean_bytes"] <= queues["max_bytes"]).all()

    config = tmp_path / "probed.toml"
    config.write_text(PROBED, encoding="utf-8")
    done = run_snarl("run", config, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    written = pd.read_parquet(tmp_path / "run" / "queues.parquet")
    assert written["max_bytes"].tolist() == queues["max_bytes"].tolist()
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'base = "{config}"\n[axes]\nseed = [1]\n', encoding="utf-8")
    done = run_snarl("sweep", spec, "--out", tmp_path / "sweep", "--processes", "1")
    assert done.returncode == 0, done.stderr
    (point_id,) = pd.read_parquet(tmp_path / "sweep" / "points.parquet")["point_id"]
    assert len(pd.read_parquet(tmp_path / "sweep" / "queues" / f"{point_id}.parquet")) == 10
    done = run_snarl("report", tmp_path / "sweep", "-o", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    assert "queues/&lt;point_id&gt;.parquet" in (tmp_path / "report.html").read_text()
