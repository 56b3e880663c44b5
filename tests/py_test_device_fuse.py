"""Device fusions of nearest integer upsampling and of Resizes into a Concat
(src/model/fuse_upsample.c) through the CLI: small nets with odd sizes, factors 2 and 3, batch 2,
NCHW, on the OpenCL device (PoCL in CI) against the CPU runner on the same input (which does not
fuse them): max abs error <= 1e-4 * max|CPU output| (the device sums in another order). `info`
shows the fused path taken: the conv's route carries "upF", a Concat of Resizes becomes one
UpConcat, the Resizes are gone from the op list; Resizes that are not exact o / f copies
(align_corners x3, a factor that differs between H and W) or that have another reader stay, so
does a Concat along H. Then the OCR-det-like net with the 96-channel neck (od96) at 64x64.
Squeeze-and-excitation (src/model/fuse_device.c "_se"): a net of SE blocks (C = 20 at 11x13,
C = 132 at 8x12 with Mul(gate, x), a gate that is also a graph output: not fused, C = 12 at 37x41
and 16 at 36x40: planes in 2 slices) on the device
against the CPU, f32 (max abs error as above) and q8 / q4 (block 16, policy all: cosine >= 0.999);
`info` shows the gate convs tagged "se" and their Muls gone; LOWCONV_CL_SE=cpu (the CPU conv op
with "_se", the device's fallback) matches too, LOWCONV_SE_FUSE=0 leaves the Muls.
No OpenCL device: skipped (LC_REQUIRE_OPENCL=1 makes that a failure).
Usage: py_test_device_fuse.py --lowconv CLI"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_PY = os.path.join(os.path.dirname(HERE), ".venv", "bin", "python")

try:
    import numpy as np
    import onnx
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
except ImportError:
    if os.path.exists(VENV_PY) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.dirname(os.path.dirname(VENV_PY))):
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    print("onnx/numpy not available: 0 passed, 0 failed, 1 skipped")
    sys.exit(0)

sys.path.insert(0, os.path.join(HERE, "models"))
import ocr_det  # noqa: E402

DEVICE = ["--device", "opencl", "--tune", "none"]
TOL = 1e-4


def run(cli, args, env=None):
    return subprocess.run([cli] + args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **env) if env else None)


class G:
    """A graph under construction: nodes, initializers, inputs with their test data."""

    def __init__(self, seed):
        self.rng, self.nodes, self.inits, self.inputs, self.data, self.k = np.random.default_rng(seed), [], [], [], {}, 0

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def input(self, shape):
        n = self.name("in")
        self.inputs.append(h.make_tensor_value_info(n, T.FLOAT, list(shape)))
        self.data[n] = self.rng.standard_normal(shape).astype(np.float32)
        return n

    def const(self, a):
        n = self.name("c")
        self.inits.append(nh.from_array(np.asarray(a, np.float32) if a.dtype != np.int64 else a, n))
        return n

    def node(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(h.make_node(op, ins, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, group=1):
        w = self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(1.0 / (cin // group * k * k))
        return self.node("Conv", [x, self.const(w), self.const(self.rng.standard_normal(cout) * 0.1)],
                         pads=[k // 2] * 4, group=group)

    def resize(self, x, fh, fw, **attrs):
        return self.node("Resize", [x, "", self.const(np.array([1, 1, fh, fw], np.float32))], **attrs)

    def save(self, path, outs):
        g = h.make_graph(self.nodes, "fuse", self.inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs],
                         self.inits)
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)


def res_up_net(path):
    """Conv + Add(Resize) cases; returns (inputs, outputs, fused tags wanted, Resizes left)."""
    g = G(11)
    outs = []
    # fused: asymmetric/floor x2 (batch 2, 5 -> 7 channels, 10x14), then a ReLU after the add
    x, s = g.input((2, 5, 10, 14)), g.input((2, 7, 5, 7))
    r = g.resize(s, 2, 2, mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    outs.append(g.node("Relu", [g.node("Add", [g.conv(x, 5, 7, 3), r])]))
    # fused: half_pixel / round_prefer_floor (the defaults) x3, the Resize as the Add's first operand, 9x15
    x3, s3 = g.input((2, 6, 9, 15)), g.input((2, 4, 3, 5))
    outs.append(g.node("Add", [g.resize(s3, 3, 3, mode="nearest"), g.conv(x3, 6, 4, 1)]))
    # fused: depthwise conv, x3 with tf_half_pixel_for_nn / floor
    xd, sd = g.input((1, 6, 9, 12)), g.input((1, 6, 3, 4))
    rd = g.resize(sd, 3, 3, mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="floor")
    outs.append(g.node("Add", [g.conv(xd, 6, 6, 3, group=6), rd]))
    # left: align_corners (not o / f), factors 2 x 3 on H and W, and a Resize with a second reader
    # (align_corners x2 happens to be exactly o / 2 and fuses; x3 is not: 3 -> 9 reads row 1 at o = 6)
    xa, sa = g.input((1, 3, 9, 15)), g.input((1, 5, 3, 5))
    ra = g.resize(sa, 3, 3, mode="nearest", coordinate_transformation_mode="align_corners")
    outs.append(g.node("Add", [g.conv(xa, 3, 5, 3), ra]))
    xb, sb = g.input((1, 3, 10, 15)), g.input((1, 5, 5, 5))
    outs.append(g.node("Add", [g.conv(xb, 3, 5, 3), g.resize(sb, 2, 3, mode="nearest")]))
    xc, sc = g.input((1, 3, 10, 14)), g.input((1, 5, 5, 7))
    rc = g.resize(sc, 2, 2, mode="nearest")
    outs += [g.node("Add", [g.conv(xc, 3, 5, 3), rc]), g.node("Sigmoid", [rc])]
    g.save(path, outs)
    return g.data, {"up2": 1, "up3": 2, "UpConcat": 0}, 3


def concat_net(path):
    """Concats of Resizes and plain tensors; returns (inputs, UpConcats wanted, Resizes left)."""
    g = G(12)
    # fused, 6 inputs (two launches of 4): nearest x3 (asymmetric/floor), plain, linear x3 half_pixel,
    # nearest x3 (defaults), linear align_corners by sizes (3x5 -> 9x15), and a conv output; batch 2
    a, b, c = g.input((2, 3, 3, 5)), g.input((2, 2, 9, 15)), g.input((2, 4, 3, 5))
    d, e, x = g.input((2, 1, 3, 5)), g.input((2, 5, 3, 5)), g.input((2, 3, 9, 15))
    ins = [g.resize(a, 3, 3, mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), b,
           g.resize(c, 3, 3, mode="linear"), g.resize(d, 3, 3, mode="nearest"),
           g.node("Resize", [e, "", "", g.const(np.array([2, 5, 9, 15], np.int64))], mode="linear",
                  coordinate_transformation_mode="align_corners"), g.conv(x, 3, 2, 3)]
    outs = [g.node("Concat", ins, axis=1)]
    # fused: a Resize with a second reader stays, the other one goes (odd 7x11 -> 14x22, factor 2)
    f, h2 = g.input((1, 2, 7, 11)), g.input((1, 3, 7, 11))
    rf, rh = g.resize(f, 2, 2, mode="nearest"), g.resize(h2, 2, 2, mode="linear")
    outs += [g.node("Concat", [rf, rh], axis=-3), g.node("Relu", [rf])]
    # left: along H
    k1, k2 = g.input((1, 2, 3, 4)), g.input((1, 2, 5, 8))
    outs.append(g.node("Concat", [g.resize(k1, 2, 2, mode="nearest"), k2], axis=2))
    g.save(path, outs)
    return g.data, 2, 2


def se_net(path):
    """SE blocks: conv 3x3, GlobalAveragePool, 1x1 + Relu, 1x1, HardSigmoid, Mul, conv 1x1; returns
    (inputs, SE fusions wanted, Muls left)."""
    g = G(13)
    outs = []
    # the last two planes are split over 2 work-groups per channel (scalar and float4 path)
    for i, (c, hh, ww) in enumerate(((20, 11, 13), (132, 8, 12), (8, 5, 7), (12, 37, 41), (16, 36, 40))):
        x = g.conv(g.input((1, 3, hh, ww)), 3, c, 3)
        s = g.node("Relu", [g.conv(g.node("GlobalAveragePool", [x]), c, c // 4, 1)])
        gate = g.node("HardSigmoid", [g.conv(s, c // 4, c, 1)], alpha=0.25, beta=0.45)
        y = g.node("Mul", [gate, x] if i == 1 else [x, gate])
        outs.append(g.conv(y, c, 5, 1))
        if i == 2:
            outs.append(gate)  # a second reader: the Mul stays
    g.save(path, outs)
    return g.data, 4, 1


def se_info(cli, path, env=None, dev=DEVICE):
    """(process, convs tagged se, Muls left, (kernels, nodes on the CPU))."""
    p = run(cli, ["info", path] + dev, env)
    m = re.search(r"\bMul x(\d+)", p.stdout)
    k = re.search(r"(\d+) kernels per run, (\d+) nodes on the CPU", p.stdout)
    return (p, len(re.findall(r"\+se\b|\sse\s", p.stdout)), int(m.group(1)) if m else 0,
            (int(k.group(1)), int(k.group(2))) if k else None)


def outputs(cli, tmp, name, path, data, args, env=None):
    """The outputs of `run` as {file: array}, or the failed process."""
    out = os.path.join(tmp, name)
    os.makedirs(out, exist_ok=True)
    cmd = ["run", path, "--output-dir", out] + args
    for k, v in data.items():
        f = os.path.join(tmp, "%s_%s.npy" % (name, k))
        np.save(f, v)
        cmd += ["--input", "%s=%s" % (k, f)]
    p = run(cli, cmd, env)
    if p.returncode:
        return p
    return {f: np.load(os.path.join(out, f)) for f in sorted(os.listdir(out)) if f.endswith(".npy")}


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def check_se(cli, tmp, res):
    path = os.path.join(tmp, "se.onnx")
    data, want, muls = se_net(path)
    for tag, env, w_se, w_mul, cpu_nodes in (("se/info", None, want, muls, 0),
                                             ("se/info LOWCONV_CL_SE=cpu", {"LOWCONV_CL_SE": "cpu"}, want, muls, want),
                                             ("se/info LOWCONV_SE_FUSE=0", {"LOWCONV_SE_FUSE": "0"}, 0, muls + want, 0)):
        p, se, mul, k = se_info(cli, path, env)
        ok = p.returncode == 0 and se == w_se and mul == w_mul and k is not None and k[1] == cpu_nodes
        res["pass" if ok else "fail"] += 1
        print("  %-34s %s se x%d (want %d), Mul x%d (want %d), (kernels, on CPU) %s (want %d on CPU)%s" % (
            tag, "PASS" if ok else "FAIL", se, w_se, mul, w_mul, k, cpu_nodes, "" if ok else p.stderr.strip()[-400:]))
    for fmt, wargs in (("f32", []), ("q8", ["--weights", "q8", "--block", "16"]),
                       ("q4", ["--weights", "q4", "--q4-policy", "all", "--block", "16"])):
        ref = outputs(cli, tmp, "se_cpu_" + fmt, path, data, wargs)
        for tag, env in (("", None), (" (CL_SE=cpu)", {"LOWCONV_CL_SE": "cpu"}), (" (SE_FUSE=0)", {"LOWCONV_SE_FUSE": "0"})):
            got = outputs(cli, tmp, "se_dev_" + fmt, path, data, wargs + DEVICE, env)
            name = "se/%s%s" % (fmt, tag)
            bad = [r for r in (ref, got) if not isinstance(r, dict)]
            if bad or not ref or ref.keys() != got.keys():
                res["fail"] += 1
                print("  %-34s FAIL %s" % (name, bad[0].stderr.strip()[-400:] if bad else "outputs differ"))
                continue
            err = max(float(np.max(np.abs(got[f].astype(np.float64) - r))) / max(float(np.abs(r).max()), 1e-6)
                      for f, r in ref.items())
            cos = min(cosine(got[f], r) for f, r in ref.items())
            ok = all(got[f].shape == r.shape for f, r in ref.items()) and (err <= TOL if fmt == "f32" else cos >= 0.999)
            res["pass" if ok else "fail"] += 1
            print("  %-34s %s %d outputs, err/max %.2e, cosine %.7f (%s)" % (
                name, "PASS" if ok else "FAIL", len(ref), err, cos, "<= %g" % TOL if fmt == "f32" else ">= 0.999"))


def info_of(cli, path, shapes):
    p = run(cli, ["info", path] + shapes + DEVICE)
    ups = {}
    for tag in re.findall(r"\b(up\d+)\b", p.stdout):
        ups[tag] = ups.get(tag, 0) + 1
    m = re.search(r"Resize x(\d+)", p.stdout)
    uc = re.search(r"UpConcat x(\d+)", p.stdout)
    ups["UpConcat"] = int(uc.group(1)) if uc else 0
    k = re.search(r"(\d+) kernels per run, (\d+) nodes on the CPU", p.stdout)
    return p, ups, int(m.group(1)) if m else 0, (int(k.group(1)), int(k.group(2))) if k else None


def compare(cli, tmp, name, path, data, res):
    got = {}
    for where, dev in (("cpu", []), ("dev", DEVICE)):
        r = outputs(cli, tmp, name + "_" + where, path, data, dev)
        if not isinstance(r, dict):
            res["fail"] += 1
            print("  %-34s FAIL (%s) exit %d: %s" % (name, where, r.returncode, r.stderr.strip()[-400:]))
            return
        got[where] = r
    worst, ok = 0.0, bool(got["cpu"]) and got["cpu"].keys() == got["dev"].keys()
    for f, ref in got["cpu"].items():
        dev = got["dev"].get(f)
        if dev is None or dev.shape != ref.shape:
            ok = False
            continue
        worst = max(worst, float(np.max(np.abs(dev.astype(np.float64) - ref))) / max(float(np.abs(ref).max()), 1e-6))
    ok = ok and worst <= TOL
    res["pass" if ok else "fail"] += 1
    print("  %-34s %s %d outputs, err/max %.2e (<= %g)" % (name + "/values", "PASS" if ok else "FAIL",
                                                           len(got["cpu"]), worst, TOL))


def have_device(cli):
    p = run(cli, ["devices"])
    return p.returncode == 0 and any(l.startswith("opencl:") for l in p.stdout.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    a = ap.parse_args()
    res = {"pass": 0, "fail": 0}
    if not have_device(a.lowconv):
        req = os.environ.get("LC_REQUIRE_OPENCL", "") not in ("", "0")
        print("no OpenCL device: %d passed, %d failed, 1 skipped" % (0, 1 if req else 0))
        return 1 if req else 0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("LOWCONV_CACHE_DIR", os.path.join(tmp, "cache"))
        path = os.path.join(tmp, "res_up.onnx")
        data, want, left = res_up_net(path)
        p, ups, resizes, k = info_of(a.lowconv, path, [])
        ok = p.returncode == 0 and ups == want and resizes == left and k is not None and k[1] == 0
        res["pass" if ok else "fail"] += 1
        print("  %-34s %s fused %s (want %s), Resize x%d left (want %d), kernels %s%s" % (
            "res_up/info", "PASS" if ok else "FAIL", ups, want, resizes, left, k, "" if ok else p.stderr.strip()[-400:]))
        compare(a.lowconv, tmp, "res_up", path, data, res)
        path = os.path.join(tmp, "concat.onnx")
        data, want, left = concat_net(path)
        p, ups, resizes, k = info_of(a.lowconv, path, [])
        ok = p.returncode == 0 and ups["UpConcat"] == want and resizes == left and k is not None and k[1] == 0
        res["pass" if ok else "fail"] += 1
        print("  %-34s %s UpConcat x%d (want %d), Resize x%d left (want %d), kernels %s%s" % (
            "concat/info", "PASS" if ok else "FAIL", ups["UpConcat"], want, resizes, left, k,
            "" if ok else p.stderr.strip()[-400:]))
        compare(a.lowconv, tmp, "concat", path, data, res)
        path = os.path.join(tmp, "od96.onnx")
        onnx.save(ocr_det.build(64, neck=96), path)
        x = np.random.default_rng(5).standard_normal((1, 3, 64, 64)).astype(np.float32)
        p, ups, resizes, k = info_of(a.lowconv, path, [])
        ok = p.returncode == 0 and ups == {"up2": 3, "UpConcat": 1} and not resizes and k is not None and k[1] == 0
        res["pass" if ok else "fail"] += 1
        print("  %-34s %s fused %s, Resize x%d left, (kernels, on CPU) %s%s" % (
            "od96/info", "PASS" if ok else "FAIL", ups, resizes, k, "" if ok else p.stderr.strip()[-400:]))
        compare(a.lowconv, tmp, "od96", path, {"input": x}, res)
        p, se, mul, k = se_info(a.lowconv, path)
        ok = p.returncode == 0 and se == 5 and mul == 0
        res["pass" if ok else "fail"] += 1
        print("  %-34s %s se x%d (want 5), Mul x%d left (want 0)%s" % (
            "od96/se", "PASS" if ok else "FAIL", se, mul, "" if ok else p.stderr.strip()[-400:]))
        check_se(a.lowconv, tmp, res)
    print("%d passed, %d failed" % (res["pass"], res["fail"]))
    return 1 if res["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
