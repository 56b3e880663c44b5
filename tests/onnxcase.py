"""Small generated ONNX models through `lowconv run`, for the py_test_* files that build their own
(py_test_wild_ops.py, py_test_old_opset.py): a pass / fail tally, a model builder and a runner.
Needs numpy and onnx (the callers check with pyvenv.require first)."""
import os
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper

RES = {"passed": 0, "failed": 0}


def check(ok, what):
    RES["passed" if ok else "failed"] += 1
    if not ok:
        print("FAIL: " + what)


def model(nodes, inits, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run(cli, tmp, m, feeds, name, extra=()):
    """`lowconv run` on m with feeds: (outputs as arrays, stderr), or (None, stderr) if it failed."""
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    args = [cli, "run", path, "--output-dir", os.path.join(tmp, name + ".out")] + list(extra)
    for k, v in feeds.items():
        np.save(os.path.join(tmp, name + "." + k + ".npy"), v)
        args += ["--input", "%s=%s" % (k, os.path.join(tmp, name + "." + k + ".npy"))]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode:
        return None, p.stderr
    return [np.load(os.path.join(tmp, name + ".out", o.name + ".npy")) for o in m.graph.output], p.stderr


def summary():
    print("%d passed, %d failed" % (RES["passed"], RES["failed"]))
    return 1 if RES["failed"] else 0
