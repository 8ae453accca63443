#!/usr/bin/env python3
"""Markdown table and PNG plot from bench_gpu_decode's --benchmark_format=json output.

usage: bench_table.py HEADROOM.json [--sdpa SDPA.json] [--base BASE.json] [--variant SUFFIX]
                      [--md OUT.md] [--png OUT.png]

Rows: shapes. Columns: headroom's Triton-style and FlashInfer-style kernels (TB/s, the path taken),
torch SDPA (scripts/bench_sdpa.py), the copy ceiling, the kernels as fractions of SDPA and of copy,
the guard-band overhead (guarded/plain - 1, from the *_guarded benchmarks), and the paged cache's
read ceilings (read_per_head: the engines' per-kv-head order; read_by_page: whole pages; KV bytes
only, no arithmetic) with the kernels as a fraction of the per-head one. --base adds the
kernels of another build (the bodies before tuning) for before/after columns. --variant picks a
benchmark-name suffix (default none: the GPU lane's launcher). The plot needs
matplotlib: when it is missing the script installs Debian's python3-matplotlib with apt-get.
"""
import argparse
import json
import subprocess
import sys

SHAPES = ["1x32768", "16x4096", "64x4096", "128x2048", "256x1024"]


def load_gbench(path):
    """{run_name: entry} of the median aggregates (or of plain runs when there are none)."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        # "triton/1x32768/min_time:0.050/repeats:3/manual_time" -> "triton/1x32768"
        name = "/".join(b.get("run_name", b["name"]).split("/")[:2])
        if b.get("error_occurred"):
            out[name] = {"error": b.get("error_message", "error")}
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        out[name] = b
    return data.get("context", {}), out


def cell(entry, key="TBps", fmt="{:.2f}"):
    if entry is None:
        return "-"
    if "error" in entry:
        return "error"
    return fmt.format(entry[key])


def import_matplotlib():
    try:
        import matplotlib
        return matplotlib
    except ImportError:
        pass
    print("bench_table: matplotlib missing, installing python3-matplotlib with apt-get", file=sys.stderr)
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", "python3-matplotlib"], check=True)
        import matplotlib
        return matplotlib
    except (OSError, subprocess.CalledProcessError, ImportError) as e:
        print(f"bench_table: no matplotlib ({e}); no plot", file=sys.stderr)
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("headroom")
    ap.add_argument("--sdpa")
    ap.add_argument("--base")
    ap.add_argument("--variant", default="")
    ap.add_argument("--md")
    ap.add_argument("--png")
    a = ap.parse_args()
    ctx, runs = load_gbench(a.headroom)
    base = load_gbench(a.base)[1] if a.base else {}
    sdpa = {}
    if a.sdpa:
        with open(a.sdpa) as f:
            sdpa = {s["shape"]: s for s in json.load(f)["shapes"]}
    copy = runs.get("copy/1GiB", {}).get("TBps") or float(ctx.get("copy_TBps", "nan"))
    head = ["shape", "triton TB/s (path)", "fi TB/s (path)", "SDPA TB/s", "copy TB/s",
            "triton / SDPA", "fi / SDPA", "triton / copy", "fi / copy", "guard overhead triton / fi",
            "read per head / by page TB/s", "triton / fi vs read per head"]
    if base:
        head[1:1] = ["triton before", "fi before"]
    rows, plot = [], {"triton": [], "fi": [], "sdpa": []}
    for shape in SHAPES:
        t = runs.get(f"triton{a.variant}/{shape}")
        fi = runs.get(f"fi{a.variant}/{shape}")
        tg, fg = runs.get(f"triton_guarded/{shape}"), runs.get(f"fi_guarded/{shape}")
        s = sdpa.get(shape, {}).get("sdpa_TBps")
        ok = lambda e: e is not None and "error" not in e  # noqa: E731
        tv = t["TBps"] if ok(t) else None
        fv = fi["TBps"] if ok(fi) else None
        ratio = lambda x, y: f"{x / y:.2f}" if x and y else "-"  # noqa: E731
        plain_t, plain_f = runs.get(f"triton/{shape}"), runs.get(f"fi/{shape}")
        over = lambda g, p: (f"{(g['median_us'] / p['median_us'] - 1) * 100:+.1f}%"  # noqa: E731
                             if ok(g) and ok(p) else "-")
        row = [shape, f"{cell(t)} ({t.get('label', '').split()[0] if ok(t) else '-'})",
               f"{cell(fi)} ({fi.get('label', '').split()[0] if ok(fi) else '-'})",
               f"{s:.2f}" if s else "-", f"{copy:.2f}", ratio(tv, s), ratio(fv, s), ratio(tv, copy),
               ratio(fv, copy), f"{over(tg, plain_t)} / {over(fg, plain_f)}"]
        rh, rp = runs.get(f"read_per_head/{shape}"), runs.get(f"read_by_page/{shape}")
        rv = rh["TBps"] if ok(rh) else None
        row += [f"{cell(rh)} / {cell(rp)}", f"{ratio(tv, rv)} / {ratio(fv, rv)}"]
        if base:
            row[1:1] = [cell(base.get(f"triton/{shape}")), cell(base.get(f"fi/{shape}"))]
        rows.append(row)
        plot["triton"].append(tv or 0)
        plot["fi"].append(fv or 0)
        plot["sdpa"].append(s or 0)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    table = "\n".join(lines)
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(table + "\n")
    if a.png and import_matplotlib():
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 4.5))
        x = range(len(SHAPES))
        w = 0.27
        ax.bar([i - w for i in x], plot["triton"], w, label="headroom Triton-style")
        ax.bar(list(x), plot["fi"], w, label="headroom FlashInfer-style")
        ax.bar([i + w for i in x], plot["sdpa"], w, label="torch SDPA (GQA)")
        ax.axhline(copy, color="k", linestyle="--", linewidth=1, label=f"copy {copy:.2f} TB/s")
        ax.set_xticks(list(x))
        ax.set_xticklabels(SHAPES)
        ax.set_xlabel("batch x context (Hq 64, Hkv 8, D 128, bf16)")
        ax.set_ylabel("TB/s (KV + q + output bytes)")
        ax.set_title(f"Decode attention bandwidth, {ctx.get('device', sdpa and 'GPU' or '')}")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png, dpi=120)
        print(f"bench_table: wrote {a.png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
