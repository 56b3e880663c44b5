#!/usr/bin/env python3
"""The peer for issue 9's GEMV target: how fast CUDA itself (PyTorch's cuBLAS GEMV) reads a weight
matrix of the q4 GEMV's byte count (K=4096, N=14336 at q4 + fp32 scales per 32 = 36.7 MB) in one
kernel, fp32 and bf16 with K=4096 and N chosen for the same bytes, plus the full fp32 matrix
(235 MB) and a device-to-device copy for the read bandwidth. Times by CUDA events around one call
(median of 100) and a CUDA graph of 20 calls replayed (per call). One JSON object per case."""
import json

import torch


def bench(fn, reps=100):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(20):
            fn()
    g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(10):
        g.replay()
    b.record()
    b.synchronize()
    return ts[len(ts) // 2], a.elapsed_time(b) / 200


def main():
    dev = torch.device("cuda")
    q4_bytes = 4096 * 14336 // 2 + 4096 // 32 * 14336 * 4
    cases = [("f32 same bytes as q4", torch.float32, q4_bytes // (4096 * 4)),
             ("bf16 same bytes as q4", torch.bfloat16, q4_bytes // (4096 * 2)),
             ("f32 K=4096 N=14336", torch.float32, 14336)]
    for name, dt, n in cases:
        w = torch.randn(n, 4096, device=dev).to(dt)
        x = torch.randn(4096, device=dev).to(dt)
        y = torch.empty(n, device=dev, dtype=dt)
        ev, gr = bench(lambda: torch.mv(w, x, out=y))
        nb = w.numel() * w.element_size()
        print(json.dumps({"case": name, "bytes": nb, "event_ms": ev, "graph_ms": gr,
                          "event_GBps": nb / ev / 1e6, "graph_GBps": nb / gr / 1e6}), flush=True)
    src = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    ev, gr = bench(lambda: dst.copy_(src), reps=50)
    print(json.dumps({"case": "copy 256 MiB", "bytes": 2 * src.numel(), "event_ms": ev, "graph_ms": gr,
                      "event_GBps": 2 * src.numel() / ev / 1e6}), flush=True)


if __name__ == "__main__":
    main()
