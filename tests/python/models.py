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
