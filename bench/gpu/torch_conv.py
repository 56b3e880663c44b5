#!/usr/bin/env python3
"""cuDNN (through PyTorch) on the layers of a lowconv suite: the GPU yardstick for
`lowconv conv --suite S --device opencl`. Reads the layers from `lowconv conv --suite S --dry-run`
(JSON lines), times each conv fp32 with TF32 off and cudnn.benchmark on, with CUDA events:
device_ms = median of single calls (event pair around each), wall_ms = back-to-back calls / n,
graph_ms = a CUDA graph of 20 calls replayed / 20 (no per-call dispatch).
Prints one JSON object per layer."""
import argparse
import json
import subprocess
import sys

import torch


def layers(lowconv, suite, mb):
    cmd = [lowconv, "conv", "--suite", suite, "--dry-run"] + (["--mb", str(mb)] if mb else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def time_layer(L, reps):
    dev = torch.device("cuda")
    x = torch.randn(L["mb"], L["ic"], L["ih"], L["iw"], device=dev)
    w = torch.randn(L["oc"], L["ic"] // L["g"], L["kh"], L["kw"], device=dev)
    b = torch.randn(L["oc"], device=dev)
    pad = (L["pt"], L["pb"], L["pl"], L["pr"])
    symmetric = L["pt"] == L["pb"] and L["pl"] == L["pr"]

    def run():
        xi = x if symmetric else torch.nn.functional.pad(x, (L["pl"], L["pr"], L["pt"], L["pb"]))
        return torch.nn.functional.conv2d(xi, w, b, stride=(L["sh"], L["sw"]),
                                          padding=(L["pt"], L["pl"]) if symmetric else 0,
                                          dilation=(L["dh"] + 1, L["dw"] + 1), groups=L["g"])

    for _ in range(10):
        y = run()
    torch.cuda.synchronize()
    assert tuple(y.shape[2:]) == (L["oh"], L["ow"]), (y.shape, L)
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        run()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1))
    ts.sort()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        run()
    e1.record()
    e1.synchronize()
    wall = e0.elapsed_time(e1) / reps
    # CUDA graph of 20 calls, replayed: cuDNN's kernels without PyTorch's per-call dispatch.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            run()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(20):
            run()
    g.replay()
    torch.cuda.synchronize()
    gs = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        gs.append(e0.elapsed_time(e1) / 20)
    gs.sort()
    return ts[len(ts) // 2], wall, gs[len(gs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--mb", type=int, default=0)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    for L in layers(a.lowconv, a.suite, a.mb):
        med, wall, graph = time_layer(L, a.reps)
        print(json.dumps({"peer": "cudnn", "name": L["name"], "desc": L["desc"], "count": L["count"],
                          "mb": L["mb"], "device_ms": med, "wall_ms": wall, "graph_ms": graph,
                          "gflops": L["flops"] / (med * 1e-3) * 1e-9,
                          "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                          "gpu": torch.cuda.get_device_name()}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
