"""MobileNetV2 (1.0, torchvision layout): Conv-BN-Clip(0,6) stem, inverted residuals
(1x1 expand, 3x3 depthwise, 1x1 linear projection, residual Add when the shape is kept),
1x1 Conv to 1280, GlobalAveragePool, Flatten, Gemm to 1000 classes."""
import numpy as np

from netbuild import Net

# expansion t, channels c, repeats n, first stride s
CFG = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def inverted_residual(n, x, cin, cout, stride, t):
    hid = cin * t
    y = n.cba(x, cin, hid, 1, act="relu6") if t != 1 else x
    y = n.cba(y, hid, hid, 3, stride, group=hid, act="relu6")
    keep = stride == 1 and cin == cout
    y = n.bn(n.conv(y, hid, cout, 1, gain=1.0), cout, gamma=0.5 if keep else 1.0)
    return n.node("Add", [x, y]) if keep else y


def build(size=224, seed=2):
    n = Net(seed)
    x = n.cba("input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for t, c, reps, s in CFG:
        for r in range(reps):
            x = inverted_residual(n, x, cin, c, s if r == 0 else 1, t)
            cin = c
    x = n.cba(x, cin, 1280, 1, act="relu6")
    x = n.node("GlobalAveragePool", [x])
    x = n.node("Flatten", [x], axis=1)
    wt = (n.rng.standard_normal((1000, 1280)) * np.sqrt(1.0 / 1280)).astype(np.float32)
    x = n.node("Gemm", [x, n.const("fc_w", wt), n.const("fc_b", np.zeros(1000, np.float32))], "logits", transB=1)
    return n.model([1, 3, size, size], x, [1, 1000], "mobilenetv2")
