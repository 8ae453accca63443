#!/usr/bin/env bash
# The libFuzzer smoke run (ctest fuzz.smoke, label cpu; fuzz/README.md): builds fuzz/ with
# clang++-14 into BUILD_DIR, then runs each target for SECONDS on a corpus seeded at run time from
# configs/, tests/bad_inputs/, regressions/ and fuzz/seeds/plan/ (the stored inputs of
# fuzz/crashes/ are replayed by the ctest fuzz.crashes, not here: one of them takes seconds under
# the sanitizers).
# Exit 0 clean, 1 on a finding (its input is saved under BUILD_DIR/findings/), 77 (skip) when
# clang++-14 or its libFuzzer runtime is missing.
# Usage: smoke.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1
build=$2
seconds=${3:-15}

clang=$(command -v clang++-14 || true)
if [[ -z $clang || ! -f $("$clang" -print-file-name=libclang_rt.fuzzer-x86_64.a) ]]; then
  echo "fuzz.smoke: SKIP: clang++-14 with libFuzzer not found (scripts/bootstrap.sh installs them)"
  exit 77
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$src/fuzz" -B "$build" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=None \
           -DHEADROOM_FUZZ_OPT=-O0 &&
       cmake --build "$build" -j2; } >"$log" 2>&1; then
  cat "$log"
  echo "fuzz.smoke: the fuzz targets do not build"
  exit 1
fi

work=$build/smoke
rm -rf "$work"
mkdir -p "$work/config" "$work/case" "$work/plan" "$build/findings"
cp "$src"/configs/*.json "$src"/tests/bad_inputs/*.json "$work/config/"
cp "$src"/regressions/*.json "$work/case/"
cp "$src"/fuzz/seeds/plan/*.json "$work/plan/"

status=0
for target in config case plan; do
  # A config at the layer limit (10^5) takes about 10 s under the sanitizers: the timeout leaves
  # room for it on a loaded machine, and the energy of slow inputs is scaled down so that they do
  # not eat the run.
  if ! "$build/fuzz_$target" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
      -entropic_scale_per_exec_time=1 -dict="$src/fuzz/json.dict" \
      -artifact_prefix="$build/findings/$target-" "$work/$target" >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz.smoke: fuzz_$target found an input that breaks it (above, under $build/findings/):"
    echo "  store it in fuzz/crashes/$target/, fix the defect, and the replay test keeps it fixed"
    status=1
    continue
  fi
  echo "fuzz.smoke: fuzz_$target: $(grep -E '^Done [0-9]+ runs' "$log"), corpus $(ls "$work/$target" | wc -l) inputs"
done
exit $status
