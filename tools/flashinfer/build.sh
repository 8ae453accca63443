#!/usr/bin/env bash
# Build and run planner_compare against a FlashInfer checkout (docs/flashinfer-planner.md).
#   tools/flashinfer/build.sh FLASHINFER_DIR OUTDIR [planner_compare arguments...]
# FLASHINFER_DIR holds include/flashinfer/attention/scheduler.cuh. Builds OUTDIR/planner_compare
# (host only: nvcc -cudart none, no GPU needed) and OUTDIR/occupancy (sm_90, run it on a GPU), then
# runs planner_compare with the remaining arguments. Exit status: planner_compare's.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 FLASHINFER_DIR OUTDIR [decode_inputs prefill_inputs seed [exact-grid]]" >&2
  exit 2
fi
fi_dir="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
shift 2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
cuda_inc="$(dirname "$(dirname "$nvcc")")/include"
here="$root/tools/flashinfer"
inc=(-I"$here/shim" -I"$fi_dir/include")
cd "$out"
"$nvcc" -std=c++17 -O2 -cudart none "${inc[@]}" -c "$here/fi_side.cu" -o fi_side.o
objs=(fi_side.o)
for src in tools/flashinfer/planner_compare.cpp tools/flashinfer/runtime_stubs.cpp core/backends/fi_decode.cpp \
  core/backends/fi_prefill.cpp core/backends/fi_device.cpp core/backends/batch.cpp core/util/error.cpp \
  core/util/one_line.cpp core/model/geometry.cpp; do
  obj="$(basename "$src" .cpp).o"
  g++ -std=c++20 -O2 -I"$root" -I"$cuda_inc" -c "$root/$src" -o "$obj"
  objs+=("$obj")
done
g++ "${objs[@]}" -o planner_compare
if [[ "${HEADROOM_SKIP_OCCUPANCY:-0}" != 1 ]]; then
  "$nvcc" -std=c++17 -O2 -arch=sm_90 "${inc[@]}" "$here/occupancy.cu" -o occupancy
fi
./planner_compare "$@"
