#!/usr/bin/env python3
"""Whole networks on the GPU: lowconv `bench --device opencl` (f32/q8/q4) against PyTorch running the
same ONNX graph with the same weights (an op-by-op interpreter on CUDA tensors: cuDNN convs, fp32,
TF32 off; eager, and CUDA-graph replay). The nets are the test suite's generated IResNet-34-112 and
OCR-det-like 640x640 (tests/models). Prints one JSON object per (net, batch, engine)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))


def with_batch(model, n):
    for v in list(model.graph.input) + list(model.graph.output):
        v.type.tensor_type.shape.dim[0].dim_value = n
    return model


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def torch_runner(model, dev):
    """A closure running the graph with torch ops (the ops the generated nets use)."""
    host = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    init = {k: torch.from_numpy(a.copy()).to(dev) for k, a in host.items()}
    nodes = list(model.graph.node)

    def conv(n, v):
        x, w = v[n.input[0]], v[n.input[1]]
        b = v[n.input[2]] if len(n.input) > 2 and n.input[2] else None
        p = attr(n, "pads", [0, 0, 0, 0])
        if p[0] != p[2] or p[1] != p[3]:
            x, p = F.pad(x, (p[1], p[3], p[0], p[2])), [0, 0]
        return F.conv2d(x, w, b, attr(n, "strides", [1, 1]), p[:2], attr(n, "dilations", [1, 1]), attr(n, "group", 1))

    def convt(n, v):
        x, w = v[n.input[0]], v[n.input[1]]
        b = v[n.input[2]] if len(n.input) > 2 and n.input[2] else None
        p = attr(n, "pads", [0, 0, 0, 0])
        return F.conv_transpose2d(x, w, b, attr(n, "strides", [1, 1]), p[:2], attr(n, "output_padding", [0, 0]),
                                  attr(n, "group", 1), attr(n, "dilations", [1, 1]))

    def bn(n, v):
        return F.batch_norm(v[n.input[0]], v[n.input[3]], v[n.input[4]], v[n.input[1]], v[n.input[2]], False, 0.0,
                            attr(n, "epsilon", 1e-5))

    def prelu(n, v):
        x, s = v[n.input[0]], v[n.input[1]]
        return torch.where(x >= 0, x, x * s)

    def gemm(n, v):
        a, b = v[n.input[0]], v[n.input[1]]
        if attr(n, "transB", 0):
            b = b.t()
        y = a @ b
        return y + v[n.input[2]] if len(n.input) > 2 else y

    def resize(n, v):
        x = v[n.input[0]]
        sizes = host[n.input[3]].tolist() if len(n.input) > 3 and n.input[3] else None
        scales = host[n.input[2]].tolist() if len(n.input) > 2 and n.input[2] and host[n.input[2]].size else None
        mode = attr(n, "mode", b"nearest").decode()
        size = [int(s) for s in sizes[2:]] if sizes else [int(x.shape[2] * scales[2]), int(x.shape[3] * scales[3])]
        return F.interpolate(x, size=size, mode="nearest" if mode == "nearest" else "bilinear",
                             align_corners=None if mode == "nearest" else False)

    ops = {
        "Conv": conv, "ConvTranspose": convt, "BatchNormalization": bn, "PRelu": prelu, "Gemm": gemm,
        "Add": lambda n, v: v[n.input[0]] + v[n.input[1]], "Mul": lambda n, v: v[n.input[0]] * v[n.input[1]],
        "Relu": lambda n, v: F.relu(v[n.input[0]]), "Sigmoid": lambda n, v: torch.sigmoid(v[n.input[0]]),
        "HardSwish": lambda n, v: F.hardswish(v[n.input[0]]),
        "HardSigmoid": lambda n, v: torch.clamp(v[n.input[0]] * attr(n, "alpha", 0.2) + attr(n, "beta", 0.5), 0, 1),
        "Clip": lambda n, v: torch.clamp(v[n.input[0]], float(host[n.input[1]]), float(host[n.input[2]])),
        "Flatten": lambda n, v: torch.flatten(v[n.input[0]], attr(n, "axis", 1)),
        "Identity": lambda n, v: v[n.input[0]],
        "GlobalAveragePool": lambda n, v: v[n.input[0]].mean((2, 3), keepdim=True),
        "Concat": lambda n, v: torch.cat([v[i] for i in n.input], attr(n, "axis", 1)),
        "Resize": resize,
    }

    def run(x):
        v = dict(init)
        v[model.graph.input[0].name] = x
        for n in nodes:
            v[n.output[0]] = ops[n.op_type](n, v)
        return v[model.graph.output[0].name]

    return run


def time_torch(run, x, reps):
    with torch.no_grad():
        for _ in range(5):
            y = run(x)
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(reps):
            e0.record()
            run(x)
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1))
        eager = sorted(ts)[len(ts) // 2]
        g, s = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            run(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            y = run(x)
        ts = []
        for _ in range(reps):
            e0.record()
            g.replay()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1))
        return eager, sorted(ts)[len(ts) // 2], y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    import iresnet34
    import ocr_det
    tmp = tempfile.mkdtemp()
    for name, build, size, batches in (("iresnet34", iresnet34.build, 112, (1, 32)), ("ocr_det", ocr_det.build, 640, (1,))):
        for n in batches:
            model = with_batch(build(size), n)
            path = os.path.join(tmp, f"{name}_b{n}.onnx")
            onnx.save(model, path)
            x = np.random.default_rng(1).standard_normal((n, 3, size, size)).astype(np.float32)
            np.save(os.path.join(tmp, "x.npy"), x)
            for w in ("f32", "q8", "q4"):
                cmd = [a.lowconv, "bench", path, "--device", "opencl", "--weights", w, "--json", "--repeat", str(a.reps)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                row = {"net": name, "batch": n, "engine": "lowconv-opencl", "weights": w}
                row["rc"] = r.returncode
                try:
                    j = json.loads(r.stdout)
                    for k in ("median_ms", "min_ms", "start_ms", "device_ms", "compile_ms", "tune_ms", "kernels",
                              "fallbacks", "launch_floor_ms", "device_weight_bytes", "device_activation_bytes"):
                        row[k] = j.get(k)
                except ValueError:
                    err = "\n".join(l for l in r.stderr.splitlines() if "planning on" not in l)
                    row["error"] = (err or r.stdout)[-1500:]
                print(json.dumps(row))
                sys.stdout.flush()
            try:
                run = torch_runner(model, torch.device("cuda"))
                eager, graph, _ = time_torch(run, torch.from_numpy(x).cuda(), a.reps)
                print(json.dumps({"net": name, "batch": n, "engine": "pytorch-cudnn", "weights": "f32",
                                  "eager_ms": eager, "graph_ms": graph, "torch": torch.__version__}))
            except Exception as e:  # an op the interpreter lacks: say so, keep going
                print(json.dumps({"net": name, "batch": n, "engine": "pytorch-cudnn", "error": repr(e)[:300]}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
