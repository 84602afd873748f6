#!/usr/bin/env python3
"""Prints snarl beside CAMINOS from the tables run.py left in results/.

    python3 validation/caminos/compare.py recovery-hyperx          # per-window table + recovery statistics
    python3 validation/caminos/compare.py recovery-hyperx --burst 100  # the b100 tables
    python3 validation/caminos/compare.py recovery-hyperx --burst 100 --caminos recovery-hyperx-b100-islip   # a CAMINOS variant
    python3 validation/caminos/compare.py recovery-fat-tree --burst 100 --snarl recovery-fat-tree-b100-lowvc  # a snarl variant
    python3 validation/caminos/compare.py saturation               # uniform saturation, every fabric run

Recovery statistics, per seed, on the accepted load of all servers per 1,000-cycle window
(the series docs/validation.md uses):

- pre-burst: the mean of the windows from 10,000 to the burst (20,000), snarl's
  `recovery.pre_burst_load` interval (half the warm-up to the burst for --burst-at);
- trough: the lowest window from the burst on, and when it starts;
- back: cycles from the cap (the end of the burst) to the end of the first window after
  the trough within 5% of the reference, '-' if none by the end of the run, 'no drop' if
  no window from the burst on is below it. The reference is the pre-burst level of the
  uniform servers' share, pre-burst x N_uniform / N: once the hotspot senders are capped
  they receive at most the hotspot's link (1 phit/cycle, < 0.001 of the mean), so that is
  what all servers accept when the uniform servers get their pre-burst throughput back.
  (docs/validation.md uses the throttled steady state of separate runs instead: snarl's
  HyperX 0.869 and fat-tree 0.871 against references of about 0.86 and 0.87 here.)
- the mean of the windows in 25,000-30,000 and in 30,000-35,000.

Every series is cut at the end of the shortest run compared (CAMINOS runs stopped early
end at 36,000-40,000), so a trough is the lowest window by then.

Means are over the seeds; [min-max] is their range.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WINDOW = 1000
BURST_AT = 20_000
# Servers and uniform servers (servers outside the hotspot region), as the scenarios.
SIZES = {"hyperx": (1296, 1170), "fat-tree": (1024, 919), "dragonfly": (1056, 951), "megafly": (1332, 1199)}
BURST = 500
# Fixed stretches whose mean is reported (every run here reaches 35,000 cycles).
PERIODS = [(25_000, 30_000), (30_000, 35_000)]


def load(path: Path, group: str = "all") -> dict[int, dict[float, float]]:
    """seed -> {window start: accepted load} of `group`."""
    out: dict[int, dict[float, float]] = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["group"] == group:
                out.setdefault(int(r["seed"]), {})[float(r["time"])] = float(r["accepted_load"])
    return out


def whole(series: dict[float, float], end: float | None = None) -> dict[float, float]:
    """The windows that end by `end` (a run's last window may be cut short)."""
    last = max(series) + WINDOW if end is None else end
    return {t: v for t, v in sorted(series.items()) if t + WINDOW <= last}


def mean(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def span(xs) -> str:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return "-"
    return f"{mean(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"


def recovery_of(series: dict[float, float], fabric: str, burst: int = BURST, burst_at: int = BURST_AT) -> dict:
    n, n_ur = SIZES[fabric]
    cap = burst_at + burst
    pre = mean(v for t, v in series.items() if burst_at // 2 <= t < burst_at)
    ref = pre * n_ur / n
    after = {t: v for t, v in series.items() if t >= burst_at}
    trough_at = min(after, key=lambda t: after[t])
    trough = after[trough_at]
    if trough >= 0.95 * ref:
        back = 0.0
    else:
        ok = [t for t, v in after.items() if t >= trough_at and t >= cap and v >= 0.95 * ref]
        back = (min(ok) + WINDOW - cap) if ok else None
    periods = {p: mean(v for t, v in series.items() if p[0] <= t < p[1]) for p in PERIODS}
    return {"pre": pre, "ref": ref, "trough": trough, "trough_at": trough_at, "back": back, "periods": periods}


def back_text(b) -> str:
    return "-" if b is None else ("no drop" if b == 0 else f"{b:,.0f}")


def recovery(name: str, caminos_name: str, burst: int, snarl_name: str, burst_at: int = BURST_AT) -> None:
    fabric = name.removeprefix("recovery-")
    sim = {
        "snarl": load(RESULTS / f"{snarl_name}.snarl.csv"),
        "CAMINOS": load(RESULTS / f"{caminos_name}.caminos.csv"),
    }
    end = min(max(s) for runs in sim.values() for s in runs.values()) + WINDOW
    sim = {k: {seed: whole(s, end) for seed, s in runs.items()} for k, runs in sim.items()}
    print(f"# {name}: accepted load of all servers per {WINDOW:,}-cycle window, mean of seeds [min-max]")
    print(f"# snarl: results/{snarl_name}.snarl.csv (seeds {sorted(sim['snarl'])}); CAMINOS: results/{caminos_name}.caminos.csv (seeds {sorted(sim['CAMINOS'])})")
    print(f"{'window':>8}  {'snarl':>22}  {'CAMINOS':>22}")
    times = sorted(set().union(*[set(s) for runs in sim.values() for s in runs.values()]))
    for t in times:
        cells = []
        for runs in sim.values():
            vals = [s[t] for s in runs.values() if t in s]
            cells.append(span(vals) if vals else "")
        print(f"{t:>8,.0f}  {cells[0]:>22}  {cells[1]:>22}")
    print()
    print(f"# recovery statistics (burst {burst_at:,}-{burst_at + burst:,} in CAMINOS's run; pre-burst: windows from {burst_at // 2:,}, run to {end:,.0f}): per seed, then mean [min-max]")
    for label, runs in sim.items():
        stats = {seed: recovery_of(s, fabric, burst, burst_at if label == "CAMINOS" else BURST_AT) for seed, s in sorted(runs.items())}
        print(f"## {label}")
        for seed, st in stats.items():
            periods = ", ".join(f"{a:,}-{b:,} {v:.3f}" for (a, b), v in st["periods"].items())
            print(
                f"  seed {seed}: pre-burst {st['pre']:.3f}, reference {st['ref']:.3f}, trough {st['trough']:.3f} at {st['trough_at']:,.0f}, "
                f"back {back_text(st['back'])}; {periods}"
            )
        sts = list(stats.values())
        at = [s["trough_at"] for s in sts]
        periods = ", ".join(f"{a:,}-{b:,} {span([s['periods'][(a, b)] for s in sts])}" for a, b in PERIODS)
        print(
            f"  mean: pre-burst {span([s['pre'] for s in sts])}, trough {span([s['trough'] for s in sts])} "
            f"at {mean(at):,.0f} [{min(at):,.0f}-{max(at):,.0f}], back {' / '.join(back_text(s['back']) for s in sts)}; {periods}"
        )


def saturation() -> None:
    print("# uniform saturation: accepted load at offered 1.0, mean of seeds [min-max]")
    print(f"{'fabric':>10}  {'snarl (20,000-30,000)':>26}  {'CAMINOS':>26}  CAMINOS window")
    for fabric in SIZES:
        cells, note = [], ""
        for kind in ("snarl", "caminos"):
            path = RESULTS / f"uniform-{fabric}.{kind}.csv"
            if not path.exists():
                cells.append("(not run)")
                continue
            runs = {seed: whole(s) for seed, s in load(path).items()}
            if kind == "snarl":
                # snarl's uniform scenarios write 200-cycle windows; the measurement is 20,000-30,000
                vals = [mean(v for t, v in s.items() if 20_000 <= t < 30_000) for s in runs.values()]
            else:
                # the runs here measure their last 2,000 cycles (after a 20,000- or
                # 12,000-cycle warm-up: README.md)
                ends = sorted({max(s) + WINDOW for s in runs.values()})
                vals = [mean(v for t, v in s.items() if max(s) + WINDOW - 2_000 <= t) for s in runs.values()]
                note = "last 2,000 cycles of runs ending at " + ", ".join(f"{e:,.0f}" for e in ends)
            cells.append(f"{span(vals)} n={len(vals)}")
        print(f"{fabric:>10}  {cells[0]:>26}  {cells[1]:>26}  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", help="recovery-<fabric> or saturation")
    ap.add_argument("--burst", type=int, default=BURST, help="the burst's length (default 500; 100 reads the b100 tables)")
    ap.add_argument("--burst-at", type=int, default=BURST_AT, help="when CAMINOS's burst starts (a variant with a shorter warm-up)")
    ap.add_argument("--caminos", help="the CAMINOS table to compare (default: the same name), e.g. recovery-hyperx-islip")
    ap.add_argument("--snarl", help="the snarl table to compare (default: the same name), e.g. recovery-fat-tree-b100-lowvc")
    args = ap.parse_args()
    if args.what == "saturation":
        saturation()
    elif args.what.startswith("recovery-"):
        tagged = args.what if args.burst == BURST else f"{args.what}-b{args.burst}"
        recovery(args.what, args.caminos or tagged, args.burst, args.snarl or tagged, args.burst_at)
    else:
        sys.exit("what: recovery-<fabric> or saturation")


if __name__ == "__main__":
    main()
