"""snarl against CAMINOS 0.6.3 (the endpoint-congestion study's simulator) on the same work:
uniform traffic at load 1.0 on the 1,024-host fat-tree, the 1,296-host HyperX and the
1,056-host Dragonfly, 5,000 cycles of warm-up and 10,000 measured, one seed, the
configurations of validation/caminos (which map every setting). Each side runs as a whole
process, in turn (snarl, CAMINOS, snarl, CAMINOS); the CPU seconds of the quieter pair
are kept. Prints one Markdown table; prints nothing where CAMINOS is not installed
($CAMINOS, or `caminos` on the PATH).

Usage: python3 bench/caminos.py [SNARL_BENCH]
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "validation" / "caminos"))
from run import prepare  # noqa: E402  (the per-seed configuration, as the validation runs it)

WARMUP, MEASURED = 5_000, 10_000
FABRICS = ("fat-tree", "hyperx", "dragonfly")
PAIRS = 2


def caminos_binary() -> str | None:
    found = os.environ.get("CAMINOS") or shutil.which("caminos")
    return found if found and os.access(found, os.X_OK) else None


def timed(command: list[str]) -> tuple[float, str]:
    """User and system CPU seconds of `command`, run to its end, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def caminos_config(fabric: str) -> str:
    text = prepare(f"uniform-{fabric}", 1, None, [])
    text = re.sub(r"\bwarmup:\s*\d+", f"warmup: {WARMUP}", text)
    return re.sub(r"\bmeasured:\s*\d+", f"measured: {MEASURED}", text)


def main() -> int:
    caminos = caminos_binary()
    if caminos is None:
        return 0
    bench = sys.argv[1] if len(sys.argv) > 1 else str(REPO / "target/release/snarl-bench")
    print("| same work (uniform, load 1.0, 15,000 cycles) | CAMINOS CPU s | snarl CPU s | snarl M hops/s | CAMINOS / snarl |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="snarl-caminos-") as scratch:
        for fabric in FABRICS:
            config = Path(scratch) / f"{fabric}.cfg"
            config.write_text(caminos_config(fabric))
            scenario = REPO / "scenarios/endpoint-congestion" / f"uniform-{fabric}.toml"
            snarl = [bench, fabric, str(scenario), f"simulation.duration={WARMUP + MEASURED}cycles",
                     f"simulation.warmup={WARMUP}cycles", "traffic.load=1.0"]
            camino = [caminos, str(config), f"--results={Path(scratch) / (fabric + '.result')}"]
            pairs = [(timed(snarl), timed(camino)[0]) for _ in range(PAIRS)]
            (ours, printed), theirs = min(pairs, key=lambda pair: pair[0][0] + pair[1])
            hops = json.loads(printed)["packet_hops"]
            print(f"| {fabric} | {theirs:.1f} | {ours:.2f} | {hops / ours / 1e6:.2f} | {theirs / ours:.0f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
