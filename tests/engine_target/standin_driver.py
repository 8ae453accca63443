#!/usr/bin/env python3
"""A stand-in engine driver for the CPU lane: the real driver's protocol (vllm_triton_driver.py's
Channel and frames) over a host bytearray instead of a CUDA allocation, with a planted "kernel"
instead of vLLM's. What it does is read from the file named by $HEADROOM_STANDIN_MODE_FILE at every
run: "ok" (writes nothing), "overrun NAME N" (N zero bytes just past view NAME's last element),
"fault" (exits without a reply, as a driver whose CUDA context died), "raise" (the kernel raised)."""

import json
import os
import sys

sys.path.insert(0, os.environ["HEADROOM_REAL_DRIVER_DIR"])
from vllm_triton_driver import CHANNEL_FD, Channel  # noqa: E402


def main():
    ch = Channel(CHANNEL_FD)
    ch.write(json.dumps({"device_count": 1, "device_name": "stand-in", "kernel": "none"}).encode())
    while True:
        raw = ch.read()
        payload = ch.read() if raw is not None else None
        if payload is None:
            return 0
        header = json.loads(raw)
        arena = bytearray(header["arena_bytes"])
        at = 0
        for off, n in header["fill"]:
            arena[off : off + n] = payload[at : at + n]
            at += n
        mode = open(os.environ["HEADROOM_STANDIN_MODE_FILE"]).read().split()
        if mode[0] == "fault":
            return 3
        if mode[0] == "raise":
            ch.reply({"status": "raised", "detail": "AssertionError: planted"})
            continue
        if mode[0] == "overrun":
            v = header["launch"]["views"][mode[1]]
            end = v["start"] + v["elem_bytes"] * (v["offset"] + v["shape"][0])
            arena[end : end + int(mode[2])] = bytes(int(mode[2]))
        back = b"".join(bytes(arena[off : off + n]) for off, n in header["readback"])
        ch.reply({"status": "ok", "kernel_ms": 0.0}, back)


if __name__ == "__main__":
    sys.exit(main())
