#!/usr/bin/env bash
# Build and run planner_compare against a FlashInfer checkout (docs/flashinfer-planner.md).
#   tools/flashinfer/build.sh FLASHINFER_DIR OUTDIR [planner_compare arguments...]
# FLASHINFER_DIR holds include/flashinfer/attention/scheduler.cuh. A thin wrapper over the CMake
# project tools/flashinfer/CMakeLists.txt (configured in OUTDIR, which it builds headroom's core/
# into): OUTDIR/planner_compare (host only, no GPU needed) and OUTDIR/occupancy (sm_90, run it on a
# GPU; HEADROOM_SKIP_OCCUPANCY=1 skips it), then runs planner_compare with the remaining arguments.
# Exit status: planner_compare's.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 FLASHINFER_DIR OUTDIR [decode_inputs prefill_inputs seed [exact-grid]] | [--sm90 [inputs [seed]]] | [--self-test]" >&2
  exit 2
fi
fi_dir="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
shift 2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
occupancy=ON
[[ "${HEADROOM_SKIP_OCCUPANCY:-0}" == 1 ]] && occupancy=OFF
config=(-S "$here" -B "$out" -DHEADROOM_FLASHINFER_DIR="$fi_dir" -DHEADROOM_FLASHINFER_OCCUPANCY="$occupancy")
if [[ ! -f "$out/CMakeCache.txt" ]]; then
  command -v nvcc >/dev/null || config+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  command -v ninja >/dev/null && config+=(-G Ninja)
fi
cmake "${config[@]}" >"$out/configure.log" || { cat "$out/configure.log" >&2; exit 1; }
cmake --build "$out" --parallel "${HEADROOM_BUILD_JOBS:-$(nproc)}"
"$out/planner_compare" "$@"
