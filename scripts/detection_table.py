#!/usr/bin/env python3
"""The catalogue's detection table: for every mutant (or the ones named), `headroom fuzz --mutant
NAME` from cold seeds, stopped at the first counterexample that is the mutant's doing (it replays
clean once the mutant is taken out). A counterexample that still fails without the mutant is a
finding of the fixed mirror itself (a live upstream rule, docs/audit.md): it is counted in the
table's last column and the campaign goes on to the next one (up to --stop-after counterexamples).
Per mutant: seeds that find it, median and worst cases and seconds to its first failing case, the
size of its shrunk case, and the seeds where the fixed mirror's own finding came first.

    scripts/detection_table.py HEADROOM [--seeds 20] [--first-seed 1] [--cases 2000]
                               [--target sim] [--only NAME ...] [--stop-after 4] [--md OUT.md]

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


def counterexamples(stdout):
    """(case index, seconds written after, file) of each counterexample the fuzz report lists."""
    return [(int(m.group(1)), float(m.group(2)), m.group(3)) for m in re.finditer(
        r"\(case (\d+), [^)]*written after ([0-9.]+) s\)\n\s+repro: headroom replay (\S+)", stdout)]


def replays_clean(headroom, case, name, path, target):
    """Whether the shrunk case replays clean with the mutant taken out."""
    fixed = dict(case)
    fixed["mutants"] = [x for x in case.get("mutants", []) if x != name]
    if fixed.get("triton", {}).get("kv_from_group_spec") is False:
        fixed["triton"]["kv_from_group_spec"] = True
    fixed_file = path.with_suffix(".without-mutant.case")
    fixed_file.write_text(json.dumps(fixed))
    return subprocess.run([headroom, "replay", str(fixed_file), "--target", target],
                          capture_output=True, text=True).returncode == 0


def run_seed(headroom, name, seed, cases, target, stop_after, work):
    out_dir = work / f"{name}-{seed}"
    cmd = [headroom, "fuzz", "--mutant", name, "--seed", str(seed), "--cases", str(cases),
           "--stop-after", str(stop_after), "--target", target, "--out", str(out_dir)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 1:
        return None
    first = re.search(r"first failing case: index (\d+) \(\d+ cases\), after ([0-9.]+) s", p.stdout)
    live_first = False
    for index, written, path in sorted(counterexamples(p.stdout)):
        case = json.loads(pathlib.Path(path).read_text())
        if not replays_clean(headroom, case, name, pathlib.Path(path), target):
            live_first = True  # the fixed mirror fails it too: not the mutant's doing
            continue
        found_at = float(first.group(2)) if first and int(first.group(1)) == index else written
        layers = sum(1 for l in case["model"]["layers"] if l.get("type") != "none")
        return {"cases": index + 1, "seconds": found_at, "written": written, "layers": layers,
                "requests": len(case["batch"]["seq_lens"]), "live_first": live_first}
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("headroom")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--target", default="sim")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--stop-after", type=int, default=4)
    ap.add_argument("--md")
    a = ap.parse_args()
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name, cls in mutant_names(a.headroom):
            if a.only and name not in a.only:
                continue
            runs = [run_seed(a.headroom, name, a.first_seed + i, a.cases, a.target, a.stop_after, work)
                    for i in range(a.seeds)]
            found = [r for r in runs if r]
            ok = ok and len(found) == a.seeds
            med = lambda k: statistics.median(r[k] for r in found) if found else float("nan")  # noqa: E731
            worst = lambda k: max(r[k] for r in found) if found else float("nan")  # noqa: E731
            rows.append(f"| `{name}` | {cls} | {len(found)}/{a.seeds} | {med('cases'):g} / {worst('cases'):g} | "
                        f"{med('seconds'):.2f} / {worst('seconds'):.2f} | {med('written'):.2f} | "
                        f"{med('layers'):g} layers, {med('requests'):g} requests | "
                        f"{sum(r['live_first'] for r in found)} |")
            print(rows[-1], flush=True)
    head = ["| mutant | class | seeds that find it | cases to first failure (median / worst) | "
            "seconds (median / worst) | seconds to the shrunk file (median) | shrunk case (median) | "
            "seeds where a fixed-mirror finding came first |", "|---|---|---|---|---|---|---|---|"]
    table = "\n".join(head + rows) + "\n"
    print(table)
    if a.md:
        pathlib.Path(a.md).write_text(table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
