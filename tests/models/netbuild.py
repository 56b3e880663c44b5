"""Small graph builder shared by the model generators: random He-initialised weights, BN with random
statistics, nodes named after their layer. Only numpy and onnx; models are built at test time."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 14  # HardSwish needs 14


class Net:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, kind):
        self.n += 1
        return "%s_%d" % (kind, self.n)

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, inputs, name=None, n_out=1, **attrs):
        name = name or self.name(op.lower())
        outs = [name] if n_out == 1 else ["%s_o%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=False, gain=2.0, pad=None, dil=1):
        """He init: std = sqrt(gain / fan_in), fan_in = cin/group * kh * kw."""
        kh, kw = (k, k) if isinstance(k, int) else k
        name = self.name("conv")
        fan_in = cin // group * kh * kw
        wt = self.rng.standard_normal((cout, cin // group, kh, kw)) * np.sqrt(gain / fan_in)
        ins = [x, self.const(name + "_w", wt.astype(np.float32))]
        if bias:
            ins.append(self.const(name + "_b", (self.rng.standard_normal(cout) * 0.05).astype(np.float32)))
        if pad is None:
            pad = [dil * (kh - 1) // 2, dil * (kw - 1) // 2]
        return self.node("Conv", ins, name, kernel_shape=[kh, kw], strides=[stride, stride], group=group,
                         pads=[pad[0], pad[1], pad[0], pad[1]], dilations=[dil, dil])

    def bn(self, x, c, gamma=1.0):
        """Random running statistics: the folded scale varies per channel, as in trained nets."""
        name = self.name("bn")
        r = self.rng
        ins = [x, self.const(name + "_s", (gamma * (0.7 + 0.6 * r.random(c))).astype(np.float32)),
               self.const(name + "_b", (r.standard_normal(c) * 0.1).astype(np.float32)),
               self.const(name + "_m", (r.standard_normal(c) * 0.1).astype(np.float32)),
               self.const(name + "_v", (0.7 + 0.6 * r.random(c)).astype(np.float32))]
        return self.node("BatchNormalization", ins, name, epsilon=1e-5)

    def act(self, x, kind, c=None):
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "relu6":
            lo = self.const(self.name("lo"), np.array(0.0, np.float32))
            hi = self.const(self.name("hi"), np.array(6.0, np.float32))
            return self.node("Clip", [x, lo, hi])
        if kind == "hswish":
            return self.node("HardSwish", [x])
        if kind == "hsigmoid":
            return self.node("HardSigmoid", [x], alpha=0.2, beta=0.5)
        if kind == "prelu":
            slope = (0.25 + 0.05 * self.rng.standard_normal((c, 1, 1))).astype(np.float32)
            return self.node("PRelu", [x, self.const(self.name("slope"), slope)])
        assert kind is None, kind
        return x

    def cba(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        """Conv-BN-activation, the unit every exported CNN is made of."""
        return self.act(self.bn(self.conv(x, cin, cout, k, stride, group), cout), act, cout)

    def resize(self, x, scale, mode="nearest", coord="asymmetric", nearest_mode="floor"):
        sc = self.const(self.name("scales"), np.array([1, 1, scale, scale], np.float32))
        attrs = dict(mode=mode, coordinate_transformation_mode=coord)
        if mode == "nearest":
            attrs["nearest_mode"] = nearest_mode
        return self.node("Resize", [x, "", sc], **attrs)

    def model(self, x_shape, out, out_shape, graph_name):
        g = helper.make_graph(self.nodes, graph_name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="lowconv-tests")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m
