#!/usr/bin/env python3
"""Upstream drift check for core/provenance.json (docs/engines.md, "Provenance").

For every provenance entry whose repository is given with --repo and whose commit is pinned, locate
the named symbol in the pinned commit and in REV (default: HEAD of that git dir) and say whether its
text changed: a Python def / class / assignment (dotted names reach methods and class attributes),
a C++ function, struct, class, namespace or #define (A::B reaches a member), or the whole file when
an entry names no symbol. Works on bare git dirs (git --git-dir); nothing is checked out.

  upstream_drift.py --repo vllm-project/vllm=GITDIR [--repo OWNER/NAME=GITDIR ...]
                    [--to REV | --to OWNER/NAME=REV ...] [--diff] [--id ID ...] [--provenance FILE]

One line per entry: unchanged, changed, file moved, file gone, symbol gone, commit not in this
repo, or a pinned commit that lacks the file or symbol (a provenance error). Exit 0 when every
checked entry is unchanged, 1 when any is not, 2 on bad input (one line naming the flag or file).
"""

import argparse
import ast
import difflib
import io
import json
import os
import re
import subprocess
import sys
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_PROVENANCE = os.path.join(ROOT, "core", "provenance.json")
REQUIRED = ("id", "what", "repo", "path", "symbol", "commit", "headroom", "source")
PY_EXT = (".py", ".pyi")
CXX_EXT = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl")


class BadInput(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise BadInput(message)


# ---------------------------------------------------------------------------------------------
# git


def git(gitdir, *args):
    """(returncode, stdout bytes) of a git command on a (bare or not) git dir."""
    p = subprocess.run(["git", "--git-dir=" + gitdir, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return p.returncode, p.stdout


def resolve(gitdir, rev):
    rc, out = git(gitdir, "rev-parse", "--verify", "--quiet", rev + "^{commit}")
    return out.decode().strip() if rc == 0 else None


def show(gitdir, commit, path):
    rc, out = git(gitdir, "show", commit + ":" + path)
    if rc != 0:
        return None
    return out.decode("utf-8", errors="replace")


def renamed_to(gitdir, old, new, path):
    """Where `path` went between two commits, by git's rename detection (None: not a rename)."""
    rc, out = git(gitdir, "diff", "-M", "--diff-filter=R", "--name-status", old, new)
    if rc != 0:
        return None
    for line in out.decode(errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == path:
            return parts[2]
    return None


def files_defining(gitdir, commit, symbol, path):
    """Files at `commit` with a definition-looking line for the symbol's last name (same language)."""
    name = re.split(r"\.|::", symbol)[-1]
    if path.endswith(PY_EXT):
        pattern, exts = r"^\s*(async\s+def|def|class)\s+%s\b|^\s*%s\s*(:[^=]*)?=" % (name, name), PY_EXT
    else:
        pattern, exts = r"(struct|class|define)\s+%s\b|\b%s\s*\(" % (name, name), CXX_EXT
    rc, out = git(gitdir, "grep", "-l", "-E", pattern, commit, "--")
    if rc != 0:
        return []
    found = []
    for line in out.decode(errors="replace").splitlines():
        f = line.split(":", 1)[1] if ":" in line else line
        if f.endswith(exts) and f != path:
            text = show(gitdir, commit, f)
            if text is not None and extract(text, f, symbol) is not None:
                found.append(f)
    return found


# ---------------------------------------------------------------------------------------------
# Python


def _py_block(lines, node):
    start = node.lineno
    for d in getattr(node, "decorator_list", []) or []:
        start = min(start, d.lineno)
    return "".join(lines[start - 1:node.end_lineno])


def _py_named(stmts, name):
    """The first statement among `stmts` (descending into if / try / with at this level) that
    defines `name`: a def, a class, or an assignment to it."""
    for s in stmts:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name:
            return s
        if isinstance(s, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
                return s
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == name:
            return s
        inner = []
        if isinstance(s, ast.If):
            inner = [s.body, s.orelse]
        elif isinstance(s, ast.Try):
            inner = [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            inner = [s.body]
        for block in inner:
            hit = _py_named(block, name)
            if hit is not None:
                return hit
    return None


def _py_ast(text, symbol):
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    stmts, node = tree.body, None
    for part in symbol.split("."):
        node = _py_named(stmts, part)
        if node is None:
            return None
        stmts = getattr(node, "body", [])
    return _py_block(lines, node)


def _py_tokens(text, symbol):
    """Fallback for files this Python cannot parse: the block of `def NAME` / `class NAME` by its
    indentation, read from the tokenizer (brackets and strings handled), each dotted part among
    the direct children of the previous one. Assignments are not found this way."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    lines = text.splitlines(keepends=True)
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    lo, hi, want, span = 0, len(toks), 0, None
    for part in symbol.split("."):
        depth, found = 0, None
        for i in range(lo, hi - 1):
            t = toks[i]
            if t.type == tokenize.INDENT:
                depth += 1
            elif t.type == tokenize.DEDENT:
                depth -= 1
            elif (depth == want and t.type == tokenize.NAME and t.string in ("def", "class") and
                  toks[i + 1].string == part):
                found = i
                break
        if found is None:
            return None
        d, end, started, j = depth, found, False, found
        for j in range(found, len(toks)):
            t = toks[j]
            if t.type == tokenize.INDENT:
                d += 1
                started = True
            elif t.type == tokenize.DEDENT:
                d -= 1
                if started and d == depth:
                    break
            elif t.type == tokenize.NEWLINE and not started:
                k = j + 1
                while k < len(toks) and toks[k].type in (tokenize.NL, tokenize.COMMENT):
                    k += 1
                if k >= len(toks) or toks[k].type != tokenize.INDENT:
                    break  # a one-line body
            elif t.type not in skip and t.type != tokenize.ENDMARKER:
                end = j
        span = (toks[found].start[0], toks[end].end[0])
        lo, hi, want = found, j, 1
    return "".join(lines[span[0] - 1:span[1]]) if span else None


def extract_python(text, symbol):
    try:
        return _py_ast(text, symbol)
    except (SyntaxError, ValueError, RecursionError):
        return _py_tokens(text, symbol)


# ---------------------------------------------------------------------------------------------
# C++


def mask_cxx(text):
    """The text with comments and the insides of string / char literals blanked (newlines and
    offsets kept), so brackets and names can be matched on it."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if text[k] != "\n":
                    out[k] = " "
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or
                                                                        text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            for k in range(i + 1, j):
                if text[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _match_close(m, i, open_c, close_c):
    """Index of the bracket closing the one at m[i], or -1."""
    depth = 0
    for j in range(i, len(m)):
        if m[j] == open_c:
            depth += 1
        elif m[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _decl_start(m, pos):
    """Start of the declaration whose name is at `pos`: the line's start, extended upwards over
    the lines of its template header and return type (lines that end no statement or block)."""
    start = m.rfind("\n", 0, pos) + 1
    while start > 0:
        prev_end = start - 1
        prev_start = m.rfind("\n", 0, prev_end) + 1
        prev = m[prev_start:prev_end].strip()
        if not prev or prev.startswith("#") or prev[-1] in ";{}:" or prev.endswith("*/"):
            break
        start = prev_start
    return start


_TAIL_OK = re.compile(r"^(\s|\w|::|->|[*&<>,\[\]():])*$")


def _cxx_function(m, lo, hi, name_re):
    """(start, end) of the first function definition named by name_re in m[lo:hi]."""
    for mt in name_re.finditer(m, lo, hi):
        s, e = mt.start(), mt.end()
        before = m[max(lo, s - 2):s]
        if before.endswith(".") or before.endswith("->"):
            continue
        k = e
        while k < hi and m[k] in " \t\n":
            k += 1
        if k >= hi or m[k] != "(":
            continue
        close = _match_close(m, k, "(", ")")
        if close < 0 or close >= hi:
            continue
        j = close + 1
        while j < hi and m[j] not in "{;=}":
            if m[j] == "(":  # noexcept(...), __attribute__((...)), an init list's member(...)
                c2 = _match_close(m, j, "(", ")")
                if c2 < 0:
                    break
                j = c2 + 1
                continue
            j += 1
        if j >= hi or m[j] != "{":
            continue
        tail = m[close + 1:j]
        if not _TAIL_OK.match(tail) or re.search(r"\b(return|if|while|for|switch)\b", m[_decl_start(m, s):s]):
            continue
        body_end = _match_close(m, j, "{", "}")
        if body_end < 0:
            continue
        return _decl_start(m, s), body_end + 1
    return None


def _cxx_type(m, lo, hi, name):
    """(start, end, body_open) of the first struct / class / union / enum / namespace definition."""
    pat = re.compile(r"\b(struct|class|union|enum(\s+class)?|namespace)\s+(alignas\s*\([^)]*\)\s*)?"
                     r"(\w+\s*::\s*)*%s\b" % re.escape(name))
    for mt in pat.finditer(m, lo, hi):
        j = mt.end()
        while j < hi and m[j] not in "{;()=":
            j += 1
        if j >= hi or m[j] != "{":
            continue
        end = _match_close(m, j, "{", "}")
        if end < 0:
            continue
        k = end + 1
        if m[k:k + 1] == ";":
            k += 1
        return _decl_start(m, mt.start()), k, j
    return None


def _cxx_define(text, m, name):
    mt = re.search(r"^[ \t]*#[ \t]*define[ \t]+%s\b" % re.escape(name), m, re.M)
    if not mt:
        return None
    end = mt.start()
    while True:
        nl = text.find("\n", end)
        if nl < 0:
            return mt.start(), len(text)
        if text[:nl].rstrip(" \t\r").endswith("\\"):
            end = nl + 1
            continue
        return mt.start(), nl + 1


def _cxx_variable(m, lo, hi, name):
    """A constant or variable: the statement `... NAME = ...;` / `... NAME{...};`."""
    pat = re.compile(r"\b%s\s*(=(?!=)|\{)" % re.escape(name))
    for mt in pat.finditer(m, lo, hi):
        s = _decl_start(m, mt.start())
        head = m[s:mt.start()].strip()
        if not head or head.endswith((".", "->", "(", ",")) or re.search(r"[=;{}()]", head):
            continue
        depth, j = 0, mt.end()
        while j < hi:
            c = m[j]
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
            elif c == ";" and depth <= 0:
                return s, j + 1
            j += 1
    return None


def _cxx_in(text, m, lo, hi, name):
    # A type before a function of its name (a struct's constructor), then a variable or constant.
    for finder in (lambda: (_cxx_type(m, lo, hi, name) or (None, None))[:2],
                   lambda: _cxx_function(m, lo, hi, re.compile(r"(?<![\w])%s\b" % re.escape(name))),
                   lambda: _cxx_variable(m, lo, hi, name)):
        span = finder()
        if span and span[0] is not None:
            return span
    return None


def extract_cxx(text, symbol):
    m = mask_cxx(text)
    parts = [p for p in re.split(r"\s*::\s*", symbol) if p]
    if len(parts) == 1:
        span = _cxx_in(text, m, 0, len(m), parts[0])
        if span is None:
            span = _cxx_define(text, m, parts[0])
        return text[span[0]:span[1]] if span else None
    # A::B: an out-of-line definition first, else B inside the body of A (struct, class, namespace).
    qual = re.compile(r"(?<![\w])" + r"\s*::\s*".join(re.escape(p) for p in parts) + r"\b")
    span = _cxx_function(m, 0, len(m), qual)
    if span:
        return text[span[0]:span[1]]
    lo, hi = 0, len(m)
    for p in parts[:-1]:
        t = _cxx_type(m, lo, hi, p)
        if t is None:
            return None
        lo, hi = t[2] + 1, t[1]
    span = _cxx_in(text, m, lo, hi, parts[-1])
    return text[span[0]:span[1]] if span else None


def extract(text, path, symbol):
    """The symbol's text in a file, or None; an entry without a symbol compares the whole file."""
    if not symbol:
        return text
    if path.endswith(PY_EXT):
        return extract_python(text, symbol)
    if path.endswith(CXX_EXT):
        return extract_cxx(text, symbol)
    return extract_python(text, symbol) or extract_cxx(text, symbol)


# ---------------------------------------------------------------------------------------------
# the check


def check_entry(e, gitdir, to_rev, to_sha):
    """(status, detail, diff lines)."""
    pinned = resolve(gitdir, e["commit"])
    if pinned is None:
        return "commit not in this repo", e["commit"], []
    old_text = show(gitdir, pinned, e["path"])
    if old_text is None:
        return "file not at pinned commit", e["path"], []
    sym = e.get("symbol") or ""
    old = extract(old_text, e["path"], sym)
    if old is None:
        return "symbol not at pinned commit", sym, []
    path = e["path"]
    new_text = show(gitdir, to_sha, path)
    moved = None
    if new_text is None:
        moved = renamed_to(gitdir, pinned, to_sha, path)
        if moved is None and sym:
            hits = files_defining(gitdir, to_sha, sym, path)
            moved = hits[0] if hits else None
        if moved is None:
            return "file gone", path + " not at " + to_rev, []
        new_text = show(gitdir, to_sha, moved)
    new = extract(new_text, moved or path, sym)
    if new is None:
        hits = files_defining(gitdir, to_sha, sym, moved or path) if sym else []
        detail = sym + " not in " + (moved or path) + (" (defined in " + ", ".join(hits[:3]) + ")"
                                                     if hits else "")
        return "symbol gone", detail, []
    diff = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile="%s@%s" % (path, pinned[:12]),
                                     tofile="%s@%s" % (moved or path, to_sha[:12])))
    if moved:
        return "file moved", path + " -> " + moved + (", symbol changed" if diff else ", symbol unchanged"), diff
    if diff:
        added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
        removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
        return "changed", "+%d -%d lines" % (added, removed), diff
    return "unchanged", "", []


def load_provenance(path):
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except OSError as err:
        raise BadInput("--provenance %s: %s" % (path, err.strerror))
    except json.JSONDecodeError as err:
        raise BadInput("--provenance %s: not JSON (%s)" % (path, err))
    if not isinstance(entries, list):
        raise BadInput("--provenance %s: not an array of entries" % path)
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise BadInput("--provenance %s: entry %d is not an object" % (path, i))
        for k in REQUIRED:
            if k not in e:
                raise BadInput("--provenance %s: entry %d (%s) has no '%s'" % (path, i, e.get("id", "?"), k))
    return entries


def parse_args(argv):
    p = Parser(prog="upstream_drift.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=GITDIR",
                   help="a git dir (bare or not) with the history of that upstream repository")
    p.add_argument("--to", action="append", default=[], metavar="[OWNER/NAME=]REV",
                   help="compare against REV instead of HEAD (for every repo, or for one)")
    p.add_argument("--diff", action="store_true", help="print the unified diff of each changed symbol")
    p.add_argument("--id", action="append", default=[], metavar="ID", help="only these entries")
    p.add_argument("--provenance", default=DEFAULT_PROVENANCE, metavar="FILE")
    a = p.parse_args(argv)
    if not a.repo:
        raise BadInput("--repo: at least one OWNER/NAME=GITDIR is needed")
    repos = {}
    for r in a.repo:
        name, sep, gitdir = r.partition("=")
        if not sep or not re.fullmatch(r"[\w.-]+/[\w.-]+", name) or not gitdir:
            raise BadInput("--repo %s: expected OWNER/NAME=GITDIR" % r)
        if name in repos:
            raise BadInput("--repo %s: %s given twice" % (r, name))
        if git(gitdir, "rev-parse", "--git-dir")[0] != 0:
            raise BadInput("--repo %s: %s is not a git dir" % (r, gitdir))
        repos[name] = gitdir
    to_all, to_one = "HEAD", {}
    for t in a.to:
        name, sep, rev = t.partition("=")
        if sep:
            if name not in repos:
                raise BadInput("--to %s: %s is not one of the --repo names" % (t, name))
            to_one[name] = rev
        else:
            to_all = t
    targets = {}
    for name, gitdir in repos.items():
        rev = to_one.get(name, to_all)
        sha = resolve(gitdir, rev)
        if sha is None:
            raise BadInput("--to %s: not a commit in %s (%s)" % (rev, name, gitdir))
        targets[name] = (rev, sha)
    entries = load_provenance(a.provenance)
    ids = {e["id"] for e in entries}
    for i in a.id:
        if i not in ids:
            raise BadInput("--id %s: no such entry in %s" % (i, a.provenance))
    return a, repos, targets, entries


def main(argv):
    try:
        a, repos, targets, entries = parse_args(argv)
    except BadInput as err:
        print("upstream_drift.py: %s" % err, file=sys.stderr)
        return 2
    counts, drifted, not_given, unpinned = {}, 0, 0, 0
    width = max([len(e["id"]) for e in entries] + [10])
    for name, (rev, sha) in targets.items():
        print("# %s = %s: %s is %s" % (name, repos[name], rev, sha[:12]))
    for e in entries:
        if a.id and e["id"] not in a.id:
            continue
        if e["repo"] not in repos:
            not_given += 1
            continue
        rev, sha = targets[e["repo"]]
        where = e["path"] + (" " + e["symbol"] if e.get("symbol") else "")
        if e["commit"] == "unpinned":
            unpinned += 1
            print("%-28s %-*s %s" % ("unpinned (not checked)", width, e["id"], where))
            continue
        status, detail, diff = check_entry(e, repos[e["repo"]], rev, sha)
        counts[status] = counts.get(status, 0) + 1
        if status != "unchanged":
            drifted += 1
        span = "%s..%s" % (e["commit"][:12], sha[:12])
        print("%-28s %-*s %s %s%s" % (status, width, e["id"], where, span, (" (" + detail + ")") if detail else ""))
        if a.diff and diff:
            sys.stdout.write("".join(diff))
            if not diff[-1].endswith("\n"):
                sys.stdout.write("\n")
    checked = sum(counts.values())
    summary = ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))
    print("summary: %d pinned entries checked (%s); %d unpinned; %d of repos not given" %
          (checked, summary or "none", unpinned, not_given))
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
