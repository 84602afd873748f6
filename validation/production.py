"""De Sensi et al., *Characterizing congestion in InfiniBand, Slingshot and Ethernet
fabrics*: collectives alone on HAICGU and Nanjing (Figure 3), Nanjing's AlltoAll victim
(Figure 4), the victim/aggressor heatmaps of steady
congestion (Figure 5) and of bursts (Figure 6), and CRESCO8's AlltoAll victims, on the
fabric presets of ``scenarios/presets/``, run by the sweeps of
``scenarios/victim-aggressor/``. The study prints no cell values: its words stand
beside snarl's medians over placements."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence

from validation.lab import Job, Lab, Result, Table, num

TITLE = "Congestion in production fabrics: De Sensi et al., the victim/aggressor method"
PRESETS = {"cresco8": "CRESCO8-like", "leonardo": "Leonardo-like", "lumi": "LUMI-like"}
AGGRESSORS = {"alltoall": "AlltoAll", "incast": "Incast"}

NODES = "workload.allocation.nodes"
SIZE = "workload.jobs.0.size"
AGGRESSOR = "workload.jobs.1.collective"
LENGTH = "workload.jobs.1.burst.length"
PAUSE = "workload.jobs.1.burst.pause"
RATIO = "jobs.victim.perf_ratio"

# Section V, what the study says of each heatmap of Figure 5.
STEADY = {
    ("cresco8", "alltoall"): "close to 1 up to 32 nodes; degraded from 64 on, as low as 0.45 for a few sizes",
    ("cresco8", "incast"): "similar to the AlltoAll; down to 0.60",
    ("leonardo", "alltoall"): "about 0.95-1.05 at every scale; 0.82-0.85 in places at 64 nodes",
    ("leonardo", "incast"): "8 nodes unaffected; degraded from 16; about 0.2 for several sizes at 32-64 nodes",
    ("lumi", "alltoall"): "within 5% of the baseline at every scale",
    ("lumi", "incast"): "close to 1, within a few percent",
}
# Section VI, what the study says of each grid of Figure 6 (64 nodes).
BURSTY = {
    ("cresco8", "alltoall"): "down to 0.70, as steady congestion at 64 nodes",
    ("cresco8", "incast"): "many configurations about 0.08",
    ("leonardo", "alltoall"): "close to 1 for small and medium sizes; slowdowns only with short pauses",
    ("leonardo", "incast"): "harmed with short pauses whatever the length; long pauses about 0.85 on short bursts, lower on long ones",
    ("lumi", "alltoall"): "close to 1 almost everywhere",
    ("lumi", "incast"): "close to 1 almost everywhere",
}


def tables(lab: Lab) -> Iterator[Table]:
    yield uncongested(lab)
    yield nanjing(lab)
    for preset in PRESETS:
        yield from steady(lab, preset)
    yield alltoall_victims(lab)
    for preset in PRESETS:
        yield from bursty(lab, preset)
    for preset in PRESETS:
        yield from bursty(lab, preset, scaled=True)


def swept(results: Sequence[Result], key: str) -> list:
    """The values ``key`` takes over ``results``, in the sweep's order."""
    return list(dict.fromkeys(r.job.values[key] for r in results))


def medians(results: Sequence[Result], *keys: str) -> dict[tuple, float]:
    """The median perf ratio over the placements (seeds) of each combination of ``keys``."""
    cells: dict[tuple, list[float]] = defaultdict(list)
    for r in results:
        cells[tuple(r.job.values[k] for k in keys)].append(r.get(RATIO))
    return {cell: statistics.median(values) for cell, values in cells.items()}


# Figure 3's systems: scenario (under victim-aggressor/) and name.
ALONE = {"haicgu-roce-alone": "HAICGU RoCE", "haicgu-ib-alone": "HAICGU InfiniBand", "nanjing-alone": "Nanjing"}
COLLECTIVE = "workload.jobs.0.collective"


def uncongested(lab: Lab) -> Table:
    """Figure 3: AlltoAll and AllGather alone on every node, over the vector size."""
    sizes = lab.pick(["256KiB", "1MiB", "4MiB", "16MiB", "64MiB"], ["1MiB"])
    jobs = [
        Job(f"victim-aggressor/{scenario}", {COLLECTIVE: collective, SIZE: size}, None, {"system": name, COLLECTIVE: collective, SIZE: size})
        for scenario, name in ALONE.items()
        for collective in ("alltoall", "allgather")
        for size in sizes
    ]
    results = {(r.job.values["system"], r.job.values[COLLECTIVE], r.job.values[SIZE]): r for r in lab.runs("Figure 3", jobs)}
    columns = [(name, c) for name in ALONE.values() for c in ("alltoall", "allgather")]
    table = Table(
        "Figure 3, HAICGU and Nanjing: collectives alone",
        ["vector", *(f"{name}, {c}" for name, c in columns)],
        notes=[
            "The study: on HAICGU's RoCE (CE8850) AlltoAll and AllGather cannot hold their throughput above"
            " 16 MiB (a recurring sawtooth it lays on the congestion control); InfiniBand on the same nodes and"
            " Nanjing's CE9855 are stable.",
            "snarl: busbw in Gb/s over the iterations after the warm-up, and in brackets the spread of their"
            " times (slowest / fastest - 1, %). Sizes: per peer for AlltoAll, the whole vector for AllGather;"
            " all nodes of each system (10 on HAICGU, 8 on Nanjing), seed 1.",
        ],
    )
    for size in sizes:
        cells = []
        for name, c in columns:
            job = results[(name, c, size)].get("jobs.alone")
            cells.append(f"{num(8 * job['busbw'], 0)} ({num(100 * (job['time_max'] / job['time_min'] - 1), 0)}%)")
        table.rows.append([size, *cells])
    return table


def nanjing(lab: Lab) -> Table:
    """Figure 4: the AlltoAll victim's bandwidth alone and beside an AlltoAll, ECMP."""
    jobs = lab.sweep_jobs("victim-aggressor/sweep-nanjing")
    results = lab.runs("Figure 4, Nanjing-like", jobs)
    sizes = swept(results, SIZE)
    table = Table(
        "Figure 4, Nanjing-like: an AlltoAll victim beside an AlltoAll, ECMP (without NSLB)",
        ["message per peer", "study, alone", "study, beside", "snarl, alone", "snarl, beside", "perf_ratio"],
        notes=[
            "Bandwidth: the victim's busbw (NCCL-tests' formula) in Gb/s, mean of the seeds (ECMP's hash salt);"
            " alone = busbw / perf_ratio. The study gives the peak only: 180 Gb/s alone, 120 beside without NSLB"
            " (180 with it; NSLB is not yet a routing of snarl's)."
        ],
    )
    for size in sizes:
        runs = [r for r in results if r.job.values[SIZE] == size]
        beside = statistics.mean(8 * r.get("jobs.victim.busbw") for r in runs)
        alone = statistics.mean(8 * r.get("jobs.victim.busbw") / r.get(RATIO) for r in runs)
        ratio = statistics.mean(r.get(RATIO) for r in runs)
        peak = size == sizes[-1]
        table.rows.append([size, "180" if peak else "", "120" if peak else "", num(alone, 0), num(beside, 0), num(ratio, 2)])
    return table


def steady(lab: Lab, preset: str) -> Iterator[Table]:
    jobs = lab.sweep_jobs(f"victim-aggressor/sweep-{preset}-steady", quick_axes={NODES: [8]}, keep=[AGGRESSOR])
    results = lab.runs(f"Figure 5, {PRESETS[preset]}", jobs)
    cell = medians(results, AGGRESSOR, SIZE, NODES)
    nodes = swept(results, NODES)
    sizes = swept(results, SIZE)
    seeds = len({r.job.seed for r in results})
    for aggressor in swept(results, AGGRESSOR):
        table = Table(
            f"Figure 5, {PRESETS[preset]}: AllGather beside a steady {AGGRESSORS[aggressor]}",
            ["victim vector", *(f"{n} nodes" for n in nodes)],
            notes=[
                f"The study: {STEADY[(preset, aggressor)]}.",
                f"snarl: the victim's perf_ratio (uncongested / congested time), median of {seeds} placement(s);"
                " the lowest row is each column's lowest cell.",
            ],
        )
        for size in sizes:
            table.rows.append([size, *(num(cell[(aggressor, size, n)], 2) for n in nodes)])
        table.rows.append(["lowest", *(num(min(cell[(aggressor, s, n)] for s in sizes), 2) for n in nodes)])
        yield table


def alltoall_victims(lab: Lab) -> Table:
    """Section V-A's AlltoAll victims on CRESCO8 (not drawn in the study)."""
    jobs = lab.sweep_jobs("victim-aggressor/sweep-cresco8-alltoall-victim", quick_axes={NODES: [64]}, keep=[AGGRESSOR])
    results = lab.runs("Section V-A, AlltoAll victims, CRESCO8-like", jobs)
    cell = medians(results, AGGRESSOR, SIZE, NODES)
    nodes = swept(results, NODES)
    sizes = swept(results, SIZE)
    aggressors = swept(results, AGGRESSOR)
    seeds = len({r.job.seed for r in results})
    table = Table(
        "Section V-A, CRESCO8-like: an AlltoAll victim beside a steady AlltoAll or Incast",
        ["message per peer", *(f"{AGGRESSORS[a]}, {n} nodes" for a in aggressors for n in nodes)],
        notes=[
            "The study: slowdowns up to 5x beside an AlltoAll and up to 25x beside an Incast (perf_ratio 0.2 and 0.04).",
            f"snarl: median perf_ratio of {seeds} placement(s).",
        ],
    )
    for size in sizes:
        table.rows.append([size, *(num(cell[(a, size, n)], 2) for a in aggressors for n in nodes)])
    return table


def bursty(lab: Lab, preset: str, scaled: bool = False) -> Iterator[Table]:
    """Figure 6 at the study's scale (bursts of 1-100 ms of 2 MiB collectives), or, with
    ``scaled``, the grid 100 times shorter with the aggressor's messages shrunk with it."""
    sweep, what = (f"sweep-{preset}-bursty-fast", "Figure 6 scaled down in time") if scaled else (f"sweep-{preset}-bursty", "Figure 6")
    # Shortened: a tenth of the smallest vector's iterations, which beside the study's
    # 2 MiB AlltoAll took a minute on one core.
    quick_set = {} if scaled else {"workload.jobs.0.iterations": 100, "workload.jobs.0.warmup": 10}
    jobs = lab.sweep_jobs(f"victim-aggressor/{sweep}", quick_set=quick_set, keep=[AGGRESSOR])
    results = lab.runs(f"{what}, {PRESETS[preset]}", jobs)
    cell = medians(results, AGGRESSOR, SIZE, LENGTH, PAUSE)
    sizes = swept(results, SIZE)
    lengths = swept(results, LENGTH)
    pauses = swept(results, PAUSE)
    seeds = len({r.job.seed for r in results})
    scale = (
        "bursts and pauses 100 times shorter than the study's, the aggressor's messages with them (20 KiB)"
        if scaled
        else "the study's bursts, pauses and 2 MiB aggressor messages"
    )
    for aggressor in swept(results, AGGRESSOR):
        table = Table(
            f"{what}, {PRESETS[preset]}: AllGather beside a bursty {AGGRESSORS[aggressor]}, 64 nodes",
            ["victim vector, burst", *(f"pause {p}" for p in pauses)],
            notes=[
                f"The study (bursts of 1-100 ms, pauses of 1 us-10 ms): {BURSTY[(preset, aggressor)]}.",
                f"snarl: {scale}; median perf_ratio of {seeds} placement(s).",
            ],
        )
        for size in sizes:
            for length in lengths:
                table.rows.append([f"{size}, {length}", *(num(cell[(aggressor, size, length, p)], 2) for p in pauses)])
        yield table
