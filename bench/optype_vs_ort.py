#!/usr/bin/env python3
"""Per-op-type time of a model in lowconv (`bench --per-layer --json`, median per node) and in
onnxruntime (SessionOptions.enable_profiling: the "Node" kernel events, median per node over the
runs), both on one thread, interleaved in rounds so that a loaded machine slows both alike; medians
over rounds. One row per op type: count and ms in each, then the ratio lowconv / onnxruntime.

Fusions differ between the two, so time is attributed to the op that leads a fused group:
- lowconv: a layer's time (its fused BN / activations / Mul / Add included, column "fused") is its
  leading op's (a Conv with a fused HardSwish counts as Conv).
- onnxruntime: a node named after a model node that lowconv fused away is moved to the op type of
  the lowconv layer that absorbed it (found through the graph: the producer whose output only that
  node reads, else its first input's); "ort moved" says how much each row got. onnxruntime's own
  fused or inserted nodes go to the op they replace: FusedConv -> Conv, FusedGemm -> Gemm,
  FusedMatMul -> MatMul, QuickGelu -> Sigmoid (lowconv runs it as Sigmoid + Mul); an NCHWc
  ReorderInput to the op that reads its output, a ReorderOutput to the op that wrote its input
  (from onnxruntime's optimized graph: a conv's, or a pool's such as rec's NCHWc AveragePool).
"ratio" compares lowconv's row with onnxruntime's row after these moves; "raw" with its own op
type only.
Usage: optype_vs_ort.py --lowconv CLI MODEL.onnx --shape [x=]1x3x640x640 [--rounds 5] [--runs 5]"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

ORT_ALIAS = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul", "QuickGelu": "Sigmoid"}


def reorder_ops(path, tmp):
    """{Reorder node name: op type it converts for} from onnxruntime's optimized graph."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.optimized_model_filepath = os.path.join(tmp, "opt.onnx")
    so.log_severity_level = 3
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    g = onnx.load(so.optimized_model_filepath, load_external_data=False).graph
    by_out = {o: n for n in g.node for o in n.output}
    by_in = {}
    for n in g.node:
        for i in n.input:
            by_in.setdefault(i, n)
    out = {}
    for n in g.node:
        other = by_in.get(n.output[0]) if n.op_type == "ReorderInput" else by_out.get(n.input[0])
        if n.op_type in ("ReorderInput", "ReorderOutput") and other is not None:
            out[n.name] = ORT_ALIAS.get(other.op_type, other.op_type)
    return out


def ort_session(path, tmp=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if tmp:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "ort")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_wall(sess, x, runs):
    """Median ms of sess.run after one warm-up run."""
    name = sess.get_inputs()[0].name
    sess.run(None, {name: x})
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, {name: x})
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls)


def ort_round(path, x, runs, tmp):
    """{node name: (op type, ms)} (median per node) and the end-to-end median, both with profiling
    on; main() times end to end on a session without it."""
    sess = ort_session(path, tmp)
    wall = ort_wall(sess, x, runs)
    prof = sess.end_profiling()
    with open(prof) as f:
        events = json.load(f)
    os.remove(prof)
    per_node = collections.defaultdict(list)  # node -> [us per run], warm-up dropped below
    op_of = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        node = e["name"][: -len("_kernel_time")]
        per_node[node].append(e["dur"])
        op_of[node] = e.get("args", {}).get("op_name", "?")
    nodes = {}
    for node, d in per_node.items():
        d = d[1:] if len(d) > runs else d
        nodes[node] = (op_of[node], statistics.median(d) / 1e3)
    return nodes, wall


def lc_round(cli, path, shape, runs):
    """[(layer name, op, fused, ms)] and the end-to-end median."""
    p = subprocess.run([cli, "bench", path, "--shape", "%s=%s" % (shape[0], shape[1]), "--threads", "1", "--repeat",
                        str(runs), "--per-layer", "--json"], capture_output=True, text=True, check=True)
    o = json.loads(p.stdout)
    return [(l["name"], l["op"], l.get("fused", ""), l["ms"]) for l in o["layers"]], o["median_ms"]


def owners(model, layer_names):
    """model node name -> name of the lowconv layer that runs it (itself when it is a layer)."""
    g = model.graph
    inits = {i.name for i in g.initializer}
    producer, readers = {}, collections.Counter()
    for n in g.node:
        for o in n.output:
            producer[o] = n.name
        for i in set(n.input):
            readers[i] += 1
    own = {}
    for n in g.node:  # topological order: producers come first
        if n.name in layer_names:
            own[n.name] = n.name
            continue
        ins = [i for i in n.input if i and i not in inits and producer.get(i) in own]  # constants own nothing
        pick = [i for i in ins if readers[i] == 1] or ins
        if pick:
            own[n.name] = own[producer[pick[0]]]
    return own


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("model")
    ap.add_argument("--shape", required=True, help="input dims, e.g. 1x3x640x640 (or x=1x3x640x640)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    shape = a.shape.split("=")[-1]
    dims = [int(v) for v in shape.split("x")]
    x = np.random.default_rng(0).uniform(-1, 1, dims).astype(np.float32)
    in_name = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    model = onnx.load(a.model, load_external_data=False)
    model_nodes = {n.name: n.op_type for n in model.graph.node}
    lc_t, ort_t, ort_raw, moved = (collections.defaultdict(list) for _ in range(4))
    lc_e2e, ort_e2e, lc_n, ort_n, fused_kinds = [], [], collections.Counter(), collections.Counter(), {}
    with tempfile.TemporaryDirectory() as tmp:
        reorder = reorder_ops(a.model, tmp)
        plain = ort_session(a.model)  # end to end without the profiler's cost
        for r in range(a.rounds):
            layers, e = lc_round(a.lowconv, a.model, (in_name, shape), a.runs)
            lc_e2e.append(e)
            layer_op = {name: op for name, op, _, _ in layers}
            own = owners(model, set(layer_op))
            t = collections.defaultdict(float)
            for name, op, fused, ms in layers:
                t[op] += ms
                if r == 0:
                    lc_n[op] += 1
                    if fused:
                        fused_kinds.setdefault(op, set()).update(fused.split("+"))
            for k in set(t) | set(lc_t):
                lc_t[k].append(t.get(k, 0.0))
            nodes, _ = ort_round(a.model, x, a.runs, tmp)
            ort_e2e.append(ort_wall(plain, x, a.runs))
            t, raw, mv = (collections.defaultdict(float) for _ in range(3))
            for node, (op, ms) in nodes.items():
                raw[op] += ms
                if node in model_nodes and node not in layer_op and node in own:
                    dest = layer_op[own[node]]  # lowconv fused it into this layer
                else:
                    dest = reorder.get(node, ORT_ALIAS.get(op, op))
                t[dest] += ms
                if dest != op:
                    mv[dest] += ms
                if r == 0:
                    ort_n[op] += 1
            for k in set(t) | set(ort_t):
                ort_t[k].append(t.get(k, 0.0))
            for k in set(raw) | set(ort_raw):
                ort_raw[k].append(raw.get(k, 0.0))
            for k in set(mv) | set(moved):
                moved[k].append(mv.get(k, 0.0))

    def med(d, k):
        return statistics.median(d[k]) if k in d else 0.0

    ops = sorted(set(lc_t) | set(ort_t) | set(ort_raw), key=lambda k: -max(med(lc_t, k), med(ort_t, k)))
    print("%-20s %5s %9s %5s %9s %9s %9s %6s %6s  %s" % ("op type", "lc n", "lc ms", "ort n", "ort raw", "ort moved",
                                                          "ort ms", "ratio", "raw", "lowconv fused in"))
    for k in ops:
        lm, om, rm = med(lc_t, k), med(ort_t, k), med(ort_raw, k)
        print("%-20s %5d %9.3f %5d %9.3f %9.3f %9.3f %6s %6s  %s" % (
            k, lc_n[k], lm, ort_n[k], rm, med(moved, k), om, "%.2f" % (lm / om) if om > 0 and lm > 0 else "-",
            "%.2f" % (lm / rm) if rm > 0 and lm > 0 else "-", "+".join(sorted(fused_kinds.get(k, ())))))
    lm, om = statistics.median(lc_e2e), statistics.median(ort_e2e)
    print("end to end (median of %d rounds x %d runs; onnxruntime without profiling): lowconv %.2f ms, "
          "onnxruntime %.2f ms, ratio %.2f" %
          (a.rounds, a.runs, lm, om, lm / om))
    return 0


if __name__ == "__main__":
    sys.exit(main())
