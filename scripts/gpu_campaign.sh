#!/usr/bin/env bash
# The GPU campaign's numbers (docs/campaigns.md), on a machine with a device, into one file
# $OUT/campaign.log (default ./gpu-campaign-out):
#   scripts/gpu_campaign.sh BUILD_DIR      (a build tree, or one packed by scripts/gpu_lane.sh --pack)
# 1. throughput on the property mix: `headroom fuzz --target gpu --seed SEED --cases CASES --jobs J`
#    for each J in JOBS_LIST; the simulator on 2 cores (`taskset -c 0,1 ... --target sim --jobs 2`)
#    on the same machine for scale;
# 2. cold starts: the model-wide regression (`--policy model-wide --stop-after 1`) from seeds
#    1..COLD, each a fresh campaign: the first failing case's index and the seconds to the first
#    counterexample written (found, confirmed by the simulator and the device-checked build, shrunk);
# 3. compute-sanitizer on the same mix, for scale (`compute-sanitizer --target-processes all`
#    around the same campaign, SAN_CASES cases).
# Knobs: SEED (2026), CASES (20000), JOBS_LIST ("32 64 128"), COLD (10), COLD_JOBS (64),
# SIM_CASES (600), SAN_CASES (200). Never changes the card's settings.
set -uo pipefail
build="$(cd "${1:?usage: scripts/gpu_campaign.sh BUILD_DIR}" && pwd)"
headroom="$build/cli/headroom"
out="${OUT:-$PWD/gpu-campaign-out}"; mkdir -p "$out"; log="$out/campaign.log"
seed="${SEED:-2026}"; cases="${CASES:-20000}"
export CUDA_MODULE_LOADING=EAGER
say() { printf '\n== %s\n' "$*" | tee -a "$log"; }
summary() { grep -E "cases in|oracle|not confirmed|gpu batches|first failing|first counterexample|distinct|verdict" "$1"; }

say "device"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; } | tee -a "$log"

say "throughput: fuzz --target gpu --seed $seed --cases $cases"
for j in ${JOBS_LIST:-32 64 128}; do
  echo "-- --jobs $j" | tee -a "$log"
  "$headroom" fuzz --seed "$seed" --cases "$cases" --target gpu --jobs "$j" > "$out/run.txt" 2>&1
  echo "exit $?" | tee -a "$log"; summary "$out/run.txt" | tee -a "$log"
done

say "the simulator on 2 cores of this machine: fuzz --target sim --jobs 2 --cases ${SIM_CASES:-600}"
taskset -c 0,1 "$headroom" fuzz --seed "$seed" --cases "${SIM_CASES:-600}" --target sim --jobs 2 > "$out/run.txt" 2>&1
summary "$out/run.txt" | tee -a "$log"

say "cold starts: --policy model-wide --stop-after 1, seeds 1..${COLD:-10}, --jobs ${COLD_JOBS:-64}"
for s in $(seq 1 "${COLD:-10}"); do
  "$headroom" fuzz --seed "$s" --cases 1000000 --policy model-wide --stop-after 1 --target gpu \
      --jobs "${COLD_JOBS:-64}" > "$out/run.txt" 2>&1
  printf 'seed %s exit %s: %s; %s\n' "$s" "$?" "$(grep -oE 'first failing case: index [0-9]+ \([0-9]+ cases\), after [0-9.]+ s' "$out/run.txt")" \
      "$(grep -oE 'first counterexample written after [0-9.]+ s' "$out/run.txt")" | tee -a "$log"
done

san="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)"
if [[ -n "$san" ]]; then
  say "compute-sanitizer: the same mix, --cases ${SAN_CASES:-200} --jobs 32"
  "$san" --tool memcheck --target-processes all --print-limit 5 \
      "$headroom" fuzz --seed "$seed" --cases "${SAN_CASES:-200}" --target gpu --jobs 32 > "$out/run.txt" 2>&1
  echo "exit $?" | tee -a "$log"; summary "$out/run.txt" | tee -a "$log"
  grep -E "ERROR SUMMARY" "$out/run.txt" | sort | uniq -c | tee -a "$log"
fi
rm -f "$out/run.txt"
