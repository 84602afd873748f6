"""The NCCL spine-leaf test report (Asterfusion, IXIA AresONE traffic generator): NCCL
collectives back to back (Section 3.1), through one switch (3.2), across two leaves and
a spine under each load balancing (3.3) and oversubscribed (3.4), on the scenarios of
``scenarios/nccl-spine-leaf/``; ECMP over seeds against the balls-into-bins expectation
of its hashes (``sweep-ecmp-seeds.toml``); the bytes each link carried under ECMP and the
per-QP planner; and the characterization study's Nanjing AlltoAll with and without an
NSLB-like routing. The report moves 8 TiB per test; snarl's runs move 256 MiB (2 to
16 GiB back to back), so its busbw and ideal % compare, its times and FCTs do not."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from validation.lab import REPO, Job, Lab, Result, Table, num

TITLE = "NCCL over RoCE: the NCCL spine-leaf test report"
FOLDER = "nccl-spine-leaf"
SIZE = "workload.jobs.0.size"
QPS = "workload.jobs.0.qps"
HASH = "routing.hash"
JOB = "jobs.nccl"
GIB = 2**30

# Tables 3-1 to 3-3: (scenario, what) -> the report's busbw (GB/s) and ideal %.
SINGLE = {
    ("back-to-back-2x1-allreduce-bidir", "back to back, 2x1, bidir ring"): (47.84, 97.14),
    ("single-switch-2x8-allreduce-uni", "one switch, 2x8, unidir ring"): (193.76, 97.07),
    ("single-switch-2x8-allreduce-bidir", "one switch, 2x8, bidir ring"): (391.75, 98.12),
    ("single-switch-2x8-allreduce-hd", "one switch, 2x8, halving doubling"): (88.71, 97.72),
    ("single-switch-2x8-alltoall-pxn", "one switch, 2x8, AlltoAll PXN"): (91.52, 98.16),
    ("single-switch-4x4-allreduce-uni", "one switch, 4x4, unidir ring"): (96.89, 97.26),
    ("single-switch-4x4-allreduce-bidir", "one switch, 4x4, bidir ring"): (193.68, 97.21),
    ("single-switch-4x4-allreduce-hd", "one switch, 4x4, halving doubling"): (60.10, 98.01),
    ("single-switch-4x4-alltoall-pxn", "one switch, 4x4, AlltoAll PXN"): (60.79, 98.01),
}
# Table 3-1 and Picture 3-1: vector (GiB) -> completion time (ms), busbw (GB/s).
BACK_TO_BACK = {2: (44.89, 47.84), 4: (89.26, 48.12), 8: (177.99, 48.26), 16: (355.31, 48.35)}
# Tables 3-4 to 3-6, 3-9: the 2x8 bidirectional ring across the spine-leaf, by load
# balancing: its name and the report's busbw and ideal % (None where it ran none).
SPINE_LEAF = {
    "ecmp5": ("ECMP 5-tuple, 16 QPs", (337.65, 84.57)),
    "qp8": ("ECMP QP hash, 8 QPs", (332.5, 83.28)),
    "qp16": ("ECMP QP hash, 16 QPs", (351.54, 88.05)),
    "flowlet": ("flowlets (10 us gap)", None),
    "adaptive": ("adaptive (INT-driven), per packet", (386.50, 96.81)),
    "spray": ("random packet spraying", None),
    "planner": ("per-QP path planner (NSLB-like)", None),
}
OVERSUBSCRIPTION = {"1to1": (1.0, 386.50, 96.81), "1to0.75": (0.75, 292.66, 73.31), "1to0.5": (0.5, 193.39, 48.44)}
# The report's P95 FCT reductions of adaptive routing (Section 4): against the 5-tuple
# hash and the QP hash (16 QPs: 1,421.533 ms against 1,599.152 and 1,523.348).
P95_CUT = {"ecmp5": 11.13, "qp16": 6.70}
# The sweep's cases: (hash, QPs) -> name, and the report's efficiency (its spine-leaf
# busbw over its single-switch busbw, 391.75 GB/s).
ECMP_CASES = {("five_tuple", 16): "ecmp5", ("qp", 8): "qp8", ("qp", 16): "qp16"}
# Nanjing (the characterization study, Figure 4): the victim's peak, Gb/s.
NANJING = {"ecmp": ("ECMP (without NSLB)", 120), "planner": ("per-QP planner (NSLB-like)", 180)}

# The links of the 2x8 spine-leaf (scenarios/presets/nccl-spine-leaf.toml): leaves are
# switches 0 and 1 (ports 0-7 their hosts, 8-11 their uplinks), the spine switch 2 (ports
# 0-3 down to leaf 0, 4-7 down to leaf 1). In the order a packet from leaf 0 to leaf 1
# crosses them, then back.
LINKS = [
    ("leaf 0 up", [(0, 8 + i) for i in range(4)]),
    ("spine down to leaf 1", [(2, 4 + i) for i in range(4)]),
    ("leaf 1 up", [(1, 8 + i) for i in range(4)]),
    ("spine down to leaf 0", [(2, i) for i in range(4)]),
]


def tables(lab: Lab) -> Iterator[Table]:
    yield single_switch(lab)
    yield back_to_back(lab)
    yield spine_leaf(lab)
    yield ecmp_seeds(lab)
    yield link_queues(lab)
    yield nanjing(lab)


def job(r: Result, key: str) -> float | None:
    return r.get(f"{JOB}.{key}")


def size_of(lab: Lab) -> dict[str, str]:
    """The vector of the runs of the spine-leaf and the single switch: each scenario's
    own (256 MiB), or 8 MiB in the shortened check."""
    return lab.pick({}, {SIZE: "8MiB"})


def figure_path(lab: Lab, name: str) -> Path:
    lab.out.mkdir(parents=True, exist_ok=True)
    return lab.out / name


def shown(path: Path) -> str:
    """A path as the notes name it: relative to the repository where it lies inside."""
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def single_switch(lab: Lab) -> Table:
    """Tables 3-1 (2 GiB), 3-2 and 3-3: busbw and ideal % alone on one switch."""
    fixed = {SIZE: lab.pick("2GiB", "8MiB")}
    jobs = [
        Job(f"{FOLDER}/{scenario}", fixed if scenario.startswith("back") else size_of(lab), None, {"case": what})
        for scenario, what in SINGLE
    ]
    results = lab.runs("Tables 3-1 to 3-3, back to back and one switch", jobs)
    table = Table(
        "Tables 3-1 to 3-3: single switch and back to back",
        ["case", "report busbw (GB/s)", "snarl busbw (GB/s)", "report ideal %", "snarl ideal %"],
        notes=[
            "Ideal %: busbw against k NICs' goodput (49.25 GB/s per 400 GbE NIC: 4 KiB payloads and 62 B of"
            " RoCEv2 headers; k by the algorithm, as the report counts it). The report's tests move 8 TiB through one switch and 2 GiB back to back; snarl's"
            f" {lab.pick('256 MiB', '8 MiB')} through one switch and {lab.pick('2 GiB', '8 MiB')} back to back"
            " (the report's 2 GiB row), seed 1.",
        ],
    )
    for r, ((_, what), (busbw, ideal)) in zip(results, SINGLE.items()):
        table.rows.append([what, num(busbw, 2), num(job(r, "busbw_gbps"), 2), num(ideal, 2), num(job(r, "ideal_pct"), 2)])
    return table


def fit(sizes: Sequence[float], times_ms: Sequence[float]) -> tuple[float, float]:
    """The least-squares fit T = a + S / r of times (ms) over sizes (bytes): a in ms, r in
    GB/s."""
    slope, intercept = np.polyfit(np.asarray(sizes, float), np.asarray(times_ms, float), 1)
    return float(intercept), float(1 / (slope * 1e6))


def back_to_back(lab: Lab) -> Table:
    """Table 3-1 and Picture 3-1: the time of the bidirectional ring over the vector."""
    sizes = lab.pick({2: "2GiB", 4: "4GiB", 8: "8GiB", 16: "16GiB"}, {0.25: "256MiB", 0.5: "512MiB", 1: "1GiB"})
    jobs = [Job(f"{FOLDER}/back-to-back-2x1-allreduce-bidir", {SIZE: text}, None, {"gib": gib}) for gib, text in sizes.items()]
    results = lab.runs("Table 3-1, back to back over the vector", jobs)
    table = Table(
        "Table 3-1: back to back, 2 nodes x 1 GPU, time against the vector",
        ["vector", "report time (ms)", "snarl time (ms)", "report busbw (GB/s)", "snarl busbw (GB/s)"],
    )
    for r in results:
        gib = r.job.values["gib"]
        time, busbw = BACK_TO_BACK.get(gib, (None, None))
        table.rows.append([sizes[gib], num(time, 2), num(job(r, "time_ns") / 1e6, 2), num(busbw, 2), num(job(r, "busbw_gbps"), 2)])
    a, rate = fit([g * GIB for g in BACK_TO_BACK], [t for t, _ in BACK_TO_BACK.values()])
    ours_a, ours_rate = fit([r.job.values["gib"] * GIB for r in results], [job(r, "time_ns") / 1e6 for r in results])
    table.rows.append(["fit T = a + S / r", f"a {num(a, 2)} ms, r {num(rate, 2)} GB/s", f"a {num(ours_a, 2)} ms, r {num(ours_rate, 2)} GB/s", "", ""])
    table.notes.append(
        "The time of one collective after the warm-up (NCCL-tests' formula: busbw = algbw = S / T for two"
        " ranks); the fit is least squares over the rows above it. The scenario keeps the NCCL engine's fixed"
        " overhead of 570 us per collective."
    )
    return table


def counters(r: Result) -> list[str]:
    """PFC pause frames received, ECN marks, packets retransmitted (the report's PFC Rx,
    ECN CE Rx, Frames ReTx)."""
    return [
        num(r.get("pfc.pause_frames_received") or 0, 0),
        num(r.get("counters.ecn_marks") or 0, 0),
        num(r.get("receiver.retransmitted_packets") or 0, 0),
    ]


def spine_leaf(lab: Lab) -> Table:
    """Tables 3-4 to 3-6 and 3-9: the 2x8 bidirectional ring across two leaves and a spine."""
    jobs = [Job(f"{FOLDER}/spine-leaf-2x8-allreduce-bidir-{lb}", size_of(lab), None, {"lb": lb}) for lb in SPINE_LEAF]
    jobs += [Job(f"{FOLDER}/spine-leaf-2x8-allreduce-bidir-oversub-{o}", size_of(lab), None, {"oversub": o}) for o in OVERSUBSCRIPTION]
    results = lab.runs("Tables 3-4 to 3-9, spine-leaf", jobs)
    table = Table(
        "Tables 3-4 to 3-9: spine-leaf, 2 nodes x 8 GPUs, bidirectional-ring AllReduce",
        [
            "load balancing",
            "report busbw (GB/s)",
            "snarl busbw (GB/s)",
            "report ideal %",
            "snarl ideal %",
            "FCT p50 / p95 (ms)",
            "PFC Rx",
            "ECN marks",
            "ReTx",
        ],
    )
    by_lb = {}
    for r in results:
        if "lb" in r.job.values:
            lb = r.job.values["lb"]
            by_lb[lb] = r
            name, report = SPINE_LEAF[lb]
        else:
            share, *report = OVERSUBSCRIPTION[r.job.values["oversub"]]
            name = f"adaptive, oversubscribed 1:{share:g}"
        busbw, ideal = report or (None, None)
        fct = f"{num(job(r, 'fct_p50_ns') / 1e6, 3)} / {num(job(r, 'fct_p95_ns') / 1e6, 3)}"
        table.rows.append([name, num(busbw, 2), num(job(r, "busbw_gbps"), 2), num(ideal, 2), num(job(r, "ideal_pct"), 2), fct, *counters(r)])
    over = {r.job.values["oversub"]: r for r in results if "oversub" in r.job.values}
    usage = ", ".join(
        f"1:{share:g} {num(ideal / share, 2)}% / {num(job(over[o], 'ideal_pct') / share, 2)}%"
        for o, (share, _, ideal) in OVERSUBSCRIPTION.items()
    )
    adaptive = job(by_lb["adaptive"], "fct_p95_ns")
    cuts = "; ".join(
        f"against {SPINE_LEAF[lb][0]}: report {num(cut, 2)}%, snarl {num(100 * (1 - adaptive / job(by_lb[lb], 'fct_p95_ns')), 2)}%"
        for lb, cut in P95_CUT.items()
    )
    table.notes += [
        f"Seed 1, {lab.pick('256 MiB', '8 MiB')} per collective. The 5-tuple hash runs 16 QPs per connection, as the"
        " report's remark says.",
        "Counters over the whole run: PFC pause frames received, packets marked ECN CE, packets retransmitted"
        " (go-back-N at the in-order receivers, which the flowlets' reordering costs; the out-of-order"
        " receivers of spray and adaptive retransmit none).",
        f"Oversubscribed, ideal % over the uplinks' share (the report's actual network utilisation, report / snarl): {usage}.",
        f"P95 FCT cut by adaptive routing ({cuts}).",
    ]
    return table


def balls_into_bins(qps: int, groups: int = 4, draws: int = 20_000, seed: int = 1) -> tuple[float, float, float]:
    """ECMP's expected efficiency on the 2x8 spine-leaf: F = 8 x qps flows per direction,
    ``groups`` groups of 4 links (4: each direction's leaf uplinks and spine links down,
    hashed independently; 1: one hash stage) each taking all F flows of its direction
    uniformly at random; efficiency min(1, (F / 4) / the most flows on one link). Returns
    the Monte Carlo mean and the 5% and 95% quantiles."""
    flows = 8 * qps
    rng = np.random.default_rng(seed)
    loads = rng.multinomial(flows, [0.25] * 4, size=(draws, groups))
    efficiency = np.minimum(1.0, flows / 4 / loads.max(axis=(1, 2)))
    low, high = np.quantile(efficiency, [0.05, 0.95])
    return float(efficiency.mean()), float(low), float(high)


def ecmp_seeds(lab: Lab) -> Table:
    """ECMP over 20 seeds (draws of the QP numbers), against one switch and balls into bins."""
    jobs = lab.sweep_jobs(f"{FOLDER}/sweep-ecmp-seeds", quick_set=size_of(lab), quick_axes={"seed": [1, 2]}, keep=["zip"])
    results = lab.runs("ECMP over seeds", jobs)
    single = lab.runs("ECMP over seeds, the single switch", [Job(f"{FOLDER}/single-switch-2x8-allreduce-bidir", size_of(lab))])[0]
    reference = job(single, "busbw_gbps")
    seeds = len({r.job.seed for r in results})
    cases: dict[str, list[float]] = {}
    for r in results:
        case = ECMP_CASES[(r.job.values[HASH], r.job.values[QPS])]
        cases.setdefault(case, []).append(job(r, "busbw_gbps") / reference)
    table = Table(
        f"ECMP over {seeds} seeds against balls into bins",
        [
            "case",
            "QPs",
            "snarl mean",
            "snarl min",
            "snarl max",
            "balls into bins, mean",
            "5-95% band",
            "one stage, mean",
            "report",
        ],
    )
    expected = {}
    for (_, qps), case in ECMP_CASES.items():
        values = cases[case]
        mean, low, high = balls_into_bins(qps)
        one = balls_into_bins(qps, groups=1)[0]
        expected[case] = (mean, low, high, one)
        report = SPINE_LEAF[case][1][0] / SINGLE[("single-switch-2x8-allreduce-bidir", "one switch, 2x8, bidir ring")][0]
        table.rows.append(
            [
                SPINE_LEAF[case][0],
                str(qps),
                num(statistics.mean(values)),
                num(min(values)),
                num(max(values)),
                num(mean),
                f"{num(low)}-{num(high)}",
                num(one),
                num(report),
            ]
        )
    path = figure_path(lab, "nccl-ecmp-efficiency.png")
    efficiency_figure(cases, expected, path)
    table.notes += [
        f"Efficiency: busbw over the single switch's ({num(reference, 2)} GB/s, the same"
        f" {lab.pick('256 MiB', '8 MiB')} vector); the report's: its spine-leaf busbw over its single-switch 391.75 GB/s.",
        "Balls into bins (20,000 draws): F = 8 x QPs flows per direction, hashed twice per direction (the leaf's"
        " 4 uplinks, the spine's 4 links down), so 4 groups of 4 links, each taking all F flows of its direction"
        " uniformly at random; efficiency = min(1, (F / 4) / the most flows on any of the 16 links). One stage:"
        " a single group of 4 links, the report's reasoning.",
        f"Figure: {shown(path)}.",
    ]
    return table


def efficiency_figure(cases: dict[str, list[float]], expected: dict[str, tuple[float, float, float, float]], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    ax = fig.subplots()
    names = list(cases)
    rng = np.random.default_rng(0)
    single = SINGLE[("single-switch-2x8-allreduce-bidir", "one switch, 2x8, bidir ring")][0]
    for x, case in enumerate(names):
        mean, low, high, one = expected[case]
        band = ax.fill_between([x - 0.4, x + 0.4], low, high, color="tab:blue", alpha=0.15, linewidth=0)
        (line,) = ax.plot([x - 0.4, x + 0.4], [mean, mean], color="tab:blue", linewidth=1.5)
        (stage,) = ax.plot([x - 0.4, x + 0.4], [one, one], color="tab:gray", linestyle="--", linewidth=1)
        values = cases[case]
        ax.boxplot([values], positions=[x], widths=0.3, showfliers=False, medianprops={"color": "black"})
        dots = ax.scatter(x + rng.uniform(-0.12, 0.12, len(values)), values, s=14, color="tab:orange", zorder=3)
        report = ax.scatter([x], [SPINE_LEAF[case][1][0] / single], marker="*", s=160, color="tab:red", zorder=4)
    ax.set_xticks(range(len(names)), [SPINE_LEAF[c][0] for c in names])
    ax.set_ylabel("busbw / single switch busbw")
    ax.set_title("ECMP on the 2x8 spine-leaf: seeds against balls into bins")
    ax.legend(
        [dots, line, band, stage, report],
        ["snarl, one seed", "balls into bins, mean", "balls into bins, 5-95%", "one stage, mean", "report"],
        loc="lower right",
        fontsize=8,
    )
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=110)


def probes() -> list[dict[str, int]]:
    return [{"switch": s, "port": p} for _, links in LINKS for s, p in links]


def link_queues(lab: Lab) -> Table:
    """The bytes each leaf-spine link carried and its egress queue, ECMP on the 5-tuple
    against the planner, seed 1 (queue probes: `sent_bytes`, `mean_bytes`)."""
    overrides = {**size_of(lab), "observe.queues": probes()}
    jobs = [Job(f"{FOLDER}/spine-leaf-2x8-allreduce-bidir-{lb}", overrides, 1, {"lb": lb}) for lb in ("ecmp5", "planner")]
    results = {r.job.values["lb"]: r for r in lab.runs("Link loads, ECMP and the planner", jobs)}
    queues = {lb: {(q["switch"], q["port"]): q for q in r.get("queues")} for lb, r in results.items()}
    table = Table(
        "Leaf-spine links under ECMP (5-tuple, 16 QPs) and the planner: bytes carried and queues, seed 1",
        ["link", "ECMP GB", "ECMP share", "ECMP mean queue (KiB)", "planner GB", "planner share", "planner mean queue (KiB)"],
    )
    for name, links in LINKS:
        totals = {lb: sum(queues[lb][link]["sent_bytes"] for link in links) for lb in ("ecmp5", "planner")}
        for i, link in enumerate(links):
            cells = []
            for lb in ("ecmp5", "planner"):
                q = queues[lb][link]
                share = q["sent_bytes"] / totals[lb] if totals[lb] else 0.0
                cells += [num(q["sent_bytes"] / 1e9, 3), f"{num(100 * share, 1)}%", num(q["mean_bytes"] / 1024, 0)]
            table.rows.append([f"{name} {i} (switch {link[0]} port {link[1]})", *cells])
    path = figure_path(lab, "nccl-uplink-load.png")
    load_figure(queues, path)
    table.notes += [
        "GB: the bytes that left the link's egress queue over the run (queue probes' `sent_bytes`, headers"
        " included); share: of the four links of its group (25% is an even spread); mean queue: the egress"
        " queue's time-weighted occupancy. ECMP's busiest link carries its flows at the pace of the most"
        " loaded, and every ring waits for it.",
        "busbw: ECMP "
        f"{num(job(results['ecmp5'], 'busbw_gbps'), 2)} GB/s ({num(job(results['ecmp5'], 'ideal_pct'), 2)}% of ideal),"
        f" planner {num(job(results['planner'], 'busbw_gbps'), 2)} GB/s ({num(job(results['planner'], 'ideal_pct'), 2)}%).",
        f"Figure: {shown(path)}.",
    ]
    return table


def load_figure(queues: dict[str, dict[tuple[int, int], dict]], path: Path) -> None:
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(9.0, 4.2), layout="constrained")
    ax = fig.subplots()
    ticks, x = [], 0
    width = 0.38
    for g, (name, links) in enumerate(LINKS):
        first = x + g * 0.8
        for i, link in enumerate(links):
            pos = x + g * 0.8
            for k, (lb, colour) in enumerate((("ecmp5", "tab:orange"), ("planner", "tab:blue"))):
                ax.bar(pos + (k - 0.5) * width, queues[lb][link]["sent_bytes"] / 1e9, width, color=colour)
            ticks.append((pos, str(i)))
            x += 1
        ax.text((first + pos) / 2, -0.1, name, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=9)
    ax.set_xticks([p for p, _ in ticks], [t for _, t in ticks], fontsize=8)
    ax.set_ylabel("bytes carried over the run (GB)")
    ax.set_title("Leaf-spine links, 2 x 8 bidirectional-ring AllReduce, seed 1: what each link carried", fontsize=10)
    ax.legend([Patch(color="tab:orange"), Patch(color="tab:blue")], ["ECMP 5-tuple, 16 QPs", "per-QP planner"], fontsize=8)
    fig.savefig(path, dpi=110)


def nanjing(lab: Lab) -> Table:
    """The characterization study's Nanjing AlltoAll victim beside an AlltoAll, by routing."""
    seeds = lab.pick([1, 2, 3], [1])
    short = lab.pick({}, {SIZE: "1MiB", "workload.jobs.1.size": "1MiB"})
    jobs = [Job(f"{FOLDER}/nanjing-alltoall-{routing}", short, s, {"routing": routing}) for routing in NANJING for s in seeds]
    results = lab.runs("Nanjing, ECMP and the planner", jobs)
    table = Table(
        "Nanjing-like: an AlltoAll victim beside an AlltoAll aggressor, by routing",
        ["routing", "study (Gb/s)", "snarl busbw (GB/s)", "snarl (Gb/s)", "per seed (Gb/s)", "perf_ratio"],
        notes=[
            f"The victim's busbw (GB/s, x 8 for Gb/s) and perf_ratio (alone / beside), mean of seeds"
            f" {', '.join(map(str, seeds))}; messages of {lab.pick('16 MiB', '1 MiB')} per peer. The study"
            " gives the peak only: 180 Gb/s with NSLB, 120 without.",
        ],
    )
    for routing, (name, study) in NANJING.items():
        runs = [r for r in results if r.job.values["routing"] == routing]
        busbw = [r.get("jobs.victim.busbw") for r in runs]
        ratio = statistics.mean(r.get("jobs.victim.perf_ratio") for r in runs)
        per_seed = ", ".join(num(8 * b, 0) for b in busbw)
        mean = statistics.mean(busbw)
        table.rows.append([name, str(study), num(mean, 2), num(8 * mean, 0), per_seed, num(ratio, 3)])
    return table
