#!/usr/bin/env python3
"""Runs ONNX's backend node tests through `lowconv run` for every operator lowconv supports.

Test cases come from the installed `onnx` package: the shipped data directory
(onnx/backend/test/data/node/test_*/) when present, otherwise the same cases generated in memory
by onnx.backend.test.case.node (recent wheels no longer ship the data files). Each case whose
model uses only supported ops is written out (model.onnx + input .npy files), run with
`lowconv run MODEL --input NAME=FILE ... --output-dir DIR`, and compared with the expected
outputs. Prints "N passed, N failed, N skipped"; exits nonzero on failures.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_onnx():
    """Re-execs with the repository's venv python if this one lacks onnx; None if none has it."""
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        return True
    except ImportError:
        venv = os.path.join(ROOT, ".venv", "bin", "python")
        # Compare prefixes, not real paths: a venv's python is a symlink to the system one.
        if os.path.exists(venv) and os.path.abspath(sys.prefix) != os.path.join(ROOT, ".venv") \
                and not os.environ.get("LC_PY_REEXEC"):
            os.environ["LC_PY_REEXEC"] = "1"
            os.execv(venv, [venv] + sys.argv)
        return False


# Ops implemented in src/model/ops (keep in sync with lc_op_supported()).
SUPPORTED = {
    "Conv", "ConvTranspose", "BatchNormalization", "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid",
    "HardSigmoid", "HardSwish", "Tanh", "Add", "Sub", "Mul", "Div", "MaxPool", "AveragePool",
    "GlobalAveragePool", "GlobalMaxPool", "Flatten", "Reshape", "Transpose", "Concat", "Split", "Slice",
    "Squeeze", "Unsqueeze", "Gemm", "MatMul", "Softmax", "Resize", "Pad", "Identity", "Dropout", "Shape",
    "Gather", "Constant", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "Cast", "ConstantOfShape",
    "Expand", "Pow", "Sqrt", "Reciprocal", "Erf", "Exp", "Neg", "Abs",
    "Range", "Tile", "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or",
    "Xor", "Floor", "Ceil", "Round", "Min", "Max", "Sum", "Mean", "ReduceL2", "ReduceL1", "ReduceSumSquare",
    "ReduceLogSumExp", "ReduceProd", "ArgMax", "ArgMin", "TopK", "LSTM", "GRU", "RNN", "LayerNormalization",
    "InstanceNormalization", "GroupNormalization", "DepthToSpace", "SpaceToDepth", "Upsample", "LogSoftmax",
    "Einsum",
}

# Tests of supported ops that are skipped on purpose, with the reason.
SKIP = {
    "test_maxpool_with_argmax_2d_precomputed_pads": "MaxPool Indices output not supported",
    "test_maxpool_with_argmax_2d_precomputed_strides": "MaxPool Indices output not supported",
    "test_maxpool_3d_default": "3-D pooling not supported",
    "test_maxpool_3d_dilations": "3-D pooling not supported",
    "test_maxpool_3d_dilations_use_ref_impl": "3-D pooling not supported",
    "test_maxpool_3d_dilations_use_ref_impl_large": "3-D pooling not supported",
    "test_averagepool_3d_default": "3-D pooling not supported",
    "test_averagepool_3d_dilations_small": "3-D pooling not supported",
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_False": "3-D pooling not supported",
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True": "3-D pooling not supported",
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_False": "3-D pooling not supported",
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True": "3-D pooling not supported",
    "test_convtranspose_3d": "3-D ConvTranspose not supported",
    "test_batchnorm_epsilon_training_mode": "BatchNormalization training mode not supported",
    "test_batchnorm_example_training_mode": "BatchNormalization training mode not supported",
    "test_training_dropout": "Dropout training mode (random) not supported",
    "test_training_dropout_default": "Dropout training mode (random) not supported",
    "test_training_dropout_default_mask": "Dropout training mode (random) not supported",
    "test_training_dropout_mask": "Dropout training mode (random) not supported",
    "test_training_dropout_zero_ratio": "Dropout training mode not supported",
    "test_training_dropout_zero_ratio_mask": "Dropout training mode not supported",
    "test_dropout_random_old": "Dropout training mode not supported",
    "test_pow_types_float32_int64": "Pow: fp32 base and exponent only",
    "test_pow_types_int64_float32": "Pow: fp32 base and exponent only",
    "test_pow_types_int64_int64": "Pow: fp32 base and exponent only",
    "test_maxpool_2d_uint8": "MaxPool: float32 only",
    "test_reduce_max_bool_inputs": "ReduceMax: float32 only",
    "test_reduce_min_bool_inputs": "ReduceMin: float32 only",
    "test_reduce_max_empty_set": "max over an empty axis is refused",
    "test_reduce_min_empty_set": "min over an empty axis is refused",
    "test_resize_tf_crop_and_resize": "tf_crop_and_resize not supported",
    "test_resize_tf_crop_and_resize_axes_2_3": "tf_crop_and_resize not supported",
    "test_resize_tf_crop_and_resize_axes_3_2": "tf_crop_and_resize not supported",
    "test_resize_tf_crop_and_resize_extrapolation_value": "tf_crop_and_resize not supported",
}
# Name patterns skipped with a reason.
SKIP_PATTERNS = [
    (r"cubic", "Resize cubic mode not supported"),
    (r"antialias", "Resize antialias not supported"),
    (r"test_resize_.*_3d|test_resize_.*5d", "Resize over more than the last two axes not supported"),
    (r"^test_(add|sub|mul|div)_u?int8$|^test_clip_default_int8", "8-bit integer arithmetic not supported"),
    (r"^test_pow_types_.*int32", "Pow: fp32 base and exponent only"),
    (r"^test_center_crop_pad_.*_expanded$", "Pad with pads computed at run time not supported"),
]

# Input slots lowconv needs as constants (static shapes, weights packed once). Node tests feed them
# as graph inputs; they are moved into initializers before running, which is how real models carry them.
CONST_SLOTS = {
    "Conv": (1, 2), "ConvTranspose": (1, 2), "Reshape": (1,), "Slice": (1, 2, 3, 4), "Split": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "Resize": (1, 2, 3), "Pad": (1, 2, 3), "ReduceMean": (1,),
    "ReduceSum": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "ConstantOfShape": (0,), "Expand": (1,),
    "Range": (0, 1, 2), "Tile": (1,), "TopK": (1,), "Upsample": (1,), "ReduceL2": (1,), "ReduceL1": (1,),
    "ReduceSumSquare": (1,), "ReduceLogSumExp": (1,), "ReduceProd": (1,),
}


def const_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    const = set()
    for n in model.graph.node:
        for k in CONST_SLOTS.get(n.op_type, ()):
            if k < len(n.input) and n.input[k] in names:
                const.add(n.input[k])
    return names, const


def runtime_inputs(model):
    """Indices of graph inputs that stay inputs after embed_constants."""
    names, const = const_inputs(model)
    return [j for j, n in enumerate(names) if n not in const]


def embed_constants(model, sets):
    """Turns graph inputs that feed CONST_SLOTS into initializers; returns the indices kept as inputs."""
    from onnx import numpy_helper
    names, const = const_inputs(model)
    keep = []
    for j, name in enumerate(names):
        if name not in const:
            keep.append(j)
            continue
        model.graph.initializer.append(numpy_helper.from_array(sets[0][0][j], name))
        for gi in list(model.graph.input):
            if gi.name == name:
                model.graph.input.remove(gi)
    return keep


def load_cases(node_filter):
    """Yields (name, model, [(inputs, outputs)], rtol, atol)."""
    import onnx
    from onnx import numpy_helper
    data_dir = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(data_dir) and os.listdir(data_dir):
        for name in sorted(os.listdir(data_dir)):
            if node_filter and not re.search(node_filter, name):
                continue
            d = os.path.join(data_dir, name)
            mp = os.path.join(d, "model.onnx")
            if not os.path.exists(mp):
                continue
            model = onnx.load(mp)
            sets = []
            for sd in sorted(x for x in os.listdir(d) if x.startswith("test_data_set_")):
                def read(prefix):
                    files = sorted((f for f in os.listdir(os.path.join(d, sd)) if f.startswith(prefix)),
                                   key=lambda f: int(re.findall(r"\d+", f)[0]))
                    out = []
                    for f in files:
                        t = onnx.TensorProto()
                        with open(os.path.join(d, sd, f), "rb") as fh:
                            t.ParseFromString(fh.read())
                        out.append(numpy_helper.to_array(t))
                    return out
                sets.append((read("input_"), read("output_")))
            yield name, model, sets, 1e-3, 1e-7
        return
    from onnx.backend.test.case import node as node_cases
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    for c in sorted(cases, key=lambda c: c.name):
        if node_filter and not re.search(node_filter, c.name):
            continue
        if c.kind != "node" or c.model is None:
            continue
        yield c.name, c.model, c.data_sets, c.rtol, c.atol


# Ops whose only node tests are float64: run in float32 (model types and data converted), which is
# what CNN exports carry; float64 models themselves are refused with the node named.
AS_FLOAT32 = ("test_einsum_",)


def as_float32(name, model, sets):
    import numpy as np
    from onnx import TensorProto
    if not name.startswith(AS_FLOAT32):
        return
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.type.tensor_type.elem_type == TensorProto.DOUBLE:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT
    for ins, outs in sets:
        for lst in (ins, outs):
            for j, a in enumerate(lst):
                if isinstance(a, (np.ndarray, np.generic)) and a.dtype == np.float64:
                    lst[j] = np.asarray(a, np.float32)


def raise_opset(model):
    """Node tests of ops unchanged since opset 1 (Not, ...) declare opset 1; lowconv takes 7 and up,
    so they are declared 7 when every op's definition is the same there."""
    import onnx
    from onnx import defs
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version < 7:
            try:
                same = all(defs.get_schema(n.op_type, 7).since_version <= imp.version for n in model.graph.node)
            except onnx.defs.SchemaError:
                same = False
            if same:
                imp.version = 7


def skip_reason(name, model, sets):
    import numpy as np
    as_float32(name, model, sets)
    raise_opset(model)
    if name in SKIP:
        return SKIP[name]
    for pat, why in SKIP_PATTERNS:
        if re.search(pat, name):
            return why
    for n in model.graph.node:
        if n.domain not in ("", "ai.onnx"):
            return "op domain %s" % n.domain
        if n.op_type not in SUPPORTED:
            return "op %s not supported" % n.op_type
    if len(sets) != 1:
        return "more than one data set (constants are embedded from the first)"
    ins, outs = sets[0]
    for lst in (ins, outs):  # numpy scalars (0-d results) count as tensors
        for j, a in enumerate(lst):
            if isinstance(a, np.generic):
                lst[j] = np.asarray(a)
    runtime = [a for j, a in enumerate(ins) if j in runtime_inputs(model)] + list(outs)
    for a in list(ins) + list(outs):
        if not isinstance(a, np.ndarray):
            return "input/output is not a plain numpy tensor (sequence, optional or exotic dtype)"
        if a.dtype.type not in (np.float32, np.int64, np.int32, np.uint8, np.int8, np.bool_):
            return "dtype %s not supported (float32 operators; integer and bool index tensors)" % a.dtype
    for a in runtime:
        if a.size == 0:
            return "zero-size tensor: the model loader requires positive dims"
    return ""


def tolerance(name, rtol, atol):
    # Resize linear / Softmax: lowconv interpolates in fp32 while the reference works in fp64,
    # so values near zero need an absolute floor of a few fp32 ulps of the data range.
    if name.startswith("test_resize") and "linear" in name:
        return max(rtol, 1e-3), max(atol, 1e-5)
    return rtol, max(atol, 1e-6) if "softmax" in name or "sigmoid" in name or "tanh" in name else atol


def safe_name(n):
    out = []
    for i, ch in enumerate(n):
        ok = ch.isascii() and (ch.isalnum() or ch in "-_" or (ch == "." and i > 0))
        out.append(ch if ok else "_")
    return "".join(out) or "output"


def run_case(cli, name, model, sets, rtol, atol, work, verbose):
    import numpy as np
    import onnx
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
    keep = embed_constants(model, sets)
    onnx.save(model, mp)
    outputs = [o.name for o in model.graph.output]
    rtol, atol = tolerance(name, rtol, atol)
    for k, (ins, outs) in enumerate(sets):
        args = [cli, "run", mp, "--output-dir", os.path.join(d, "out%d" % k)]
        os.makedirs(args[-1], exist_ok=True)
        for j, a in enumerate(ins):
            if j not in keep:
                continue
            p = os.path.join(d, "in%d_%d.npy" % (k, j))
            np.save(p, a)
            args += ["--input", "%s=%s" % (graph_inputs[j], p)]
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "timeout"
        if r.returncode != 0:
            return "lowconv run failed (rc %d): %s" % (r.returncode, (r.stderr or r.stdout).strip()[-400:])
        for j, want in enumerate(outs):
            p = os.path.join(args[4], safe_name(outputs[j]) + ".npy")
            if not os.path.exists(p):
                return "output %s not written" % outputs[j]
            got = np.load(p)
            if got.shape != want.shape:
                return "output %s: shape %s, expected %s" % (outputs[j], got.shape, want.shape)
            if want.dtype == np.bool_ or want.dtype.kind in "iu":
                if not np.array_equal(got, want):
                    return "output %s differs" % outputs[j]
                continue
            try:
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
            except AssertionError as e:
                return "output %s: %s" % (outputs[j], str(e).strip().splitlines()[:6])
    return ""


def composite_cases():
    """Small CNN fragments that exercise the graph's folding and fusion (_act, _residual) together
    with the ops; expected values come from onnx.reference.ReferenceEvaluator."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)

    def w(*shape):
        return rng.uniform(-0.5, 0.5, shape).astype(np.float32)

    def model(name, nodes, inits, x_shape, y_name="y"):
        g = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
            [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, None)],
            [numpy_helper.from_array(v, k) for k, v in inits.items()])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    def bn(prefix, c):
        return {prefix + "_s": rng.uniform(0.5, 1.5, c).astype(np.float32), prefix + "_b": w(c),
                prefix + "_m": w(c), prefix + "_v": rng.uniform(0.5, 1.5, c).astype(np.float32)}

    N = helper.make_node
    cases = []
    # ResNet basic block: conv-bn-relu, conv-bn, + x, relu
    i = {"w1": w(8, 8, 3, 3), "w2": w(8, 8, 3, 3)}
    i.update(bn("bn1", 8)), i.update(bn("bn2", 8))
    cases.append(("composite_resnet_block", model("rb", [
        N("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["b1"]),
        N("Relu", ["b1"], ["r1"]),
        N("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["b2"]),
        N("Add", ["b2", "x"], ["a"]), N("Relu", ["a"], ["y"])], i, (1, 8, 9, 7)), (1, 8, 9, 7)))
    # MobileNetV2 inverted residual: 1x1 expand + ReLU6 (Clip), depthwise 3x3 + Clip, 1x1 project, + x
    i = {"we": w(24, 8, 1, 1), "be": w(24), "wd": w(24, 1, 3, 3), "bd": w(24), "wp": w(8, 24, 1, 1), "bp": w(8),
         "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
    cases.append(("composite_mobilenet_block", model("mb", [
        N("Conv", ["x", "we", "be"], ["e"]), N("Clip", ["e", "lo", "hi"], ["e6"]),
        N("Conv", ["e6", "wd", "bd"], ["d"], group=24, pads=[1, 1, 1, 1]), N("Clip", ["d", "lo", "hi"], ["d6"]),
        N("Conv", ["d6", "wp", "bp"], ["p"]), N("Add", ["x", "p"], ["y"])], i, (1, 8, 10, 10)), (1, 8, 10, 10)))
    # MobileNetV3 / PP-LCNet: conv + HardSwish, SE block (GAP, 1x1, relu, 1x1, HardSigmoid, Mul)
    i = {"w": w(16, 4, 3, 3), "s1": w(4, 16, 1, 1), "s2": w(16, 4, 1, 1)}
    cases.append(("composite_se_hardswish", model("se", [
        N("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]), N("HardSwish", ["c"], ["h"]),
        N("GlobalAveragePool", ["h"], ["g"]), N("Conv", ["g", "s1"], ["g1"]), N("Relu", ["g1"], ["g2"]),
        N("Conv", ["g2", "s2"], ["g3"]), N("HardSigmoid", ["g3"], ["g4"], alpha=1.0 / 6, beta=0.5),
        N("Mul", ["h", "g4"], ["y"])], i, (1, 4, 11, 12)), (1, 4, 11, 12)))
    # DBNet head (PP-OCR det): conv-bn-relu, ConvTranspose-bn-relu, ConvTranspose, Sigmoid; FPN Resize + Add
    i = {"w": w(4, 8, 3, 3), "t1": w(4, 4, 2, 2), "tb1": w(4), "t2": w(4, 1, 2, 2), "tb2": w(1),
         "sc": np.array([1, 1, 2, 2], np.float32)}
    i.update(bn("bn1", 4)), i.update(bn("bn2", 4))
    cases.append(("composite_dbnet_head", model("db", [
        N("Resize", ["x", "", "sc"], ["u"], mode="nearest"), N("Conv", ["u", "w"], ["c"], pads=[1, 1, 1, 1]),
        N("BatchNormalization", ["c", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["b"]), N("Relu", ["b"], ["r"]),
        N("ConvTranspose", ["r", "t1", "tb1"], ["t"], strides=[2, 2]),
        N("BatchNormalization", ["t", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["tb"]), N("Relu", ["tb"], ["tr"]),
        N("ConvTranspose", ["tr", "t2", "tb2"], ["o"], strides=[2, 2]), N("Sigmoid", ["o"], ["y"])],
        i, (1, 8, 5, 6)), (1, 8, 5, 6)))
    # Classifier tail with a Shape chain to fold: GAP, Reshape to [N, -1] via Shape/Gather/Concat, Gemm, Softmax
    i = {"i0": np.array(0, np.int64), "m1": np.array([-1], np.int64), "fw": w(10, 16), "fb": w(10)}
    cases.append(("composite_classifier_shape_chain", model("cl", [
        N("GlobalAveragePool", ["x"], ["g"]), N("Shape", ["g"], ["s"]), N("Gather", ["s", "i0"], ["n"]),
        N("Unsqueeze", ["n", "z"], ["n1"]), N("Concat", ["n1", "m1"], ["shp"], axis=0),
        N("Reshape", ["g", "shp"], ["f"]), N("Gemm", ["f", "fw", "fb"], ["l"], transB=1),
        N("Softmax", ["l"], ["y"], axis=1)], dict(i, z=np.array([0], np.int64)), (2, 16, 3, 3)), (2, 16, 3, 3)))
    for name, m, shape in cases:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        from onnx.reference import ReferenceEvaluator
        y = ReferenceEvaluator(m).run(None, {"x": x})[0]
        yield name, m, [([x], [np.asarray(y, np.float32)])], 1e-4, 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True, help="path to the lowconv CLI")
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--filter", default=None, help="regex on test names")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--list-skips", action="store_true", help="print every skipped test and why")
    a = ap.parse_args()
    if not ensure_onnx():
        print("onnx/numpy not available: 0 passed, 0 failed, 1 skipped")
        return 0
    if not os.path.exists(a.lowconv):
        print("lowconv CLI not found at %s: 0 passed, 0 failed, 1 skipped" % a.lowconv)
        return 0
    probe = subprocess.run([a.lowconv, "run", "--help"], capture_output=True, text=True)
    if "unknown command" in (probe.stdout + probe.stderr):
        print("lowconv has no `run` command yet: 0 passed, 0 failed, 1 skipped")
        return 0
    passed, failed, skipped = 0, [], []
    with tempfile.TemporaryDirectory(prefix="lc_onnx_node_") as work:
        import itertools
        extra = [c for c in composite_cases() if not a.filter or re.search(a.filter, c[0])]
        for name, model, sets, rtol, atol in itertools.chain(load_cases(a.filter), extra):
            why = skip_reason(name, model, sets)
            if why:
                skipped.append((name, why))
                continue
            err = run_case(a.lowconv, name, model, sets, rtol, atol, work, a.verbose)
            if err:
                failed.append((name, err))
                print("FAIL %s: %s" % (name, err))
            else:
                passed += 1
                if a.verbose:
                    print("ok   %s" % name)
    if a.list_skips:
        for name, why in skipped:
            print("skip %s: %s" % (name, why))
    print("%d passed, %d failed, %d skipped" % (passed, len(failed), len(skipped)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
