#!/usr/bin/env bash
# CLI-level bad-input corpus: for every line of cases.txt,
# `headroom check FILE EXTRA_ARGS --json OUT` must exit 2, name every expected substring (and the
# config's file name unless the line says nofile) on stderr, print nothing on stdout, and write
# nothing: neither OUT nor any other file.
# Usage: run.sh HEADROOM_BIN SOURCE_DIR
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 HEADROOM_BIN SOURCE_DIR" >&2
  exit 2
fi
bin=$1
cases_dir=$2/tests/bad_inputs
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

failures=0
count=0
fail() {
  echo "FAIL [$1]: $2" >&2
  sed 's/^/  stderr: /' "$logs/stderr" >&2
  failures=$((failures + 1))
}

run_case() {
  local file=$1 extra=$2 expected=$3 flags=$4
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2086  # EXTRA_ARGS is meant to split into words
  (cd "$work" && "$bin" check "$cases_dir/$file" $extra --json "$work/out.json") \
    >"$logs/stdout" 2>"$logs/stderr"
  local rc=$?
  local label="$file|$extra"
  if [ "$rc" -ne 2 ]; then fail "$label" "exit code $rc, expected 2"; fi
  if [ -s "$logs/stdout" ]; then
    fail "$label" "stdout is not empty: $(head -c 200 "$logs/stdout")"
  fi
  if [ -e "$work/out.json" ]; then fail "$label" "--json output was written"; fi
  if [ -n "$(ls -A "$work")" ]; then
    fail "$label" "files were written: $(ls -A "$work" | tr '\n' ' ')"
  fi
  local piece
  IFS=';' read -r -a pieces <<<"$expected"
  for piece in "${pieces[@]}"; do
    grep -qF -- "$piece" "$logs/stderr" || fail "$label" "stderr lacks '$piece'"
  done
  if [ "$flags" != "nofile" ]; then
    grep -qF -- "$(basename "$file")" "$logs/stderr" ||
      fail "$label" "stderr does not name the file"
  fi
  rm -rf "$work"
}

while IFS='|' read -r file extra expected flags; do
  case "$file" in '' | '#'*) continue ;; esac
  count=$((count + 1))
  run_case "$file" "$extra" "$expected" "${flags:-}"
done <"$cases_dir/cases.txt"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s) over $count bad-input cases" >&2
  exit 1
fi
echo "all $count bad-input cases exit 2 with a message naming the field"
