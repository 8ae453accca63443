#!/usr/bin/env python3
"""Mutation run of the CPU lane: plant each realistic one-line bug below, rebuild, run
`ctest -L cpu`, and report which tests killed it. A mutant no test kills is a hole in the lane.

    scripts/mutants.py BUILD_DIR [--only NAME ...] [--out TABLE.md]

BUILD_DIR is a configured build of this checkout (CUDA may be off: the lane is the same). The
checkout's files are changed one at a time and restored after each mutant (also on Ctrl-C), so run
it in a worktree of its own. Exit 0 when every mutant is killed, 1 otherwise.
"""
import argparse
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# name, file, exact text, replacement, what the bug means
MUTANTS = [
    ("fi-chunk-search-no-kv", "core/backends/fi_decode.cpp",
     "if (checked_mul(work_items(pages, mid), kv) > max_grid)", "if (work_items(pages, mid) > max_grid)",
     "FlashInfer decode chunk search forgets the kv-head factor"),
    ("fi-prefill-tile-256", "core/backends/fi_prefill.cpp",
     "if (avg_packed > 64 && head_size < 256) return 128;", "if (avg_packed > 64 && head_size <= 256) return 128;",
     "prefill 128-row tiles at head size 256 too"),
    ("shrink-key-longest", "generators/shrink.cpp",
     "for (int64_t s : c.b.seq_lens) seq += s;", "for (int64_t s : c.b.seq_lens) seq = std::max(seq, s);",
     "shrinker measures the longest request instead of the total"),
    ("sim-single-reader", "core/sim/sim_views.hpp",
     "? (e << 32 | many_tid) : (e << 32 | tid);", "? (e << 32 | tid) : (e << 32 | tid);",
     "hazard tracking forgets that several threads read one element"),
    ("triton-thr-plus-one", "core/backends/triton.cpp",
     "triton_thr_numerator / kv_heads_b : 0;", "triton_thr_numerator / kv_heads_b + 1 : 0;",
     "Triton threshold one too large"),
    ("resolve-no-fallback", "core/engine/resolve.cpp",
     "    r.builder_heads = model_wide_heads;\n    r.fell_back = true;\n    return r;",
     "    r.builder_heads = 0;\n    r.fell_back = true;\n    return r;",
     "an empty builder falls back to 0 heads instead of the model-wide count"),
    ("grouping-key-no-heads", "core/engine/grouping.cpp",
     "int64_t key = g == grouping::heads ? reg.find(name)->num_heads : 0;", "int64_t key = 0;",
     "attention groups keyed without the query heads"),
    ("kv-replicated-total", "core/model/geometry.cpp",
     "return kv / tp > 1 ? kv / tp : 1;", "return kv / tp > 1 ? kv / tp : kv;",
     "replicated kv heads (tp above their count) keep the total instead of 1 per rank"),
    ("triton-dp-from-builder", "core/backends/triton.cpp",
     "const int64_t dp = next_pow2(l.head_size);", "const int64_t dp = p.head_size_padded;",
     "Triton need uses the builder's padded head size, not the layer's"),
    ("triton-segment-le", "core/backends/triton.cpp",
     "return s * tiles_per_segment * triton_tile < seq_len;", "return s * tiles_per_segment * triton_tile <= seq_len;",
     "a segment starting at the sequence end counts as active"),
    ("fi-graph-padding-no-kv", "core/backends/fi_decode.cpp",
     "(p.split ? p.max_grid / kv_heads : nb)", "(p.split ? p.max_grid : nb)",
     "CUDA-graph padding of split decode forgets the kv heads"),
    ("fi-tmp-v-fp32-elem", "core/backends/fi_decode.cpp",
     "checked_product(\"tmp_v bytes\", rows, head_size, 4), dtype_bytes(out)}",
     "checked_product(\"tmp_v bytes\", rows, head_size, 4), 4}",
     "tmp_v indexed as fp32 although the run writes the output dtype"),
    ("hybrid-balance-ratio", "core/engine/grouping.cpp",
     "(2 * hi < 3 * lo) ? hi : lo", "(hi < 2 * lo) ? hi : lo",
     "hybrid manager balances at 2x instead of 1.5x"),
    ("case-json-drops-hybrid", "core/check/case.cpp",
     "c.hybrid = jr::get_bool_or(j, \"hybrid\", true, file, path);", "c.hybrid = true;",
     "case files lose the hybrid flag"),
    ("sim-oob-off-by-one", "core/sim/sim_views.hpp",
     "if (j < 0 || j >= extent_) {\n      record_oob(*hs_->ctx, *buf_, j, true);",
     "if (j < 0 || j > extent_) {\n      record_oob(*hs_->ctx, *buf_, j, true);",
     "the simulator lets a store one past the end through"),
    ("judge-capacity-lt", "core/check/plan_runs.cpp",
     "if (t.elems <= bp->capacity_elems()) continue;", "if (t.elems <= bp->capacity_elems() + 1) continue;",
     "the checker tolerates one element past a buffer"),
]


def run(cmd, cwd, log):
    with open(log, "a") as f:
        return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT).returncode


def failed_tests(build):
    p = pathlib.Path(build) / "Testing/Temporary/LastTestsFailed.log"
    return [l.split(":", 1)[1] for l in p.read_text().splitlines()] if p.exists() else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out")
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    log = build / "mutants.log"
    rows, survivors = [], 0
    for name, rel, old, new, what in MUTANTS:
        if a.only and name not in a.only:
            continue
        path = ROOT / rel
        original = path.read_text()
        if original.count(old) != 1:
            rows.append((name, what, "NOT APPLIED (text not found once)", ""))
            survivors += 1
            continue
        t0 = time.time()
        try:
            path.write_text(original.replace(old, new))
            built = run(["cmake", "--build", str(build), "-j2"], ROOT, log) == 0
            if not built:
                verdict, killers = "killed (does not build)", ""
            else:
                rc = run(["ctest", "-L", "cpu", "-j2", "--timeout", "300"], build, log)
                killers = ", ".join(failed_tests(build)) if rc != 0 else ""
                verdict = "killed" if rc != 0 else "SURVIVED"
        finally:
            path.write_text(original)
        survivors += verdict == "SURVIVED"
        rows.append((name, what, verdict, killers))
        print(f"{name}: {verdict} ({time.time() - t0:.0f} s) {killers}", flush=True)
    run(["cmake", "--build", str(build), "-j2"], ROOT, log)
    table = ["| mutant | bug | verdict | killed by |", "| --- | --- | --- | --- |"]
    table += [f"| `{n}` | {w} | {v} | {k} |" for n, w, v, k in rows]
    text = "\n".join(table) + f"\n\n{len(rows) - survivors} of {len(rows)} killed\n"
    print(text)
    if a.out:
        pathlib.Path(a.out).write_text(text)
    return 0 if survivors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
