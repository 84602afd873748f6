"""`make validate` (`python -m validation`): the papers' experiments, each figure beside
the paper's. The full length runs there; here, its shortened form and its arithmetic."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
from conftest import REPO

sys.path.insert(0, str(REPO))

from validation.endpoint import WINDOW, recovery_of  # noqa: E402
from validation.infiniband import gain  # noqa: E402
from validation.lab import Table, lossless_breach  # noqa: E402
from validation.nccl import balls_into_bins, fit  # noqa: E402


def test_recovery_is_read_from_the_trough_to_the_first_window_back_near_the_steady_state():
    loads = [0.9, 0.9, 0.5, 0.3, 0.6, 0.86, 0.9, 0.9]
    series = pd.Series(loads, index=[i * WINDOW for i in range(len(loads))])
    # Burst from 2,000 to 2,100; the trough at 3,000; back (>= 0.95 x 0.9) in 5,000-6,000.
    assert recovery_of(series, 2_000, 2_100, 0.9) == (0.3, 6_000 - 2_100)
    assert recovery_of(series, 2_000, 2_100, 0.95) == (0.3, None)
    # A burst that never takes the load 5% below the steady state leaves no trough.
    assert recovery_of(series, 2_000, 2_100, 0.3) == (0.3, 0.0)


def test_gains_are_written_as_the_paper_writes_them():
    assert gain(1.0, 2.6) == "x2.6"
    assert gain(1.0, 1.1) == "+10%"
    assert gain(1.0, 0.97) == "-3%"
    assert gain(0.0, 1.0) == "-"


def test_a_run_that_loses_packets_is_named():
    ok = {"packets": {"injected": 10, "delivered": 8, "in_flight": 2, "dropped": 0}}
    assert lossless_breach(ok) is None
    lost = {"packets": {"injected": 10, "delivered": 7, "in_flight": 2, "dropped": 0}}
    assert "not conserved" in lossless_breach(lost)
    dropped = {"packets": {"injected": 10, "delivered": 7, "in_flight": 2, "dropped": 1}}
    assert "dropped" in lossless_breach(dropped)
    # What an in-order receiver discarded reached its host (go-back-N sends it again).
    discarded = {"packets": {"injected": 10, "delivered": 7, "in_flight": 2, "dropped": 0, "discarded": 1}}
    assert lossless_breach(discarded) is None


def test_the_reports_back_to_back_times_fit_its_overhead_and_rate():
    a, rate = fit([g * 2**30 for g in (2, 4, 8, 16)], [44.89, 89.26, 177.99, 355.31])
    assert round(a, 2) == 0.57 and round(rate, 2) == 48.43


def test_balls_into_bins_gives_the_reports_one_stage_figures_and_less_for_two_stages():
    # One hash stage of 4 links: about 0.80 with 8 QPs and 0.85 with 16, the report's reasoning.
    assert abs(balls_into_bins(8, groups=1)[0] - 0.80) < 0.01
    assert abs(balls_into_bins(16, groups=1)[0] - 0.85) < 0.01
    for qps in (8, 16):
        mean, low, high = balls_into_bins(qps)
        assert low < mean < high <= 1.0
        assert mean < balls_into_bins(qps, groups=1)[0]


def test_tables_are_markdown_with_the_papers_column():
    table = Table("Figure 1", ["fabric", "paper", "snarl"], [["HyperX", "0.98", "0.955"]], ["seed 1"])
    assert table.markdown() == "### Figure 1\n\n| fabric | paper | snarl |\n|---|---:|---:|\n| HyperX | 0.98 | 0.955 |\n\nseed 1\n"


def validate(*args: str) -> subprocess.CompletedProcess[str]:
    # The timeout guards against a hang only: the shortened validation takes seconds.
    return subprocess.run(
        [sys.executable, "-m", "validation", *args], cwd=REPO, capture_output=True, text=True, timeout=1800
    )


def test_the_shortened_validation_sets_every_papers_figures_beside_snarls(tmp_path):
    done = validate("--quick", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    figures = (tmp_path / "figures.md").read_text()
    assert figures.startswith("# snarl against the papers\n\nshortened check")
    papers = [
        "## Endpoint congestion",
        "## InfiniBand congestion control",
        "## Congestion isolation",
        "## Congestion in production",
        "## NCCL over RoCE",
    ]
    for heading in papers:
        assert heading in figures and heading in done.stdout
    # Figure 1: each fabric's paper figure beside a measured load.
    for fabric, paper in [("HyperX", "0.98"), ("fat-tree", "0.97"), ("Megafly", "0.90"), ("Dragonfly", "0.82")]:
        row = re.search(rf"^\| {fabric} \| {paper} \| ([0-9.]+) \|", figures, re.M)
        assert row and 0.5 < float(row.group(1)) <= 1.0, fabric
    # Table II: the paper's Gb/s beside snarl's, CC on above CC off for the victims.
    row = re.search(r"^\| non-hotspots \| 0.168 \| 2.246 \| ([0-9.]+) \| ([0-9.]+) \|", figures, re.M)
    assert row and float(row.group(2)) > float(row.group(1))
    assert "| ici-plus | " in figures
    # Figure 3: alone on HAICGU, DCQCN's cuts under the AlltoAll's incasts cost the RoCE
    # partition bandwidth the InfiniBand one keeps.
    row = re.search(r"^\| 1MiB \| ([0-9]+) \([0-9]+%\) \| [0-9]+ \([0-9]+%\) \| ([0-9]+) \(", figures, re.M)
    assert row and int(row.group(1)) < int(row.group(2)), row
    # Figure 5: the victim's perf ratio beside the study's words; the two aggressors of a
    # cell share one baseline (the victims alone on the same nodes).
    steady = figures.split("### Figure 5, LUMI-like: AllGather beside a steady Incast")[1]
    row = re.search(r"^\| 8B \| ([0-9.]+) \|", steady, re.M)
    assert row and 0.5 < float(row.group(1)) < 1.2
    assert "The study: close to 1, within a few percent." in steady
    assert "Figure 5, LUMI-like: 2 runs" in done.stderr
    assert "Figure 5, LUMI-like: 1 baseline run(s) first" in done.stderr
    # NCCL: the report's busbw beside snarl's through one switch, ECMP over two seeds
    # beside balls into bins, and the figures written next to the tables.
    row = re.search(r"^\| one switch, 2x8, bidir ring \| 391.75 \| ([0-9.,]+) \| 98.12 \|", figures, re.M)
    assert row and float(row.group(1).replace(",", "")) > 100, row
    assert "### ECMP over 2 seeds against balls into bins" in figures
    assert re.search(r"^\| ECMP QP hash, 16 QPs \| 16 \| 0\.[0-9]+ \|", figures, re.M)
    for name in ("nccl-ecmp-efficiency.png", "nccl-uplink-load.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    # A second validation finds every run cached and runs none.
    again = validate("--quick", "--out", str(tmp_path), "--only", "isolation")
    assert again.returncode == 0, again.stderr[-3000:]
    assert re.search(r"\] 0 runs in", again.stderr), again.stderr[-2000:]
    assert "cached" in again.stderr


def test_bad_arguments_exit_2():
    assert validate("--processes", "0").returncode == 2
    assert validate("--only", "nonsense").returncode == 2
