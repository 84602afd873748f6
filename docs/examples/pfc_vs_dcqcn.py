"""One congestion tree on a lossless Ethernet fabric, with PFC alone and with DCQCN.

    .venv/bin/python docs/examples/pfc_vs_dcqcn.py [OUT_DIR]

The ICI paper's 64-host RoCEv2 fabric: 48 hosts send uniform traffic while 16 others
send at line rate to one host for 1 ms. Prints, for each congestion control, what the
uniform senders (the victims) get and how often PFC paused a link, and writes, for each,
the victims' throughput above the pause frames, ECN marks and CNPs per window
(fabric-none.png, fabric-dcqcn.png) to OUT_DIR.
"""

import sys
from pathlib import Path

import snarl
from snarl import plots

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "out" / "examples" / "pfc_vs_dcqcn"
    out.mkdir(parents=True, exist_ok=True)
    for cc in ("none", "dcqcn"):
        report = snarl.run(REPO / "scenarios" / "lossless-ethernet" / f"one-tree-{cc}.toml")
        victims = report.summary["groups"]["victims"]
        pfc = report.summary["pfc"]
        print(
            f"{cc}: victims accept {victims['accepted_load']:.2f} of {victims['offered_load']:.2f}, "
            f"{pfc['pause_frames_sent']} pause frames, {pfc['paused_time'] / 1e6:.1f} ms of link time paused"
        )
        fig = plots.congestion_over_time(
            report.timeseries, report.fabric, phases=report.config["traffic"]["phases"], title=f"one tree, {cc}"
        )
        fig.savefig(out / f"fabric-{cc}.png")


if __name__ == "__main__":
    main()
