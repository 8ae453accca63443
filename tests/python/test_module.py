# The Python module: load_config, plan and verify on the bundled Laguna XS.2 geometry, with values
# computed by hand from the config (48 query heads on full layers, 64 on sliding ones, 8 kv heads,
# head size 128) and vLLM's formulas (seq_threshold_3D = 128 // kv heads; 16 segments).
import copy

import pytest

import headroom
from conftest import buffer, config_path, group, threshold

LAGUNA = config_path("laguna-xs2.json")


def test_load_config_reads_the_per_layer_heads():
    m = headroom.load_config(LAGUNA)
    heads = [l["num_heads"] for l in m["layers"]]
    assert heads[:4] == [48, 64, 64, 64] and len(heads) == 40


def test_plan_names_vllm_buffers_with_hand_computed_shapes():
    p = headroom.plan(LAGUNA, tp=[1, 8])
    assert p["headroom_plan"] == headroom.plan_schema_version == 1
    full, sliding = group(p, 1, "triton", 0), group(p, 1, "triton", 1)
    assert full["parameters"]["num_heads_q"] == 48 and sliding["parameters"]["num_heads_q"] == 64
    assert sliding["parameters"]["seq_threshold_3D"] == 128 // 8
    out = buffer(sliding, "softmax_segm_output")
    assert out["shape"] == [16, 64, 16, 128] and out["dtype"] == "float32"
    assert out["bytes"] == 16 * 64 * 16 * 128 * 4 == 8388608
    assert buffer(full, "softmax_segm_max")["bytes"] == 16 * 48 * 16 * 4
    tp8 = group(p, 8, "triton", 1)  # 8 heads, 1 kv head per rank: thr = 128
    assert buffer(tp8, "softmax_segm_expsum")["shape"] == [128, 8, 16]
    fi = group(p, 1, "flashinfer", 1)
    assert fi["parameters"]["num_qo_heads"] == 64 and fi["parameters"]["head_dim"] == 128
    # vLLM: max(394 MiB, max_num_batched_tokens * H * D * 16) = 8192 * 64 * 128 * 16
    assert buffer(fi, "float_workspace_buffer")["bytes"] == 8192 * 64 * 128 * 16


def test_plan_fed_to_verify_is_clean():
    r = headroom.verify(headroom.plan(LAGUNA, tp=[1, 2, 4, 8]))
    assert r["ok"], r["violations"][:1]


def shrink_first_dim(plan, tp, backend, index, name):
    p = copy.deepcopy(plan)
    b = buffer(group(p, tp, backend, index), name)
    b["bytes"] //= b["shape"][0]
    b["shape"][0] -= 1
    b["bytes"] *= b["shape"][0]
    return p


@pytest.mark.parametrize("tp,thr", [(1, 16), (8, 128)])
def test_one_row_short_is_caught_at_the_threshold(tp, thr):
    # seq_threshold_3D - 1 rows hold that many requests: the request numbered thr has no row.
    p = shrink_first_dim(headroom.plan(LAGUNA, tp=tp, backend="triton"), tp, "triton", 1, "softmax_segm_output")
    r = headroom.verify(p)
    assert not r["ok"]
    v = r["violations"][0]
    assert (v["invariant"], v["buffer"], v["group"]) == ("buffer_capacity", "softmax_segm_output", 1)
    assert threshold(r, "triton", tp, 1) == thr
    assert threshold(r, "triton", tp, 0) is None


def test_one_row_short_is_caught_by_the_simulator_at_the_same_batch():
    plan = headroom.plan(LAGUNA, tp=1, backend="triton", max_num_seqs=17)
    rank = plan["ranks"][0]
    rank["groups"] = [g for g in rank["groups"] if g["group"] == 1]
    p = shrink_first_dim(plan, 1, "triton", 1, "softmax_segm_output")
    r = headroom.verify(p, target="sim")
    v = next(v for v in r["violations"] if v["invariant"] == "out_of_bounds")
    assert v["buffer"] == "softmax_segm_output"
    assert threshold(r, "triton", 1, 1) == 16


def test_the_historical_flashinfer_dump_is_caught():
    # The builder sized with the model-wide 48 heads, layers run with 64: on the CUDA-core decode
    # plan (vLLM before v0.10.2) tmp_s overflows.
    p = headroom.plan(LAGUNA, tp=1, backend="flashinfer", policy="model-wide", flashinfer_decode="cuda-cores")
    r = headroom.verify(p)
    assert {v["buffer"] for v in r["violations"] if v["invariant"] == "buffer_capacity"} == {"tmp_s"}
    assert threshold(r, "flashinfer", 1, 1) == 1


def test_a_float_workspace_too_small_is_caught():
    p = headroom.plan(LAGUNA, tp=1, backend="flashinfer")
    b = buffer(group(p, 1, "flashinfer", 0), "float_workspace_buffer")
    b["shape"], b["bytes"] = [16], 16
    r = headroom.verify(p)
    assert any(v["buffer"] == "float_workspace_buffer" for v in r["violations"])


def test_generate_replays_from_its_seed():
    a, b = headroom.generate(7), headroom.generate(7)
    assert a == b and a["seed"] == 7
    assert headroom.load_config(a["hf_config"]) == a["explicit"]
    assert headroom.generate(8) != a


def test_bad_input_raises_input_error_naming_the_field():
    p = headroom.plan(LAGUNA)
    p["ranks"][0]["groups"][0]["buffers"][0]["bytes"] = 5
    with pytest.raises(headroom.InputError, match=r"ranks\[0\]\.groups\[0\]\.buffers\[0\]\.bytes' = 5"):
        headroom.verify(p)
    with pytest.raises(ValueError, match="tp"):
        headroom.plan(LAGUNA, tp=3)
    with pytest.raises(headroom.InputError, match="'backend' = \"vllm\""):
        headroom.check(LAGUNA, backend="vllm")


def class_threshold(report, backend, cls):
    return next(t["min_failing"] for t in report["thresholds"] if t["backend"] == backend and t.get("class") == cls)


def cut(plan, backend, index, name, entries):
    g = group(plan, 1, backend, index)
    b = buffer(g, name)
    b["shape"], b["bytes"] = [entries], 4 * entries


def test_persistent_metadata_cut_is_caught_at_the_padded_batch():
    # Capture sizes 1, 2, 4, 8, 16, 24, ..., 248, 256, ... (vLLM's default list): decode batch 249
    # replays the graph of 256 requests, whose paged_kv_indptr needs 257 entries; 248 needs 249.
    p = headroom.plan(LAGUNA, backend="flashinfer")
    cut(p, "flashinfer", 0, "paged_kv_indptr", 256)
    r = headroom.verify(p)
    assert {v["buffer"] for v in r["violations"]} == {"paged_kv_indptr"}
    assert class_threshold(r, "flashinfer", "C5") == 249
    # FA3's scheduler metadata: 1 + 3 * round_up(batch, 4) entries for a padded decode batch
    # (prepare_varlen, dynamic split and head swizzle vectors): 200 entries hold the graph of 64
    # (193) but not of 72 (217), which decode batch 65 replays. vLLM schedules FA3 only for a
    # model of one window config: Llama 3 8B, not Laguna (full and sliding layers).
    p = headroom.plan(config_path("llama-3-8b.json"), backend="fa3")
    cut(p, "fa3", 0, "scheduler_metadata", 200)
    r = headroom.verify(p)
    assert {v["buffer"] for v in r["violations"]} == {"scheduler_metadata"}
    assert class_threshold(r, "fa3", "C3") == 65
    laguna = headroom.plan(LAGUNA, backend="fa3")
    cut(laguna, "fa3", 0, "scheduler_metadata", 200)
    r = headroom.verify(laguna)
    assert r["violations"] == [] and any("no ahead-of-time FA3 schedule" in n for n in r["notes"])


def test_block_table_narrower_than_a_capture_size_is_caught():
    # Under cudagraph_mode full every capture size warms up with a non-uniform dummy run whose
    # requests have seq_len = the capture size: 256 tokens fill 16 blocks of 16, the next capture
    # size (272) needs 17, one more than a row of a table cut to width 16.
    p = headroom.plan(LAGUNA, backend="triton")
    p["engine"]["cudagraph_mode"] = "full"
    assert headroom.verify(p)["ok"]
    b = buffer(group(p, 1, "triton", 0), "block_table")
    assert b["shape"] == [256, 4096 // 16]
    b["shape"], b["bytes"] = [256, 16], 256 * 16 * 4
    r = headroom.verify(p)
    assert {v["buffer"] for v in r["violations"]} == {"block_table"}
    assert class_threshold(r, "triton", "C4") == 272


def test_block_table_narrower_than_a_full_request_is_caught_by_the_formulas_and_the_simulator():
    # Without FULL warm-ups in play: a scheduled step whose last request is one token longer than a
    # row of a table cut to [rows, 16] holds (16 blocks of 16 tokens: seq_len 257) reads past the
    # table; the simulator sees that read on the same step (one group, 17 requests: a cheap run).
    plan = headroom.plan(LAGUNA, tp=1, backend="triton", max_num_seqs=17)
    rank = plan["ranks"][0]
    rank["groups"] = [g for g in rank["groups"] if g["group"] == 0]
    assert headroom.verify(plan)["ok"]
    b = buffer(group(plan, 1, "triton", 0), "block_table")
    assert b["shape"] == [17, 4096 // 16]
    b["shape"], b["bytes"] = [17, 16], 17 * 16 * 4
    for target in ("model", "sim"):
        r = headroom.verify(plan, target=target)
        assert {v["buffer"] for v in r["violations"]} == {"block_table"}, target
        assert any(t.get("variable") == "seq_len" and t["min_failing"] == 257 for t in r["thresholds"]), target
    assert any(v["invariant"] == "out_of_bounds" for v in r["violations"])  # the simulator's read

