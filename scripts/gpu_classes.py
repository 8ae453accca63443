#!/usr/bin/env python3
"""The catalogue's classes on a device: the simulator and the GPU must see the same findings.

    scripts/gpu_classes.py HEADROOM OUT_DIR [--mutant-seeds 3] [--cases 1000] [--seed 7]

Three passes, each run on `--target sim` and `--target gpu` with the same binary:
  1. every stored regression case (regressions/*.json) replayed: same exit code and the same
     (invariant, buffer, class) findings, the GPU's guard_corrupted aside (the simulator has no
     guard bands);
  2. every mutant of `headroom mutants` fuzzed from cold seeds with --stop-after 1: the same
     first failing case;
  3. the fixed mirror fuzzed on the whole generated mix (every kernel family): clean on both.
Writes OUT_DIR/summary.md and OUT_DIR/classes.json. Exit 0 when every comparison agrees.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, time.monotonic() - t


# Findings one target can make and the other cannot, left out of the comparison: guard bands exist
# on the GPU only; inside a guard band an overflowing write lands and is read back, so the GPU's
# output can be right where the simulator (which drops out-of-bounds writes) reports
# output_mismatch; and an out-of-bounds read of an index (a block-table entry, a prefix sum) gives
# the simulator a poisoned value it stops at, while the GPU goes on to a wild address and faults
# (an out_of_bounds finding with no buffer). Both targets must still name the same out-of-bounds
# buffers and the same formula findings.
def comparable(v):
    if v.get("invariant") in ("guard_corrupted", "output_mismatch"):
        return False
    return not (v.get("invariant") == "out_of_bounds" and not v.get("buffer"))


def findings(report):
    return {(v.get("invariant"), v.get("buffer", ""), v.get("class", ""))
            for v in report.get("violations", []) if comparable(v)}


def replay(headroom, case, target, work):
    out = work / f"{case.stem}.{target}.json"
    p, secs = run([headroom, "replay", str(case), "--target", target, "--json", str(out)])
    rep = json.loads(out.read_text()) if out.exists() else {}
    return p.returncode, findings(rep), secs, p.stderr.strip()[-300:]


def first_failing(headroom, mutant, seed, cases, target, work):
    out = work / f"fuzz-{mutant}-{seed}-{target}"
    p, secs = run([headroom, "fuzz", "--mutant", mutant, "--seed", str(seed), "--cases", str(cases),
                   "--stop-after", "1", "--target", target, "--out", str(out)])
    m = re.search(r"first failing case: index (\d+)", p.stdout)
    return p.returncode, (int(m.group(1)) if m else None), secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("headroom")
    ap.add_argument("out")
    ap.add_argument("--mutant-seeds", type=int, default=3)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--targets", default="sim,gpu", help="the two targets compared (model,sim to try it here)")
    ap.add_argument("--skip-mutants", action="store_true")
    a = ap.parse_args()
    t1, t2 = a.targets.split(",")
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="headroom-classes-"))  # reports and corpora, not kept
    rows, ok = {"regressions": [], "mutants": [], "clean": []}, True

    for case in sorted((ROOT / "regressions").glob("*.json")):
        sim = replay(a.headroom, case, t1, work)
        gpu = replay(a.headroom, case, t2, work)
        agree = sim[0] == gpu[0] and sim[1] == gpu[1]
        ok &= agree
        rows["regressions"].append({"case": case.name, "sim_rc": sim[0], "gpu_rc": gpu[0], "agree": agree,
                                    "sim": sorted(map(list, sim[1])), "gpu": sorted(map(list, gpu[1])),
                                    "sim_s": round(sim[2], 2), "gpu_s": round(gpu[2], 2), "gpu_err": gpu[3]})

    names = json.loads(subprocess.run([a.headroom, "mutants", "--json", "-"], capture_output=True,
                                      text=True, check=True).stdout)
    for m in [] if a.skip_mutants else names:
        for seed in range(1, a.mutant_seeds + 1):
            sim = first_failing(a.headroom, m["name"], seed, 2000, t1, work)
            gpu = first_failing(a.headroom, m["name"], seed, 2000, t2, work)
            agree = sim[:2] == gpu[:2]
            ok &= agree
            rows["mutants"].append({"mutant": m["name"], "class": m["class"], "seed": seed, "sim_rc": sim[0],
                                    "gpu_rc": gpu[0], "sim_first": sim[1], "gpu_first": gpu[1], "agree": agree,
                                    "sim_s": round(sim[2], 2), "gpu_s": round(gpu[2], 2)})

    for target in (t1, t2):
        p, secs = run([a.headroom, "fuzz", "--seed", str(a.seed), "--cases", str(a.cases), "--target", target,
                       "--out", str(work / f"clean-{target}")])
        clean = p.returncode == 0
        ok &= clean
        rows["clean"].append({"target": target, "cases": a.cases, "rc": p.returncode, "seconds": round(secs, 1),
                              "tail": p.stdout.strip().splitlines()[-3:]})

    (out / "classes.json").write_text(json.dumps(rows, indent=1))
    md = ["# Classes on the simulator and the GPU", "",
          f"regressions: {sum(r['agree'] for r in rows['regressions'])} / {len(rows['regressions'])} agree",
          f"mutant first failing cases: {sum(r['agree'] for r in rows['mutants'])} / {len(rows['mutants'])} agree",
          "", "| case | sim rc | gpu rc | agree | findings (sim) | sim s | gpu s |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows["regressions"]:
        f = "; ".join("/".join(x for x in t if x) for t in r["sim"])
        md.append(f"| {r['case']} | {r['sim_rc']} | {r['gpu_rc']} | {r['agree']} | {f} | {r['sim_s']} | {r['gpu_s']} |")
    md += ["", "| mutant | class | seed | first failing (sim) | (gpu) | agree | sim s | gpu s |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows["mutants"]:
        md.append(f"| {r['mutant']} | {r['class']} | {r['seed']} | {r['sim_first']} | {r['gpu_first']} | "
                  f"{r['agree']} | {r['sim_s']} | {r['gpu_s']} |")
    md += ["", "| fixed mirror | cases | exit | seconds | last lines |", "| --- | --- | --- | --- | --- |"]
    for r in rows["clean"]:
        md.append(f"| {r['target']} | {r['cases']} | {r['rc']} | {r['seconds']} | {' / '.join(r['tail'])} |")
    for r in rows["regressions"]:
        if not r["agree"]:
            md.append(f"\nDISAGREE {r['case']}: sim {r['sim']} gpu {r['gpu']} {r['gpu_err']}")
    (out / "summary.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
