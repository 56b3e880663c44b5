"""Whole models on the OpenCL device (`lowconv run --device opencl`, PoCL in CI) against the CPU
runner on the same input: the generated nets (tests/models/: IResNet-34, MobileNetV2, an
OCR-det-like DBNet) and, when the PP-OCR wheel is in BUILD_DIR/rapidocr (py_test_rapidocr.py
downloads it), the real PP-OCR det/cls/rec models. fp32: max abs error <= 1e-4 * max|CPU output|
(1e-3 for rec, as in py_test_rapidocr.py); q8 and q4 (block 32, default policy): cosine >= 0.999
with the CPU path on the same quantized weights. Every node must run on the device (`info`
lists none on the CPU). PoCL is slow, so inputs are small (64x64; det 160x160, rec 48x160) and
tuning is off. No OpenCL device: skipped (LC_REQUIRE_OPENCL=1 makes that a failure).
Usage: py_test_device_nets.py --lowconv CLI [--build-dir DIR]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_PY = os.path.join(os.path.dirname(HERE), ".venv", "bin", "python")

try:
    import numpy as np
    import onnx
except ImportError:
    if os.path.exists(VENV_PY) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.dirname(os.path.dirname(VENV_PY))):
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    print("onnx/numpy not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)

sys.path.insert(0, os.path.join(HERE, "models"))
import iresnet34  # noqa: E402
import mobilenetv2  # noqa: E402
import ocr_det  # noqa: E402

DEVICE = ["--device", "opencl", "--tune", "none"]
NETS = (("iresnet34", iresnet34.build, 64), ("mobilenetv2", mobilenetv2.build, 64), ("ocr_det", ocr_det.build, 64))
PPOCR = (("ch_PP-OCRv4_det_infer.onnx", (1, 3, 160, 160), 1e-4),
         ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192), 1e-4),
         ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 160), 1e-3))
RUNS = (("f32", []), ("q8", ["--weights", "q8", "--block", "32"]), ("q4", ["--weights", "q4", "--block", "32"]))
COS_MIN = 0.999


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def run(cli, args):
    return subprocess.run([cli] + args, capture_output=True, text=True, timeout=600)


def outputs(d):
    return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def check_model(cli, tmp, name, path, x, tol, runs, res):
    x_npy = os.path.join(tmp, name + "_x.npy")
    np.save(x_npy, x)
    inp = onnx.load(path, load_external_data=False).graph.input[0].name
    shape = ["--shape", "%s=%s" % (inp, "x".join(str(d) for d in x.shape))]
    info = run(cli, ["info", path] + shape + DEVICE)
    on_cpu = [l.strip() for l in info.stdout.splitlines() if l.strip().startswith("on the CPU")]
    ok = info.returncode == 0 and not on_cpu
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s %s" % (name + "/info", "PASS" if ok else "FAIL",
                             "; ".join(on_cpu) if on_cpu else "every node on the device" if ok else info.stderr.strip()))
    for tag, extra in runs:
        got = {}
        t = {}
        for where, dev in (("cpu", []), ("dev", DEVICE)):
            out = os.path.join(tmp, "%s_%s_%s" % (name, tag, where))
            os.makedirs(out, exist_ok=True)
            t0 = time.time()
            p = run(cli, ["run", path, "--input", "%s=%s" % (inp, x_npy), "--output-dir", out] + shape + extra + dev)
            t[where] = time.time() - t0
            if p.returncode != 0:
                got = None
                res["fail"] += 1
                print("  %-40s FAIL (%s) exit %d: %s" % (name + "/" + tag, where, p.returncode, p.stderr.strip()))
                break
            got[where] = outputs(out)
        if got is None:
            continue
        for f, ref in got["cpu"].items():
            dev = got["dev"].get(f)
            label = "%s/%s %s" % (name, tag, f[:-4][:16])
            if dev is None or dev.shape != ref.shape:
                res["fail"] += 1
                print("  %-40s FAIL missing or shape %s" % (label, None if dev is None else dev.shape))
                continue
            scale = max(float(np.abs(ref).max()), 1e-6)
            err = float(np.max(np.abs(dev.astype(np.float64) - ref))) / scale
            cos = cosine(dev, ref)
            ok = err <= tol if tag == "f32" else cos >= COS_MIN
            res["pass" if ok else "fail"] += 1
            print("  %-40s %s cpu %.1fs device %.1fs err/max %.2e (%s) cosine %.7f" % (
                label, "PASS" if ok else "FAIL", t["cpu"], t["dev"], err, "<= %g" % tol if tag == "f32" else "info",
                cos))


def check_fallback_and_errors(cli, tmp, res):
    """A Gather whose indices are computed has no device kernel: it runs on the CPU between transfers
    (the casts around it do run on the device), info lists it, the result is exact. An unknown device
    and a plan larger than the device fail with a message."""
    from onnx import helper as h, TensorProto as T
    g = h.make_graph([h.make_node("Mul", ["x", "ten"], ["a"]), h.make_node("Cast", ["i"], ["j"], to=T.INT64),
                      h.make_node("Gather", ["a", "j"], ["b"], axis=1), h.make_node("Cast", ["b"], ["c"], to=T.INT32),
                      h.make_node("Cast", ["c"], ["d"], to=T.FLOAT), h.make_node("Relu", ["d"], ["y"])], "fallback",
                     [h.make_tensor_value_info("x", T.FLOAT, [3, 8]), h.make_tensor_value_info("i", T.FLOAT, [5])],
                     [h.make_tensor_value_info("y", T.FLOAT, [3, 5])], [h.make_tensor("ten", T.FLOAT, [1], [10.0])])
    path = os.path.join(tmp, "fallback.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    x = np.random.default_rng(3).standard_normal((3, 8)).astype(np.float32)
    i = np.array([7, 0, 3, 3, 5], np.float32)
    np.save(os.path.join(tmp, "fb_x.npy"), x)
    np.save(os.path.join(tmp, "fb_i.npy"), i)
    info = run(cli, ["info", path] + DEVICE)
    on_cpu = [l for l in info.stdout.splitlines() if l.strip().startswith("on the CPU")]
    out = os.path.join(tmp, "fb_out")
    os.makedirs(out, exist_ok=True)
    p = run(cli, ["run", path, "--input", "x=" + os.path.join(tmp, "fb_x.npy"), "--input",
                  "i=" + os.path.join(tmp, "fb_i.npy"), "--output-dir", out] + DEVICE)
    ok = info.returncode == 0 and len(on_cpu) == 1 and "Gather" in on_cpu[0] and p.returncode == 0
    if ok:
        want = np.maximum((x * np.float32(10))[:, i.astype(np.int64)].astype(np.int32).astype(np.float32), 0)
        ok = np.array_equal(np.load(os.path.join(out, "y.npy")), want)
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s %s; result %s" % ("fallback", "PASS" if ok else "FAIL", "; ".join(l.strip() for l in on_cpu),
                                         "exact" if ok else p.stderr.strip()))
    bad = run(cli, ["info", path, "--device", "gpu"])
    ok = bad.returncode != 0 and "unknown" in bad.stderr
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s %s" % ("unknown device", "PASS" if ok else "FAIL", bad.stderr.strip()))
    # 24 outputs of 1.6e9 floats (6.4 GB each, under the 2^31-element limit), all live at the end:
    # 154 GB, more than any device (an 80 GB H100 holds one 14.4 GB tensor, which used to be the case)
    n_big, side = 24, 40000
    nodes = [h.make_node("Mul", ["x", "k%d" % k], ["m%d" % k]) for k in range(n_big)]
    nodes += [h.make_node("Expand", ["m%d" % k, "shp"], ["y%d" % k]) for k in range(n_big)]
    g = h.make_graph(nodes, "big", [h.make_tensor_value_info("x", T.FLOAT, [1, 1])],
                     [h.make_tensor_value_info("y%d" % k, T.FLOAT, [side, side]) for k in range(n_big)],
                     [h.make_tensor("shp", T.INT64, [2], [side, side])] +
                     [h.make_tensor("k%d" % k, T.FLOAT, [1], [k + 1.0]) for k in range(n_big)])
    path = os.path.join(tmp, "big.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    big = run(cli, ["info", path] + DEVICE)
    ok = big.returncode != 0 and re.search(r"\d{10,} bytes", big.stderr) is not None and "Traceback" not in big.stderr
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s %s" % ("too big for the device", "PASS" if ok else "FAIL", big.stderr.strip()))


def check_async_open(cli, tmp, res):
    """The device's context opens on a thread of its own while the plan folds the weights and packs
    them for the device: the open's errors are the ones the serial open (LOWCONV_DEVICE_OPEN=serial)
    gives, word for word, and the weights packed before the device opened (LOWCONV_CL_STAGE=1) give
    the outputs of those packed at op init bit for bit, also when they go up in pinned pieces."""
    path, x_npy = os.path.join(tmp, "iresnet34.onnx"), os.path.join(tmp, "iresnet34_x.npy")
    inp = onnx.load(path, load_external_data=False).graph.input[0].name

    def go(env, tag):
        out = os.path.join(tmp, "async_" + tag)
        os.makedirs(out, exist_ok=True)
        p = subprocess.run([cli, "run", path, "--input", "%s=%s" % (inp, x_npy), "--output-dir", out] + DEVICE,
                           capture_output=True, text=True, timeout=600, env=dict(os.environ, **env))
        return p, (outputs(out) if p.returncode == 0 else None)

    for bad in ("zero", "9:0", "0:99"):
        a, _ = go({"LOWCONV_OPENCL_DEVICE": bad}, "bad")
        b, _ = go({"LOWCONV_OPENCL_DEVICE": bad, "LOWCONV_DEVICE_OPEN": "serial"}, "bad")
        ok = a.returncode != 0 and a.returncode == b.returncode and a.stderr == b.stderr and "opencl" in a.stderr
        res["pass" if ok else "fail"] += 1
        print("  %-40s %s %s" % ("async open, LOWCONV_OPENCL_DEVICE=" + bad, "PASS" if ok else "FAIL",
                                 a.stderr.strip() if ok else "async: %r, serial: %r" % (a.stderr, b.stderr)))
    ref = None
    for tag, env in (("packed at init", {}), ("packed early", {"LOWCONV_CL_STAGE": "1"}),
                     ("packed early, pinned pieces", {"LOWCONV_CL_STAGE": "1", "LOWCONV_CL_PINNED": "1",
                                                      "LOWCONV_CL_UPLOAD_CHUNK": "65536"}),
                     ("serial open", {"LOWCONV_DEVICE_OPEN": "serial"})):
        p, got = go(dict(env, LOWCONV_CL_TIMING="1"), tag.replace(" ", "_").replace(",", ""))
        m = re.search(r"packing [\d.]+ ms \((\d+) convs packed before", p.stderr)
        early = int(m.group(1)) if m else -1
        if ref is None:
            ref = got
        ok = got is not None and ref is not None and all(np.array_equal(got[f], ref[f]) for f in ref)
        ok = ok and (early > 0) == (tag.startswith("packed early"))
        res["pass" if ok else "fail"] += 1
        print("  %-40s %s %d convs packed early%s" % ("async open, " + tag, "PASS" if ok else "FAIL", early,
                                                     "; outputs equal bit for bit" if ok else ": " + p.stderr.strip()[-300:]))


def bench_json(cli, path, env=None, extra=()):
    p = subprocess.run([cli, "bench", path, "--repeat", "1", "--json"] + list(extra) + DEVICE, capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, **(env or {})))
    try:
        return json.loads(p.stdout), p
    except ValueError:
        return None, p


def check_memory(cli, tmp, res):
    """Device activation memory: at most 1.2x the CPU runner's plan for the same model (both in
    bench --json). Buffers kept within the device's largest allocation (LOWCONV_CL_MAX_ALLOC, a
    test hook) give the same output; a tensor larger than that, and a device too small for the
    plan (LOWCONV_CL_GLOBAL_MEM), fail at plan time naming the bytes, before anything runs."""
    for name, _, _ in NETS:
        j, p = bench_json(cli, os.path.join(tmp, name + ".onnx"))
        dev, cpu = (j or {}).get("device_activation_bytes", 0), (j or {}).get("cpu_activation_bytes", 0)
        ok = bool(j) and 0 < dev <= 1.2 * cpu
        res["pass" if ok else "fail"] += 1
        print("  %-40s %s device %s B, CPU plan %s B (<= 1.2x)%s" % (name + "/activation memory", "PASS" if ok else "FAIL",
                                                                   dev, cpu, "" if j else ": " + p.stderr.strip()[-300:]))
    path = os.path.join(tmp, "iresnet34.onnx")
    j, _ = bench_json(cli, path)
    whole = (j or {}).get("device_activation_bytes", 0)
    # bench --no-io: the timed runs skip the transfers, and say so
    jn, pn = bench_json(cli, path, None, ["--no-io", "--repeat", "3"])
    ok = bool(j) and bool(jn) and j.get("io") is True and jn.get("io") is False and jn.get("median_ms", 0) > 0
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s io %s / %s%s" % ("bench --no-io", "PASS" if ok else "FAIL", (j or {}).get("io"),
                                       (jn or {}).get("io"), "" if jn else ": " + pn.stderr.strip()[-300:]))
    x = os.path.join(tmp, "iresnet34_x.npy")
    ref = outputs(os.path.join(tmp, "iresnet34_f32_dev"))
    limit = str(whole // 2)  # at least the largest activation: each buffer holds one at a time
    js, p = bench_json(cli, path, {"LOWCONV_CL_MAX_ALLOC": limit})
    out = os.path.join(tmp, "split_out")
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([cli, "run", path, "--input", "input=" + x, "--output-dir", out] + DEVICE, capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, LOWCONV_CL_MAX_ALLOC=limit))
    got = outputs(out) if r.returncode == 0 else {}
    same = bool(ref) and got.keys() == ref.keys() and all(np.array_equal(got[k], ref[k]) for k in ref)
    ok = bool(js) and js.get("arena_buffers", 0) > 1 and same
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s max alloc %s B: %s buffers, %s B (whole %s B); output %s" % (
        "arena split", "PASS" if ok else "FAIL", limit, (js or {}).get("arena_buffers"),
        (js or {}).get("device_activation_bytes"), whole, "identical" if same else (r.stderr or p.stderr).strip()[-300:]))
    for env, want in (({"LOWCONV_CL_MAX_ALLOC": "4096"}, "more than the device's largest buffer (4096 bytes)"),
                      ({"LOWCONV_CL_GLOBAL_MEM": "100000"}, "bytes of device memory")):
        out = os.path.join(tmp, "oom_out_" + list(env)[0])
        r = subprocess.run([cli, "run", path, "--input", "input=" + x, "--output-dir", out] + DEVICE,
                           capture_output=True, text=True, timeout=600, env=dict(os.environ, **env))
        msg = r.stderr.strip()
        ok = r.returncode == 1 and want in msg and re.search(r"\d{6,} bytes", msg) is not None and (not os.path.isdir(out) or not os.listdir(out))
        if "GLOBAL" in list(env)[0]:
            ok = ok and "has 100000" in msg
        res["pass" if ok else "fail"] += 1
        print("  %-40s %s %s" % ("device too small (%s)" % list(env)[0], "PASS" if ok else "FAIL", msg))


def have_device(cli):
    p = run(cli, ["devices"])
    return p.returncode == 0 and any(l.startswith("opencl:") for l in p.stdout.splitlines())


def check_pinned_views(cli, tmp, res):
    """Inputs and outputs of 64 KiB or more live in pinned host memory (NVIDIA copies pageable memory
    through its own staging at a fifth of the speed), outputs that are views of a device buffer too:
    a Sigmoid in place on a ConvTranspose (OCR-det's head) and a Reshape of a conv; views of a
    constant (Reshape, Identity) are left alone. bench --json and info report the pinned bytes; the outputs
    match the CPU runner."""
    from onnx import helper as h, TensorProto as T, numpy_helper as nh
    rng = np.random.default_rng(11)
    wt = nh.from_array(rng.standard_normal((4, 2, 2, 2)).astype(np.float32), "wt")
    wc = nh.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "wc")
    shp = nh.from_array(np.array([1, 8, 96 * 96], np.int64), "shp")
    k = nh.from_array(rng.standard_normal((1, 16, 64, 64)).astype(np.float32), "k")
    kshp = nh.from_array(np.array([1, 16, 4096], np.int64), "kshp")
    g = h.make_graph([h.make_node("ConvTranspose", ["x", "wt"], ["t"], strides=[2, 2]), h.make_node("Sigmoid", ["t"], ["a"]),
                      h.make_node("Conv", ["x", "wc"], ["c"], pads=[1, 1, 1, 1]), h.make_node("Reshape", ["c", "shp"], ["b"]),
                      h.make_node("Reshape", ["k", "kshp"], ["kr"]), h.make_node("Identity", ["k"], ["ki"])],
                     "views", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 96, 96])],
                     [h.make_tensor_value_info("a", T.FLOAT, [1, 2, 192, 192]), h.make_tensor_value_info("b", T.FLOAT, [1, 8, 9216]),
                      h.make_tensor_value_info("kr", T.FLOAT, [1, 16, 4096]), h.make_tensor_value_info("ki", T.FLOAT, [1, 16, 64, 64])],
                     [wt, wc, shp, k, kshp])
    path = os.path.join(tmp, "views.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    x = rng.standard_normal((1, 4, 96, 96)).astype(np.float32)
    check_model(cli, tmp, "views", path, x, 1e-4, RUNS[:1], res)
    j, p = bench_json(cli, path)
    want = 4 * (4 * 96 * 96 + 2 * 192 * 192 + 8 * 9216)
    info = run(cli, ["info", path] + DEVICE)
    ok = bool(j) and j.get("pinned_io_bytes") == want and "pinned host memory %.3f MB" % (want / 1e6) in info.stdout
    res["pass" if ok else "fail"] += 1
    print("  %-40s %s %s B pinned (want %d)%s" % ("views/pinned io", "PASS" if ok else "FAIL", (j or {}).get("pinned_io_bytes"),
                                                  want, "" if j else ": " + p.stderr.strip()[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    res = {"pass": 0, "fail": 0, "skip": 0}
    if not have_device(a.lowconv):
        req = os.environ.get("LC_REQUIRE_OPENCL", "") not in ("", "0")
        print("no OpenCL device: %d passed, %d failed, 1 skipped" % (0, 1 if req else 0))
        return 1 if req else 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("LOWCONV_CACHE_DIR", os.path.join(tmp, "cache"))
        for name, build, size in NETS:
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(build(size), path)
            x = np.random.default_rng(size).standard_normal((1, 3, size, size)).astype(np.float32)
            check_model(a.lowconv, tmp, name, path, x, 1e-4, RUNS, res)
        check_fallback_and_errors(a.lowconv, tmp, res)
        check_async_open(a.lowconv, tmp, res)
        check_memory(a.lowconv, tmp, res)
        check_pinned_views(a.lowconv, tmp, res)
        wheel = os.path.join(a.build_dir or "", "rapidocr")
        for fname, shape, tol in PPOCR:
            found = [os.path.join(r, fname) for r, _, fs in os.walk(wheel) if fname in fs] if a.build_dir else []
            if not found:
                res["skip"] += 1
                print("  %-40s SKIP (not downloaded: run py_test_rapidocr.py first)" % fname)
                continue
            x = np.random.default_rng(7).uniform(-1, 1, shape).astype(np.float32)
            check_model(a.lowconv, tmp, fname.split("_infer")[0], found[0], x, tol, RUNS[:1], res)
    print("%.0f s; %d passed, %d failed, %d skipped" % (time.time() - t0, res["pass"], res["fail"], res["skip"]))
    return 1 if res["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
