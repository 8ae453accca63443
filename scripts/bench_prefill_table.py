#!/usr/bin/env python3
"""One table from bench_gpu_prefill's --benchmark_format=json output and bench_sdpa.py --prefill's JSON.

usage: bench_prefill_table.py HEADROOM.json [--sdpa SDPA.json] [--md OUT.md]

Rows: shapes. Columns: the plan (cta_tile_q, split, work items written / padded) and the attention
launch (warps, blocks per SM); headroom's FlashInfer-style prefill (median ms, TFLOP/s); the
guard-band overhead (fi_prefill_guarded / fi_prefill - 1); torch SDPA's TFLOP/s with its own choice,
with the flash backend and with the cuDNN backend; headroom / flash and headroom / cuDNN.
TFLOP/s everywhere = causal FLOPs / median time, causal FLOPs = 4 * Hq * D * sum_i q_i (q_i + 1) / 2.
A missing number (a backend torch does not have, a shape it refuses, a failed check) is "n/a" with
its reason under the table. Prints the table and writes it with --md.
"""
import argparse
import json
import os
import sys

import bench_table  # the decode table's reader of Google Benchmark JSON (same folder)

SHAPES = ["1x8192", "4x4096", "8x2048", "32x512"]


def load_gbench(path):
    """{"fi_prefill/1x8192": entry} as bench_table.py reads them; {} when the file is missing or broken."""
    try:
        return bench_table.load_gbench(path)[1]
    except (OSError, ValueError):
        return {}


def load_sdpa(path):
    if not path or not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        data = json.load(f)
    return {s["shape"]: s for s in data.get("shapes", [])}, data.get("unavailable", {})


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("headroom")
    ap.add_argument("--sdpa")
    ap.add_argument("--md")
    args = ap.parse_args()
    ours = load_gbench(args.headroom)
    sdpa, unavailable = load_sdpa(args.sdpa)
    notes = [f"SDPA {n}: unavailable ({why})" for n, why in unavailable.items()]
    if not sdpa:
        notes.append("SDPA: no results (PyTorch or the device missing, or bench_sdpa.py failed: sdpa.log)")
    head = ["shape", "plan: cta_tile_q / split / work items (padded)", "warps, blocks/SM", "ours ms",
            "ours TFLOP/s", "guard overhead", "SDPA default", "SDPA flash", "SDPA cuDNN", "ours / flash",
            "ours / cuDNN"]
    rows = []
    for shape in SHAPES:
        b, g = ours.get(f"fi_prefill/{shape}", {}), ours.get(f"fi_prefill_guarded/{shape}", {})
        for name, e in ((f"fi_prefill/{shape}", b), (f"fi_prefill_guarded/{shape}", g)):
            if "error" in e:
                notes.append(f"{name}: {e['error']}")
        tf = b.get("TFLOPs")
        ms = b["median_us"] * 1e-3 if "median_us" in b else None
        plan = (f"{int(b['cta_tile_q'])} / {'split' if b['split'] else 'no'} / {int(b['work_items'])} "
                f"({int(b['padded'])})" if "cta_tile_q" in b else "n/a")
        launch = f"{int(b['warps'])}, {int(b['blocks_per_sm'])}" if "warps" in b else "n/a"
        over = (g["median_us"] / b["median_us"] - 1) * 100 if "median_us" in g and "median_us" in b else None
        s = sdpa.get(shape, {})
        per = {}
        for n in ("default", "flash", "cudnn"):
            x = s.get("backends", {}).get(n)
            per[n] = x["TFLOPs"] if x else None
            if x and x.get("kv_repeated"):
                notes.append(f"SDPA {n} {shape}: refused enable_gqa; timed with K and V repeated to Hq heads")
            if s and n in s.get("errors", {}):
                notes.append(f"SDPA {n} {shape}: {s['errors'][n]}")
        ratio = {n: tf / per[n] if tf and per[n] else None for n in ("flash", "cudnn")}
        rows.append([shape, plan, launch, fmt(ms, ".2f"), fmt(tf, ".1f"),
                     "n/a" if over is None else f"{over:+.1f}%", fmt(per["default"], ".1f"),
                     fmt(per["flash"], ".1f"), fmt(per["cudnn"], ".1f"), fmt(ratio["flash"], ".2f"),
                     fmt(ratio["cudnn"], ".2f")])
    if not ours:
        notes.append(f"headroom: no benchmark results in {args.headroom} (no device? headroom.log)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += [""] + [f"- {n}" for n in notes] if notes else []
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
