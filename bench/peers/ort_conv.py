#!/usr/bin/env python3
"""Peer yardstick: one Conv node in onnxruntime (CPU, NCHW f32).

usage: ort_conv.py DESC [--threads T] [--repeat N] [--warmup N] [--warmup-ms MS]   -> one JSON line
DESC is a benchdnn conv descriptor with the meanings of `lowconv conv --help`
(parse_desc below mirrors tools/benchdnn.c; tests/py_test_cli.py checks they agree).
The session runs with intra_op_num_threads=T, inter_op_num_threads=1, sequential execution
and all graph optimizations (ORT's default CPU route, including its NCHWc transform).
"""
import argparse
import json
import math
import re
import statistics
import sys
import time

MAX_VALUE = 1000000000
KEYS = ["g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"]


class DescError(ValueError):
    pass


def _resolve(i, k, o, s, p, d, c):
    if i <= 0:
        raise DescError(f"i{c} is required and must be > 0")
    if k <= 0:
        raise DescError(f"k{c} is required and must be > 0")
    ext = (k - 1) * (d + 1) + 1
    if o == 0:
        p = max(p, 0)
        if i + 2 * p < ext:
            raise DescError(f"kernel extent {ext} exceeds padded input {i + 2 * p} in {c}")
        return i, k, (i + 2 * p - ext) // s + 1, s, p, d, p
    total = (o - 1) * s - i + ext
    if p < 0:
        p = total // 2 if total >= 0 else -((-total) // 2)  # C truncation, as benchdnn
    if p < 0:
        raise DescError(f"o{c}{o} is too small")
    pend = max(total - p, 0)
    span = i + p + pend - ext
    got = span // s + 1 if span >= 0 else 0
    if got != o:
        raise DescError(f"o{c}{o} does not match (gives o{c}{got})")
    return i, k, o, s, p, d, pend


def parse_desc(text):
    """benchdnn conv descriptor -> dict with resolved sizes and pads (pt, pl, pb, pr)."""
    if not text:
        raise DescError("empty descriptor")
    v, given, name, pos = {}, set(), "", 0
    while pos < len(text):
        ch = text[pos]
        if ch == "_":
            pos += 1
            continue
        if ch == "n":
            if name:
                raise DescError("name given twice")
            if text[pos + 1:pos + 2] == '"':
                end = text.find('"', pos + 2)
                if end < 0:
                    raise DescError("unterminated quoted name")
                name, pos = text[pos + 2:end], end + 1
            else:
                name, pos = text[pos + 1:], len(text)
            continue
        if text[pos + 1:pos + 2] == "d" and ch in "iokspd":
            raise DescError("3-D descriptors are not supported")
        key = next((k for k in KEYS if text.startswith(k, pos)), None)
        if key is None:
            raise DescError(f"unexpected '{text[pos:pos + 8]}'")
        m = re.match(r"[0-9]+", text[pos + len(key):])
        if not m:
            raise DescError(f"{key} needs a non-negative number")
        if key in given:
            raise DescError(f"{key} given twice")
        val = int(m.group(0))
        if val > MAX_VALUE:
            raise DescError(f"{key} value too large")
        v[key], pos = val, pos + len(key) + len(m.group(0))
        given.add(key)
    for k in ["g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw"]:
        if k in given and v[k] == 0:
            raise DescError(f"{k} must be > 0")
    if "ic" not in given or "oc" not in given:
        raise DescError("ic and oc are required")
    g, mb, ic, oc = v.get("g", 1), v.get("mb", 1), v["ic"], v["oc"]
    if ic % g or oc % g:
        raise DescError("ic and oc must be multiples of g")
    h = [v.get("ih", 0), v.get("kh", 0), v.get("oh", 0), v.get("sh", 1), v.get("ph", -1), v.get("dh", 0)]
    w = [v.get("iw", 0), v.get("kw", 0), v.get("ow", 0), v.get("sw", 1), v.get("pw", -1), v.get("dw", 0)]
    has = lambda x: bool(x[0] or x[1] or x[2] or x[5] or x[3] != 1 or x[4] >= 1)
    has_h, has_w = has(h), has(w)
    if not has_h and not has_w:
        raise DescError("no spatial size: give at least ih and kh")
    if has_h and has_w:
        w[0] = w[0] or h[0]
        w[1] = w[1] or h[1]
    rh = _resolve(*h, "h") if has_h else (1, 1, 1, 1, 0, 0, 0)
    rw = _resolve(*w, "w") if has_w else rh
    return dict(name=name, g=g, mb=mb, ic=ic, oc=oc, ih=rh[0], kh=rh[1], oh=rh[2], sh=rh[3], pt=rh[4], dh=rh[5],
                pb=rh[6], iw=rw[0], kw=rw[1], ow=rw[2], sw=rw[3], pl=rw[4], dw=rw[5], pr=rw[6])


def build_model(p):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    rng = np.random.default_rng(12345)
    w = rng.uniform(-1, 1, (p["oc"], p["ic"] // p["g"], p["kh"], p["kw"])).astype(np.float32)
    node = helper.make_node("Conv", ["X", "W"], ["Y"], kernel_shape=[p["kh"], p["kw"]],
                            strides=[p["sh"], p["sw"]], dilations=[p["dh"] + 1, p["dw"] + 1],
                            pads=[p["pt"], p["pl"], p["pb"], p["pr"]], group=p["g"])
    graph = helper.make_graph(
        [node], "conv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [p["mb"], p["ic"], p["ih"], p["iw"]])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [p["mb"], p["oc"], p["oh"], p["ow"]])],
        [onnx.numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("desc")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=0, help="timed runs (default: ~0.3 s, at least 3)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--warmup-ms", type=float, default=0.0, help="then untimed runs until MS ms have passed")
    a = ap.parse_args()
    try:
        p = parse_desc(a.desc)
    except DescError as e:
        print(f"ort_conv.py: invalid descriptor '{a.desc}': {e}", file=sys.stderr)
        return 2
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(build_model(p), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).uniform(-1, 1, (p["mb"], p["ic"], p["ih"], p["iw"])).astype(np.float32)
    feed = {"X": x}
    tw = time.perf_counter()
    for _ in range(a.warmup):
        sess.run(None, feed)
    while (time.perf_counter() - tw) * 1e3 < a.warmup_ms:
        sess.run(None, feed)
    t0 = time.perf_counter()
    sess.run(None, feed)
    times = [time.perf_counter() - t0]
    n = a.repeat
    if n <= 0:
        n = min(10000, max(1, math.ceil(0.3 / max(times[0], 1e-7))))
        if n < 3 and times[0] < 1.0:
            n = 3
    for _ in range(n - 1):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"desc": a.desc, "threads": a.threads, "median_ms": statistics.median(times) * 1e3,
                      "min_ms": min(times) * 1e3}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
