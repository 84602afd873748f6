"""``python -m validation [--quick] [--only PAPER ...] [--out DIR] [--processes N]``"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from validation import endpoint, infiniband, isolation, nccl, production
from validation.lab import REPO, Lab, ValidationError

PAPERS = {"endpoint": endpoint, "infiniband": infiniband, "isolation": isolation, "production": production, "nccl": nccl}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m validation",
        description="Runs the papers' experiments at full length and prints each figure beside the paper's.",
    )
    parser.add_argument("--only", action="append", choices=list(PAPERS), help="one paper (repeatable); all by default")
    parser.add_argument("--quick", action="store_true", help="every experiment shortened, one point per sweep")
    parser.add_argument("--out", type=Path, help="where runs are cached and figures.md written (out/validate[-quick])")
    parser.add_argument("--processes", type=int, help="runs at a time (one per CPU by default)")
    args = parser.parse_args(argv)
    if args.processes is not None and args.processes < 1:
        parser.error("--processes must be at least 1")

    out = args.out or REPO / "out" / ("validate-quick" if args.quick else "validate")
    lab = Lab(out, quick=args.quick, processes=args.processes)
    started = time.monotonic()
    sections = [heading(args.quick)]
    try:
        for name in args.only or list(PAPERS):
            paper = PAPERS[name]
            begun = time.monotonic()
            text = f"## {paper.TITLE}\n\n" + "\n".join(t.markdown() for t in paper.tables(lab))
            print(text, flush=True)
            sections.append(text)
            lab.say(f"{name}: {time.monotonic() - begun:.0f} s")
    except ValidationError as e:
        print(f"validation: {e}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    sections.append(f"{lab.runs_done} runs ({lab.seconds_run:,.0f} s of simulation) in {elapsed:,.0f} s.\n")
    out.mkdir(parents=True, exist_ok=True)
    (out / "figures.md").write_text("\n".join(sections))
    lab.say(f"{lab.runs_done} runs in {elapsed:.0f} s; tables in {out / 'figures.md'}")
    return 0


def heading(quick: bool) -> str:
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    kind = "shortened check (--quick): not figures to quote" if quick else "full length"
    return f"# snarl against the papers\n\n{kind}; snarl {commit or 'unknown'}, {time.strftime('%Y-%m-%d')}.\n"


if __name__ == "__main__":
    sys.exit(main())
