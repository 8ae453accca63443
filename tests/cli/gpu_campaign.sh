#!/usr/bin/env bash
# cli.gpu_campaign: `headroom fuzz --target gpu` (the campaign path: batches on a shared worker,
# failures confirmed by the simulator and the device-checked build, shrunk on the simulator) run
# against the simulated worker (tests/gpu/sim_worker.cpp), so it runs without a device:
#   1. model-wide (C1's mutant): the same counterexamples (signatures, shrunk sizes, file names) as
#      --target sim on the same seed and case count, with --jobs 1 and --jobs 6;
#   2. the fixed mirror (per-layer) is clean; the summary says what the batches did;
#   3. with MPIEXEC (and headroom_mpi built): the same under `mpirun -np 2`, a batcher per rank.
# Usage: gpu_campaign.sh HEADROOM SIMWORKER [MPIEXEC]
set -uo pipefail
headroom="$1"; export HEADROOM_GPU_WORKER_BIN="$2"; mpiexec="${3:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The found list of a summary without timings and repro lines.
found() { grep -E '^  (\[|[0-9]+ distinct)|^      shrunk' "$1" | sed -E 's/, written after.*//'; }

"$headroom" fuzz --seed 12 --cases 60 --policy model-wide --target sim --out "$tmp/sim" >"$tmp/sim.txt" 2>&1
[[ $? == 1 ]] || fail "--target sim: expected exit 1 (findings)"
for jobs in 1 6; do
  timeout 300 "$headroom" fuzz --seed 12 --cases 60 --policy model-wide --target gpu --jobs $jobs \
    --out "$tmp/gpu$jobs" >"$tmp/gpu$jobs.txt" 2>&1
  rc=$?
  [[ $rc == 1 ]] || { cat "$tmp/gpu$jobs.txt"; fail "--target gpu --jobs $jobs: exit $rc, expected 1"; }
  diff <(found "$tmp/sim.txt") <(found "$tmp/gpu$jobs.txt") || fail "--jobs $jobs: other counterexamples than --target sim"
  # The files' names (signature hashes) agree; their expectations name the target they ran on.
  diff <(ls "$tmp/sim") <(ls "$tmp/gpu$jobs") || fail "--jobs $jobs: other files than --target sim"
  grep -q "oracle sim + gpu checked (confirming)" "$tmp/gpu$jobs.txt" || fail "no confirmation line"
  grep -qE "gpu batches: [0-9]+ runs in [0-9]+ batches" "$tmp/gpu$jobs.txt" || fail "no batch line"
done
echo "model-wide: $(grep -c '^  \[' "$tmp/sim.txt") counterexamples, the same as the simulator's"

if [[ -n "$mpiexec" && -x "$(dirname "$headroom")/headroom_mpi" ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  timeout 300 "$mpiexec" -np 2 --oversubscribe "$headroom" fuzz --seed 12 --cases 60 --policy model-wide \
    --target gpu --jobs 3 --out "$tmp/mpi" >"$tmp/mpi.txt" 2>&1
  rc=$?
  [[ $rc != 0 ]] || { cat "$tmp/mpi.txt"; fail "mpirun -np 2 --target gpu: exit 0, expected findings"; }
  diff <(found "$tmp/sim.txt") <(found "$tmp/mpi.txt") || fail "2 ranks: other counterexamples than --target sim"
  diff <(ls "$tmp/sim") <(ls "$tmp/mpi") || fail "2 ranks: other files than --target sim"
  diff -r "$tmp/gpu1" "$tmp/mpi" >/dev/null || fail "2 ranks: files not byte-identical to one process's"
  grep -q "2 ranks x 3 jobs" "$tmp/mpi.txt" || fail "2 ranks: no 2-rank summary"
  echo "2 ranks: the same counterexamples"
fi

timeout 300 "$headroom" fuzz --seed 2026 --cases 80 --target gpu --jobs 4 >"$tmp/clean.txt" 2>&1
rc=$?
[[ $rc == 0 ]] || { cat "$tmp/clean.txt"; fail "per-layer: exit $rc, expected 0"; }
grep -E "cases in|gpu batches|not confirmed" "$tmp/clean.txt"
echo "PASS"
