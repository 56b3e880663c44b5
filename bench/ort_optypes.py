#!/usr/bin/env python3
"""Per-op-type time of a model in lowconv (`bench --per-layer --json`, median per node) and in
onnxruntime (SessionOptions.enable_profiling: the "Node" kernel events, median per node over the
runs), both on one thread, interleaved in rounds so that a loaded machine slows both alike.
Prints one row per op type: count, ms in each, ratio (lowconv / onnxruntime), and the end-to-end
medians. onnxruntime's fused nodes are counted under the op they replace (FusedConv -> Conv).
Usage: ort_optypes.py --lowconv CLI MODEL.onnx --shape 1x3x640x640 [--rounds 3] [--runs 5]"""
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
import onnxruntime as ort

ORT_ALIAS = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul"}


def ort_round(path, x, runs, tmp):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "ort")
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    sess.run(None, {name: x})  # warm-up
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, {name: x})
        walls.append((time.perf_counter() - t0) * 1e3)
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
        op = e.get("args", {}).get("op_name", "?")
        op_of[node] = ORT_ALIAS.get(op, op)
    tot = collections.defaultdict(float)
    cnt = collections.Counter()
    for node, d in per_node.items():
        d = d[1:] if len(d) > runs else d
        tot[op_of[node]] += statistics.median(d) / 1e3
        cnt[op_of[node]] += 1
    return tot, cnt, statistics.median(walls)


def lc_round(cli, path, shape, runs):
    p = subprocess.run([cli, "bench", path, "--shape", "%s=%s" % (shape[0], shape[1]), "--threads", "1", "--repeat",
                        str(runs), "--json"], capture_output=True, text=True, check=True)
    o = json.loads(p.stdout)
    tot = collections.defaultdict(float)
    cnt = collections.Counter()
    for layer in o["layers"]:
        tot[layer["op"]] += layer["ms"]
        cnt[layer["op"]] += 1
    return tot, cnt, o["median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("model")
    ap.add_argument("--shape", required=True, help="input dims, e.g. 1x3x640x640")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    dims = [int(v) for v in a.shape.split("x")]
    x = np.random.default_rng(0).uniform(-1, 1, dims).astype(np.float32)
    in_name = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"]).get_inputs()[0].name
    lc_t, ort_t = collections.defaultdict(list), collections.defaultdict(list)
    lc_e2e, ort_e2e, counts = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            t, c, e = lc_round(a.lowconv, a.model, (in_name, a.shape), a.runs)
            lc_e2e.append(e)
            for k in set(t) | set(lc_t):
                lc_t[k].append(t.get(k, 0.0))
            counts.update({("lc", k): v for k, v in c.items() if ("lc", k) not in counts})
            t, c, e = ort_round(a.model, x, a.runs, tmp)
            ort_e2e.append(e)
            for k in set(t) | set(ort_t):
                ort_t[k].append(t.get(k, 0.0))
            counts.update({("ort", k): v for k, v in c.items() if ("ort", k) not in counts})
    ops = sorted(set(lc_t) | set(ort_t), key=lambda k: -statistics.median(ort_t.get(k, [0])))
    print("%-22s %8s %10s %8s %10s %7s" % ("op type", "lc n", "lc ms", "ort n", "ort ms", "ratio"))
    for k in ops:
        lm, om = statistics.median(lc_t.get(k, [0])), statistics.median(ort_t.get(k, [0]))
        print("%-22s %8d %10.3f %8d %10.3f %7s" % (k, counts.get(("lc", k), 0), lm, counts.get(("ort", k), 0), om,
                                                  "%.2f" % (lm / om) if om > 0 and lm > 0 else "-"))
    lm, om = statistics.median(lc_e2e), statistics.median(ort_e2e)
    print("end to end (median of %d rounds x %d runs): lowconv %.2f ms, onnxruntime %.2f ms, ratio %.2f" %
          (a.rounds, a.runs, lm, om, lm / om))
    return 0


if __name__ == "__main__":
    sys.exit(main())
