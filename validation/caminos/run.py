#!/usr/bin/env python3
"""Runs a configuration of this folder in CAMINOS (and, with --snarl, the matching snarl
scenario) for seeds 1, 2, 3, and reduces each run to snarl's per-window table.

    python3 validation/caminos/run.py recovery-hyperx                  # CAMINOS, seeds 1-3
    python3 validation/caminos/run.py recovery-hyperx --cycles 50000   # shortened run
    python3 validation/caminos/run.py recovery-hyperx --snarl          # snarl, same seeds
    python3 validation/caminos/run.py recovery-hyperx --burst 100         # a 100-cycle burst (tag b100)
    python3 validation/caminos/run.py recovery-hyperx --tag islip --replace 'allocator:Random=allocator:ISLIP{num_iter:1}'
    python3 validation/caminos/run.py recovery-fat-tree --snarl --burst 100 --tag lowvc --set nic.injection_vc=lowest_with_room

CAMINOS output: results/<name>[-<tag>].caminos.csv; snarl: results/<name>[-<tag>].snarl.csv. Both
have snarl's `timeseries` columns (time, group, offered_load, accepted_load,
latency_mean, packets_delivered) plus `seed`. CAMINOS's temporal statistics cover every
server, so its rows are group "all" only; snarl's rows are kept for every group.

Environment: CAMINOS is /work/caminos-bin/bin/caminos (override with $CAMINOS), snarl is
/work/main/.venv/bin/snarl (override with $SNARL; pandas and pyarrow come from
/work/main/.venv/bin/python, which --snarl re-executes itself with when needed). Runs go
through `nice -n 10`; the raw CAMINOS results and logs stay in $CAMINOS_WORK
(default /tmp/caminos-work), not in the repository.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CAMINOS = os.environ.get("CAMINOS", "/work/caminos-bin/bin/caminos")
SNARL = os.environ.get("SNARL", str(REPO / ".venv/bin/snarl"))
WORK = Path(os.environ.get("CAMINOS_WORK", "/tmp/caminos-work"))
COLUMNS = ["seed", "time", "group", "offered_load", "accepted_load", "latency_mean", "packets_delivered"]
PACKET = 8  # phits per packet (and message) in every configuration here


# ---------------------------------------------------------------- configurations


def split_top(body: str) -> list[str]:
    """The comma-separated items of a list body, at bracket/brace depth 0."""
    items, depth, cur = [], 0, ""
    for ch in body:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    return [i.strip() for i in items]


def for_seed(text: str, seed: int) -> str:
    """main.cfg with every `seed![...]` (the seeds and what goes with each) reduced to
    the seed's own value."""
    seeds = None
    out, pos = [], 0
    pattern = re.compile(r"seed!\[")
    while (m := pattern.search(text, pos)) is not None:
        depth, i = 1, m.end()
        while depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        items = split_top(text[m.end() : i - 1])
        if seeds is None:  # the first is random_seed
            seeds = [int(float(x)) for x in items]
        out.append(text[pos : m.start()])
        out.append(items[seeds.index(seed)])
        pos = i
    out.append(text[pos:])
    return "".join(out)


def prepare(name: str, seed: int, cycles: int | None, replace: list[str]) -> str:
    text = for_seed((HERE / name / "main.cfg").read_text(), seed)
    for rule in replace:
        old, new = rule.split("=", 1)
        if old not in text:
            sys.exit(f"--replace: {old!r} is not in {name}/main.cfg")
        text = text.replace(old, new)
    if cycles is not None:
        warmup = int(re.search(r"\bwarmup:\s*(\d+)", text).group(1))
        if cycles <= warmup:
            sys.exit(f"--cycles {cycles} is not past the warm-up ({warmup})")
        text = re.sub(r"\bmeasured:\s*\d+", f"measured: {cycles - warmup}", text)
    return text


# ---------------------------------------------------------------- CAMINOS results


TOKEN = re.compile(r'\s*(?:(?P<str>"[^"]*")|(?P<punct>[{}\[\]:,])|(?P<word>[^\s{}\[\]:,"]+))')


def parse_result(text: str):
    """CAMINOS's result file (a ConfigurationValue) as Python dicts, lists and floats."""
    tokens = []
    for m in TOKEN.finditer(text):
        if m.group("str") is not None:
            tokens.append(("str", m.group("str")[1:-1]))
        elif m.group("punct") is not None:
            tokens.append(("p", m.group("punct")))
        elif m.group("word") is not None:
            tokens.append(("w", m.group("word")))
    pos = 0

    def value():
        nonlocal pos
        kind, tok = tokens[pos]
        pos += 1
        if kind == "str":
            return tok
        if kind == "p" and tok == "[":
            items = []
            while tokens[pos] != ("p", "]"):
                items.append(value())
                if tokens[pos] == ("p", ","):
                    pos += 1
            pos += 1
            return items
        if kind == "w":
            if pos < len(tokens) and tokens[pos] == ("p", "{"):  # Name { ... }
                pos += 1
                obj = {"__name__": tok}
                while tokens[pos] != ("p", "}"):
                    key = tokens[pos][1]
                    assert tokens[pos + 1] == ("p", ":"), tokens[pos : pos + 2]
                    pos += 2
                    obj[key] = value()
                    if tokens[pos] == ("p", ","):
                        pos += 1
                pos += 1
                return obj
            try:
                return float(tok)
            except ValueError:
                return tok
        raise ValueError(f"unexpected {tok!r} at token {pos}")

    return value()


def servers(text: str) -> int:
    topo = re.search(r"topology:\s*(\w+)\{([^}]*)\}", text)
    kind, body = topo.group(1), topo.group(2)
    nums = lambda key: [int(x) for x in re.search(key + r":\s*\[([^\]]*)\]", body).group(1).split(",")]  # noqa: E731
    one = lambda key: int(re.search(key + r":\s*(\d+)", body).group(1))  # noqa: E731
    if kind == "Hamming":
        n = 1
        for s in nums("sides"):
            n *= s
        return n * one("servers_per_router")
    if kind in ("XGFT", "MultiStage"):
        n = 1
        for d in nums("down"):
            n *= d
        return n * one("servers_per_leaf")
    if kind in ("Dragonfly", "CanonicDragonfly"):
        h, p = one("global_ports_per_router"), one("servers_per_router")
        return (2 * h) * (2 * h * h + 1) * p
    raise ValueError(f"servers of {kind} unknown")


def reduce_caminos(result: dict, seed: int, n: int, step: int = 1000) -> list[dict]:
    t = result["temporal_statistics"]
    rows = []
    for k, (inj, acc, lat) in enumerate(zip(t["injected_load"], t["accepted_load"], t["average_message_delay"])):
        rows.append(
            {
                "seed": seed,
                "time": k * step,
                "group": "all",
                # CAMINOS counts phits that left the servers (injected), not generated.
                "offered_load": inj,
                "accepted_load": acc,
                "latency_mean": lat if isinstance(lat, float) else float("nan"),
                "packets_delivered": round(acc * step * n / PACKET),
            }
        )
    return rows


LOG_LINE = re.compile(r"^\s*(\d+)-(\d+)\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+(\S+)")


def reduce_log(text: str, seed: int, n: int) -> list[dict]:
    """The per-window table from CAMINOS's progress lines, for a run stopped before its
    end (it writes its result file only at the end). Each line holds the means since the
    last statistics reset (cycle 0, then the warm-up's end) up to a multiple of 1,000
    cycles, so a window's value is the difference of two running sums. Message delay is
    left out (a mean per message, not recoverable without the message counts)."""
    rows, prev = [], None
    for line in text.splitlines():
        m = LOG_LINE.match(line)
        if not m:
            continue
        begin, end = int(m.group(1)), int(m.group(2)) + 1
        inj, acc = float(m.group(3)), float(m.group(4))
        if prev is None or prev[0] != begin:
            start, w_inj, w_acc = begin, inj, acc
            span = end - begin
        else:
            span = end - prev[1]
            start = prev[1]
            w_inj = (inj * (end - begin) - prev[2] * (prev[1] - begin)) / span
            w_acc = (acc * (end - begin) - prev[3] * (prev[1] - begin)) / span
        if span == 1000:
            rows.append({"seed": seed, "time": start, "group": "all", "offered_load": w_inj, "accepted_load": w_acc,
                         "latency_mean": float("nan"), "packets_delivered": round(w_acc * 1000 * n / PACKET)})
        prev = (begin, end, inj, acc)
    return rows


def run_caminos(name: str, seed: int, cycles: int | None, replace: list[str], tag: str) -> list[dict]:
    text = prepare(name, seed, cycles, replace)
    work = WORK / f"{name}{'-' + tag if tag else ''}"
    work.mkdir(parents=True, exist_ok=True)
    cfg, res, log = work / f"seed{seed}.cfg", work / f"seed{seed}.result", work / f"seed{seed}.log"
    cfg.write_text(text)
    started = time.time()
    with open(log, "w") as out:
        subprocess.run(["nice", "-n", "10", CAMINOS, str(cfg), f"--results={res}"], stdout=out, stderr=subprocess.STDOUT, check=True)
    result = parse_result(res.read_text())
    measured = int(re.search(r"measured: (\d+)", text).group(1))
    print(f"  {name}{' ' + tag if tag else ''} seed {seed}: CAMINOS {result.get('version_number')}, "
          f"{int(result['cycle'])} cycles, {time.time() - started:.0f} s, accepted {result['accepted_load']:.4f} "
          f"(cycles {int(result['cycle']) - measured}-{int(result['cycle'])})",
          file=sys.stderr)
    return reduce_caminos(result, seed, servers(text))


# ---------------------------------------------------------------- snarl


def run_snarl(name: str, seed: int, cycles: int | None, tag: str, sets: list[str]) -> list[dict]:
    import pandas as pd

    out = WORK / "snarl" / f"{name}{'-' + tag if tag else ''}-seed{seed}"
    cmd = ["nice", "-n", "10", SNARL, "run", str(REPO / "scenarios/endpoint-congestion" / f"{name}.toml"), "--seed", str(seed), "--out", str(out), "--json"]
    if cycles is not None:
        cmd += ["--set", f"simulation.duration={cycles}cycles"]
    if name.startswith("recovery-"):
        # the same 1,000-cycle windows as CAMINOS's statistics_temporal_step
        cmd += ["--set", "simulation.window=1000cycles"]
    for s in sets:
        cmd += ["--set", s]
    started = time.time()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    frame = pd.read_parquet(out / "timeseries.parquet")
    print(f"  {name} seed {seed}: snarl, {time.time() - started:.0f} s", file=sys.stderr)
    frame.insert(0, "seed", seed)
    return frame[COLUMNS].to_dict("records")


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="a folder of validation/caminos holding main.cfg (e.g. recovery-hyperx)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--cycles", type=int, help="end the run at this cycle (CAMINOS: warmup + measured; snarl: duration)")
    ap.add_argument("--snarl", action="store_true", help="run snarl's scenario of the same name instead")
    ap.add_argument("--replace", action="append", default=[], metavar="OLD=NEW", help="text replacement in main.cfg (CAMINOS only; repeatable)")
    ap.add_argument("--burst", type=int, help="recovery only: a burst of this many cycles instead of 500 (tag b<N>)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting of snarl's scenario (snarl only; repeatable), e.g. nic.injection_vc=lowest_with_room")
    ap.add_argument("--tag", default="", help="suffix of the output CSV (for --replace and --set variants)")
    ap.add_argument("--jobs", type=int, default=2, help="seeds run at once (default 2: the machine has 2 cores)")
    ap.add_argument("--from-log", action="store_true", help="run nothing: rebuild the tables of runs stopped early from their CAMINOS progress logs in $CAMINOS_WORK")
    ap.add_argument("--combine", action="store_true", help="run nothing: gather the per-seed tables earlier runs left in $CAMINOS_WORK")
    args = ap.parse_args()
    if args.burst is not None:
        if not args.name.startswith("recovery-"):
            sys.exit("--burst: recovery configurations only")
        args.replace.append(f"times:[20000, 500,=times:[20000, {args.burst},")
        args.snarl_set = [f"traffic.phases.1.at={20_000 + args.burst}cycles"]
        args.tag = "-".join(t for t in [f"b{args.burst}", args.tag] if t)
    else:
        args.snarl_set = []
    if args.set and not args.snarl:
        sys.exit("--set: snarl runs only (--snarl); CAMINOS variants use --replace")
    args.snarl_set += args.set
    if args.snarl:
        try:
            import pandas  # noqa: F401
        except ImportError:
            os.execv(str(REPO / ".venv/bin/python"), [str(REPO / ".venv/bin/python"), __file__, *sys.argv[1:]])
        job = lambda s: run_snarl(args.name, s, args.cycles, args.tag, args.snarl_set)  # noqa: E731
        target = HERE / "results" / f"{args.name}{'-' + args.tag if args.tag else ''}.snarl.csv"
    else:
        job = lambda s: run_caminos(args.name, s, args.cycles, args.replace, args.tag)  # noqa: E731
        target = HERE / "results" / f"{args.name}{'-' + args.tag if args.tag else ''}.caminos.csv"
    label = f"{args.name}{'-' + args.tag if args.tag else ''}"
    kept = WORK / ("snarl-tables" if args.snarl else "caminos-tables") / label

    def seed_rows(seed: int) -> list[dict]:
        path = kept / f"seed{seed}.csv"
        if args.from_log:
            # a run stopped early: rebuild its table from its progress lines
            work = WORK / label
            text = prepare(args.name, seed, args.cycles, args.replace)
            rows = reduce_log((work / f"seed{seed}.log").read_text(), seed, servers(text))
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path, rows)
        elif not args.combine:
            rows = job(seed)
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path, rows)
        with open(path) as f:
            return list(csv.DictReader(f))

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = [r for part in pool.map(seed_rows, args.seeds) for r in part]
    write(target, rows)
    print(target, file=sys.stderr)


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


if __name__ == "__main__":
    main()
