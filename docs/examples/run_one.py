"""Run one experiment from Python, change it with overrides, and read the results.

    .venv/bin/python docs/examples/run_one.py [OUT_DIR]

Simulates uniform traffic beside a hotspot on a 128-host fat-tree twice, without and with
throttling the hotspot senders, and prints what the uniform hosts get. With OUT_DIR, the
throttled run's summary, resolved config and time series are written there.
"""

import sys
from pathlib import Path

import snarl

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml"


def main() -> None:
    for cap in (1.0, 0.0833):
        # Overrides use the dotted keys of the TOML file; list elements by index.
        report = snarl.run(EXPERIMENT, set={"traffic.groups.0.cap": cap}, seed=1)
        uniform = report.summary["groups"]["uniform"]
        print(
            f"hotspot cap {cap:<6}: uniform hosts offer {uniform['offered_load']:.3f}, "
            f"accept {uniform['accepted_load']:.3f} of their link; "
            f"p99 latency {uniform['latency']['p99']:.0f} {report.summary['time_unit']}"
        )
    # One row per node group, nested figures flattened (latency_p99, packets_delivered...).
    print(report.groups[["hosts", "offered_load", "accepted_load", "latency_p99"]])
    # The time series: one row per (window, group).
    series = report.timeseries
    print(series[series["group"] == "uniform"].tail(3))
    if len(sys.argv) > 1:
        out = Path(sys.argv[1])
        out.mkdir(parents=True, exist_ok=True)
        report.write(out)  # summary.json, config.toml, timeseries.parquet
        print(f"written to {out}")


if __name__ == "__main__":
    main()
