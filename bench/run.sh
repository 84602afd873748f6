#!/usr/bin/env bash
# Runs the benchmark cases, one process each (so peak memory is the case's own), prints a
# Markdown table and appends it to bench/results.md. Usage: bench/run.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/snarl-bench}
[ -x "$bin" ] || cargo build --release -p snarl-core --bin snarl-bench

fat_tree=scenarios/basics/fat-tree-1024-uniform.toml
# name | scenario | overrides
cases=(
  "fat-tree-1024 load 0.5|$fat_tree|traffic.load=0.5 simulation.duration=200us"
  "fat-tree-1024 load 0.7|$fat_tree|traffic.load=0.7 simulation.duration=200us"
  "fat-tree-1024 load 1.0|$fat_tree|traffic.load=1.0 simulation.duration=200us"
  "fat-tree-65536 (k=64) load 0.5|$fat_tree|topology.radix=64 traffic.load=0.5 simulation.duration=5us simulation.warmup=1us"
)

results=$(mktemp)
for case in "${cases[@]}"; do
  IFS='|' read -r name file overrides <<<"$case"
  # shellcheck disable=SC2086
  "$bin" "$name" "$file" $overrides >>"$results"
done

table=$(python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| case | hosts | accepted | Mhops/s | Mevents/s | wall s | peak MiB | KiB/host |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['name']} | {r['hosts']} | {r['accepted_load']:.3f} | {r['packet_hops_per_second']/1e6:.2f} "
          f"| {r['events_per_second']/1e6:.2f} | {r['wall_seconds']:.2f} | {r['peak_rss_mib']:.0f} "
          f"| {r['peak_rss_kib_per_host']:.1f} |")
by = {r["name"]: r for r in rows}
ratio = by["fat-tree-1024 load 1.0"]["peak_rss_mib"] / by["fat-tree-1024 load 0.5"]["peak_rss_mib"]
big = by["fat-tree-65536 (k=64) load 0.5"]["peak_rss_mib"] / 1024
print()
print(f"Peak memory at load 1.0 / at 0.5: {ratio:.2f} (bound: 1.5). "
      f"65,536-host fat-tree: {big:.2f} GiB (bound: 8 GiB).")
PY
)
rm -f "$results"
echo "$table"
{
  echo
  echo "## $(date -u +%Y-%m-%d) $(git rev-parse --short HEAD 2>/dev/null || echo unknown) on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo
  echo "$table"
} >>bench/results.md
