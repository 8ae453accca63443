# The hook an engine's test suite calls: dump every metadata builder's tensors into headroom's plan
# schema (docs/plan-schema.md) and check them with headroom.verify. Only `triton_group` knows the
# engine: for a real vLLM, pass the runner's attention groups and their builders (README.md).
import headroom

TRITON_BUFFERS = ("softmax_segm_output", "softmax_segm_max", "softmax_segm_expsum")


def tensor_entry(name, t):
    return {"name": name, "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "bytes": t.numel() * t.element_size()}


def triton_group(index, kv_cache_group, builder):
    return {
        "backend": "triton", "group": index, "kv_cache_group": kv_cache_group,
        "layers": list(builder.layer_names),
        "parameters": {"num_heads_q": builder.num_heads_q, "num_heads_kv": builder.num_heads_kv,
                       "headdim": builder.headdim,
                       "headdim_padded": builder.softmax_segm_output.shape[-1],
                       "seq_threshold_3D": builder.seq_threshold_3D,
                       "num_par_softmax_segments": builder.num_par_softmax_segments},
        "buffers": [tensor_entry(n, getattr(builder, n)) for n in TRITON_BUFFERS],
    }


def plan_of(hf_config, tp, groups, max_num_seqs=256, source="engine test"):
    return {"headroom_plan": 1, "source": source, "model": hf_config,
            "engine": {"max_num_seqs": max_num_seqs}, "ranks": [{"tp": tp, "groups": groups}]}


def failures(report):
    """One readable line per violation: buffer, backend, group, TP and the first failing batch."""
    first = {(t["backend"], t["tp"], t["group"]): t["min_failing_decode_batch"]
             for t in report["thresholds"] if "variable" not in t}
    return [f"{v['invariant']}: {v['buffer'] or '-'} of {v['backend']} group {v['group']} (tp {v['tp']}), "
            f"first failing decode batch {first.get((v['backend'], v['tp'], v['group']))}: {v['detail']}"
            for v in report["violations"]]


def assert_buffers_fit(plan, target="model"):
    report = headroom.verify(plan, target=target)
    lines = failures(report)
    assert report["ok"], "headroom: the builders' buffers do not fit every step:\n  " + "\n  ".join(lines)
    return report
