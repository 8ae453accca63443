#!/usr/bin/env python3
"""The engine driver of headroom's engine target: runs vLLM's own Triton unified attention kernel
inside the guarded arena headroom laid out.

headroom_engine_worker starts it with a socket on descriptor 3 and talks in frames (a little-endian
u64 length, then the bytes). The first frame is this driver's hello (JSON). Then, per run:
  request  a JSON header {arena_bytes, fill: [[offset, bytes]...], readback: [[offset, bytes]...],
           launch: {kernel, views, scalars}}, then the fill regions' bytes concatenated;
  reply    a JSON header {status: ok | fault | raised, detail, kernel_ms, exiting}, then the
           readback regions' bytes concatenated (empty unless ok).
A request header with "repeat": N (a microbenchmark) also times N more launches after the checked
one, each after an L2 flush, and replies with their median, median_ms.
The arena is one CUDA allocation; every tensor the kernel gets is a view into it (no copies), so
a kernel that indexes past a buffer lands in that buffer's guard band, which headroom checks.

The kernel is loaded from the vLLM checkout in $HEADROOM_VLLM_DIR: the kernel file and the files
it imports from vllm/ are executed as they are there. Only vLLM's configuration modules (envs,
logger, platforms, triton_utils, kv_cache_interface) are replaced by the stand-ins below, since
importing them would import the whole engine; they only supply flags and constants the kernel
file reads at import time.
"""

import enum
import importlib.abc
import importlib.util
import json
import logging
import os
import socket
import struct
import sys
import time
import traceback
import types

CHANNEL_FD = 3
KERNEL_PATHS = (  # where vLLM kept the kernel, newest first
    "vllm/v1/attention/ops/triton_unified_attention.py",
    "vllm/attention/ops/triton_unified_attention.py",
)
TORCH_DTYPES = {"bfloat16", "float16", "float32", "int32"}
SPIN_CYCLES = 2_000_000  # about 1 ms at the H200's clock: longer than a launch takes on the host


class Channel:
    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)

    def read(self):
        head = self._exact(8)
        if head is None:
            return None
        (n,) = struct.unpack("<Q", head)
        return self._exact(n)

    def _exact(self, n):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = self.sock.recv_into(view[got:], n - got)
            if k == 0:
                return None
            got += k
        return bytes(buf)

    def write(self, data):
        self.sock.sendall(struct.pack("<Q", len(data)) + data)

    def reply(self, header, payload=b""):
        self.write(json.dumps(header).encode())
        self.write(payload)


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Imports vllm.* modules from the checkout's files (the stand-ins are in sys.modules first)."""

    def __init__(self, root):
        self.root = root

    def find_spec(self, name, path=None, target=None):
        if name != "vllm" and not name.startswith("vllm."):
            return None
        rel = name.replace(".", "/")
        pkg = os.path.join(self.root, rel)
        if os.path.isdir(pkg):  # a package: its __init__ is not run (it imports the engine)
            spec = importlib.util.spec_from_loader(name, loader=None, is_package=True)
            spec.submodule_search_locations = [pkg]
            return spec
        f = os.path.join(self.root, rel + ".py")
        if os.path.isfile(f):
            return importlib.util.spec_from_file_location(name, f)
        return None


def install_stand_ins(torch, triton):
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    class Platform:
        @staticmethod
        def fp8_dtype():
            return torch.float8_e4m3fn

        @staticmethod
        def is_device_capability_family(family):
            return torch.cuda.get_device_capability()[0] == family // 10

        @staticmethod
        def is_rocm():
            return False

        @staticmethod
        def is_cuda():
            return True

    class KVQuantMode(enum.IntEnum):  # vllm/v1/kv_cache_interface.py; only NONE is run here
        NONE = 0
        FP8_PER_TENSOR = 1
        INT8_PER_TOKEN_HEAD = 2
        FP8_PER_TOKEN_HEAD = 3
        INT4_PER_TOKEN_HEAD = 4
        NVFP4 = 5
        TURBOQUANT = 6
        INT2_PER_TOKEN_HEAD = 7

    module("vllm.envs", VLLM_BATCH_INVARIANT=False)
    module("vllm.logger", init_logger=logging.getLogger)
    module("vllm.platforms", current_platform=Platform())
    module("vllm.triton_utils", tl=triton.language, triton=triton, HAS_TRITON=True)
    module("vllm.v1.kv_cache_interface", KVQuantMode=KVQuantMode)


def load_kernel(root, torch, triton):
    for rel in KERNEL_PATHS:
        if os.path.isfile(os.path.join(root, rel)):
            break
    else:
        raise FileNotFoundError(f"{root}: no {' or '.join(KERNEL_PATHS)}")
    install_stand_ins(torch, triton)
    sys.meta_path.insert(0, CheckoutFinder(root))
    name = rel[: -len(".py")].replace("/", ".")
    mod = importlib.import_module(name)
    return mod.unified_attention, rel


def checkout_commit(root):
    head = os.path.join(root, "COMMIT")  # a sparse copy records its commit here
    if os.path.isfile(head):
        return open(head).read().strip()
    return ""


def view(torch, arena, spec):
    dt = spec["dtype"]
    if dt not in TORCH_DTYPES:
        raise ValueError(f"unknown dtype {dt}")
    elems = arena.view(getattr(torch, dt))
    esz = elems.element_size()
    if spec["start"] % esz:
        raise ValueError(f"{spec['buffer']}: start {spec['start']} not aligned to {esz}")
    return torch.as_strided(elems, spec["shape"], spec["strides"], spec["start"] // esz + spec["offset"])


def run(torch, attend, header, payload):
    L = header["launch"]
    if L["kernel"] != "vllm_triton_unified_attention":
        raise ValueError(f"unknown kernel {L['kernel']}")
    arena = torch.zeros(header["arena_bytes"], dtype=torch.uint8, device="cuda")
    src = torch.frombuffer(bytearray(payload), dtype=torch.uint8).cuda() if payload else None
    at = 0
    for off, n in header["fill"]:
        arena[off : off + n].copy_(src[at : at + n])
        at += n
    v = {k: view(torch, arena, s) for k, s in L["views"].items()}
    w = L["sliding_window"]
    one = torch.ones(1, dtype=torch.float32, device="cuda")
    args = dict(
        q=v["q"], k=v["k"], v=v["v"], out=v["out"], cu_seqlens_q=v["query_start"],
        max_seqlen_q=L["max_seqlen_q"], seqused_k=v["seq_lens"], max_seqlen_k=L["max_seqlen_k"],
        softmax_scale=L["softmax_scale"], causal=True,
        window_size=(w - 1, 0) if w > 0 else (-1, -1),  # vLLM's TritonAttentionImpl: (window - 1, 0)
        block_table=v["block_table"], softcap=0.0, q_descale=None, k_descale=one, v_descale=one,
        seq_threshold_3D=L["seq_threshold_3D"], num_par_softmax_segments=L["num_par_softmax_segments"],
        softmax_segm_output=v.get("segm_output"), softmax_segm_max=v.get("segm_max"),
        softmax_segm_expsum=v.get("segm_expsum"))
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    try:
        attend(**args)
        end.record()
        torch.cuda.synchronize()
    except Exception as e:  # the engine refused the launch, or its kernel faulted
        cuda = "CUDA" in str(e) or "cuda" in type(e).__name__.lower()
        return {"status": "fault" if cuda else "raised", "detail": f"{type(e).__name__}: {e}",
                "exiting": cuda}, b""
    back = torch.cat([arena[off : off + n] for off, n in header["readback"]]).cpu().numpy().tobytes()
    reply = {"status": "ok", "kernel_ms": begin.elapsed_time(end)}
    if header.get("repeat", 0) > 0:  # a microbenchmark: the median of that many launches, L2 flushed
        reply["median_ms"] = median_ms(torch, lambda: attend(**args), header["repeat"])
    return reply, back


def median_ms(torch, launch, n):
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    times = []
    for _ in range(n):
        flush.zero_()
        # A spin on the device while the host launches: the events then time the kernels, not
        # the Python launcher's latency.
        torch.cuda._sleep(SPIN_CYCLES)
        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        b.record()
        launch()
        e.record()
        torch.cuda.synchronize()
        times.append(b.elapsed_time(e))
    return sorted(times)[n // 2]


def main():
    ch = Channel(CHANNEL_FD)
    hello = {"device_count": 0}
    try:
        import torch
        import triton

        root = os.environ.get("HEADROOM_VLLM_DIR", "")
        if not root:
            raise RuntimeError("HEADROOM_VLLM_DIR is not set (the vLLM checkout to load the kernel from)")
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        attend, rel = load_kernel(root, torch, triton)
        hello = {"device_count": torch.cuda.device_count(), "device_name": torch.cuda.get_device_name(0),
                 "kernel": rel, "commit": checkout_commit(root), "torch": torch.__version__,
                 "triton": triton.__version__}
    except Exception as e:
        hello = {"device_count": 0, "error": f"engine driver: {type(e).__name__}: {e}"}
    ch.write(json.dumps(hello).encode())
    if hello["device_count"] == 0:
        return 0
    while True:
        raw = ch.read()
        if raw is None:
            return 0
        payload = ch.read()
        if payload is None:
            return 0
        t0 = time.perf_counter()
        try:
            header, back = run(torch, attend, json.loads(raw), payload)
        except Exception as e:
            header, back = {"status": "error", "detail": "".join(traceback.format_exception_only(e)).strip()}, b""
        header["driver_ms"] = (time.perf_counter() - t0) * 1e3
        ch.reply(header, back)
        if header.get("exiting"):
            return 3


if __name__ == "__main__":
    sys.exit(main())
