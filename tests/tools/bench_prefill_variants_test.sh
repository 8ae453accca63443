#!/bin/sh
# scripts/bench_prefill_variants.sh run, on stub binaries that print Google Benchmark JSON: one row a
# variant and round in variants.md with the medians; bad arguments exit 2 with a message.
set -u
script="$1"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAILED: $*"; cat "$t/out/variants.md" 2> /dev/null; exit 1; }
refused() { [ "$1" = 2 ] && grep -q "$2" "$t/bad.log"; }  # exit 2 and the message
for v in 01-main:300.5 02-next:311.25; do
  d="$t/carry/variants/${v%%:*}"
  mkdir -p "$d"
  cat > "$d/bench_gpu_prefill" << STUB
#!/bin/sh
echo "plan 1x8192: stub" >&2
printf '{"benchmarks": [{"name": "fi_prefill/1x8192/real_time", "aggregate_name": "mean", "TFLOPs": 1.0},'
printf ' {"name": "fi_prefill/1x8192/real_time", "aggregate_name": "median", "TFLOPs": ${v#*:}},'
printf ' {"name": "fi_prefill/32x512/real_time", "aggregate_name": "median", "TFLOPs": 120.0}]}\n'
STUB
  chmod +x "$d/bench_gpu_prefill"
  echo "0123456789abcdef ${v%%:*}" > "$d/revision.txt"
done
mkdir -p "$t/carry/variants/lib"
"$script" run "$t/carry" "$t/out" 2 > "$t/run.log" 2>&1 || fail "run exited $?"
grep -q '^| variant | revision | round | 1x8192 | 32x512 |$' "$t/out/variants.md" || fail "header"
grep -q '^| 01-main | 0123456 | 1 | 300.5 | 120.0 |$' "$t/out/variants.md" || fail "01-main round 1"
grep -q '^| 02-next | 0123456 | 2 | 311.2 | 120.0 |$' "$t/out/variants.md" || fail "02-next round 2"
[ "$(grep -c '^| 0' "$t/out/variants.md")" = 4 ] || fail "two variants x two rounds"
"$script" run "$t/carry" "$t/out" 0 > "$t/bad.log" 2>&1
refused $? "ROUNDS must be a positive integer" || fail "ROUNDS 0 not refused"
"$script" run "$t/empty" "$t/out" > "$t/bad.log" 2>&1
refused $? "no variants under" || fail "an empty carry not refused"
"$script" pack "$t/carry" no-such-revision-here > "$t/bad.log" 2>&1
refused $? "no revision no-such-revision-here" || fail "a bad revision not refused"
echo ok
