#!/usr/bin/env python3
"""--weights q4 at load with the quantizer's plan (src/model/q4plan.c): the first load runs
`python -m lowconv quantize` once and keeps the calibrated file in the cache; a second load
reuses it without measuring (the quantizer cannot even start); the plan and its codes are the
ones `lowconv quantize` writes for the same options; a corrupt plan, a changed calibrated file
and a foreign entry are warned about and made again; q4:fast / LOWCONV_Q4_FAST keep the quick
rule; a quantized file loads as it is; without Python the quick rule is used with a warning;
the Python API reports the plan; a recognizer-like model's plan splits its classifier's rows
(q8 for the classes that matter, q4 for the rest: python/lowconv/rowsplit.py) and the load runs it.
Usage: py_test_q4plan.py --lowconv CLI --build-dir DIR"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "python"))
from pyvenv import build_args, require, sanitizer_build  # noqa: E402

if not require("numpy", "onnx", "onnxruntime"):
    print("numpy/onnx/onnxruntime not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnxcase import check, summary  # noqa: E402


def python_api(model, xin, cache, y1):
    """The same plan through lowconv.Model, from the cache."""
    import lowconv
    os.environ.update(LOWCONV_CACHE_DIR=cache)
    os.environ.pop("LOWCONV_Q4_FAST", None)
    m = lowconv.Model(model, weights="q4")
    check(m.weights_plan.startswith("plan (cached): 4 layers"), "Python weights_plan: %r" % m.weights_plan)
    yp = list(m.run({"x": np.load(xin)}).values())[0]
    check(y1 is not None and np.array_equal(yp, y1), "Python API runs the cached plan")
    check(lowconv.Model(model, weights="q4:fast").weights_plan == "", "Python q4:fast: no plan")


def row_split_plan(run, tmp, cache):
    """--weights q4 on a recognizer-like model (MatMul 64 x 1500 + bias + Softmax, 20 classes in
    play): the plan splits the classifier and the load runs the calibrated file as it is."""
    from py_test_rowsplit_quant import rec_net
    model = os.path.join(tmp, "rec.onnx")
    onnx.save(rec_net(hot=20), model)
    x = os.path.join(tmp, "rx.npy")
    np.save(x, np.random.default_rng(5).standard_normal((1, 8, 1, 24)).astype(np.float32))
    before = set(glob.glob(os.path.join(cache, "q4plan", "*.plan")))
    r = run(["run", model, "--input", "x=" + x, "--output-dir", os.path.join(tmp, "ro1"), "--weights", "q4"])
    check(r.returncode == 0 and "q4 plan: made now:" in r.stderr and "q8+q4 1" in r.stderr,
          "recognizer plan made, the classifier split: %s" % r.stderr[-800:])
    new = sorted(set(glob.glob(os.path.join(cache, "q4plan", "*.plan"))) - before)
    if r.returncode or len(new) != 1:
        check(False, "one new plan for the recognizer: %s" % new)
        return
    cal = os.path.join(new[0][:-5], "model.onnx")
    f = onnx.load(cal, load_external_data=False)
    ops = [n.op_type for n in f.graph.node]
    check(ops.count("Gather") == 1 and ops.count("Concat") == 1 and ops.count("MatMul") == 2,
          "calibrated file: two MatMul branches, Concat, Gather: %s" % ops)
    plan = open(os.path.join(new[0][:-5], "plan.txt")).read()
    check(any(ln.split()[2:3] == ["q8+q4"] for ln in plan.splitlines() if ln.startswith("layer ")),
          "plan.txt lists the split layer: %s" % plan)
    y1 = np.load(os.path.join(tmp, "ro1", "probs.npy"))
    r = run(["run", cal, "--input", "x=" + x, "--output-dir", os.path.join(tmp, "ro2")])
    y2 = np.load(os.path.join(tmp, "ro2", "probs.npy")) if r.returncode == 0 else None
    check(y2 is not None and np.array_equal(y1, y2), "--weights q4 runs the calibrated file: %s" % r.stderr[-300:])
    import onnxruntime as rt
    so = rt.SessionOptions()
    so.log_severity_level = 3
    ref = rt.InferenceSession(model, so, providers=["CPUExecutionProvider"]).run(None, {"x": np.load(x)})[0]
    check(y1.shape == ref.shape and (y1.argmax(-1) == ref.argmax(-1)).mean() >= 0.9,
          "the split plan keeps fp32's argmax: %.3f" % (y1.argmax(-1) == ref.argmax(-1)).mean())


def main():
    global CLI
    a = build_args()
    CLI = os.path.abspath(a.lowconv)
    lib = os.path.join(os.path.abspath(a.build_dir), "liblowconv.so")
    os.environ["LOWCONV_LIBRARY"] = lib
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from models import mixed_net
    tmp = tempfile.mkdtemp(prefix="lc_q4plan_")
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, LOWCONV_CACHE_DIR=cache, LOWCONV_PYTHON=sys.executable, LOWCONV_LIBRARY=lib,
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("LOWCONV_Q4_FAST", None)
    env.pop("LOWCONV_Q4_SAMPLES", None)
    san = sanitizer_build(a.build_dir)
    if san:  # the quantizer's Python loads the instrumented library: the ASan runtime goes first
        from py_test_python import sanitizer_env
        se = sanitizer_env(a.build_dir)
        if se is None:
            print("ASan runtime not found: 0 passed, 0 failed, 1 skipped")
            return 0
        wrap = os.path.join(tmp, "python")
        with open(wrap, "w") as f:
            f.write('#!/bin/sh\nLD_PRELOAD="%s" ASAN_OPTIONS=%s exec "%s" "$@"\n' % (
                se["LD_PRELOAD"], se["ASAN_OPTIONS"], sys.executable))
        os.chmod(wrap, 0o755)
        env["LOWCONV_PYTHON"] = wrap

    def run(args, **extra):
        e = dict(env, **extra)
        return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=600, env=e)

    def lc_run(model, out, *opts, **extra):
        r = run(["run", model, "--input", "x=" + xin, "--output-dir", out] + list(opts), **extra)
        y = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
        return r, y

    try:
        model = os.path.join(tmp, "m.onnx")
        onnx.save(mixed_net(), model)
        xin = os.path.join(tmp, "x.npy")
        np.save(xin, np.random.default_rng(3).standard_normal((1, 24, 16, 16)).astype(np.float32))

        # 1. first load: the plan is made and kept
        r, y1 = lc_run(model, os.path.join(tmp, "o1"), "--weights", "q4")
        check(r.returncode == 0 and "q4 plan: made now:" in r.stderr and "4 layers" in r.stderr,
              "first load makes the plan: %s" % r.stderr[-800:])
        plans = glob.glob(os.path.join(cache, "q4plan", "*.plan"))
        check(len(plans) == 1, "one plan in the cache: %s" % plans)
        cal = plans[0][:-5] if plans else ""
        check(os.path.exists(os.path.join(cal, "model.onnx")) and os.path.exists(os.path.join(cal, "model.onnx.data")),
              "the calibrated file is kept beside the plan")
        check(not glob.glob(os.path.join(cache, "q4plan", "*.tmp*")), "no temporary left")

        # 2. second load: from the cache, nothing measured (the quantizer could not even run)
        r, y2 = lc_run(model, os.path.join(tmp, "o2"), "--weights", "q4", LOWCONV_PYTHON="/nonexistent/python")
        check(r.returncode == 0 and "q4 plan: from the cache (nothing measured)" in r.stderr and
              "choosing" not in r.stderr, "second load from the cache: %s" % r.stderr[-800:])
        check(y1 is not None and y2 is not None and np.array_equal(y1, y2), "cached plan gives the same output")

        # 3. the same choices and codes as `lowconv quantize` with the same options
        q = os.path.join(tmp, "q", "m_q4.onnx")
        r = run(["quantize", model, "-o", q, "--block", "32"])
        check(r.returncode == 0, "lowconv quantize: %s" % r.stderr[-500:])
        if r.returncode == 0 and cal:
            ia = {t.name: t for t in onnx.load(q).graph.initializer}
            ib = {t.name: t for t in onnx.load(os.path.join(cal, "model.onnx")).graph.initializer}
            check(set(ia) == set(ib) and all(onnx.numpy_helper.to_array(ia[k]).tobytes() ==
                                             onnx.numpy_helper.to_array(ib[k]).tobytes() for k in ia),
                  "cached calibrated file == lowconv quantize's file (formats, blocks, codes, scales)")
            r, yq = lc_run(q, os.path.join(tmp, "o3"), "--weights", "q4")
            check(r.returncode == 0 and "the file's own (quantized already)" in r.stderr and
                  "made now" not in r.stderr, "a quantized file loads as it is: %s" % r.stderr[-500:])
            check(yq is not None and y1 is not None and np.array_equal(yq, y1), "same output as the quantized file")
            plan_txt = open(os.path.join(cal, "plan.txt")).read()
            rep_layers = [ln.split()[1:4] for ln in plan_txt.splitlines() if ln.startswith("layer ")]
            check(len(rep_layers) == 4 and all(f in ("q4", "q8", "f32") for _, f, _ in rep_layers),
                  "plan lists every layer's format and block: %s" % plan_txt)

        # 4. a corrupt plan: warned, made again
        if plans:
            b = bytearray(open(plans[0], "rb").read())
            b[-3] ^= 0x20
            open(plans[0], "wb").write(bytes(b))
            r, y4 = lc_run(model, os.path.join(tmp, "o4"), "--weights", "q4")
            check(r.returncode == 0 and "warning" in r.stderr and "corrupt" in r.stderr and "made now" in r.stderr,
                  "corrupt plan warned and made again: %s" % r.stderr[-800:])
            check(y4 is not None and np.array_equal(y4, y1), "remade plan, same output")
            # a changed calibrated file: warned, made again
            data = os.path.join(cal, "model.onnx.data")
            b = bytearray(open(data, "rb").read())
            b[len(b) // 2] ^= 1
            open(data, "wb").write(bytes(b))
            r, _ = lc_run(model, os.path.join(tmp, "o5"), "--weights", "q4")
            check(r.returncode == 0 and "missing or changed" in r.stderr and "made now" in r.stderr,
                  "changed calibrated file warned and made again: %s" % r.stderr[-800:])
            # a foreign entry (another key's plan under this name): warned, made again
            r = run(["info", model, "--weights", "q4"], LOWCONV_Q4_SAMPLES="3")
            other = [p for p in glob.glob(os.path.join(cache, "q4plan", "*.plan")) if p != plans[0]]
            check(r.returncode == 0 and len(other) == 1, "samples are part of the key: %s" % other)
            if other:
                shutil.copy(other[0], plans[0])
                r = run(["info", model, "--weights", "q4"])
                check(r.returncode == 0 and "foreign" in r.stderr and "made now" in r.stderr,
                      "foreign plan warned and made again: %s" % r.stderr[-800:])

        # 5. the quick rule: q4:fast, LOWCONV_Q4_FAST, no Python
        r, yf = lc_run(model, os.path.join(tmp, "o6"), "--weights", "q4:fast")
        check(r.returncode == 0 and "q4 plan" not in r.stderr, "q4:fast skips the plan: %s" % r.stderr[-300:])
        r, ym = lc_run(model, os.path.join(tmp, "o7"), "--weights", "q4", "--q4-policy", "mixed")
        check(yf is not None and ym is not None and np.array_equal(yf, ym), "q4:fast == --q4-policy mixed")
        r, ye = lc_run(model, os.path.join(tmp, "o8"), "--weights", "q4", LOWCONV_Q4_FAST="1")
        check(r.returncode == 0 and "quick rule (LOWCONV_Q4_FAST)" in r.stderr and ye is not None and
              np.array_equal(ye, yf), "LOWCONV_Q4_FAST=1: the quick rule: %s" % r.stderr[-300:])
        r, yn = lc_run(model, os.path.join(tmp, "o9"), "--weights", "q4", LOWCONV_PYTHON="/nonexistent/python",
                       LOWCONV_CACHE_DIR=os.path.join(tmp, "cache2"))
        check(r.returncode == 0 and "warning" in r.stderr and "quick rule" in r.stderr and yn is not None and
              np.array_equal(yn, yf), "no Python: warned, the quick rule: %s" % r.stderr[-500:])
        # the failure is noted: the next load does not run the quantizer again (until the note is removed)
        r, yn2 = lc_run(model, os.path.join(tmp, "o10"), "--weights", "q4", LOWCONV_PYTHON="/nonexistent/python",
                        LOWCONV_CACHE_DIR=os.path.join(tmp, "cache2"))
        notes = glob.glob(os.path.join(tmp, "cache2", "q4plan", "*.none"))
        check(r.returncode == 0 and "failed before" in r.stderr and "cannot run" not in r.stderr and len(notes) == 1 and
              yn2 is not None and np.array_equal(yn2, yf), "a failed plan is noted: %s" % r.stderr[-500:])
        r, _ = lc_run(model, os.path.join(tmp, "o12"), "--weights", "q4", LOWCONV_PYTHON="/nonexistent/other",
                      LOWCONV_CACHE_DIR=os.path.join(tmp, "cache2"))
        check("cannot run" in r.stderr and "failed before" not in r.stderr,
              "the note is the interpreter's: another one is tried: %s" % r.stderr[-500:])
        for n in glob.glob(os.path.join(tmp, "cache2", "q4plan", "*.none")):
            os.remove(n)
        r, _ = lc_run(model, os.path.join(tmp, "o11"), "--weights", "q4", LOWCONV_PYTHON="/nonexistent/python",
                      LOWCONV_CACHE_DIR=os.path.join(tmp, "cache2"))
        check("cannot run" in r.stderr, "the note removed: the quantizer is tried again: %s" % r.stderr[-500:])

        # 6. a class-score model: the plan's calibrated file holds the row split, and runs
        row_split_plan(run, tmp, cache)

        # 7. the Python API (not in a sanitizer build: this interpreter has no ASan runtime)
        if not san:
            python_api(model, xin, cache, y1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
