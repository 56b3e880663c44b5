"""Stdlib-only writers for small ONNX models and .npy files, for tests that must not need numpy
or onnx (py_test_cli); the protobuf encoding is fuzz/make_seeds.py's."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz"))
import make_seeds as pb  # noqa: E402


def conv_model(path, in_dims=("N", 3, "H", "W"), cout=4):
    """x -> Conv 3x3 pads 1 (cout channels) -> c; y = Relu(c), z = Sigmoid(c)."""
    cin = in_dims[1]
    w = [((k * 7) % 11) / 11.0 - 0.4 for k in range(cout * cin * 9)]
    out_dims = [in_dims[0], cout, in_dims[2], in_dims[3]]
    nodes = [pb.node("Conv", ["x", "w"], ["c"], pb.attr_ints("pads", [1, 1, 1, 1]), "conv0"),
             pb.node("Relu", ["c"], ["y"], name="relu0"), pb.node("Sigmoid", ["c"], ["z"], name="sig0")]
    with open(path, "wb") as f:
        f.write(pb.model(nodes, [pb.tensor("w", [cout, cin, 3, 3], w)], [("x", list(in_dims))],
                         [("y", out_dims), ("z", out_dims)]))


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
