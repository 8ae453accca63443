#!/usr/bin/env bash
# The GPU lane in one command, on a machine with a device:
#   scripts/gpu_lane.sh [BUILD_DIR]     build (unless BUILD_DIR already holds the binaries), run
#                                        `ctest -L gpu`, then the agreement driver: >= 1,000 random
#                                        cases (sim vs guards vs device-checked, a compute-sanitizer
#                                        sample), cost per case, the Laguna XS.2 Triton thresholds;
#                                        then the prefill lane (--lane prefill: FlashInfer prefill,
#                                        mixed steps on both backends, tensor-core decode with C10),
#                                        then the engine rows: the engines' own kernels vs the
#                                        simulator on random decode and prefill cases (engine_agree;
#                                        skipped unless BUILD_DIR has the FlashInfer driver or
#                                        HEADROOM_VLLM_DIR names a vLLM checkout).
#   scripts/gpu_lane.sh --pack BUILD_DIR CARRY_DIR
#                                        on the build machine: copy only what the lane runs (test
#                                        binaries, the GPU worker, CTest files, the CLI) into CARRY_DIR, small enough
#                                        to carry to a GPU machine that cannot build (no packages).
# Everything lands in $OUT (default ./gpu-lane-out), in at most 8 files (lane.log, ctest_gpu.log,
# agree.log, summary.md, agreement.csv, cost.csv, laguna_gpu.json, sanitizer.log), the prefill
# lane's in $OUT/prefill, the engine rows' in $OUT/engine (agree_decode.md/.csv,
# agree_prefill.md/.csv). LANES (decode prefill engine) picks the lanes. Knobs: CASES (1000), JOBS (8), COST (300),
# SANITIZER_SAMPLE (25 in-bounds + 25 overflowing), SEED (2026), AGREE_TIME and ENGINE_TIME (seconds for
# each agreement lane and each engine lane: the cases started by then; unset: no limit). Never changes the card's settings.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "${1:-}" == "--pack" ]]; then
  build="$(cd "$2" && pwd)"; carry="$3"
  rm -rf "$carry" && mkdir -p "$carry"
  src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
  (cd "$build" && find . -name CTestTestfile.cmake -o -name gpu_lane_test -o -name gpu_campaign_test -o -name gpu_wgmma_test -o -name gpu_agree -o -name prop_sim_gpu_test \
      -o -name headroom_gpu_worker -o -path ./cli/headroom -o -name engine_agree -o -name 'headroom_*_driver' \
      -o -name headroom_engine_worker -o -name vllm_triton_driver.py -o -name engine_target_fa3_driver_test) | while read -r f; do
    mkdir -p "$carry/$(dirname "$f")" && cp -p "$build/$f" "$carry/$f"
  done
  printf '%s\n%s\n' "$src" "$build" > "$carry/paths.txt"
  du -sh "$carry"
  exit 0
fi

build="${1:-$root/build-gpu}"
out="${OUT:-$PWD/gpu-lane-out}"
mkdir -p "$out"
export CUDA_MODULE_LOADING=EAGER  # load every kernel at worker start: no first-launch cost in timings
cd "$root"
say() { printf '\n== %s\n' "$*" | tee -a "$out/lane.log"; }

if [[ -f "$build/paths.txt" ]]; then  # a packed build: point its CTest files at this checkout
  old_src="$(sed -n 1p "$build/paths.txt")"; old_build="$(sed -n 2p "$build/paths.txt")"
  new_build="$(cd "$build" && pwd)"
  find "$build" -name CTestTestfile.cmake -exec sed -i -e "s#$old_build#$new_build#g" -e "s#$old_src#$root#g" {} +
elif [[ ! -x "$build/tests/gpu/gpu_agree" ]]; then
  say "build ($build)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release 2>&1 | tail -3 | tee -a "$out/lane.log"
  cmake --build "$build" -j"$(nproc)" 2>&1 | tail -5 | tee -a "$out/lane.log"
fi

say "device"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvcc --version 2>/dev/null | tail -1; compute-sanitizer --version 2>/dev/null | head -2; } | tee -a "$out/lane.log"

say "ctest -L gpu"
(cd "$build" && ctest -L gpu --output-on-failure 2>&1) | tee "$out/ctest_gpu.log"
rc_ctest=${PIPESTATUS[0]}

run_lane() {  # LANE OUT_DIR [extra gpu_agree arguments]
  local lane="$1" dir="$2"; shift 2
  mkdir -p "$dir"
  say "$lane lane: agreement, cost, compute-sanitizer sample"
  local start=$(date +%s)
  "$build/tests/gpu/gpu_agree" --lane "$lane" --sanitizer-cmd "$san" --cases "${CASES:-1000}" --jobs "${JOBS:-8}" \
      --cost "${COST:-300}" --sanitizer "${SANITIZER_SAMPLE:-25}" --seed "${SEED:-2026}" --timeout-ms 60000 \
      --out "$dir" ${AGREE_TIME:+--time-limit "$AGREE_TIME"} "$@" > "$dir/agree.log" 2>&1
  local rc=$?
  # At most a few files come back from a lent machine: the sanitizer's per-process logs become one.
  cat "$dir"/san/sanitizer-*.log > "$dir/sanitizer.log" 2>/dev/null && rm -rf "$dir/san"
  echo "gpu_agree --lane $lane exit $rc after $(( $(date +%s) - start )) s" | tee -a "$out/lane.log"
  cat "$dir/summary.md" 2>/dev/null || tail -20 "$dir/agree.log"
  return $rc
}
san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || echo compute-sanitizer)"
engine_rows() {  # the engines' kernels vs the simulator, decode and prefill lanes
  local dir="$out/engine" agree="$build/tests/engine_target/engine_agree"
  if [[ ! -x "$agree" ]] || [[ -z "${HEADROOM_VLLM_DIR:-}" && ! -x "$build/targets/engine/headroom_flashinfer_driver" ]]; then
    say "engine rows: skipped (no engine_agree, or neither a FlashInfer driver nor HEADROOM_VLLM_DIR)"
    return 0
  fi
  mkdir -p "$dir"
  local rc=0 lane
  for lane in decode prefill; do
    say "engine rows, $lane: engine kernels vs simulator"
    "$agree" --lane "$lane" --cases "${CASES:-1000}" --jobs "${JOBS:-8}" --seed "${SEED:-2026}" --out "$dir" \
        ${ENGINE_TIME:+--time-limit "$ENGINE_TIME"} \
        > "$dir/agree_$lane.md" 2>&1 || rc=1
    mv "$dir/engine_agreement.csv" "$dir/agree_$lane.csv" 2>/dev/null
    tail -40 "$dir/agree_$lane.md" | tee -a "$out/lane.log"
  done
  return $rc
}
rc_agree=0
for lane in ${LANES:-decode prefill engine}; do
  if [[ "$lane" == decode ]]; then run_lane decode "$out" --laguna configs/laguna-xs2.json || rc_agree=1
  elif [[ "$lane" == engine ]]; then engine_rows || rc_agree=1
  else run_lane "$lane" "$out/$lane" || rc_agree=1; fi
done

if [[ -x "$build/cli/headroom" ]]; then
  say "headroom check --target gpu"
  "$build/cli/headroom" check configs/laguna-xs2.json --tp 1,2,4,8 --backend triton --policy model-wide \
      --target gpu --json "$out/laguna_cli.json" > "$out/laguna_cli.txt" 2>&1
  echo "headroom check exit $? (1 = violations found, expected here)" | tee -a "$out/lane.log"
  tail -15 "$out/laguna_cli.txt"
fi
(( rc_ctest == 0 && rc_agree == 0 ))
