#!/usr/bin/env python3
"""Summary of a bench/gpu/run_h200.sh results folder: per suite and batch, lowconv OpenCL against
cuDNN layer by layer (median over rounds), geomean time ratio (batch 1) and throughput ratio
(batch 32), q8/q4 against f32, GEMV bandwidth, cold and warm start."""
import glob
import json
import math
import os
import statistics
import sys


def load(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def by_desc(paths, key):
    acc = {}
    for p in paths:
        for r in load(p):
            v = r.get(key)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            acc.setdefault(r["desc"], []).append((v, r))
    return {d: (statistics.median(v for v, _ in xs), xs[0][1]) for d, xs in acc.items()}


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(d):
    devices = open(os.path.join(d, "devices.txt")).read() if os.path.exists(os.path.join(d, "devices.txt")) else ""
    print(devices.strip())
    for suite in ("resnet34-112", "ocr-det"):
        for mb in (1, 32):
            lc = by_desc(glob.glob(f"{d}/{suite}_b{mb}_f32_r*.jsonl"), "median_ms")
            cu = by_desc(glob.glob(f"{d}/{suite}_b{mb}_cudnn_r*.jsonl"), "device_ms")
            if not lc or not cu:
                continue
            print(f"\n{suite} batch {mb}: lowconv OpenCL fp32 vs cuDNN fp32 (TF32 off), ms per layer")
            print("(dev: lowconv's kernels from profiling events; cuDNN's best of one call between CUDA events, "
                  "back-to-back calls / n and CUDA-graph replay / n; wall: back-to-back runs / n, both)")
            print(f"{'layer':24} {'lc dev':>8} {'cu dev':>8} {'ratio':>6} {'lc wall':>8} {'cu wall':>8} {'ratio':>6}"
                  f" {'TFLOP/s':>8}  kernel")
            rd, rw = [], []
            for desc, (ms, r) in lc.items():
                if desc not in cu:
                    continue
                c = cu[desc][1]
                cdev = min(c["device_ms"], c["wall_ms"], c.get("graph_ms", 1e9))
                rd.append(ms / cdev)
                rw.append(r["wall_ms"] / c["wall_ms"])
                print(f"{(r.get('name') or desc)[:24]:24} {ms:8.4f} {cdev:8.4f} {ms / cdev:6.2f} {r['wall_ms']:8.4f} "
                      f"{c['wall_ms']:8.4f} {rw[-1]:6.2f} {r.get('gflops', 0) / 1e3:8.2f}  {r.get('variant', '')}")
            print(f"geomean lowconv/cuDNN time: device {geomean(rd):.3f}, wall {geomean(rw):.3f} "
                  f"(throughput {1 / geomean(rw):.3f}x cuDNN) over {len(rd)} layers; worst layer {max(rw):.2f}")
            ratios = rd
            winos = sorted(os.path.basename(p)[len(f"{suite}_b{mb}_"):-6]
                           for p in glob.glob(f"{d}/{suite}_b{mb}_wino_*.jsonl"))
            for w in ["q8", "q4"] + winos:
                q = by_desc(glob.glob(f"{d}/{suite}_b{mb}_{w}.jsonl"), "median_ms")
                rr = [q[k][0] / lc[k][0] for k in q if k in lc]
                if rr:
                    what = f"{w} (forced) / tuned f32" if w.startswith("wino") else f"{w} / f32"
                    print(f"  {what} time, geomean: {geomean(rr):.3f} (min {min(rr):.2f}, max {max(rr):.2f}, "
                          f"{len(rr)} layers)")
            won = [r.get("name") or k for k, (_, r) in lc.items() if str(r.get("variant", "")).startswith("wino")]
            print(f"  layers where the tuner chose Winograd: {len(won)} {won}")
    bw = None
    m = [l for l in devices.splitlines() if "read" in l and "GB/s" in l]
    if m:
        try:
            bw = float(m[0].split("read")[1].split("GB/s")[0])
        except ValueError:
            bw = None
    for w in ("q4", "q8", "f32", "q"):
        p = f"{d}/gemv_{w}.jsonl"
        if os.path.exists(p):
            for r in load(p):
                if r.get("error") or not r.get("median_ms"):
                    print(f"GEMV {r.get('cfg', w)}: error {r.get('error')}")
                    continue
                w = r.get("cfg", w)
                ms = r.get("median_ms")
                gbs = r.get("weight_bytes", 0) / (ms * 1e-3) / 1e9 if ms else 0
                print(f"GEMV {w} K=4096 N=14336: {ms:.4f} ms, weights {r.get('weight_bytes')} B -> {gbs:.0f} GB/s"
                      + (f" = {100 * gbs / bw:.0f}% of the measured {bw:.0f} GB/s read" if bw else "")
                      + f", {r.get('variant')}, max_rel_err {r.get('max_rel_err')}")
    for tag in ("cold1", "cold", "warm", "warm2"):
        p = f"{d}/r34_b1_{tag}.jsonl"
        if os.path.exists(p):
            rows = load(p)
            setup = sum(r.get("setup_ms", 0) for r in rows)
            comp = sum(r.get("compile_ms", 0) for r in rows)
            tune = sum(r.get("tune_ms", 0) for r in rows)
            create = sum(r.get("create_ms", 0) for r in rows)
            print(f"resnet34-112 {tag} start: create+prepare of {len(rows)} convs {setup:.0f} ms "
                  f"(create {create:.0f} ms, compile {comp:.0f} ms, tune {tune:.0f} ms)")
    for tag in ("cold", "warm1", "warm2"):
        p = f"{d}/ir34_{tag}.json"
        if os.path.exists(p):
            try:
                j = json.load(open(p))
            except ValueError:
                continue
            print(f"iresnet34-112 b1 {tag}: load to first result {j.get('start_ms')} ms {j.get('start_phases_ms')}, "
                  f"compile {j.get('compile_ms')} ms, tune {j.get('tune_ms')} ms, median {j.get('median_ms')} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out-gpu")
