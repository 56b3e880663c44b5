"""Small ONNX models built in memory for the Python tests."""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def conv_net(seed=0, c=8, o=16, hw=12, batch="N"):
    """x [N, c, hw, hw] -> Conv 3x3 pad 1 + Relu -> Conv 1x1 -> GlobalAveragePool -> Flatten -> Gemm."""
    r = np.random.default_rng(seed)
    inits = [nh.from_array(r.standard_normal((o, c, 3, 3)).astype(np.float32) * 0.2, "w1"),
             nh.from_array(r.standard_normal(o).astype(np.float32) * 0.1, "b1"),
             nh.from_array(r.standard_normal((o, o, 1, 1)).astype(np.float32) * 0.2, "w2"),
             nh.from_array(r.standard_normal((10, o)).astype(np.float32) * 0.2, "wf"),
             nh.from_array(np.zeros(10, np.float32), "bf")]
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2"),
             h.make_node("GlobalAveragePool", ["c2"], ["p"]),
             h.make_node("Flatten", ["p"], ["f"]),
             h.make_node("Gemm", ["f", "wf", "bf"], ["logits"], transB=1, name="fc")]
    g = h.make_graph(nodes, "conv_net", [h.make_tensor_value_info("x", T.FLOAT, [batch, c, hw, hw])],
                     [h.make_tensor_value_info("logits", T.FLOAT, [batch, 10]),
                      h.make_tensor_value_info("c2", T.FLOAT, [batch, o, hw, hw])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def relu_net(n=16):
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "relu", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, n])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def mixed_net(seed=0, hw=16):
    """Conv 3x3 (c 24 -> 40) + Relu, depthwise 3x3, Conv 1x1, GlobalAveragePool, Flatten, MatMul:
    one of each weight kind the quantizer and the loader map."""
    r = np.random.default_rng(seed)
    f = lambda *s: (r.standard_normal(s) * (2.0 / np.prod(s[1:])) ** 0.5).astype(np.float32)
    inits = [nh.from_array(f(40, 24, 3, 3), "w1"), nh.from_array(f(40, 1, 3, 3), "wd"),
             nh.from_array(f(48, 40, 1, 1), "w2"), nh.from_array(f(48, 10) * 0.3, "wm"),
             nh.from_array(np.full(40, 0.05, np.float32), "b1")]
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "wd"], ["d1"], pads=[1, 1, 1, 1], group=40, name="dw"),
             h.make_node("Relu", ["d1"], ["r2"]),
             h.make_node("Conv", ["r2", "w2"], ["c2"], name="pw"),
             h.make_node("GlobalAveragePool", ["c2"], ["p"]),
             h.make_node("Flatten", ["p"], ["fl"]),
             h.make_node("MatMul", ["fl", "wm"], ["y"], name="fc")]
    g = h.make_graph(nodes, "mixed", [h.make_tensor_value_info("x", T.FLOAT, [1, 24, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def dq_conv(codes, scale, zp=None, axis=1, block=0, dtype=T.INT4, ext=None, int32_codes=False):
    """x [1, I, 6, 6] -> DequantizeLinear(codes OIHW, scale[, zp]) -> Conv 3x3 pad 1 (opset 21).
    ext: (location, offset, length) to store the codes as external data."""
    o, i = codes.shape[:2]
    if int32_codes:
        qt = h.make_tensor("wq", dtype, codes.shape, codes.ravel().astype(np.int32).tolist())
    elif dtype in (T.INT4, T.UINT4):
        u = (codes.ravel().astype(np.int16) & 15).astype(np.uint8)
        u = np.append(u, np.uint8(0)) if u.size % 2 else u
        qt = h.make_tensor("wq", dtype, codes.shape, (u[0::2] | (u[1::2] << 4)).tobytes(), raw=True)
    else:
        qt = h.make_tensor("wq", dtype, codes.shape, codes.astype(np.int8).tobytes(), raw=True)
    if ext:
        raw = qt.raw_data
        qt.ClearField("raw_data")
        qt.data_location = T.EXTERNAL
        for k, v in zip(("location", "offset", "length"), ext):
            if v is not None:
                e = qt.external_data.add()
                e.key, e.value = k, str(v)
        qt.doc_string = raw.hex()  # the bytes the test writes into the file
    inits = [qt, nh.from_array(np.asarray(scale, np.float32), "ws")]
    ins = ["wq", "ws"]
    if zp is not None:
        inits.append(h.make_tensor("wz", dtype, np.shape(zp), np.asarray(zp).ravel().astype(np.int32).tolist()))
        ins.append("wz")
    attrs = {"axis": axis}
    if block:
        attrs["block_size"] = block
    nodes = [h.make_node("DequantizeLinear", ins, ["w"], name="dq", **attrs),
             h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], name="conv")]
    g = h.make_graph(nodes, "dq", [h.make_tensor_value_info("x", T.FLOAT, [1, i, 6, 6])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, o, 6, 6])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21)])


def seq_net(seed=0, c=8, t=32, classes=40, logit_scale=0.3):
    """x [1, c, 1, t] -> Conv 3x3 + Relu -> Conv 1x1 -> [1, t, 24] -> MatMul -> Softmax over the
    last axis: per-position class scores like an OCR recognizer's (small logits: near ties)."""
    r = np.random.default_rng(seed)
    f = lambda *s: (r.standard_normal(s) * (2.0 / np.prod(s[1:])) ** 0.5).astype(np.float32)
    inits = [nh.from_array(f(32, c, 3, 3), "w1"), nh.from_array(f(24, 32, 1, 1), "w2"),
             nh.from_array(f(24, classes) * logit_scale, "wm"), nh.from_array(np.array([1, 24, t], np.int64), "shp")]
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], name="pw"),
             h.make_node("Reshape", ["c2", "shp"], ["s"]),
             h.make_node("Transpose", ["s"], ["st"], perm=[0, 2, 1]),
             h.make_node("MatMul", ["st", "wm"], ["logits"], name="fc"),
             h.make_node("Softmax", ["logits"], ["probs"], axis=-1)]
    g = h.make_graph(nodes, "seq", [h.make_tensor_value_info("x", T.FLOAT, [1, c, 1, t])],
                     [h.make_tensor_value_info("probs", T.FLOAT, [1, t, classes])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
