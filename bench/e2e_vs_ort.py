#!/usr/bin/env python3
"""One model end to end, lowconv (`lowconv bench`, one process per round) against onnxruntime (in
this process), both on one thread, interleaved in rounds so that a noisy machine slows both alike:
per round the median and the fastest of N runs each; prints the ratios of the medians over rounds
and of the fastest runs.
Usage: e2e_vs_ort.py --lowconv CLI MODEL.onnx --shape NAME=1x3x48x320 [--rounds 5] [--runs 40]"""
import argparse
import re
import statistics
import subprocess
import time

import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("model")
    ap.add_argument("--shape", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=40)
    a = ap.parse_args()
    name, dims = a.shape.split("=")
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal([int(d) for d in dims.split("x")]).astype(np.float32)
    for _ in range(5):
        s.run(None, {name: x})
    res = {"ort_median": [], "ort_min": [], "lowconv_median": [], "lowconv_min": []}
    for _ in range(a.rounds):
        t = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            s.run(None, {name: x})
            t.append((time.perf_counter() - t0) * 1e3)
        res["ort_median"].append(statistics.median(t))
        res["ort_min"].append(min(t))
        o = subprocess.run([a.lowconv, "bench", a.model, "--shape", a.shape, "--threads", "1", "--repeat", str(a.runs)],
                           capture_output=True, text=True, check=True).stdout
        res["lowconv_median"].append(float(re.search(r"median ([0-9.]+) ms", o).group(1)))
        res["lowconv_min"].append(float(re.search(r"min ([0-9.]+) ms", o).group(1)))
    for k, v in res.items():
        print(f"{k:15s}", " ".join(f"{t:.2f}" for t in v), f"| median {statistics.median(v):.2f} ms")
    print(f"lowconv / onnxruntime: medians {statistics.median(res['lowconv_median']) / statistics.median(res['ort_median']):.3f}, "
          f"fastest runs {min(res['lowconv_min']) / min(res['ort_min']):.3f}")


if __name__ == "__main__":
    main()
