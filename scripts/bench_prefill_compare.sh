#!/usr/bin/env bash
# One command on the GPU machine: headroom's prefill benchmarks (bench/bench_gpu_prefill.cu), torch
# SDPA causal prefill at the same shapes with the same timing, default / flash / cuDNN
# (scripts/bench_sdpa.py --prefill), then one table (scripts/bench_prefill_table.py): shape, plan,
# ours TFLOP/s, SDPA default / flash / cuDNN, ratios. A missing SDPA backend leaves its columns
# "n/a" with the reason under the table; the table is written whatever fails.
# usage: scripts/bench_prefill_compare.sh [BUILD] [OUT_DIR]
#   BUILD    a build dir holding bench/bench_gpu_prefill (or the binary, or the dir holding it; a lib/
#            next to the binary, with Google Benchmark's shared library, is put on LD_LIBRARY_PATH);
#            default build-gpu
#   OUT_DIR  default $OUT, else bench-prefill-out: device.txt, headroom.json, headroom.log, sdpa.json,
#            sdpa.log, table.md
# Environment: BENCH_ARGS (extra Google Benchmark flags), HEADROOM_BENCH_FLUSH=read (both timings
# flush L2 by reading instead of writing; docs/bench.md). Never changes the card's settings.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu}"
out="${2:-${OUT:-$PWD/bench-prefill-out}}"
mkdir -p "$out"
bin=""
for c in "$build" "$build/bench/bench_gpu_prefill" "$build/bench_gpu_prefill"; do
  [[ -f "$c" && -x "$c" ]] && { bin="$c"; break; }
done
[[ -n "$bin" ]] || { echo "bench_prefill_compare: no bench_gpu_prefill under $build" >&2; exit 1; }
lib="$(dirname "$bin")/lib"
if [[ -d "$lib" ]]; then
  lib="$(cd "$lib" && pwd)"
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
{ date -u +%FT%TZ; command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
# Google Benchmark writes JSON to stdout; the binary's own notes (plans, checks) go to stderr.
# shellcheck disable=SC2086  # BENCH_ARGS are words
"$bin" --benchmark_format=json ${BENCH_ARGS:-} > "$out/headroom.json" 2> "$out/headroom.log"
echo "bench_gpu_prefill: exit $?" >> "$out/headroom.log"
cat "$out/headroom.log" >&2
if ! grep -q '"benchmarks"' "$out/headroom.json"; then
  echo "bench_prefill_compare: the benchmark binary reported nothing (no device?)" >&2
  cat "$out/headroom.json" >&2
fi
python3 "$root/scripts/bench_sdpa.py" --prefill --out "$out/sdpa.json" 2>&1 | tee "$out/sdpa.log"
python3 "$root/scripts/bench_prefill_table.py" "$out/headroom.json" --sdpa "$out/sdpa.json" --md "$out/table.md"
