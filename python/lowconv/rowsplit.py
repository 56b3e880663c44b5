"""Mixed precision by output channel for the layer that makes class scores (an OCR recognizer's
120 x 6625 classifier): most classes never win the argmax, nor come near it, on the inputs the
model is calibrated for, so their rows can be q4 while the classes that matter stay q8.

Kept q8 (the layer's own choice): every class that is within GAP (natural-log probability) of
the top class at some calibration position (the winners, the blank among them), and for a
PaddleOCR recognizer calibrated on generated lines every class of the generator's alphabet. The
other rows: q4 at the quantizer's block, GPTQ rounding with the layer's statistics (rows are
rounded independently, so each part is what quantizing the whole matrix would give for it).

In the file (standard ONNX, opset 21): two DequantizeLinear -> MatMul / Gemm branches, one per
part, then Concat on the last axis and Gather on the last axis with the inverse permutation
(int32), so the output keeps the original class order and name for the Add / Softmax after it."""
import numpy as np

GAP = 8.0          # classes within exp(-8) ~ 3e-4 of the top probability somewhere are kept
MIN_SAVED = 16384  # bytes: a split saving less (after its index array) is not worth its nodes


def class_gaps(out, log_probs=False, gap=None):
    """Per class, the least log p_top - log p_c over the positions of out [..., classes]
    (probabilities, or log-probabilities for LogSoftmax); the running minimum with gap."""
    a = out.reshape(-1, out.shape[-1]).astype(np.float64)
    lp = a if log_probs else np.log(np.maximum(a, 1e-38))
    g = (lp.max(axis=1, keepdims=True) - lp).min(axis=0)
    return g if gap is None else np.minimum(gap, g)


def class_layer(model, layers, am_out):
    """The fc Layer whose output is the class-score Softmax's input, directly or through one Add
    of a constant (the bias); MatMul, or Gemm whose C is absent or a [N] constant. None if none."""
    if am_out is None:
        return None
    prod = {o: n for n in model.graph.node for o in n.output}
    consts = {t.name: t for t in model.graph.initializer}
    sm = prod.get(model.graph.output[am_out].name)
    src = prod.get(sm.input[0]) if sm is not None else None
    if src is not None and src.op_type == "Add" and len(src.input) == 2:
        other = [i for i in src.input if i not in consts]
        src = prod.get(other[0]) if len(other) == 1 else None
    if src is None:
        return None
    for L in layers:
        if L.node is src and L.kind == "fc":
            if src.op_type == "Gemm" and len(src.input) > 2 and src.input[2]:
                c = consts.get(src.input[2])
                if c is None or list(c.dims) != [L.n]:
                    return None
            return L
    return None


def alphabet_classes(model, n):
    """Class ids of the calibration generator's characters (and the space) for a PaddleOCR
    recognizer: metadata 'character' lists the dictionary, class 0 is the CTC blank, class i the
    line i - 1, and a last extra class the space. Empty if the model has no such list."""
    from .calib import _CHARS
    chars = [p.value for p in model.metadata_props if p.key == "character"]
    if not chars:
        return []
    lines = chars[0].split("\n")
    idx = {c: i + 1 for i, c in enumerate(lines) if c}
    out = {idx[c] for c in _CHARS if c in idx and idx[c] < n}
    if len(lines) + 2 == n:  # use_space_char: the space is the last class
        out.add(n - 1)
    return sorted(out)


def split_bytes(L, nkeep, keep_fmt, rest_fmt):
    """Bytes of the split layer: both parts' codes and scales, and the int32 index array."""
    from .gptq import weight_bytes
    return (weight_bytes(nkeep, L.k, L.kc, keep_fmt[0], L.eff_block(keep_fmt[1])) +
            weight_bytes(L.n - nkeep, L.k, L.kc, rest_fmt[0], L.eff_block(rest_fmt[1])) + 4 * L.n)


def plan(L, gap, extra_keep, rest_fmt, margin=GAP):
    """Rows to keep ([n] bool) and the split's bytes, or None when it would not save MIN_SAVED."""
    if L.choice[0] != "q8" or gap is None or gap.shape != (L.n,):
        return None
    keep = gap <= margin
    keep[np.asarray(extra_keep, dtype=np.int64)] = True
    nk = int(keep.sum())
    if nk == L.n:
        return None
    b = split_bytes(L, nk, L.choice, rest_fmt)
    if L.bytes(*L.choice) - b < MIN_SAVED:
        return None
    return keep, b


def apply(L, keep, nbytes, rest_fmt):
    """Quantizes the rest rows, sets L.split; returns the whole layer's dequantized weights (ONNX
    layout) with both parts, for the checks. L.q holds the layer's own choice for all rows."""
    codes, scales, _ = L.q
    rc, rs, _ = L.quantize(*rest_fmt)
    kept, rest = np.flatnonzero(keep), np.flatnonzero(~keep)
    L.split = {"keep": kept, "rest": rest, "keep_fmt": L.choice, "rest_fmt": rest_fmt, "bytes": nbytes,
               "keep_q": (codes[kept], scales[kept]), "rest_q": (rc[rest], rs[rest])}
    return deq_split(L)


def deq_split(L):
    from .gptq import blocks, _dequant
    s = L.split
    out = np.empty((L.n, L.k), np.float32)
    for rows, fmt, (c, sc) in ((s["keep"], s["keep_fmt"], s["keep_q"]), (s["rest"], s["rest_fmt"], s["rest_q"])):
        out[rows] = _dequant(c, sc, blocks(L.k, L.kc, L.eff_block(fmt[1])))
    return L.from_mat(out)


def inverse(perm):
    """inv with inv[perm[j]] = j; perm must be a permutation of 0..n-1."""
    perm = np.asarray(perm, dtype=np.int64).ravel()
    n = perm.size
    if n == 0 or perm.min() < 0 or perm.max() >= n or np.unique(perm).size != n:
        raise ValueError("lowconv: row split: the row order is not a permutation of 0..%d" % (n - 1))
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n)
    return inv


def emit(m, L, n, emit_dq, new_nodes, inits):
    """Graph nodes for a split layer in place of node n: per part a DequantizeLinear (emit_dq, the
    quantizer's own writer, on a sub-layer of those rows) and a copy of n over it, then Concat and
    Gather(inverse permutation) giving n's output in the original class order."""
    from onnx import helper, numpy_helper
    from .quantizer import Layer
    s = L.split
    perm = np.concatenate([s["keep"], s["rest"]])
    inv = inverse(perm)
    if inv.size != L.n:
        raise ValueError("lowconv: row split of %r: %d rows, the layer has %d" % (L.name, inv.size, L.n))
    bias = None
    if n.op_type == "Gemm" and len(n.input) > 2 and n.input[2]:
        bias = numpy_helper.to_array(m.graph.initializer[inits[n.input[2]]])
    outs = []
    for part, rows, fmt, q in (("keep", s["keep"], s["keep_fmt"], s["keep_q"]),
                               ("rest", s["rest"], s["rest_fmt"], s["rest_q"])):
        sub_w = L.w[:, rows] if L.trans else L.w[rows]
        name = "%s_%s" % (L.name, part)
        sub = Layer(n, name, sub_w, "fc", trans=L.trans)
        sub.choice, sub.q = fmt, (q[0], q[1], None)
        emit_dq(m, sub, new_nodes, inits.get(L.name) if part == "keep" else None)
        node = helper.make_node(n.op_type, list(n.input), [n.output[0] + "_" + part], name=(n.name or L.name) + "_" + part)
        node.attribute.extend(n.attribute)
        node.input[1] = name
        if bias is not None:
            node.input[2] = n.input[2] + "_" + part
            m.graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(bias[rows]), node.input[2]))
        new_nodes.append(node)
        outs.append(node.output[0])
    if bias is not None:  # the original C, unless something else reads it
        if sum(i == n.input[2] for x in m.graph.node for i in x.input) == 1:
            del m.graph.initializer[inits[n.input[2]]]
            inits.clear()
            inits.update({t.name: i for i, t in enumerate(m.graph.initializer)})
    iname = L.name + "_class_order"
    m.graph.initializer.append(numpy_helper.from_array(inv.astype(np.int32), iname))
    new_nodes.append(helper.make_node("Concat", outs, [n.output[0] + "_rows"], name=L.name + "_concat", axis=-1))
    new_nodes.append(helper.make_node("Gather", [n.output[0] + "_rows", iname], [n.output[0]],
                                      name=L.name + "_order", axis=-1))


def try_split(ev, model, layers, rest_fmt, cos, agree, want_cos, want_am, generated, log):
    """After the per-layer choice: splits the class layer's rows when that saves bytes, keeps the
    split only if the whole model still passes the choice's checks (mean cosine, argmax agreement
    on every check input; or, where the choice fell short, no worse than without the split).
    Returns the (cosines, agreement) that hold for the layers as they are now."""
    L = class_layer(model, layers, ev.am_out)
    if L is None or getattr(ev, "am_gap", None) is None:
        return cos, agree
    extra = alphabet_classes(model, L.n) if generated else []
    p = plan(L, ev.am_gap, extra, rest_fmt)
    if p is None:
        return cos, agree
    keep, nbytes = p
    w = {M.name: M.q[2] for M in layers if M.choice[0] != "f32" and M is not L}
    w[L.name] = apply(L, keep, nbytes, rest_fmt)
    c2, a2 = ev.check(w)
    ok = c2.mean() >= min(want_cos, cos.mean()) and (agree is None or a2 >= min(want_am, agree))
    log("row split of %s: %d classes q8 (within %.0f of the top on the calibration inputs%s), %d q4 block %d: "
        "%d B (was %d), cosine %.5f, argmax %.4f (without: %.5f, %.4f): %s" % (
            L.node.name or L.name, int(keep.sum()), GAP, ", the generator's alphabet" if extra else "",
            L.n - int(keep.sum()), L.eff_block(rest_fmt[1]), nbytes, L.bytes(*L.choice), c2.mean(), a2,
            cos.mean(), agree if agree is not None else float("nan"), "kept" if ok else "not kept"))
    if not ok:
        L.split = None
        return cos, agree
    return c2, a2
