"""Opset-6 models (issue 11: old-opset broadcasting rules), through `lowconv run` on a small generated
net against a float64 numpy reference (onnxruntime runs opset 7 and later only):
  - Add / Mul / Div with broadcast = 1 and an axis (B aligned from that axis, not from the end),
    Sub with broadcast = 1 and no axis, BatchNormalization-6 (is_test), Dropout-6, Gemm-6
    (broadcast C), PRelu-6 with a [C] slope;
  - refused with a message: a computed B broadcast from an axis, BatchNormalization spatial = 0,
    opset 5.
Usage: py_test_old_opset.py --lowconv CLI [--build-dir DIR]"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pyvenv import require  # noqa: E402

if not require("numpy", "onnx"):
    print("numpy/onnx not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from onnxcase import check, run, summary  # noqa: E402
from onnxcase import model as model13  # noqa: E402

N = helper.make_node


def model(nodes, inits, inputs, outputs, opset=6):
    return model13(nodes, inits, inputs, outputs, opset)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_ref(x, w):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, o, h, wd))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def test_net(cli, tmp):
    r = np.random.RandomState(6)
    f = lambda *s: r.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    x = f(1, 4, 5, 6)
    p = {"w": f(3, 4, 3, 3), "bias": f(3), "scale": f(3), "s": f(3), "b": f(3), "mean": f(3),
         "var": r.uniform(0.5, 1.5, 3).astype(np.float32), "c": f(5, 6), "d": r.uniform(1, 2, (3, 5)).astype(np.float32),
         "gw": f(90, 7), "gc": f(7), "slope": f(7)}
    nodes = [
        N("Conv", ["x", "w"], ["y0"], pads=[1, 1, 1, 1]),
        N("Add", ["y0", "bias"], ["y1"], broadcast=1, axis=1),
        N("Mul", ["y1", "scale"], ["y2"], broadcast=1, axis=1),
        N("BatchNormalization", ["y2", "s", "b", "mean", "var"], ["y3"], is_test=1, epsilon=1e-5),
        N("Relu", ["y3"], ["y4"]),
        N("Dropout", ["y4"], ["y5"], is_test=1),
        N("Sub", ["y5", "c"], ["y6"], broadcast=1),
        N("Div", ["y6", "d"], ["y7"], broadcast=1, axis=1),
        N("Flatten", ["y7"], ["y8"], axis=1),
        N("Gemm", ["y8", "gw", "gc"], ["y9"], broadcast=1),
        N("PRelu", ["y9", "slope"], ["out"]),
    ]
    m = model(nodes, p, [vi("x", [1, 4, 5, 6])], [vi("out", [1, 7])])
    d = {k: v.astype(np.float64) for k, v in p.items()}
    y = conv_ref(x.astype(np.float64), d["w"]) + d["bias"][None, :, None, None]
    y = y * d["scale"][None, :, None, None]
    y = (y - d["mean"][None, :, None, None]) / np.sqrt(d["var"][None, :, None, None] + 1e-5) * d["s"][None, :, None, None] + d["b"][None, :, None, None]
    y = np.maximum(y, 0) - d["c"][None, None]
    y = y / d["d"][None, :, :, None]  # axis 1: B [3, 5] aligned with dims 1-2, not the last two
    y = y.reshape(1, 90) @ d["gw"] + d["gc"]
    ref = np.where(y < 0, y * d["slope"], y)
    got, err = run(cli, tmp, m, {"x": x}, "net6")
    check(got is not None, "opset-6 net ran: " + err[-300:])
    if got is not None:
        e = float(np.max(np.abs(got[0] - ref)) / max(np.max(np.abs(ref)), 1e-30))
        # fp32 accumulation over a 36-term conv and a 90-term product: ~1e-6 of the scale; 1e-5 leaves room
        check(got[0].shape == ref.shape and e <= 1e-5, "opset-6 net: max error %.3g of the scale" % e)
        print("opset-6 net: max |lowconv - fp64 reference| = %.2e of the output scale" % e)


def test_refused(cli, tmp):
    r = np.random.RandomState(7)
    x = r.uniform(-1, 1, (1, 3, 4, 4)).astype(np.float32)
    b = r.uniform(-1, 1, 3).astype(np.float32)
    m = model([N("Relu", ["b"], ["bc"]), N("Add", ["x", "bc"], ["out"], broadcast=1, axis=1)], {},
              [vi("x", [1, 3, 4, 4]), vi("b", [3])], [vi("out", [1, 3, 4, 4])])
    got, err = run(cli, tmp, m, {"x": x, "b": b}, "computed")
    check(got is None and "computed B" in err and "opset 6" in err, "computed B from an axis refused: " + err[-300:])
    p = {k: np.ones(3, np.float32) for k in ("s", "b", "mean", "var")}
    m = model([N("BatchNormalization", ["x", "s", "b", "mean", "var"], ["out"], is_test=1, spatial=0)], p,
              [vi("x", [1, 3, 4, 4])], [vi("out", [1, 3, 4, 4])])
    got, err = run(cli, tmp, m, {"x": x}, "spatial0")
    check(got is None and "spatial = 0" in err, "BatchNormalization spatial = 0 refused: " + err[-300:])
    m = model([N("Relu", ["x"], ["out"])], {}, [vi("x", [1, 3, 4, 4])], [vi("out", [1, 3, 4, 4])], opset=5)
    got, err = run(cli, tmp, m, {"x": x}, "opset5")
    check(got is None and "opset 5" in err, "opset 5 refused: " + err[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        test_net(a.lowconv, tmp)
        test_refused(a.lowconv, tmp)
    sys.exit(summary())


if __name__ == "__main__":
    main()
