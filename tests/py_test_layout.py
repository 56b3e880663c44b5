"""Channels-last plans (src/model/layout.c, `--layout`): small nets whose convs feed each other, non-conv
readers, graph outputs read by convs, an unfoldable BatchNormalization before a conv, odd sizes and
batch 2, run with --layout nchw / nhwc / auto at 1 and 2 threads and compared with onnxruntime (max
abs error <= 1e-4 * max|ref|, as py_test_models.py: fp32 sums in another order, Winograd's transforms).
`info --layout nhwc` must show convs running NHWC (route "/nhwc") and `--layout nchw` none.
Usage: py_test_layout.py --lowconv CLI"""
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
from onnx import helper, numpy_helper  # noqa: E402
from py_test_models import RNG, bn, bn_node, make, run_case, vi, w  # noqa: E402


def conv(x, wname, y, k, s=1, group=1, bias=None):
    ins = [x, wname] + ([bias] if bias else [])
    return helper.make_node("Conv", ins, [y], name=y, kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4,
                            group=group)


def slope(name, c):
    return numpy_helper.from_array((RNG.random((c, 1, 1)) * 0.5).astype(np.float32), name)


def iresnet(c=13, h=17, wd=19, zero_bn=False):
    """Stem (3 channels) + BN + PRelu; a downsampling block (BN, 3x3, BN, PRelu, 3x3 s2, BN, 1x1 s2
    shortcut + BN, Add); an identity block; BN, Flatten, Gemm. zero_bn: the second block's first BN
    has a zero scale, so it cannot fold into the conv (the op applies it, in the conv's layout)."""
    c2 = 2 * c
    n, t = [], [w("Ws", c, 3, 3, 3), slope("Ps", c), w("W1", c, c, 3, 3), slope("P1", c), w("W2", c2, c, 3, 3),
                w("Wd", c2, c, 1, 1), w("W3", c2, c2, 3, 3), slope("P3", c2), w("W4", c2, c2, 3, 3)]
    for p, ch in (("bs", c), ("b0", c), ("b1", c), ("b2", c2), ("bd", c2), ("b3", c2), ("b4", c2), ("b5", c2),
                  ("bf", c2)):
        t += bn(p, ch)
    if zero_bn:
        t[[i for i, x in enumerate(t) if x.name == "b3_s"][0]] = numpy_helper.from_array(
            np.concatenate([np.zeros(1), RNG.random(c2 - 1) + 0.5]).astype(np.float32), "b3_s")
    n += [conv("X", "Ws", "s", 3), bn_node("bs", "s", "sb"), helper.make_node("PRelu", ["sb", "Ps"], ["sp"]),
          bn_node("b0", "sp", "i0"), conv("i0", "W1", "c1", 3), bn_node("b1", "c1", "n1"),
          helper.make_node("PRelu", ["n1", "P1"], ["p1"]), conv("p1", "W2", "c2", 3, 2), bn_node("b2", "c2", "n2"),
          conv("sp", "Wd", "d", 1, 2), bn_node("bd", "d", "nd"), helper.make_node("Add", ["n2", "nd"], ["a1"]),
          bn_node("b3", "a1", "i1"), conv("i1", "W3", "c3", 3), bn_node("b4", "c3", "n3"),
          helper.make_node("PRelu", ["n3", "P3"], ["p3"]), conv("p3", "W4", "c4", 3), bn_node("b5", "c4", "n4"),
          helper.make_node("Add", ["n4", "a1"], ["a2"]), bn_node("bf", "a2", "f"),
          helper.make_node("Flatten", ["f"], ["fl"]), helper.make_node("Gemm", ["fl", "Wf", "Bf"], ["Y"], transB=1)]
    oh, ow = (h + 1) // 2, (wd + 1) // 2
    t += [w("Wf", 10, c2 * oh * ow, scale=0.05), w("Bf", 10)]
    return make(n, t, [vi("X", ["N", 3, h, wd])], [vi("Y", ["N", 10])], "iresnet_like")


def mobilenet(c=11, h=23, wd=21):
    """Stem s2 + Clip; inverted residual (1x1 expand, depthwise 3x3, 1x1 project, Add); a depthwise
    stride-2 block; GlobalAveragePool + Flatten + Gemm."""
    e = 3 * c
    t = [w("Ws", c, 3, 3, 3), w("We", e, c, 1, 1), w("Wdw", e, 1, 3, 3), w("Wp", c, e, 1, 1),
         w("We2", e, c, 1, 1), w("Wdw2", e, 1, 3, 3), w("Wp2", 2 * c, e, 1, 1), w("Wf", 7, 2 * c), w("Bf", 7),
         numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
    n = [conv("X", "Ws", "s", 3, 2), helper.make_node("Clip", ["s", "lo", "hi"], ["s6"]),
         conv("s6", "We", "e1", 1), helper.make_node("Clip", ["e1", "lo", "hi"], ["e6"]),
         conv("e6", "Wdw", "d1", 3, 1, e), helper.make_node("Clip", ["d1", "lo", "hi"], ["d6"]),
         conv("d6", "Wp", "p1", 1), helper.make_node("Add", ["p1", "s6"], ["r1"]),
         conv("r1", "We2", "e2", 1), helper.make_node("Relu", ["e2"], ["e2r"]),
         conv("e2r", "Wdw2", "d2", 3, 2, e), helper.make_node("Relu", ["d2"], ["d2r"]),
         conv("d2r", "Wp2", "p2", 1), helper.make_node("GlobalAveragePool", ["p2"], ["g"]),
         helper.make_node("Flatten", ["g"], ["fl"]), helper.make_node("Gemm", ["fl", "Wf", "Bf"], ["Y"], transB=1)]
    return make(n, t, [vi("X", ["N", 3, h, wd])], [vi("Y", ["N", 7])], "mobilenet_like")


def mixed_readers(c=9, h=15):
    """Conv A's output is a graph output and is read by conv B and by a Relu; B's output is read by
    conv C and by a Sigmoid whose result C adds; conv D (no bias: inputs X, W, -, residual) adds the
    Relu's output and writes the graph output: every border of a channels-last group."""
    t = [w("Wa", c, 3, 3, 3), w("Wb", c, c, 3, 3), w("Wc", c, c, 3, 3), w("Bc", c), w("Wd", c, c, 3, 3)]
    n = [conv("X", "Wa", "A", 3), conv("A", "Wb", "b", 3), helper.make_node("Relu", ["A"], ["ar"]),
         helper.make_node("Sigmoid", ["b"], ["bs"]), conv("b", "Wc", "cc", 3, bias="Bc"),
         helper.make_node("Add", ["cc", "bs"], ["ca"]), conv("ca", "Wd", "dd", 3),
         helper.make_node("Add", ["dd", "ar"], ["Y"])]
    return make(n, t, [vi("X", ["N", 3, h, h])], [vi("Y", ["N", c, h, h]), vi("A", ["N", c, h, h])], "mixed_readers")


def routes(cli, tmp, model, name, layout):
    from onnx import save
    path = os.path.join(tmp, name + "_info.onnx")
    save(model, path)
    p = subprocess.run([cli, "info", path, "--shape", "X=1x3x%dx%d" % tuple(
        d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[2:]), "--layout", layout],
        capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout.count("/nhwc"), p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)  # ctest passes it to every py_test_*
    a = ap.parse_args()
    res = {"pass": 0, "fail": 0, "skip": 0}
    nets = [("iresnet", iresnet()), ("iresnet_zero_bn", iresnet(zero_bn=True)), ("iresnet_wide", iresnet(c=32, h=28, wd=28)),
            ("mobilenet", mobilenet()), ("mixed_readers", mixed_readers())]
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in nets:
            hw = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim[2:]]
            for nb in (1, 2):
                x = RNG.standard_normal((nb, 3) + tuple(hw)).astype(np.float32)
                for layout in ("nchw", "nhwc", "auto"):
                    for th in (1, 2):
                        tag = "%s_b%d_%s_t%d" % (name, nb, layout, th)
                        r, msg = run_case(a.lowconv, tmp, tag, m, {"X": x},
                                          ["--layout", layout, "--threads", str(th), "--shape",
                                           "X=%dx3x%dx%d" % (nb, hw[0], hw[1])])
                        res[r] += 1
                        if r != "pass":
                            print("%-36s %s %s" % (tag, r.upper(), msg))
            for layout, want in (("nhwc", lambda k: k >= 2), ("nchw", lambda k: k == 0)):
                rc, k, err = routes(a.lowconv, tmp, m, name, layout)
                ok = rc == 0 and want(k)
                res["pass" if ok else "fail"] += 1
                print("%-36s %s %d convs NHWC %s" % (name + "_info_" + layout, "PASS" if ok else "FAIL", k, err.strip()))
    print("%d passed, %d failed, %d skipped" % (res["pass"], res["fail"], res["skip"]))
    return 1 if res["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
