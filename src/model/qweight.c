/* Quantized conv weights from the model file (qweight.h). Codes stay where the loader mapped
 * them; scales are reordered once into lowconv's [out][tap][block] order at load. */
#include "model/qweight.h"

#include "model/graph.h"
#include "conv/conv.h"
#include "model/onnx_map.h"
#include "quant/qkernels.h"
#include "quant/quant.h"

#include <math.h>
#include <string.h>

#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static int is_std(const char *d) { return !d[0] || !strcmp(d, "ai.onnx"); }

/* The one live node reading value v and at which input, or -1 (none or several). */
static int sole_reader(const lc_model *m, int v, int *slot) {
  int who = -1;
  for (int p = 0; p < m->n_nodes; p++) {
    const lc_gnode *g = &m->nodes[p];
    if (g->dead) continue;
    for (int k = 0; k < g->n.n_inputs; k++)
      if (g->in[k] == v) {
        if (who >= 0) return -1;
        who = p, *slot = k;
      }
  }
  for (int i = 0; i < m->n_outputs; i++)
    if (m->outputs[i] == v) return -1;
  return who;
}

static const lc_value *const_in(const lc_model *m, const lc_gnode *g, int k) {
  if (k >= g->n.n_inputs || g->in[k] < 0) return NULL;
  const lc_value *v = &m->values[g->in[k]];
  return v->is_const && v->t.data ? v : NULL;
}

/* Signed code i: int8, int4, or uint4 read as code + 8 (a uint4 zero point z is then z - 8). */
static int code_at(const lc_tensor *t, size_t i) {
  const uint8_t *b = t->data;
  if (t->dtype == LC_DT_INT8) return (int8_t)b[i];
  int u = (b[i >> 1] >> ((i & 1) * 4)) & 15;
  if (t->dtype == LC_DT_UINT4) return u - 8;
  return u >= 8 ? u - 16 : u;
}

/* lowconv's block for an ONNX block_size B over kc channels per tap (0: not representable). */
static int lc_block(int64_t B, int64_t kc) {
  static const int ok[] = {16, 32, 64, 128, 256};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (B == ok[i] || (B >= kc && ok[i] >= kc)) return ok[i];
  return 0;
}

/* [O][kh][kw][I] codes turned into a Conv's OIHW weights: node tr is Transpose(perm 0, 3, 1, 2). */
static int ohwi_transpose(const lc_model *m, int tr) {
  const lc_node *n = &m->nodes[tr].n;
  const int64_t *perm;
  return is_std(n->domain) && !strcmp(n->op_type, "Transpose") && n->n_outputs == 1 &&
         lc_attr_ints(n, "perm", &perm) == 4 && perm[0] == 0 && perm[1] == 3 && perm[2] == 1 && perm[3] == 2;
}

/* Which weight input reads the value: the weight tensor's output-channel, input-channel and last
 * tap axes (-1: not a weight lowconv packs); *tr: the Transpose node in between, or -1. */
static int weight_axes(const lc_model *m, int v, int *out_axis, int *in_axis, int *tap_axis, int *tr) {
  int slot = -1, c = sole_reader(m, v, &slot);
  *tr = -1;
  if (c >= 0 && slot == 0 && ohwi_transpose(m, c) && m->nodes[c].out[0] >= 0) {
    int t = c, s2 = -1;
    c = sole_reader(m, m->nodes[t].out[0], &s2);
    if (c < 0 || s2 != 1 || !is_std(m->nodes[c].n.domain) || strcmp(m->nodes[c].n.op_type, "Conv")) return -1;
    return *tr = t, *out_axis = 0, *in_axis = 3, *tap_axis = 2, 4;
  }
  if (c < 0 || slot != 1 || !is_std(m->nodes[c].n.domain)) return -1;
  const lc_node *n = &m->nodes[c].n;
  *tap_axis = 3;
  if (!strcmp(n->op_type, "Conv")) return *out_axis = 0, *in_axis = 1, 4;
  if (!strcmp(n->op_type, "MatMul")) return *out_axis = 1, *in_axis = 0, 2;
  if (!strcmp(n->op_type, "Gemm") && !lc_attr_int(n, "transA", 0)) {
    int tb = lc_attr_int(n, "transB", 0) != 0;
    return *out_axis = tb ? 0 : 1, *in_axis = tb ? 1 : 0, 2;
  }
  return -1;
}

static void strides(const lc_tensor *t, size_t *st) {
  size_t s = 1;
  for (int d = t->ndim - 1; d >= 0; d--) st[d] = s, s *= (size_t)t->dims[d];
}

static lc_status map_one(lc_model *m, lc_gnode *g) {
  const lc_value *x = const_in(m, g, 0), *sc = const_in(m, g, 1), *zp = const_in(m, g, 2);
  if (!x || !sc || g->n.n_outputs < 1 || g->out[0] < 0) return LC_OK;
  if (x->t.dtype != LC_DT_INT8 && x->t.dtype != LC_DT_INT4 && x->t.dtype != LC_DT_UINT4) return LC_OK;
  int oa, ia, ta, tr, nd = weight_axes(m, g->out[0], &oa, &ia, &ta, &tr);
  if (nd < 0 || x->t.ndim != nd) return LC_OK;
  const char *nm = g->n.name;
  if (g->n.n_inputs > 2 && g->in[2] >= 0 && !zp)
    return lc_error(LC_ERR_UNSUPPORTED, "model: DequantizeLinear '%s': zero point must be a constant", nm);
  if (sc->t.dtype != LC_DT_FLOAT)
    return lc_error(LC_ERR_UNSUPPORTED, "model: DequantizeLinear '%s': scale is %s (float32 only)", nm,
                    lc_dtype_name(sc->t.dtype));
  int64_t n = x->t.dims[oa], kc = x->t.dims[ia], taps = nd == 4 ? x->t.dims[ta - 1] * x->t.dims[ta] : 1;
  int64_t axis = lc_attr_int(&g->n, "axis", 1), B = lc_attr_int(&g->n, "block_size", 0);
  if (axis < 0) axis += nd;
  size_t ns, bpt = 1, nbs, ws[4], ss[4] = {0, 0, 0, 0};
  if (lc_tensor_numel(&sc->t, &ns)) return lc_error(LC_ERR_IO, "model: DequantizeLinear '%s': bad scale", nm);
  strides(&x->t, ws);
  int block = 0;
  if (B == 0) { /* per tensor (one scale) or per output channel */
    if (!(ns == 1 && sc->t.ndim <= 1) && !(axis == oa && sc->t.ndim == 1 && (int64_t)ns == n))
      return lc_error(LC_ERR_IO, "model: DequantizeLinear '%s': scale has %zu values; per-channel weights need %lld "
                      "along axis %d, or one", nm, ns, (long long)n, oa);
    ss[oa] = ns == 1 ? 0 : 1;
  } else {
    if (B < 0 || axis != ia)
      return lc_error(LC_ERR_UNSUPPORTED, "model: DequantizeLinear '%s': blocked weights need axis %d (input "
                      "channels) and block_size > 0 (axis %lld, block_size %lld)", nm, ia, (long long)axis, (long long)B);
    bpt = (size_t)((kc + B - 1) / B);
    lc_tensor want = x->t;
    want.dims[ia] = (int64_t)bpt;
    if (sc->t.ndim != nd || memcmp(sc->t.dims, want.dims, (size_t)nd * sizeof(int64_t)))
      return lc_error(LC_ERR_IO, "model: DequantizeLinear '%s': scale shape must be the weight's with dim %d = "
                      "ceil(%lld / %lld) = %zu", nm, ia, (long long)kc, (long long)B, bpt);
    if (!(block = lc_block(B, kc)))
      return lc_error(LC_ERR_UNSUPPORTED, "model: DequantizeLinear '%s': block_size %lld (lowconv: 16, 32, 64, "
                      "128, 256, or at least the %lld input channels)", nm, (long long)B, (long long)kc);
    strides(&want, ss);
    if (block >= kc) bpt = 1;
  }
  if (zp) {
    size_t nz;
    if (zp->t.dtype != x->t.dtype || lc_tensor_numel(&zp->t, &nz) || nz != ns)
      return lc_error(LC_ERR_IO, "model: DequantizeLinear '%s': zero point must be %s with the scale's %zu values",
                      nm, lc_dtype_name(x->t.dtype), ns);
  }
  size_t ntap = block ? (size_t)taps : 1, nb1 = ntap * bpt; /* block 0: one scale spans a whole row */
  if (!lc_mul_sz(nb1, (size_t)n, &nbs) || nbs > SIZE_MAX / 2 / sizeof(float))
    return lc_error(LC_ERR_OVERFLOW, "model: DequantizeLinear '%s': too many scales", nm);
  /* signed zero point of scale i: uint4 without one has zero point 0, i.e. -8 in code + 8 terms */
#define ZQ(i) (zp ? code_at(&zp->t, (i)) : x->t.dtype == LC_DT_UINT4 ? -8 : 0)
  int asym = 0;
  if (zp && zp->t.dtype == LC_DT_UINT4 && ns % 2 == 0) { /* all 8s (what lowconv quantize writes): bytes 0x88 */
    const uint8_t *zb = zp->t.data;
    for (size_t i = 0; i < ns / 2; i++) asym |= zb[i] != 0x88;
  } else {
    for (size_t i = 0; i < ns; i++) asym |= ZQ(i) != 0;
  }
  lc_qweight *q = lc_arena_alloc(m->arena, sizeof *q);
  float *s = lc_arena_alloc(m->arena, (nbs ? nbs : 1) * sizeof(float));
  float *o = asym ? lc_arena_alloc(m->arena, (nbs ? nbs : 1) * sizeof(float)) : NULL;
  if (!q || !s || (asym && !o)) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  lc_onnx_ensure(m->onnx, sc->t.data); /* a misaligned scale may be a copy filled on demand */
  const float *sv = sc->t.data;
  for (size_t r = 0; r < (size_t)n; r++)
    for (size_t t = 0; t < ntap; t++)
      for (size_t b = 0; b < bpt; b++) {
        /* the scale's own layout: the weight's, with blocks along the input axis */
        size_t src = r * ss[oa] + b * ss[ia] + (nd == 4 ? t * ss[ta] : 0), dst = r * nb1 + t * bpt + b;
        float v = sv[src];
        if (!isfinite(v)) return lc_error(LC_ERR_IO, "model: DequantizeLinear '%s': scale %zu is not finite", nm, src);
        s[dst] = v;
        if (o) o[dst] = -(float)ZQ(src) * v;
      }
#undef ZQ
  *q = (lc_qweight){x->t.dtype == LC_DT_INT8 ? LC_WEIGHTS_Q8 : LC_WEIGHTS_Q4, block, asym, n, kc, taps,
                    x->t.data, ws[oa], ws[ia], nd == 4 ? ws[ta] : 0, s, o, nb1, x->t.dtype == LC_DT_UINT4,
                    lc_onnx_readable_after(m->onnx, x->t.data, x->t.nbytes), 0};
  int vid = tr >= 0 ? m->nodes[tr].out[0] : g->out[0];
  lc_value *out = &m->values[vid];
  const char *name = out->t.name;
  out->t = x->t;
  out->t.name = name;
  if (tr >= 0) { /* the Conv sees OIHW dims; q's strides say where the codes are */
    out->t.dims[1] = x->t.dims[3], out->t.dims[2] = x->t.dims[1], out->t.dims[3] = x->t.dims[2];
    m->nodes[tr].dead = 1;
  }
  out->t.quant = q;
  out->is_const = out->shaped = 1;
  out->producer = -1;
  g->dead = 1;
  return LC_OK;
}

lc_status lc_qweight_map(lc_model *m) {
  for (int p = 0; p < m->n_nodes; p++) {
    lc_gnode *g = &m->nodes[p];
    if (g->dead || !is_std(g->n.domain) || strcmp(g->n.op_type, "DequantizeLinear")) continue;
    lc_status s = map_one(m, g);
    if (s) return s;
  }
  return LC_OK;
}

lc_status lc_qweight_scaled(lc_model *m, const lc_qweight *q, const double *f, const lc_qweight **out) {
  (void)m;
  size_t per = q->nb;
  /* map_one made these arrays for q alone, in the arena (writable) */
  float *s = (float *)(uintptr_t)q->scales, *o = (float *)(uintptr_t)q->offsets;
  for (size_t r = 0; r < (size_t)q->n; r++)
    for (size_t i = r * per; i < (r + 1) * per; i++) {
      s[i] = (float)(s[i] * f[r]);
      if (o) o[i] = (float)(o[i] * f[r]);
    }
  *out = q;
  return LC_OK;
}

/* q over its codes where they lie, if they are in lowconv's layout: 1 with *wm filled, 0 if a copy
 * is needed, -1 on an error (bad scales). */
static int wrap_in_place(const lc_qweight *q, lc_qmatrix *wm) {
  size_t kc = (size_t)q->kc, taps = (size_t)q->taps, k = kc * taps;
  lc_quant_spec sp = {q->format, q->block, q->asym, kc, 0};
  if (q->format == LC_WEIGHTS_Q4 ? !q->biased || kc % 2 || k % 2 : q->biased) return 0;
  if (q->cs_ch != 1 || (taps > 1 && q->cs_tap != kc) || q->cs_row != k || q->slack < LC_QSLACK) return 0;
  size_t rb = lc_qmatrix_row_bytes(k, &sp);
  if (!rb || rb * 2 != k * (q->format == LC_WEIGHTS_Q4 ? 1 : 2)) return 0; /* rows abut, no padding */
  if (lc_qmatrix_wrap((size_t)q->n, k, &sp, q->codes, q->scales, q->offsets, wm)) return -1;
  ((lc_qweight *)(uintptr_t)q)->in_place = 1; /* arena memory: the planner must not drop these pages */
  return 1;
}

/* Row r of the codes in lowconv's order [tap][in], one int8 each; tmp holds k bytes. */
static void decode_row(const lc_qweight *q, size_t r, int8_t *row, int8_t *tmp) {
  size_t kc = (size_t)q->kc, taps = (size_t)q->taps, k = kc * taps, e0 = r * q->cs_row;
  const uint8_t *b = q->codes;
  int oihw = q->cs_ch == taps && (taps == 1 || q->cs_tap == 1); /* OIHW conv, [N][K] matrix */
  int ohwi = q->cs_ch == 1 && (taps == 1 || q->cs_tap == kc);   /* lowconv's own order already */
  if (!oihw && !ohwi) {
    lc_tensor t = {.dtype = q->format == LC_WEIGHTS_Q8 ? LC_DT_INT8 : q->biased ? LC_DT_UINT4 : LC_DT_INT4,
                   .data = (void *)(uintptr_t)b};
    for (size_t tp = 0; tp < taps; tp++)
      for (size_t ic = 0; ic < kc; ic++) row[tp * kc + ic] = (int8_t)code_at(&t, e0 + ic * q->cs_ch + tp * q->cs_tap);
    return;
  }
  int8_t *lin = taps > 1 && !ohwi ? tmp : row; /* source order [in][tap]: transposed below */
  if (q->format == LC_WEIGHTS_Q8) {
    memcpy(lin, b + e0, k);
  } else {
    size_t i = 0;
    int flip = q->biased ? 0 : 8; /* int4 two's complement: nibble ^ 8 is code + 8 */
    if (!(e0 & 1)) { /* whole bytes: two codes each, low nibble first (vectorizes) */
      const uint8_t *p = b + e0 / 2;
      for (; i + 1 < k; i += 2) {
        unsigned v = p[i >> 1];
        lin[i] = (int8_t)(((int)(v & 15) ^ flip) - 8);
        lin[i + 1] = (int8_t)(((int)(v >> 4) ^ flip) - 8);
      }
    }
    for (; i < k; i++) {
      size_t e = e0 + i;
      lin[i] = (int8_t)((((b[e >> 1] >> ((e & 1) * 4)) & 15) ^ flip) - 8);
    }
  }
  if (lin != row)
    for (size_t ic = 0; ic < kc; ic++)
      for (size_t tp = 0; tp < taps; tp++) row[tp * kc + ic] = tmp[ic * taps + tp];
}

lc_status lc_qweight_conv_create(lc_context *ctx, const lc_qweight *q, lc_conv_desc *d, lc_conv **out) {
  lc_qmatrix wm;
  int w = lc_conv_takes_qmatrix(ctx) ? wrap_in_place(q, &wm) : 0;
  if (w < 0) return LC_ERR_INVALID_ARG;
  d->weights = NULL;
  d->weight_format = q->format;
  d->block_size = q->block;
  d->asym = q->asym;
  if (w) return lc_conv_create_qm(ctx, d, &wm, out);
  size_t k = (size_t)(q->taps * q->kc), nk;
  if (!lc_mul_sz(k, (size_t)q->n, &nk)) return lc_error(LC_ERR_OVERFLOW, "model: quantized weight size overflows");
  int8_t *c = lc_malloc(nk ? nk : 1), *tmp = lc_malloc(k ? k : 1); /* lc_conv takes the whole code array */
  if (!c || !tmp) {
    lc_free(c);
    lc_free(tmp);
    return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  }
  for (size_t r = 0; r < (size_t)q->n; r++) decode_row(q, r, c + r * k, tmp);
  lc_free(tmp);
  d->q_codes = c;
  d->q_scales = q->scales;
  d->q_offsets = q->offsets;
  lc_status s = lc_conv_create(ctx, d, out);
  lc_free(c);
  return s;
}

typedef struct row_src {
  const lc_qweight *q;
  int8_t *tmp;
} row_src;

static void matrix_row(void *ctx, size_t r, size_t k, int8_t *row) {
  const row_src *rs = ctx;
  (void)k;
  decode_row(rs->q, r, row, rs->tmp);
}

lc_status lc_qweight_qmatrix(const lc_qweight *q, lc_qmatrix *out) {
  int w = wrap_in_place(q, out);
  if (w) return w < 0 ? LC_ERR_INVALID_ARG : LC_OK;
  size_t nbs = q->nb * (size_t)q->n, k = (size_t)(q->kc * q->taps);
  row_src rs = {q, lc_malloc(k ? k : 1)};
  if (!rs.tmp) return lc_error(LC_ERR_NO_MEMORY, "model: out of memory");
  lc_quant_spec sp = {q->format, q->block, q->asym, (size_t)q->kc, 0};
  lc_status s = lc_qmatrix_from_code_rows((size_t)q->n, k, &sp, matrix_row, &rs, q->scales, nbs, q->offsets,
                                          q->offsets ? nbs : 0, out);
  lc_free(rs.tmp);
  return s;
}
