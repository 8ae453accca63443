#!/usr/bin/env python3
"""The catalogue's detection table: for every mutant (or the ones named), `headroom fuzz --mutant
NAME` from cold seeds, stopped at the first counterexample. Per mutant: seeds that find it, median
and worst cases and seconds to the first failing case, the size of the shrunk case, and a check
that the shrunk case is the mutant's doing (it replays clean once the mutant is taken out).

    scripts/detection_table.py HEADROOM [--seeds 20] [--first-seed 1] [--cases 2000]
                               [--target sim] [--only NAME ...] [--md OUT.md]

Exit 0 when every mutant was found from every seed, 1 otherwise.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import pathlib


def mutant_names(headroom):
    out = subprocess.run([headroom, "mutants", "--json", "-"], capture_output=True, text=True, check=True)
    return [(m["name"], m["class"]) for m in json.loads(out.stdout)]


def run_seed(headroom, name, seed, cases, target, work):
    out_dir = work / f"{name}-{seed}"
    cmd = [headroom, "fuzz", "--mutant", name, "--seed", str(seed), "--cases", str(cases),
           "--stop-after", "1", "--target", target, "--out", str(out_dir)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 1:
        return None
    m = re.search(r"first failing case: index \d+ \((\d+) cases\), after ([0-9.]+) s", p.stdout)
    w = re.search(r"first counterexample written after ([0-9.]+) s", p.stdout)
    files = sorted(out_dir.glob("*.json"))
    if not m or not files:
        return None
    case = json.loads(files[0].read_text())
    layers = sum(1 for l in case["model"]["layers"] if l.get("type") != "none")
    requests = len(case["batch"]["seq_lens"])
    # Without the mutant the shrunk case must replay clean on the same target.
    fixed = dict(case)
    fixed["mutants"] = [x for x in case.get("mutants", []) if x != name]
    if fixed.get("triton", {}).get("kv_from_group_spec") is False:
        fixed["triton"]["kv_from_group_spec"] = True
    fixed_file = out_dir / "without-mutant.case"
    fixed_file.write_text(json.dumps(fixed))
    clean = subprocess.run([headroom, "replay", str(fixed_file), "--target", target],
                           capture_output=True, text=True).returncode == 0
    return {"cases": int(m.group(1)), "seconds": float(m.group(2)),
            "written": float(w.group(1)) if w else float("nan"), "layers": layers,
            "requests": requests, "mutant_is_the_cause": clean}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("headroom")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--target", default="sim")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--md")
    a = ap.parse_args()
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name, cls in mutant_names(a.headroom):
            if a.only and name not in a.only:
                continue
            runs = [run_seed(a.headroom, name, a.first_seed + i, a.cases, a.target, work)
                    for i in range(a.seeds)]
            found = [r for r in runs if r]
            ok = ok and len(found) == a.seeds and all(r["mutant_is_the_cause"] for r in found)
            med = lambda k: statistics.median(r[k] for r in found) if found else float("nan")  # noqa: E731
            worst = lambda k: max(r[k] for r in found) if found else float("nan")  # noqa: E731
            rows.append(f"| `{name}` | {cls} | {len(found)}/{a.seeds} | {med('cases'):g} / {worst('cases'):g} | "
                        f"{med('seconds'):.2f} / {worst('seconds'):.2f} | {med('written'):.2f} | "
                        f"{med('layers'):g} layers, {med('requests'):g} requests | "
                        f"{sum(r['mutant_is_the_cause'] for r in found)}/{len(found)} |")
            print(rows[-1], flush=True)
    head = ["| mutant | class | seeds that find it | cases to first failure (median / worst) | "
            "seconds (median / worst) | seconds to the shrunk file (median) | shrunk case (median) | "
            "clean without the mutant |", "|---|---|---|---|---|---|---|---|"]
    table = "\n".join(head + rows) + "\n"
    print(table)
    if a.md:
        pathlib.Path(a.md).write_text(table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
