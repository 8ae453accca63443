# Properties over random geometries (headroom.generate, seeded; the base seed is printed and
# HEADROOM_SEED replays it): the mirror's plan verifies clean, and a buffer cut below what the
# kernels need is found at the batch the formulas give, by the model and the simulator alike.
import copy

import headroom
from conftest import buffer, threshold

CASES = 12       # random geometries per property
CUT_CASES = 6    # geometries whose seq_threshold_3D is in range (about 3 in 10 are)
MAX_NUM_SEQS = 40


def triton_groups(plan):
    return [g for g in plan["ranks"][0]["groups"] if g["backend"] == "triton"]


def max_layer_heads(model, tp, layers):
    heads = {l["name"]: l["num_heads"] // tp for l in model["layers"]}
    return max(heads[n] for n in layers)


def test_plan_of_a_random_geometry_verifies_clean(base_seed):
    for k in range(CASES):
        g = headroom.generate(base_seed + k)
        r = headroom.verify(headroom.plan(g["explicit"], tp=g["tp"], max_num_seqs=MAX_NUM_SEQS))
        assert r["ok"], f"seed {g['seed']}: {r['violations'][0]['detail']}"


def cut_segm_max(plan, g):
    """softmax_segm_max one element short of seq_threshold_3D full requests of the widest layer."""
    p = copy.deepcopy(plan)
    entry = triton_groups(p)[0]
    thr = entry["parameters"]["seq_threshold_3D"]
    rows = thr * max_layer_heads(p["model"], g["tp"], entry["layers"]) * 16 - 1
    b = buffer(entry, "softmax_segm_max")
    b["shape"], b["bytes"] = [rows], rows * 4
    p["ranks"][0]["groups"] = [entry]  # only the cut group: the simulator runs every group it is given
    return p, entry["group"], thr


def test_a_buffer_cut_below_the_need_is_found(base_seed):
    found = []
    for k in range(40 * CUT_CASES):
        if len(found) == CUT_CASES:
            break
        g = headroom.generate(base_seed + 1000 + k)
        plan = headroom.plan(g["explicit"], tp=g["tp"], backend="triton", max_num_seqs=MAX_NUM_SEQS)
        p, index, thr = cut_segm_max(plan, g)
        if thr < 1 or thr > MAX_NUM_SEQS:
            continue  # no decode batch in range takes the 3D path up to thr requests
        r = headroom.verify(p)
        assert not r["ok"], f"seed {g['seed']}: the cut was not found"
        assert threshold(r, "triton", g["tp"], index) == thr, f"seed {g['seed']}"
        params = triton_groups(p)[0]["parameters"]
        cost = thr * params["num_heads_q"] * params["headdim"]  # of one simulated decode batch
        found.append((cost, thr, g, p, index))
    assert len(found) == CUT_CASES, f"base seed {base_seed}: too few cases with seq_threshold_3D in 1..{MAX_NUM_SEQS}"
    # The simulator agrees with the formulas; it runs the kernels, so on the two cheapest cases.
    for _, thr, g, p, index in sorted(found, key=lambda f: f[0])[:2]:
        sim = headroom.verify(p, target="sim")
        assert threshold(sim, "triton", g["tp"], index) == thr, f"seed {g['seed']} (sim)"
