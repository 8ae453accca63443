#!/usr/bin/env bash
# The engine-kernel lane, on a machine with a device (docs/engine-kernels.md):
#   [HEADROOM_VLLM_DIR=DIR] scripts/engine_lane.sh [BUILD_DIR]
# vLLM's Triton kernel runs when HEADROOM_VLLM_DIR names a vLLM checkout (python3 with PyTorch and
# Triton needed); FlashInfer's decode and prefill kernels when BUILD_DIR was configured with
# -DHEADROOM_FLASHINFER_DIR (targets/engine/headroom_flashinfer_driver); FA3's scheduler kernel when it
# and attention kernels when it was configured with -DHEADROOM_FA3_DIR (targets/engine/headroom_fa3_driver).
# BUILD_DIR (default build/)
# holds cli/headroom, targets/engine/ (the engine worker and its drivers) and
# tests/engine_target/engine_agree. Everything lands in $OUT (default ./engine-lane-out):
#   versions.txt         device, torch, triton, the checkouts' commits
#   laguna_*.txt/.json   Laguna XS.2 at TP 1, 2, 4, 8 on vLLM's kernel: model-wide heads, the fixed mirror
#   fi_laguna_*.txt/.json  the same on FlashInfer's decode kernel
#   gemma4_c2.txt/.json  Gemma 4 with the C2 historical builder (segm_output padded for the model's head size)
#   fa3_driver.txt       FA3's scheduler and attention kernels against hand-worked values and the fp32
#                        reference (engine_target_fa3_driver_test)
#   fa3_rows_*.txt, fa3_laguna_*.txt/.json  a layer of more query heads per kv head than the schedule's
#                        (regressions/c3-fa3-layer-heads-rows.json) and Laguna XS.2 at TP 1-8 (the fixed
#                        mirror and model-wide-heads), on the formulas and on FA3's kernels
#   fa3_c3.md, fa3/      C3 (llama-3-8b, TP 1-8, the fixed mirror and the three FA3 mutants): the first
#                        failing value on the formulas and on FA3's kernel
#   fuzz_fa3_*.txt, fuzz_fa3_*/  FA3 campaigns on FA3's kernel (FA3_FUZZ_TIME each, default 120s):
#                        the fixed mirror, and the no-roundup mutant as the control
#   fault.txt            a dumped block table cut narrower than the engine needs: the kernel reads
#                        canaries as block ids and faults; the check goes on and reports it
#   agree_decode.md/.csv, agree_prefill.md/.csv   engine kernel vs simulator on random cases
#   truth.tsv, truth/    every bundled config x TP x mirror x backend x group: the failing decode
#                        batches on the formulas and on the engine's kernel (truth_table.py)
#   bench_decode.md/.json, bench_prefill.md/.json   the engines' kernels timed (bench/engine_kernels)
#   audit_*.txt, audit_*/  docs/audit.md's campaigns, side by side, AUDIT_TIME each (default 10m): vLLM
#                        Triton, FlashInfer and FA3 on their kernels, every backend under the SGLang
#                        flavour, and headroom's own bodies (--target gpu); not in the default STEPS
# Knobs: STEPS (laguna gemma fault flashinfer fa3 agree truth bench, and audit: which parts run;
# those of an engine that is not there are skipped), CASES (1000), PREFILL_CASES (1000), REPEAT
# (30), BENCH_TP (1,8), JOBS (4), SEED (2026; the audit's campaigns take SEED + 1 to SEED + 5 by
# name), AUDIT_TIME (10m); the truth table (tests/engine_target/truth_table.py): TRUTH_CONFIGS
# (paths, space-separated; every bundled config), TRUTH_TARGETS (engine; sim adds the simulator),
# TRUTH_JOBS (nproc), TRUTH_BUDGET (seconds: no new command starts after it), TRUTH_SAMPLE_MAX (the
# sample's powers of two stop there; 0: at the largest batch), TRUTH_MIRRORS (which, in which order;
# all), TRUTH_FROM (an earlier truth/ whose other targets' results join the table).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="${OUT:-$PWD/engine-lane-out}"
mkdir -p "$out"
cd "$root"
have_vllm=${HEADROOM_VLLM_DIR:+yes}
have_fi=$([[ -x "$build/targets/engine/headroom_flashinfer_driver" ]] && echo yes)
have_fa3=$([[ -x "$build/targets/engine/headroom_fa3_driver" ]] && echo yes)
[[ -n "$have_vllm$have_fi$have_fa3" ]] || { echo "engine_lane: neither HEADROOM_VLLM_DIR nor a FlashInfer or FA3 driver in $build" >&2; exit 2; }
export HEADROOM_VLLM_DIR="${HEADROOM_VLLM_DIR:-}"
hr="$build/cli/headroom"
say() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" | tee -a "$out/lane.log"; }
run() {  # NAME CMD...: stdout to NAME.txt, exit code and seconds to the log
  local name="$1" t0=$SECONDS rc
  shift
  "$@" >"$out/$name.txt" 2>&1
  rc=$?
  echo "$name: exit $rc in $((SECONDS - t0)) s" | tee -a "$out/lane.log"
  return 0
}

say versions
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  [[ -n "$have_vllm" ]] && echo "vllm $(cat "$HEADROOM_VLLM_DIR/COMMIT" 2>/dev/null || git -C "$HEADROOM_VLLM_DIR" rev-parse HEAD 2>/dev/null)"
  [[ -n "$have_fi" ]] && echo "flashinfer $(grep -ao 'flashinfer@[0-9a-f]*' "$build/targets/engine/headroom_flashinfer_driver" | head -1)"
  [[ -n "$have_fa3" ]] && echo "fa3 $(grep -ao 'flash-attention@[0-9a-f]*' "$build/targets/engine/headroom_fa3_driver" | head -1)"
  } >"$out/versions.txt" 2>&1
cat "$out/versions.txt"

steps=" ${STEPS:-laguna gemma fault flashinfer fa3 agree truth bench} "
want() {
  [[ "$steps" == *" $1 "* ]] || return 1
  case $1 in laguna | gemma | fault) [[ -n "$have_vllm" ]] ;; flashinfer) [[ -n "$have_fi" ]] ;; fa3) [[ -n "$have_fa3" ]] ;; esac
}

laguna_on() {  # BACKEND PREFIX [FLAGS]: Laguna XS.2 at TP 1-8 on that engine's kernel, model-wide and fixed
  local args=(configs/laguna-xs2.json --tp 1,2,4,8 --backend "$1" --target engine "${@:3}")
  run "${2}model_wide" "$hr" check "${args[@]}" --policy model-wide --json "$out/${2}model_wide.json"
  run "${2}fixed" "$hr" check "${args[@]}" --json "$out/${2}fixed.json"
  grep -E "^$1|verdict" "$out/${2}model_wide.txt" | head -20
}

if want laguna; then
say "Laguna XS.2 on vLLM's Triton kernel"
laguna_on triton laguna_
fi

if want gemma; then
say "Gemma 4, the C2 historical builder"
run gemma4_c2 "$hr" check configs/gemma4-31b.json --tp 1,2,4,8 --backend triton --target engine \
  --mutant triton-model-head-size --json "$out/gemma4_c2.json"
grep -E "^triton|verdict" "$out/gemma4_c2.txt" | head -20
fi

if want fault; then
say "a planted fault: the block table cut to 16 blocks a row"
"$hr" plan configs/laguna-xs2.json --tp 1 --backend triton --json "$out/plan.json" >/dev/null
python3 - "$out/plan.json" "$out/plan_cut.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
for b in p["ranks"][0]["groups"][0]["buffers"]:
    if b["name"] == "block_table":
        b["shape"], b["bytes"] = [256, 16], 256 * 16 * 4
json.dump(p, open(sys.argv[2], "w"))
EOF
run fault "$hr" verify "$out/plan_cut.json" --target engine
grep -E "fault|VIOLATION|verdict" "$out/fault.txt" | head -8
fi

if want flashinfer; then
say "Laguna XS.2 on FlashInfer's decode kernel"
laguna_on flashinfer fi_laguna_ --flashinfer-decode cuda-cores  # check's default decodes on tensor cores
fi

if want fa3; then
say "FA3's scheduler and attention kernels"
HEADROOM_FA3_DRIVER="$build/targets/engine/headroom_fa3_driver" run fa3_driver \
  "$build/tests/engine_target/engine_target_fa3_driver_test"
tail -3 "$out/fa3_driver.txt"
for t in model engine; do
  "$hr" replay regressions/c3-fa3-layer-heads-rows.json --target $t >"$out/fa3_rows_$t.txt" 2>&1
  echo "fa3 rows replay $t: exit $?" | tee -a "$out/lane.log"
  for m in fixed model-wide-heads; do
    flags=(configs/laguna-xs2.json --tp 1,2,4,8 --backend fa3 --engine-flavour vllm --target $t)
    [[ "$m" != fixed ]] && flags+=(--mutant "$m")
    HEADROOM_ENGINE_RUNS="$out/fa3_laguna_${m}_runs_$t.tsv" "$hr" check "${flags[@]}" \
      --json "$out/fa3_laguna_${m}_$t.json" >"$out/fa3_laguna_${m}_$t.txt" 2>&1
    echo "fa3 laguna $m $t: exit $?" | tee -a "$out/lane.log"
  done
done
grep -h "VIOLATION" "$out"/fa3_rows_engine.txt "$out"/fa3_laguna_*_engine.txt | sort | uniq -c | tee -a "$out/lane.log"
mkdir -p "$out/fa3"
{ echo "| mirror | settings | TP | formulas | FA3's kernel |"; echo "| --- | --- | --- | --- | --- |"; } >"$out/fa3_c3.md"
for m in fixed fa3-metadata-old-layout "fa3-metadata-no-roundup --max-num-seqs 1" fa3-split-mismatch; do
  read -r mutant extra <<<"$m"
  flags=(configs/llama-3-8b.json --tp 1,2,4,8 --backend fa3 --engine-flavour vllm)
  [[ -n "$extra" ]] && read -ra more <<<"$extra" && flags+=("${more[@]}")
  [[ "$mutant" != fixed ]] && flags+=(--mutant "$mutant")
  for t in model engine; do
    "$hr" check "${flags[@]}" --target $t --json "$out/fa3/${mutant}_$t.json" >"$out/fa3/${mutant}_$t.txt" 2>&1
    echo "fa3 $mutant $t: exit $?" | tee -a "$out/lane.log"
  done
  python3 tests/engine_target/c3_rows.py "$out/fa3/${mutant}_model.json" "$out/fa3/${mutant}_engine.json" \
    "$mutant" "${extra:-defaults}" >>"$out/fa3_c3.md"
done
cat "$out/fa3_c3.md"
for m in fixed fa3-metadata-no-roundup; do
  flags=(--target engine --backend fa3 --engine-flavour vllm --time "${FA3_FUZZ_TIME:-120s}" --seed "${SEED:-2026}"
    --out "$out/fuzz_fa3_$m")
  [[ "$m" != fixed ]] && flags+=(--mutant "$m")
  HEADROOM_ENGINE_RUNS="$out/fuzz_fa3_${m}_runs.tsv" run "fuzz_fa3_$m" "$hr" fuzz "${flags[@]}"
  tail -4 "$out/fuzz_fa3_$m.txt"
  cut -f1,2 "$out/fuzz_fa3_${m}_runs.tsv" | sort | uniq -c | tee -a "$out/lane.log"
done
fi

if want agree; then
say "engine kernel vs simulator, random cases"
"$build/tests/engine_target/engine_agree" --lane decode --cases "${CASES:-1000}" --jobs "${JOBS:-4}" \
  --seed "${SEED:-2026}" --out "$out" >"$out/agree_decode.md" 2>&1
echo "agree decode: exit $?" | tee -a "$out/lane.log"
mv "$out/engine_agreement.csv" "$out/agree_decode.csv" 2>/dev/null
cat "$out/agree_decode.md"
"$build/tests/engine_target/engine_agree" --lane prefill --cases "${PREFILL_CASES:-1000}" --jobs "${JOBS:-4}" \
  --seed "${SEED:-2026}" --out "$out" >"$out/agree_prefill.md" 2>&1
echo "agree prefill: exit $?" | tee -a "$out/lane.log"
mv "$out/engine_agreement.csv" "$out/agree_prefill.csv" 2>/dev/null
cat "$out/agree_prefill.md"
fi

if want truth; then
  say "ground truth: every bundled config, formulas vs simulator vs engine"
  backends=()
  [[ -n "$have_vllm" ]] && backends+=(triton)
  [[ -n "$have_fi" ]] && backends+=(flashinfer)
  cfgs=""
  for c in ${TRUTH_CONFIGS:-}; do cfgs+="${cfgs:+,}$c"; done
  python3 tests/engine_target/truth_table.py --headroom "$hr" --out "$out/truth" \
    --backends "$(IFS=,; echo "${backends[*]}")" --targets "${TRUTH_TARGETS:-engine}" \
    --jobs "${TRUTH_JOBS:-$(nproc)}" --deadline "${TRUTH_BUDGET:-86400}" ${cfgs:+--configs "$cfgs"} \
    --sample-max "${TRUTH_SAMPLE_MAX:-0}" ${TRUTH_MIRRORS:+--mirrors "$TRUTH_MIRRORS"} \
    ${TRUTH_FROM:+--from "$TRUTH_FROM"} 2>&1 | tee "$out/truth.log" | tail -3
  echo "truth: exit ${PIPESTATUS[0]}" | tee -a "$out/lane.log"
  cp "$out/truth/truth.tsv" "$out/truth.tsv" 2>/dev/null
fi

if want audit; then
  say "the audit's campaigns, side by side, ${AUDIT_TIME:-10m} each"
  # name:seed offset:flags (the seed of a campaign does not depend on which engines are present)
  camps=()
  [[ -n "$have_vllm" ]] && camps+=("triton:1:--target engine --backend triton --engine-flavour vllm")
  [[ -n "$have_fi" ]] && camps+=("flashinfer:2:--target engine --backend flashinfer --engine-flavour vllm")
  [[ -n "$have_fa3" ]] && camps+=("fa3:3:--target engine --backend fa3 --engine-flavour vllm")
  camps+=("sglang:4:--target engine --engine-flavour sglang")
  [[ -x "$build/targets/gpu/headroom_gpu_worker" ]] && camps+=("gpu:5:--target gpu --jobs 64")
  engine_jobs=$(($(nproc) / ${#camps[@]}))
  ((engine_jobs < 1)) && engine_jobs=1
  trap 'kill $(jobs -p) 2>/dev/null' INT TERM  # an interrupted lane stops its campaigns too
  for c in "${camps[@]}"; do
    IFS=: read -r name offset rest <<<"$c"
    read -ra flags <<<"$rest"
    [[ "$name" != gpu ]] && flags+=(--jobs "$engine_jobs")
    HEADROOM_ENGINE_RUNS="$out/audit_${name}_runs.tsv" run "audit_$name" "$hr" fuzz "${flags[@]}" \
      --time "${AUDIT_TIME:-10m}" --seed $((${SEED:-2026} + offset)) --out "$out/audit_$name" &
  done
  wait
  trap - INT TERM
  for c in "${camps[@]}"; do
    name=${c%%:*}
    echo "-- $name" | tee -a "$out/lane.log"
    grep -E '^headroom fuzz: seed|cases in|distinct counterexample|^  \[|repro:|^verdict' "$out/audit_$name.txt" |
      tee -a "$out/lane.log"
    [[ -f "$out/audit_${name}_runs.tsv" ]] && cut -f1,2 "$out/audit_${name}_runs.tsv" | sort | uniq -c | tee -a "$out/lane.log"
  done
fi

if want bench && [[ ! -x "$build/bench/engine_kernels" ]]; then
  echo "bench: no $build/bench/engine_kernels (build the engine_kernels target)" | tee -a "$out/lane.log"
elif want bench; then
  say "the engines' kernels timed"
  for step in decode prefill; do
    "$build/bench/engine_kernels" --step $step --repeat "${REPEAT:-30}" --tp "${BENCH_TP:-1,8}" \
      --out "$out/bench_$step.json" >"$out/bench_$step.md" 2>&1
    echo "bench $step: exit $?" | tee -a "$out/lane.log"
    cat "$out/bench_$step.md"
  done
fi
