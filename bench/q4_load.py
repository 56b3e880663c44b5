#!/usr/bin/env python3
"""Load-to-first-result and peak RSS of `lowconv run` on a saved q4 IResNet-34-112 against the fp32
ONNX (issue #13's targets: peak RSS <= 40 MB, time <= 0.3x the fp32 file's), without the calibrated
search of bench/quant_bench.py (about 25 minutes on 2 cores): every layer is rounded to nearest at
q4 (block 32) except those with fewer than 16 input channels per tap (q8), and written by the
quantizer's own writer, so the file's layout is exactly what `lowconv quantize` writes.
Each round runs `lowconv run` once per file (fp32, then q4) in a fresh process under /usr/bin/time;
medians over --runs rounds (default 5).
Usage: bench/q4_load.py [--lowconv build/lowconv] [--out DIR] [--json OUT.json] [--runs 5]"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("LOWCONV_LIBRARY", os.path.join(ROOT, "build", "liblowconv.so"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import iresnet34  # noqa: E402
from lowconv import quantizer  # noqa: E402
from quant_bench import run_process  # noqa: E402  (wall s and peak RSS MB of one process)


def write_q4(src, dst):
    import onnx
    m = onnx.load(src)
    layers = quantizer.find_layers(m)
    for L in layers:
        L.choice = ("q8", 32) if L.kc < 16 else ("q4", 32)
        L.q = L.quantize(*L.choice)
    quantizer.write_model(m, layers, dst)
    return sum(L.bytes(*L.choice) for L in layers), sum(L.n * L.k * 4 for L in layers)


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
    except (OSError, StopIteration):
        return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", default=os.path.join(ROOT, "build", "lowconv"))
    ap.add_argument("--out", default="/tmp/lowconv-q4-load")
    ap.add_argument("--json")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--label", default="q4_file", help="key of the saved file's result (e.g. q4_file_before)")
    a = ap.parse_args()
    import onnx
    os.makedirs(a.out, exist_ok=True)
    src, dst = os.path.join(a.out, "iresnet34.onnx"), os.path.join(a.out, "iresnet34_q4.onnx")
    if not os.path.exists(src):
        onnx.save(iresnet34.build(112), src)
    if not os.path.exists(dst):
        qb, fb = write_q4(src, dst)
        print("wrote %s: weights %d B of %d B fp32 (%.3fx)" % (dst, qb, fb, qb / fb))
    x = os.path.join(a.out, "face.npy")
    np.save(x, np.random.default_rng(7).standard_normal((1, 3, 112, 112)).astype(np.float32))
    od = os.path.join(a.out, "o")
    files = (("fp32", src), (a.label, dst))
    # interleaved rounds, medians: on a shared machine a burst of load would otherwise hit one file only
    walls = {label: [] for label, _ in files}
    rss = {label: [] for label, _ in files}
    cpu = {label: [] for label, _ in files}
    for _ in range(a.runs):
        for label, model in files:
            w, r, c = run_process([a.lowconv, "run", model, "--threads", "1", "--input", "input=" + x, "--output-dir",
                                   od], cpu=True)
            walls[label].append(w)
            cpu[label].append(c)
            rss[label].append(r)
    runs = {}
    for label, _ in files:
        runs[label] = {"wall_s": float(np.median(walls[label])), "wall_min_s": min(walls[label]),
                       "walls_s": walls[label], "cpu_s": float(np.median(cpu[label])), "peak_rss_mb": float(np.median(rss[label])),
                       "peak_rss_max_mb": max(rss[label])}
        print("%-14s wall median %.2f s (min %.2f), CPU (user + sys) median %.2f s, peak RSS median %.1f MB (max "
              "%.1f)" % (label, runs[label]["wall_s"], runs[label]["wall_min_s"], runs[label]["cpu_s"], runs[label]["peak_rss_mb"],
            runs[label]["peak_rss_max_mb"]), flush=True)
    ratio = runs[a.label]["wall_s"] / runs["fp32"]["wall_s"]
    print("saved q4 file / fp32 file, load to first result (medians): wall %.2fx (target <= 0.3x), CPU %.2fx; peak "
          "RSS %.1f MB (target <= 40 MB)" % (ratio, runs[a.label]["cpu_s"] / runs["fp32"]["cpu_s"],
                                             runs[a.label]["peak_rss_max_mb"]))
    if a.json:
        meta = {"machine": cpu_name() + ", %d CPUs" % os.cpu_count(),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": "bench/q4_load.py (lowconv run --threads 1, %d interleaved rounds, medians)" % a.runs}
        old = {}
        if os.path.exists(a.json):
            with open(a.json) as f:
                old = json.load(f).get("lowconv_run", {})
        old.update(runs)
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "lowconv_run": old, "load_to_first_result_ratio": ratio}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
