"""Findings as data (snarl.expressions, snarl.findings, `snarl findings`) and the
calibration search (snarl.space, snarl.calibrate, `snarl calibrate`): the expression
language is safe and its errors name the finding and the path; the commands run each
distinct run once, resume without running anything again, and refuse bad input with one
line and exit code 2."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import run_snarl
from snarl import findings as findings_module
from snarl.expressions import ExpressionError, NoValue, closest, parse
from snarl.findings import FindingsError, evaluate
from snarl.runs import Result
from snarl.space import SpaceError, sobol
from snarl.space import load as load_space

# ----------------------------------------------------------------------------- the evaluator

SUMMARY = {
    "accepted_load": 0.5,
    "counters": {"cnps_sent": 40, "rate_cuts": 0},
    "groups": {"victims": {"fct": {"p99": 200.0, "p50": None}}, "job-1": {"accepted_load": 0.25}},
    "isolation": {"peak_cnps_per_window": 5},
    "fct": {"buckets": [{"flows": 7}, {"flows": 0}]},
}


def lookup(summaries: dict[str, Any]) -> Any:
    """A lookup over plain dicts, as the findings module resolves paths in summaries."""

    def find(path: tuple[str | int, ...]) -> Any:
        current: Any = summaries[str(path[0])]
        for part in path[1:]:
            current = current[part]
        return current

    return find


def value(text: str, **runs: Any) -> Any:
    return parse(text).evaluate(lookup(runs or {"dcqcn": SUMMARY, "plus": SUMMARY}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2 ** 10", 1024),
        ("-3 + +1", -2),
        ("1 < 2 < 3", True),
        ("1 < 3 < 2", False),
        ("2 >= 2 and 3 != 4", True),
        ("1 > 2 or not 1 > 2", True),
        ("true and not false", True),
        ("min(3, 1, 2) + max(4, 5) + abs(-2)", 8),
        ("1 if 2 > 1 else 0", 1),
        ("dcqcn.counters.cnps_sent / plus.isolation.peak_cnps_per_window", 8.0),
        ("dcqcn.groups.victims.fct.p99 <= 2 * 100", True),
        ('dcqcn.groups["job-1"].accepted_load', 0.25),
        ("dcqcn.fct.buckets[0].flows + dcqcn.fct.buckets[-1].flows", 7),
        ("max(dcqcn.counters.cnps_sent, 8 * plus.isolation.peak_cnps_per_window)", 40),
        ('"a" == "a"', True),
    ],
)
def test_the_evaluator_computes(text, expected):
    assert value(text) == expected


def test_functions_take_lists():
    runs = {"r": {"column": [3, 9, 6]}}
    assert value("max(r.column)", **runs) == 9
    assert value("min(r.column)", **runs) == 3
    assert value("sum(r.column) / len(r.column)", **runs) == 6
    assert value("mean(r.column)", **runs) == 6


def test_expressions_may_span_lines():
    assert value("1 < 2\n  and 2 < 3\n") is True


def test_paths_and_runs_are_collected():
    expression = parse("max(a.x.y, b.z) > a.w * 2")
    assert expression.paths() == [("a", "x", "y"), ("b", "z"), ("a", "w")]
    assert expression.runs() == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('true')", "unknown function"),
        ("(lambda: 1)()", "unknown function"),
        ("open('x')", "unknown function `open`"),
        ("maxx(1, 2)", "did you mean `max`?"),
        ("[1, 2]", "not part of the language"),
        ("{'a': 1}", "not part of the language"),
        ("x := 1", "not an expression"),
        ("a.b[c]", "a subscript is a key in quotes or a list index"),
        ("max", "is a function"),
        ("max(1, key=abs)", "plain arguments"),
        ("1 +", "not an expression"),
        ("", "is empty"),
        ("1 if 2", "not an expression"),
        ("None", "not a number, a string or a boolean"),
        ("a in b", "not part of the language"),
    ],
)
def test_the_language_refuses_what_it_does_not_have(text, message):
    with pytest.raises(ExpressionError, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse(text)


def test_evaluation_errors():
    with pytest.raises(NoValue, match="divides by zero"):
        value("1 / (dcqcn.counters.rate_cuts)")
    with pytest.raises(NoValue, match="null"):
        value("dcqcn.groups.victims.fct.p50 > 1")
    with pytest.raises(ExpressionError, match="not a number"):
        value('1 + "a"')
    with pytest.raises(ExpressionError, match="not true or false"):
        value("1 and 2")
    with pytest.raises(ExpressionError, match="cannot compare"):
        value('1 < "a"')
    with pytest.raises(NoValue, match="no values"):
        value("max(r.c)", r={"c": []})


def test_closest_follows_the_core():
    assert closest("p999", ["p50", "p95", "p99"]) == "p99"
    assert closest("victim", ["victims", "hotspot"]) == "victims"
    assert closest("zzzzzzzz", ["load", "seed"]) is None


# ----------------------------------------------------------------------------- findings files

TINY = """\
[simulation]
duration = "20us"

[topology]
type = "single_switch"
hosts = 4

[traffic]
load = 0.5
"""
"""Four hosts on one switch for 20 us: a run of tens of milliseconds."""

FINDINGS = """\
paper = "A toy paper"
given = ["topology.hosts"]

[[finding]]
id = "more-load-more-throughput"
paper = "Figure 1"
says = "The accepted load grows with the offered load."
paper_value = "grows"
value = ["high.accepted_load", "low.accepted_load"]
format = ".2f"
holds = "high.accepted_load > 2 * low.accepted_load"
[finding.runs]
low = { scenario = "tiny.toml", set = { "traffic.load" = 0.2 } }
high = { scenario = "tiny.toml", set = { "traffic.load" = 0.8 } }

[[finding]]
id = "latency-stays-low"
paper = "Figure 2"
says = "Latency stays below a microsecond."
paper_value = "below 1 us"
value = { "p99 (ns)" = "low.latency.p99", "peak window" = "max(low.tables.timeseries.accepted_load)" }
holds = "low.latency.p99 < 1"
[finding.runs]
low = { scenario = "tiny.toml", set = { "traffic.load" = 0.2 } }
"""


def write_findings(directory: Path, text: str = FINDINGS, name: str = "findings.toml") -> Path:
    (directory / "tiny.toml").write_text(TINY, encoding="utf-8")
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def fake_result(summary: dict[str, Any], tmp_path: Path, status: str = "ok") -> Result:
    return Result("0" * 16, {"status": status, "summary": summary, "error": "DeadlockError: stuck"}, tmp_path)


def test_a_findings_file_is_checked_before_anything_runs(tmp_path):
    file = findings_module.load(write_findings(tmp_path))
    assert file.ids() == ["more-load-more-throughput", "latency-stays-low"]
    assert file.fixed_keys().keys() == {"topology.hosts", "traffic.load"}
    bad = {
        "unknown run": (FINDINGS.replace("high.accepted_load >", "hihg.accepted_load >"), "finding `more-load-more-throughput`: `holds`: `hihg.accepted_load`: unknown run `hihg`; did you mean `high`?"),
        "unknown key": (FINDINGS.replace("paper_value = \"grows\"", "paper_value = \"grows\"\nvalu = 1"), "unknown key `valu` in a finding; did you mean `value`?"),
        "missing": (FINDINGS.replace('says = "Latency stays below a microsecond."\n', ""), "finding `latency-stays-low`: missing `says`"),
        "bad syntax": (FINDINGS.replace('holds = "low.latency.p99 < 1"', 'holds = "low.latency.p99 <"'), "finding `latency-stays-low`: `holds`: `low.latency.p99 <` is not an expression"),
        "no scenario": (FINDINGS.replace('"tiny.toml", set = { "traffic.load" = 0.8 }', '"nope.toml"'), "runs.high: scenario"),
        "duplicate id": (FINDINGS.replace("latency-stays-low", "more-load-more-throughput"), "two findings have the id"),
        "reserved name": (FINDINGS.replace("high", "max"), "run name `max`"),
    }
    for case, (text, message) in bad.items():
        path = write_findings(tmp_path, text, f"{case.replace(' ', '-')}.toml")
        with pytest.raises(FindingsError) as error:
            findings_module.load(path)
        assert message in str(error.value), (case, str(error.value))


def test_evaluation_errors_name_the_finding_the_path_and_the_closest_keys(tmp_path):
    file = findings_module.load(write_findings(tmp_path, FINDINGS.replace("low.latency.p99 < 1", "low.latency.p999 < 1")))
    finding = file.find("latency-stays-low")
    with pytest.raises(FindingsError) as error:
        evaluate(finding, {"low": fake_result({"latency": {"p50": 1, "p95": 2, "p99": 3}}, tmp_path)})
    message = str(error.value)
    assert message.startswith("finding `latency-stays-low`: `value`: ") or message.startswith("finding `latency-stays-low`: `holds`: ")
    # The value reads the run's tables, which this fake run has none of: the message says so.
    assert "`low.tables.timeseries.accepted_load`: the run has no table `timeseries`" in message

    finding = file.find("more-load-more-throughput")
    summaries = {"low": fake_result({"accepted_load": 0.2}, tmp_path), "high": fake_result({"acepted_load": 0.8}, tmp_path)}
    with pytest.raises(FindingsError) as error:
        evaluate(finding, summaries)
    assert str(error.value) == (
        "finding `more-load-more-throughput`: `value`: `high.accepted_load`: no key `accepted_load` in `high`; "
        "did you mean `acepted_load`? (keys: acepted_load, tables)"
    )


def test_a_failed_run_or_a_missing_figure_is_an_outcome_not_an_error(tmp_path):
    file = findings_module.load(write_findings(tmp_path))
    finding = file.find("more-load-more-throughput")
    failed = evaluate(finding, {"low": fake_result({}, tmp_path, "failed"), "high": fake_result({"accepted_load": 0.8}, tmp_path)})
    assert failed.holds is None and failed.error == "run `low` failed: DeadlockError: stuck"
    assert failed.holds_text() == "error" and failed.value_text() == "-"
    empty = evaluate(finding, {"low": fake_result({"accepted_load": None}, tmp_path), "high": fake_result({"accepted_load": 0.8}, tmp_path)})
    assert empty.holds is None and "`low.accepted_load` is null" in empty.error
    held = evaluate(finding, {"low": fake_result({"accepted_load": 0.2}, tmp_path), "high": fake_result({"accepted_load": 0.8}, tmp_path)})
    assert held.holds is True and held.value_text() == "0.80 vs 0.20"


# ----------------------------------------------------------------------------- snarl findings


def test_snarl_findings_runs_each_run_once_and_prints_the_table(tmp_path):
    path = write_findings(tmp_path)
    done = run_snarl("findings", path, "--out", "out", "--processes", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # Three runs named, two distinct: `low` serves both findings.
    assert "snarl findings: 2 runs, 0 already done, 2 to run" in done.stderr
    assert len(list((tmp_path / "out" / "points").glob("*.json"))) == 2
    for text in ("finding", "paper's value", "snarl's value", "holds", "more-load-more-throughput", "Figure 1", "grows"):
        assert text in done.stdout, text
    assert "1 of 2 hold" in done.stdout  # latency below 1 ns does not hold: still exit code 0
    report = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert [f["holds"] for f in report["findings"]] == [True, False]

    again = run_snarl("findings", path, "--out", "out", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 runs, 2 already done, 0 to run" in again.stderr
    data = json.loads(again.stdout)
    first, second = data["findings"]
    assert first["id"] == "more-load-more-throughput" and first["holds"] is True
    assert first["value"][0] > 2 * first["value"][1]
    assert second["holds"] is False and set(second["value"]) == {"p99 (ns)", "peak window"}
    assert 0 < second["value"]["peak window"] <= 1.5


def test_snarl_findings_set_applies_to_every_run_and_notes_what_it_replaces(tmp_path):
    path = write_findings(tmp_path)
    done = run_snarl(
        "findings", path, "--out", "out", "--processes", "1", "--set", "traffic.load=0.9", "--set", "seed=3", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "snarl: note: --set traffic.load: finding `more-load-more-throughput`'s run `low` sets it; --set replaces it in every run" in done.stderr
    # Both runs are now one experiment.
    assert "1 run, 0 already done, 1 to run" in done.stderr


def test_snarl_findings_bad_input_is_one_line_and_exit_2(tmp_path):
    path = write_findings(tmp_path, FINDINGS.replace("low.latency.p99 < 1", "low.latency.p999 < 1"))
    done = run_snarl("findings", path, "--out", "out", "--processes", "1", cwd=tmp_path)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("snarl: error:")]
    assert lines == [
        "snarl: error: finding `latency-stays-low`: `holds`: `low.latency.p999`: no key `p999` in `low.latency`; "
        "did you mean `p99`? (keys: mean, min, p50, p95, p99, max)"
    ]
    invalid = write_findings(tmp_path, FINDINGS.replace('"traffic.load" = 0.8', '"traffic.lod" = 0.8'), "invalid.toml")
    done = run_snarl("findings", invalid, "--out", "other", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("snarl: error: finding `more-load-more-throughput`, run `high`: tiny.toml with traffic.lod=0.8")
    assert "did you mean `load`?" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "other").exists()  # nothing ran, nothing written
    done = run_snarl("findings", tmp_path / "missing.toml", cwd=tmp_path)
    assert done.returncode == 2 and "no such findings file" in done.stderr


# ----------------------------------------------------------------------------- calibration

TOY = """\
paper = "A toy paper"
given = ["topology.hosts"]

[[finding]]
id = "corner"
paper = "Figure 1"
says = "Throughput is high, in small packets."
paper_value = "above 0.6"
value = "r.accepted_load"
holds = "r.accepted_load > 0.6 and r.packets.injected > 600"
[finding.runs]
r = { scenario = "tiny.toml" }

[[finding]]
id = "above"
paper = "Figure 2"
says = "Throughput is above 0.4."
paper_value = "> 0.4"
value = "r.accepted_load"
holds = "r.accepted_load > 0.4"
[finding.runs]
r = { scenario = "tiny.toml" }

[[finding]]
id = "below"
paper = "Figure 3"
says = "Throughput is below 0.4."
paper_value = "< 0.4"
value = "r.accepted_load"
holds = "r.accepted_load < 0.4"
[finding.runs]
r = { scenario = "tiny.toml" }

[[finding]]
id = "delivered"
paper = "Figure 4"
says = "Packets are delivered."
paper_value = "some"
value = "r.packets.delivered"
holds = "r.packets.delivered > 0"
[finding.runs]
r = { scenario = "tiny.toml" }
"""
"""On the tiny scenario (accepted load about 0.2, 0.48 and 0.67 at offered 0.2, 0.5 and
0.9; 800 packets injected at 0.9 with 1 KiB packets, under 400 otherwise), `corner`
holds only at load 0.9 with a 1 KiB MTU, `above` and `below` contradict each other."""

SPACE = """\
[[parameter]]
key = "traffic.load"
values = [0.2, 0.5, 0.9]
why = "the toy paper does not say"

[[parameter]]
key = "nic.mtu"
values = ["1KiB", "2KiB", "4KiB"]
why = "the toy paper does not say"

[holdout]
findings = ["delivered"]
"""


def write_space(directory: Path, text: str = SPACE, name: str = "space.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def calibrate(tmp_path: Path, findings: Path, space: Path, *options: str) -> Any:
    return run_snarl("calibrate", findings, "--space", space, "--out", "cal", "--processes", "1", *options, cwd=tmp_path)


def test_calibrate_finds_the_corner_and_the_contradiction_and_resumes(tmp_path):
    findings = write_findings(tmp_path, TOY)
    space = write_space(tmp_path)
    done = calibrate(tmp_path, findings, space, "--points", "9")
    assert done.returncode == 0, done.stderr
    assert "snarl calibrate: 9 runs, 0 already done, 9 to run" in done.stderr
    out = tmp_path / "cal"
    table = pd.read_parquet(out / "calibration.parquet")
    assert len(table) == 9 and table.equals(table.sort_values("point"))
    corner = table[table["corner.holds"]]
    assert corner[["traffic.load", "nic.mtu"]].values.tolist() == [[0.9, "1KiB"]]
    assert (table["above.holds"] != table["below.holds"]).all()
    csv = pd.read_csv(out / "calibration.csv")
    assert list(csv.columns) == list(table.columns) and len(csv) == 9

    report = json.loads((out / "calibration.json").read_text())
    assert report["searched"] == ["corner", "above", "below"] and report["holdout"] == ["delivered"]
    assert report["all_hold"] == []
    assert report["best"][0]["values"] == {"traffic.load": 0.9, "nic.mtu": "1KiB"} and report["best"][0]["held"] == 2
    assert report["never_together"] == [["corner", "below"], ["above", "below"]]
    assert report["together"]["corner"]["above"] == 1 and report["together"]["above"]["above"] == 6
    held_out = report["holdout_at_best"]
    assert held_out["values"] == {"traffic.load": 0.9, "nic.mtu": "1KiB"}
    assert [f["id"] for f in held_out["findings"]] == ["delivered"] and held_out["findings"][0]["holds"] is True
    assert report["influence"].keys() == {"traffic.load", "nic.mtu"}
    assert (out / "calibration.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for text in ("Best points by findings held", "never together: corner and below; above and below", "Held-out findings"):
        assert text in done.stdout, text

    # Again: nothing runs.
    records = sorted(p.name for p in (out / "points").glob("*.json"))
    again = calibrate(tmp_path, findings, space, "--points", "9")
    assert again.returncode == 0, again.stderr
    assert "snarl calibrate: 9 runs, 9 already done, 0 to run" in again.stderr
    assert "held-out findings: 1 run, 1 already done, 0 to run" in again.stderr
    assert sorted(p.name for p in (out / "points").glob("*.json")) == records

    # Interrupted before three runs were recorded: those three run, and nothing else.
    for path in sorted((out / "points").glob("*.json"))[:3]:
        path.unlink()
    resumed = calibrate(tmp_path, findings, space, "--points", "9")
    assert resumed.returncode == 0, resumed.stderr
    assert "9 runs, 6 already done, 3 to run" in resumed.stderr
    assert pd.read_parquet(out / "calibration.parquet").drop(columns=[c for c in table if c.endswith(".value")]).equals(
        table.drop(columns=[c for c in table if c.endswith(".value")])
    )

    # Without the contradiction, the corner is the one point where every finding holds;
    # its runs are the same experiments, already in the cache.
    alone = write_findings(tmp_path, TOY.replace("r.accepted_load < 0.4", "r.accepted_load < 0.4 or r.accepted_load > 0.6"), "alone.toml")
    corner_only = calibrate(tmp_path, alone, space)
    assert corner_only.returncode == 0, corner_only.stderr
    assert "9 runs, 9 already done, 0 to run" in corner_only.stderr
    report = json.loads((out / "calibration.json").read_text())
    assert [p["values"] for p in report["all_hold"]] == [{"traffic.load": 0.9, "nic.mtu": "1KiB"}]
    # The load decides most of what holds; the MTU only at one corner.
    assert report["influence"]["traffic.load"] > report["influence"]["nic.mtu"] > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.replace('why = "the toy paper does not say"\n', "", 1), "parameter `traffic.load`: `why` is required"),
        (lambda s: s.replace('why = "the toy paper does not say"', 'why = "  "', 1), "parameter `traffic.load`: `why` is required"),
        (lambda s: s.replace('key = "nic.mtu"', 'key = "topology.hosts"'), "parameter `topology.hosts` cannot be searched: `topology.hosts` is given by the paper"),
        (lambda s: s.split("[holdout]")[0], "no [holdout]: name at least one finding"),
        (lambda s: s.replace('["delivered"]', "[]"), "[holdout] findings is empty"),
        (lambda s: s.replace('["delivered"]', '["delivred"]'), "[holdout] names no finding `delivred`; did you mean `delivered`?"),
        (lambda s: s.replace('["delivered"]', '["delivered", "corner", "above", "below"]'), "holds out every finding"),
        (lambda s: s.replace("values = [0.2, 0.5, 0.9]", "range = [0.9, 0.2]"), "is empty: lo must be below hi"),
        (lambda s: s.replace("values = [0.2, 0.5, 0.9]", "range = [0, 1]\nlog = true"), "a `log` range must be above 0"),
        (lambda s: s.replace("values = [0.2, 0.5, 0.9]", "values = [0.2]\nrange = [0, 1]"), "give either `values"),
        (lambda s: s.replace("why = ", "whyy = ", 1), "unknown key `whyy` in a parameter; did you mean `why`?"),
    ],
)
def test_bad_space_files_are_refused_with_one_line(tmp_path, change, message):
    findings = write_findings(tmp_path, TOY)
    space = write_space(tmp_path, change(SPACE))
    done = calibrate(tmp_path, findings, space)
    assert done.returncode == 2, done.stdout
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("snarl: error: "), done.stderr
    assert message in done.stderr, done.stderr
    assert not (tmp_path / "cal").exists()  # nothing ran


def test_a_key_a_run_sets_is_not_searched(tmp_path):
    findings = write_findings(tmp_path, TOY.replace('r = { scenario = "tiny.toml" }', 'r = { scenario = "tiny.toml", set = { "traffic.load" = 0.5 } }', 1))
    done = calibrate(tmp_path, findings, write_space(tmp_path))
    assert done.returncode == 2
    assert "parameter `traffic.load` cannot be searched: `traffic.load` is fixed (finding `corner`'s run `r` sets it)" in done.stderr


def test_a_grid_larger_than_points_is_refused(tmp_path):
    done = calibrate(tmp_path, write_findings(tmp_path, TOY), write_space(tmp_path), "--points", "4")
    assert done.returncode == 2
    assert "the grid has 9 points (3 x 3), more than --points 4" in done.stderr


# ----------------------------------------------------------------------------- points of a space

RANGES = """\
seed = 7

[[parameter]]
key = "traffic.load"
range = [0.1, 0.9]
why = "unstated"

[[parameter]]
key = "isolation.confirm"
range = [0.5, 8]
log = true
unit = "us"
why = "unstated"

[[parameter]]
key = "nic.mtu"
values = ["1KiB", "4KiB"]
why = "unstated"

[holdout]
findings = ["x"]
"""


def test_points_of_each_method(tmp_path):
    space = load_space(write_space(tmp_path, RANGES))
    grid = space.points("grid", 18)  # two ranges share 18 / 2 = 9 points: 3 steps each
    assert len(grid) == 18
    assert sorted({p["traffic.load"] for p in grid}) == [0.1, 0.5, 0.9]
    assert sorted({p["isolation.confirm"] for p in grid}) == ["0.5us", "2us", "8us"]  # log-spaced
    assert len(space.points("grid")) == 5 * 5 * 2
    for method in ("random", "sobol"):
        points = space.points(method, 12)
        assert len(points) == 12
        assert points[:5] == space.points(method, 5)  # a longer search extends a shorter one
        assert all(0.1 <= p["traffic.load"] <= 0.9 for p in points)
        confirms = [float(p["isolation.confirm"].removesuffix("us")) for p in points]
        assert all(0.5 <= c <= 8 for c in confirms)
        assert {p["nic.mtu"] for p in points} == {"1KiB", "4KiB"}
    with pytest.raises(SpaceError, match="unknown method `sobl`; did you mean `sobol`?"):
        space.points("sobl", 4)


def test_sobol_points_spread_evenly():
    points = sobol(64, 5, seed=3)
    for d in range(5):
        for n in (2, 4, 8, 16, 32, 64):
            cells = sorted(math.floor(p[d] * n) for p in points[:n])
            assert cells == list(range(n)), (d, n)  # one point in each of n equal intervals
    assert sobol(64, 5, seed=3) == points and sobol(8, 2, seed=4) != sobol(8, 2, seed=3)


PHASED = """\
[simulation]
duration = "20us"

[topology]
type = "single_switch"
hosts = 4

[traffic]
load = 0.2

[[traffic.groups]]
name = "everyone"
rest = true

[[traffic.phases]]
at = "5us"
group = "everyone"
load = 0.8
"""

SECTIONS = """\
[[finding]]
id = "phase-lifts-load"
paper = "Figure 1"
says = "The phase lifts the load above the steady run's."
paper_value = "above"
value = ["phased.accepted_load", "steady.accepted_load"]
holds = "phased.accepted_load > steady.accepted_load"
[finding.runs]
phased = { scenario = "phased.toml" }
steady = { scenario = "tiny.toml", set = { "traffic.load" = 0.2 } }

[[finding]]
id = "delivered"
paper = "Figure 2"
says = "Packets are delivered."
paper_value = "some"
value = "r.packets.delivered"
holds = "r.packets.delivered > 0"
[finding.runs]
r = { scenario = "tiny.toml" }
"""


def test_a_setting_applies_to_the_runs_that_have_its_section(tmp_path):
    (tmp_path / "phased.toml").write_text(PHASED, encoding="utf-8")
    findings = write_findings(tmp_path, SECTIONS)
    space = write_space(tmp_path, """\
[[parameter]]
key = "traffic.phases.0.load"
values = [0.1, 0.6, 0.9]
why = "the toy paper does not say how strong its phase is"

[holdout]
findings = ["delivered"]
""")
    done = calibrate(tmp_path, findings, space)
    assert done.returncode == 0, done.stderr
    # Three phased runs; the steady run has no phases, and serves all three points.
    assert "snarl calibrate: 4 runs, 0 already done, 4 to run" in done.stderr
    table = pd.read_parquet(tmp_path / "cal" / "calibration.parquet")
    steady = [json.loads(v)[1] for v in table["phase-lifts-load.value"]]
    assert len(set(steady)) == 1
    assert table["phase-lifts-load.holds"].tolist() == [False, True, True]  # 0.1 lowers the 0.2 load

    done = run_snarl("findings", findings, "--set", "traffic.phases.0.load=0.9", "--processes", "1", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["held"] == 2
    misspelt = run_snarl("findings", findings, "--set", "trafic.load=0.9", cwd=tmp_path)
    assert misspelt.returncode == 2
    assert misspelt.stderr == (
        "snarl: error: --set `trafic.load`: no run has the section `trafic`, so it would change nothing "
        "(a setting applies to the runs whose config has its section)\n"
    )
    bad = write_space(tmp_path, SPACE.replace('key = "nic.mtu"', 'key = "isolation.confirm"'), "bad.toml")
    refused = calibrate(tmp_path, write_findings(tmp_path, TOY, "toy.toml"), bad)
    assert refused.returncode == 2
    assert "parameter `isolation.confirm`: no run has the section `isolation`" in refused.stderr


@pytest.mark.parametrize(
    "findings",
    [
        line[len("<!-- findings: ") : -len(" -->")]
        for line in (Path(__file__).resolve().parents[3] / "docs" / "validation.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("<!-- findings: ") and line.endswith(" -->")
    ],
)
def test_every_findings_table_in_the_docs_is_the_table_of_its_file(findings):
    """docs/validation.md carries `snarl findings --markdown` of findings files between
    `<!-- findings: FILE -->` and `<!-- end of findings -->`. Every such block names a
    findings file that exists and loads, and its table is that file's: its findings in
    order, each with the file's section and paper's value, and a count that adds up.
    What the runs decide (snarl's values, which findings hold) is compared by running
    the file: test_reproductions.py does so for every file under scenarios/, with its
    controls; here nothing runs, so a table left behind by an edited or renamed file is
    caught at once."""
    import re

    from conftest import REPO

    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    block = re.search(rf"<!-- findings: {re.escape(findings)} -->\n(.*?)<!-- end of findings -->", docs, re.S)
    assert block, f"docs/validation.md: the table of {findings} has no `<!-- end of findings -->`"
    path = REPO / findings
    assert path.is_file(), f"docs/validation.md has a table of {findings}, which does not exist"
    file = findings_module.load(path)
    lines = block.group(1).splitlines()
    count = re.fullmatch(r"(\d+) of (\d+) findings hold\.", lines[0])
    assert count, f"{findings}: the table does not start with 'N of M findings hold.': {lines[0]!r}"
    assert lines[1:4] == ["", "| finding | paper | paper's value | snarl's value | holds |", "|---|---|---|---|---|"]
    rows = [[cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[4:]]
    assert [row[0] for row in rows] == file.ids(), f"{findings}: the docs' table lists other findings than the file"
    for row, finding in zip(rows, file.findings):
        assert row[1:3] == [finding.paper, finding.paper_value], f"{findings}: `{finding.id}` reads otherwise in the file"
        assert row[4] in ("yes", "no", "error"), row
    held = sum(1 for row in rows if row[4] == "yes")
    assert (int(count.group(1)), int(count.group(2))) == (held, len(rows)), f"{findings}: the count does not add up"


# ----------------------------------------------------------------------------- controls

CONTROLLED = FINDINGS.replace(
    '''high = { scenario = "tiny.toml", set = { "traffic.load" = 0.8 } }
''',
    '''high = { scenario = "tiny.toml", set = { "traffic.load" = 0.8 } }

[[finding.control]]
why = "the high load lowered"
[finding.control.runs]
high = { set = { "traffic.load" = 0.3 } }

[[finding.control]]
why = "a control that changes nothing the finding reads"
[finding.control.runs]
high = { set = { "seed" = 7 } }
''',
)


def test_a_control_must_name_a_run_of_its_finding_and_say_why(tmp_path):
    file = findings_module.load(write_findings(tmp_path, CONTROLLED))
    controls = file.find("more-load-more-throughput").controls
    assert [c.why for c in controls] == ["the high load lowered", "a control that changes nothing the finding reads"]
    # A control's overrides go onto the run's own; the runs it does not name stay.
    assert controls[0].runs["high"].set == {"traffic.load": 0.3}
    assert controls[0].runs["low"] == file.find("more-load-more-throughput").runs["low"]
    bad = {
        "unknown run": (CONTROLLED.replace("high = { set = { \"traffic.load\" = 0.3 } }", "hihg = { set = { \"traffic.load\" = 0.3 } }"), "control 1: runs.hihg: not a run of the finding; did you mean `high`?"),
        "no why": (CONTROLLED.replace('why = "the high load lowered"\n', ""), "control 1: `why` is required"),
        "unknown key": (CONTROLLED.replace("high = { set = { \"seed\" = 7 } }", "high = { sett = { \"seed\" = 7 } }"), "control 2: runs.high: unknown key `sett`"),
        "no scenario": (CONTROLLED.replace("high = { set = { \"seed\" = 7 } }", "high = { scenario = \"nope.toml\" }"), "control 2: runs.high: scenario"),
    }
    for case, (text, message) in bad.items():
        with pytest.raises(FindingsError) as error:
            findings_module.load(write_findings(tmp_path, text, f"{case.replace(' ', '-')}.toml"))
        assert message in str(error.value), (case, str(error.value))


def test_snarl_findings_controls_show_which_findings_can_fail(tmp_path):
    """The lowered load breaks the finding (a proof that it can fail); the other control
    does not, and snarl says so. Only the findings that hold get their controls run."""
    path = write_findings(tmp_path, CONTROLLED)
    done = run_snarl("findings", path, "--controls", "--out", "out", "--processes", "1", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    by_id = {f["id"]: f for f in report["findings"]}
    assert [(c["why"], c["holds"]) for c in by_id["more-load-more-throughput"]["controls"]] == [
        ("the high load lowered", False),
        ("a control that changes nothing the finding reads", True),
    ]
    # A finding that does not hold needs no proof that it can fail.
    assert by_id["latency-stays-low"]["holds"] is False and by_id["latency-stays-low"]["controls"] is None
    assert (
        "snarl: note: finding `more-load-more-throughput` holds with a control that changes nothing the finding reads too: "
        "the control does not show that it can fail"
    ) in done.stderr
    # Without --controls, none are run or reported.
    plain = run_snarl("findings", path, "--out", "out", "--processes", "1", "--json", cwd=tmp_path)
    assert all(f["controls"] is None for f in json.loads(plain.stdout)["findings"])
