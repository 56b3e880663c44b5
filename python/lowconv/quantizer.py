"""Accuracy-aware weight quantization of an ONNX model, written as a standard ONNX file.

Policy: every Conv / Gemm / MatMul weight starts at the cheapest format (q4 at the chosen block);
each layer's sensitivity (output cosine deficit against fp32 when only that layer is quantized)
is measured for q4 at block B and B/2, q8 per output channel and at block B, and f32 on the
calibration set; layers are then upgraded greedily by deficit removed per byte added until the
whole model, measured with every choice applied, reaches the target cosine. When the output is
class scores (Softmax over the last axis: a recognizer's per-position characters), the class
layer's rows that never come near the top stay q4 while the others keep q8 (rowsplit.py), then
the per-position argmax must agree with fp32: upgrades by expected flips removed per byte
(margin.py).
Rounding is error compensating (gptq.py) with the activation second moments of each layer's input.

Output: opset 21; quantized weights are INT4 / INT8 initializers feeding DequantizeLinear
(axis = the input-channel axis, block_size = B; block 0 = per output channel, axis = output axis),
tensors in one external-data file next to the model.
Usage: python -m lowconv quantize MODEL.onnx -o OUT.onnx [--weights q4|q8] [--block N]
       [--calib FILE.npy ... | --calib-generate] [--target-cosine C] [--target-argmax A]"""
import argparse
import os
import sys
import time

import numpy as np

from . import calib as _calib
from . import margin as _margin
from . import rowsplit as _rowsplit
from .qfile import pack_int4, write_model, write_plan  # noqa: F401 (callers use quantizer.write_model)
from .gptq import prepare, quantize_matrix, weight_bytes


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
        return onnx, helper, numpy_helper
    except ImportError:
        raise ImportError("lowconv.quantize needs the onnx package (pip install onnx)") from None


class Layer:
    """One quantizable weight: W as the matrix [n][k] (k ordered tap, channel) plus how to put it back."""

    def __init__(self, node, init_name, w, kind, groups=1, trans=False):
        self.node, self.name, self.kind, self.groups, self.trans = node, init_name, kind, groups, trans
        self.shape = w.shape
        self.w = w
        if kind == "conv":
            o, c, kh, kw = w.shape
            self.kc, self.taps = c, kh * kw
            self.mat = w.transpose(0, 2, 3, 1).reshape(o, -1)
        else:  # [n][k] with k the input features
            self.kc, self.taps = (w.shape[0] if trans else w.shape[1]), 1
            self.mat = w.T if trans else w
        self.n, self.k = self.mat.shape
        self.H = None
        self.choice = ("f32", 0)

    def from_mat(self, m):
        if self.kind == "conv":
            o, c, kh, kw = self.shape
            return np.ascontiguousarray(m.reshape(o, kh, kw, c).transpose(0, 3, 1, 2))
        return np.ascontiguousarray(m.T if self.trans else m)

    def group_rows(self):
        g = self.groups
        per = self.n // g
        return [(r * per, (r + 1) * per) for r in range(g)]

    def quantize(self, fmt, block):
        """(codes [n][k], scales [n][nb], dequantized weights in the ONNX layout)."""
        if fmt == "f32":
            return None, None, self.w
        codes, scales, deq = [], [], []
        if self.H is not None and not getattr(self, "prepared", False):
            self.H = [prepare(h) if h.ndim == 2 else h for h in self.H]  # None where singular
            self.prepared = True
        for gi, (r0, r1) in enumerate(self.group_rows()):
            H = None if self.H is None else self.H[gi]
            c, s, d = quantize_matrix(self.mat[r0:r1], self.kc, fmt, self.eff_block(block), H)
            codes.append(c)
            scales.append(s)
            deq.append(d)
        return np.concatenate(codes), np.concatenate(scales), self.from_mat(np.concatenate(deq))

    def eff_block(self, block):
        # one input channel per group (depthwise): a block per weight would cost more than it saves
        return 0 if self.kc == 1 else block

    def bytes(self, fmt, block):
        return weight_bytes(self.n, self.k, self.kc, fmt, self.eff_block(block)) if fmt != "f32" else self.n * self.k * 4


def constants_to_initializers(model):
    """Paddle exports keep weights in Constant nodes: make them initializers (same names)."""
    _, helper, _ = _onnx()
    keep = []
    for n in model.graph.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = n.attribute[0].t
            t.name = n.output[0]
            model.graph.initializer.append(t)
        else:
            keep.append(n)
    del model.graph.node[:]
    model.graph.node.extend(keep)


def find_layers(model):
    _, _, nh = _onnx()
    inits = {t.name: t for t in model.graph.initializer}
    uses = {}
    for n in model.graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    layers = []
    for n in model.graph.node:
        if n.op_type not in ("Conv", "Gemm", "MatMul") or len(n.input) < 2 or n.input[1] not in inits:
            continue
        t = inits[n.input[1]]
        if t.data_type != 1 or uses.get(n.input[1], 0) != 1:
            continue
        w = nh.to_array(t).astype(np.float32)
        if not np.isfinite(w).all():
            raise ValueError("lowconv: weight %r of node %r holds NaN or Inf" % (t.name, n.name or n.op_type))
        attrs = {a.name: a for a in n.attribute}
        if n.op_type == "Conv":
            if w.ndim != 4:
                continue
            layers.append(Layer(n, t.name, w, "conv", groups=attrs["group"].i if "group" in attrs else 1))
        elif w.ndim == 2:
            if n.op_type == "Gemm" and "transA" in attrs and attrs["transA"].i:
                continue
            trans = not (n.op_type == "Gemm" and "transB" in attrs and attrs["transB"].i)
            layers.append(Layer(n, t.name, w, "fc", trans=trans))
    return layers


def _patches(x, layer, r, max_patches):
    """Input patches [groups][P][k] of a layer's input activation (k ordered tap, channel), at
    most max_patches output positions, drawn at random."""
    if layer.kind == "fc":
        x = x.reshape(-1, x.shape[-1])
        return [x[r.choice(x.shape[0], max_patches, replace=False)] if x.shape[0] > max_patches else x]
    a = {at.name: at for at in layer.node.attribute}
    kh, kw = layer.shape[2], layer.shape[3]
    st = list(a["strides"].ints) if "strides" in a else [1, 1]
    dl = list(a["dilations"].ints) if "dilations" in a else [1, 1]
    pd = list(a["pads"].ints) if "pads" in a else [0, 0, 0, 0]
    if "auto_pad" in a and a["auto_pad"].s in (b"SAME_UPPER", b"SAME_LOWER"):
        pd = [((kh - 1) * dl[0]) // 2, ((kw - 1) * dl[1]) // 2, (kh - 1) * dl[0] // 2, (kw - 1) * dl[1] // 2]
    x = np.pad(x, ((0, 0), (0, 0), (pd[0], pd[2]), (pd[1], pd[3])))
    eh, ew = (kh - 1) * dl[0] + 1, (kw - 1) * dl[1] + 1
    v = np.lib.stride_tricks.sliding_window_view(x, (eh, ew), axis=(2, 3))[:, :, ::st[0], ::st[1], ::dl[0], ::dl[1]]
    nb, c, oh, ow = v.shape[:4]
    pos = np.arange(nb * oh * ow)
    if pos.size > max_patches:
        pos = r.choice(pos.size, max_patches, replace=False)
    bi, yi, xi = np.unravel_index(pos, (nb, oh, ow))
    v = v.transpose(0, 2, 3, 4, 5, 1)[bi, yi, xi].reshape(pos.size, kh * kw, c)  # gathers only these
    g = layer.groups
    cg = c // g
    if cg == 1 and g > 1:  # depthwise: [P][taps][C], H of every channel in one einsum (collect_stats)
        return v
    return [v[:, :, i * cg:(i + 1) * cg].reshape(v.shape[0], -1) for i in range(g)]


class Evaluator:
    """The model on onnxruntime with the quantizable weights as graph inputs, so one session
    evaluates any assignment of (fake-quantized) weights."""

    def __init__(self, model, layers, samples, extra_outputs=()):
        import onnxruntime as ort
        onnx, helper, _ = _onnx()
        m = onnx.ModelProto()
        m.CopyFrom(model)
        names = {L.name for L in layers}
        kept = [t for t in m.graph.initializer if t.name not in names]
        del m.graph.initializer[:]
        m.graph.initializer.extend(kept)
        for L in layers:
            m.graph.input.append(helper.make_tensor_value_info(L.name, 1, list(L.shape)))
        self.n_out = len(m.graph.output)
        for name in extra_outputs:
            m.graph.output.append(helper.make_tensor_value_info(name, 1, None))
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        self.sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        self.layers, self.samples = layers, samples
        self.base = {L.name: L.w for L in layers}
        self.ref = None
        self.am_out, self.am_samples, self.am_ref = None, [], []  # class-score output: argmax checks
        self.am_gap = None  # per class, its least log-probability gap to the top (rowsplit)

    def run(self, sample, weights, outputs=None):
        feed = dict(sample)
        feed.update(weights)
        return self.sess.run(outputs, feed)

    def cosines(self, overrides, n=None):
        """Output cosine against fp32 per calibration sample (the first n)."""
        return self.check(overrides, n, False)[0]

    def check(self, overrides, n=None, argmax=True, n_am=None):
        """(cosines of the first n samples, argmax agreement over the first n_am am_samples or None).
        The argmax set starts with the cosine samples, so each sample runs once."""
        w = dict(self.base)
        w.update(overrides)
        cos = []
        ncos = len(self.samples[:n])
        am = argmax and self.am_out is not None
        use = self.am_samples[:n_am] if am else self.samples[:n]
        hit = tot = 0
        for i, s in enumerate(use):
            outs = self.run(s, w)[:self.n_out]
            if i < ncos:
                got = np.concatenate([o.ravel() for o in outs]).astype(np.float64)
                ref = self.ref[i]
                den = np.linalg.norm(got) * np.linalg.norm(ref)
                cos.append(float(got @ ref / den) if den > 0 else (1.0 if not got.any() and not ref.any() else 0.0))
            if am:
                a = outs[self.am_out].argmax(-1)
                hit += int((a == self.am_ref[i]).sum())
                tot += a.size
        return np.array(cos), (hit / tot if tot else None)


def output_op(model, i):
    """The node making output i, looking through Identity nodes (PP-OCR cls: Softmax -> Identity)."""
    prod = {o: n for n in model.graph.node for o in n.output}
    n = prod.get(model.graph.output[i].name)
    while n is not None and n.op_type == "Identity":
        n = prod.get(n.input[0])
    return n


def class_output(model):
    """Index of the output holding class scores (made by Softmax / LogSoftmax, class axis last,
    positions before it), whose argmax the choice must keep; None if there is none."""
    for i, o in enumerate(model.graph.output):
        n = output_op(model, i)
        if n is None or n.op_type not in ("Softmax", "LogSoftmax"):
            continue
        ax = {a.name: a.i for a in n.attribute}.get("axis", -1)
        rank = len(o.type.tensor_type.shape.dim)
        if ax == -1 or (rank and ax == rank - 1):
            return i
    return None


def collect_stats(model, layers, samples, extra=(), max_patches=2048, max_k=4608, seed=0, check=()):
    """Per layer H = E[x x^T] of its input patches (per group), from samples + extra, and the fp32
    reference outputs of samples (what the choice is checked on); for a class-score output also
    the fp32 argmax of samples + extra + check (check: inputs for the argmax check only; positions
    are few per sample, and flips rare: the argmax check uses all)."""
    r = np.random.default_rng(seed)
    acts = list(dict.fromkeys(L.node.input[0] for L in layers))
    ev = Evaluator(model, layers, samples, [a for a in acts if a not in {o.name for o in model.graph.output}])
    out_names = [o.name for o in ev.sess.get_outputs()]
    ev.ref = []
    am_out, am_ref, gap = class_output(model), [], None
    if am_out is not None:  # per class, how near the top it comes (rowsplit: which rows matter)
        logp = output_op(model, am_out).op_type == "LogSoftmax"
    for i, s in enumerate(list(samples) + list(extra)):
        res = dict(zip(out_names, ev.run(s, ev.base)))
        if i < len(samples):
            ev.ref.append(np.concatenate([res[o.name].ravel() for o in model.graph.output]).astype(np.float64))
        if am_out is not None:
            y = res[model.graph.output[am_out].name]
            am_ref.append(y.argmax(-1))
            gap = _rowsplit.class_gaps(y, logp, gap)
        for L in layers:
            x = res[L.node.input[0]].astype(np.float32)
            ps = _patches(x, L, r, max_patches)
            if isinstance(ps, np.ndarray):  # depthwise
                p = np.ascontiguousarray(ps.transpose(2, 1, 0), dtype=np.float32)  # [C][taps][P]
                h = np.matmul(p, p.transpose(0, 2, 1)).astype(np.float64) / max(1, p.shape[2])
                if L.H is None:
                    L.H = [np.zeros_like(h[0]) for _ in range(h.shape[0])]
                    L.count = L.npatch = 0
                for gi in range(h.shape[0]):
                    L.H[gi] += h[gi]
                L.count += 1
                L.npatch += p.shape[2]
                continue
            full = L.k <= max_k  # past that only the diagonal (a K x K matrix would not fit)
            if L.H is None:
                L.H = [np.zeros((p.shape[1], p.shape[1]) if full else p.shape[1]) for p in ps]
                L.count = L.npatch = 0
            for gi, p in enumerate(ps):
                p = np.ascontiguousarray(p, dtype=np.float32)
                if full:
                    L.H[gi] += (p.T @ p).astype(np.float64) / max(1, p.shape[0])
                else:
                    L.H[gi] += (p.astype(np.float64) ** 2).mean(axis=0)
            L.count += 1
            L.npatch += ps[0].shape[0]
    for L in layers:
        # few patches for many columns (late layers see a few dozen positions per sample) give a
        # rank-deficient H that GPTQ would fit to the calibration set: shrink toward the diagonal
        a = L.k / float(L.k + L.npatch)
        L.H = [h / L.count if h.ndim == 1 else ((1 - a) * h + a * np.diagflat(h.diagonal())) / L.count for h in L.H]
    # the activation outputs are not needed any more: evaluate without them
    fresh = Evaluator(model, layers, samples)
    fresh.ref = ev.ref
    if am_out is not None:
        check = list(check)
        for s in check:
            y = fresh.run(s, fresh.base)[am_out]
            am_ref.append(y.argmax(-1))
            gap = _rowsplit.class_gaps(y, logp, gap)
        fresh.am_out, fresh.am_samples, fresh.am_ref = am_out, list(samples) + list(extra) + check, am_ref
    fresh.am_gap = gap
    return fresh, ev.ref


def _configs(weights, block):
    """Candidate (format, block) per layer, cheapest first. q8 with one scale per output channel
    (block 0) costs 1 byte a weight against 1.125 at block 32, and is close to it in accuracy."""
    c = [("q4", block)] if weights == "q4" else []
    if weights == "q4" and block >= 32:
        c.append(("q4", block // 2))
    if block:
        c.append(("q8", 0))
    c.append(("q8", block))
    c.append(("f32", 0))
    return c


SENS_SAMPLES = 4  # per-layer sensitivities rank layers: a few samples do; the whole-model check uses all
MARGIN = 0.6      # the check asks for 1 - MARGIN * (1 - target): held-out inputs lose more than calibration
BUDGET = {"q4": 0.25, "q8": 0.5}  # the argmax stage adds bytes up to this x fp32 (issue 13: q4 <= 0.25x)
AM_MARGIN = 0.8   # the row split keeps the agreement >= 1 - AM_MARGIN * (1 - target) (or no worse); margin.py


def choose(ev, layers, weights, block, target, log, target_argmax=0.99):
    """Per-layer choice reaching `target` mean cosine (and, for a class-score output,
    `target_argmax` agreement of the per-position argmax) with the fewest bytes: greedy on measured
    per-layer deficits, checked and corrected on the whole model with a safety margin, then for
    the argmax upgrades by measured agreement gained per byte. Returns (cosines, agreement or
    None)."""
    target = 1.0 - MARGIN * (1.0 - target)
    configs = _configs(weights, block)
    deq = {}
    deficit = {}
    t0 = time.time()
    tq = 0.0
    small = 0.02 * (1.0 - target)  # a layer losing less alone is never worth upgrading first
    for li, L in enumerate(layers):
        for ci, c in enumerate(configs):
            same = [d for d in configs[:ci] if d[0] == c[0] and L.eff_block(d[1]) == L.eff_block(c[1])]
            if same:  # depthwise: q8 per channel and at block B are one format
                deficit[li, c] = deficit[li, same[0]]
                if (li, same[0]) in deq:
                    deq[li, c] = deq[li, same[0]]
                continue
            if c[0] == "f32" or (c != configs[0] and deficit[li, configs[0]] < small):
                deficit[li, c] = 0.0  # rounded only if chosen (get)
                continue
            t1 = time.time()
            codes, scales, d = L.quantize(*c)
            tq += time.time() - t1
            deq[li, c] = (codes, scales, d)
            deficit[li, c] = max(0.0, 1.0 - float(ev.cosines({L.name: d}, SENS_SAMPLES).mean()))
        if li % 10 == 9:
            log("  ... %d/%d layers, %.0f s" % (li + 1, len(layers), time.time() - t0))
    log("sensitivity: %d layers x %d formats in %.1f s (rounding %.1f s)" % (
        len(layers), len(configs) - 1, time.time() - t0, tq))
    cur = {li: 0 for li in range(len(layers))}

    def get(li, c):
        if (li, c) not in deq:
            deq[li, c] = layers[li].quantize(*c)
        return deq[li, c]

    def est():
        return sum(deficit[li, configs[ci]] for li, ci in cur.items())

    def weights_of(assign):
        return {L.name: get(li, configs[assign[li]])[2] for li, L in enumerate(layers)
                if configs[assign[li]][0] != "f32"}

    def measure():
        return ev.cosines(weights_of(cur))

    def nbytes(li, ci):
        return layers[li].bytes(*configs[ci])

    cos = measure()
    factor = 1.0
    for _ in range(len(layers) * len(configs)):
        if cos.mean() >= target:
            break
        need = 1.0 - target
        # upgrade the layers with the best deficit removed per byte until the estimate (scaled by
        # how far estimates have been from measurements) reaches the target
        while est() * factor > need:
            best = None
            for li, ci in cur.items():
                b0, d0 = nbytes(li, ci), deficit[li, configs[ci]]
                for cj in range(ci + 1, len(configs)):
                    db = nbytes(li, cj) - b0
                    gain = d0 - deficit[li, configs[cj]]
                    if gain > 0 and db > 0 and (best is None or gain / db > best[0]):
                        best = (gain / db, li, cj)
            if best is None:
                break
            cur[best[1]] = best[2]
        new = measure()
        if est() > 0:
            factor = max(factor, (1.0 - new.mean()) / est()) * 1.05
        if np.allclose(new, cos) and est() * factor <= need:
            factor *= 2.0
        cos = new
        if all(configs[ci][0] == "f32" for ci in cur.values()):
            break
    agree = None
    if ev.am_out is not None:  # before the row split and the argmax stage (margin.py)
        cos, agree = ev.check(weights_of(cur))
        log("cosine stage: cosine %.5f, argmax agreement %.4f on %d samples" % (cos.mean(), agree, len(ev.am_samples)))
    for li, L in enumerate(layers):
        L.choice = configs[cur[li]]
        L.deficits = {c: deficit[li, c] for c in configs}
        L.deficit = deficit[li, L.choice]
        L.q = get(li, L.choice) if L.choice[0] != "f32" else None
    return cos, agree


def _input_info(model):
    inits = {t.name for t in model.graph.initializer}
    ins = [i for i in model.graph.input if i.name not in inits]
    out = []
    for i in ins:
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim]
        out.append((i.name, np.dtype({1: np.float32, 7: np.int64}.get(tt.elem_type, np.float32)), shape))
    return out


def _default_kind_shape(path, shape):
    """Generated calibration: text lines for recognizers / classifiers (48 px high), scenes for
    other image inputs, Gaussian noise for inputs that are not [N, 3, H, W]."""
    if len(shape) != 4 or shape[1] != 3:
        return "noise", [d if d else 1 for d in shape]
    base = os.path.basename(path).lower()
    kind, dflt = ("text", [1, 3, 48, 320]) if "rec" in base else \
        ("text", [1, 3, 48, 192]) if "cls" in base else ("scene", [1, 3, 320, 320])
    return kind, [d if d else dflt[k] for k, d in enumerate(shape)]


def quantize_model(model, output, weights="q4", block=32, calib=None, calib_generate=None, target_cosine=0.995,
                   samples=8, calib_kind=None, calib_shape=None, seed=0, log=print, target_argmax=0.99,
                   plan_file=None):
    """Quantizes `model` (path) into `output` (path). Returns a report dict: per-layer choices,
    bytes, achieved cosine (mean and min over the calibration set), for a class-score output
    (Softmax / LogSoftmax over the last axis) the per-position argmax agreement with fp32 over
    every position of the calibration inputs, whether the targets were met. plan_file: also the
    per-layer choice as text, for lowconv's load-time q4 (write_plan)."""
    onnx, _, _ = _onnx()
    if weights not in ("q4", "q8"):
        raise ValueError("lowconv: weights = %r (q4 or q8)" % (weights,))
    if block not in (0, 16, 32, 64, 128, 256):
        raise ValueError("lowconv: block = %r (0, 16, 32, 64, 128 or 256)" % (block,))
    if not 0.0 < target_cosine <= 1.0:
        raise ValueError("lowconv: target cosine %r is not in (0, 1]" % (target_cosine,))
    if not 0.0 <= target_argmax <= 1.0:
        raise ValueError("lowconv: target argmax agreement %r is not in [0, 1]" % (target_argmax,))
    m = onnx.load(str(model))
    constants_to_initializers(m)
    info = _input_info(m)
    if len(info) != 1:
        raise ValueError("lowconv: quantize handles one-input models (this one takes %s)" % [i[0] for i in info])
    if calib:
        data = _calib.load_npy(calib, info[0])
        if not data:
            raise ValueError("lowconv: the calibration files hold no sample")
    else:
        kind, shape = _default_kind_shape(str(model), info[0][2])
        # generated inputs are cheap: statistics from three times as many as the cosine check runs
        # on, and for class scores the argmax check on three times more again (a flip is rare)
        n = samples * (6 if class_output(m) is not None else 3)
        data = _calib.generate(calib_kind or kind, calib_shape or shape, n, seed)
    data, extra, more = (data, [], []) if calib else (data[:samples], data[samples:3 * samples], data[3 * samples:])
    samples_ = [{info[0][0]: d} for d in data]
    layers = find_layers(m)
    if not layers:
        raise ValueError("lowconv: no Conv/Gemm/MatMul with constant fp32 weights in %s" % model)
    t0 = time.time()
    ev, _ = collect_stats(m, layers, samples_, [{info[0][0]: d} for d in extra], seed=seed,
                          check=[{info[0][0]: d} for d in more])
    log("calibration: %d samples of %s (+%d for statistics, +%d for the argmax check), %d layers, statistics in "
        "%.1f s" % (len(data), list(data[0].shape), len(extra), len(more), len(layers), time.time() - t0))
    cos, agree = choose(ev, layers, weights, block, target_cosine, log, target_argmax)
    if weights == "q4":
        cos, agree = _rowsplit.try_split(ev, m, layers, ("q4", block), cos, agree, 1.0 - MARGIN * (1.0 - target_cosine),
                                         1.0 - AM_MARGIN * (1.0 - target_argmax), not calib, log)
    if ev.am_out is not None:
        cos, agree = _margin.apply(ev, m, layers, _configs(weights, block), target_argmax, log, BUDGET[weights])
        if weights == "q4" and not any(getattr(L, "split", None) for L in layers):  # the stage made it q8
            cos, agree = _rowsplit.try_split(ev, m, layers, ("q4", block), cos, agree,
                                             1.0 - MARGIN * (1.0 - target_cosine),
                                             1.0 - AM_MARGIN * (1.0 - target_argmax), not calib, log)
    f32_bytes = sum(L.n * L.k * 4 for L in layers)
    q_bytes = 0
    rows = []
    for L in layers:
        fmt, b = L.choice
        sp = getattr(L, "split", None)
        nbytes = sp["bytes"] if sp else L.bytes(fmt, b)
        q_bytes += nbytes
        row = {"layer": L.node.name or L.name, "weight": L.name, "op": L.node.op_type, "shape": list(L.shape),
               "format": fmt, "block": L.eff_block(b) if fmt != "f32" else 0, "bytes": nbytes, "deficit": L.deficit}
        if sp:  # rows in two formats: "q8+q4", block = the q4 rows' block
            row.update(format=fmt + "+" + sp["rest_fmt"][0], block=L.eff_block(sp["rest_fmt"][1]),
                       split={"kept_rows": int(sp["keep"].size), "kept_format": list(sp["keep_fmt"]),
                              "rest_rows": int(sp["rest"].size), "rest_format": list(sp["rest_fmt"])})
        rows.append(row)
        log("  %-40s %-6s %-18s %-5s block %-3d %9d B  alone: cos %.5f%s" % (
            (L.node.name or L.name)[:40], L.node.op_type, "x".join(map(str, L.shape)), row["format"],
            row["block"], nbytes, 1.0 - L.deficit, " (%d rows q8, %d q4)" % (sp["keep"].size, sp["rest"].size)
            if sp else ""))
    write_model(m, layers, str(output))
    met = bool(cos.mean() >= target_cosine and (agree is None or agree >= target_argmax))
    log("weights: %d B of %d B fp32 (%.3fx); output cosine vs fp32: mean %.5f, min %.5f (target %.4f)" % (
        q_bytes, f32_bytes, q_bytes / f32_bytes, cos.mean(), cos.min(), target_cosine))
    if agree is not None:
        log("argmax agreement with fp32 over all %d calibration inputs' positions: %.4f (target %.4f)" % (
            len(ev.am_samples), agree, target_argmax))
    if cos.mean() < target_cosine:
        log("warning: target cosine %.4f not met (%.5f) even with the layers kept at higher precision" % (
            target_cosine, cos.mean()))
    if agree is not None and agree < target_argmax:
        log("warning: target argmax agreement %.4f not met (%.4f)" % (target_argmax, agree))
    counts = {}
    for r in rows:
        counts[r["format"]] = counts.get(r["format"], 0) + 1
    log("layers: %s; wrote %s" % (", ".join("%s %d" % kv for kv in sorted(counts.items())), output))
    rep = {"layers": rows, "weight_bytes": q_bytes, "fp32_weight_bytes": f32_bytes, "cosine_mean": float(cos.mean()),
           "cosine_min": float(cos.min()), "argmax_agreement": agree, "target_met": met, "output": str(output)}
    if plan_file:
        write_plan(rep, plan_file, counts)
    return rep


def main(argv=None):
    ap = argparse.ArgumentParser(prog="lowconv quantize", description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--weights", default="q4", choices=["q4", "q8"])
    ap.add_argument("--block", type=int, default=32)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--calib", nargs="+", metavar="FILE.npy")
    g.add_argument("--calib-generate", action="store_true", help="rendered text lines / scenes (default)")
    ap.add_argument("--calib-kind", choices=["text", "scene", "noise"])
    ap.add_argument("--calib-shape", help="NxCxHxW of generated samples, e.g. 1x3x48x320")
    ap.add_argument("--samples", type=int, default=8, help="generated calibration samples")
    ap.add_argument("--target-cosine", type=float, default=0.995)
    ap.add_argument("--target-argmax", type=float, default=0.99,
                    help="per-position argmax agreement to keep when the output is class scores (Softmax)")
    ap.add_argument("--plan-file", help="also write the per-layer choice as text (lowconv's load-time q4 reads it)")
    a = ap.parse_args(argv)
    shape = None
    if a.calib_shape:
        try:
            shape = [int(v) for v in a.calib_shape.lower().split("x")]
        except ValueError:
            ap.error("--calib-shape %r: expected NxCxHxW" % a.calib_shape)
    try:
        rep = quantize_model(a.model, a.output, a.weights, a.block, a.calib, a.calib_generate, a.target_cosine,
                             a.samples, a.calib_kind, shape, target_argmax=a.target_argmax,
                             plan_file=a.plan_file)
    except (ValueError, OSError) as e:
        print("lowconv quantize: %s" % e, file=sys.stderr)
        return 2
    return 0 if rep["target_met"] else 3


if __name__ == "__main__":
    sys.exit(main())
