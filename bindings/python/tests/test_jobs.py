"""Jobs running collectives from Python: a victim/aggressor run reports the victim's
perf ratio against its baseline (the victims alone), and a sweep runs each distinct
baseline once and hands it to every point that shares it."""

from __future__ import annotations

import json
from pathlib import Path

import snarl
from conftest import assert_invariants, run_snarl
from snarl.sweep import BASELINES, execute, plan

# Four leaves of four hosts under two spines (1:0.5); 8 hosts drawn per seed, the victim
# and the aggressor interleaved among them.
VICTIM_AGGRESSOR = """\
seed = 1
[simulation]
duration = "100ms"
[topology]
type = "spine_leaf"
leaves = 4
spines = 2
hosts_per_leaf = 4
oversubscription = "1:0.5"
[links]
host = { rate = "100Gbps", latency = "100ns" }
[workload]
type = "jobs"
allocation = { nodes = 8, policy = "random" }
[[workload.jobs]]
name = "victim"
collective = "allgather"
size = "256KiB"
nodes = "interleaved"
iterations = 8
warmup = 2
[[workload.jobs]]
name = "aggressor"
collective = "alltoall"
size = "64KiB"
nodes = "interleaved"
role = "aggressor"
"""


def base(tmp_path: Path) -> Path:
    path = tmp_path / "victim-aggressor.toml"
    path.write_text(VICTIM_AGGRESSOR)
    return path


def test_a_victim_aggressor_run_reports_the_perf_ratio_against_its_baseline(tmp_path):
    report = snarl.run(base(tmp_path))
    assert_invariants(report.summary)
    victim = report.summary["jobs"]["victim"]
    assert victim["iterations"] == 6 and victim["role"] == "victim"
    assert 0 < victim["perf_ratio"] < 1, victim
    assert victim["perf_ratio"] == victim["baseline_time"] / victim["time"]
    assert "perf_ratio" not in report.summary["jobs"]["aggressor"]
    # Given the baseline, the run does not compute it and reports the same.
    given = snarl.run(base(tmp_path), baseline=json.dumps({"victim": victim["baseline_time"]}))
    assert given.summary["jobs"]["victim"] == victim
    assert set(report.tables) >= {"iterations", "steps"}
    printed = run_snarl("run", base(tmp_path))
    assert "job victim: perf_ratio" in printed.stdout


def test_a_sweep_runs_each_baseline_once_and_reuses_it(tmp_path):
    spec = {"base": str(base(tmp_path)), "axes": {"workload.jobs.1.collective": ["alltoall", "incast"], "seed": [1, 2]}}
    out = tmp_path / "sweep"
    first = plan(spec, out)
    table = execute(first, processes=2)
    # One placement per seed: two baselines for four points.
    assert first.baselines_run == 2
    assert len(list((out / BASELINES).glob("*.json"))) == 2
    records = [json.loads(p.read_text()) for p in (out / "points").glob("*.json")]
    assert len({r["baseline"] for r in records}) == 2
    assert (table["jobs.victim.perf_ratio"] < 1).all()
    for seed in (1, 2):
        alone = table[table["seed"] == seed]["jobs.victim.baseline_time"]
        assert alone.nunique() == 1, "the points of a placement share one baseline"
    # A point added later reuses the baselines already run.
    spec["axes"]["workload.jobs.1.collective"].append("allgather")
    second = plan(spec, out)
    execute(second, processes=2)
    assert second.baselines_run == 0
    assert len(list((out / BASELINES).glob("*.json"))) == 2


def test_the_iterations_and_the_ranks_of_a_run_of_jobs_are_plotted(tmp_path):
    out = tmp_path / "run"
    done = run_snarl("run", base(tmp_path), "--out", out)
    assert done.returncode == 0, done.stderr
    for kind in ("iterations", "timeline"):
        figure = tmp_path / f"{kind}.png"
        drawn = run_snarl("plot", kind, out, "-o", figure)
        assert drawn.returncode == 0, drawn.stderr
        assert figure.stat().st_size > 10_000
    wrong = run_snarl("plot", "timeline", out, "--group", "nobody", "-o", tmp_path / "x.png")
    assert wrong.returncode == 2 and "no job 'nobody'" in wrong.stderr
