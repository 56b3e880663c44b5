"""Conv weights quantized and decoded in numpy the way lowconv stores them (docs/quantization.md:
O-HW-I rows, blocks of `block` input channels within one tap, the last block of a tap shorter;
symmetric, scale = absmax / qmax, round half away from zero). A model with these weights run by
onnxruntime is the reference for `lowconv run --weights q8|q4`: it separates what the format loses
from what the kernels get wrong."""
import numpy as np
import onnx
from onnx import numpy_helper


def fake_quant(w, bits, block):
    if block <= 0:
        raise ValueError("per-channel blocks (block 0) span all taps: not modelled here")
    qmax = 2 ** (bits - 1) - 1
    o, i, kh, kw = w.shape
    t = w.astype(np.float32).transpose(0, 2, 3, 1).reshape(o, kh * kw, i)
    out = np.empty_like(t)
    for s in range(0, i, block):
        b = t[:, :, s:s + block]
        scale = np.abs(b).max(axis=2, keepdims=True) / np.float32(qmax)
        r = b / np.where(scale == 0, np.float32(1), scale)
        q = np.clip(np.sign(r) * np.floor(np.abs(r) + 0.5), -qmax, qmax)
        out[:, :, s:s + block] = q * scale
    return out.reshape(o, kh, kw, i).transpose(0, 3, 1, 2)


def fake_quant_matrix(b, bits, block, trans):
    """A Gemm/MatMul weight: rows are output features with K contiguous (B^T when trans is 0)."""
    rows = b if trans else b.T
    n, k = rows.shape
    q = fake_quant(rows.reshape(n, k, 1, 1), bits, block).reshape(n, k)
    return q if trans else np.ascontiguousarray(q.T)


def quantized_model(model, bits, block):
    """A copy of `model` whose Conv weights and constant Gemm/MatMul weights (lowconv packs both
    under --weights q8|q4 --q4-policy all) are fake-quantized."""
    conv_w = {n.input[1] for n in model.graph.node if n.op_type == "Conv"}
    mat_w = {}
    for n in model.graph.node:
        if n.op_type == "Gemm":
            mat_w[n.input[1]] = next((a.i for a in n.attribute if a.name == "transB"), 0)
        elif n.op_type == "MatMul":
            mat_w[n.input[1]] = 0
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for init in m.graph.initializer:
        if init.name in conv_w:
            w = fake_quant(numpy_helper.to_array(init), bits, block)
        elif init.name in mat_w and len(init.dims) == 2:
            w = fake_quant_matrix(numpy_helper.to_array(init).astype(np.float32), bits, block, mat_w[init.name])
        else:
            continue
        init.CopyFrom(numpy_helper.from_array(w, init.name))
    return m
