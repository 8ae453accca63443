#!/usr/bin/env python3
"""torch scaled_dot_product_attention(..., enable_gqa=True) at bench_gpu_decode's or bench_gpu_prefill's shapes.

Timed the way bench/bench_gpu_decode.cu times headroom's kernels: CUDA events around the call, L2
flushed before every iteration (a write over twice the device's L2; a read of it with
HEADROOM_BENCH_FLUSH=read), the median of the iterations.
Decode (default): bytes counted the same way: every K and V byte once, q in, the output out. Also
measures the device-to-device copy bandwidth (1 GiB, read + write) the same way.
--prefill: causal prefill (is_causal=True, kv_len = q_len) on dense [B, H, S, D] bf16 at
bench_gpu_prefill's shapes, torch's default choice and each of the flash and cuDNN backends forced
(sdpa_kernel); TFLOP/s from the causal count 4 * Hq * D * sum_i q_i (q_i + 1) / 2 (bench_gpu_prefill.cu).
A backend that refuses a shape is reported and skipped; one that refuses only enable_gqa is timed
again with K and V repeated to Hq heads (same FLOPs), marked "kv_repeated".
Writes JSON (--out) and prints one line per shape. Needs a GPU and PyTorch (the GPU machine has both).
"""
import argparse
import json
import os
import sys

SHAPES = [(1, 32768), (16, 4096), (64, 4096), (128, 2048), (256, 1024)]
PREFILL_SHAPES = [(1, 8192), (4, 4096), (8, 2048), (32, 512)]
HEADS, KV_HEADS, HEAD_DIM = 64, 8, 128
FLOP_FORMULA = "4 * Hq * D * sum_i q_i (q_i + 1) / 2"


def causal_flops(batch, q_len):
    """4 * Hq * D * sum_i q_i (q_i + 1) / 2: query i sees i + 1 keys, 2 * D for QK^T and 2 * D for PV."""
    return 4 * HEADS * HEAD_DIM * batch * (q_len * (q_len + 1) // 2)


def time_backend(torch, F, q, k, v, backend, flush, iters):
    """(ms, output, kv_repeated) of causal SDPA under `backend` (None: torch's choice)."""
    from contextlib import nullcontext
    ctx = nullcontext
    if backend is not None:
        from torch.nn.attention import sdpa_kernel
        ctx = lambda: sdpa_kernel([backend])  # noqa: E731
    call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # noqa: E731
    try:
        with ctx():
            out = call()
            return timed_median_ms(torch, call, flush, iters), out, False
    except RuntimeError as e:
        if backend is None:
            raise
        first = str(e).strip().splitlines()[0][:160] if str(e).strip() else "RuntimeError"
    g = HEADS // KV_HEADS  # the backend may take the shape without enable_gqa: K and V repeated
    kr, vr = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    call = lambda: F.scaled_dot_product_attention(q, kr, vr, is_causal=True)  # noqa: E731
    try:
        with ctx():
            out = call()
            return timed_median_ms(torch, call, flush, iters), out, True
    except RuntimeError as e:
        again = str(e).strip().splitlines()[0][:160] if str(e).strip() else "RuntimeError"
        raise RuntimeError(f"enable_gqa: {first}; kv repeated: {again}") from None


def run_prefill(torch, F, props, flush, iters):
    result = {"mode": "prefill", "device": props.name, "torch": torch.__version__, "flops": FLOP_FORMULA,
              "shapes": [], "unavailable": {}}
    print(f"bench_sdpa --prefill: {props.name}, torch {torch.__version__}, causal, TFLOP/s = {FLOP_FORMULA}")
    backends = {"default": None}
    try:
        from torch.nn.attention import SDPBackend
        for name, attr in (("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION")):
            if hasattr(SDPBackend, attr):
                backends[name] = getattr(SDPBackend, attr)
            else:
                result["unavailable"][name] = f"this torch has no SDPBackend.{attr}"
    except ImportError as e:
        for name in ("flash", "cudnn"):
            result["unavailable"][name] = f"torch.nn.attention: {e}"
    for name, why in result["unavailable"].items():
        print(f"  {name}: unavailable ({why})")
    for batch, q_len in PREFILL_SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(batch * 100003 + q_len)
        q = torch.randn(batch, HEADS, q_len, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(batch, KV_HEADS, q_len, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(batch, KV_HEADS, q_len, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        flops = causal_flops(batch, q_len)
        entry = {"shape": f"{batch}x{q_len}", "flops": flops, "backends": {}, "errors": {}}
        ref = None
        for name, backend in backends.items():
            try:
                ms, out, repeated = time_backend(torch, F, q, k, v, backend, flush, iters)
            except RuntimeError as e:  # the backend does not take this shape
                entry["backends"][name] = None
                entry["errors"][name] = str(e).strip().splitlines()[0][:400] if str(e).strip() else "RuntimeError"
                continue
            ref = out if ref is None else ref
            entry["backends"][name] = {"ms": ms, "TFLOPs": flops / (ms * 1e-3) * 1e-12, "kv_repeated": repeated,
                                       "max_abs_diff_vs_first": float((out.float() - ref.float()).abs().max())}
            del out
        result["shapes"].append(entry)
        per = ", ".join(f"{n} {x['TFLOPs']:.1f}{' (kv repeated)' if x['kv_repeated'] else ''}"
                        if x else f"{n} unavailable ({entry['errors'][n]})" for n, x in entry["backends"].items())
        print(f"  {entry['shape']:>8}: TFLOP/s {per}")
        del q, k, v, ref
        torch.cuda.empty_cache()
    return result


def timed_median_ms(torch, fn, flush, iters, warmup=5):
    for _ in range(warmup):
        fn()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    read_flush = os.environ.get("HEADROOM_BENCH_FLUSH") == "read"
    for i in range(iters):
        if read_flush:
            flush.sum()
        else:
            flush.fill_(i & 0xFF)
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(start, end))
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--prefill", action="store_true",
                    help="causal prefill at bench_gpu_prefill's shapes, default / flash / cuDNN, TFLOP/s")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("bench_sdpa: PyTorch is not installed, skipped")
        return 0
    if not torch.cuda.is_available():
        print("bench_sdpa: no CUDA device, skipped")
        return 0
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * props.L2_cache_size, dtype=torch.uint8, device="cuda")
    if args.prefill:
        result = run_prefill(torch, F, props, flush, args.iters)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f, indent=1)
        return 0
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    copy_ms = timed_median_ms(torch, lambda: dst.copy_(src), flush, 21)
    copy_bps = 2 * src.numel() / (copy_ms * 1e-3)
    del src, dst
    result = {"device": props.name, "torch": torch.__version__, "copy_TBps": copy_bps * 1e-12, "shapes": []}
    print(f"bench_sdpa: {props.name}, torch {torch.__version__}, copy {copy_bps * 1e-12:.3f} TB/s")
    backends = {}
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                    "cudnn": SDPBackend.CUDNN_ATTENTION}
    except ImportError:
        pass
    for batch, ctx in SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(batch * 100003 + ctx)
        q = torch.randn(batch, HEADS, 1, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        k = torch.randn(batch, KV_HEADS, ctx, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        v = torch.randn(batch, KV_HEADS, ctx, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
        nbytes = 2 * batch * ctx * KV_HEADS * HEAD_DIM * 2 + 2 * batch * HEADS * HEAD_DIM * 2
        call = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
        ms = timed_median_ms(torch, call, flush, args.iters)
        entry = {"shape": f"{batch}x{ctx}", "bytes": nbytes, "sdpa_us": ms * 1e3,
                 "sdpa_TBps": nbytes / (ms * 1e-3) * 1e-12, "backends": {}}
        for name, backend in backends.items():
            try:
                with sdpa_kernel([backend]):
                    bms = timed_median_ms(torch, call, flush, args.iters)
                entry["backends"][name] = nbytes / (bms * 1e-3) * 1e-12
            except RuntimeError as e:  # the backend does not take this shape
                entry["backends"][name] = None
                entry.setdefault("errors", {})[name] = str(e).splitlines()[0][:200]
        result["shapes"].append(entry)
        per = ", ".join(f"{n} {x:.2f}" for n, x in entry["backends"].items() if x)
        print(f"  {entry['shape']:>9}: sdpa {entry['sdpa_TBps']:.3f} TB/s ({ms * 1e3:.1f} us) [{per}]")
        del q, k, v
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
