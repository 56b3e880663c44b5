"""Resize / Upsample against onnxruntime through `lowconv run`, on randomized NCHW shapes (odd
sizes, N > 1): nearest with every coordinate_transformation_mode x nearest_mode, integer scales
1..4 and 8 in H and W (the widening fast path where its tables are o / k) and non-integer ones,
scales and sizes; linear; opset-9 Upsample; opset-19 half_pixel_symmetric; 1 and 2 threads (the
second on planes large enough to go parallel). Nearest is a copy, so it must be bitwise equal;
linear within 1e-5. Where onnxruntime computes coordinates in float (align_corners, non-integer
scales) and so departs from the spec, the ONNX reference evaluator is the yardstick instead.
Usage: py_test_resize.py --lowconv CLI [--build-dir DIR]"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pyvenv import require  # noqa: E402

if not require("numpy", "onnx", "onnxruntime"):
    print("numpy/onnx/onnxruntime not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

ort.set_default_logger_severity(3)

from onnxcase import check, model, run, summary  # noqa: E402

CTS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"]
NNS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
INT_SCALES = [1, 2, 3, 4, 8]


class Graph:
    """Many independent Resize / Upsample nodes in one model: one `lowconv run` for all."""

    def __init__(self, opset):
        self.opset, self.nodes, self.inits, self.ins, self.outs, self.feeds, self.what = opset, [], {}, [], [], {}, []

    def add(self, op, x, attrs, what, scales=None, sizes=None):
        i = len(self.what)
        xn, yn = "x%d" % i, "y%d" % i
        inputs = [xn]
        if op == "Resize":
            inputs += ["", "s%d" % i] if scales is not None else ["", "", "z%d" % i]
            if scales is not None:
                self.inits["s%d" % i] = np.array(scales, np.float32)
            else:
                self.inits["z%d" % i] = np.array(sizes, np.int64)
        elif op == "Upsample":
            inputs.append("s%d" % i)
            self.inits["s%d" % i] = np.array(scales, np.float32)
        self.nodes.append(helper.make_node(op, inputs, [yn], name="n%d" % i, **attrs))
        self.ins.append(helper.make_tensor_value_info(xn, TensorProto.FLOAT, list(x.shape)))
        self.outs.append(helper.make_tensor_value_info(yn, TensorProto.FLOAT, None))
        self.feeds[xn] = x
        self.what.append(what)

    def check(self, cli, tmp, name, tol, threads=1):
        for lo in range(0, len(self.what), 48):  # the CLI takes at most 64 --input options
            self.check_part(cli, tmp, "%s%d" % (name, lo), range(lo, min(lo + 48, len(self.what))), tol, threads)

    def check_part(self, cli, tmp, name, idx, tol, threads):
        nodes = [self.nodes[i] for i in idx]
        used = {v for nd in nodes for v in nd.input}
        m = model(nodes, {k: v for k, v in self.inits.items() if k in used}, [self.ins[i] for i in idx],
                  [self.outs[i] for i in idx], opset=self.opset)
        feeds = {"x%d" % i: self.feeds["x%d" % i] for i in idx}
        so = ort.SessionOptions()
        so.log_severity_level = 3
        ref = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)
        got, err = run(cli, tmp, m, feeds, name, ["--threads", str(threads)])
        check(got is not None, "%s: %s" % (name, err.strip() if got is None else ""))
        for i, r, g in zip(idx, ref, got or []):
            nd = self.nodes[i]
            if self.spec(nd):  # onnxruntime rounds some modes in float: the ONNX reference decides
                one = model([nd], {k: v for k, v in self.inits.items() if k in nd.input}, [self.ins[i]], [self.outs[i]],
                            opset=self.opset)
                r = ReferenceEvaluator(one).run(None, {"x%d" % i: self.feeds["x%d" % i]})[0]
            diff = np.abs(r - g).max() if r.shape == g.shape and r.size else 0.0
            if tol == 0:
                ok = r.shape == g.shape and np.array_equal(r.view(np.uint32), g.view(np.uint32))
            else:
                ok = r.shape == g.shape and diff <= tol
            check(ok, "%s %s: shapes %s / %s, max diff %g" % (name, self.what[i], r.shape, g.shape, diff))

    def spec(self, nd):
        """1 where the ONNX reference is the yardstick: a Resize that is not nearest by integer
        factors (there onnxruntime must agree too) nor tf_half_pixel_for_nn (the reference has none)."""
        at = {a.name: a.s.decode() if a.s else a.f for a in nd.attribute}
        if nd.op_type != "Resize" or at.get("coordinate_transformation_mode") == "tf_half_pixel_for_nn":
            return 0
        sc = self.inits.get(nd.input[2]) if len(nd.input) > 2 and nd.input[2] else None
        return not (at.get("mode", "nearest") == "nearest" and sc is not None and all(v == int(v) for v in sc))


def rand_x(rng, n_max=3, c_max=4, hw_max=13):
    shape = (int(rng.integers(1, n_max + 1)), int(rng.integers(1, c_max + 1)), int(rng.integers(1, hw_max + 1)),
             int(rng.integers(1, hw_max + 1)))
    return rng.uniform(-1, 1, shape).astype(np.float32)


def test_nearest(cli, tmp, rng):
    g = Graph(13)
    for ct in CTS:
        for nn in NNS:
            at = {"mode": "nearest", "coordinate_transformation_mode": ct, "nearest_mode": nn}
            for sh in INT_SCALES:  # every integer factor in H, a random one in W
                sw = int(rng.choice(INT_SCALES))
                g.add("Resize", rand_x(rng), at, "%s/%s x%dx%d" % (ct, nn, sh, sw), scales=[1, 1, sh, sw])
            sw = int(rng.choice(INT_SCALES))
            g.add("Resize", rand_x(rng), at, "%s/%s x1x%d" % (ct, nn, sw), scales=[1, 1, 1, sw])
            if ct == "tf_half_pixel_for_nn":
                continue  # no reference; its exact ties at o = 8, 1.7 and 27 / 13 round apart in float and double
            for s in ([1, 1, 1.5, 2.5], [1, 1, 0.5, 0.75], [1, 1, 2, 1.7]):
                g.add("Resize", rand_x(rng), at, "%s/%s %s" % (ct, nn, s[2:]), scales=s)
            x = rand_x(rng)
            sz = [x.shape[0], x.shape[1], 3 * x.shape[2], 2 * x.shape[3] + 1]
            g.add("Resize", x, at, "%s/%s sizes %s" % (ct, nn, sz[2:]), sizes=sz)
    g.check(cli, tmp, "nearest", 0)


def test_linear(cli, tmp, rng):
    g = Graph(13)
    for ct in CTS[:4]:
        at = {"mode": "linear", "coordinate_transformation_mode": ct}
        for s in ([1, 1, 2, 2], [1, 1, 3, 4], [1, 1, 8, 1], [1, 1, 1.5, 0.6], [1, 1, 0.5, 0.5]):
            g.add("Resize", rand_x(rng), at, "linear %s %s" % (ct, s[2:]), scales=s)
    g.check(cli, tmp, "linear", 1e-5)


def test_upsample(cli, tmp, rng):
    g = Graph(9)
    for mode in ("nearest", "linear"):
        for sh, sw in ((2, 2), (4, 4), (8, 8), (3, 1), (1, 2)):
            g.add("Upsample", rand_x(rng), {"mode": mode}, "upsample %s x%dx%d" % (mode, sh, sw),
                  scales=[1, 1, sh, sw])
    g.check(cli, tmp, "upsample", 1e-5)


def test_symmetric(cli, tmp, rng):
    g = Graph(19)
    for nn in NNS:
        at = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric", "nearest_mode": nn}
        for sh, sw in ((2, 2), (3, 4), (8, 1), (1.5, 2)):
            if nn == "ceil" and sh == 1.5:
                continue  # ties: x = 0 up to rounding (offset 1/6 + 1/3 - 1/2), three answers in three codes
            g.add("Resize", rand_x(rng), at, "half_pixel_symmetric/%s x%gx%g" % (nn, sh, sw), scales=[1, 1, sh, sw])
    g.check(cli, tmp, "symmetric", 0)


def test_threads(cli, tmp, rng):
    """Planes x output big enough for the thread pool (>= 65536 outputs), odd sizes."""
    g = Graph(13)
    for ct, nn, s in (("asymmetric", "floor", [1, 1, 2, 2]), ("half_pixel", "round_prefer_floor", [1, 1, 4, 3]),
                      ("asymmetric", "ceil", [1, 1, 2, 2]), ("tf_half_pixel_for_nn", "floor", [1, 1, 8, 8])):
        x = rng.uniform(-1, 1, (2, 5, int(rng.integers(17, 40)) | 1, int(rng.integers(17, 40)) | 1)).astype(np.float32)
        at = {"mode": "nearest", "coordinate_transformation_mode": ct, "nearest_mode": nn}
        g.add("Resize", x, at, "threads %s/%s %s" % (ct, nn, s[2:]), scales=s)
    g.check(cli, tmp, "threads", 0, threads=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    rng = np.random.default_rng(int(os.environ.get("LC_TEST_SEED", "11")))
    with tempfile.TemporaryDirectory() as tmp:
        test_nearest(a.lowconv, tmp, rng)
        test_linear(a.lowconv, tmp, rng)
        test_upsample(a.lowconv, tmp, rng)
        test_symmetric(a.lowconv, tmp, rng)
        test_threads(a.lowconv, tmp, rng)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
