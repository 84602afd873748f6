#!/usr/bin/env bash
# Instructions and cache misses per packet-hop of the 1024-host fat-tree and dragonfly
# (UGAL, the routing that reads the most switch state) and of the 648-host InfiniBand
# silent forest (VoQ switches, receive caps, IB CC off and on), counted by
# cachegrind on a short run. Unlike wall time, these do not depend on what else the
# machine is doing, so they tell small changes apart on a noisy shared machine. The last
# level is modelled as a 1 MiB cache, the size of the per-core L2 the hot loop lives in.
# Prints one Markdown table; prints nothing without valgrind.
# Usage: bench/counts.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/snarl-bench}
command -v valgrind >/dev/null 2>&1 || exit 0
# The binary runs from a path of fixed length: its path is copied onto the heap at
# start-up, so its length shifts every later allocation and, with it, which arrays
# straddle cache lines (about 0.2 last-level misses per hop on the dragonfly between
# two names of the same binary).
fixed=$(mktemp -d /tmp/snarl-counts.XXXXXXXX)
trap 'rm -rf "$fixed"' EXIT
cp "$bin" "$fixed/snarl-bench"
bin=$fixed/snarl-bench
fat_tree=scenarios/basics/fat-tree-1024-uniform.toml
dragonfly=scenarios/endpoint-congestion/uniform-dragonfly.toml
ib=scenarios/infiniband-cc
ici=scenarios/lossless-ethernet
echo "| case (cachegrind) | instructions / hop | L1d misses / hop | 1 MiB L2 misses / hop |"
echo "|---|---:|---:|---:|"
# name | scenario | overrides
cases=(
  "fat-tree-1024 load 0.7|$fat_tree|traffic.load=0.7 simulation.duration=100us"
  "fat-tree-1024 load 1.0|$fat_tree|traffic.load=1.0 simulation.duration=100us"
  "dragonfly-1056 UGAL load 0.7|$dragonfly|routing.type=ugal traffic.load=0.7 simulation.duration=4000cycles simulation.warmup=1000cycles"
  "dragonfly-1056 UGAL load 1.0|$dragonfly|routing.type=ugal traffic.load=1.0 simulation.duration=4000cycles simulation.warmup=1000cycles"
  "ib-648 silent forest, CC off|$ib/silent-forest-cc-off.toml|simulation.duration=3ms simulation.warmup=1ms"
  "ib-648 silent forest, CC on|$ib/silent-forest-cc-on.toml|simulation.duration=3ms simulation.warmup=1ms"
  "ici-64 one tree, PFC only|$ici/one-tree-none.toml|"
  "ici-64 one tree, ICI+|$ici/one-tree-ici-plus.toml|"
)
for case in "${cases[@]}"; do
  IFS='|' read -r name scenario overrides <<<"$case"
  log=$(mktemp)
  # shellcheck disable=SC2086
  line=$(valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 --cachegrind-out-file=/dev/null \
    "$bin" "$name" "$scenario" $overrides 2>"$log")
  python3 - "$log" "$line" <<'PY'
import json, re, sys
text, run = open(sys.argv[1]).read(), json.loads(sys.argv[2])
count = lambda label: int(re.search(label + r":\s+([\d,]+)", text).group(1).replace(",", ""))
hops = run["packet_hops"]
print(f"| {run['name']} | {count('I *refs') / hops:.0f} | {count('D1 *misses') / hops:.1f} "
      f"| {count('LLd misses') / hops:.1f} |")
PY
  rm -f "$log"
done

# The larger fabrics, against a last level of 32 MiB (the L3 of the machine the figures
# in bench/results.md come from): their state outgrows it, and the misses per hop tell
# by how much. Each case runs twice, the second time only built (a run of one time
# unit), and the counts of the second are taken from the first: what is left is the
# simulation's own, whatever the build costs.
scale=scenarios/scale
balanced="topology.hosts_per_switch=16 topology.switches_per_group=32 topology.global_links_per_switch=16 topology.groups=513"
echo
echo "| case (cachegrind, 32 MiB last level, build taken off) | instructions / hop | L1d misses / hop | 32 MiB LL misses / hop |"
echo "|---|---:|---:|---:|"
# name | scenario | overrides | overrides that leave only the build
scale_cases=(
  "fat-tree-1024 load 0.7|$fat_tree|traffic.load=0.7 simulation.duration=40us simulation.warmup=10us|simulation.duration=1ns simulation.warmup=0ns simulation.window=1ns"
  "fat-tree-4394 (k=26) load 0.7|$fat_tree|topology.radix=26 traffic.load=0.7 simulation.duration=20us simulation.warmup=10us|topology.radix=26 simulation.duration=1ns simulation.warmup=0ns simulation.window=1ns"
  "fat-tree-16000 (k=40) load 0.7|$fat_tree|topology.radix=40 traffic.load=0.7 simulation.duration=14us simulation.warmup=10us|topology.radix=40 simulation.duration=1ns simulation.warmup=0ns simulation.window=1ns"
  "fat-tree-65536 (k=64) load 0.7|$scale/fat-tree-65536.toml|simulation.duration=6us simulation.warmup=4us|simulation.duration=1ns simulation.warmup=0ns simulation.window=1ns"
  "dragonfly-262656 UGAL load 0.3|$dragonfly|$balanced routing.type=ugal traffic.load=0.3 simulation.duration=120cycles simulation.warmup=60cycles simulation.window=20cycles|$balanced simulation.duration=1cycles simulation.warmup=0cycles simulation.window=1cycles"
  "dragonfly-1120422 UGAL load 0.3|$scale/dragonfly-1m.toml|simulation.duration=40cycles simulation.warmup=20cycles simulation.window=20cycles|simulation.duration=1cycles simulation.warmup=0cycles simulation.window=1cycles"
)
for case in "${scale_cases[@]}"; do
  IFS='|' read -r name scenario overrides build_only <<<"$case"
  full=$(mktemp) built=$(mktemp)
  # shellcheck disable=SC2086
  line=$(valgrind --tool=cachegrind --cache-sim=yes --LL=33554432,16,64 --cachegrind-out-file=/dev/null \
    "$bin" "$name" "$scenario" $overrides 2>"$full")
  # shellcheck disable=SC2086
  valgrind --tool=cachegrind --cache-sim=yes --LL=33554432,16,64 --cachegrind-out-file=/dev/null \
    "$bin" "$name" "$scenario" $build_only 2>"$built" >/dev/null
  python3 - "$full" "$built" "$line" <<'PY'
import json, re, sys
full, built, run = open(sys.argv[1]).read(), open(sys.argv[2]).read(), json.loads(sys.argv[3])
count = lambda text, label: int(re.search(label + r":\s+([\d,]+)", text).group(1).replace(",", ""))
own = lambda label: count(full, label) - count(built, label)
hops = run["packet_hops"]
print(f"| {run['name']} | {own('I *refs') / hops:.0f} | {own('D1 *misses') / hops:.1f} "
      f"| {own('LLd misses') / hops:.2f} |")
PY
  rm -f "$full" "$built"
done
