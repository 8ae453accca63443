# The engine settings of plan and check as keyword arguments named as vLLM names them, and
# engine_args (a dict, or a file's path) as --engine-args: they change the plan and the verdict as
# the command line's flags do (the same JSON as the command's, and numbers computed by hand), and a
# bad value raises ValueError with the command line's message.
import json

import pytest

import headroom
from conftest import buffer, config_path, group, run_cli

LAGUNA = config_path("laguna-xs2.json")


def cli_json(tmp_path, *args):
    out = tmp_path / "out.json"
    rc, _, err = run_cli(*args, "--json", out)
    assert rc in (0, 1), err
    return json.loads(out.read_text())


@pytest.mark.parametrize("block_size, max_model_len, width", [
    # A block-table row: cdiv(cdiv(max_model_len, block), align) * align blocks, align = 128 / gcd(128, block)
    (16, 4096, 256),  # 256 blocks, align 8
    (32, 4096, 128),  # 128 blocks, align 4
    (48, 4096, 88),  # cdiv(4096, 48) = 86, align 128 / 16 = 8: 88
    (16, 1000, 64),  # cdiv(1000, 16) = 63, align 8: 64
])
def test_block_size_and_max_model_len_size_the_block_table(block_size, max_model_len, width):
    p = headroom.plan(LAGUNA, backend="triton", max_num_seqs=17, block_size=block_size, max_model_len=max_model_len)
    assert p["kv_cache"]["block_size"] == block_size
    assert buffer(group(p, 1, "triton", 0), "block_table")["shape"] == [17, width]


def test_keywords_make_the_plan_the_flags_make(tmp_path):
    kwargs = dict(block_size=32, max_num_seqs=64, max_model_len=2048, max_num_batched_tokens=512,
                  kv_cache_dtype="float16", num_speculative_tokens=2, cudagraph_mode="FULL",
                  cudagraph_capture_sizes=[1, 2, 4, 8, 64], max_cudagraph_capture_size=64)
    flags = ["--block-size", "32", "--max-num-seqs", "64", "--max-model-len", "2048",
             "--max-num-batched-tokens", "512", "--kv-cache-dtype", "float16", "--num-speculative-tokens", "2",
             "--cudagraph-mode", "FULL", "--cudagraph-capture-sizes", "1,2,4,8,64",
             "--max-cudagraph-capture-size", "64"]
    p = headroom.plan(LAGUNA, tp=[1, 2], **kwargs)
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--tp", "1,2", *flags)
    assert p["model"]["dtype"] == "float16"
    e = p["engine"]
    assert (e["num_speculative_tokens"], e["cudagraph_mode"], e["capture_sizes"], e["max_capture_size"]) == \
        (2, "full", [1, 2, 4, 8, 64], 64)
    assert (e["max_num_seqs"], e["max_model_len"], e["max_num_batched_tokens"]) == (64, 2048, 512)
    assert p != headroom.plan(LAGUNA, tp=[1, 2])


def c4_capture_size(report):
    sizes = [t["min_failing"] for t in report["thresholds"]
             if t.get("class") == "C4" and t.get("variable") == "capture_size"]
    return min(sizes) if sizes else None


# C4 on Laguna XS.2 (tests/cli/engine_settings_test.cpp works these out): rows of 128 tokens, so
# the first capture size above 128 fails; the capture list decides which that is.
@pytest.mark.parametrize("settings, first", [
    (dict(max_num_seqs=68), 136),  # ceiling min(2 x 68, 512) = 136
    (dict(max_num_seqs=68, max_num_batched_tokens=130), 130),  # ceiling 130, itself captured
    (dict(max_num_seqs=68, cudagraph_capture_sizes=[1, 2, 4, 8, 128, 129]), 129),
    (dict(max_num_seqs=68, max_cudagraph_capture_size=128), None),
])
def test_keywords_change_the_verdict_as_the_flags_do(tmp_path, settings, first):
    base = dict(backend="triton", max_model_len=128, cudagraph_mode="full", mutants=["dummy-seq-lens-unclamped"])
    r = headroom.check(LAGUNA, **base, **settings)
    assert c4_capture_size(r) == first
    flags = []
    for key, value in settings.items():
        flags += ["--" + key.replace("_", "-"), ",".join(map(str, value)) if isinstance(value, list) else str(value)]
    assert r == cli_json(tmp_path, "check", LAGUNA, "--backend", "triton", "--max-model-len", "128",
                         "--cudagraph-mode", "full", "--mutant", "dummy-seq-lens-unclamped", *flags)


ENGINE_ARGS = {"model": "poolside/Laguna-XS.2", "block_size": 32, "dtype": "float16", "tensor_parallel_size": 2,
               "speculative_config": {"method": "eagle", "num_speculative_tokens": 2}, "enforce_eager": True}


def test_engine_args_dict_and_file_are_the_command_lines(tmp_path):
    path = tmp_path / "args.json"
    path.write_text(json.dumps(ENGINE_ARGS))
    p = headroom.plan(LAGUNA, engine_args=ENGINE_ARGS)
    assert p == headroom.plan(LAGUNA, engine_args=str(path)) == headroom.plan(LAGUNA, engine_args=path)
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--engine-args", path)
    assert [r["tp"] for r in p["ranks"]] == [2]
    assert (p["kv_cache"]["block_size"], p["model"]["dtype"]) == (32, "float16")
    assert (p["engine"]["num_speculative_tokens"], p["engine"]["cudagraph_mode"]) == (2, "none")
    # Keywords override the engine arguments, as flags override the file.
    q = headroom.plan(LAGUNA, engine_args=ENGINE_ARGS, tp=1, block_size=16)
    assert q == cli_json(tmp_path, "plan", LAGUNA, "--engine-args", path, "--tp", "1", "--block-size", "16")
    assert ([r["tp"] for r in q["ranks"]], q["kv_cache"]["block_size"]) == ([1], 16)


# engine_flavour (max_num_seqs 20; tests/cli/engine_settings_test.cpp works these out): FA3's
# scheduler_metadata is 1 + 4 x round_up(max(20, largest capture), 4), the largest capture vLLM's
# min(2 x 20, 512) = 40 but SGLang's 20 (its pool); FlashInfer's paged_kv_indptr is 1 + the
# requests, vllm-ascend's max(20, 40) + 1 dummy = 41 of them.
@pytest.mark.parametrize("flavour, metadata, indptr", [
    (None, 161, 21), ("vllm", 161, 21), ("sglang", 81, 21), ("vllm-ascend", 161, 42),
])
def test_engine_flavour_keyword_is_the_flag(tmp_path, flavour, metadata, indptr):
    fa3 = headroom.plan(LAGUNA, backend="fa3", max_num_seqs=20, engine_flavour=flavour)
    fi = headroom.plan(LAGUNA, backend="flashinfer", max_num_seqs=20, engine_flavour=flavour)
    assert buffer(group(fa3, 1, "fa3", 0), "scheduler_metadata")["shape"] == [metadata]
    assert buffer(group(fi, 1, "flashinfer", 0), "paged_kv_indptr")["shape"] == [indptr]
    assert fi["engine"]["flavour"] == (flavour or "vllm")
    flag = ["--engine-flavour", flavour] if flavour else []
    assert fi == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--max-num-seqs", "20", *flag)


# SGLang's settings (tests/cli/engine_settings_test.cpp works these out from request_meta.cpp and
# SGLang's FlashInferAttnBackend): paged_kv_indptr holds max(round_up(pool, m), round_up(pool,
# attn_tp)) + 1 entries, m the attention TP size under the gathered buffer (else 1); FA3's
# scheduler_metadata 1 + 4 x round_up(max(max_num_seqs, largest capture), 4), SGLang's capture list
# vLLM's (up to min(2 x max_num_seqs, 512)) cut at round_up(pool, m) requests.
@pytest.mark.parametrize("settings, flags, indptr, metadata", [
    # pool 20 (also max_num_seqs): rows 20; list cut at 20 -> 1 + 4 x 20
    (dict(max_running_requests=20), ["--max-running-requests", "20"], 21, 81),
    # attention TP 8, gathered: rows round_up(20, 8) = 24; cut at 24 -> 1 + 4 x 24
    (dict(max_running_requests=20, attn_tp_size=8, gathered_buffer=True),
     ["--max-running-requests", "20", "--attn-tp-size", "8", "--gathered-buffer", "true"], 25, 97),
    # not gathered: the eager ceiling 24 still, the graph ceiling and the cut 20
    (dict(max_running_requests=20, attn_tp_size=8, gathered_buffer=False),
     ["--max-running-requests", "20", "--attn-tp-size", "8", "--gathered-buffer", "false"], 25, 81),
    # a DP-attention rank of 5 requests, pool 21: rows round_up(21, 4) = 24; list 1, 2, 4, 8 -> 33
    (dict(max_num_seqs=5, max_running_requests=21, attn_tp_size=4, gathered_buffer=True),
     ["--max-num-seqs", "5", "--max-running-requests", "21", "--attn-tp-size", "4", "--gathered-buffer", "true"],
     25, 33),
    # two-batch overlap, pool 21: graph ceiling round_up(21, 2) = 22, eager 21 (no MLP sync): rows 22;
    # list 1, 2, 4, 8 -> 1 + 4 x round_up(max(5, 8), 4) = 33
    (dict(max_num_seqs=5, max_running_requests=21, enable_two_batch_overlap=True),
     ["--max-num-seqs", "5", "--max-running-requests", "21", "--two-batch-overlap", "true"], 23, 33),
    # attention TP 8 (DP attention), CP 5, pool 20: eager round_up(round_up(20, 8), 5) = 25 rows;
    # graph alignment 1 -> 5, ceiling 20: list cut at 20 -> 81
    (dict(max_running_requests=20, attn_tp_size=8, attn_cp_size=5),
     ["--max-running-requests", "20", "--attn-tp-size", "8", "--attn-cp-size", "5"], 26, 81),
])
def test_sglang_keywords_are_the_flags(tmp_path, settings, flags, indptr, metadata):
    fi = headroom.plan(LAGUNA, backend="flashinfer", engine_flavour="sglang", **settings)
    fa3 = headroom.plan(LAGUNA, backend="fa3", engine_flavour="sglang", **settings)
    assert buffer(group(fi, 1, "flashinfer", 0), "paged_kv_indptr")["shape"] == [indptr]
    assert buffer(group(fi, 1, "flashinfer", 0), "paged_kv_last_page_len")["shape"] == [indptr - 1]
    assert buffer(group(fa3, 1, "fa3", 0), "scheduler_metadata")["shape"] == [metadata]
    e = fi["engine"]
    assert (e["req_pool_size"], e["attn_tp_size"], e["gathered_buffer"]) == (
        settings["max_running_requests"], settings.get("attn_tp_size", 1), settings.get("gathered_buffer", False))
    assert e["max_num_seqs"] == settings.get("max_num_seqs", settings["max_running_requests"])
    assert fi == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--engine-flavour", "sglang", *flags)
    # From engine_args too (SGLang's max_running_requests, the mirror's other two), keywords over it.
    assert fi == headroom.plan(LAGUNA, backend="flashinfer", engine_flavour="sglang", engine_args=settings)
    q = headroom.plan(LAGUNA, backend="flashinfer", engine_flavour="sglang", engine_args=settings, attn_tp_size=1)
    assert q["engine"]["attn_tp_size"] == 1


# The request-pool sizing of SGLang #25124 (the mutant): a step of 17 requests pads to 24 past a
# pool of 20 under attention TP 8 and the gathered buffer; at attention TP 1 nothing pads.
def test_sglang_keywords_change_the_verdict(tmp_path):
    base = dict(backend="flashinfer", engine_flavour="sglang", mutants=["request-meta-from-pool"])
    r = headroom.check(LAGUNA, **base, max_running_requests=20, attn_tp_size=8, gathered_buffer=True)
    assert not r["ok"]
    assert {(v["buffer"], v["capacity_bytes"], v["required_bytes"]) for v in r["violations"]} == {
        ("paged_kv_indptr", 84, 100), ("paged_kv_last_page_len", 80, 96)}
    assert headroom.check(LAGUNA, **base, max_running_requests=20)["ok"]


# FlashInfer's decode path and vLLM's batch-invariant mode: tensor cores by default (vLLM's since
# v0.10.2), both switches among the plan's parameters, the plan the flags make, and C10 reached by
# check with them (the pre-fix CUDA-graph grid of tensor-core decode with split-KV disabled).
def test_flashinfer_decode_keywords(tmp_path):
    fi = group(headroom.plan(LAGUNA, backend="flashinfer"), 1, "flashinfer", 0)["parameters"]
    assert (fi["use_tensor_cores"], fi["disable_split_kv"]) == (1, 0)
    p = headroom.plan(LAGUNA, backend="flashinfer", flashinfer_decode="cuda-cores", batch_invariant=False)
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--flashinfer-decode", "cuda-cores")
    assert group(p, 1, "flashinfer", 0)["parameters"]["use_tensor_cores"] == 0
    base = dict(backend="flashinfer", tp=1, cuda_graph=True, mutants=["fi-graph-grid-unwritten"])
    r = headroom.check(LAGUNA, **base, batch_invariant=True)
    assert {(v["invariant"], v["class"]) for v in r["violations"]} == {("uninitialized_read", "C10")}
    assert headroom.check(LAGUNA, **base)["ok"]
    assert not headroom.check(LAGUNA, **base, engine_args={"batch_invariant": True})["ok"]
    assert headroom.check(LAGUNA, **base, engine_args={"batch_invariant": True}, batch_invariant=False)["ok"]
    with pytest.raises(ValueError, match="'batch_invariant' = true: given with cuda-cores decode"):
        headroom.plan(LAGUNA, flashinfer_decode="cuda-cores", batch_invariant=True)



# FlashInfer's prefill planner: PrefillSM90Plan with fa3 (its fields among the plan's parameters, as
# the flag makes them), and only on the model target.
def test_flashinfer_prefill_keyword(tmp_path):
    fi = group(headroom.plan(LAGUNA, backend="flashinfer"), 1, "flashinfer", 0)["parameters"]
    assert "fa3_prefill" not in fi
    p = headroom.plan(LAGUNA, backend="flashinfer", flashinfer_prefill="fa3")
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--flashinfer-prefill", "fa3")
    assert group(p, 1, "flashinfer", 0)["parameters"]["fa3_prefill"] == 1
    assert headroom.check(LAGUNA, backend="flashinfer", tp=1, flashinfer_prefill="fa3")["ok"]
    with pytest.raises(ValueError, match="judged by --target model only"):
        headroom.check(LAGUNA, backend="flashinfer", tp=1, flashinfer_prefill="fa3", target="sim")


# kv_cache_dtype fp8: the same plan as the command line's (an fp8 cache: page bytes 16 x 8 x (128 + 128)
# x 1 = 32,768 in its notes, and the model's kv_cache_dtype), the sim target refused.
def test_fp8_kv_cache_keyword(tmp_path):
    p = headroom.plan(LAGUNA, backend="flashinfer", tp=1, kv_cache_dtype="fp8")
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--tp", "1", "--kv-cache-dtype", "fp8")
    assert p["model"]["kv_cache_dtype"] == "fp8_e4m3"
    assert any("page_size_bytes 32768" in n for n in p["notes"])
    assert headroom.check(LAGUNA, backend="flashinfer", tp=1, kv_cache_dtype="fp8")["ok"]
    with pytest.raises(ValueError, match="field 'kv_cache_dtype' = fp8: an fp8 KV cache is judged by --target model"):
        headroom.check(LAGUNA, backend="flashinfer", tp=1, kv_cache_dtype="fp8", target="sim")


# auto: each wrapper's backend as FlashInfer's backend="auto" resolves it (laguna: head dim 128 on
# the default sm90 device, bf16: fa3 for prefill, fa2 for tensor-core decode), refused off the model
# target since it resolves to fa3.
def test_flashinfer_prefill_auto_keyword(tmp_path):
    p = headroom.plan(LAGUNA, backend="flashinfer", flashinfer_prefill="auto")
    assert p == cli_json(tmp_path, "plan", LAGUNA, "--backend", "flashinfer", "--flashinfer-prefill", "auto")
    q = group(p, 1, "flashinfer", 0)["parameters"]
    assert (q["fa3_prefill"], q["fa3_decode"]) == (1, 0)
    assert any("auto chose fa3 for prefill" in n for n in p["notes"])
    assert headroom.check(LAGUNA, backend="flashinfer", tp=1, flashinfer_prefill="auto")["ok"]
    with pytest.raises(ValueError, match="'flashinfer_prefill' = auto: resolves to fa3"):
        headroom.check(LAGUNA, backend="flashinfer", tp=1, flashinfer_prefill="auto", target="sim")


SGLANG_BAD = [  # keyword, value, the flag's value on the command line; under engine_flavour sglang
    ("max_running_requests", 0, "0"), ("max_running_requests", 4097, "4097"), ("attn_tp_size", 0, "0"),
    ("attn_tp_size", 65, "65"), ("gathered_buffer", "yes", "yes"), ("attn_cp_size", 0, "0"),
    ("attn_cp_size", 65, "65"),
]


@pytest.mark.parametrize("key, value, text", SGLANG_BAD)
def test_a_bad_sglang_keyword_raises_the_command_lines_message(key, value, text):
    flag = "--" + key.replace("_", "-")
    rc, out, err = run_cli("plan", LAGUNA, "--engine-flavour", "sglang", flag, text)
    assert rc == 2 and out == "" and err.count("\n") == 1
    with pytest.raises(ValueError) as e:
        headroom.plan(LAGUNA, engine_flavour="sglang", **{key: value})
    assert f"headroom: {e.value}\n" == err.replace(f"command line: field '{flag}'", f"arguments: field '{key}'")


def test_sglang_keywords_need_the_sglang_flavour_and_a_pool_past_the_step():
    for kwargs in (dict(max_running_requests=20), dict(attn_tp_size=2, engine_flavour="vllm"),
                   dict(gathered_buffer=False, engine_flavour="vllm-ascend")):
        with pytest.raises(ValueError, match="an SGLang setting: needs engine flavour sglang"):
            headroom.plan(LAGUNA, **kwargs)
    with pytest.raises(ValueError, match=r"field 'max_running_requests' = 20: must be at least max_num_seqs \(64\)"):
        headroom.plan(LAGUNA, engine_flavour="sglang", max_num_seqs=64, max_running_requests=20)
    with pytest.raises(ValueError, match="engine_args: field 'enable_dp_attention' = true: not modelled"):
        headroom.plan(LAGUNA, engine_flavour="sglang", engine_args={"enable_dp_attention": True, "dp_size": 4})


BAD = [  # keyword, value, the flag's value on the command line
    ("block_size", 0, "0"), ("block_size", 65537, "65537"), ("max_model_len", 0, "0"),
    ("max_num_batched_tokens", 255, "255"), ("kv_cache_dtype", "fp8_inc", "fp8_inc"),
    ("dtype", "double", "double"), ("num_speculative_tokens", 17, "17"), ("cudagraph_mode", "FULLY", "FULLY"),
    ("cudagraph_capture_sizes", [1, 4, 2], "1,4,2"), ("max_cudagraph_capture_size", 0, "0"),
    ("max_num_seqs", 0, "0"), ("engine_flavour", "vllm_ascend", "vllm_ascend"), ("engine_flavour", "SGLang", "SGLang"),
    # SGLang's settings without the sglang flavour
    ("max_running_requests", 20, "20"), ("attn_tp_size", 2, "2"), ("gathered_buffer", True, "true"),
    ("attn_cp_size", 3, "3"),
    ("flashinfer_decode", "tensor_cores", "tensor_cores"), ("batch_invariant", "yes", "yes"),
    ("flashinfer_prefill", "fa4", "fa4"),
]


@pytest.mark.parametrize("key, value, text", BAD)
def test_a_bad_keyword_raises_the_command_lines_message(key, value, text):
    flag = "--" + key.replace("_", "-")
    rc, out, err = run_cli("plan", LAGUNA, flag, text)
    assert rc == 2 and out == "" and err.count("\n") == 1
    with pytest.raises(ValueError) as e:
        headroom.plan(LAGUNA, **{key: value})
    # The same line, naming the keyword where the command line names the flag.
    assert f"headroom: {e.value}\n" == err.replace(f"command line: field '{flag}'", f"arguments: field '{key}'")


@pytest.mark.parametrize("text", ['{"block_size": 0}', '{"block_size": "16"}', '{"swap_space": 4}',
                                  '{"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}',
                                  '{"cudagraph_capture_sizes": [1, 2, 4], "max_cudagraph_capture_size": 512}'])
def test_a_bad_engine_args_file_raises_the_command_lines_message(tmp_path, text):
    path = tmp_path / "args.json"
    path.write_text(text)
    rc, out, err = run_cli("check", LAGUNA, "--engine-args", path)
    assert rc == 2 and out == "" and err.count("\n") == 1
    for call in (headroom.plan, headroom.check):
        with pytest.raises(headroom.InputError) as e:
            call(LAGUNA, engine_args=path)
        assert err == f"headroom: {e.value}\n"
    with pytest.raises(ValueError) as e:  # the same document as a dict is named engine_args
        headroom.plan(LAGUNA, engine_args=json.loads(text))
    assert f"headroom: {e.value}\n" == err.replace(str(path), "engine_args")


# verify refuses what `headroom verify` refuses, with its message, naming the plan as the caller named
# it: a plan whose FlashInfer prefill is auto (fa3 at head dim 128: its groups carry fa3_prefill) off
# the model target.
def test_verify_refuses_what_the_command_line_refuses(tmp_path):
    p = headroom.plan(LAGUNA, backend="flashinfer", tp=[1], flashinfer_prefill="auto")
    assert headroom.verify(p)["ok"]
    path = tmp_path / "auto.json"
    path.write_text(json.dumps(p))
    rc, out, err = run_cli("verify", str(path), "--target", "sim")
    assert rc == 2 and out == "" and "'parameters.fa3_prefill' = fa3" in err
    with pytest.raises(ValueError) as e:
        headroom.verify(str(path), target="sim")
    assert "headroom: " + str(e.value) + "\n" == err
    with pytest.raises(ValueError, match="<plan>: field 'parameters.fa3_prefill' = fa3"):
        headroom.verify(p, target="sim")
