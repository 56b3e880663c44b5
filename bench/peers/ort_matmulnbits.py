#!/usr/bin/env python3
"""ONNX Runtime MatMulNBits (4-bit, block 32) against `lowconv gemv` on the same shapes.

Runs are interleaved (ORT level 0, ORT level 4, lowconv accurate, lowconv int8 for each shape)
so machine noise hits all of them alike. Both sides cycle through copies of the weights larger
than the L3 cache, so every call reads its weights from DRAM:
  ORT: several sessions (each prepacks its own copy), >= 96 MiB in total;
  lowconv: `lowconv gemv` cycles copies >= 192 MiB itself.
Usage: ort_matmulnbits.py --lowconv build/lowconv [--quick] [--repeat R]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

K = 4096
BLOCK = 32
COPY_BYTES = 96 << 20


def matmulnbits_model(n, k, level, seed):
    rng = np.random.default_rng(seed)
    nblk = k // BLOCK
    packed = rng.integers(0, 256, size=(n, nblk, BLOCK // 2), dtype=np.uint8)
    scales = (rng.random(n * nblk, dtype=np.float32) * 0.01 + 0.001).astype(np.float32)
    node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], domain="com.microsoft",
                            K=k, N=n, bits=4, block_size=BLOCK, accuracy_level=level)
    graph = helper.make_graph(
        [node], "mmnb",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["M", k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", n])],
        initializer=[helper.make_tensor("B", TensorProto.UINT8, packed.shape, packed.tobytes(), raw=True),
                     helper.make_tensor("scales", TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString(), packed.nbytes + scales.nbytes


def ort_time(n, m, level, threads, repeat):
    blob, wbytes = matmulnbits_model(n, K, level, 1)
    copies = max(1, min(16, -(-COPY_BYTES // wbytes)))
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sessions = [ort.InferenceSession(blob, so, providers=["CPUExecutionProvider"]) for _ in range(copies)]
    a = np.random.default_rng(2).standard_normal((m, K)).astype(np.float32)
    for s in sessions:
        s.run(None, {"A": a})  # warm-up: prepacking, allocations
    times = []
    for r in range(repeat):
        s = sessions[r % copies]
        t0 = time.perf_counter()
        s.run(None, {"A": a})
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, wbytes


def lowconv_time(exe, n, m, mode, threads, repeat):
    out = subprocess.run([exe, "gemv", "--k", str(K), "--n", str(n), "--m", str(m), "--weights", "q4",
                          "--block", str(BLOCK), "--mode", mode, "--threads", str(threads), "--repeat",
                          str(repeat), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True, help="path of the lowconv CLI")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="N=11008, M=1 only")
    args = ap.parse_args()
    ns = [11008] if args.quick else [4096, 11008, 14336]
    ms = [1] if args.quick else [1, 8, 64]
    print(f"onnxruntime {ort.__version__}, K={K}, 4-bit, block {BLOCK}; times are medians in ms")
    hdr = (f"{'N':>6} {'M':>3} {'T':>2} | {'ort L0':>8} {'lc acc':>8} {'ratio':>6} | {'ort L4':>8} {'lc int8':>8} "
           f"{'ratio':>6} | {'lc GB/s':>7} {'DRAM':>6} {'frac':>5}")
    print(hdr)
    print("-" * len(hdr))
    for n in ns:
        for m in ms:
            for t in (1, 2):
                rep = max(3, args.repeat // (1 if m == 1 else (2 if m == 8 else 4)))
                o0, _ = ort_time(n, m, 0, t, rep)
                la = lowconv_time(args.lowconv, n, m, "accurate", t, rep)
                o4, _ = ort_time(n, m, 4, t, rep)
                li = lowconv_time(args.lowconv, n, m, "int8", t, rep)
                print(f"{n:>6} {m:>3} {t:>2} | {o0:8.3f} {la['median_ms']:8.3f} {o0 / la['median_ms']:6.2f} | "
                      f"{o4:8.3f} {li['median_ms']:8.3f} {o4 / li['median_ms']:6.2f} | {li['gbps']:7.2f} "
                      f"{li['dram_gbps']:6.2f} {li['bw_fraction']:5.2f}", flush=True)
    print("ratio = ORT ms / lowconv ms (> 1: lowconv faster). GB/s: weight bytes (codes + scales) per call.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
