"""Stdlib-only writers for small ONNX models and .npy files, for tests that must not need numpy
or onnx (py_test_cli). Field numbers are onnx.proto's."""
import struct


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _int(num, v):
    return _varint(num << 3) + _varint(v)


def _bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return _varint(num << 3 | 2) + _varint(len(b)) + b


def _value_info(name, dims):
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in dims)
    tensor_type = _int(1, 1) + _bytes(2, shape)  # float32
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def _node(op, ins, outs, name, ints=None):
    b = b"".join(_bytes(1, i) for i in ins) + b"".join(_bytes(2, o) for o in outs) + _bytes(3, name) + _bytes(4, op)
    for k, vals in (ints or {}).items():
        b += _bytes(5, _bytes(1, k) + _int(20, 7) + b"".join(_int(8, v) for v in vals))
    return b


def _float_tensor(name, dims, values):
    return b"".join(_int(1, d) for d in dims) + _int(2, 1) + _bytes(8, name) + _bytes(9, struct.pack(f"<{len(values)}f", *values))


def conv_model(path, in_dims=("N", 3, "H", "W"), cout=4):
    """x -> Conv 3x3 pads 1 (cout channels) -> c; y = Relu(c), z = Sigmoid(c)."""
    cin = in_dims[1]
    w = [((i * 7) % 11) / 11.0 - 0.4 for i in range(cout * cin * 9)]
    out_dims = (in_dims[0], cout, in_dims[2], in_dims[3])
    graph = (_bytes(1, _node("Conv", ["x", "w"], ["c"], "conv0", {"pads": [1, 1, 1, 1]})) +
             _bytes(1, _node("Relu", ["c"], ["y"], "relu0")) + _bytes(1, _node("Sigmoid", ["c"], ["z"], "sig0")) +
             _bytes(2, "cli") + _bytes(5, _float_tensor("w", [cout, cin, 3, 3], w)) +
             _bytes(11, _value_info("x", in_dims)) + _bytes(12, _value_info("y", out_dims)) +
             _bytes(12, _value_info("z", out_dims)))
    model = _int(1, 8) + _bytes(8, _bytes(1, "") + _int(2, 13)) + _bytes(7, graph)
    with open(path, "wb") as f:
        f.write(model)


def write_npy(path, shape, value=1.0, dtype="<f4"):
    n = 1
    for d in shape:
        n *= d
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join(f"{d}, " for d in shape) if len(shape) != 1 else f"{shape[0]},")
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = "f" if dtype == "<f4" else "q"
    data = struct.pack(f"<{n}{fmt}", *([value if fmt == "f" else int(value)] * n))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def npy_shape(path):
    with open(path, "rb") as f:
        head = f.read(10)
        hl = struct.unpack("<H", head[8:10])[0]
        text = f.read(hl).decode()
    inner = text.split("'shape': (")[1].split(")")[0]
    return tuple(int(x) for x in inner.replace(" ", "").split(",") if x)
