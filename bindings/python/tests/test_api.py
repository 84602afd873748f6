"""snarl.run and snarl.resolve_config (snarl.api)."""

from __future__ import annotations

import _thread
import queue
import threading
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import snarl
from conftest import SMALL
from snarl.api import config_text, overrides_from, toml_value

SMALL_DICT = {
    "simulation": {"duration": "20us"},
    "topology": {"type": "single_switch", "hosts": 8},
    "traffic": {"load": 0.5},
}


def test_run_a_dict(simulate):
    report = simulate(SMALL_DICT)
    assert isinstance(report, snarl.Report)
    assert report.summary["packets"]["delivered"] > 0
    assert report.config["topology"] == {"type": "single_switch", "hosts": 8}


def test_a_dict_a_file_and_toml_text_are_the_same_experiment(simulate, small_config):
    from_dict = simulate(SMALL_DICT, seed=5)
    from_path = simulate(small_config, seed=5)
    from_str_path = simulate(str(small_config), seed=5)
    from_text = simulate(SMALL, seed=5)
    expected = from_dict.summary | {"wall_seconds": 0}
    for report in (from_path, from_str_path, from_text):
        assert report.summary | {"wall_seconds": 0} == expected
        assert report.config_toml == from_dict.config_toml


def test_run_a_path_with_overrides(simulate, small_config):
    report = simulate(small_config, set={"traffic.load": 0.2, "topology.hosts": 4}, seed=11)
    assert report.config["traffic"]["load"] == 0.2
    assert report.config["topology"]["hosts"] == 4
    assert report.config["seed"] == 11
    assert report.summary["seed"] == 11
    assert report.summary["offered_load"] == pytest.approx(0.2, abs=0.1)


def test_same_seed_same_summary_different_seed_different(simulate):
    a = simulate(SMALL_DICT, seed=3).summary
    b = simulate(SMALL_DICT, seed=3).summary
    c = simulate(SMALL_DICT, seed=4).summary
    for s in (a, b, c):
        s.pop("wall_seconds")
    assert a == b
    assert a | {"seed": 0} != c | {"seed": 0}


def test_report_tables(simulate):
    report = simulate(SMALL_DICT)
    assert isinstance(report.timeseries, pd.DataFrame)
    assert len(report.timeseries) > 0
    assert isinstance(report.groups, pd.DataFrame)
    assert list(report.groups.index) == list(report.summary["groups"])


def test_progress_callback_sees_the_end(simulate):
    seen: list[float] = []
    simulate(SMALL_DICT, progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen)


def test_progress_bar_does_not_disturb_the_result(simulate):
    plain = simulate(SMALL_DICT, seed=2).summary
    with_bar = simulate(SMALL_DICT, seed=2, progress=True).summary
    assert plain | {"wall_seconds": 0} == with_bar | {"wall_seconds": 0}


LONG_DICT = SMALL_DICT | {"simulation": {"duration": "10s"}, "topology": {"type": "single_switch", "hosts": 64}}
"""A run of minutes: the tests stop it."""


def test_the_progress_callback_is_told_of_the_start():
    seen: list[float] = []
    snarl.run(SMALL_DICT, progress=seen.append)
    assert seen[0] == 0.0 and seen[-1] == 1.0


def test_an_exception_in_the_progress_callback_stops_the_run():
    class Stop(Exception):
        pass

    calls: list[float] = []

    def stop(fraction: float) -> None:
        calls.append(fraction)
        if fraction > 0.0:
            raise Stop

    with pytest.raises(Stop):
        snarl.run(LONG_DICT, progress=stop)
    assert len(calls) == 2 and 0.0 < calls[-1] < 1.0  # the start, then the first report


def test_the_run_releases_the_gil():
    """Another Python thread runs while a simulation runs: told of the start by the
    progress callback, it interrupts the main thread, which stops the run. Were the GIL
    held, it could not run before the end of the run, and the run would end normally.
    (The callback is a C function: the run itself executes no Python code that would
    hand the GIL over.)"""
    reports: queue.SimpleQueue[float] = queue.SimpleQueue()

    def interrupt_once_started() -> None:
        reports.get()
        _thread.interrupt_main()

    thread = threading.Thread(target=interrupt_once_started)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            snarl.run(LONG_DICT, progress=reports.put)
    finally:
        thread.join()
    remaining = []
    while not reports.empty():
        remaining.append(reports.get_nowait())
    assert 1.0 not in remaining  # stopped mid-way: the end was never reported


def test_config_error_is_a_value_error_with_a_path():
    with pytest.raises(ValueError) as caught:
        snarl.run(SMALL_DICT, set={"traffic.lod": 0.3})
    error = caught.value
    assert isinstance(error, snarl.ConfigError)
    assert isinstance(error, snarl.SnarlError)
    assert error.path == "traffic.lod"
    assert "load" in str(error)


def test_wrong_variant_names_the_closest():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config(SMALL_DICT, set={"topology.type": "singel_switch"})
    assert caught.value.path == "topology.type"
    assert "single_switch" in str(caught.value)


def test_impossible_fabric_is_refused_before_the_run():
    fat_tree = SMALL_DICT | {"topology": {"type": "fat_tree", "radix": 3, "levels": 2}}
    with pytest.raises(ValueError) as caught:
        snarl.run(fat_tree)
    assert isinstance(caught.value, (snarl.ConfigError, snarl.TopologyError))
    assert "radix" in str(caught.value)


def test_none_in_a_dict_names_its_key():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config(SMALL_DICT | {"traffic": {"load": None}})
    assert caught.value.path == "traffic.load"


def test_a_directory_or_a_binary_file_is_a_config_error(tmp_path):
    (tmp_path / "dir.toml").mkdir()
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00garbage")
    for config, reason in [
        (tmp_path / "dir.toml", "is a directory"),
        (str(tmp_path / "dir.toml"), "is a directory"),
        (str(tmp_path), "is a directory"),
        (tmp_path / "binary.toml", "not a UTF-8 text file"),
    ]:
        with pytest.raises(snarl.ConfigError, match=reason) as caught:
            snarl.run(config)
        assert caught.value.path == "<file>"


def test_a_set_value_with_a_line_break_is_kept_whole():
    """Not TOML of two keys, the second of which the core would drop: one string, which
    the load refuses."""
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config(SMALL_DICT, set={"traffic.load": '0.7\nsimulation.duration = "1us"'})
    assert caught.value.path == "traffic.load"
    assert overrides_from({"traffic.load": "0.7\nseed = 3"}) == [("traffic.load", '"0.7\\nseed = 3"')]
    assert toml_value("[1,\n2]") == "[1,\n2]"  # one value over two lines stays a value


def test_numpy_values_are_numbers_and_lists(simulate):
    import numpy as np

    plain = simulate(SMALL_DICT, seed=3, set={"traffic.load": 0.4, "topology.hosts": 4})
    numpy = simulate(
        SMALL_DICT | {"topology": {"type": "single_switch", "hosts": np.int64(8)}},
        seed=np.int64(3),
        set={"traffic.load": np.float64(0.4), "topology.hosts": np.int64(4)},
    )
    assert numpy.config_toml == plain.config_toml
    assert numpy.summary | {"wall_seconds": 0} == plain.summary | {"wall_seconds": 0}
    assert snarl.resolve_config(SMALL_DICT, seed=np.uint64(3), set={"traffic.load": np.float32(0.5)}) == (
        snarl.resolve_config(SMALL_DICT, seed=3, set={"traffic.load": 0.5})
    )
    assert toml_value(np.array([[1, 2], [3, 4]])) == "[[1, 2], [3, 4]]"
    assert toml_value(np.bool_(True)) == "true"


def test_missing_toml_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        snarl.run(str(tmp_path / "nowhere.toml"))
    with pytest.raises(FileNotFoundError):
        snarl.run(tmp_path / "nowhere.toml")


def test_negative_seed_is_a_config_error():
    with pytest.raises(snarl.ConfigError) as caught:
        snarl.resolve_config(SMALL_DICT, seed=-1)
    assert caught.value.path == "seed"


def test_resolve_config_writes_every_default():
    resolved = tomllib.loads(snarl.resolve_config(SMALL_DICT, seed=9))
    assert resolved["seed"] == 9
    assert {"simulation", "topology", "links", "switch", "flow_control", "routing", "nic", "traffic"} <= resolved.keys()
    # The resolved config is itself a valid config that resolves to itself.
    assert snarl.resolve_config(resolved) == snarl.resolve_config(SMALL_DICT, seed=9)


def test_lists_of_tables_survive_the_dict_route():
    config = SMALL_DICT | {
        "traffic": {
            "load": 0.5,
            "groups": [
                {"name": "victims", "count": 4, "pattern": {"type": "uniform"}},
                {"name": "aggressors", "count": 4, "pattern": {"type": "incast", "destination": 0}, "load": 0.9},
            ],
        }
    }
    resolved = tomllib.loads(snarl.resolve_config(config, set={"traffic.groups.1.load": 0.8}))
    assert [g["name"] for g in resolved["traffic"]["groups"]] == ["victims", "aggressors"]
    assert resolved["traffic"]["groups"][1]["load"] == 0.8


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.25, "0.25"),
        (float("inf"), "inf"),
        ("0.5", "0.5"),
        ("[1, 2]", "[1, 2]"),
        ("fat_tree", '"fat_tree"'),
        ("100Gbps", '"100Gbps"'),
        ('say "hi"', '"say \\"hi\\""'),
        ([1, "a", 2.5], '[1, "a", 2.5]'),
        (["0.5"], '["0.5"]'),
        ({"type": "incast", "destination": 0}, '{"type" = "incast", "destination" = 0}'),
        (Path("x/y.toml"), '"x/y.toml"'),
    ],
)
def test_override_values_are_written_as_toml(value, text):
    assert toml_value(value) == text
    tomllib.loads(f"v = {text}")


def test_overrides_from_a_dict():
    assert overrides_from({"traffic.load": 0.5, "topology.type": "fat_tree"}) == [
        ("traffic.load", "0.5"),
        ("topology.type", '"fat_tree"'),
    ]
    assert overrides_from(None) == []
    with pytest.raises(snarl.ConfigError) as caught:
        overrides_from({"traffic.load": None})
    assert caught.value.path == "traffic.load"


def test_config_text_tells_paths_from_toml(small_config):
    assert config_text(small_config) == SMALL
    assert config_text(str(small_config)) == SMALL
    assert config_text(SMALL) == SMALL
    assert config_text({"a": {"b": 1}}) == '{"a": {"b": 1}}'
    with pytest.raises(TypeError):
        config_text(42)  # type: ignore[arg-type]


DCQCN_DICT = {
    "simulation": {"duration": "400us"},
    "topology": {"type": "single_switch", "hosts": 3},
    "switch": {"speedup": 2.0, "output_buffer": "1MiB"},
    "congestion_control": {"type": "dcqcn", "rate_series": True},
    "traffic": {
        "load": 1.0,
        "message_size": "1MiB",
        "pattern": {"type": "incast", "destination": 2},
    },
}


def test_dcqcn_reports_counters_and_per_flow_rates(simulate):
    report = simulate(DCQCN_DICT)
    counters = report.summary["counters"]
    assert counters["ecn_marks"] > 0
    assert counters["rate_cuts"] > 0
    assert counters["cnps_sent"] >= counters["cnps_delivered"] > 0
    rates = report.rates
    assert list(rates.columns) == ["time", "src", "dst", "qp", "rate_gbps"]
    assert len(rates) > 0
    assert set(rates["dst"]) == {2}
    assert rates["rate_gbps"].between(0.1, 100.0).all()
    # DCQCN without [marking] marks RED style with the paper's thresholds, written out in full.
    assert report.config["marking"] == {
        "type": "red",
        "kmin": "5000B",
        "kmax": "200000B",
        "pmax": 0.01,
        "mark": "enqueue",
    }


IBCC_DICT = {
    "simulation": {"duration": "200us", "window": "20us"},
    "topology": {"type": "single_switch", "hosts": 5},
    "switch": {"speedup": 2.0},
    "congestion_control": {"type": "ibcc"},
    "traffic": {"load": 1.0, "pattern": {"type": "incast", "destination": 4}},
}


def test_ibcc_reports_its_section_and_table(simulate, tmp_path):
    report = simulate(IBCC_DICT)
    ibcc = report.summary["ibcc"]
    assert set(ibcc) == {"fecn_marks", "becns", "ccti_mean", "ccti_max", "marking_ports"}
    assert ibcc["fecn_marks"] > 0 and ibcc["becns"] > 0
    assert 0 < ibcc["ccti_max"] <= 127 and 0 < ibcc["ccti_mean"] <= ibcc["ccti_max"]
    # The four senders' packets leave the switch for host 4 on port 4: the root.
    assert (ibcc["marking_ports"][0]["switch"], ibcc["marking_ports"][0]["port"]) == (0, 4)
    table = report.ibcc
    assert "ibcc" in report.table_names and table is report.table("ibcc")
    assert list(table.columns) == ["time", "fecn_marks", "becns", "ccti_mean"]
    assert len(table) == 10 and table["time"].tolist()[:2] == [0.0, 20000.0]
    assert table["fecn_marks"].sum() == report.summary["counters"]["fecn_marks"] == ibcc["fecn_marks"]
    assert table["ccti_mean"].between(0, 127).all()
    # IB CC without [marking] marks with FECN at Table I's settings, written out in full.
    assert report.config["marking"] == {
        "type": "fecn",
        "threshold": 15,
        "marking_rate": 0,
        "packet_size": "0B",
        "victim_mask": "host_ports",
    }
    assert report.config["congestion_control"]["ccti_timer"] == 150
    report.write(tmp_path)
    assert pd.read_parquet(tmp_path / "ibcc.parquet")["becns"].tolist() == table["becns"].tolist()


def test_runs_without_congestion_control_have_no_rates(simulate):
    report = simulate(SMALL_DICT)
    assert report.rates.empty
    assert not {"ecn_marks", "fecn_marks"} & set(report.summary["counters"])
    assert "ibcc" not in report.tables
    with pytest.raises(AttributeError, match="ibcc"):
        report.ibcc  # noqa: B018 - a table the run does not have is no attribute
    assert "ibcc" not in report.summary
