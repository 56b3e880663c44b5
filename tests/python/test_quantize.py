import os

import numpy as np
import pytest

import lowconv
from models import conv_net, dq_conv, mixed_net, seq_net

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T  # noqa: E402


def cos(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def ort_run(path_or_model, x):
    src = path_or_model if isinstance(path_or_model, str) else path_or_model.SerializeToString()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.fixture
def calib_files(tmp_path):
    r = np.random.default_rng(5)
    paths = []
    for i in range(3):
        p = tmp_path / ("c%d.npy" % i)
        np.save(p, np.abs(r.standard_normal((1, 24, 16, 16))).astype(np.float32))
        paths.append(str(p))
    return paths


def test_quantize_writes_standard_onnx_that_both_runtimes_agree_on(tmp_path, calib_files):
    src, out = tmp_path / "m.onnx", tmp_path / "out" / "m_q4.onnx"
    onnx.save(mixed_net(), src)
    lines = []
    rep = lowconv.quantize(str(src), str(out), weights="q4", block=32, calib=calib_files, log=lines.append)
    assert rep["target_met"] and rep["cosine_mean"] >= 0.995
    assert rep["weight_bytes"] < 0.5 * rep["fp32_weight_bytes"]
    assert any("conv1" in ln for ln in lines) and any("cosine" in ln for ln in lines)
    m = onnx.load(str(out), load_external_data=False)
    assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [21]
    onnx.checker.check_model(str(out))
    inits = {t.name: t for t in m.graph.initializer}
    dqs = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
    assert dqs, "no layer was quantized"
    for n in dqs:
        q = inits[n.input[0]]
        assert q.data_type in (T.UINT4, T.INT8)  # q4: uint4 code + 8 with zero point 8
        assert q.data_location == T.EXTERNAL or len(q.raw_data) < 1024
        attrs = {a.name: a.i for a in n.attribute}
        sc = inits[n.input[1]]
        if attrs.get("block_size"):
            b = attrs["block_size"]
            want = list(q.dims)
            want[attrs["axis"]] = -(-q.dims[attrs["axis"]] // b)
            assert list(sc.dims) == want
    assert os.path.exists(str(out) + ".data")
    x = np.load(calib_files[0])
    ref, got_ort = ort_run(mixed_net(), x), ort_run(str(out), x)
    got_lc = lowconv.Model(str(out)).run({"x": x})["y"]
    assert cos(got_ort, ref) > 0.99
    assert cos(got_lc, got_ort) >= 0.999
    mem = lowconv.Model(str(out)).memory()
    assert mem["weight_bytes"] < lowconv.Model(str(src)).memory()["weight_bytes"] / 2


def test_quantize_generated_calibration_and_q8(tmp_path):
    src, out = tmp_path / "c.onnx", tmp_path / "c_q8.onnx"
    onnx.save(conv_net(c=3, hw=32), src)
    rep = lowconv.quantize(str(src), str(out), weights="q8", block=16, samples=3, calib_kind="scene",
                           log=lambda s: None)
    assert rep["target_met"]
    assert all(r["format"] in ("q8", "f32") for r in rep["layers"])
    x = lowconv.calib.generate("text", [1, 3, 32, 32], 1, seed=9)[0]
    assert cos(lowconv.Model(str(out)).run({"x": x})["logits"], ort_run(str(out), x)) >= 0.999


def test_quantize_keeps_per_position_argmax_of_class_scores(tmp_path):
    """A Softmax output over the last axis is class scores: the choice must also keep the argmax
    of every position (a recognizer's characters); a target of 1.0 (f32 keeps every argmax) is met on the
    calibration set and the file runs alike in both runtimes; without the target it costs no more."""
    from lowconv import quantizer
    assert quantizer.class_output(seq_net()) == 0 and quantizer.class_output(mixed_net()) is None
    src = tmp_path / "s.onnx"
    onnx.save(seq_net(), src)
    r = np.random.default_rng(3)
    calib = []
    for i in range(4):
        p = tmp_path / ("s%d.npy" % i)
        np.save(p, r.standard_normal((1, 8, 1, 32)).astype(np.float32))
        calib.append(str(p))
    runs = {}
    for t in (1.0, 0.0):
        lines = []
        out = tmp_path / ("s_q4_%g.onnx" % t)
        rep = lowconv.quantize(str(src), str(out), calib=calib, target_argmax=t, log=lines.append)
        assert rep["target_met"], lines
        assert any("argmax agreement" in ln for ln in lines)
        runs[t] = (rep, out)
    rep, out = runs[1.0]
    assert rep["argmax_agreement"] == 1.0
    x = np.load(calib[0])
    ref, got = ort_run(seq_net(), x), lowconv.Model(str(out)).run({"x": x})["probs"]
    assert (ref.argmax(-1) == got.argmax(-1)).all()
    assert cos(got, ort_run(str(out), x)) >= 0.999
    assert runs[0.0][0]["weight_bytes"] <= rep["weight_bytes"]
    with pytest.raises(ValueError, match="argmax"):
        lowconv.quantize(str(src), str(tmp_path / "bad.onnx"), calib=calib, target_argmax=1.5, log=lambda s: None)


def test_quantize_bad_input(tmp_path, calib_files):
    src = tmp_path / "m.onnx"
    onnx.save(mixed_net(), src)
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((1, 24, 16, 16), np.float64))
    with pytest.raises(ValueError, match="dtype float64"):
        lowconv.quantize(str(src), str(tmp_path / "o.onnx"), calib=[str(bad)], log=lambda s: None)
    np.save(bad, np.zeros((1, 3, 16, 16), np.float32))
    with pytest.raises(ValueError, match="shape"):
        lowconv.quantize(str(src), str(tmp_path / "o.onnx"), calib=[str(bad)], log=lambda s: None)
    np.save(bad, np.full((1, 24, 16, 16), np.nan, np.float32))
    with pytest.raises(ValueError, match="NaN"):
        lowconv.quantize(str(src), str(tmp_path / "o.onnx"), calib=[str(bad)], log=lambda s: None)
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="junk.npy"):
        lowconv.quantize(str(src), str(tmp_path / "o.onnx"), calib=[str(tmp_path / "junk.npy")], log=lambda s: None)
    m = mixed_net()
    w = onnx.numpy_helper.to_array(m.graph.initializer[0]).copy()
    w[0, 0, 0, 0] = np.inf
    m.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(w, "w1"))
    onnx.save(m, tmp_path / "inf.onnx")
    with pytest.raises(ValueError, match="NaN or Inf"):
        lowconv.quantize(str(tmp_path / "inf.onnx"), str(tmp_path / "o.onnx"), calib=calib_files, log=lambda s: None)
    with pytest.raises(ValueError, match="block"):
        lowconv.quantize(str(src), str(tmp_path / "o.onnx"), block=24, calib=calib_files, log=lambda s: None)
    with pytest.raises(SystemExit):
        from lowconv.quantizer import main
        main([str(src), "-o", str(tmp_path / "o.onnx"), "--calib-shape", "axb"])


def _codes(o, i, lo, hi, seed=0):
    return np.random.default_rng(seed).integers(lo, hi + 1, size=(o, i, 3, 3)).astype(np.int8)


@pytest.mark.parametrize("case", ["int4-block16", "int4-block32-tail", "int8-per-channel", "int8-asym",
                                  "int4-int32-data", "int8-block-ge-channels", "uint4-zp", "uint4-no-zp"])
def test_loads_dequantize_linear_weights_like_onnxruntime(case):
    o, i = 12, 40
    r = np.random.default_rng(1)
    if case.startswith("int4-block"):
        b = 16 if case == "int4-block16" else 32
        codes, nb = _codes(o, i, -8, 7), -(-i // b)
        m = dq_conv(codes, r.random((o, nb, 3, 3)) * 0.1, axis=1, block=b)
    elif case == "int8-per-channel":
        m = dq_conv(_codes(o, i, -127, 127), r.random(o) * 0.01, zp=np.zeros(o, np.int8), axis=0, dtype=T.INT8)
    elif case == "int8-asym":
        m = dq_conv(_codes(o, i, -128, 127), r.random(o) * 0.01, zp=r.integers(-5, 5, o), axis=0, dtype=T.INT8)
    elif case.startswith("uint4"):
        zp = r.integers(0, 16, (o, 3, 3, 3)) if case == "uint4-zp" else None
        m = dq_conv(_codes(o, i, 0, 15), r.random((o, 3, 3, 3)) * 0.1, zp=zp, axis=1, block=16, dtype=T.UINT4)
    elif case == "int4-int32-data":
        m = dq_conv(_codes(o, i, -8, 7), r.random((o, 3, 3, 3)) * 0.1, axis=1, block=16, int32_codes=True)
    else:
        m = dq_conv(_codes(o, i, -127, 127), r.random((o, 1, 3, 3)) * 0.01, axis=1, block=64, dtype=T.INT8)
    x = r.standard_normal((1, i, 6, 6)).astype(np.float32)
    got = lowconv.Model(m.SerializeToString()).run({"x": x})["y"]
    np.testing.assert_allclose(got, ort_run(m, x), rtol=1e-4, atol=1e-4)


def test_bad_quantized_models(tmp_path):
    o, i = 4, 40
    codes = _codes(o, i, -8, 7)
    good_scale = np.full((o, 3, 3, 3), 0.1, np.float32)
    cases = [
        (dq_conv(codes, np.full((o, 2, 3, 3), 0.1), block=16), "scale shape"),
        (dq_conv(codes, good_scale, axis=0, block=16), "axis"),
        (dq_conv(codes, np.full(o + 1, 0.1), axis=0), "scale has 5 values"),
        (dq_conv(codes, np.full((o, 2, 3, 3), 0.1), block=24), "block_size 24"),
        (dq_conv(codes, good_scale, zp=np.zeros(3, np.int8), block=16), "zero point"),
        (dq_conv(codes, np.where(np.arange(o * 27).reshape(o, 3, 3, 3) == 5, np.nan, good_scale), block=16),
         "not finite"),
    ]
    for dt, v in ((T.INT8, 300), (T.INT4, -200)):  # codes out of range in int32_data
        bad = dq_conv(codes, good_scale, block=16, dtype=dt, int32_codes=True)
        bad.graph.initializer[0].int32_data[1] = v
        cases.append((bad, "out of range"))
    for model, msg in cases:
        with pytest.raises(lowconv.Error, match=msg):
            lowconv.Model(model.SerializeToString()).run({"x": np.zeros((1, i, 6, 6), np.float32)})


@pytest.mark.parametrize("loc,write,msg", [("w.bin", None, "cannot open"), ("w.bin", "short", "shorter"),
                                           ("/tmp/w.bin", "full", "relative path"),
                                           ("../w.bin", "full", "relative path"), ("w.bin", "full", None)])
def test_external_codes(tmp_path, loc, write, msg):
    o, i = 4, 40
    codes = _codes(o, i, -8, 7)
    m = dq_conv(codes, np.full((o, 3, 3, 3), 0.05, np.float32), block=16, ext=(loc, 0, None))
    qt = m.graph.initializer[0]
    raw = bytes.fromhex(qt.doc_string)
    qt.doc_string = ""
    d = tmp_path / "model"
    d.mkdir()
    if write:
        (d / "w.bin").write_bytes(raw if write == "full" else raw[:len(raw) // 2])
    path = d / "m.onnx"
    path.write_bytes(m.SerializeToString())
    x = np.random.default_rng(2).standard_normal((1, i, 6, 6)).astype(np.float32)
    if msg:
        with pytest.raises(lowconv.Error, match=msg):
            lowconv.Model(str(path)).run({"x": x})
    else:
        np.testing.assert_allclose(lowconv.Model(str(path)).run({"x": x})["y"], ort_run(str(path), x), rtol=1e-4,
                                   atol=1e-4)


def test_cli_quantize_command(tmp_path, calib_files):
    """`lowconv quantize` (the C CLI) runs the Python quantizer with the same arguments."""
    import subprocess
    import sys
    cli = os.environ.get("LOWCONV_CLI")
    if not cli:
        pytest.skip("LOWCONV_CLI not set (tests/py_test_python.py sets it)")
    src, out = tmp_path / "m.onnx", tmp_path / "m_q.onnx"
    onnx.save(mixed_net(), src)
    env = dict(os.environ, LOWCONV_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(lowconv.__file__), ".."),
                                           os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([cli, "quantize", str(src), "-o", str(out), "--calib"] + calib_files + ["--block", "16"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "output cosine vs fp32" in p.stdout and "conv1" in p.stdout
    assert out.exists()
    p = subprocess.run([cli, "quantize", str(src), "-o", str(out), "--weights", "q2"], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 2 and "q2" in p.stderr
    env["LOWCONV_PYTHON"] = str(tmp_path / "no-python")
    p = subprocess.run([cli, "quantize", str(src), "-o", str(out)], env=env, capture_output=True, text=True)
    assert p.returncode == 2 and "cannot run" in p.stderr


def test_gptq_rounding_lowers_the_output_error():
    """On correlated inputs the error-compensating rounding beats round-to-nearest on |X W^T|
    error, and stays inside the format: codes in range, one scale per (row, block)."""
    from lowconv.gptq import blocks, quantize_matrix
    r = np.random.default_rng(0)
    k, n = 96, 24
    X = r.standard_normal((4096, 8)) @ r.standard_normal((8, k)) + 0.1 * r.standard_normal((4096, k))
    W = r.standard_normal((n, k)).astype(np.float32)
    H = X.T @ X / X.shape[0]
    for fmt, qmax in (("q4", 7), ("q8", 127)):
        c0, s0, d0 = quantize_matrix(W, 32, fmt, 16)
        c1, s1, d1 = quantize_matrix(W, 32, fmt, 16, H)
        e0, e1 = np.linalg.norm(X @ (W - d0).T), np.linalg.norm(X @ (W - d1).T)
        assert e1 < 0.8 * e0, (fmt, e0, e1)
        assert np.abs(c1).max() <= qmax and s1.shape == (n, len(blocks(k, 32, 16)))
        for b, (a, e) in enumerate(blocks(k, 32, 16)):
            np.testing.assert_allclose(d1[:, a:e], c1[:, a:e] * s1[:, b:b + 1], rtol=1e-6)


def _bn_net(seed=3, hw=10):
    """Conv 3x3 (24 -> 32) + BN + Relu, Conv 1x1 (32 -> 32), GlobalAveragePool, Flatten, Gemm transB=1."""
    from onnx import helper as h, numpy_helper as nh
    r = np.random.default_rng(seed)
    f = lambda *s: (r.standard_normal(s) * (2.0 / np.prod(s[1:])) ** 0.5).astype(np.float32)
    inits = [nh.from_array(f(32, 24, 3, 3), "w1"), nh.from_array(f(32, 32, 1, 1), "w2"),
             nh.from_array(f(10, 32), "wf"), nh.from_array(np.zeros(10, np.float32), "bf")]
    for k, v in (("g", r.random(32) + 0.5), ("b", r.standard_normal(32) * 0.1), ("mu", r.standard_normal(32) * 0.1),
                 ("var", r.random(32) + 0.5)):
        inits.append(nh.from_array(v.astype(np.float32), "bn_" + k))
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("BatchNormalization", ["c1", "bn_g", "bn_b", "bn_mu", "bn_var"], ["n1"], name="bn"),
             h.make_node("Relu", ["n1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], name="pw"),
             h.make_node("GlobalAveragePool", ["c2"], ["p"]),
             h.make_node("Flatten", ["p"], ["fl"]),
             h.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1, name="fc")]
    g = h.make_graph(nodes, "bn", [h.make_tensor_value_info("x", T.FLOAT, [1, 24, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _dequantized_model(path):
    """The saved file with every DequantizeLinear (+ Transpose) done in numpy: fp32 initializers."""
    from onnx import numpy_helper as nh
    m = onnx.load(path)
    vals = {t.name: nh.to_array(t) for t in m.graph.initializer}
    keep, made = [], {}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear":
            a = {x.name: x.i for x in n.attribute}
            x = vals[n.input[0]].astype(np.float64)
            s = vals[n.input[1]].astype(np.float64)
            z = vals[n.input[2]].astype(np.float64) if len(n.input) > 2 else 0.0
            ax, b = a.get("axis", 1) % x.ndim, a.get("block_size", 0)
            if b:
                s = np.repeat(s, b, axis=ax).take(range(x.shape[ax]), axis=ax)
                z = np.repeat(z, b, axis=ax).take(range(x.shape[ax]), axis=ax) if np.ndim(z) else z
            elif s.ndim == 1:
                shp = [1] * x.ndim
                shp[ax] = -1
                s, z = s.reshape(shp), (z.reshape(shp) if np.ndim(z) else z)
            made[n.output[0]] = ((x - z) * s).astype(np.float32)
        elif n.op_type == "Transpose" and n.input[0] in made:
            made[n.output[0]] = np.ascontiguousarray(made[n.input[0]].transpose([x.ints for x in n.attribute][0]))
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    used = {i for n in keep for i in n.input}
    inits = [nh.from_array(v, k) for k, v in vals.items() if k in used] + \
            [nh.from_array(v, k) for k, v in made.items() if k in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    return m


@pytest.mark.parametrize("fmt", ["q4", "q8"])
def test_saved_file_runs_from_mapped_codes_and_equals_dequantized_reference(tmp_path, fmt):
    """The quantizer's layout is lowconv's: every layer's codes are read where the file is mapped
    (mapped_code_bytes = all code bytes), nothing is expanded to fp32 (packed bytes = codes +
    scales + biases), and the output equals the file's weights dequantized in numpy and run in fp32."""
    import json
    import subprocess
    from lowconv import quantizer
    src, out = _bn_net(), str(tmp_path / "m_q.onnx")
    layers = quantizer.find_layers(src)
    for L in layers:  # round to nearest at one format: the layout, not the policy, is under test
        L.choice = (fmt, 16)
        L.q = L.quantize(fmt, 16)
    quantizer.write_model(src, layers, out)
    m = onnx.load(out, load_external_data=False)
    inits = {t.name: t for t in m.graph.initializer}
    dq = {n.output[0]: n for n in m.graph.node if n.op_type == "DequantizeLinear"}
    assert len(dq) == 3
    assert [n.op_type for n in m.graph.node if n.op_type == "Transpose"] == ["Transpose"]  # the 3x3 only
    code_bytes = 0
    for n in dq.values():
        q = inits[n.input[0]]
        assert q.data_type == (T.UINT4 if fmt == "q4" else T.INT8)
        code_bytes += int(np.prod(q.dims)) // (2 if fmt == "q4" else 1)
    x = np.random.default_rng(4).standard_normal((1, 24, 10, 10)).astype(np.float32)
    ref = ort_run(_dequantized_model(out), x)
    got = lowconv.Model(out).run({"x": x})["y"]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())
    np.testing.assert_allclose(ort_run(out, x), ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())
    cli = os.environ.get("LOWCONV_CLI")
    if not cli:
        pytest.skip("LOWCONV_CLI not set (tests/py_test_python.py sets it)")
    r = subprocess.run([cli, "bench", out, "--repeat", "1", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout[r.stdout.index("{"):])
    assert st["mapped_code_bytes"] == code_bytes
    fp32 = sum(L.n * L.k * 4 for L in layers)
    scales = sum(L.n * -(-L.kc // 16) * L.taps * 4 for L in layers)
    assert st["packed_weight_bytes"] <= code_bytes + scales + 4 * (32 + 32 + 10), st
    assert st["packed_weight_bytes"] < 0.4 * fp32


def test_saved_file_with_odd_channels_is_copied_and_still_exact(tmp_path):
    """3 input channels: q4 blocks of odd length do not start on bytes, so the [O][kh][kw][I] uint4
    codes of the first conv are unpacked (the copy path); the others are read in place."""
    from lowconv import quantizer
    src, out = conv_net(c=3, batch=1), str(tmp_path / "odd_q4.onnx")
    layers = quantizer.find_layers(src)
    for L in layers:
        L.choice = ("q4", 16)
        L.q = L.quantize("q4", 16)
    quantizer.write_model(src, layers, out)
    x = np.random.default_rng(6).standard_normal((1, 3, 12, 12)).astype(np.float32)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    ref = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"]).run(["logits"], {"x": x})[0]
    got = lowconv.Model(out).run({"x": x})["logits"]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


def test_argmax_stage_expected_flips(tmp_path):
    """margin.py: Phi(-z) is the normal tail; the expected flips fall as the margins' spread falls
    and are 0 with no spread; a Softmax behind an Identity is still class scores; with no byte room
    for the predicted-agreement phase, the measured-agreement phase still reaches the target."""
    from lowconv import margin, quantizer
    z = np.array([0.0, 1.0, 3.0])
    assert np.allclose(margin._phi_neg(z), [0.5, 0.15865525, 0.0013498980], atol=1e-8)

    class Fake:  # Margins without a model: margins 0.1 .. 4
        m0 = np.linspace(0.1, 4.0, 40)
    r = [margin.Margins.risk(Fake, np.full(40, s * s)) for s in (1.0, 0.3, 0.05, 0.0)]
    assert r[0] > r[1] > r[2] > r[3] and r[3] < 1e-6 and r[0] < 40
    m = seq_net()
    ident = onnx.helper.make_node("Identity", [m.graph.output[0].name], ["probs_out"])
    m.graph.node.append(ident)
    m.graph.output[0].name = "probs_out"
    assert quantizer.class_output(m) == 0 and quantizer.output_op(m, 0).op_type == "Softmax"
    src = tmp_path / "s.onnx"
    onnx.save(seq_net(), src)
    x = np.random.default_rng(5).standard_normal((4, 8, 1, 32)).astype(np.float32)
    np.save(tmp_path / "c.npy", x)
    old = dict(quantizer.BUDGET)
    quantizer.BUDGET["q4"] = 0.0
    try:
        lines = []
        rep = lowconv.quantize(str(src), str(tmp_path / "s_q4.onnx"), calib=[str(tmp_path / "c.npy")],
                               target_argmax=1.0, log=lines.append)
    finally:
        quantizer.BUDGET.update(old)
    assert rep["argmax_agreement"] == 1.0 and rep["target_met"], lines
    assert any(ln.startswith("argmax stage: expected flips") for ln in lines), lines
