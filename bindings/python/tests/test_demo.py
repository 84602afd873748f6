"""The flagship sweep of `make demo` (scenarios/demo): valid, the paper's parameters on a
smaller fat-tree, and throttled below the theoretical limit of its hotspot senders."""

from __future__ import annotations

import re

import snarl
from conftest import REPO
from snarl.sweep import load_spec, resolve_points

DEMO = REPO / "scenarios" / "demo" / "endpoint-congestion.toml"


def without_description(resolved: str) -> str:
    return re.sub(r'(?sm)^description = """.*?"""\n', "", resolved)


def without_region_size(resolved: str) -> str:
    """The hotspot region's size aside: the paper's fabrics have Table 3's (`count`), the
    demos 10% of theirs (`fraction`)."""
    return re.sub(r"(?m)^(count|fraction) = .*\n", "", without_description(resolved))


def test_demo_sweep_is_valid_and_small():
    spec = load_spec(DEMO)
    points = resolve_points(spec)
    assert len(points) == 120
    assert spec.base == REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml"
    assert spec.axes["traffic.groups.0.cap"] == [1.0, 0.0833]


def test_demo_base_is_the_paper_scenario_on_a_two_level_fat_tree():
    paper = snarl.resolve_config(
        REPO / "scenarios" / "endpoint-congestion" / "hotspot-fat-tree.toml", set={"topology.levels": 2}
    )
    demo = snarl.resolve_config(REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml")
    assert without_region_size(demo) == without_region_size(paper)
    assert "\ncount = 105\n" in paper and "\nfraction = 0.1\n" in demo


def test_demo_throttle_is_below_the_hotspot_senders_fair_share(simulate):
    report = simulate(
        REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml",
        set={"simulation.duration": "2000cycles", "simulation.warmup": "0cycles"},
    )
    hosts = report.summary["groups"]["hotspot"]["hosts"]
    assert hosts == 13  # 10% of 128, interleaved
    senders = hosts - 1  # everyone but the hotspot itself
    cap = load_spec(DEMO).axes["traffic.groups.0.cap"][1]
    assert 0.99 / senders < cap < 1 / senders


DRAGONFLY = REPO / "scenarios" / "demo" / "endpoint-congestion-dragonfly.toml"


def test_dragonfly_demo_is_the_paper_scenario_on_a_smaller_dragonfly(simulate):
    spec = load_spec(DRAGONFLY)
    assert len(resolve_points(spec)) == 120
    small = {
        "topology.switches_per_group": 4,
        "topology.global_links_per_switch": 2,
        "topology.groups": 9,
    }
    paper = snarl.resolve_config(REPO / "scenarios" / "endpoint-congestion" / "hotspot-dragonfly.toml", set=small)
    assert without_region_size(snarl.resolve_config(spec.base)) == without_region_size(paper)
    report = simulate(spec.base, set={"simulation.duration": "2000cycles", "simulation.warmup": "0cycles"})
    senders = report.summary["groups"]["hotspot"]["hosts"] - 1
    assert senders == 13  # 10% of 144 hosts, but the hotspot itself
    cap = spec.axes["traffic.groups.0.cap"][1]
    assert 0.99 / senders < cap < 1 / senders
