"""OpenVINO's per-node times for a model (its PERF_COUNT counters), to set beside
`lowconv bench MODEL --per-layer`: f32, latency hint, T threads, the median of each node over the
runs after five warm-up runs. The counters add their own cost per node, so the total runs above
an uncounted run's time; compare shapes, not sums.

usage: .venv/bin/python bench/ov_layers.py MODEL.onnx 1x3x112x112 THREADS RUNS
"""
import collections
import sys

import numpy as np
import openvino as ov


def main():
    path, shape = sys.argv[1], tuple(int(x) for x in sys.argv[2].split("x"))
    threads, runs = sys.argv[3], int(sys.argv[4])
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads,
           "PERF_COUNT": "YES"}
    req = ov.Core().compile_model(path, "CPU", cfg).create_infer_request()
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    times = collections.defaultdict(list)
    for i in range(runs):
        req.infer({0: x})
        if i < 5:
            continue
        for p in req.profiling_info:
            if p.status == p.Status.EXECUTED:
                times[(p.node_name, p.node_type, p.exec_type)].append(p.real_time.total_seconds() * 1e3)
    total = 0.0
    for (name, kind, impl), v in times.items():
        m = float(np.median(v))
        total += m
        print("%-40s %-18s %-28s %.4f" % (name[:40], kind, impl, m))
    print("total %.3f ms" % total)


if __name__ == "__main__":
    main()
