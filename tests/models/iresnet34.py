"""ArcFace-style IResNet-34 (insightface): 3x3 stem + BN + PReLU, then IBasicBlocks
BN-Conv-BN-PReLU-Conv(stride)-BN + identity (1x1 stride-2 Conv + BN on the first block of a stage),
stages 64/128/256/512 x 3/4/6/3, head BN-Flatten-Gemm(512)-BN: a 512-d face embedding."""
import numpy as np

from netbuild import Net

STAGES = ((64, 3), (128, 4), (256, 6), (512, 3))


def block(n, x, cin, cout, stride):
    y = n.bn(x, cin)
    y = n.conv(y, cin, cout, 3)
    y = n.act(n.bn(y, cout), "prelu", cout)
    y = n.conv(y, cout, cout, 3, stride)
    y = n.bn(y, cout, gamma=0.3)  # keeps the residual sum from doubling its variance every block
    if stride != 1 or cin != cout:
        x = n.bn(n.conv(x, cin, cout, 1, stride, gain=1.0), cout)
    return n.node("Add", [y, x])


def build(size=112, seed=34):
    """size: input height and width, a multiple of 16 (the embedding head flattens size/16 squared)."""
    assert size % 16 == 0
    n = Net(seed)
    x = n.cba("input", 3, 64, 3, act="prelu")
    cin = 64
    for c, reps in STAGES:
        for r in range(reps):
            x = block(n, x, cin, c, 2 if r == 0 else 1)
            cin = c
    x = n.bn(x, 512)
    x = n.node("Flatten", [x], axis=1)
    s = size // 16
    fan_in = 512 * s * s
    wt = (n.rng.standard_normal((512, fan_in)) * np.sqrt(1.0 / fan_in)).astype(np.float32)
    x = n.node("Gemm", [x, n.const("fc_w", wt), n.const("fc_b", np.zeros(512, np.float32))], "fc", transB=1)
    x = n.bn(x, 512)
    x = n.node("Identity", [x], "embedding")
    return n.model([1, 3, size, size], x, [1, 512], "iresnet34")
