#!/usr/bin/env python3
"""One-node models of the non-conv operators PP-OCRv4 det / rec run (their shapes), each timed by
lowconv (`bench --json`, one or more builds) and by onnxruntime's profiler, one thread, interleaved
in rounds as optype_vs_ort.py does; medians over rounds. Prints ms per op and the ratio to onnxruntime
(its node of that op type only: the NCHWc ReorderInput / ReorderOutput it puts around pools are not
counted, as in optype_vs_ort.py's per-op-type rows).
Usage: ort_single_ops.py --lowconv CLI [--lowconv CLI2 ...] [--rounds 5] [--runs 20] [--only NAME,...]"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from optype_vs_ort import lc_round, ort_round  # noqa: E402

# name, op, input shape, output shape, attributes
CASES = [
    ("sigmoid", "Sigmoid", [1, 1, 640, 640], [1, 1, 640, 640], {}),
    ("softmax", "Softmax", [1, 40, 6625], [1, 40, 6625], {"axis": 2}),
    ("softmax_attn", "Softmax", [1, 8, 40, 40], [1, 8, 40, 40], {"axis": 3}),
    ("gap_big", "GlobalAveragePool", [1, 96, 160, 160], [1, 96, 1, 1], {}),
    ("gap_rec", "GlobalAveragePool", [1, 480, 6, 80], [1, 480, 1, 1], {}),
    ("avgpool_rec", "AveragePool", [1, 480, 3, 80], [1, 480, 1, 40],
     {"kernel_shape": [3, 2], "strides": [3, 2], "pads": [0, 0, 0, 0]}),
    ("tanh", "Tanh", [1, 64, 80, 80], [1, 64, 80, 80], {}),
    ("exp", "Exp", [1, 64, 80, 80], [1, 64, 80, 80], {}),
    ("hardsigmoid", "HardSigmoid", [1, 64, 80, 80], [1, 64, 80, 80], {}),
    ("hardswish", "HardSwish", [1, 64, 80, 80], [1, 64, 80, 80], {}),
]


def make(path, op, ishape, oshape, attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ishape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, oshape)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op, [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    print("%-14s %-18s %s %10s" % ("case", "op", " ".join("%10s" % ("lc%d ms" % i) for i in range(len(a.lowconv))),
                                   "ort ms") + "".join("  ratio%d" % i for i in range(len(a.lowconv))))
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, ish, osh, attrs in CASES:
            if only and name not in only:
                continue
            path = os.path.join(tmp, name + ".onnx")
            make(path, op, ish, osh, attrs)
            x = np.random.default_rng(0).uniform(-4, 4, ish).astype(np.float32)
            shape = ("x", "x".join(str(d) for d in ish))
            lc = [[] for _ in a.lowconv]
            ort_ms = []
            for _ in range(a.rounds):
                for i, cli in enumerate(a.lowconv):
                    lc[i].append(sum(ms for _, o, _, ms in lc_round(cli, path, shape, a.runs)[0] if o == op))
                nodes = ort_round(path, x, a.runs, tmp)[0]
                ort_ms.append(sum(ms for o, ms in nodes.values() if o == op))  # its Reorder* nodes not counted
            med = [statistics.median(v) for v in lc]
            om = statistics.median(ort_ms)
            print("%-14s %-18s %s %10.4f" % (name, op, " ".join("%10.4f" % m for m in med), om) +
                  "".join("  %6.2f" % (m / om) if om > 0 else "       -" for m in med))
    return 0


if __name__ == "__main__":
    sys.exit(main())
