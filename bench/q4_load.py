#!/usr/bin/env python3
"""Load-to-first-result and peak RSS of `lowconv run` on a saved q4 IResNet-34-112 against the fp32
ONNX (issue #13's targets: peak RSS <= 40 MB, time <= 0.3x the fp32 file's), without the calibrated
search of bench/quant_bench.py (about 25 minutes on 2 cores): every layer is rounded to nearest at
q4 (block 32) except those with fewer than 16 input channels per tap (q8), and written by the
quantizer's own writer, so the file's layout is exactly what `lowconv quantize` writes.
Each file: `lowconv run` 3 times in a fresh process under /usr/bin/time, best wall time.
Usage: bench/q4_load.py [--lowconv build/lowconv] [--out DIR] [--json OUT.json] [--runs 3]"""
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
    ap.add_argument("--runs", type=int, default=3)
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
    runs = {}
    for label, model in (("fp32", src), (a.label, dst)):
        best = None
        for _ in range(a.runs):
            w, rss = run_process([a.lowconv, "run", model, "--threads", "1", "--input", "input=" + x,
                                  "--output-dir", od])
            best = (w, rss) if best is None or w < best[0] else best
        runs[label] = {"wall_s": best[0], "peak_rss_mb": best[1]}
        print("%-14s wall %.2f s, peak RSS %.1f MB" % (label, best[0], best[1]), flush=True)
    ratio = runs[a.label]["wall_s"] / runs["fp32"]["wall_s"]
    print("saved q4 file / fp32 file, load to first result: %.2fx (target <= 0.3x); peak RSS %.1f MB (target "
          "<= 40 MB)" % (ratio, runs[a.label]["peak_rss_mb"]))
    if a.json:
        meta = {"machine": cpu_name() + ", %d CPUs" % os.cpu_count(),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": "bench/q4_load.py (lowconv run --threads 1, best of %d)" % a.runs}
        old = {}
        if os.path.exists(a.json):
            with open(a.json) as f:
                old = json.load(f).get("lowconv_run", {})
        old.update(runs)
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "lowconv_run": old, "load_to_first_result_ratio": ratio}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
