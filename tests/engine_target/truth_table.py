#!/usr/bin/env python3
"""The ground-truth table of docs/engine-kernels.md: for every bundled config, TP size, backend and
mirror (the fixed one or a catalogue mutant), which decode batches fail on the formulas, on the
simulator and on the engines' own kernels.

    truth_table.py --headroom BUILD/cli/headroom --out DIR [--targets sim,engine] [--jobs N]
                   [--configs A.json,B.json] [--tp 1,2,4,8] [--backends triton,flashinfer]
                   [--deadline SECONDS] [--from DIR ...]

A unit is one (config, backend, mirror, TP). Its decode batch n is n requests of 256 tokens, one
query row each (the batches `headroom check` sweeps), run as a case of `headroom replay`, which
checks every attention group of the backend at that batch; a group fails at n when any violation of
the group is one of FAIL (a store past a buffer, a changed guard band, a fault, a read of a work
entry no plan wrote). The formulas (--target model) run every batch 1..max_num_seqs. The simulator
and the engines' kernels run a sample and refine it by bisection:

  - every power of two up to the largest batch (or --sample-max), that batch, and each group's
    first failing batch on the formulas and the one before it;
  - then, for each group, the middle of the gap below the first failing batch run and the largest
    clean one under it, until the two are neighbours.

So each target's first failing batch is its own (the engine can fail earlier or later than the
formulas, or not at all, and the table says so); what a sample can miss is a run of failing
batches that begins and ends strictly between two batches run with the same verdict (or above the
sample, where the formulas see no failure). Every batch run is compared with the formulas' verdict.

Batches whose inputs exceed what the simulator builds (2^26 KV or q elements a layer) are not run
on sim or engine; each unit records its cap. The engine target takes up to 2^28 (kernels/inputs.hpp
input_cap_of), but the table runs both targets on one sample, so the simulator's cap bounds it.

The C10 rows plan decode as vLLM 8e958902 does under FULL CUDA graphs (tensor-core decode through
FlashInfer's prefill planner) with split-KV disabled (VLLM_BATCH_INVARIANT): `--cuda-graph
--flashinfer-decode tensor-cores --batch-invariant true`. FlashInfer's fixed and model-wide rows run
twice: on the CUDA-core decode plan they were first measured on (`--flashinfer-decode cuda-cores`)
and, as tc-fixed and tc-model-wide-heads, on tensor-core decode (check's default, vLLM's path). check's min_failing_decode_batch counts capacity failures only; for the C10 rows the table
takes its C10 threshold instead (the first failing capture size: a decode batch of that many requests).

Output: DIR/truth.tsv (one row per unit and group), DIR/truth.md (one row per config, backend and
mirror: the first failing batch over the groups per TP), DIR/units/*.json (each unit's verdicts;
--from reads them back, or an earlier truth.tsv), DIR/logs/, DIR/cases/ (the commands' files).
Exit 0 when every unit ran, 1 when some did not (errors or the deadline), 2 on bad arguments.
"""

import argparse
import concurrent.futures
import copy
import glob
import json
import os
import subprocess
import sys
import threading
import time

FAIL = {"buffer_capacity", "index_overflow", "out_of_bounds", "guard_corrupted", "uninitialized_read"}
SEQ_LEN = 256  # check's decode batches: requests of 256 tokens (check_options::decode_seq_len)
MAX_ELEMS = 1 << 26  # make_attention_inputs: KV or q elements a layer the simulator builds inputs for
TC_GRAPH = {"tensor_core_decode": True, "cuda_graph": True, "disable_split_kv": True}
CUDA_CORES = {"tensor_core_decode": False}
TENSOR_CORES = {"tensor_core_decode": True}  # vLLM's decode path since v0.10.2, check's default
# (name, mutants, flashinfer options): the mirrors each backend is run with.
MIRRORS = {
    "triton": [("fixed", [], {}), ("model-wide-heads", ["model-wide-heads"], {}),
               ("triton-model-head-size", ["triton-model-head-size"], {}),
               ("triton-model-kv-heads", ["triton-model-kv-heads"], {})],
    "flashinfer": [("fixed", [], CUDA_CORES), ("model-wide-heads", ["model-wide-heads"], CUDA_CORES),
                   ("tc-fixed", [], TENSOR_CORES), ("tc-model-wide-heads", ["model-wide-heads"], TENSOR_CORES),
                   ("tc-graph-fixed", [], TC_GRAPH),
                   ("fi-graph-grid-unwritten", ["fi-graph-grid-unwritten"], TC_GRAPH)],
}
ATTENTION_KERNELS = {"vllm_triton", "flashinfer_decode", "flashinfer_prefill", "triton", "fi_decode", "fi_prefill"}


def bad(msg):
    print(f"truth_table: {msg}", file=sys.stderr)
    sys.exit(2)


class Unit:
    def __init__(self, cfg, backend, mirror, mutants, fi_opts, tp):
        self.cfg, self.backend, self.mirror, self.mutants, self.fi_opts, self.tp = (
            cfg, backend, mirror, mutants, fi_opts, tp)
        self.key = f"{os.path.basename(cfg)[:-5]}.{backend}.{mirror}.tp{tp}"
        self.result = {"config": os.path.basename(cfg), "backend": backend, "mirror": mirror, "tp": tp,
                       "targets": {}, "errors": []}


class Runner:
    def __init__(self, args):
        self.hr = os.path.abspath(args.headroom)
        self.out = os.path.abspath(args.out)
        self.start = time.monotonic()
        self.deadline = args.deadline
        self.grace = args.grace
        self.sample_max = args.sample_max
        self.lock = threading.Lock()
        self.twins = {}  # plan_key -> [event, first unit's result]
        for d in ("units", "logs", "cases"):
            os.makedirs(os.path.join(self.out, d), exist_ok=True)

    def left(self):
        return self.deadline - (time.monotonic() - self.start)

    def log(self, unit, text):
        with open(os.path.join(self.out, "logs", unit.key + ".log"), "a") as f:
            f.write(text.rstrip() + "\n")

    def run(self, unit, argv, env=None, timeout=None):
        """Runs a headroom command; (exit code, output). Past the deadline, nothing new starts."""
        if self.left() <= 0:
            raise TimeoutError("deadline reached")
        limit = self.left() + self.grace if timeout is None else min(timeout, self.left() + self.grace)
        t0 = time.monotonic()
        try:
            p = subprocess.run([self.hr] + argv, capture_output=True, text=True, timeout=limit,
                               env=env)
            rc, text = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc, text = 124, f"timed out after {limit:.0f} s\n{e.stdout or ''}{e.stderr or ''}"
        self.log(unit, f"$ headroom {' '.join(argv)}\n  exit {rc} in {time.monotonic() - t0:.1f} s\n"
                       + "\n".join(text.splitlines()[-6:]))
        return rc, text

    def twin_of(self, key, unit):
        """None for the first unit of a plan key (it runs the cases); later ones wait for its result."""
        with self.lock:
            entry = self.twins.get(key)
            if entry is None:
                self.twins[key] = [threading.Event(), None]
                return None
        if not entry[0].wait(timeout=max(0.0, self.left() + self.grace)) or entry[1] is None:
            raise TimeoutError("deadline reached waiting for the unit with the same plan")
        return entry[1]

    def twin_done(self, key, res):
        with self.lock:
            entry = self.twins[key]
            entry[1] = res
        entry[0].set()

    def path(self, unit, name):
        return os.path.join(self.out, "cases", f"{unit.key}.{name}")


def unit_flags(unit):
    f = ["--tp", str(unit.tp), "--backend", unit.backend]
    for m in unit.mutants:
        f += ["--mutant", m]
    if unit.fi_opts.get("cuda_graph"):
        f.append("--cuda-graph")
    if "tensor_core_decode" in unit.fi_opts:
        f += ["--flashinfer-decode", "tensor-cores" if unit.fi_opts["tensor_core_decode"] else "cuda-cores"]
    if unit.fi_opts.get("disable_split_kv"):
        f += ["--batch-invariant", "true"]
    return f


def decode_case(plan, unit, n):
    """A replay case: the decode batch of n requests under the unit's mirror (core/check/case.cpp)."""
    fi = dict(plan["flashinfer"])
    fi.update(unit.fi_opts)
    kv = plan["kv_cache"]
    return {"headroom_case": 1, "model_ref": 0, "tp": unit.tp, "backend": unit.backend,
            "policy": "per-layer", "grouping": "heads", "hybrid": kv["hybrid"],
            "block_size": kv["block_size"], "kv_layout": kv["layout"],
            "batch": {"seq_lens": [SEQ_LEN] * n, "query_lens": [1] * n}, "seed": 0,
            "engine": plan["engine"], "step": {"kind": "forward"}, "mutants": unit.mutants,
            "flashinfer": fi}


def backend_groups(plan, unit):
    """{group: [layer names]} and the rank's layers of the backend's groups."""
    rank = plan["ranks"][0]
    groups = {g["group"]: g["layers"] for g in rank["groups"] if g["backend"] == unit.backend}
    names = {n for ls in groups.values() for n in ls}
    return groups, [l for l in rank["layers"] if l["name"] in names]


def host_cap(plan, layers, max_n):
    """The largest decode batch whose every layer's KV and q fit the simulator's 2^26 elements."""
    bs = plan["kv_cache"]["block_size"]
    kv_tokens = -(-SEQ_LEN // bs) * bs
    cap = max_n
    for l in layers:
        per_req = max(kv_tokens * l["num_kv_heads"] * l["head_size"], l["num_heads"] * l["head_size"])
        cap = min(cap, MAX_ELEMS // per_req)
    return cap


def replay(r, unit, plan, target, ns, tag, env):
    """Runs decode batches ns on a target; {n: {group: [fail, [invariants]]}} or raises."""
    report = {"ok": False, "models": [plan["model"]], "thresholds": [], "notes": [],
              "violations": [{"case": decode_case(plan, unit, n)} for n in ns]}
    src, dst = r.path(unit, f"{target}.{tag}.cases.json"), r.path(unit, f"{target}.{tag}.json")
    with open(src, "w") as f:
        json.dump(report, f)
    rc, text = r.run(unit, ["replay", src, "--target", target, "--json", dst], env=env)
    if rc not in (0, 1):
        raise RuntimeError(f"replay on {target} exit {rc}: " + " | ".join(text.strip().splitlines()[-3:]))
    seen = {n: {} for n in ns}
    for v in json.load(open(dst))["violations"]:
        n = len(v["case"]["batch"]["seq_lens"])
        if v["backend"] != unit.backend or n not in seen:
            continue
        g = seen[n].setdefault(v["group"], [False, []])
        g[0] = g[0] or v["invariant"] in FAIL
        name = v["invariant"] + (f"({v['buffer']})" if v.get("buffer") else "")
        if name not in g[1]:
            g[1].append(name)
    return seen


def verdict(evald, n, g):
    return evald[n].get(g, [False, []])[0]


def first_failing(evald, g):
    return next((n for n in sorted(evald) if verdict(evald, n, g)), None)


def search(run_points, groups, cap, formula_first, sample_max=None):
    """The sample (powers of two up to sample_max, or the cap), the formulas' first failing batches
    and their predecessors, then per group a bisection of the gap below the first failing batch run.
    run_points(ns, tag) -> {n: {group: [fails, invariants]}}; returns (verdicts, rounds)."""
    top = min(cap, sample_max or cap)
    pts = {1, top} | {1 << k for k in range(12) if (1 << k) <= top}
    pts |= {n for f in formula_first for n in (f - 1, f) if 1 <= n <= cap}
    evald, rounds = {}, 0
    while True:
        todo = sorted(pts - set(evald))
        if not todo:
            break
        evald.update(run_points(todo, f"r{rounds}"))
        rounds += 1
        for g in groups:
            first = first_failing(evald, g)
            below = [n for n in evald if first is not None and n < first]
            lo = max(below, default=0)
            if first is not None and first - lo > 1:
                pts.add((lo + first) // 2)
    return evald, rounds


def engine_env(r, unit):
    """The engine worker starts every driver it has: only the unit's engine's is let start."""
    env = dict(os.environ)
    env["HEADROOM_ENGINE_RUNS"] = r.path(unit, "engine.runs.tsv")
    if unit.backend == "flashinfer":
        env["HEADROOM_ENGINE_DRIVER"] = os.path.join(r.out, "cases", "no-vllm-driver")
    else:
        env["HEADROOM_FLASHINFER_DRIVER"] = os.path.join(r.out, "cases", "no-flashinfer-driver")
    return env


def kernel_use(path, groups):
    """Per group, the attention runs on the engine's kernels and on the simulator (the run log)."""
    layer_group = {n: g for g, ls in groups.items() for n in ls}
    use = {g: [0, 0] for g in groups}
    if os.path.exists(path):
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 3 and f[1] in ATTENTION_KERNELS and f[2] in layer_group:
                use[layer_group[f[2]]][0 if f[0] == "engine" else 1] += 1
    return use


def summarise(evald, groups, model=None):
    """Per group: the failing batches run, as ranges; the first failing batch; the invariants seen;
    against the formulas (model), the batches run whose verdict differs from theirs."""
    out = {}
    for g in groups:
        differ = [n for n in sorted(evald) if model is not None and verdict(evald, n, g) != verdict(model, n, g)]
        fails = [n for n in sorted(evald) if verdict(evald, n, g)]
        ranges, run = [], None
        for n in sorted(evald):
            if verdict(evald, n, g):
                run = [n, n] if run is None else [run[0], n]
            elif run:
                ranges.append(run)
                run = None
        if run:
            ranges.append(run)
        invs = sorted({i for n in evald for i in evald[n].get(g, [False, []])[1]})
        out[str(g)] = {"first": fails[0] if fails else None, "ranges": ranges, "invariants": invs,
                       "points": len(evald), "differ": differ}
    return out


def plan_key(plan, unit):
    """Units whose plans are equal but for the model's name run the same cases: one runs them."""
    p = dict(plan)
    p.pop("source", None)
    p["model"] = {k: v for k, v in plan["model"].items() if k != "name"}
    return (json.dumps(p, sort_keys=True), unit.backend, unit.mirror, unit.tp)


def run_targets(r, unit, plan, groups, model, targets):
    res = unit.result
    ffirst = {first_failing(model, g) for g in groups} - {None}
    for target in targets:
        t0 = time.monotonic()
        env = engine_env(r, unit) if target == "engine" else None
        evald, rounds = search(lambda ns, tag: replay(r, unit, plan, target, ns, tag, env), groups, res["cap"],
                               ffirst, r.sample_max)
        res["targets"][target] = summarise(evald, groups, model)
        res["targets"][target]["_meta"] = {"rounds": rounds, "seconds": round(time.monotonic() - t0, 1)}
        if target == "engine":
            use = kernel_use(r.path(unit, "engine.runs.tsv"), groups)
            res["targets"][target]["_meta"]["kernel_runs"] = {str(g): u for g, u in use.items()}


def run_unit(r, unit, targets):
    res = unit.result
    try:
        plan_json = r.path(unit, "plan.json")
        rc, text = r.run(unit, ["plan", unit.cfg] + unit_flags(unit) + ["--json", plan_json])
        if rc != 0:
            raise RuntimeError(f"plan exit {rc}: {text.strip().splitlines()[-1] if text.strip() else ''}")
        plan = json.load(open(plan_json))
        groups, layers = backend_groups(plan, unit)
        if not groups:
            raise RuntimeError("no attention group of this backend")
        max_n = plan["engine"]["max_num_seqs"]
        res["max_num_seqs"] = max_n
        res["groups"] = {str(g): {"layers": len(ls)} for g, ls in groups.items()}
        chk = r.path(unit, "check.json")
        rc, _ = r.run(unit, ["check", unit.cfg] + unit_flags(unit) + ["--target", "model", "--json", chk])
        if rc in (0, 1):
            thresholds = json.load(open(chk))["thresholds"]
            c10 = {t["group"]: t["min_failing"] for t in thresholds if t.get("class") == "C10"}
            for t in thresholds:
                if "variable" not in t and str(t["group"]) in res["groups"]:
                    res["groups"][str(t["group"])].update(
                        builder_heads=t["builder_heads"], layer_heads=t["layer_heads"],
                        check_min=c10.get(t["group"], t["min_failing_decode_batch"]))
        model = replay(r, unit, plan, "model", list(range(1, max_n + 1)), "all", None)
        res["targets"]["model"] = summarise(model, groups)
        res["cap"] = host_cap(plan, layers, max_n)
        twin = r.twin_of(plan_key(plan, unit), unit)
        if twin is None:
            try:
                run_targets(r, unit, plan, groups, model, targets)
            finally:
                r.twin_done(plan_key(plan, unit), res)
        else:  # the same cases: its results, not a second run of them
            res["same_plan_as"] = twin["config"]
            for t in targets:
                if t in twin["targets"]:
                    res["targets"][t] = copy.deepcopy(twin["targets"][t])
            res["errors"] += [f"({twin['config']}) {e}" for e in twin["errors"]]
    except Exception as e:  # a unit's failure is reported in its row; the others go on
        res["errors"].append(f"{type(e).__name__}: {e}")
    with open(os.path.join(r.out, "units", unit.key + ".json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def parse_ranges(text):
    out = []
    for part in text.split(",") if text not in ("", "-") else []:
        a, _, b = part.partition("-")
        out.append([int(a), int(b or a)])
    return out


def load_units(src):
    """An earlier run's units: DIR/units/*.json, or its truth.tsv read back (a device may return the
    table without the unit files)."""
    if os.path.isdir(src):
        return [json.load(open(f)) for f in glob.glob(os.path.join(src, "units", "*.json"))]
    lines = open(src).read().splitlines()
    cols = lines[0].split("\t")
    targets = [c for c in cols if c + "_first" in cols and c != "formulas"]
    units = {}
    for line in lines[1:]:
        r = dict(zip(cols, line.split("\t")))
        key = (r["config"], r["backend"], r["mirror"], int(r["tp"]))
        u = units.setdefault(key, {"config": key[0], "backend": key[1], "mirror": key[2], "tp": key[3],
                                   "targets": {}, "errors": [r["notes"]] if r["notes"] and not r["group"] else []})
        if not r["group"]:
            continue
        for t in targets:
            if r[t] == "not run":
                continue
            x = u["targets"].setdefault(t, {"_meta": {}})
            x[r["group"]] = {"first": None if r[t + "_first"] in ("", "-") else int(r[t + "_first"]),
                             "ranges": parse_ranges(r[t]), "points": int(r[t + "_points"] or 0),
                             "differ": [] if r[t + "_differ"] in ("", "-") else
                             [int(n) for n in r[t + "_differ"].split(",")],
                             "invariants": r["engine_invariants"].split() if t == "engine" else []}
            if t == "engine" and r["engine_kernel_runs"]:
                k, _, rest = r["engine_kernel_runs"].partition(" kernel / ")
                x["_meta"].setdefault("kernel_runs", {})[r["group"]] = [int(k), int(rest.split()[0])]
    return list(units.values())


def render_md(results, targets, out):
    """truth.md: one row per config, backend and mirror; per TP the first failing decode batch over
    the groups on the formulas and each target ("-": none; "x": the target did not run)."""
    shown = [t for t in targets]
    head = "| config | backend | mirror | " + " | ".join(f"TP {tp}" for tp in (1, 2, 4, 8)) + " | agree | engine's kernel |"
    lines = [f"cells: formulas / {' / '.join(shown)}", "", head, "|" + " --- |" * 9]
    by = {}
    for res in results:
        by.setdefault((res["config"], res["backend"], res["mirror"]), {})[res["tp"]] = res
    for (cfg, be, mirror), tps in by.items():
        cells, agree, kernel, sim_groups, ran = [], [], [0, 0], set(), set()
        for tp in (1, 2, 4, 8):
            res = tps.get(tp)
            if res is None or "model" not in res["targets"]:
                cells.append("x")
                continue
            def first(t):
                xs = [v["first"] for g, v in res["targets"].get(t, {}).items() if g != "_meta"]
                if t != "model" and not xs:
                    return "x"
                xs = [x for x in xs if x is not None]
                return str(min(xs)) if xs else "-"
            cells.append(" / ".join(first(t) for t in ["model"] + shown))
            for t in shown:
                if any(g != "_meta" for g in res["targets"].get(t, {})):
                    ran.add(t)
                for g, v in res["targets"].get(t, {}).items():
                    if g != "_meta" and v["differ"]:
                        agree.append(f"TP {tp} group {g} ({t}: {','.join(map(str, v['differ']))})")
            for g, u in res["targets"].get("engine", {}).get("_meta", {}).get("kernel_runs", {}).items():
                kernel[0] += u[0]
                kernel[1] += u[1]
                if u[1]:
                    sim_groups.add(g)
        runs = ("not run" if kernel == [0, 0] else "all runs" if not kernel[1]
                else f"{kernel[1]} of {sum(kernel)} runs on the simulator (groups {','.join(sorted(sim_groups))})")
        verdict = ("NO: " + "; ".join(agree) if agree else
                   f"yes ({', '.join(t for t in shown if t in ran)})" if ran else "not run")
        lines.append(f"| {cfg} | {be} | {mirror} | " + " | ".join(cells) + f" | {verdict} | {runs} |")
    with open(os.path.join(out, "truth.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def fmt_ranges(ranges):
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges) or "-"


def render(results, targets, out):
    """truth.tsv: one row per unit and group. A target agrees with the formulas when every batch it
    ran has the formulas' verdict (so its first failing batch is theirs, up to the host's cap)."""
    cols = ["config", "mirror", "backend", "tp", "group", "builder_heads", "layer_heads", "check_formulas",
            "formulas", "formulas_first"]
    for t in targets:
        cols += [t, f"{t}_first", f"{t}_points", f"{t}_differ"]
    cols += ["agree", "engine_kernel_runs", "cap", "engine_invariants", "notes"]
    rows = []
    for res in results:
        groups = res.get("groups", {})
        if not groups:
            rows.append([res["config"], res["mirror"], res["backend"], res["tp"]] + [""] * (len(cols) - 5)
                        + ["; ".join(res["errors"]) or "not run"])
            continue
        for g, info in sorted(groups.items(), key=lambda x: int(x[0])):
            tg = res["targets"]
            f = tg.get("model", {}).get(g, {})
            check = info.get("check_min", "")
            row = [res["config"], res["mirror"], res["backend"], res["tp"], g, info.get("builder_heads", ""),
                   info.get("layer_heads", ""), "-" if check is None else check,
                   fmt_ranges(f.get("ranges", [])), f.get("first") or "-"]
            agree = "yes" if f else "not run"
            for t in targets:
                x = tg.get(t, {}).get(g)
                if x is None:
                    row += ["not run", "", "", ""]
                    agree = "not run" if agree == "yes" else agree
                    continue
                row += [fmt_ranges(x["ranges"]), x["first"] or "-", x["points"],
                        ",".join(map(str, x["differ"])) or "-"]
                if x["differ"]:
                    agree = "NO"
            e = tg.get("engine", {})
            use = e.get("_meta", {}).get("kernel_runs", {}).get(g, "")
            notes = res["errors"] + ([f"same plan as {res['same_plan_as']}: its runs"]
                                     if res.get("same_plan_as") else [])
            row += [agree, f"{use[0]} kernel / {use[1]} sim" if use else "", res.get("cap", ""),
                    " ".join(e.get(g, {}).get("invariants", [])), "; ".join(notes)]
            rows.append(row)
    with open(os.path.join(out, "truth.tsv"), "w") as f:
        f.write("\t".join(cols) + "\n")
        for row in rows:
            f.write("\t".join("" if x is None else str(x) for x in row) + "\n")
    return rows, cols


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--headroom", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default="")
    ap.add_argument("--tp", default="1,2,4,8")
    ap.add_argument("--backends", default="triton,flashinfer")
    ap.add_argument("--mirrors", default="", help="only these mirrors (names as in the table), in this order")
    ap.add_argument("--targets", default="engine", help="sim, engine (the formulas always run)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--deadline", type=float, default=86400.0, help="seconds: nothing new starts after")
    ap.add_argument("--sample-max", type=int, default=0,
                    help="the sample's powers of two stop here (default: at the host's cap)")
    ap.add_argument("--grace", type=float, default=30.0, help="seconds a running command may overrun")
    ap.add_argument("--from", dest="sources", action="append", default=[],
                    help="an earlier run's DIR (or its truth.tsv): its units' target results join this table")
    ap.add_argument("--order-from", default="",
                    help="an earlier run's DIR: its units' seconds order this run's, the dearest first")
    a = ap.parse_args()
    if not os.access(a.headroom, os.X_OK):
        bad(f"--headroom {a.headroom}: not an executable")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cfgs = a.configs.split(",") if a.configs else sorted(glob.glob(os.path.join(root, "configs", "*.json")))
    for c in cfgs:
        if not os.path.isfile(c):
            bad(f"--configs: {c}: no such file")
    try:
        tps = [int(x) for x in a.tp.split(",")]
    except ValueError:
        bad(f"--tp {a.tp}: expected a comma-separated list of integers")
    backends = a.backends.split(",")
    for b in backends:
        if b not in MIRRORS:
            bad(f"--backends: {b}: expected triton or flashinfer")
    targets = [t for t in a.targets.split(",") if t]
    for t in targets:
        if t not in ("sim", "engine", "gpu"):
            bad(f"--targets: {t}: expected sim, engine or gpu")
    mirrors = set(a.mirrors.split(",")) if a.mirrors else None
    if a.sample_max < 0:
        bad(f"--sample-max {a.sample_max}: must be at least 1 (0: the cap)")
    if a.jobs < 1:
        bad(f"--jobs {a.jobs}: must be at least 1")
    r = Runner(a)
    units = [Unit(os.path.abspath(c), b, m, mu, fo, tp) for c in cfgs for b in backends
             for (m, mu, fo) in MIRRORS[b] if mirrors is None or m in mirrors for tp in tps]
    # The dearest first: by an earlier run's seconds where given (units it lacks before all), else a
    # rank's heads shrink with TP and a larger config has more layer geometries.
    cost = {}
    for f in glob.glob(os.path.join(a.order_from, "units", "*.json")) if a.order_from else []:
        x = json.load(open(f))
        cost[(x["config"], x["backend"], x["mirror"], x["tp"])] = sum(
            t.get("_meta", {}).get("seconds", 0) for t in x["targets"].values())
    # --mirrors given: in its order first (what a deadline cuts is the end of that list).
    rank = {m: i for i, m in enumerate(a.mirrors.split(","))} if a.mirrors else {}
    units.sort(key=lambda u: (rank.get(u.mirror, 0), -cost.get((os.path.basename(u.cfg), u.backend, u.mirror, u.tp),
                                                               1e9), u.tp, -os.path.getsize(u.cfg)))
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(run_unit, r, u, targets) for u in units]
        for fut in concurrent.futures.as_completed(futures):
            res = fut.result()
            results.append(res)
            done = {t: res["targets"].get(t, {}).get("_meta", {}).get("seconds") for t in targets}
            print(f"[{time.monotonic() - r.start:6.0f} s] {res['config']} {res['backend']} {res['mirror']} "
                  f"tp {res['tp']}: {done} {'; '.join(res['errors'])}", flush=True)
    for src in a.sources:  # earlier runs' target results (e.g. the simulator's, run elsewhere)
        by_key = {(x["config"], x["backend"], x["mirror"], x["tp"]): x for x in results}
        for old in load_units(src):
            mine = by_key.get((old["config"], old["backend"], old["mirror"], old["tp"]))
            if mine is None:
                continue
            for t, v in old["targets"].items():
                if t != "model" and t not in mine["targets"]:
                    mine["targets"][t] = v
                    if t not in targets:
                        targets.append(t)
            mine["errors"] += [f"({os.path.basename(src)}) {e}" for e in old["errors"]]
    order = {(c, b, m): i for i, (c, b, m) in enumerate(
        (os.path.basename(c), b, m) for c in cfgs for b in backends for (m, _, _) in MIRRORS[b])}
    results.sort(key=lambda x: (order.get((x["config"], x["backend"], x["mirror"]), 0), x["tp"]))
    rows, _ = render(results, targets, a.out)
    render_md(results, targets, a.out)
    bad_units = sum(1 for x in results if x["errors"])
    disagree = sum(1 for row in rows if "NO" in row)
    print(f"truth_table: {len(results)} units, {len(rows)} rows, {disagree} rows where a target and the "
          f"formulas differ, {bad_units} units with errors; {a.out}/truth.tsv")
    return 1 if bad_units else 0


if __name__ == "__main__":
    sys.exit(main())
