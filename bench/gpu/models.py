#!/usr/bin/env python3
"""Whole networks on the GPU: lowconv `bench --device opencl` (f32/q8/q4) against PyTorch running the
same ONNX graph with the same weights (an op-by-op interpreter on CUDA tensors: cuDNN convs, fp32,
TF32 off; eager, and CUDA-graph replay). The nets are the test suite's generated IResNet-34-112 and
OCR-det-like 640x640 (tests/models) and, with --ppocr DIR, the real PP-OCR det/cls/rec models.
Correctness: the device's and PyTorch's outputs against lowconv's CPU runner on the same input
(max abs error over the output's scale, cosine). Prints one JSON object per (net, batch, engine);
for IResNet-34 batch 32 also the per-layer device profile summed by op."""
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


ONNX_DT = {1: (np.float32, torch.float32), 6: (np.int32, torch.int32), 7: (np.int64, torch.int64),
           9: (np.bool_, torch.bool), 11: (np.float64, torch.float64)}


def torch_runner(model, dev):
    """A closure running the graph with torch ops (the ops of the generated nets and of PP-OCR
    det/cls/rec). Shape arithmetic (Shape, Cast, Slice, Concat ... of int tensors) stays in numpy on
    the host: shapes are static for one input size, so a CUDA graph captures only the GPU work."""
    host = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            host[n.output[0]] = numpy_helper.to_array(attr(n, "value"))
    cuda = {k: torch.from_numpy(a.copy()).to(dev) for k, a in host.items() if a.dtype == np.float32}
    nodes = [n for n in model.graph.node if n.op_type != "Constant"]

    def T(x):
        return x if torch.is_tensor(x) else torch.from_numpy(np.ascontiguousarray(x)).to(dev)

    def ints(x):
        return [int(i) for i in (x.tolist() if torch.is_tensor(x) else np.asarray(x).reshape(-1).tolist())]

    def inp(n, v, i):
        return v.get(n.input[i]) if len(n.input) > i and n.input[i] else None

    def const(n, v, i):
        """Input i as a host array (constants from the file; computed ones copied back), or None."""
        if len(n.input) <= i or not n.input[i]:
            return None
        x = host.get(n.input[i], v.get(n.input[i]))
        return x.cpu().numpy() if torch.is_tensor(x) else x

    def conv(n, v):
        x, w = v[n.input[0]], v[n.input[1]]
        b = inp(n, v, 2)
        p = attr(n, "pads", [0, 0, 0, 0])
        if p[0] != p[2] or p[1] != p[3]:
            x, p = F.pad(x, (p[1], p[3], p[0], p[2])), [0, 0]
        return F.conv2d(x, w, b, attr(n, "strides", [1, 1]), p[:2], attr(n, "dilations", [1, 1]), attr(n, "group", 1))

    def convt(n, v):
        x, w = v[n.input[0]], v[n.input[1]]
        b = inp(n, v, 2)
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
        if attr(n, "transA", 0):
            a = a.t()
        if attr(n, "transB", 0):
            b = b.t()
        y = (a @ b) * attr(n, "alpha", 1.0)
        c = inp(n, v, 2)
        return y + c * attr(n, "beta", 1.0) if c is not None else y

    def resize(n, v):
        x = v[n.input[0]]
        sz, sc = const(n, v, 3), const(n, v, 2)
        mode = attr(n, "mode", b"nearest").decode()
        coord = attr(n, "coordinate_transformation_mode", b"half_pixel").decode()
        if sz is not None and np.size(sz):
            size = ints(sz)[2:]
        else:
            s = [float(f) for f in np.asarray(sc).reshape(-1)]
            size = [int(x.shape[2] * s[2]), int(x.shape[3] * s[3])]
        if mode == "nearest":
            return F.interpolate(x, size=size, mode="nearest")
        return F.interpolate(x, size=size, mode="bilinear", align_corners=coord == "align_corners")

    def binary(f, fnp):
        def op(n, v):
            a, b = v[n.input[0]], v[n.input[1]]
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
                return fnp(a, b)
            return f(T(a), T(b))
        return op

    def clip(n, v):
        lo, hi = const(n, v, 1), const(n, v, 2)
        lo = float(np.asarray(lo)) if lo is not None else attr(n, "min", None)
        hi = float(np.asarray(hi)) if hi is not None else attr(n, "max", None)
        return torch.clamp(v[n.input[0]], lo, hi)

    def pool(n, v, avg):
        x = v[n.input[0]]
        k, s = attr(n, "kernel_shape"), attr(n, "strides", None) or attr(n, "kernel_shape")
        p = attr(n, "pads", [0, 0, 0, 0])
        if p[0] != p[2] or p[1] != p[3]:
            x, p = F.pad(x, (p[1], p[3], p[0], p[2]), value=0.0 if avg else float("-inf")), [0, 0]
        cm = bool(attr(n, "ceil_mode", 0))
        if avg:
            return F.avg_pool2d(x, k, s, p[:2], cm, count_include_pad=bool(attr(n, "count_include_pad", 0)))
        return F.max_pool2d(x, k, s, p[:2], 1, cm)

    def cast(n, v):
        x, (nd, td) = v[n.input[0]], ONNX_DT[attr(n, "to")]
        return x.astype(nd) if isinstance(x, np.ndarray) else x.to(td)

    def slice_(n, v):
        x = v[n.input[0]]
        st, en = ints(v[n.input[1]]), ints(v[n.input[2]])
        ax = ints(v[n.input[3]]) if inp(n, v, 3) is not None else list(range(len(st)))
        sp = ints(v[n.input[4]]) if inp(n, v, 4) is not None else [1] * len(st)
        idx = [slice(None)] * x.ndim
        for a, b, e, c in zip(ax, st, en, sp):
            idx[a] = slice(b, e, c)
        return x[tuple(idx)]

    def reshape(n, v):
        x, shp = v[n.input[0]], ints(v[n.input[1]])
        shp = [x.shape[i] if d == 0 else d for i, d in enumerate(shp)]
        return x.reshape(shp)

    def squeeze(n, v):
        x = v[n.input[0]]
        axes = attr(n, "axes", None) or (ints(v[n.input[1]]) if inp(n, v, 1) is not None else None)
        if axes is None:
            return x.squeeze()
        for a in sorted([a % x.ndim for a in axes], reverse=True):
            x = x.squeeze(a)
        return x

    def unsqueeze(n, v):
        x = v[n.input[0]]
        axes = attr(n, "axes", None) or ints(v[n.input[1]])
        for a in sorted(axes):
            x = np.expand_dims(x, a) if isinstance(x, np.ndarray) else x.unsqueeze(a)
        return x

    def softmax(n, v):
        x = v[n.input[0]]
        ax = attr(n, "axis", -1 if model.opset_import[0].version >= 13 else 1) % x.ndim
        if model.opset_import[0].version >= 13 or ax == x.ndim - 1:
            return torch.softmax(x, ax)
        return torch.softmax(x.reshape(*x.shape[:ax], -1), -1).reshape(x.shape)  # opset < 13: flattened

    def concat(n, v):
        xs = [v[i] for i in n.input]
        if all(isinstance(x, np.ndarray) for x in xs):
            return np.concatenate(xs, attr(n, "axis"))
        return torch.cat([T(x) for x in xs], attr(n, "axis"))

    def reduce_mean(n, v):
        x = v[n.input[0]]
        axes = attr(n, "axes", None) or (ints(v[n.input[1]]) if inp(n, v, 1) is not None else list(range(x.ndim)))
        return x.mean(tuple(axes), keepdim=bool(attr(n, "keepdims", 1)))

    ops = {
        "Conv": conv, "ConvTranspose": convt, "BatchNormalization": bn, "PRelu": prelu, "Gemm": gemm,
        "Add": binary(torch.add, np.add), "Sub": binary(torch.sub, np.subtract), "Mul": binary(torch.mul, np.multiply),
        "Div": binary(torch.div, lambda a, b: a // b if a.dtype.kind in "iu" else a / b),
        "Pow": binary(torch.pow, np.power), "MatMul": binary(torch.matmul, np.matmul),
        "Relu": lambda n, v: F.relu(v[n.input[0]]), "Sigmoid": lambda n, v: torch.sigmoid(v[n.input[0]]),
        "HardSwish": lambda n, v: F.hardswish(v[n.input[0]]),
        "HardSigmoid": lambda n, v: torch.clamp(v[n.input[0]] * attr(n, "alpha", 0.2) + attr(n, "beta", 0.5), 0, 1),
        "Sqrt": lambda n, v: torch.sqrt(v[n.input[0]]), "Clip": clip,
        "Flatten": lambda n, v: torch.flatten(v[n.input[0]], attr(n, "axis", 1)),
        "Identity": lambda n, v: v[n.input[0]],
        "GlobalAveragePool": lambda n, v: v[n.input[0]].mean((2, 3), keepdim=True),
        "MaxPool": lambda n, v: pool(n, v, False), "AveragePool": lambda n, v: pool(n, v, True),
        "Concat": concat, "Resize": resize, "Shape": lambda n, v: np.array(v[n.input[0]].shape, np.int64),
        "Cast": cast, "Slice": slice_, "Reshape": reshape, "Squeeze": squeeze, "Unsqueeze": unsqueeze,
        "Transpose": lambda n, v: v[n.input[0]].permute(*attr(n, "perm")), "Softmax": softmax,
        "ReduceMean": reduce_mean,
    }

    def run(x):
        v = dict(host)
        v.update(cuda)
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


KEYS = ("median_ms", "min_ms", "start_ms", "device_ms", "compile_ms", "tune_ms", "kernels", "fallbacks",
        "launch_floor_ms", "device_weight_bytes", "device_activation_bytes", "cpu_activation_bytes", "arena_buffers")


def lowconv_bench(a, path, shape, extra):
    cmd = [a.lowconv, "bench", path, "--shape", shape, "--device", "opencl", "--json", "--repeat", str(a.reps)] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return r.returncode, json.loads(r.stdout), ""
    except ValueError:
        err = "\n".join(l for l in r.stderr.splitlines() if "planning on" not in l)
        return r.returncode, None, (err or r.stdout)[-1500:]


def lowconv_out(a, path, x_npy, inp, tmp, tag, device):
    """lowconv's output of the model on x (the CPU runner, or the device), or an error string."""
    d = os.path.join(tmp, tag)
    os.makedirs(d, exist_ok=True)
    cmd = [a.lowconv, "run", path, "--input", f"{inp}={x_npy}", "--output-dir", d] + (["--device", "opencl"] if device else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    outs = sorted(f for f in os.listdir(d) if f.endswith(".npy"))
    if r.returncode or not outs:
        return r.stderr.strip()[-400:] or "no output"
    return np.load(os.path.join(d, outs[0]))


def compare(got, ref):
    """max |got - ref| / max |ref| and the cosine (None if either is an error)."""
    if isinstance(got, str) or isinstance(ref, str) or got.shape != ref.shape:
        return None
    g, r = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    cos = float(g @ r / max(np.linalg.norm(g) * np.linalg.norm(r), 1e-30))
    return {"err_of_scale": float(np.abs(g - r).max() / max(np.abs(r).max(), 1e-30)), "cosine": cos}


def per_layer(a, path, shape):
    """Where the device time goes: layers summed by op (+ fusions), and the ten slowest."""
    rc, j, err = lowconv_bench(a, path, shape, ["--per-layer"])
    if not j:
        return {"error": err}
    by = {}
    for l in j.get("layers", []):
        k = l["op"] + ("+" + l["fused"] if l.get("fused") else "")
        c, t = by.get(k, (0, 0.0))
        by[k] = (c + 1, t + (l.get("ms") or 0.0))
    top = sorted(j.get("layers", []), key=lambda l: -(l.get("ms") or 0))[:10]
    return {"sum_layers_ms": round(sum(t for _, t in by.values()), 4), "median_ms": j.get("median_ms"),
            "by_op": {k: {"n": c, "ms": round(t, 4)} for k, (c, t) in sorted(by.items(), key=lambda kv: -kv[1][1])},
            "top": [{k: l.get(k) for k in ("name", "op", "shape", "route", "fused", "ms")} for l in top]}


def nets(a):
    """(name, model, input name, input array): generated nets first, then PP-OCR from --ppocr."""
    import iresnet34
    import ocr_det
    rng = np.random.default_rng(1)
    for n in (32, 1):
        yield "iresnet34", n, with_batch(iresnet34.build(112), n), rng.standard_normal((n, 3, 112, 112))
    for f, shp in (("ch_PP-OCRv4_det_infer.onnx", (1, 3, 640, 640)), ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192)),
                   ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320))):
        p = os.path.join(a.ppocr or "", f)
        if a.ppocr and os.path.exists(p):
            yield f.split("_infer")[0], 1, onnx.load(p), rng.uniform(-1, 1, shp)
        else:
            print(json.dumps({"net": f, "error": "not found (--ppocr DIR)"}))
    yield "ocr_det", 1, with_batch(ocr_det.build(640), 1), rng.standard_normal((1, 3, 640, 640))
    # the reference net: "9x9 convs on 96 channels" is the mobile model's PAN width
    yield "ocr_det96", 1, with_batch(ocr_det.build(640, neck=96), 1), rng.standard_normal((1, 3, 640, 640))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ppocr", help="folder with the PP-OCR det/cls/rec .onnx (from the rapidocr-onnxruntime wheel)")
    ap.add_argument("--only", help="comma-separated net names (default: all)")
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    tmp = tempfile.mkdtemp()
    for name, n, model, x in nets(a):
        if a.only and name not in a.only.split(","):
            continue
        x = x.astype(np.float32)
        path = os.path.join(tmp, f"{name}_b{n}.onnx")
        onnx.save(model, path)
        inp = model.graph.input[0].name
        x_npy = os.path.join(tmp, f"{name}_b{n}_x.npy")
        np.save(x_npy, x)
        shape = inp + "=" + "x".join(map(str, x.shape))
        runs = [("f32", None), ("q8", None), ("q4", None)]
        if name == "iresnet34" and n == 1:  # f32 once more with every cache warm: the warm start
            runs = [("f32", "first"), ("q8", None), ("q4", None), ("f32", "warm")]
        for w, start in runs:
            extra = [] if w == "f32" else ["--weights", w]
            rc, j, err = lowconv_bench(a, path, shape, extra)
            row = {"net": name, "batch": n, "engine": "lowconv-opencl", "weights": w, "rc": rc}
            if start:
                row["start"] = start
            row.update({k: j.get(k) for k in KEYS} if j else {"error": err})
            if j:  # the kernels alone (bench --no-io), as the PyTorch rows are timed: input already on the GPU
                _, jn, _ = lowconv_bench(a, path, shape, extra + ["--no-io"])
                row["noio_ms"] = jn.get("median_ms") if jn else None
            print(json.dumps(row))
            sys.stdout.flush()
        cpu = lowconv_out(a, path, x_npy, inp, tmp, f"{name}_b{n}_cpu", False)
        dev = lowconv_out(a, path, x_npy, inp, tmp, f"{name}_b{n}_dev", True)
        row = {"net": name, "batch": n, "engine": "pytorch-cudnn", "weights": "f32", "dev_vs_cpu": compare(dev, cpu)}
        if isinstance(cpu, str):
            row["cpu_error"] = cpu
        if isinstance(dev, str):
            row["dev_error"] = dev
        try:
            run = torch_runner(model, torch.device("cuda"))
            eager, graph, y = time_torch(run, torch.from_numpy(x).cuda(), a.reps)
            row.update({"eager_ms": eager, "graph_ms": graph, "torch": torch.__version__,
                        "torch_vs_cpu": compare(y.float().cpu().numpy(), cpu)})
        except Exception as e:  # an op the interpreter lacks: say so, keep going
            row["error"] = repr(e)[:300]
        print(json.dumps(row))
        sys.stdout.flush()
        if name == "iresnet34" and n == 32:
            print(json.dumps({"net": name, "batch": n, "engine": "lowconv-opencl-per-layer", "weights": "f32",
                              **per_layer(a, path, shape)}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
