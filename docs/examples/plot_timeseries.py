"""Throughput over time around a hotspot burst, with the phases marked.

    .venv/bin/python docs/examples/plot_timeseries.py [OUT_DIR]

The recovery scenario of Postigo et al. on a 128-host fat-tree: a uniform warm-up, a
500-cycle hotspot burst, then the 12 hotspot senders capped at 0.07, below their fair
share of the hotspot (1/12 on this fabric). The backlog the burst left drains at the
difference, so the closer the cap to 1/12, the longer the uniform hosts take to recover
(try 0.08). Writes throughput.png (and the run's results) to OUT_DIR.
"""

import sys
from pathlib import Path

import snarl
from snarl import plots

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "out" / "examples" / "plot_timeseries"
    report = snarl.run(
        REPO / "scenarios" / "endpoint-congestion" / "recovery-fat-tree.toml",
        set={
            "topology.levels": 2,  # 128 hosts instead of 1024
            "traffic.groups.0.count": 13,  # about 10% of them, like the paper's 105 of 1024
            "simulation.duration": "60000cycles",
            "simulation.window": "250cycles",
            "traffic.phases.1.cap": 0.07,
        },
    )
    recovery = report.summary["recovery"]
    print(
        f"uniform hosts: {recovery['pre_burst_load']:.3f} before the burst, "
        f"{recovery['lowest_load']:.3f} at worst, "
        + (f"recovered after {recovery['time_to_recover']:.0f} cycles" if recovery["recovered"] else "not recovered")
    )
    fig = plots.throughput_over_time(
        report.timeseries,
        phases=report.config["traffic"]["phases"],  # their `at` and `label`
        unit=report.summary["time_unit"],
        title="Recovery after a hotspot burst (128-host fat-tree)",
    )
    out.mkdir(parents=True, exist_ok=True)
    report.write(out)
    fig.savefig(out / "throughput.png")
    print(f"figure: {out / 'throughput.png'}")


if __name__ == "__main__":
    main()
