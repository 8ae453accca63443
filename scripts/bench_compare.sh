#!/usr/bin/env bash
# One command on the GPU machine: headroom's decode benchmarks (bench/bench_gpu_decode.cu),
# the same shapes through torch SDPA with the same timing (scripts/bench_sdpa.py), then one table
# (shape, headroom kernels, SDPA, copy ceiling, fractions, guard overhead) and a plot.
# usage: scripts/bench_compare.sh [BENCH_BINARY] [OUT_DIR]
#   BENCH_BINARY  default build/bench/bench_gpu_decode (build with: cmake -S . -B build &&
#                 cmake --build build --target bench_gpu_decode)
#   OUT_DIR       default bench-out: headroom.json, sdpa.json, table.md, bench_decode.png
# Environment: BENCH_ARGS (extra Google Benchmark flags), BENCH_VARIANT (a benchmark-name suffix to
# tabulate, default none), BENCH_BASE (a JSON of another build for before/after columns),
# HEADROOM_BENCH_FLUSH=read (both timings flush L2 by reading instead of writing; docs/bench.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/bench/bench_gpu_decode}
out=${2:-$root/bench-out}
mkdir -p "$out"
# Google Benchmark writes JSON to stdout; the binary's own notes go to stderr.
"$bin" --benchmark_format=json ${BENCH_ARGS:-} > "$out/headroom.json" 2> "$out/headroom.log"
cat "$out/headroom.log" >&2
if ! grep -q '"benchmarks"' "$out/headroom.json"; then
  echo "bench_compare: the benchmark binary reported nothing (no device?)" >&2
  exit 0
fi
python3 "$root/scripts/bench_sdpa.py" --out "$out/sdpa.json"
base=()
[[ -n "${BENCH_BASE:-}" ]] && base=(--base "$BENCH_BASE")
python3 "$root/scripts/bench_table.py" "$out/headroom.json" --sdpa "$out/sdpa.json" \
  --variant "${BENCH_VARIANT:-}" "${base[@]}" --md "$out/table.md" --png "$out/bench_decode.png"
