#!/usr/bin/env python3
"""Rows of the engine lane's C3 table (scripts/engine_lane.sh, step fa3): for each TP, what
`headroom check --json` reported for class C3 on the formulas (MODEL_JSON) and on FA3's kernel
(ENGINE_JSON): each violation's invariant and the batch size its detail names.
usage: c3_rows.py MODEL_JSON ENGINE_JSON MIRROR SETTINGS"""

import json
import re
import sys


def findings(path):
    try:
        report = json.load(open(path))
    except (OSError, ValueError) as e:
        return None, f"no report ({e.__class__.__name__})"
    by_tp = {}
    for v in report.get("violations", []):
        if v.get("class") != "C3":
            continue
        m = re.search(r"at batch size (\d+)", v.get("detail", ""))
        text = v["invariant"] + (f" at batch {m.group(1)}" if m else "")
        by_tp.setdefault(v.get("tp"), set()).add(text)
    return by_tp, None


def cell(by_tp, err, tp):
    if err:
        return err
    return ", ".join(sorted(by_tp.get(tp, []))) or "-"


def main():
    model, model_err = findings(sys.argv[1])
    engine, engine_err = findings(sys.argv[2])
    for tp in (1, 2, 4, 8):
        print(f"| {sys.argv[3]} | {sys.argv[4]} | {tp} | {cell(model, model_err, tp)} | {cell(engine, engine_err, tp)} |")


if __name__ == "__main__":
    main()
