#!/usr/bin/env python3
"""The quantizer's targets, measured: each model is quantized with the default policy
(lowconv.quantize: q4, block 32, target cosine 0.995 on generated calibration inputs), then
compared with fp32 on held-out generated inputs (other seeds): output cosine (lowconv on the
saved file vs onnxruntime fp32, and onnxruntime on the saved file), rec argmax agreement, weight
bytes. Agreement with onnxruntime on the saved file (`lowconv_vs_ort`, the semantic check: the file's
DequantizeLinear -> Conv / MatMul as written) uses onnxruntime at ORT_ENABLE_BASIC; its default
ORT_ENABLE_ALL session is reported apart (`lowconv_vs_ort_all`, `cos_ort_all`): from level EXTENDED
onnxruntime fuses DequantizeLinear -> MatMul into MatMulNBits with accuracy_level 4
(session.qdq_matmulnbits_accuracy_level), which quantizes the MatMul's activations to int8 as it
runs, so it no longer computes the dequantized graph (docs/quantization.md). That graph itself:
`lowconv_vs_dequantized` / `ort_all_vs_dequantized`, against onnxruntime with no optimization on an fp32
copy of the file whose DequantizeLinear outputs were computed here (OUT/NAME_q4_dequantized.onnx).
For IResNet-34-112 also `lowconv run` of the saved file: peak RSS of the process and
load-to-first-result time against `lowconv run` of the fp32 ONNX.
Usage: bench/quant_bench.py --lowconv build/lowconv --ocr-dir DIR [--out DIR] [--json OUT.json]
       [--models det,cls,rec,iresnet34] [--heldout N] [--seed S] [--reuse]"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
os.environ.setdefault("LOWCONV_LIBRARY", os.path.join(ROOT, "build", "liblowconv.so"))
import lowconv  # noqa: E402
from lowconv import calib  # noqa: E402

OCR = (("det", "ch_PP-OCRv4_det_infer.onnx", "scene", [1, 3, 320, 320]),
       ("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "text", [1, 3, 48, 192]),
       ("rec", "ch_PP-OCRv4_rec_infer.onnx", "text", [1, 3, 48, 320]))


def cos(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def run_process(cmd, cpu=False):
    """Wall seconds and peak RSS (MB) of one `lowconv` process, measured by /usr/bin/time: a child
    forked from this (large) Python process would count the fork's pages in its own maxrss. With
    cpu=True also its user + system CPU seconds (steadier than wall time on a loaded machine)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr[-500:]))
    wall, kb, user, sys_s = p.stderr.strip().splitlines()[-1].split()
    if cpu:
        return float(wall), int(kb) / 1024.0, float(user) + float(sys_s)
    return float(wall), int(kb) / 1024.0


def dequantized_copy(q, out):
    """A plain fp32 copy of the saved file: every DequantizeLinear of constants replaced by its output,
    computed here in float64 ((code - zero point) * scale, per tensor, per axis or in blocks along the
    axis) and stored as an fp32 initializer; the reference the saved file's semantics are checked on."""
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(q)
    init = {t.name: t for t in m.graph.initializer}
    keep, new = [], []
    for nd in m.graph.node:
        if nd.op_type != "DequantizeLinear" or not all(i in init for i in nd.input if i):
            keep.append(nd)
            continue
        c = numpy_helper.to_array(init[nd.input[0]]).astype(np.float64)
        s = numpy_helper.to_array(init[nd.input[1]]).astype(np.float64)
        z = (numpy_helper.to_array(init[nd.input[2]]).astype(np.float64) if len(nd.input) > 2 and nd.input[2]
             else np.zeros_like(s))
        at = {x.name: helper.get_attribute_value(x) for x in nd.attribute}
        axis, bs = at.get("axis", 1) % c.ndim, at.get("block_size", 0)
        if s.size == 1 and bs == 0:
            w = (c - z.reshape(())) * s.reshape(())
        elif bs == 0:
            sh = [1] * c.ndim
            sh[axis] = -1
            w = (c - z.reshape(sh)) * s.reshape(sh)
        else:
            cut = tuple(slice(0, c.shape[axis]) if d == axis else slice(None) for d in range(c.ndim))
            w = (c - np.repeat(z, bs, axis=axis)[cut]) * np.repeat(s, bs, axis=axis)[cut]
        new.append(numpy_helper.from_array(w.astype(np.float32), nd.output[0]))
    used = {i for nd in keep for i in nd.input}
    kept = [t for t in m.graph.initializer if t.name in used]
    del m.graph.node[:], m.graph.initializer[:]
    m.graph.node.extend(keep)
    m.graph.initializer.extend(kept + new)
    if os.path.exists(out + ".data"):
        os.remove(out + ".data")
    onnx.save(m, out, save_as_external_data=True, location=os.path.basename(out) + ".data")
    return out


def measure(name, fp32, q, kind, shape, n=8, seed=1000):
    """Held-out cosines; for rec the per-position argmax agreement over every position (blank-
    dominated ones included: what CTC decoding reads), and over the positions where fp32 or the
    quantized model picks a character (class 0, the CTC blank, on neither side)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    a, c = ort.InferenceSession(fp32, so), ort.InferenceSession(q, so)  # ORT_ENABLE_ALL, the default
    sb = ort.SessionOptions()
    sb.log_severity_level = 3
    sb.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # no MatMulNBits fusion
    b = ort.InferenceSession(q, sb)
    sd = ort.SessionOptions()
    sd.log_severity_level = 3
    sd.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    d = ort.InferenceSession(dequantized_copy(q, q[:-5] + "_dequantized.onnx"), sd)
    m = lowconv.Model(q, threads=2, shapes={a.get_inputs()[0].name: shape})
    iname = a.get_inputs()[0].name
    res = {"cos_lowconv": [], "cos_ort": [], "lowconv_vs_ort": [], "cos_ort_all": [], "lowconv_vs_ort_all": [],
           "lowconv_vs_dequantized": [], "ort_all_vs_dequantized": [], "argmax": []}
    nonblank = [0, 0]
    for x in calib.generate(kind, shape, n, seed=seed):
        r = a.run(None, {iname: x})[0]
        g = b.run(None, {iname: x})[0]
        h = c.run(None, {iname: x})[0]
        lc = list(m.run({iname: x}).values())[0]
        res["cos_lowconv"].append(cos(r, lc))
        res["cos_ort"].append(cos(r, g))
        res["lowconv_vs_ort"].append(cos(g, lc))
        res["cos_ort_all"].append(cos(r, h))
        res["lowconv_vs_ort_all"].append(cos(h, lc))
        dq = d.run(None, {iname: x})[0]
        res["lowconv_vs_dequantized"].append(cos(dq, lc))
        res["ort_all_vs_dequantized"].append(cos(dq, h))
        if name == "rec":
            ra, la = r.argmax(-1), lc.argmax(-1)
            res["argmax"].append(float((ra == la).mean()))
            nb = (ra != 0) | (la != 0)
            nonblank[0] += int((ra == la)[nb].sum())
            nonblank[1] += int(nb.sum())
    out = {k: (float(np.mean(v)), float(np.min(v))) for k, v in res.items() if v}
    if nonblank[1]:
        out["argmax_nonblank"] = nonblank[0] / nonblank[1]
        out["positions"] = n * int(r.shape[-2])
    out["memory"] = m.memory()
    return out


def reuse_report(dst):
    with open(dst + ".report.json") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", default=os.path.join(ROOT, "build", "lowconv"))
    ap.add_argument("--ocr-dir", help="folder with the PP-OCR .onnx files (tests/py_test_rapidocr.py fetches them)")
    ap.add_argument("--out", default="/tmp/lowconv-quant-bench")
    ap.add_argument("--models", default="det,cls,rec,iresnet34")
    ap.add_argument("--json")
    ap.add_argument("--heldout", type=int, default=8, help="held-out generated inputs per model")
    ap.add_argument("--seed", type=int, default=1000, help="seed of the held-out inputs (calibration uses 0)")
    ap.add_argument("--reuse", action="store_true", help="measure the files already in --out, no quantizing")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    want = a.models.split(",")
    report = {}
    for name, fname, kind, shape in OCR:
        if name not in want or not a.ocr_dir:
            continue
        src, dst = os.path.join(a.ocr_dir, fname), os.path.join(a.out, name + "_q4.onnx")
        t = time.time()
        rep = reuse_report(dst) if a.reuse else lowconv.quantize(src, dst, calib_kind=kind, calib_shape=shape,
                                                                  log=lambda s: print(s, flush=True))
        if not a.reuse:
            with open(dst + ".report.json", "w") as f:
                json.dump(rep, f)
        r = measure(name, src, dst, kind, shape, a.heldout, a.seed)
        r.update(argmax_calib=rep.get("argmax_agreement"), quantize_s=time.time() - t, weight_ratio=rep["weight_bytes"] / rep["fp32_weight_bytes"],
                 calib_cosine=rep["cosine_mean"], formats={f: sum(1 for x in rep["layers"] if x["format"] == f)
                                                           for f in ("q4", "q8", "q8+q4", "f32")},
                 row_split=[dict(x["split"], layer=x["layer"], bytes=x["bytes"]) for x in rep["layers"] if "split" in x])
        report[name] = r
        print(name, json.dumps(r), flush=True)
    if "iresnet34" in want:
        import iresnet34
        import onnx
        src, dst = os.path.join(a.out, "iresnet34.onnx"), os.path.join(a.out, "iresnet34_q4.onnx")
        t = time.time()
        if a.reuse:  # the files of an earlier run; its report only when that run saved one
            rep = reuse_report(dst) if os.path.exists(dst + ".report.json") else None
        else:
            onnx.save(iresnet34.build(112), src)
            rep = lowconv.quantize(src, dst, calib_kind="scene", calib_shape=[1, 3, 112, 112], samples=4,
                                   log=lambda s: print(s, flush=True))
            with open(dst + ".report.json", "w") as f:
                json.dump(rep, f)
        r = measure("iresnet34", src, dst, "scene", [1, 3, 112, 112])
        if rep:
            r.update(quantize_s=time.time() - t, weight_ratio=rep["weight_bytes"] / rep["fp32_weight_bytes"],
                     calib_cosine=rep["cosine_mean"])
        x = os.path.join(a.out, "face.npy")
        np.save(x, calib.generate("scene", [1, 3, 112, 112], 1, seed=7)[0])
        od = os.path.join(a.out, "o")
        runs = {}
        for label, model, extra in (("fp32", src, []), ("q4_file", dst, []), ("fp32_file_weights_q4", src,
                                                                             ["--weights", "q4", "--block", "32"])):
            best = None
            for _ in range(3):
                w, rss = run_process([a.lowconv, "run", model, "--input", "input=" + x, "--output-dir", od] + extra)
                best = (w, rss) if best is None or w < best[0] else best
            runs[label] = {"wall_s": best[0], "peak_rss_mb": best[1]}
        r["lowconv_run"] = runs
        r["load_to_first_result_ratio"] = runs["q4_file"]["wall_s"] / runs["fp32"]["wall_s"]
        report["iresnet34"] = r
        print("iresnet34", json.dumps(r), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
