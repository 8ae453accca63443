#!/usr/bin/env bash
# Times the prefill benchmark (bench/bench_gpu_prefill.cu) of several git revisions against each
# other on one device: each revision built once here, then every binary run in turn, ROUNDS times,
# so that a drift of the card over the call touches every variant alike.
# usage:
#   scripts/bench_prefill_variants.sh pack CARRY REV...      on the build machine (no GPU needed):
#       one worktree and CUDA build of bench_gpu_prefill per revision (Release, sm_90a as the
#       project's CUDA default), the binaries to CARRY/variants/NN-NAME/bench_gpu_prefill (NN: the
#       order given, NAME: the revision as given, '/', '~' and '^' as '_'; the variants of an
#       earlier pack are removed first) with Google Benchmark's shared library in CARRY/variants/lib
#   scripts/bench_prefill_variants.sh run CARRY [OUT] [ROUNDS]   on the GPU machine:
#       every variant in turn, ROUNDS times (default 2); OUT (default $OUT, else
#       bench-prefill-variants-out) gets NAME.ROUND.json / .log and variants.md, the medians in
#       TFLOP/s, one row a variant and round.
# Environment: BENCH_ARGS (extra Google Benchmark flags; the default filter is '^fi_prefill/'),
# CMAKE_ARGS (extra configure flags for pack). Never changes the card's settings.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "bench_prefill_variants: $*" >&2; exit 2; }

pack() {
  local carry="$1"; shift
  (($#)) || die "pack: name at least one revision"
  local rev
  for rev in "$@"; do
    git -C "$root" rev-parse --verify --quiet "$rev^{commit}" > /dev/null || die "pack: no revision $rev"
  done
  mkdir -p "$carry/variants/lib" || die "pack: cannot create $carry/variants"
  rm -rf "$carry"/variants/[0-9]*-*
  local n=0
  for rev in "$@"; do
    n=$((n + 1))
    local name tree dst
    name="$(printf '%02d-%s' "$n" "${rev//[\/~^]/_}")"
    tree="$(mktemp -d)"
    dst="$carry/variants/$name"
    git -C "$root" worktree add --detach --quiet "$tree" "$rev" || die "pack: worktree for $rev"
    echo "== $name: $(git -C "$tree" log -1 --format='%h %s')"
    # shellcheck disable=SC2086  # CMAKE_ARGS are words
    if cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEADROOM_CUDA=ON \
        -DHEADROOM_MPI=OFF ${CMAKE_ARGS:-} > "$tree/configure.log" 2>&1 &&
      cmake --build "$tree/build" --target bench_gpu_prefill > "$tree/build.log" 2>&1; then
      mkdir -p "$dst" && cp "$tree/build/bench/bench_gpu_prefill" "$dst/" &&
        git -C "$tree" log -1 --format='%H %s' > "$dst/revision.txt"
      # Google Benchmark's shared library, the one the binary links
      ldd "$dst/bench_gpu_prefill" | awk '/libbenchmark/ {print $3}' | xargs -r cp -L -t "$carry/variants/lib/"
    else
      tail -20 "$tree/configure.log" "$tree/build.log" 2> /dev/null >&2
      git -C "$root" worktree remove --force "$tree"
      die "pack: the build of $rev failed"
    fi
    git -C "$root" worktree remove --force "$tree"
  done
  ls -l "$carry/variants"
}

run() {
  local carry="$1" out="${2:-${OUT:-$PWD/bench-prefill-variants-out}}" rounds="${3:-2}"
  [[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "run: ROUNDS must be a positive integer, not '$rounds'"
  local dirs=() r d
  for d in "$carry"/variants/[0-9]*-*/; do [[ -x "$d/bench_gpu_prefill" ]] && dirs+=("${d%/}"); done
  ((${#dirs[@]})) || die "run: no variants under $carry/variants (pack them first)"
  mkdir -p "$out" || die "run: cannot create $out"
  export LD_LIBRARY_PATH="$carry/variants/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  { date -u +%FT%TZ; command -v nvidia-smi > /dev/null &&
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$out/device.txt" 2>&1
  cat "$out/device.txt"
  for ((r = 1; r <= rounds; ++r)); do
    for d in "${dirs[@]}"; do
      # shellcheck disable=SC2086  # BENCH_ARGS are words
      "$d/bench_gpu_prefill" --benchmark_filter='^fi_prefill/' --benchmark_format=json ${BENCH_ARGS:-} \
        > "$out/$(basename "$d").$r.json" 2> "$out/$(basename "$d").$r.log"
    done
  done
  python3 - "$out" "${dirs[@]}" << 'PY'
import json, os, sys
out, dirs = sys.argv[1], sys.argv[2:]
rows, shapes = [], []
for d in dirs:
    name = os.path.basename(d)
    rev = open(os.path.join(d, "revision.txt")).read().split()[0][:7] if os.path.exists(os.path.join(d, "revision.txt")) else "?"
    r = 1
    while os.path.exists(os.path.join(out, f"{name}.{r}.json")):
        try:
            bench = json.load(open(os.path.join(out, f"{name}.{r}.json"))).get("benchmarks", [])
        except ValueError:
            bench = []
        med = {b["name"].split("/")[1]: b["TFLOPs"] for b in bench
               if b.get("aggregate_name") == "median" and "TFLOPs" in b}
        for s in med:
            if s not in shapes:
                shapes.append(s)
        rows.append((name, rev, r, med))
        r += 1
if shapes:
    lines = ["| variant | revision | round | " + " | ".join(shapes) + " |",
             "|---|---|---|" + "---|" * len(shapes)]
    for name, rev, r, med in rows:
        cells = " | ".join(f"{med[s]:.1f}" if s in med else "n/a" for s in shapes)
        lines.append(f"| {name} | {rev} | {r} | {cells} |")
else:
    lines = ["no medians: the binaries reported nothing (no device?); see the .json and .log files"]
text = "TFLOP/s, median of each benchmark\n\n" + "\n".join(lines) + "\n"
open(os.path.join(out, "variants.md"), "w").write(text)
print(text)
PY
}

case "${1:-}" in
  pack) shift; (($# >= 1)) || die "usage: pack CARRY REV..."; pack "$@" ;;
  run) shift; (($# >= 1)) || die "usage: run CARRY [OUT] [ROUNDS]"; run "$@" ;;
  *) die "usage: $0 pack CARRY REV... | run CARRY [OUT] [ROUNDS]" ;;
esac
