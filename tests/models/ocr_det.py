"""PP-OCR-det-like text detector (DBNet): MobileNetV3-style backbone (HardSwish, depthwise,
SE blocks with GlobalAveragePool/HardSigmoid/Mul), large-kernel PAN neck as in PP-OCRv4 server
(1x1 to 256 channels, 9x9 convs 256->64 and 64->64, stride-2 3x3 bottom-up path), Resize nearest
(asymmetric/floor, as paddle2onnx exports `upsample(mode='nearest')`) and linear (half_pixel and
align_corners, the bilinear exports), Concat, DB head with two 2x2 ConvTranspose and a Sigmoid."""
import numpy as np

from netbuild import Net

# in, expanded, out, kernel, SE, activation, stride; features taken after the marked blocks
BACKBONE = ((16, 16, 16, 3, False, "relu", 1), (16, 64, 24, 3, False, "relu", 2), (24, 72, 24, 3, False, "relu", 1),
            (24, 72, 40, 5, True, "relu", 2), (40, 120, 40, 5, True, "relu", 1),
            (40, 240, 80, 3, False, "hswish", 2), (80, 200, 80, 3, False, "hswish", 1),
            (80, 480, 112, 3, True, "hswish", 1), (112, 672, 160, 5, True, "hswish", 2),
            (160, 960, 160, 5, True, "hswish", 1))
FEATURES = (2, 4, 7, 9)  # strides 4, 8, 16, 32


def se(n, x, c):
    s = n.node("GlobalAveragePool", [x])
    s = n.act(n.conv(s, c, c // 4, 1, bias=True), "relu")
    s = n.act(n.conv(s, c // 4, c, 1, bias=True, gain=1.0), "hsigmoid")
    return n.node("Mul", [x, s])


def residual_unit(n, x, cin, exp, cout, k, use_se, act, stride):
    y = n.cba(x, cin, exp, 1, act=act) if exp != cin else x
    y = n.cba(y, exp, exp, k, stride, group=exp, act=act)
    if use_se:
        y = se(n, y, exp)
    keep = stride == 1 and cin == cout
    y = n.bn(n.conv(y, exp, cout, 1, gain=1.0), cout, gamma=0.5 if keep else 1.0)
    return n.node("Add", [x, y]) if keep else y


def build(size=640, seed=7, neck=256):
    """size: a multiple of 32. neck: PAN width (256 in PP-OCRv4 server, 96 in the mobile model)."""
    assert size % 32 == 0
    n = Net(seed)
    x = n.cba("input", 3, 16, 3, 2, act="hswish")
    feats = []
    for i, cfg in enumerate(BACKBONE):
        x = residual_unit(n, x, *cfg)
        if i in FEATURES:
            feats.append((x, cfg[2]))
    q = neck // 4
    ins = [n.conv(f, c, neck, 1, gain=1.0) for f, c in feats]  # strides 4, 8, 16, 32
    # top-down: nearest x2 and add
    td = [None, None, None, ins[3]]
    for i in (2, 1, 0):
        td[i] = n.node("Add", [ins[i], n.resize(td[i + 1], 2)])
    inp = [n.conv(t, neck, q, 9) for t in td]  # the large-kernel convs: 9x9, 256 -> 64
    # bottom-up: stride-2 3x3 and add
    pan = [inp[0]]
    for i in (1, 2, 3):
        pan.append(n.node("Add", [inp[i], n.conv(pan[i - 1], q, q, 3, 2, gain=1.0)]))
    lat = [n.conv(p, q, q, 9, gain=1.0) for p in pan]  # 9x9, 64 -> 64
    up = [lat[0], n.resize(lat[1], 2, "linear", "align_corners"), n.resize(lat[2], 4, "linear", "half_pixel"),
          n.resize(lat[3], 8)]
    x = n.node("Concat", up[::-1], axis=1)
    # DB head (probability map): conv-BN-ReLU, 2x ConvTranspose 2x2 stride 2, sigmoid
    x = n.cba(x, neck, q, 3)
    for cout in (q, 1):
        name = n.name("deconv")
        wt = n.rng.standard_normal((q, cout, 2, 2)) * np.sqrt(1.0 / q)
        b = n.rng.standard_normal(cout) * 0.05
        x = n.node("ConvTranspose", [x, n.const(name + "_w", wt.astype(np.float32)),
                                     n.const(name + "_b", b.astype(np.float32))], name,
                   kernel_shape=[2, 2], strides=[2, 2])
        if cout != 1:
            x = n.act(n.bn(x, cout), "relu")
    x = n.node("Sigmoid", [x], "prob")
    return n.model([1, 3, size, size], x, [1, 1, size, size], "ocr_det")
