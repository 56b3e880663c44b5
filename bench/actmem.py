"""The activation-memory bound of issue #10: the largest sum of two tensors live at the same time
(in graph order, inputs included, weights not), next to what lowconv plans on a device.

usage: python3 bench/actmem.py MODEL.onnx [--shape name=1x3x640x640] [--lowconv build/lowconv] [--device opencl]
"""
import argparse
import json
import subprocess
import sys

import numpy as np
import onnx
from onnx import shape_inference


def bound(model):
    g = model.graph
    inits = {i.name for i in g.initializer}
    vi = {v.name: v for v in list(g.value_info) + list(g.input) + list(g.output)}

    def nbytes(name):
        v = vi.get(name)
        if v is None or not v.type.tensor_type.HasField("shape"):
            return 0
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if any(d <= 0 for d in dims):
            return 0
        es = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)).itemsize
        return int(np.prod(dims)) * es

    last = {}
    for i, n in enumerate(g.node):
        for x in n.input:
            last[x] = i
    outs = {o.name for o in g.output}
    live = {x.name: nbytes(x.name) for x in g.input if x.name not in inits}
    best = 0
    for i, n in enumerate(g.node):
        for y in n.output:
            if y:
                live[y] = nbytes(y)
        top = sorted(live.values(), reverse=True)[:2]
        best = max(best, sum(top))
        for x in list(live):
            if last.get(x, -1) <= i and x not in outs:
                del live[x]
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--lowconv")
    ap.add_argument("--device", default="opencl")
    a = ap.parse_args()
    m = onnx.load(a.model)
    for s in a.shape:
        name, dims = s.split("=")
        for v in m.graph.input:
            if v.name == name:
                for d, x in zip(v.type.tensor_type.shape.dim, dims.split("x")):
                    d.ClearField("dim_param")
                    d.dim_value = int(x)
    m = shape_inference.infer_shapes(m)
    b = bound(m)
    row = {"model": a.model, "two_largest_live_bytes": b}
    if a.lowconv:
        cmd = [a.lowconv, "bench", a.model, "--device", a.device, "--json", "--repeat", "1"]
        for s in a.shape:
            cmd += ["--shape", s]
        j = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        dev = j.get("device_activation_bytes") or j.get("device", {}).get("activation_bytes")
        row.update({"device_activation_bytes": dev, "ratio": round(dev / b, 3) if dev and b else None})
    print(json.dumps(row))


if __name__ == "__main__":
    sys.exit(main())
