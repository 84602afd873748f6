"""Sweep the offered load with and without throttling, then plot the load curves.

    .venv/bin/python docs/examples/sweep_loads.py [OUT_DIR]

The sweep runs on local processes (one per CPU); pass ``workers=4`` to snarl.sweep for a
local Dask cluster, or ``scheduler="tcp://host:8786"`` for a running one. Running the
script again reuses the points already in OUT_DIR.
"""

import sys
from pathlib import Path

import snarl
from snarl import plots

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "out" / "examples" / "sweep_loads"
    spec = {
        "name": "uniform traffic beside a hotspot",
        "base": str(REPO / "scenarios" / "demo" / "hotspot-fat-tree-small.toml"),
        "axes": {
            "traffic.load": [0.2, 0.5, 0.8, 1.0],
            "traffic.groups.0.cap": [1.0, 0.0833],  # unthrottled, or below 1/12
        },
        "set": {"simulation.duration": "10000cycles", "simulation.warmup": "2000cycles"},
    }
    table = snarl.sweep(spec, out)  # one row per point, as out/points.parquet
    print(table[["point_id", "traffic.load", "traffic.groups.0.cap", "status",
                 "groups.uniform.accepted_load"]].to_string(index=False))

    fig = plots.load_curve(
        table,
        x="groups.uniform.offered_load",
        y="groups.uniform.accepted_load",
        hue="traffic.groups.0.cap",
        title="Uniform hosts beside a hotspot",
    )
    fig.savefig(out / "load-curve.png")
    print(f"figure: {out / 'load-curve.png'}")


# The guard is good style; snarl.sweep works without it too (its workers do not import this file).
if __name__ == "__main__":
    main()
