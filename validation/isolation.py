"""Merino et al., *Improving dynamic congestion isolation in data-center networks*: six
mechanisms (PFC alone, DCQCN, CI, ICI, ICI-DCQCN, ICI+) on the 64-host lossless Ethernet
fabric of ``scenarios/lossless-ethernet/``. The paper's figures are not in its text:
there are findings to set beside snarl's, not numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from validation.lab import Job, Lab, Result, Table, num

TITLE = "Congestion isolation: Merino et al. (ICI)"
MECHANISMS = {
    "none": "none (PFC)",
    "dcqcn": "dcqcn",
    "ci": "ci",
    "ici": "ici",
    "ici-dcqcn": "ici-dcqcn",
    "ici-plus": "ici-plus",
}
VICTIMS = "groups.victims"

Column = tuple[str, Callable[[Result], str]]


def victims(r: Result) -> str:
    return num(r.get(f"{VICTIMS}.accepted_load"))


def us(key: str, digits: int = 0) -> Callable[[Result], str]:
    """A victims' figure in ns, shown in us."""

    def show(r: Result) -> str:
        value = r.get(f"{VICTIMS}.{key}")
        return num(None if value is None else value / 1_000, digits)

    return show


def fct(digits: Sequence[int]) -> Callable[[Result], str]:
    return lambda r: " / ".join(us(f"fct.{q}", d)(r) for q, d in zip(("p50", "p95", "p99"), digits))


def cnps(r: Result) -> str:
    return num(r.get("counters.cnps_sent") or 0, 0)


def peak_cnps(r: Result) -> int:
    """The most CNPs sent in one window of the run."""
    fabric = r.table("fabric")
    return int(fabric["cnps"].max()) if "cnps" in fabric and len(fabric) else 0


def cnps_and_peak(r: Result) -> str:
    total = r.get("counters.cnps_sent") or 0
    return f"{total:,} ({peak_cnps(r):,})" if total else "0"


SCENARIOS: list[tuple[str, str, list[str], list[Column], str]] = [
    (
        "one-tree",
        "One tree",
        list(MECHANISMS),
        [
            ("victims", victims),
            ("p99 latency (us)", us("latency.p99")),
            ("FCT p50 / p95 / p99 (us)", fct((1, 0, 0))),
            ("CNPs (peak)", cnps_and_peak),
        ],
        "Paper: ICI and ICI+ give the victims the lowest latency, the naive ICI-DCQCN a little worse "
        "than either alone; ICI+ sends no CNPs where isolation suffices.",
    ),
    (
        "four-trees",
        "Four trees",
        list(MECHANISMS),
        [
            ("victims", victims),
            ("p99 latency (us)", us("latency.p99")),
            ("CFT overflows", lambda r: num(r.get("isolation.cft_overflows"), 0)),
            ("CNPs (peak)", cnps_and_peak),
        ],
        "Paper: ICI runs out of table entries and its victims lose throughput; ICI+ keeps it with up "
        "to 32 times fewer CNPs than DCQCN.",
    ),
    (
        "google-all-bursts",
        "Google_All and four bursts",
        list(MECHANISMS),
        [("victims", victims), ("FCT p99 (us)", us("fct.p99", 1)), ("CNPs", cnps)],
        "Paper: ICI+ the best p99 of the six; DCQCN at slow settings costs the victims of short bursts.",
    ),
    (
        "google-all-long-tree",
        "Google_All and a lasting tree",
        ["dcqcn", "ici", "ici-dcqcn", "ici-plus"],
        [("victims", victims), ("FCT p50 / p95 / p99 (us)", fct((2, 1, 0))), ("CNPs", cnps)],
        "Paper: ICI+ better than ICI-DCQCN at p50 and p95, better than DCQCN at p99 (31%), and 23% "
        "below ICI at p99.",
    ),
]


def tables(lab: Lab) -> Iterator[Table]:
    for scenario, title, mechanisms, columns, paper in SCENARIOS:
        short = lab.pick({}, {"simulation.stop_after.messages": 200_000}) if "long-tree" in scenario else {}
        jobs = [Job(f"lossless-ethernet/{scenario}-{m}", short, None, {"mechanism": m}) for m in mechanisms]
        results = lab.runs(title, jobs)
        table = Table(title, ["mechanism", *(name for name, _ in columns)], notes=[paper])
        for result in results:
            table.rows.append([MECHANISMS[result.job.values["mechanism"]], *(show(result) for _, show in columns)])
        yield table
    yield cft_entries(lab)
    yield persist(lab)


def cft_entries(lab: Lab) -> Table:
    jobs = lab.sweep_jobs("lossless-ethernet/sweep-cft-entries")
    results = lab.runs("Four trees against the table size", jobs)
    table = Table(
        "Four trees against the congested-flow table size",
        ["marking", "entries", "victims", "CFT overflows", "peak CNPs per window"],
        notes=["Paper: ICI+ marks more as the tables run out of entries (its Section 4.4)."],
    )
    for r in results:
        table.rows.append(
            [
                r.job.values["description"],
                str(r.job.values["isolation.cft_entries"]),
                victims(r),
                num(r.get("isolation.cft_overflows"), 0),
                num(r.get("isolation.peak_cnps_per_window"), 0),
            ]
        )
    return table


def persist(lab: Lab) -> Table:
    jobs = lab.sweep_jobs("lossless-ethernet/sweep-persist", quick_set={"simulation.stop_after.messages": 200_000})
    results = lab.runs("ICI+ against persist", jobs)
    table = Table(
        "ICI+ against `persist`, Google_All and a lasting tree",
        ["persist", "victims", "FCT p95 / p99 (us)", "CNPs"],
        notes=["The paper does not give `persist`; snarl's default is 2 ms (docs/validation.md)."],
    )
    for r in results:
        p95, p99 = us("fct.p95", 1)(r), us("fct.p99", 0)(r)
        table.rows.append([r.job.values["isolation.persist"], victims(r), f"{p95} / {p99}", cnps(r)])
    return table
