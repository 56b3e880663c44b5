"""Written-out layer norms (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add, as
Paddle exports them) become one LayerNormalization node (model/fuse_norm.c): lowconv info lists
it, the output matches onnxruntime (max abs error <= 1e-4 * max|ref|) on the CPU and, when an
OpenCL device opens, on the device with no node left on the CPU; a pattern whose intermediate is
read elsewhere stays unfused and still matches. Usage: py_test_fuse_norm.py --lowconv CLI"""
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

RNG = np.random.default_rng(7)


def build(c, leak):
    """x [2, 9, c] -> layer norm (written out) -> y; leak: the centred values also feed an output."""
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(RNG.uniform(0.5, 1.5, c).astype(np.float32), "gamma"),
             numpy_helper.from_array(RNG.uniform(-0.5, 0.5, c).astype(np.float32), "beta")]
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["p"]), helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["s"]),
             helper.make_node("Div", ["d", "s"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["g"]),
             helper.make_node("Add", ["g", "beta"], ["y"])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 9, c])]
    if leak:
        outs.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 9, 1]))
    g = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 9, c])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    a = ap.parse_args()
    res = {"pass": 0, "fail": 0}
    tmp = tempfile.mkdtemp()
    have_dev = subprocess.run([a.lowconv, "devices"], capture_output=True, text=True).stdout.count("opencl:") > 0
    for c, leak in ((37, False), (240, False), (37, True)):
        path = os.path.join(tmp, f"ln{c}{leak}.onnx")
        onnx.save(build(c, leak), path)
        x = RNG.standard_normal((2, 9, c)).astype(np.float32) * 3 + 1
        np.save(os.path.join(tmp, "x.npy"), x)
        ref = ort.InferenceSession(path).run(["y"], {"x": x})[0]
        for dev in ([], ["--device", "opencl"]) if have_dev else ([],):
            info = subprocess.run([a.lowconv, "info", path] + dev, capture_output=True, text=True)
            fused = "LayerNormalization x1" in info.stdout
            od = tempfile.mkdtemp(dir=tmp)
            r = subprocess.run([a.lowconv, "run", path, "--input", "x=" + os.path.join(tmp, "x.npy"), "--output-dir", od]
                               + dev, capture_output=True, text=True)
            got = np.load(os.path.join(od, "y.npy")) if r.returncode == 0 and os.path.exists(os.path.join(od, "y.npy")) else None
            err = float(np.abs(got - ref).max() / np.abs(ref).max()) if got is not None else float("inf")
            on_cpu = "on the CPU:" in info.stdout
            ok = err <= 1e-4 and fused == (not leak) and not (dev and on_cpu and not leak)
            res["pass" if ok else "fail"] += 1
            print("  %-32s %s fused %s err/max %.2e%s" % (f"C={c} leak={leak} {'device' if dev else 'cpu'}",
                                                      "PASS" if ok else "FAIL", fused, err,
                                                      "" if r.returncode == 0 else ": " + r.stderr.strip()[-300:]))
    print("%d passed, %d failed" % (res["pass"], res["fail"]))
    return 1 if res["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
