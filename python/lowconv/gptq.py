"""Error-compensating rounding of one weight matrix (GPTQ-style): columns are quantized in order
and each column's rounding error is spread onto the columns not yet quantized, weighted by the
inverse Hessian of the layer's inputs (H = E[x x^T]), so the layer's OUTPUT error is what is
minimized rather than each weight's own error.

Matrix W[n][k]: k ordered (tap, channel) as lowconv stores conv weights (docs/quantization.md),
kc channels per tap; blocks of `block` channels at one tap (block 0: one block per row); codes
symmetric, q4 in [-7, 7], q8 in [-127, 127]; w = q * scale."""
import numpy as np

QMAX = {"q4": 7, "q8": 127}


def blocks(k, kc, block):
    """(start, end) column ranges of the quantization blocks of one row, in order."""
    if block == 0 or kc <= 0:
        return [(0, k)]
    out = []
    for t in range(k // kc):
        for c in range(0, kc, block):
            out.append((t * kc + c, t * kc + min(kc, c + block)))
    return out


def _scale(wb, qmax, hd):
    """Per row scale for one block: absmax, or a shrunk range when that lowers the H-diagonal
    weighted squared rounding error (outliers cost less than coarse steps for everything else)."""
    amax = np.abs(wb).max(axis=1)
    best_s = amax / qmax
    best_e = None
    for f in (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7):
        s = amax * f / qmax
        sd = np.where(s > 0, s, 1.0)[:, None]
        q = np.clip(np.round(wb / sd), -qmax, qmax) * sd
        e = (((wb - q) ** 2) * hd).sum(axis=1)
        if best_e is None:
            best_e = e
        else:
            better = e < best_e
            best_e = np.where(better, e, best_e)
            best_s = np.where(better, s, best_s)
    return best_s


def prepare(H, damp=0.01):
    """What the rounding needs from H, once per layer (every candidate format reuses it): dead
    columns, the damped diagonal and the upper Cholesky factor of H^-1; None if H is singular."""
    H = np.array(H, dtype=np.float64)
    k = H.shape[0]
    dead = np.diag(H) <= 0
    H[dead, dead] = 1.0
    H += np.eye(k) * (damp * np.mean(np.diag(H)))
    try:
        Hinv = np.linalg.cholesky(np.linalg.inv(H)).T
    except np.linalg.LinAlgError:
        return None
    return {"dead": dead, "hd": np.diag(H).copy(), "Hinv": Hinv}


def quantize_matrix(w, kc, fmt, block, H=None, damp=0.01, chunk=128):
    """Returns (codes int8 [n][k], scales float32 [n][nb], dequantized float32 [n][k]).
    H: [k][k] input second moments (or prepare(H)); a [k] diagonal or None = round to nearest,
    clip search weighted by the diagonal."""
    qmax = QMAX[fmt]
    W = np.array(w, dtype=np.float64)
    n, k = W.shape
    blk = blocks(k, kc, block)
    codes = np.zeros((n, k), np.int8)
    scales = np.zeros((n, len(blk)), np.float64)
    if H is None or np.ndim(H) == 1:  # no statistics, or only their diagonal: weighted rounding
        hd = np.ones(k) if H is None else np.asarray(H, np.float64) + 1e-12
        for b, (s0, s1) in enumerate(blk):
            s = _scale(W[:, s0:s1], qmax, hd[s0:s1])
            scales[:, b] = s
            sd = np.where(s > 0, s, 1.0)[:, None]
            codes[:, s0:s1] = np.clip(np.round(W[:, s0:s1] / sd), -qmax, qmax)
        return codes, scales.astype(np.float32), _dequant(codes, scales.astype(np.float32), blk)
    prep = prepare(H, damp) if not isinstance(H, dict) else H
    if prep is None:
        return quantize_matrix(w, kc, fmt, block, None)
    dead, hd, Hinv = prep["dead"], prep["hd"], prep["Hinv"]
    W[:, dead] = 0.0
    # columns in segments that never cross a block, at most `chunk` long (lazy batch updates)
    segs = []
    for b, (s0, s1) in enumerate(blk):
        for c in range(s0, s1, chunk):
            segs.append((b, s0, s1, c, min(s1, c + chunk)))
    for b, s0, s1, i1, i2 in segs:
        if i1 == s0:
            s = _scale(W[:, s0:s1], qmax, hd[s0:s1])
            scales[:, b] = s
        s = scales[:, b]
        sd = np.where(s > 0, s, 1.0)
        W1 = W[:, i1:i2].copy()
        E1 = np.zeros_like(W1)
        Hi = Hinv[i1:i2, i1:i2]
        for i in range(i2 - i1):
            col = W1[:, i]
            q = np.clip(np.round(col / sd), -qmax, qmax)
            codes[:, i1 + i] = q
            err = (col - q * s) / Hi[i, i]
            W1[:, i:] -= np.outer(err, Hi[i, i:])
            E1[:, i] = err
        W[:, i2:] -= E1 @ Hinv[i1:i2, i2:]
    scales = scales.astype(np.float32)
    return codes, scales, _dequant(codes, scales, blk)


def _dequant(codes, scales, blk):
    out = np.empty(codes.shape, np.float32)
    for b, (s0, s1) in enumerate(blk):
        out[:, s0:s1] = codes[:, s0:s1].astype(np.float32) * scales[:, b:b + 1]
    return out


def weight_bytes(n, k, kc, fmt, block):
    """Bytes lowconv stores for the matrix: codes (each block byte aligned) + fp32 scales."""
    if fmt == "f32":
        return n * k * 4
    blk = blocks(k, kc, block)
    per_row = sum((e - s) if fmt == "q8" else (e - s + 1) // 2 for s, e in blk)
    return n * (per_row + 4 * len(blk))
