"""The argmax stage of the quantizer for a class-score output (an OCR recognizer's per-position
characters): upgrades chosen by the expected number of argmax flips, not by flips counted.

Why not count flips: on PP-OCRv4 rec the check set (48 lines, 1920 positions) sees about 14 flips;
upgrades ranked by a few flips more or less fitted the check lines and did not carry over to
held-out ones (docs/benchmarks.md, h13 / h15 / h20). Here every check position counts through its
fp32 top-1 margin m_p = log p_top - log p_second:
- per layer l at format f, quantized alone, the margin moves by d_lfp (measured on every check
  input, so each position's sensitivity to each layer is known, not only whether it flipped);
- the layers' errors are taken as independent: with the choice a, position p's margin moves by a
  spread s_p^2 = sum_l d_l,a(l),p^2, and flips with probability Phi(-m_p / s_p);
- risk(a) = sum_p Phi(-m_p / s_p), the expected flips; smooth, so an upgrade's gain is measured
  on all positions, the near-ties (m_p < s_p, which any upgrade helps little) weighing least.
Upgrades are taken greedily by risk removed per byte until the predicted agreement 1 - risk / P
reaches 1 - MARGIN * (1 - target): a larger margin than the cosine's, because a held-out set of a
thousand positions counts its flips with a Poisson spread (PP-OCRv4 rec: risk 12.8 -> 6.5 of 1920
positions; held-out 4 x 32 lines 99.16 % -> 99.59 % mean agreement, docs/benchmarks.md h22)."""
import math
import time

import numpy as np

from . import rowsplit as _rowsplit

MARGIN = 0.35  # predicted agreement >= 1 - MARGIN * (1 - target argmax); 0.99 -> 0.9965
BATCH = 16     # check inputs per onnxruntime run when the input's first dimension is free


def _phi_neg(z):
    """Phi(-z) for z >= 0 (numpy array)."""
    erfc = np.frompyfunc(math.erfc, 1, 1)
    return 0.5 * erfc(z / math.sqrt(2.0)).astype(np.float64)


def _batches(ev, samples):
    """The check inputs stacked BATCH at a time when every input's dim 0 may vary, else one each."""
    names = list(samples[0])
    shapes = {i.name: i.shape for i in ev.sess.get_inputs()}
    free = all(samples[0][n].shape[:1] == (1,) and not isinstance((shapes.get(n) or [1])[0], int) for n in names)
    if not free:
        return [dict(s) for s in samples]
    out = []
    for i in range(0, len(samples), BATCH):
        out.append({n: np.concatenate([s[n] for s in samples[i:i + BATCH]]) for n in names})
    return out


class Margins:
    """fp32 top-1 classes and margins over every check position; margins of any weights."""

    def __init__(self, ev, logp):
        self.ev, self.logp = ev, logp
        self.batches = _batches(ev, ev.am_samples)
        try:
            lp = self._logp({})
        except Exception:  # noqa: BLE001 (a model whose batch does not stack after all)
            self.batches = [dict(s) for s in ev.am_samples]
            lp = self._logp({})
        self.top = lp.argmax(1)
        self.m0 = self._margin(lp)

    def _logp(self, overrides):
        w = dict(self.ev.base)
        w.update(overrides)
        outs = [self.ev.run(b, w)[self.ev.am_out] for b in self.batches]
        a = np.concatenate([o.reshape(-1, o.shape[-1]) for o in outs]).astype(np.float64)
        return a if self.logp else np.log(np.maximum(a, 1e-38))

    def _margin(self, lp):
        r = np.arange(lp.shape[0])
        t = lp[r, self.top].copy()
        lp[r, self.top] = -np.inf
        return t - lp.max(axis=1)

    def delta(self, overrides):
        return self._margin(self._logp(overrides)) - self.m0

    def risk(self, var):
        return float(_phi_neg(np.maximum(self.m0, 0.0) / np.sqrt(var + 1e-12)).sum())


def stage(ev, layers, configs, cur, weight_of, nbytes, frozen, target_argmax, logp, log, room, measure):
    """Upgrades cur (layer index -> config index) in place: first while the predicted agreement is
    short of 1 - MARGIN * (1 - target) and the upgrades fit in room bytes; then, without a byte
    limit, while the agreement measured on the check inputs (measure(cur)) is below 1 - AM (1 -
    target) (quantizer.AM_MARGIN: the target itself holds where asked for). weight_of(li, ci):
    dequantized weights (None for f32); nbytes(li, ci); frozen: layer indices never upgraded (a
    row-split layer). Returns measure(cur) = (cosines, agreement)."""
    from .quantizer import AM_MARGIN
    t0 = time.time()
    mg = Margins(ev, logp)
    P = mg.m0.size
    want = 1.0 - MARGIN * (1.0 - target_argmax)
    D = {}

    def d2(li, ci):
        if (li, ci) not in D:
            w = weight_of(li, ci)
            D[li, ci] = np.zeros(P) if w is None else mg.delta({layers[li].name: w}) ** 2
        return D[li, ci]

    def nxt(li, ci):
        """The next candidate costing more bytes, skipping same-format duplicates (depthwise)."""
        L = layers[li]
        for cj in range(ci + 1, len(configs)):
            a, b = configs[ci], configs[cj]
            if nbytes(li, cj) > nbytes(li, ci) and not (a[0] == b[0] and L.eff_block(a[1]) == L.eff_block(b[1])):
                return cj
        return None

    st = {"var": sum(d2(li, ci) for li, ci in cur.items())}
    st["risk"] = mg.risk(st["var"])
    log("argmax: %d positions, fp32 margins 1st / 10th percentile %.3f / %.3f; expected flips %.2f (agreement "
        "%.4f predicted, want %.4f), %.1f s" % (P, np.percentile(mg.m0, 1), np.percentile(mg.m0, 10), st["risk"],
                                               1 - st["risk"] / P, want, time.time() - t0))

    def step(limit):
        """The upgrade removing the most expected flips per byte (then the most squared margin
        error per byte) within limit bytes; False when none helps."""
        best = None
        for li, ci in cur.items():
            cj = None if li in frozen else nxt(li, ci)
            if cj is None or nbytes(li, cj) - nbytes(li, ci) > limit:
                continue
            db = nbytes(li, cj) - nbytes(li, ci)
            v2 = st["var"] - d2(li, ci) + d2(li, cj)
            r2 = mg.risk(v2)
            key = ((st["risk"] - r2) / db, float((d2(li, ci) - d2(li, cj)).sum()) / db)
            if key[0] > 0 or key[1] > 0:
                if best is None or key > best[0]:
                    best = (key, li, cj, v2, r2, db)
        if best is None:
            return 0
        _, li, cj, st["var"], st["risk"], db = best
        cur[li] = cj
        log("  argmax: %s -> %s %d, expected flips %.2f" % (layers[li].node.name or layers[li].name,
                                                           *configs[cj], st["risk"]))
        return db

    while 1 - st["risk"] / P < want:
        db = step(room)
        if not db:
            break
        room -= db
    cos, agree = measure(cur)
    hard = 1.0 - AM_MARGIN * (1.0 - target_argmax)
    while agree < hard and step(float("inf")):
        cos, agree = measure(cur)
    log("argmax stage: expected flips %.2f of %d positions (agreement %.4f predicted), measured agreement %.4f, "
        "cosine %.5f on %d samples, %.1f s" % (st["risk"], P, 1 - st["risk"] / P, agree, cos.mean(),
                                               len(ev.am_samples), time.time() - t0))
    return cos, agree


def apply(ev, model, layers, configs, target_argmax, log, max_ratio=float("inf")):
    """stage() over the layers' choices (a row-split layer kept as it is), adding bytes up to
    max_ratio x the fp32 weights' (never below the bytes the choice has); sets the upgraded
    layers' choice, rounding and deficit. Returns the measured (cosines, agreement)."""
    cur = {li: configs.index(L.choice) for li, L in enumerate(layers)}
    frozen = {li for li, L in enumerate(layers) if getattr(L, "split", None)}
    qs = {}

    def weight_of(li, ci):
        L, c = layers[li], configs[ci]
        if c[0] == "f32":
            return None
        if li in frozen:
            return _rowsplit.deq_split(L)
        if (li, ci) not in qs:
            qs[li, ci] = L.q if c == L.choice else L.quantize(*c)
        return qs[li, ci][2]

    from .quantizer import output_op
    logp = output_op(model, ev.am_out).op_type == "LogSoftmax"
    nbytes = lambda li, ci: layers[li].bytes(*configs[ci])  # noqa: E731
    have = sum(L.split["bytes"] if li in frozen else nbytes(li, cur[li]) for li, L in enumerate(layers))
    room = max(0.0, max_ratio * sum(L.n * L.k * 4 for L in layers) - have)

    def measure(a):
        return ev.check({L.name: weight_of(li, a[li]) for li, L in enumerate(layers) if configs[a[li]][0] != "f32"})

    cos, agree = stage(ev, layers, configs, cur, weight_of, nbytes, frozen, target_argmax, logp, log, room, measure)
    for li, L in enumerate(layers):
        c = configs[cur[li]]
        if c != L.choice:
            L.choice, L.deficit = c, L.deficits.get(c, 0.0)
            L.q = None if c[0] == "f32" else (qs[li, cur[li]] if (li, cur[li]) in qs else L.quantize(*c))
    return cos, agree
