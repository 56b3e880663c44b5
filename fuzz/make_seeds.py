"""Writes a seed corpus of small ONNX models for the fuzz targets: a few hand-encoded ones (standard
library only), and, when the onnx package is importable, ONNX's backend node-test models (the
ones that use lowconv's ops and fit max_len), each as it is and with its inputs turned into
initializers so that planning folds it. Usage: make_seeds.py DIR [MAX_BYTES]"""
import os
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def i(num, v):
    return key(num, 0) + varint(v)


def ln(num, b):
    if isinstance(b, str):
        b = b.encode()
    return key(num, 2) + varint(len(b)) + b


def f32(num, v):
    return key(num, 5) + struct.pack("<f", v)


def value_info(name, dims):
    """dims: sizes, -1 (symbolic "N") or names of symbolic dims."""
    shape = b"".join(ln(1, ln(2, d) if isinstance(d, str) else i(1, d) if d >= 0 else ln(2, "N")) for d in dims)
    return ln(1, name) + ln(2, ln(1, i(1, 1) + ln(2, shape)))


def tensor(name, dims, vals, raw=True):
    t = b"".join(i(1, d) for d in dims) + i(2, 1) + ln(8, name)
    data = struct.pack("<%df" % len(vals), *vals)
    return t + (ln(9, data) if raw else ln(4, data))


def node(op, ins, outs, attrs=b"", name="n"):
    return b"".join(ln(1, x) for x in ins) + b"".join(ln(2, x) for x in outs) + ln(3, name) + ln(4, op) + attrs


def attr_ints(name, vals):
    return ln(5, ln(1, name) + i(20, 7) + ln(8, b"".join(varint(v) for v in vals)))


def attr_f(name, v):
    return ln(5, ln(1, name) + i(20, 1) + f32(2, v))


def model(nodes, inits, ins, outs):
    g = ln(2, "g") + b"".join(ln(1, n) for n in nodes) + b"".join(ln(5, t) for t in inits)
    g += b"".join(ln(11, value_info(*x)) for x in ins) + b"".join(ln(12, value_info(*x)) for x in outs)
    return i(1, 8) + ln(8, ln(1, "") + i(2, 13)) + ln(7, g)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    w = [0.1 * k for k in range(2 * 3 * 3 * 3)]
    seeds = {
        "relu": model([node("Relu", ["X"], ["Y"])], [], [("X", [1, 4])], [("Y", [1, 4])]),
        "conv_bn_relu": model(
            [node("Conv", ["X", "W", "B"], ["C"], attr_ints("kernel_shape", [3, 3]) + attr_ints("pads", [1, 1, 1, 1]), "c"),
             node("BatchNormalization", ["C", "s", "b", "m", "v"], ["D"], attr_f("epsilon", 1e-5), "bn"),
             node("Relu", ["D"], ["Y"], name="r")],
            [tensor("W", [2, 3, 3, 3], w), tensor("B", [2], [0.5, -0.5], raw=False), tensor("s", [2], [1, 2]),
             tensor("b", [2], [0, 1]), tensor("m", [2], [0, 0]), tensor("v", [2], [1, 1])],
            [("X", [-1, 3, 5, 5])], [("Y", [-1, 2, 5, 5])]),
        "pool_gemm": model(
            [node("MaxPool", ["X"], ["P"], attr_ints("kernel_shape", [2, 2]) + attr_ints("strides", [2, 2]), "p"),
             node("GlobalAveragePool", ["P"], ["G"], name="g"), node("Flatten", ["G"], ["F"], name="f"),
             node("Gemm", ["F", "Wg"], ["Y"], ln(5, ln(1, "transB") + i(20, 2) + i(3, 1)), "gm")],
            [tensor("Wg", [4, 3], [0.25] * 12)], [("X", [1, 3, 4, 4])], [("Y", [1, 4])]),
        "shape_chain": model(
            [node("Shape", ["X"], ["S"], name="s"), node("Reshape", ["X", "S"], ["Y"], name="r")],
            [], [("X", [1, 2, 3])], [("Y", [1, 2, 3])]),
    }
    for k, v in seeds.items():
        with open(os.path.join(d, k + ".onnx"), "wb") as f:
            f.write(v)
    n = node_seeds(d, int(sys.argv[2]) if len(sys.argv) > 2 else 65536)
    print("seeds: %d hand-made, %d from ONNX node tests" % (len(seeds), n))


def node_cases():
    """(name, model, first input set) of ONNX's node tests: shipped data files or generated."""
    import onnx
    from onnx import numpy_helper
    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if os.path.isdir(data) and os.listdir(data):
        for name in sorted(os.listdir(data)):
            mp = os.path.join(data, name, "model.onnx")
            if not os.path.exists(mp):
                continue
            ins, sd = [], os.path.join(data, name, "test_data_set_0")
            for k in range(64):
                f = os.path.join(sd, "input_%d.pb" % k)
                if not os.path.exists(f):
                    break
                t = onnx.TensorProto()
                with open(f, "rb") as fh:
                    t.ParseFromString(fh.read())
                ins.append(numpy_helper.to_array(t))
            yield name, onnx.load(mp), ins
        return
    import warnings
    from onnx.backend.test.case import node as cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in sorted(cases.collect_testcases(None), key=lambda c: c.name):
            if c.kind == "node" and c.model is not None:
                yield c.name, c.model, list(c.data_sets[0][0]) if c.data_sets else []


def node_seeds(d, max_bytes):
    try:
        import onnx  # noqa: F401
        from onnx import numpy_helper
    except ImportError:
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(here), "tests"))
    from py_test_onnx_node import SUPPORTED
    n = 0
    for name, model, ins in node_cases():
        if any(x.domain not in ("", "ai.onnx") or x.op_type not in SUPPORTED for x in model.graph.node):
            continue
        variants = [("", model)]
        inits = {t.name for t in model.graph.initializer}
        names = [x.name for x in model.graph.input if x.name not in inits]
        if ins and len(ins) == len(names):
            folded = type(model)()
            folded.CopyFrom(model)
            for nm, a in zip(names, ins):
                if getattr(a, "dtype", object) == object:
                    break
                folded.graph.initializer.append(numpy_helper.from_array(a, nm))
            else:
                del folded.graph.input[:]
                variants.append(("_folded", folded))
        for suffix, m in variants:
            b = m.SerializeToString()
            if len(b) <= max_bytes:
                with open(os.path.join(d, name + suffix + ".onnx"), "wb") as f:
                    f.write(b)
                n += 1
    return n


if __name__ == "__main__":
    main()
