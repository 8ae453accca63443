#!/usr/bin/env bash
# Campaign throughput: the same campaign (seed, case count) as one process and over MPI ranks,
# cases/s from each summary (wall clock, start to summary), and the CPU seconds it took (user +
# system of every rank), median of REPEAT runs. The load average before and after says how busy
# the machine was: on a shared machine, read the CPU column as well as the wall clock.
#   scripts/bench_campaign.sh BUILD_DIR
# Knobs (environment): CASES (400), SEED (2026), TARGET (sim; gpu on a machine with devices, one
# GPU per rank), RANKS ("1 2": mpirun -np N; 0 is one process without MPI), POLICY (per-layer;
# model-wide for a campaign that finds, shrinks and writes), JOBS (1 per rank), REPEAT (3).
set -euo pipefail
build="${1:?usage: scripts/bench_campaign.sh BUILD_DIR}"
headroom="$build/cli/headroom"
cases="${CASES:-400}"; seed="${SEED:-2026}"; target="${TARGET:-sim}"; ranks="${RANKS:-0 1 2}"
policy="${POLICY:-per-layer}"; jobs="${JOBS:-1}"; repeat="${REPEAT:-3}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# campaign: --seed $seed --cases $cases --target $target --policy $policy --jobs $jobs; $(nproc) cores"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| processes | cases/s (median of $repeat) | CPU s (median) | cases per CPU s | runs (cases/s) |"
echo "| --- | --- | --- | --- | --- |"
base=""
for n in $ranks; do
  rates=(); cpus=()
  for ((r = 0; r < repeat; ++r)); do
    cmd=("$headroom" fuzz --seed "$seed" --cases "$cases" --target "$target" --policy "$policy" --jobs "$jobs")
    ((n > 0)) && cmd=(mpirun -np "$n" --oversubscribe "${cmd[@]}")
    /usr/bin/time -f "%U %S" -o "$tmp/time" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || true
    rate="$(sed -nE 's/^  [0-9]+ cases in [0-9.]+ s \(([0-9]+) cases\/s\).*/\1/p' "$tmp/out")"
    [[ -n "$rate" ]] || { cat "$tmp/out" "$tmp/err" >&2; echo "no summary" >&2; exit 1; }
    rates+=("$rate"); cpus+=("$(tail -1 "$tmp/time" | awk '{print $1 + $2}')")  # time says a non-zero exit first
  done
  rate="$(printf '%s\n' "${rates[@]}" | median)"; cpu="$(printf '%s\n' "${cpus[@]}" | median)"
  label="$n ranks"; ((n == 0)) && label="1 process, no MPI"; ((n == 1)) && label="1 rank"
  [[ -z "$base" ]] && base="$rate"
  printf '| %s | %s (%sx) | %s | %s | %s |\n' "$label" "$rate" "$(awk -v a="$rate" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" \
    "$cpu" "$(awk -v c="$cases" -v s="$cpu" 'BEGIN {printf "%.0f", c / s}')" "${rates[*]}"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
