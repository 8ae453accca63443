#!/usr/bin/env bash
# The compiler's resource report for the kernels of one GPU benchmark: registers, spills, stack and
# static shared memory per kernel from ptxas (-Xptxas -v), names demangled, no GPU needed. It
# recompiles the benchmark's .cu alone with the flags its build uses (the build's flags.make and
# includes), into a temporary object; the build itself is left as it is. The attention bodies' shared
# memory is dynamic (sized per launch: attend_shared.hpp) and shows here as 0 bytes smem; the
# benchmark prints each launch's block, dynamic shared memory and blocks per SM on the device.
# usage: scripts/bench_resources.sh [BUILD_DIR] [TARGET] [PATTERN]
#   BUILD_DIR  a configured CUDA build (default build-gpu); TARGET default bench_gpu_prefill;
#   PATTERN    a grep -E pattern on the demangled kernel name (default fi_batch_prefill|fi_prefill_merge)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build-gpu}" && pwd)"
target="${2:-bench_gpu_prefill}"
pattern="${3:-fi_batch_prefill|fi_prefill_merge}"
dir="$build/bench/CMakeFiles/$target.dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -f "$dir/flags.make" ]]; then  # Makefile generator: the flags are in flags.make
  nvcc="$(sed -n 's/^# compile CUDA with //p' "$dir/flags.make")"
  defines="$(sed -n 's/^CUDA_DEFINES = //p' "$dir/flags.make")"
  flags="$(sed -n 's/^CUDA_FLAGS = //p' "$dir/flags.make")"
  # shellcheck disable=SC2086  # the flags are words
  (cd "$build/bench" && "${nvcc:-nvcc}" $defines --options-file "CMakeFiles/$target.dir/includes_CUDA.rsp" $flags \
    -Xptxas=-v -c "$root/bench/$target.cu" -o "$tmp/k.o") > "$tmp/ptxas.log" 2>&1 || {
    cat "$tmp/ptxas.log" >&2; exit 1; }
elif [[ -f "$build/build.ninja" ]]; then  # Ninja: the build's own command for the .cu, output redirected
  cmd="$(ninja -C "$build" -t commands "$target" | grep -F "bench/$target.cu" | grep -F -- " -c " | tail -1)"
  [[ -n "$cmd" ]] || { echo "bench_resources: no compile command for bench/$target.cu in $build" >&2; exit 1; }
  cmd="$(sed -E 's| -o [^ ]+| -o '"$tmp"'/k.o|; s| -MD -MT [^ ]+ -MF [^ ]+||' <<<"$cmd")"
  (cd "$build" && eval "$cmd -Xptxas=-v") > "$tmp/ptxas.log" 2>&1 || { cat "$tmp/ptxas.log" >&2; exit 1; }
else
  echo "bench_resources: $build is not a configured CUDA build (no flags.make, no build.ninja)" >&2; exit 1
fi
# ptxas prints, per entry: "Compiling entry function 'NAME' for 'sm_90'", then "N bytes stack frame,
# N bytes spill stores, N bytes spill loads", then "Used N registers, ... N bytes smem, ...".
awk '
  /Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2);
                               arch = $NF; gsub(/'"'"'/, "", arch) }
  /bytes stack frame/ { stack = $1; st = $5; ld = $9 }
  /Used [0-9]+ registers/ { regs = ""; smem = "0";
    for (i = 1; i <= NF; ++i) { if ($(i + 1) ~ /^registers/) regs = $i; if ($(i + 1) == "bytes" && $(i + 2) ~ /^smem/) smem = $i }
    print name "\t" arch "\t" regs "\t" st "\t" ld "\t" stack "\t" smem }
' "$tmp/ptxas.log" | c++filt | grep -E "$pattern" | sort -u |
  awk -F'\t' 'BEGIN { printf "%-9s %-5s %-12s %-12s %-6s %-6s  %s\n", "arch", "regs", "spill_st(B)", "spill_ld(B)",
                      "stack", "smem", "kernel" }
              { printf "%-9s %-5s %-12s %-12s %-6s %-6s  %s\n", $2, $3, $4, $5, $6, $7, $1 }'
