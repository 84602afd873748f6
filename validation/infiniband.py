"""Gran et al., *Exploring the scope of the InfiniBand congestion control mechanism*
(IPDPS 2012): the silent forest (Table II), the windy forest (Figures 5 to 8) and moving
forests (Figures 9 and 10) on the 648-host fat-tree of ``scenarios/infiniband-cc/``."""

from __future__ import annotations

from collections.abc import Iterator

from validation.lab import Job, Lab, Result, Table, num

TITLE = "InfiniBand congestion control: Gran et al., IPDPS 2012"

# Table II: mean receive rate per host (Gb/s) and total throughput, CC off and on.
TABLE_II = [
    ("no hotspots, all hosts", "no-hotspots", "receive_rate.all", (2.699, 2.701)),
    ("hotspots", "silent-forest", "receive_rate.hotspots", (13.602, 13.279)),
    ("non-hotspots", "silent-forest", "receive_rate.non_hotspots", (0.168, 2.246)),
    ("total throughput", "silent-forest", "total_throughput", (216.1, 1543.8)),
]
# The windy forest as the paper's text gives it (its plots have no printed values).
WINDY_25 = {
    0.0: "0.55 / 4.75 of tmax 5.4: x8.6",
    0.1: "x9.1, CC at 60% of tmax",
    0.3: "x12.9 to x16.3 from p = 0.3 to 1",
    0.6: "x16.3 (the peak), CC at 80% of tmax",
    1.0: "x12.9 to x16.3, CC at 80% of tmax",
}
WINDY_100 = {
    0.0: "x1 (non-hotspots -3%)",
    0.1: "non-hotspots x4.1",
    0.6: "x17 (the peak)",
    0.9: "non-hotspots x64.1",
    1.0: "x1",
}
MOVING = {
    "20% V, 80% C": "0.467 / 0.723 at 10 ms (+55%); +10% at 2 ms; +4% at 1 ms",
    "60% V, 40% C": "x2.6 at 10 ms; +10% at 1 ms",
}


def tables(lab: Lab) -> Iterator[Table]:
    yield silent_forest(lab)
    yield from windy_forest(lab)
    yield moving_forests(lab)


def cc_on(result: Result) -> bool:
    """Whether IB CC ran: the sweep's `congestion_control`, or the scenario's name."""
    cc = result.job.values.get("congestion_control")
    if isinstance(cc, dict):
        return cc.get("type") == "ibcc"
    return result.job.scenario.endswith("-cc-on")


def silent_forest(lab: Lab) -> Table:
    short = lab.pick({}, {"simulation.duration": "2ms", "simulation.warmup": "1ms"})
    scenarios = ["no-hotspots", "silent-forest"]
    jobs = [Job(f"infiniband-cc/{s}-cc-{cc}", short, None, {"scenario": s}) for s in scenarios for cc in ("off", "on")]
    results = {(r.job.values["scenario"], cc_on(r)): r for r in lab.runs("Table II, the silent forest", jobs)}
    table = Table(
        "Table II: the silent forest",
        ["", "paper, CC off", "paper, CC on", "snarl, CC off", "snarl, CC on"],
        notes=["Mean receive rate per host (Gb/s) and total throughput (Gb/s), seed 1."],
    )
    for row, scenario, key, (paper_off, paper_on) in TABLE_II:
        digits = 1 if key == "total_throughput" else 3
        off, on = (results[(scenario, cc)].get(key) for cc in (False, True))
        table.rows.append([row, num(paper_off, digits), num(paper_on, digits), num(off, digits), num(on, digits)])
    return table


def windy_forest(lab: Lab) -> Iterator[Table]:
    share = "traffic.groups.0.pattern.parts.0.share"
    jobs = lab.sweep_jobs(
        "infiniband-cc/sweep-windy-forest",
        quick_set={"simulation.duration": "2ms", "simulation.warmup": "1ms"},
        quick_axes={share: [0.6]},
        keep=["congestion_control"],
    )
    results = lab.runs("Figures 5 to 8, the windy forest", jobs)
    fractions = list(dict.fromkeys(r.job.values["description"] for r in results))
    shares = sorted({r.job.values[share] for r in results})

    def pick(fraction: str, p: float, on: bool) -> Result:
        return next(r for r in results if r.job.values["description"] == fraction and r.job.values[share] == p and cc_on(r) == on)

    def rates(fraction: str, key: str, paper: dict[float, str], digits: int) -> list[list[str]]:
        rows = []
        for p in shares:
            off, on = pick(fraction, p, False), pick(fraction, p, True)
            a, b = off.get(key), on.get(key)
            rows.append([f"{p:g}", paper.get(p, ""), num(a, digits), num(b, digits), num(on.get("tmax"), 2), gain(a, b)])
        return rows

    columns = ["p", "paper", "CC off", "CC on", "tmax", "gain"]
    if "25% B nodes" in fractions:
        table = Table(
            "Figure 5: 25% B nodes, the non-hotspots' receive rate (Gb/s)",
            columns,
            rates("25% B nodes", "receive_rate.non_hotspots", WINDY_25, 3),
            ["The other hosts 80% C, 20% V; seed 1. tmax: the paper's bound on what the non-hotspots can receive."],
        )
        yield table
    if "100% B nodes" in fractions:
        yield Table(
            "Figure 8: 100% B nodes, total throughput (Gb/s)",
            columns,
            rates("100% B nodes", "total_throughput", WINDY_100, 0),
            ["Seed 1. The paper's gains at p = 0.1 and 0.9 are of the non-hotspots' receive rate (next table)."],
        )
        yield Table(
            "Figure 8: 100% B nodes, the non-hotspots' receive rate (Gb/s)",
            columns,
            rates("100% B nodes", "receive_rate.non_hotspots", WINDY_100, 3),
        )
    table = Table(
        "Figures 5 to 8: CC's gain in total throughput",
        ["B nodes", *(f"p = {p:g}" for p in shares)],
        notes=["Paper: 25% B x6.0 (p = 1) to x8.7 (p = 0.6); more peaked at p = 0.6 as B grows, x17 with 100% B."],
    )
    for fraction in fractions:
        table.rows.append(
            [fraction.removesuffix(" B nodes"), *(gain(pick(fraction, p, False).get("total_throughput"), pick(fraction, p, True).get("total_throughput")) for p in shares)]
        )
    yield table


def moving_forests(lab: Lab) -> Table:
    jobs = lab.sweep_jobs(
        "infiniband-cc/sweep-moving",
        quick_set={"simulation.duration": "3ms", "simulation.warmup": "1ms"},
        quick_axes={"traffic.hotspots.lifetime": ["1ms"]},
        keep=["congestion_control"],
    )
    results = lab.runs("Figures 9 and 10, moving forests", jobs)
    lifetimes = list(dict.fromkeys(r.job.values["traffic.hotspots.lifetime"] for r in results))
    mixes = list(dict.fromkeys(r.job.values["description"] for r in results))
    table = Table(
        "Figures 9 and 10: moving forests, mean receive rate of all hosts (Gb/s)",
        ["mix", "paper", *lifetimes],
        notes=["Seed 1; every run measures 50 ms after 10 ms of warm-up."],
    )
    for mix in mixes:
        by_cc = {
            on: [next(r for r in results if r.job.values["description"] == mix and r.job.values["traffic.hotspots.lifetime"] == t and cc_on(r) == on).get("receive_rate.all") for t in lifetimes]
            for on in (False, True)
        }
        table.rows.append([f"{mix}, CC off", MOVING.get(mix, ""), *(num(v) for v in by_cc[False])])
        table.rows.append([f"{mix}, CC on", "", *(num(v) for v in by_cc[True])])
        table.rows.append([f"{mix}, gain", "", *(gain(a, b) for a, b in zip(by_cc[False], by_cc[True]))])
    return table


def gain(off: float | None, on: float | None) -> str:
    """CC's gain as the paper writes it: x2.6 from double on, +10% below."""
    if not off or on is None:
        return "-"
    ratio = on / off
    return f"x{ratio:.1f}" if ratio >= 2 else f"{ratio - 1:+.0%}"
