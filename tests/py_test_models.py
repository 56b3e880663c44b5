"""End-to-end ONNX tests: small models built with the onnx package, run by `lowconv run`, compared
with onnxruntime (max abs error <= 1e-4 * max|ref|). Cases whose operators lowconv does not
support yet are reported as skipped. Usage: py_test_models.py --lowconv CLI [--build-dir DIR]"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, HERE)
from pyvenv import require  # noqa: E402

if not require("numpy", "onnx", "onnxruntime"):
    print("onnx/onnxruntime/numpy not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(1234)
OPSET = 14


def w(name, *shape, scale=0.3):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def bn(prefix, c):
    return [numpy_helper.from_array((RNG.random(c) + 0.5).astype(np.float32), prefix + "_s"),
            numpy_helper.from_array((RNG.standard_normal(c) * 0.1).astype(np.float32), prefix + "_b"),
            numpy_helper.from_array((RNG.standard_normal(c) * 0.1).astype(np.float32), prefix + "_m"),
            numpy_helper.from_array((RNG.random(c) + 0.5).astype(np.float32), prefix + "_v")]


def bn_node(prefix, x, y):
    return helper.make_node("BatchNormalization", [x, prefix + "_s", prefix + "_b", prefix + "_m", prefix + "_v"],
                            [y], name=prefix, epsilon=1e-5)


def make(nodes, inits, ins, outs, name):
    g = helper.make_graph(nodes, name, ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def resnet_block():
    """Conv+BN+Relu, Conv+BN, residual Add, Relu, MaxPool, GlobalAveragePool, Flatten, Gemm."""
    n = [helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn_node("bn1", "c1", "b1"), helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
         helper.make_node("Conv", ["r1", "W2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn_node("bn2", "c2", "b2"), helper.make_node("Add", ["b2", "r1"], ["a"], name="add"),
         helper.make_node("Relu", ["a"], ["r2"], name="relu2"),
         helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "Wf", "Bf"], ["Y"], name="fc", transB=1)]
    inits = [w("W1", 8, 3, 3, 3), w("B1", 8), w("W2", 8, 8, 3, 3), w("Wf", 10, 8), w("Bf", 10)] + bn("bn1", 8) + bn("bn2", 8)
    return make(n, inits, [vi("X", ["N", 3, 16, 16])], [vi("Y", ["N", 10])], "resnet_block")


def mobilenet_block():
    """Pointwise + depthwise stride 2 with Clip (ReLU6), HardSwish, LeakyRelu."""
    n = [helper.make_node("Conv", ["X", "Wp", "Bp"], ["c1"], name="pw", kernel_shape=[1, 1]),
         helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
         helper.make_node("Conv", ["r1", "Wd"], ["c2"], name="dw", kernel_shape=[3, 3], group=16, strides=[2, 2],
                          pads=[1, 1, 1, 1]),
         helper.make_node("HardSwish", ["c2"], ["h"], name="hswish"),
         helper.make_node("Conv", ["h", "Wq"], ["c3"], name="pw2", kernel_shape=[1, 1]),
         helper.make_node("LeakyRelu", ["c3"], ["Y"], name="leaky", alpha=0.1)]
    inits = [w("Wp", 16, 4, 1, 1), w("Bp", 16), w("Wd", 16, 1, 3, 3), w("Wq", 6, 16, 1, 1),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    return make(n, inits, [vi("X", [1, 4, 15, 15])], [vi("Y", [1, 6, 8, 8])], "mobilenet_block")


def paddle_hswish(form):
    """Paddle's export of MobileNetV3/PP-LCNet blocks: Conv, learnable affine (Mul/Add by scalars),
    HardSwish spelled out as x * Clip(x + 3, 0, 6) / 6 (form 'div'), with Mul by 1/6 first
    ('mul6'), or as x * HardSigmoid(x) ('hsig'), affine again, depthwise conv with padding.
    The pointwise weights come from a Constant node (> 4 KiB: copied on demand by the loader)."""
    def c(name, v):
        return numpy_helper.from_array(np.asarray(v, np.float32), name)
    wc = helper.make_node("Constant", [], ["W1"], name="w1const",
                          value=numpy_helper.from_array((RNG.standard_normal((48, 32, 1, 1)) * 0.3).astype(np.float32)))
    inits = [c("B1", RNG.standard_normal(48) * 0.1), c("s1", [0.9]), c("b1", [0.3]), c("three", 3.0), c("zero", 0.0),
             c("six", 6.0), c("sixth", 1 / 6.0), c("s2", [0.7]), c("b2", [-0.2]), w("W2", 48, 1, 3, 3),
             c("pc", RNG.random((1, 48, 1, 1)) + 0.5)]
    n = [wc, helper.make_node("Conv", ["X", "W1", "B1"], ["c1"], name="pw"),
         helper.make_node("Mul", ["s1", "c1"], ["m1"], name="lab_mul"),
         helper.make_node("Add", ["m1", "b1"], ["a1"], name="lab_add")]
    if form == "div":
        n += [helper.make_node("Add", ["a1", "three"], ["a3"]), helper.make_node("Clip", ["a3", "zero", "six"], ["cl"]),
              helper.make_node("Mul", ["a1", "cl"], ["mm"]), helper.make_node("Div", ["mm", "six"], ["h"])]
    elif form == "mul6":
        n += [helper.make_node("Add", ["three", "a1"], ["a3"]), helper.make_node("Clip", ["a3", "zero", "six"], ["cl"]),
              helper.make_node("Mul", ["cl", "sixth"], ["mm"]), helper.make_node("Mul", ["mm", "a1"], ["h"])]
    else:
        n += [helper.make_node("HardSigmoid", ["a1"], ["hs"], alpha=1 / 6.0, beta=0.5),
              helper.make_node("Mul", ["a1", "hs"], ["h"])]
    n += [helper.make_node("Mul", ["h", "s2"], ["m2"]), helper.make_node("Add", ["b2", "m2"], ["a2"]),
          helper.make_node("Conv", ["a2", "W2"], ["c2"], name="dw", group=48, pads=[1, 1, 1, 1]),
          helper.make_node("Mul", ["c2", "pc"], ["Y"], name="chan_mul")]
    used = {i for nd in n for i in nd.input}
    return make(n, [t for t in inits if t.name in used], [vi("X", [1, 32, 9, 11])], [vi("Y", [1, 48, 9, 11])],
                "paddle_hswish_" + form)


def fused_case(cli, tmp, form):
    """Output matches onnxruntime and the whole chain became two convs (lowconv info)."""
    model = paddle_hswish(form)
    r, msg = run_case(cli, tmp, "hs_" + form, model, {"X": RNG.standard_normal((1, 32, 9, 11)).astype(np.float32)})
    if r != "pass":
        return r, msg
    path = os.path.join(tmp, "hs_" + form + "_info.onnx")
    onnx.save(model, path)
    out = subprocess.run([cli, "info", path], capture_output=True, text=True).stdout
    if " 2 planned" not in out or "mul+add+hardswish+mul+add" not in out:
        return "fail", "fusion missing: " + " ".join(l.strip() for l in out.splitlines() if "planned" in l or "ws" in l)
    return "pass", msg + "; fused into 2 convs"


def shape_chain():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: folds away at load."""
    n = [helper.make_node("Conv", ["X", "W"], ["c"], name="conv", kernel_shape=[3, 3]),
         helper.make_node("Shape", ["c"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
         helper.make_node("Unsqueeze", ["n", "ax"], ["nu"], name="unsq"),
         helper.make_node("Concat", ["nu", "minus1"], ["shp"], name="concat", axis=0),
         helper.make_node("Reshape", ["c", "shp"], ["Y"], name="reshape")]
    inits = [w("W", 4, 2, 3, 3), numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "ax"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    return make(n, inits, [vi("X", [1, 2, 6, 6])], [vi("Y", [1, 64])], "shape_chain")


def shortcut_block(expand):
    """A residual block with a 1x1 stride-2 shortcut conv + BN listed right after the block's input,
    so it runs before the main path (topological order). expand=False (IResNet's block): BN, 3x3
    conv, BN, Relu, 3x3 stride-2 conv, BN, C -> C; the Add must go into the main path's last conv so
    the block input dies at the shortcut, not after the whole main path (issue #13). expand=True
    (ResNet-50's first bottleneck): 1x1 conv C -> C first, stride 1, shortcut C -> 4C; the block input
    is read by the main path anyway and the shortcut's output is 4x larger, so the Add goes into it."""
    c, o, st = 8, 32 if expand else 8, 1 if expand else 2
    n = [helper.make_node("Conv", ["X", "W0"], ["x"], name="stem", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "Ws"], ["s"], name="short", kernel_shape=[1, 1], strides=[st, st]),
         bn_node("bns", "s", "sb")]
    if expand:
        n += [helper.make_node("Conv", ["x", "W1"], ["c1"], name="main1", kernel_shape=[1, 1])]
    else:
        n += [bn_node("bn0", "x", "b0"),
              helper.make_node("Conv", ["b0", "W1"], ["c1"], name="main1", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    n += [bn_node("bn1", "c1", "b1"), helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
          helper.make_node("Conv", ["r1", "W2"], ["c2"], name="main2", kernel_shape=[3, 3], strides=[st, st],
                           pads=[1, 1, 1, 1])]
    if expand:
        n += [helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
              helper.make_node("Conv", ["r2", "W3"], ["c3"], name="main3", kernel_shape=[1, 1])]
    last = "c3" if expand else "c2"
    n += [bn_node("bn2", last, "b2"), helper.make_node("Add", ["b2", "sb"], ["Y"], name="add")]
    inits = [w("W0", c, 3, 3, 3), w("Ws", o, c, 1, 1), w("W1", c, c, *((1, 1) if expand else (3, 3))),
             w("W2", c, c, 3, 3)] + bn("bns", o) + bn("bn1", c) + bn("bn2", o)
    inits += [w("W3", o, c, 1, 1)] if expand else bn("bn0", c)
    return make(n, inits, [vi("X", [1, 3, 32, 32])], [vi("Y", [1, o, 32 // st, 32 // st])], "shortcut_" + str(expand))


def shortcut_case(cli, tmp, expand):
    """Output matches onnxruntime; `info`: the Add went into the conv the rule picks, and for the
    IResNet block the peak is two full-size tensors and the shortcut's output, not three."""
    model = shortcut_block(expand)
    name = "shortcut_%d" % expand
    r, msg = run_case(cli, tmp, name, model, {"X": RNG.standard_normal((1, 3, 32, 32)).astype(np.float32)})
    if r != "pass":
        return r, msg
    out = subprocess.run([cli, "info", os.path.join(tmp, name + ".onnx")], capture_output=True, text=True).stdout
    routes = {l.split()[0]: l.split() for l in out.splitlines() if l.startswith("  ") and " ws " in l}
    want, other = ("short", "main3") if expand else ("main2", "short")
    if "bn+add" not in routes.get(want, []) or "bn+add" in routes.get(other, []):
        return "fail", "the Add is not fused into %s: %s" % (want, routes)
    peak = float(out.split("peak activations ")[1].split()[0]) * 1e6
    full = 8 * 32 * 32 * 4  # one 8-channel 32x32 tensor
    if not expand and peak > 2.5 * full:
        return "fail", "peak activations %.0f B > 2.5 x %d B" % (peak, full)
    return "pass", "add into %s, peak activations %.0f B" % (want, peak)


def run_case(cli, tmp, name, model, feeds, extra=(), external=False):
    path = os.path.join(tmp, name + ".onnx")
    if external:  # save_model rewrites the tensors it externalizes: work on a copy
        ext = onnx.ModelProto()
        ext.CopyFrom(model)
        onnx.save_model(ext, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".bin", size_threshold=0)
    else:
        onnx.save(model, path)
    args = [cli, "run", path, "--output-dir", tmp] + list(extra)
    for k, v in feeds.items():
        f = os.path.join(tmp, "%s_%s.npy" % (name, k))
        np.save(f, v)
        args += ["--input", "%s=%s" % (k, f)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        if "is not supported" in p.stderr:
            return "skip", p.stderr.strip()
        return "fail", "exit %d: %s" % (p.returncode, p.stderr.strip())
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    refs = sess.run(None, feeds)
    for o, ref in zip(model.graph.output, refs):
        got = np.load(os.path.join(tmp, o.name + ".npy"))
        if got.shape != ref.shape:
            return "fail", "output %s shape %s, onnxruntime %s" % (o.name, got.shape, ref.shape)
        err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        tol = 1e-4 * max(float(np.max(np.abs(ref))), 1e-6)
        if err > tol:
            return "fail", "output %s max abs err %.3g > %.3g" % (o.name, err, tol)
    return "pass", ""


def chan_epilogue_case(cli, tmp):
    """The per-channel conv epilogue a device plan fuses (src/model/fuse_device.c: _residual, then
    _chan_mul/_chan_add, then _prelu on the Conv), run by the CPU conv op as when a device hands the
    node back: the fused node against onnxruntime on the unfused Conv, Add, BN, PRelu."""
    c = 6
    wt, bt, bns = w("W", c, 3, 3, 3), w("B", c), bn("bn", c)
    sc, sh, mean, var = (numpy_helper.to_array(t).astype(np.float64) for t in bns)
    slope = (RNG.random((c, 1, 1)) * 0.5).astype(np.float32)
    mul = sc / np.sqrt(var + 1e-5)
    io = [vi("X", [1, 3, 8, 8]), vi("R", [1, c, 8, 8])], [vi("Y", [1, c, 8, 8])]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    ref = make([helper.make_node("Conv", ["X", "W", "B"], ["c"], **conv), helper.make_node("Add", ["c", "R"], ["a"]),
                bn_node("bn", "a", "n"), helper.make_node("PRelu", ["n", "S"], ["Y"])],
               [wt, bt, numpy_helper.from_array(slope, "S")] + bns, io[0], io[1], "chan_ref")
    fused = helper.make_node("Conv", ["X", "W", "B", "R"], ["Y"], _residual=1, _chan_mul=mul.tolist(),
                             _chan_add=(sh - mean * mul).tolist(), _prelu=slope.ravel().tolist(), **conv)
    m = helper.make_model(helper.make_graph([fused], "chan", io[0], io[1], [wt, bt]),
                          opset_imports=[helper.make_opsetid("", OPSET)])
    path = os.path.join(tmp, "chan.onnx")
    onnx.save(m, path)
    feeds = {"X": RNG.standard_normal((1, 3, 8, 8)).astype(np.float32),
             "R": RNG.standard_normal((1, c, 8, 8)).astype(np.float32)}
    args = [cli, "run", path, "--output-dir", os.path.join(tmp, "chan_out")]
    for k, v in feeds.items():
        np.save(os.path.join(tmp, "chan_%s.npy" % k), v)
        args += ["--input", "%s=%s" % (k, os.path.join(tmp, "chan_%s.npy" % k))]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return "fail", "exit %d: %s" % (p.returncode, p.stderr.strip())
    want = ort.InferenceSession(ref.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = np.load(os.path.join(tmp, "chan_out", "Y.npy"))
    err = float(np.max(np.abs(got - want)))
    ok = err <= 1e-4 * float(np.max(np.abs(want)))
    return ("pass" if ok else "fail"), "max abs err %.3g" % err


def expect_error(cli, tmp, name, model, args, needle, code=1):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    p = subprocess.run([cli] + [a.replace("MODEL", path) for a in args], capture_output=True, text=True, timeout=120)
    if p.returncode == code and needle in p.stderr:
        return "pass", ""
    return "fail", "exit %d, stderr %r (wanted %r)" % (p.returncode, p.stderr.strip(), needle)


def prelu_residual_case(cli, tmp, stride):
    """Conv -> Add(R) -> PRelu as CPU plans fuse it (fuse_chain.c: _residual and _prelu run by the
    library, LC_ACT_PRELU through lc_conv_run_residual): slopes < 0, 0 and > 1, against onnxruntime."""
    c, hw = 32, 20
    o = hw // stride
    wt, bt = w("W", c, c, 3, 3), w("B", c)
    slope = np.linspace(-0.8, 1.6, c).astype(np.float32).reshape(c, 1, 1)
    io = [vi("X", [1, c, hw, hw]), vi("R", [1, c, o, o])], [vi("Y", [1, c, o, o])]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride])
    m = make([helper.make_node("Conv", ["X", "W", "B"], ["c"], **conv), helper.make_node("Add", ["c", "R"], ["a"]),
              helper.make_node("PRelu", ["a", "S"], ["Y"])],
             [wt, bt, numpy_helper.from_array(slope, "S")], io[0], io[1], "prelu_res")
    path = os.path.join(tmp, "prelu_res%d.onnx" % stride)
    onnx.save(m, path)
    feeds = {"X": RNG.standard_normal((1, c, hw, hw)).astype(np.float32),
             "R": RNG.standard_normal((1, c, o, o)).astype(np.float32)}
    out_dir = os.path.join(tmp, "prelu_res%d_out" % stride)
    args = [cli, "run", path, "--output-dir", out_dir]
    for k, v in feeds.items():
        np.save(os.path.join(tmp, "pr%d_%s.npy" % (stride, k)), v)
        args += ["--input", "%s=%s" % (k, os.path.join(tmp, "pr%d_%s.npy" % (stride, k)))]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return "fail", "exit %d: %s" % (p.returncode, p.stderr.strip())
    info = subprocess.run([cli, "info", path], capture_output=True, text=True, timeout=300).stdout
    if "add+prelu" not in info:
        return "fail", "the PRelu was not fused: %s" % info.strip()[-300:]
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = np.load(os.path.join(out_dir, "Y.npy"))
    err = float(np.max(np.abs(got - want)))
    ok = err <= 1e-4 * float(np.max(np.abs(want)))
    return ("pass" if ok else "fail"), "max abs err %.3g (%s)" % (err, info.strip().splitlines()[-1].strip())


def bn_conv_case(cli, tmp, kind):
    """BatchNormalization -> Conv 3x3 (pads 1, 2 and 0 on the sides) as CPU plans fold it (fuse_chain.c
    bn_in, ops_conv.c fold_input_affine: weights scaled per input channel, the padding read as
    -shift / scale), against onnxruntime. kind "fold": shifts large against the inputs, so a zero
    padding would show; "zero": one scale 0 (not foldable: the conv op applies the affine first);
    "s2": stride 2 (left to the BN node: no padding-aware route)."""
    c, hw, stride = 24, 17, 2 if kind == "s2" else 1
    scale = np.linspace(-1.5, 2.0, c).astype(np.float32)
    if kind == "zero":
        scale[5] = 0.0
    bias = np.linspace(3.0, -2.0, c).astype(np.float32)
    mean = np.linspace(-0.5, 0.5, c).astype(np.float32)
    var = np.linspace(0.2, 2.0, c).astype(np.float32)
    oh, ow = (hw + 3 - 3) // stride + 1, (hw + 2 - 3) // stride + 1
    wt, bt = w("W", c + 8, c, 3, 3), w("B", c + 8)
    io = [vi("X", [1, c, hw, hw])], [vi("Y", [1, c + 8, oh, ow])]
    conv = dict(kernel_shape=[3, 3], pads=[1, 2, 2, 0], strides=[stride, stride])
    inits = [wt, bt] + [numpy_helper.from_array(v, n) for v, n in ((scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))]
    m = make([helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["n"], epsilon=1e-3),
              helper.make_node("Conv", ["n", "W", "B"], ["Y"], **conv)], inits, io[0], io[1], "bn_conv")
    path = os.path.join(tmp, "bn_conv_%s.onnx" % kind)
    onnx.save(m, path)
    x = RNG.standard_normal((1, c, hw, hw)).astype(np.float32)
    info = subprocess.run([cli, "info", path], capture_output=True, text=True, timeout=300).stdout
    fused = "bn_in" in info
    if fused != (kind != "s2"):
        return "fail", "bn_in fused: %s, expected %s: %s" % (fused, kind != "s2", info.strip()[-300:])
    p = run_case(cli, tmp, "bn_conv_" + kind, m, {"X": x})
    return p[0], "%s (bn_in fused: %s)" % (p[1], fused)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    res = {"pass": 0, "fail": 0, "skip": 0}
    x16 = RNG.standard_normal((1, 3, 16, 16)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        rb = resnet_block()
        unknown = make([helper.make_node("Relu", ["X"], ["a"], name="r"),
                        helper.make_node("Softsign", ["a"], ["Y"], name="mystery")], [], [vi("X", [1, 4])],
                       [vi("Y", [1, 4])], "unknown")
        dyn = make([helper.make_node("Relu", ["X"], ["Y"], name="r")], [], [vi("X", [1, 3, "H", "W"])],
                   [vi("Y", [1, 3, "H", "W"])], "dyn")
        cases = [
            ("resnet_block", lambda: run_case(a.lowconv, tmp, "resnet_block", rb, {"X": x16})),
            ("resnet_block_batch2", lambda: run_case(
                a.lowconv, tmp, "resnet_block_b2", rb, {"X": RNG.standard_normal((2, 3, 16, 16)).astype(np.float32)},
                ["--shape", "X=2x3x16x16"])),
            ("resnet_block_unfused", lambda: run_case(a.lowconv, tmp, "resnet_block_nf", rb, {"X": x16}, ["--no-fusion"])),
            ("resnet_block_external", lambda: run_case(a.lowconv, tmp, "resnet_ext", rb, {"X": x16}, external=True)),
            ("mobilenet_block", lambda: run_case(a.lowconv, tmp, "mobilenet_block", mobilenet_block(),
                                                 {"X": RNG.standard_normal((1, 4, 15, 15)).astype(np.float32)})),
            ("paddle_hswish_div", lambda: fused_case(a.lowconv, tmp, "div")),
            ("paddle_hswish_mul6", lambda: fused_case(a.lowconv, tmp, "mul6")),
            ("paddle_hswish_hsig", lambda: fused_case(a.lowconv, tmp, "hsig")),
            ("shortcut_add_main_path", lambda: shortcut_case(a.lowconv, tmp, False)),
            ("shortcut_add_expanding", lambda: shortcut_case(a.lowconv, tmp, True)),
            ("conv_chan_epilogue_cpu", lambda: chan_epilogue_case(a.lowconv, tmp)),
            ("conv_residual_prelu_s1", lambda: prelu_residual_case(a.lowconv, tmp, 1)),
            ("conv_residual_prelu_s2", lambda: prelu_residual_case(a.lowconv, tmp, 2)),
            ("bn_before_conv_folded", lambda: bn_conv_case(a.lowconv, tmp, "fold")),
            ("bn_before_conv_zero_scale", lambda: bn_conv_case(a.lowconv, tmp, "zero")),
            ("bn_before_conv_s2", lambda: bn_conv_case(a.lowconv, tmp, "s2")),
            ("shape_chain", lambda: run_case(a.lowconv, tmp, "shape_chain", shape_chain(),
                                             {"X": RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)})),
            ("dynamic_dims", lambda: run_case(a.lowconv, tmp, "dyn", dyn,
                                              {"X": RNG.standard_normal((1, 3, 5, 7)).astype(np.float32)},
                                              ["--shape", "X=1x3x5x7"])),
            ("dynamic_dims_from_npy", lambda: run_case(a.lowconv, tmp, "dyn_npy", dyn,
                                                       {"X": RNG.standard_normal((1, 3, 6, 4)).astype(np.float32)})),
            ("err_symbolic_dim", lambda: expect_error(a.lowconv, tmp, "dyn", dyn, ["bench", "MODEL"],
                                                      "input 'X' has symbolic dims (1x3xHxW)", code=2)),
            ("err_unknown_op", lambda: expect_error(a.lowconv, tmp, "unknown", unknown, ["info", "MODEL"],
                                                    "operator 'Softsign' (node 'mystery') is not supported")),
            ("err_wrong_input_shape", lambda: expect_error_with_input(a.lowconv, tmp, rb)),
            ("err_missing_input", lambda: expect_error(a.lowconv, tmp, "rb2", rb,
                                                       ["run", "MODEL", "--output-dir", tmp], "input 'X' not given",
                                                       code=2)),
        ]
        for name, fn in cases:
            r, msg = fn()
            res[r] += 1
            print("%-24s %s %s" % (name, r.upper(), msg))
    print("%d passed, %d failed, %d skipped" % (res["pass"], res["fail"], res["skip"]))
    return 1 if res["fail"] else 0


def expect_error_with_input(cli, tmp, model):
    f = os.path.join(tmp, "wrong.npy")
    np.save(f, np.zeros((1, 3, 8, 8), np.float32))
    return expect_error(cli, tmp, "rb3", model, ["run", "MODEL", "--output-dir", tmp, "--input", "X=" + f],
                        "--input X=%s: model: input 'X' dim 2 is fixed to 16, shape gives 8" % f)


if __name__ == "__main__":
    sys.exit(main())
