#!/usr/bin/env bash
# tools/upstream_drift/upstream_drift.py on a small git history made here: a Python and a C++ file
# with two functions each, entries pinned to the first commit; then one function changed, one C++
# body changed, one function removed, one file moved. Checks the status of every entry, the exit
# codes (0 nothing drifted, 1 drift, 2 bad input) and that a bare clone works as well.
# Usage: drift_test.sh SOURCE_DIR. Skipped (77) without python3 or git.
set -u
src=${1:?usage: drift_test.sh SOURCE_DIR}
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
command -v git >/dev/null 2>&1 || { echo "no git: skipped"; exit 77; }
tool=$src/tools/upstream_drift/upstream_drift.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
g() { git -C "$tmp/repo" -c user.name=t -c user.email=t@example.invalid -c commit.gpgsign=false "$@"; }
drift() { PYTHONDONTWRITEBYTECODE=1 python3 "$tool" --provenance "$tmp/prov.json" "$@"; }
expect() {  # expect NAME WANT_RC GOT_RC OUTPUT PATTERN...: the rc and every pattern (an output line)
  local name=$1 want=$2 got=$3 out=$4
  shift 4
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; echo "$out"; fail=1; return
  fi
  for p in "$@"; do
    if ! grep -Eq -- "$p" <<<"$out"; then echo "FAIL $name: no line matching '$p'"; echo "$out"; fail=1; return; fi
  done
  echo "ok   $name"
}

mkdir -p "$tmp/repo/pkg"
git init -q "$tmp/repo"
cat >"$tmp/repo/pkg/mod.py" <<'EOF'
LIMIT = 128  # a constant


def alpha(x):
    """Docstring with a line that
starts in column 0."""
    return x + 1


class Holder:
    def beta(self, y):
        if y > LIMIT:
            return y
        return y * 2


def gamma():
    return 3
EOF
cat >"$tmp/repo/pkg/plan.h" <<'EOF'
// a header
struct PlanInfo {
  int padded = 0;  // "}" in a comment
};

template <typename T>
inline int Plan(T* out, int n) {
  const char* s = "{";
  for (int i = 0; i < n; ++i) { out[i] = i; }
  return n;
}

inline int Other(int a) { return a * 2; }
EOF
g add -A && g commit -qm one
c1=$(g rev-parse HEAD)
cat >"$tmp/prov.json" <<EOF
[
 {"id": "py.alpha", "what": "w", "repo": "o/r", "path": "pkg/mod.py", "symbol": "alpha", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "py.beta", "what": "w", "repo": "o/r", "path": "pkg/mod.py", "symbol": "Holder.beta", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "py.limit", "what": "w", "repo": "o/r", "path": "pkg/mod.py", "symbol": "LIMIT", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "cxx.struct", "what": "w", "repo": "o/r", "path": "pkg/plan.h", "symbol": "PlanInfo", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "cxx.plan", "what": "w", "repo": "o/r", "path": "pkg/plan.h", "symbol": "Plan", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "cxx.other", "what": "w", "repo": "o/r", "path": "pkg/plan.h", "symbol": "Other", "commit": "$c1", "headroom": [], "source": "s"},
 {"id": "not.pinned", "what": "w", "repo": "o/r", "path": "pkg/mod.py", "symbol": "gamma", "commit": "unpinned", "headroom": [], "source": "s"},
 {"id": "other.repo", "what": "w", "repo": "x/y", "path": "a.py", "symbol": "f", "commit": "$c1", "headroom": [], "source": "s"}
]
EOF

# 2: beta's body changes (alpha, the constant and the C++ file do not).
sed -i 's/return y \* 2/return y * 3/' "$tmp/repo/pkg/mod.py"
g commit -qam two
c2=$(g rev-parse HEAD)
# 3: the template function's body changes; a comment above Other changes (not Other itself).
sed -i 's/return n;/return n + 1;/; s|^inline int Other|// now documented\ninline int Other|' "$tmp/repo/pkg/plan.h"
g commit -qam three
# 4: alpha removed; plan.h moved to include/plan.h.
python3 - "$tmp/repo/pkg/mod.py" <<'EOF'
import re, sys
p = sys.argv[1]
t = open(p).read()
open(p, "w").write(re.sub(r'def alpha\(x\):\n(.*\n)*?    return x \+ 1\n', "", t))
EOF
mkdir -p "$tmp/repo/include" && g mv pkg/plan.h include/plan.h
g commit -qam four
git clone -q --bare "$tmp/repo" "$tmp/bare.git"
bare=$tmp/bare.git

out=$(drift --repo o/r="$bare" --to "$c1" 2>&1); rc=$?
expect "nothing drifted at the pinned commit" 0 $rc "$out" \
  '^unchanged +py\.alpha' '^unchanged +py\.beta' '^unchanged +cxx\.plan' '^unpinned \(not checked\) +not\.pinned' \
  'summary: 6 pinned entries checked \(6 unchanged\); 1 unpinned; 1 of repos not given'

out=$(drift --repo o/r="$bare" --to "$c2" --diff 2>&1); rc=$?
expect "exactly the changed function" 1 $rc "$out" \
  '^changed +py\.beta .*\(\+1 -1 lines\)' '^unchanged +py\.alpha' '^unchanged +py\.limit' '^unchanged +cxx\.struct' \
  '^unchanged +cxx\.plan' '^unchanged +cxx\.other' '^\+        return y \* 3' '\(1 changed, 5 unchanged\)'

out=$(drift --repo o/r="$tmp/repo/.git" --to o/r=HEAD~1 2>&1); rc=$?
expect "a C++ body, not a comment beside another function" 1 $rc "$out" \
  '^changed +cxx\.plan' '^unchanged +cxx\.other' '^unchanged +cxx\.struct' '\(2 changed, 4 unchanged\)'

out=$(drift --repo o/r="$bare" 2>&1); rc=$?
expect "symbol gone, file moved (HEAD of a bare clone)" 1 $rc "$out" \
  '^symbol gone +py\.alpha' '^file moved +cxx\.plan .*pkg/plan\.h -> include/plan\.h, symbol changed' \
  '^file moved +cxx\.struct .*symbol unchanged'

out=$(drift --repo o/r="$bare" --id py.limit 2>&1); rc=$?
expect "--id selects one entry" 0 $rc "$out" '^unchanged +py\.limit' 'summary: 1 pinned entries checked'

sed "s/$c1/0123456789abcdef0123456789abcdef01234567/" "$tmp/prov.json" >"$tmp/prov_bad_commit.json"
out=$(PYTHONDONTWRITEBYTECODE=1 python3 "$tool" --provenance "$tmp/prov_bad_commit.json" --repo o/r="$bare" 2>&1); rc=$?
expect "a pinned commit the history lacks" 1 $rc "$out" '^commit not in this repo +py\.alpha'

for bad in "--repo nonsense" "--repo o/r=$tmp/nowhere" "--repo o/r=$bare --to nosuchrev" \
           "--repo o/r=$bare --to q/z=HEAD" "--repo o/r=$bare --id nosuch" "--to HEAD" "--repo o/r=$bare --bogus"; do
  # shellcheck disable=SC2086
  out=$(drift $bad 2>&1); rc=$?
  lines=$(printf '%s\n' "$out" | wc -l)
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL bad input '$bad': exit $rc, $lines lines (expected 2, one line)"; echo "$out"; fail=1
  else
    echo "ok   bad input '$bad': $out"
  fi
done
out=$(PYTHONDONTWRITEBYTECODE=1 python3 "$tool" --provenance "$tmp/none.json" --repo o/r="$bare" 2>&1); rc=$?
expect "a missing provenance file" 2 $rc "$out" '^upstream_drift.py: --provenance .*none\.json'

exit $fail
