"""Postigo et al., *Performance boundaries of lossless networks under endpoint
congestion* (SNTA'24): saturation (Figure 1), the throttled hotspot (Figure 2) and the
recovery after a hotspot burst (Figures 3 and 4) on the HyperX, fat-tree, Megafly and
Dragonfly of ``scenarios/endpoint-congestion/``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from validation.lab import Job, Lab, Result, Table, mean, num, window_mean

TITLE = "Endpoint congestion: Postigo et al., SNTA'24"
FABRICS = ["hyperx", "fat-tree", "megafly", "dragonfly"]
NAMES = {"hyperx": "HyperX", "fat-tree": "fat-tree", "megafly": "Megafly", "dragonfly": "Dragonfly"}
SEEDS = [1, 2, 3]
LAYOUTS = {
    "one region": {"type": "hotspot", "hotspots": 1, "among": "group"},
    "seven regions": {"type": "hotspot", "hotspots": 7, "among": "group", "regions": True},
}
# Table 3's caps below each hotspot's limit, one region and seven (as the sweep files).
CAPS = {
    "hyperx": (0.0079, 0.0588),
    "fat-tree": (0.0090, 0.0714),
    "megafly": (0.0075, 0.0555),
    "dragonfly": (0.0090, 0.0714),
}
BURSTS = [100, 500, 1000]

# The paper's figures: accepted load at offered 1.0 (Figure 1), and with the hotspot
# senders throttled, one region (Figure 2).
SATURATION = {"hyperx": 0.98, "fat-tree": 0.97, "megafly": 0.90, "dragonfly": 0.82}
THROTTLED = {"hyperx": 0.88, "fat-tree": 0.87, "megafly": 0.81, "dragonfly": 0.77}
# Figures 3 and 4 as the paper's text and plots describe them (no numbers are given).
RECOVERY = {
    ("one region", "fat-tree"): ["drops to ~0, back in ~20,000", "peaks at 0.4, then ~0.2", "below 0.1"],
    ("one region", "hyperx"): ["loses ~0.2, back in <10,000", "0.1 below steady", "~0.6"],
    ("one region", "megafly"): ["drops to ~0.2, back in ~20,000", "back", "~0.7"],
    ("one region", "dragonfly"): ["loses ~0.3, back in <10,000", "partly", "~0.5"],
    ("seven regions", "fat-tree"): ["back", "back", "0.4-0.6"],
    ("seven regions", "hyperx"): ["back, drop < 0.2", "back, drop < 0.2", "back, drop < 0.2"],
    ("seven regions", "megafly"): ["(not described)"] * 3,
    ("seven regions", "dragonfly"): ["back within 20,000 of the start"] * 2 + ["back within 20,000, 0.4 at worst"],
}


@dataclass(frozen=True)
class Timing:
    """When the hotspot bursts, how long a steady state is measured, how long after a
    burst the recovery is read (cycles)."""

    burst_at: int
    steady_until: int
    steady_from: int
    after: int
    final: int
    """Cycles after the burst at which the run ends."""


FULL = Timing(burst_at=20_000, steady_from=30_000, steady_until=60_000, after=40_000, final=140_000)
QUICK = Timing(burst_at=4_000, steady_from=5_000, steady_until=8_000, after=4_000, final=5_000)
WINDOW = 1_000


def tables(lab: Lab) -> Iterator[Table]:
    timing = lab.pick(FULL, QUICK)
    yield saturation(lab)
    steady = throttled(lab, timing)
    yield steady.table
    yield from recovery(lab, timing, steady.values)


def saturation(lab: Lab) -> Table:
    seeds = lab.pick(SEEDS, SEEDS[:1])
    short = lab.pick({}, {"simulation.duration": "6000cycles", "simulation.warmup": "3000cycles"})
    jobs = [Job(f"endpoint-congestion/uniform-{f}", short, s, {"fabric": f}) for f in FABRICS for s in seeds]
    results = lab.runs("Figure 1, uniform saturation", jobs)
    measured = f"{results[0].summary['measure_from']:,.0f}-{results[0].summary['sim_time']:,.0f}"
    table = Table(
        "Figure 1: saturation under uniform traffic",
        ["fabric", "paper", "snarl", "snarl per seed"],
        notes=[f"Accepted load at offered 1.0, measured {measured} cycles, mean of seeds {', '.join(map(str, seeds))}."],
    )
    for fabric in FABRICS:
        loads = [r.summary["accepted_load"] for r in results if r.job.values["fabric"] == fabric]
        table.rows.append([NAMES[fabric], num(SATURATION[fabric], 2), num(mean(loads)), ", ".join(num(v) for v in loads)])
    return table


@dataclass
class Steady:
    table: Table
    values: dict[tuple[str, str], float]
    """The throttled steady state by (layout, fabric): what recovery is measured against."""


def throttled(lab: Lab, timing: Timing) -> Steady:
    seeds = lab.pick(SEEDS, SEEDS[:1])
    jobs = []
    for fabric in FABRICS:
        for n, (layout, pattern) in enumerate(LAYOUTS.items()):
            overrides = {
                "traffic.phases.0.at": f"{timing.burst_at}cycles",
                "traffic.phases.0.pattern": pattern,
                "traffic.phases.1.at": f"{timing.burst_at}cycles",
                "traffic.phases.1.cap": CAPS[fabric][n],
                "simulation.duration": f"{timing.steady_until}cycles",
                **lab.pick({}, {"simulation.warmup": "2000cycles"}),
            }
            for seed in seeds:
                jobs.append(Job(f"endpoint-congestion/recovery-{fabric}", overrides, seed, {"fabric": fabric, "layout": layout}))
    results = lab.runs("Figure 2, the throttled hotspot", jobs)
    values = {}
    for result in results:
        key = (result.job.values["layout"], result.job.values["fabric"])
        values.setdefault(key, []).append(window_mean(whole_windows(result), timing.steady_from, timing.steady_until))
    steady = {key: mean(v) for key, v in values.items()}
    table = Table(
        "Figure 2: uniform plus a throttled hotspot, steady state",
        ["fabric", "paper, one region", "snarl, one region", "snarl, seven regions"],
        notes=[
            f"Accepted load of all servers at offered 1.0, the hotspot senders capped from cycle "
            f"{timing.burst_at:,} (no burst), mean over {timing.steady_from:,}-{timing.steady_until:,} cycles "
            f"and seeds {', '.join(map(str, seeds))}.",
        ],
    )
    for fabric in FABRICS:
        table.rows.append(
            [NAMES[fabric], num(THROTTLED[fabric], 2), num(steady[("one region", fabric)]), num(steady[("seven regions", fabric)])]
        )
    return Steady(table, steady)


def recovery(lab: Lab, timing: Timing, steady: dict[tuple[str, str], float]) -> Iterator[Table]:
    quick_set = {
        "traffic.phases.0.at": f"{timing.burst_at}cycles",
        "simulation.warmup": "2000cycles",
        "simulation.duration": f"{timing.burst_at + BURSTS[-1] + timing.final}cycles",
    }
    quick_axes = {"traffic.phases.1.at": [f"{timing.burst_at + BURSTS[0]}cycles"]}
    jobs = []
    for fabric in FABRICS:
        for job in lab.sweep_jobs(f"endpoint-congestion/sweep-recovery-{fabric}", quick_set, quick_axes, keep=["zip"]):
            burst = cycles(job.values["traffic.phases.1.at"]) - timing.burst_at
            layout = next(name for name, p in LAYOUTS.items() if p == job.values["traffic.phases.0.pattern"])
            jobs.append(Job(job.scenario, job.set, job.seed, {"fabric": fabric, "layout": layout, "burst": burst}))
    results = lab.runs("Figures 3 and 4, recovery after a burst", jobs)
    seeds = sorted({r.job.seed for r in results})
    for figure, layout in [(3, "one region"), (4, "seven regions")]:
        table = Table(
            f"Figure {figure}: recovery after a hotspot burst, {layout}",
            ["fabric", "burst", "paper", "trough", "back after", f"+{timing.after:,}", f"+{timing.final:,}"],
            notes=[
                f"Accepted load of all servers per {WINDOW:,}-cycle window; the burst starts at cycle "
                f"{timing.burst_at:,}. Trough: the lowest window from the burst on. Back after: cycles from the "
                "cap to the first window after the trough within 5% of the throttled steady state (Figure 2), "
                f"per seed ({', '.join(map(str, seeds))}; '-': not by the end; 'no drop': never below it). "
                "+N: the mean of the last "
                f"{WINDOW * 10 if not lab.quick else WINDOW:,} cycles up to N cycles after the burst. "
                "Means of the seeds.",
            ],
        )
        for fabric in FABRICS:
            for n, burst in enumerate(sorted({r.job.values["burst"] for r in results})):
                runs = [
                    r for r in results if r.job.values["fabric"] == fabric and r.job.values["layout"] == layout and r.job.values["burst"] == burst
                ]
                if not runs:
                    continue
                figures = [after_burst(r, timing, burst, steady[(layout, fabric)], tail=lab.pick(10 * WINDOW, WINDOW)) for r in runs]
                paper = RECOVERY[(layout, fabric)][BURSTS.index(burst)] if burst in BURSTS else ""
                table.rows.append(
                    [
                        NAMES[fabric],
                        f"{burst:,}",
                        paper,
                        num(mean(f.trough for f in figures)),
                        " / ".join(back_text(f.back) for f in figures),
                        num(mean(f.at_after for f in figures)),
                        num(mean(f.at_final for f in figures)),
                    ]
                )
        yield table


@dataclass
class AfterBurst:
    trough: float
    back: float | None
    at_after: float
    at_final: float


def after_burst(result: Result, timing: Timing, burst: int, stationary: float, tail: int) -> AfterBurst:
    """What a burst did to the accepted load of all servers (see :func:`recovery_of`)."""
    series = whole_windows(result)
    cap = timing.burst_at + burst
    trough, back = recovery_of(series, timing.burst_at, cap, stationary)
    return AfterBurst(
        trough,
        back,
        window_mean(series, cap + timing.after - tail, cap + timing.after),
        window_mean(series, cap + timing.final - tail, cap + timing.final),
    )


def recovery_of(series: pd.Series, burst_at: float, cap: float, stationary: float) -> tuple[float, float | None]:
    """The lowest window from the burst on, and the cycles from the cap until the end of
    the first window after that trough back within 5% of ``stationary`` (None: never;
    0: the burst never took it below, so the lowest window is noise, not a trough)."""
    after = series[series.index >= burst_at]
    if after.min() >= 0.95 * stationary:
        return float(after.min()), 0.0
    trough_at = after.idxmin()
    back = after[(after.index >= trough_at) & (after.index >= cap) & (after >= 0.95 * stationary)]
    return float(after.min()), (float(back.index[0]) + WINDOW - cap if len(back) else None)


def back_text(back: float | None) -> str:
    if back is None:
        return "-"
    return "no drop" if back == 0 else f"{back:,.0f}"


def whole_windows(result: Result) -> pd.Series:
    """The accepted load of all servers per window, without a last window cut short."""
    series = result.series("all")
    return series[series.index + WINDOW <= result.summary["sim_time"]]


def cycles(text: str) -> int:
    assert text.endswith("cycles"), text
    return int(text.removesuffix("cycles"))
