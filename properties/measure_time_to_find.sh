#!/usr/bin/env bash
# Time to the first counterexample from a cold start: for RUNS fresh seeds,
# `headroom fuzz --policy model-wide --target sim` with an empty --out folder, stopped after the
# first three counterexamples. Per seed: cases and seconds to the first counterexample of any kind,
# and to the first one with an out-of-bounds access (the buffer overflow itself); then medians.
# Seconds are until the SHRUNK counterexample was written to disk.
# Usage: properties/measure_time_to_find.sh HEADROOM [RUNS=20] [FIRST_SEED=from the clock]
set -euo pipefail
headroom="${1:?usage: measure_time_to_find.sh HEADROOM [RUNS] [FIRST_SEED]}"
runs="${2:-20}"
first_seed="${3:-$(date +%s%N | cut -c1-15)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# "[k] signature" then "shrunk to ... (case I, S steps, R runs, written after T s)": one line each.
found_lines() {
  awk '/^  \[[0-9]+\] /{sig=$0; sub(/^  \[[0-9]+\] /, "", sig)}
       /shrunk to .*written after/{match($0, /\(case [0-9]+/); c=substr($0, RSTART+6, RLENGTH-6);
                       match($0, /written after [0-9.]+/); t=substr($0, RSTART+14, RLENGTH-14);
                       print c+1, t, sig}' "$1"
}

printf "%-16s %6s %9s   %6s %9s   %s\n" seed cases seconds cases seconds "first counterexample"
printf "%-16s %16s   %16s\n" "" "(any kind)" "(out of bounds)"
any_c=() any_s=() oob_c=() oob_s=()
for ((i = 0; i < runs; ++i)); do
  seed=$((first_seed + i * 7919))
  set +e
  "$headroom" fuzz --seed "$seed" --policy model-wide --target sim --cases 5000 --stop-after 3 \
    --out "$work/out-$i" >"$work/summary.txt" 2>/dev/null
  rc=$?
  set -e
  [[ $rc -eq 1 ]] || { echo "seed $seed: nothing found (exit $rc)"; continue; }
  found_lines "$work/summary.txt" | sort -n >"$work/found.txt"
  read -r ac as asig <"$work/found.txt"
  read -r oc os _ < <(grep out_of_bounds "$work/found.txt" | head -1 || echo "- - -")
  printf "%-16s %6s %9s   %6s %9s   %s\n" "$seed" "$ac" "$as" "$oc" "$os" "$asig"
  any_c+=("$ac") any_s+=("$as")
  [[ $oc == - ]] || { oob_c+=("$oc") oob_s+=("$os"); }
done

median() { printf "%s\n" "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
worst() { printf "%s\n" "$@" | sort -g | tail -1; }
echo "any kind:      ${#any_c[@]}/$runs seeds; median $(median "${any_c[@]}") cases, $(median "${any_s[@]}") s; worst $(worst "${any_c[@]}") cases, $(worst "${any_s[@]}") s"
echo "out of bounds: ${#oob_c[@]}/$runs seeds; median $(median "${oob_c[@]}") cases, $(median "${oob_s[@]}") s; worst $(worst "${oob_c[@]}") cases, $(worst "${oob_s[@]}") s"
