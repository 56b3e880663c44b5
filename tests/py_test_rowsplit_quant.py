#!/usr/bin/env python3
"""The quantizer's row split of a class-score layer (python/lowconv/rowsplit.py): on small
synthetic recognizers (MatMul + Add bias + Softmax, and Gemm with C + Softmax), the kept classes'
rows q8 and the rest q4 as two DequantizeLinear branches, Concat and Gather(inverse permutation):
the file is valid ONNX that onnxruntime and lowconv agree on, the class order is the original
one (bitwise the model with the split's dequantized weights), each part holds its own format,
`lowconv info` counts the codes, the quantizer applies the split where it saves bytes (and not on
a small classifier), and bad inputs (a wrong-length or out-of-range inverse permutation, a row
order that is not a permutation) are clear errors.
Usage: py_test_rowsplit_quant.py --lowconv CLI --build-dir DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from pyvenv import build_args, require, sanitizer_build  # noqa: E402

if not require("numpy", "onnx", "onnxruntime"):
    print("numpy/onnx/onnxruntime not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402
from onnxcase import check, summary  # noqa: E402


def rec_net(seed=0, c=8, t=24, k=64, classes=1500, hot=60, gemm=False):
    """x [1, c, 1, t] -> Conv 3x3 + Relu -> Conv 1x1 -> [1, t, k] -> MatMul [k, classes] + bias
    -> Softmax: `hot` classes compete, the others sit far below them (bias -30) like the
    characters a recognizer never sees. gemm: the positions as rows, Gemm(transB=1, C = bias)."""
    r = np.random.default_rng(seed)
    f = lambda *s: (r.standard_normal(s) * (2.0 / np.prod(s[1:])) ** 0.5).astype(np.float32)
    bias = np.full(classes, -30.0, np.float32)
    bias[r.choice(classes, hot, replace=False)] = 0.0
    wm = f(k, classes) * 3.0
    inits = [nh.from_array(f(32, c, 3, 3), "w1"), nh.from_array(f(k, 32, 1, 1), "w2"),
             nh.from_array(np.array([1, k, t], np.int64), "shp"), nh.from_array(np.array([t, k], np.int64), "shp2")]
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], name="pw"),
             h.make_node("Reshape", ["c2", "shp"], ["s"]),
             h.make_node("Transpose", ["s"], ["st"], perm=[0, 2, 1])]
    if gemm:
        inits += [nh.from_array(np.ascontiguousarray(wm.T), "wm"), nh.from_array(bias, "bm")]
        nodes += [h.make_node("Reshape", ["st", "shp2"], ["s2"]),
                  h.make_node("Gemm", ["s2", "wm", "bm"], ["logits"], transB=1, name="fc")]
        out_shape = [t, classes]
    else:
        inits += [nh.from_array(wm, "wm"), nh.from_array(bias, "bm")]
        nodes += [h.make_node("MatMul", ["st", "wm"], ["mm"], name="fc"),
                  h.make_node("Add", ["mm", "bm"], ["logits"])]
        out_shape = [1, t, classes]
    nodes.append(h.make_node("Softmax", ["logits"], ["probs"], axis=-1))
    g = h.make_graph(nodes, "rec", [h.make_tensor_value_info("x", T.FLOAT, [1, c, 1, t])],
                     [h.make_tensor_value_info("probs", T.FLOAT, out_shape)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def ort(model, x, plain=False):
    """onnxruntime's output; plain: without graph optimizations (its DequantizeLinear + MatMul
    fusion runs blocked int4 weights as MatMulNBits, which rounds differently)."""
    import onnxruntime as rt
    so = rt.SessionOptions()
    so.log_severity_level = 3
    if plain:
        so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    src = model if isinstance(model, str) else model.SerializeToString()
    return rt.InferenceSession(src, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def cos(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def with_weights(model, w):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.name in w:
            t.CopyFrom(nh.from_array(np.ascontiguousarray(w[t.name], dtype=np.float32), t.name))
    return m


def graph_case(tmp, gemm, xs):
    """The split written by hand (choices fixed, round to nearest): the graph, the formats, ORT
    against lowconv, the class order."""
    import lowconv
    from lowconv import quantizer as Q, rowsplit as S
    tag = "gemm" if gemm else "matmul"
    m = rec_net(gemm=gemm)
    layers = Q.find_layers(m)
    L = S.class_layer(m, layers, Q.class_output(m))
    check(L is not None and L.name == "wm" and L.n == 1500 and L.k == 64, "%s: the class layer is found" % tag)
    if L is None:
        return
    for M in layers:
        M.choice = ("q8", 0) if M is L else ("f32", 0)
    L.q = L.quantize("q8", 0)
    keep = np.zeros(L.n, bool)
    keep[np.random.default_rng(1).choice(L.n, 100, replace=False)] = True
    nb = S.split_bytes(L, 100, ("q8", 0), ("q4", 32))
    deq = S.apply(L, keep, nb, ("q4", 32))
    check(nb == 100 * (64 + 4) + 1400 * (32 + 8) + 4 * 1500 and nb < L.bytes("q8", 0) - S.MIN_SAVED,
          "%s: split bytes %d (q8 %d)" % (tag, nb, L.bytes("q8", 0)))
    mat = deq.T if L.trans else deq
    q8m = (L.q[2].T if L.trans else L.q[2])
    q4m = L.quantize("q4", 32)[2]
    q4m = q4m.T if L.trans else q4m
    check(np.array_equal(mat[keep], q8m[keep]) and np.array_equal(mat[~keep], q4m[~keep]),
          "%s: kept rows are the q8 rounding, the others the q4 one" % tag)
    out = os.path.join(tmp, tag, "m_split.onnx")
    Q.write_model(m, layers, out)
    f = onnx.load(out)
    ops = [n.op_type for n in f.graph.node]
    dq = [n for n in f.graph.node if n.op_type == "DequantizeLinear"]
    inits = {t.name: t for t in f.graph.initializer}
    dtypes = sorted(inits[n.input[0]].data_type for n in dq)
    check(ops.count("DequantizeLinear") == 2 and "Concat" in ops and "Gather" in ops and
          dtypes == sorted([T.INT8, T.UINT4]), "%s: two DQ branches (int8, uint4), Concat, Gather: %s" % (tag, ops))
    check(f.opset_import[0].version == 21 and "wm" not in inits, "%s: opset 21, the fp32 weight is gone" % tag)
    ref = with_weights(m, {"wm": deq})
    lc = lowconv.Model(out)
    for i, x in enumerate(xs):
        a, b, y = ort(ref, x, True), ort(out, x, True), lc.run({"x": x})["probs"]
        check(np.allclose(a, b, rtol=1e-5, atol=1e-7), "%s %d: ORT on the file == the model with the split's "
              "weights (class order kept), max err %.2e" % (tag, i, float(np.abs(a - b).max())))
        check(cos(y, b) >= 0.999 and (y.argmax(-1) == b.argmax(-1)).mean() >= 0.95,
              "%s %d: lowconv vs ORT on the file: cosine %.6f" % (tag, i, cos(y, b)))
        check(cos(y, ort(out, x)) >= 0.999, "%s %d: lowconv vs ORT (optimized) cosine %.6f" % (tag, i,
                                                                                         cos(y, ort(out, x))))
    return out, L


def bad_files(tmp, out, xs):
    """The saved file with a broken class order: an index out of range is refused with a message;
    one index short is still a valid graph (Gather makes one class fewer): refused where the bias
    Add cannot broadcast, else run as onnxruntime runs it (the same shape), never a crash."""
    import lowconv
    f = onnx.load(out)
    for what, fix in (("wrong length", lambda a: a[:-1]), ("out of range", lambda a: np.where(a == 0, a.size, a))):
        g = onnx.ModelProto()
        g.CopyFrom(f)
        for t in g.graph.initializer:
            if t.name.endswith("_class_order"):
                t.CopyFrom(nh.from_array(fix(nh.to_array(t)).astype(np.int32), t.name))
        p = os.path.join(os.path.dirname(out), "bad_%s.onnx" % what.replace(" ", "_"))
        onnx.save(g, p)
        try:
            y = lowconv.Model(p).run({"x": xs[0]})["probs"]
            try:
                shape = ort(p, xs[0], True).shape
            except Exception as e:  # noqa: BLE001 (onnxruntime's own error types)
                shape = "error: %s" % str(e)[:80]
            check(what == "wrong length" and y.shape == shape, "class order %s: lowconv %s, onnxruntime %s" % (
                what, y.shape, shape))
        except lowconv.Error as e:
            check("Gather" in str(e) or "Add" in str(e) or "range" in str(e) or "broadcast" in str(e),
                  "class order %s: %s" % (what, e))


def main():
    a = build_args()
    os.environ["LOWCONV_LIBRARY"] = os.path.join(os.path.abspath(a.build_dir), "liblowconv.so")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import lowconv
    from lowconv import rowsplit as S
    tmp = tempfile.mkdtemp(prefix="lc_rowsplit_")
    r = np.random.default_rng(7)
    xs = [r.standard_normal((1, 8, 1, 24)).astype(np.float32) for _ in range(3)]
    try:
        res = graph_case(tmp, False, xs)
        graph_case(tmp, True, xs)
        if res:
            out, L = res
            bad_files(tmp, out, xs)
            # lowconv info: the codes of both parts and the class order are what it counts
            p = subprocess.run([a.lowconv, "info", out], capture_output=True, text=True, timeout=120)
            want = 100 * 64 + 1400 * 32 + 4 * 1500  # int8 rows, uint4 rows, int32 order (+ small tensors)
            wl = [ln for ln in p.stdout.splitlines() if ln.startswith("weights ")]
            mb = float(wl[0].split()[1]) * 1e6 if wl else -1
            check(p.returncode == 0 and want <= mb <= want + 30000,
                  "lowconv info counts the split's bytes: %s (codes + order %d)" % (wl, want))
        # bad input to the writer: a row order that is not a permutation
        for perm in ([0, 1, 1], [0, 2, 3], []):
            try:
                S.inverse(perm)
                check(False, "inverse(%s) accepted" % perm)
            except ValueError as e:
                check("permutation" in str(e), "inverse(%s): %s" % (perm, e))
        # the quantizer: the split where it saves bytes, and kept only when the checks pass
        src = os.path.join(tmp, "rec.onnx")
        onnx.save(rec_net(hot=20), src)
        calib = os.path.join(tmp, "calib.npy")
        np.save(calib, np.random.default_rng(3).standard_normal((8, 8, 1, 24)).astype(np.float32))
        lines = []
        q = os.path.join(tmp, "q", "rec_q4.onnx")
        rep = lowconv.quantize(src, q, calib=[calib], log=lines.append)
        row = [x for x in rep["layers"] if x["weight"] == "wm"][0]
        sl = [ln for ln in lines if ln.startswith("row split")]
        check(len(sl) == 1, "the quantizer tried the split once: %s" % sl)
        if row["format"] == "q8+q4":
            sp = row["split"]
            check(sp["kept_rows"] + sp["rest_rows"] == 1500 and sp["kept_rows"] >= 20 and "kept" in sl[0],
                  "split chosen: %s" % sp)
            check(row["bytes"] == S.split_bytes(type("L", (), {"n": 1500, "k": 64, "kc": 64,
                                                               "eff_block": staticmethod(lambda b: b)})(),
                                                sp["kept_rows"], sp["kept_format"], sp["rest_format"]),
                  "reported bytes are the split's: %d" % row["bytes"])
            ys = [(ort(src, x), ort(q, x), lowconv.Model(q).run({"x": x})["probs"]) for x in xs]
            check(all(cos(y, b) >= 0.999 for _, b, y in ys), "quantizer's file: lowconv vs ORT cosine >= 0.999")
            check(all((r0.argmax(-1) == y.argmax(-1)).mean() >= 0.9 for r0, _, y in ys),
                  "quantizer's file keeps the argmax of the fp32 model")
        else:
            check(False, "the quantizer did not split the classifier: %s; %s" % (row, sl))
        # a small classifier is not split: 40 classes save less than MIN_SAVED
        small = rec_net(classes=40, hot=20)
        from lowconv import quantizer as Q
        Ls = Q.find_layers(small)
        Lc = S.class_layer(small, Ls, Q.class_output(small))
        Lc.choice = ("q8", 0)
        check(S.plan(Lc, np.zeros(40) + np.arange(40), [], ("q4", 32)) is None, "a 40-class layer is not split")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    if sanitizer_build(build_args().build_dir):  # this interpreter has no ASan runtime to load the library with
        print("sanitizer build: 0 passed, 0 failed, 1 skipped")
        sys.exit(0)
    sys.exit(main())
