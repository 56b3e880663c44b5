/* Conv (through lc_conv, weights packed once in init) and ConvTranspose (direct scatter-add).
 * 1-D inputs run as 2-D with H = 1. Fused attributes set by the graph: "_act", "_act_min",
 * "_act_max", "_act_alpha" and, with "_residual" = 1, a residual tensor as the last input; with
 * "_se" = 1 (fuse_device.c) input 3 is x and the output x * the conv's [N, M, 1, 1] per channel. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conv/conv.h"
#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "model/qweight.h"
#include "quant/quant.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static int64_t div_ceil_pos(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Reads strides/dilations/pads/output_padding for the spatial axes; 1-D puts identity values on H. */
static lc_status read_spatial(const lc_node *n, const char *name, int sp, int64_t dflt, int64_t *v, int pairs,
                              int *given) {
  const int64_t *a;
  size_t na = lc_attr_ints(n, name, &a);
  size_t want = (size_t)sp * (pairs ? 2 : 1);
  *given = na > 0;
  if (na && na != want) return lcop_fail(n, LC_ERR_INVALID_ARG, "%s has %zu values, expected %zu", name, na, want);
  for (int i = 0; i < 2; i++) {
    int k = i - (2 - sp);
    v[i] = k >= 0 && na ? a[k] : dflt;
    if (pairs) v[i + 2] = k >= 0 && na ? a[k + sp] : dflt;
  }
  for (size_t i = 0; i < (pairs ? 4u : 2u); i++)
    if (v[i] < -(INT64_C(1) << 32) || v[i] > (INT64_C(1) << 32))
      return lcop_fail(n, LC_ERR_INVALID_ARG, "%s value %lld out of range", name, (long long)v[i]);
  return LC_OK;
}

void lcop_conv_desc_geom(const conv_geom *g, lc_conv_desc *d) {
  lc_conv_desc_init(d);
  d->in_channels = g->C, d->out_channels = g->M, d->groups = g->group;
  d->kernel_h = g->KH, d->kernel_w = g->KW;
  d->stride_h = g->s[0], d->stride_w = g->s[1];
  d->dilation_h = g->d[0], d->dilation_w = g->d[1];
  d->pad_top = g->pb[0], d->pad_left = g->pb[1], d->pad_bottom = g->pe[0], d->pad_right = g->pe[1];
  d->auto_pad = LC_PAD_NOTSET; /* resolved by lcop_conv_geometry */
}

/* Shared by Conv (transpose = 0) and ConvTranspose (1). */
lc_status lcop_conv_geometry(const lc_node *n, const lc_tensor *const *in, int transpose, conv_geom *g) {
  const lc_tensor *x = in[0], *w = in[1];
  g->sp = x->ndim - 2;
  if (g->sp < 1 || g->sp > 2) return lcop_fail(n, LC_ERR_UNSUPPORTED, "only 1-D and 2-D convolutions (input rank %d)", x->ndim);
  if (w->ndim != x->ndim) return lcop_fail(n, LC_ERR_INVALID_ARG, "weight rank %d != input rank %d", w->ndim, x->ndim);
  g->N = x->dims[0];
  g->C = x->dims[1];
  g->H = g->sp == 2 ? x->dims[2] : 1;
  g->W = x->dims[x->ndim - 1];
  g->KH = g->sp == 2 ? w->dims[2] : 1;
  g->KW = w->dims[w->ndim - 1];
  g->group = lc_attr_int(n, "group", 1);
  if (g->group < 1 || g->C % g->group) return lcop_fail(n, LC_ERR_INVALID_ARG, "group %lld does not divide C=%lld", (long long)g->group, (long long)g->C);
  if (!transpose) {
    g->M = w->dims[0];
    if (w->dims[1] * g->group != g->C || g->M % g->group)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "weight [%lld, %lld, ...] does not match C=%lld, group=%lld",
                       (long long)w->dims[0], (long long)w->dims[1], (long long)g->C, (long long)g->group);
  } else {
    if (w->dims[0] != g->C) return lcop_fail(n, LC_ERR_INVALID_ARG, "weight dim 0 (%lld) != C (%lld)", (long long)w->dims[0], (long long)g->C);
    g->M = w->dims[1] * g->group;
  }
  const int64_t *ks;
  size_t nk = lc_attr_ints(n, "kernel_shape", &ks);
  if (nk && (nk != (size_t)g->sp || ks[nk - 1] != g->KW || (g->sp == 2 && ks[0] != g->KH)))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel_shape does not match the weights");
  int64_t pads[4];
  int has_s, has_d, has_p, has_o;
  lc_status s;
  if ((s = read_spatial(n, "strides", g->sp, 1, g->s, 0, &has_s))) return s;
  if ((s = read_spatial(n, "dilations", g->sp, 1, g->d, 0, &has_d))) return s;
  if ((s = read_spatial(n, "pads", g->sp, 0, pads, 1, &has_p))) return s;
  if ((s = read_spatial(n, "output_padding", g->sp, 0, g->opad, 0, &has_o))) return s;
  g->pb[0] = pads[0], g->pb[1] = pads[1], g->pe[0] = pads[2], g->pe[1] = pads[3];
  if (g->KH < 1 || g->KW < 1 || g->s[0] < 1 || g->s[1] < 1 || g->d[0] < 1 || g->d[1] < 1)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel, strides and dilations must be >= 1");
  const char *ap = lc_attr_string(n, "auto_pad", "NOTSET");
  int same = strcmp(ap, "SAME_UPPER") == 0 ? 1 : strcmp(ap, "SAME_LOWER") == 0 ? 2 : 0;
  if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "auto_pad '%s'", ap);
  int64_t isz[2] = {g->H, g->W}, k[2] = {g->KH, g->KW}, out[2];
  const int64_t *os;
  size_t nos = transpose ? lc_attr_ints(n, "output_shape", &os) : 0;
  if (nos && nos != (size_t)g->sp) return lcop_fail(n, LC_ERR_INVALID_ARG, "output_shape needs %d values", g->sp);
  for (int i = 0; i < 2; i++) {
    int64_t ek = (k[i] - 1) * g->d[i] + 1;
    if (!transpose) {
      if (ap[0] == 'V') g->pb[i] = g->pe[i] = 0;
      if (same) {
        out[i] = div_ceil_pos(isz[i], g->s[i]);
        int64_t tot = (out[i] - 1) * g->s[i] + ek - isz[i];
        if (tot < 0) tot = 0;
        g->pb[i] = same == 1 ? tot / 2 : tot - tot / 2;
        g->pe[i] = tot - g->pb[i];
      } else {
        int64_t span = isz[i] + g->pb[i] + g->pe[i] - ek;
        if (g->pb[i] < 0 || g->pe[i] < 0 || span < 0)
          return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel larger than padded input (or negative pads)");
        out[i] = span / g->s[i] + 1;
      }
    } else {
      int64_t full = g->s[i] * (isz[i] - 1) + g->opad[i] + ek;
      int a = i - (2 - g->sp);
      if (same && !has_p) { /* pads follow from the requested output size */
        int64_t o = nos && a >= 0 ? os[a] : isz[i] * g->s[i];
        int64_t tot = full - o;
        g->pb[i] = same == 1 ? tot / 2 : tot - tot / 2;
        g->pe[i] = tot - g->pb[i];
        out[i] = o;
      } else {
        if (ap[0] == 'V') g->pb[i] = g->pe[i] = 0;
        out[i] = nos && a >= 0 ? os[a] : full - g->pb[i] - g->pe[i];
      }
      if (out[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "negative output size");
    }
  }
  g->OH = out[0];
  g->OW = out[1];
  return LC_OK;
}

static lc_status conv_check_inputs(const lc_node *n, const lc_tensor *const *in, int n_in, int n_out, int max_in) {
  lc_status s = lcop_check_io(n, n_in, 2, max_in, n_out, 1, 1);
  for (int i = 0; !s && i < n_in; i++)
    if (i < 2 || in[i]) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  return s;
}

lc_status lcop_conv_infer_common(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out,
                                   int n_out, int transpose) {
  int res = lcop_conv_has_residual(n), se = lcop_conv_has_se(n);
  lc_status s = conv_check_inputs(n, in, n_in, n_out, 3 + (res || se));
  if (s) return s;
  if (res && n_in < 4) return lcop_fail(n, LC_ERR_INVALID_ARG, "_residual=1 needs the residual as input 3");
  if (se && (res || transpose || !lcop_has(in, n_in, 3)))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "_se=1 needs x as input 3 (and no residual)");
  conv_geom g;
  if ((s = lcop_conv_geometry(n, in, transpose, &g))) return s;
  if (lcop_has(in, n_in, 2) && (in[2]->ndim != 1 || in[2]->dims[0] != g.M))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "bias must be [%lld]", (long long)g.M);
  int64_t dims[4] = {g.N, g.M, g.OH, g.OW};
  if (g.sp == 1) dims[2] = g.OW;
  if (se) { /* the gate is [N, M, 1, 1]; the output takes x's shape */
    const lc_tensor *x = in[3];
    if (g.sp != 2 || g.OH != 1 || g.OW != 1 || x->ndim != 4 || x->dims[0] != g.N || x->dims[1] != g.M)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "_se=1 needs a 1x1 conv output and x of [%lld, %lld, H, W]",
                       (long long)g.N, (long long)g.M);
    return lcop_set_out(n, out, LC_DT_FLOAT, 4, x->dims);
  }
  s = lcop_set_out(n, out, LC_DT_FLOAT, g.sp + 2, dims);
  if (!s && res) {
    const lc_tensor *r = in[n_in - 1];
    int64_t f = transpose ? 1 : lcop_conv_res_up(n);
    if (f < 1 || f > 65536 || (f > 1 && r->ndim != 4))
      return lcop_fail(n, LC_ERR_INVALID_ARG, "_res_up=%lld needs a 4-D residual", (long long)f);
    int same = r->ndim == out->ndim;
    for (int i = 0; same && i < r->ndim; i++) same = r->dims[i] * (i >= 2 ? f : 1) == out->dims[i];
    if (!same) return lcop_fail(n, LC_ERR_INVALID_ARG, "residual shape differs from the output shape");
  }
  return s;
}

/* ---------------------------------------------------------------- fused epilogue */

lc_status lcop_read_act(const lc_node *n, conv_act *a) {
  int64_t act = lc_attr_int(n, "_act", LC_ACT_NONE);
  if (act < LC_ACT_NONE || act > LC_ACT_HARD_SWISH) return lcop_fail(n, LC_ERR_UNSUPPORTED, "_act=%lld", (long long)act);
  a->act = (lc_activation)act;
  a->lo = lc_attr_float(n, "_act_min", -INFINITY);
  a->hi = lc_attr_float(n, "_act_max", INFINITY);
  a->alpha = lc_attr_float(n, "_act_alpha", 0.01f);
  a->post_mul = lc_attr_float(n, "_post_mul", 1.0f);
  a->post_add = lc_attr_float(n, "_post_add", 0.0f);
  a->post = a->post_mul != 1.0f || a->post_add != 0.0f;
  return LC_OK;
}

/* y = act(y + r). The conv library has no residual input yet, so the conv runs with
 * LC_ACT_NONE and this adds the residual and then activates; it moves into the library later. */
void lcop_act_epilogue(float *y, const float *r, size_t n, const conv_act *a) {
  if (r)
    for (size_t i = 0; i < n; i++) y[i] += r[i];
  switch (a->act) {
  case LC_ACT_NONE: break;
  case LC_ACT_RELU:
    for (size_t i = 0; i < n; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
    break;
  case LC_ACT_CLIP:
    for (size_t i = 0; i < n; i++) { /* comparisons vectorize; fminf/fmaxf are libm calls */
      float v = y[i] < a->lo ? a->lo : y[i];
      y[i] = v > a->hi ? a->hi : v;
    }
    break;
  case LC_ACT_LEAKY_RELU:
    for (size_t i = 0; i < n; i++) y[i] = y[i] < 0.0f ? a->alpha * y[i] : y[i];
    break;
  case LC_ACT_HARD_SWISH:
    for (size_t i = 0; i < n; i++) {
      float v = y[i] * (1.0f / 6.0f) + 0.5f;
      v = v < 0.0f ? 0.0f : v;
      y[i] = y[i] * (v > 1.0f ? 1.0f : v);
    }
    break;
  case LC_ACT_PRELU: break; /* per channel: never an _act (lcop_read_act) */
  }
  if (a->post)
    for (size_t i = 0; i < n; i++) y[i] = y[i] * a->post_mul + a->post_add;
}

/* The epilogue over a whole output, in chunks on the thread pool. */
typedef struct epi_job {
  float *y;
  const float *r;
  size_t n;
  conv_act a;
} epi_job;

#define EPI_CHUNK 16384

static void epi_task(void *arg, size_t task, int thread) {
  const epi_job *j = arg;
  size_t o = task * EPI_CHUNK, len = j->n - o < EPI_CHUNK ? j->n - o : EPI_CHUNK;
  (void)thread;
  lcop_act_epilogue(j->y + o, j->r ? j->r + o : NULL, len, &j->a);
}

static void run_epilogue(lc_exec_ctx *x, float *y, const float *r, size_t n, const conv_act *a) {
  epi_job j = {y, r, n, *a};
  lcop_parallel(x, (n + EPI_CHUNK - 1) / EPI_CHUNK, epi_task, &j);
}

/* ---------------------------------------------------------------- Conv */

typedef struct conv_state {
  lc_conv *conv;
  lc_conv_shape shape;
  conv_act act;
  int residual;
  int64_t res_up;                     /* fuse_device.c's upsampled residual: its factor, else 1 */
  char route[64]; /* the route, and "(cache)" / "(tuned)" when the CPU tuner chose it */
  const lc_attr *prelu, *cmul, *cadd; /* fuse_device.c's per-channel epilogue, NULL if none */
  const lc_attr *imul, *iadd;         /* fuse_device.c's input affine (a BatchNormalization before) */
  const lc_attr *hsig;                /* fuse_device.c's HardSigmoid after (alpha, beta) */
  int post_fused;                     /* the library applies the post affine too */
  int prelu_lib;                      /* the library applies _prelu (prelu_in_lib) */
  int res_lib;                        /* the library adds the residual (lc_conv_run_residual) */
  int in_lib;                         /* the library conv holds the input affine (fold_input_affine) */
  float *gate;                        /* _se: the conv's [N, M, 1, 1] output, then out = x * gate */
  size_t gate_n;
  /* layout.c: the library runs NHWC (nhwc); input, residual, output lie in the other layout and are
   * converted through scratch past the conv's workspace, at these offsets (0: not converted) */
  int nhwc;
  size_t cv_in, cv_res, cv_out, ws_all;
} conv_state;

/* The input affine when the device hands the conv back: a copy of x as the BatchNormalization
 * before it would have written it (NCHW); NULL: out of memory. */
static float *affine_input(const conv_state *st, const lc_tensor *t) {
  size_t n = t->nbytes / sizeof(float), C = (size_t)t->dims[1], inner = C ? n / ((size_t)t->dims[0] * C) : 0;
  float *y = lc_malloc(n ? n * sizeof(float) : 1);
  const float *x = t->data;
  for (size_t i = 0; y && i < n; i++) {
    size_t c = st->nhwc ? i % C : i / inner % C; /* t in the conv's layout */
    y[i] = x[i] * st->imul->floats[c] + st->iadd->floats[c];
  }
  return y;
}

/* The per-channel epilogue (fuse_device.c) when the device hands the conv back to the CPU:
 * residual, y * cmul[o] + cadd[o], the activation, PRelu, in that order; y in the conv's layout. */
static void chan_epilogue(lc_exec_ctx *x, const conv_state *st, float *y, const float *r, const lc_tensor *out) {
  size_t n = out->nbytes / sizeof(float), M = (size_t)out->dims[1], inner = M ? n / ((size_t)out->dims[0] * M) : 0;
#define CH_OF(i) (st->nhwc ? (i) % M : (i) / inner % M)
  for (size_t i = 0; inner && i < n; i++) {
    size_t o = CH_OF(i);
    float v = y[i] + (r ? r[i] : 0.0f);
    if (st->cmul) v = v * st->cmul->floats[o] + st->cadd->floats[o];
    y[i] = v;
  }
  run_epilogue(x, y, NULL, n, &st->act);
  for (size_t i = 0; st->prelu && inner && i < n; i++)
    if (y[i] < 0.0f) y[i] *= st->prelu->floats[CH_OF(i)];
#undef CH_OF
}

/* Weights are packed once in init, so they must be constants; infer is where constness is
 * visible (at init, non-constant inputs already point into the activation arena). */
static lc_status conv_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_conv_infer_common(n, in, n_in, out, n_out, 0);
  if (s) return s;
  if (!in[1]->data || (lcop_has(in, n_in, 2) && !in[2]->data))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "weights and bias must be constants");
  return LC_OK;
}

static void conv_fini(void *state) {
  conv_state *st = state;
  if (!st) return;
  lc_conv_destroy(st->conv);
  lc_free(st->gate);
  lc_free(st);
}

/* Precision of a conv's weights under --weights q4 with the mixed policy: 1x1 convs and convs
 * with K = C/group * KH * KW <= 1152 (the stem, 3x3 up to 128 channels) stay q8: they lose the
 * most under q4 and hold few of the bytes. IResNet-34: cosine 0.959 -> 0.992 for 21 -> 31 MB
 * (docs/onnx.md, "q4 precision policy"). Depthwise stays q4 (a block is one weight: exact). */
static lc_weight_format conv_format(const lc_exec_ctx *x, const conv_geom *g) {
  lc_weight_format f = (lc_weight_format)x->weight_format;
  if (f != LC_WEIGHTS_Q4 || x->q4_policy != LC_Q4_MIXED || g->C / g->group == 1) return f;
  int64_t k = g->C / g->group * g->KH * g->KW;
  if (k <= 1152 || (g->KH == 1 && g->KW == 1)) return LC_WEIGHTS_Q8;
  return f;
}

typedef struct oihw_rows {
  const float *w;
  size_t taps, cin;
} oihw_rows;

/* Row oc of OIHW weights in the (ky, kx, ic) order lc_conv's codes use. */
static void oihw_row(void *ctx, size_t oc, size_t k, float *row) {
  const oihw_rows *r = ctx;
  (void)k;
  for (size_t t = 0; t < r->taps; t++)
    for (size_t ic = 0; ic < r->cin; ic++) row[t * r->cin + ic] = r->w[(oc * r->cin + ic) * r->taps + t];
}

/* q4, asymmetric blocks with clip search: lc_conv quantizes without the search, so quantize here
 * and hand over the codes. */
static lc_status conv_create_clipped(lc_exec_ctx *x, lc_conv_desc *d, const conv_geom *g, lc_conv **out) {
  size_t cin = (size_t)(g->C / g->group), taps = (size_t)(g->KH * g->KW), n = (size_t)g->M, k, nk;
  if (!lc_mul_sz(cin, taps, &k) || !lc_mul_sz(n, k, &nk)) return lc_error(LC_ERR_OVERFLOW, "conv: weight size overflows");
  d->asym = 1;
  lc_quant_spec sp = {LC_WEIGHTS_Q4, d->block_size, 1, cin, 1};
  lc_qmatrix qm;
  lc_status s = lc_quantize_rows(n, k, &sp, oihw_row, &(oihw_rows){d->weights, taps, cin}, &qm);
  if (s) return s;
  int8_t *q = lc_malloc(nk ? nk : 1);
  float *row = lc_malloc(k * sizeof(float));
  if (!q || !row) s = lc_error(LC_ERR_NO_MEMORY, "conv: out of memory");
  for (size_t r = 0; !s && r < n; r++) {
    if ((s = lc_dequant_rows(&qm, r, 1, 0, k, row, k))) break;
    for (size_t j = 0; j < qm.nb; j++) { /* codes back from w = q * s + o (exact: |q| <= 8) */
      size_t t = j / qm.bpt, i = j % qm.bpt, k0 = t * qm.kc + i * qm.block, len = i == qm.bpt - 1 ? qm.tail : qm.block;
      float sc = qm.scales[r * qm.nb + j], of = qm.offsets ? qm.offsets[r * qm.nb + j] : 0.0f;
      for (size_t c = k0; c < k0 + len; c++) q[r * k + c] = (int8_t)(sc > 0.0f ? lrintf((row[c] - of) / sc) : 0);
    }
  }
  if (!s) {
    d->q_codes = q;
    d->q_scales = qm.scales;
    d->q_offsets = qm.offsets;
    s = lc_conv_create(x->lc, d, out);
  }
  lc_free(q);
  lc_free(row);
  lc_qmatrix_free(&qm);
  return s;
}

static lc_status conv_create_weights(lc_exec_ctx *x, lc_conv_desc *d, const conv_geom *g, lc_conv **out) {
  d->weight_format = conv_format(x, g);
  if (d->weight_format == LC_WEIGHTS_Q4 && x->q4_policy == LC_Q4_MIXED && g->C / g->group > 1)
    return conv_create_clipped(x, d, g, out);
  return lc_conv_create(x->lc, d, out);
}

/* fuse_device.c's _prelu alone (no upsampled residual, affine, activation or post affine) runs in
 * the CPU library's output pass (LC_ACT_PRELU): the Winograd routes and the stem apply it while the
 * tile is in cache, where a pass of its own read and wrote the output again (IResNet-34: 17 of them,
 * 1.5 % of a run). */
static const lc_attr *prelu_in_lib(const lc_node *n, const lc_exec_ctx *x) {
  const lc_attr *pr = lc_node_attr(n, "_prelu");
  if (!pr || !lc_conv_takes_qmatrix(x->lc) || (lcop_conv_has_residual(n) && lcop_conv_res_up(n) != 1) ||
      lc_node_attr(n, "_chan_mul") ||
      lc_attr_int(n, "_act", LC_ACT_NONE) != LC_ACT_NONE || lc_attr_float(n, "_post_mul", 1.0f) != 1.0f ||
      lc_attr_float(n, "_post_add", 0.0f) != 0.0f)
    return NULL;
  return pr;
}

static lc_status lcop_conv_make_in(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                                   lc_status (*hook)(lc_conv *conv, void *arg), void *arg, lc_conv **conv,
                                   lc_conv_shape *shape, int *in_folded);

typedef struct in_fold {
  float *w, *b, *pv;
} in_fold;

/* A BatchNormalization before the conv (_in_mul s, _in_add t per input channel, fuse_chain.c)
 * folded into fp32 weights on the CPU: w' = w * s[ic], b' = b + sum w * t[ic], and the padding
 * reads -t / s (lc_conv_desc.pad_values), exact where s != 0. d points at f's copies; f->w stays
 * NULL (nothing folded) for Q8/Q4 weights, a device context, or an s of 0. */
static lc_status fold_input_affine(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_exec_ctx *x,
                                   const conv_geom *g, lc_conv_desc *d, in_fold *f) {
  const lc_attr *mul = lc_node_attr(n, "_in_mul"), *add = lc_node_attr(n, "_in_add");
  if (!mul || !add || in[1]->quant || d->weight_format != LC_WEIGHTS_F32 || !lc_conv_takes_qmatrix(x->lc) ||
      mul->n != (size_t)g->C || add->n != mul->n)
    return LC_OK;
  size_t C = (size_t)g->C, M = (size_t)g->M, cig = (size_t)(g->C / g->group), taps = (size_t)(g->KH * g->KW), nw;
  for (size_t c = 0; c < C; c++)
    if (mul->floats[c] == 0.0f || !isfinite(-add->floats[c] / mul->floats[c])) return LC_OK;
  if (!lc_mul_sz(M, cig * taps, &nw)) return lcop_fail(n, LC_ERR_OVERFLOW, "weight size overflows");
  f->w = lc_malloc(nw * sizeof(float)), f->b = lc_malloc(M * sizeof(float)), f->pv = lc_malloc(C * sizeof(float));
  if (!f->w || !f->b || !f->pv) {
    lc_free(f->w), lc_free(f->b), lc_free(f->pv);
    *f = (in_fold){NULL, NULL, NULL};
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory folding the input affine");
  }
  const float *w = in[1]->data, *b = lcop_has(in, n_in, 2) ? in[2]->data : NULL;
  for (size_t o = 0; o < M; o++) {
    size_t c0 = o / (M / (size_t)g->group) * cig;
    double sum = b ? b[o] : 0.0;
    for (size_t i = 0; i < cig; i++)
      for (size_t t = 0; t < taps; t++) {
        size_t k = (o * cig + i) * taps + t;
        sum += (double)w[k] * add->floats[c0 + i];
        f->w[k] = w[k] * mul->floats[c0 + i];
      }
    f->b[o] = (float)sum;
  }
  for (size_t c = 0; c < C; c++) f->pv[c] = -add->floats[c] / mul->floats[c];
  d->weights = f->w, d->bias = f->b, d->pad_values = f->pv;
  return LC_OK;
}

/* Creates and prepares the node's lc_conv on x->lc; the activation goes into the library when
 * fuse_act (the CPU library cannot apply it after a residual add, a device can). */
lc_status lcop_conv_make(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                         lc_conv **conv, lc_conv_shape *shape) {
  return lcop_conv_make_hooked(n, in, n_in, x, fuse_act, NULL, NULL, conv, shape);
}

lc_status lcop_conv_make_hooked(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                                lc_status (*hook)(lc_conv *conv, void *arg), void *arg, lc_conv **conv,
                                lc_conv_shape *shape) {
  return lcop_conv_make_in(n, in, n_in, x, fuse_act, hook, arg, conv, shape, NULL);
}

/* in_folded not NULL: the node's _in_mul / _in_add go into the library conv where they fold
 * (fold_input_affine), *in_folded says whether they did. */
static lc_status lcop_conv_make_in(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                                   lc_status (*hook)(lc_conv *conv, void *arg), void *arg, lc_conv **conv,
                                   lc_conv_shape *shape, int *in_folded) {
  conv_geom g;
  conv_act act;
  lc_status s = lcop_conv_geometry(n, in, 0, &g);
  if (s) return s;
  if (!in[1]->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "weights must be a constant");
  if (lcop_has(in, n_in, 2) && !in[2]->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "bias must be a constant");
  if (!x || !x->lc) return lcop_fail(n, LC_ERR_STATE, "no lowconv context");
  if ((s = lcop_read_act(n, &act))) return s;
  lc_conv_desc d;
  lcop_conv_desc_geom(&g, &d);
  d.layout = lc_attr_int(n, "_nhwc", 0) ? LC_NHWC : LC_NCHW; /* layout.c */
  d.weights = in[1]->data;
  d.bias = lcop_has(in, n_in, 2) ? in[2]->data : NULL;
  if (fuse_act) {
    d.activation = act.act;
    d.act_min = act.lo, d.act_max = act.hi, d.act_alpha = act.alpha;
    /* The CPU library applies the post affine in its output pass (a pass of its own over the
     * output was 5 % of PP-OCRv4 det); device convs leave it to conv_run (takes_qmatrix: a CPU context). */
    if (act.post && lc_conv_takes_qmatrix(x->lc)) d.post_mul = act.post_mul, d.post_add = act.post_add;
    const lc_attr *pr = prelu_in_lib(n, x);
    if (pr && pr->n == (size_t)g.M) d.activation = LC_ACT_PRELU, d.act_slopes = pr->floats;
  }
  d.weight_format = (lc_weight_format)x->weight_format;
  d.block_size = x->weight_block;
  *conv = NULL;
  in_fold f = {NULL, NULL, NULL};
  if (in_folded) *in_folded = 0;
  if (in_folded && (s = fold_input_affine(n, in, n_in, x, &g, &d, &f))) return s;
  s = in[1]->quant ? lc_qweight_conv_create(x->lc, in[1]->quant, &d, conv) : conv_create_weights(x, &d, &g, conv);
  if (!s && hook) s = hook(*conv, arg);
  if (!s) s = lc_conv_prepare(*conv, g.N, g.H, g.W, shape);
  if (f.w) { /* folded: the conv copied them; on a failure plan it again unfolded */
    lc_free(f.w), lc_free(f.b), lc_free(f.pv);
    if (!s) *in_folded = 1;
    if (s == LC_ERR_UNSUPPORTED || s == LC_ERR_BUDGET) {
      lc_conv_destroy(*conv);
      *conv = NULL;
      lc_clear_error();
      return lcop_conv_make_in(n, in, n_in, x, fuse_act, hook, arg, conv, shape, NULL);
    }
  }
  if (!s && (shape->out_h != g.OH || shape->out_w != g.OW))
    s = lcop_fail(n, LC_ERR_INTERNAL, "library output %lldx%lld != inferred %lldx%lld", (long long)shape->out_h,
                  (long long)shape->out_w, (long long)g.OH, (long long)g.OW);
  else if (s)
    s = lcop_fail(n, s, "conv setup failed: %s", lc_last_error());
  /* One prepare per model: drop the weight layouts the chosen route never reads (Winograd
   * weights next to GEMM panels cost ~2.8x the fp32 weights otherwise). */
  if (!s) s = lc_conv_release_unused(*conv);
  if (s) {
    lc_conv_destroy(*conv);
    *conv = NULL;
  }
  return s;
}

/* layout.c's attributes: the layout the library runs and the conversions of input, residual and
 * output that differ from it, each a buffer in the scratch after the conv's own workspace. */
static lc_status layout_scratch(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                                conv_state *st) {
  st->nhwc = lc_attr_int(n, "_nhwc", 0) != 0;
  int vin = lc_attr_int(n, "_in_nhwc", 0) != 0, vres = lc_attr_int(n, "_res_nhwc", 0) != 0;
  int vout = lc_attr_int(n, "_out_nhwc", 0) != 0;
  st->ws_all = st->shape.workspace_bytes;
  if (!st->nhwc && !vin && !vres && !vout) return LC_OK;
  const lc_tensor *r = st->residual ? in[n_in - 1] : NULL;
  if (in[0]->ndim != 4 || out->ndim != 4 || st->gate || st->res_up != 1 || st->hsig || st->cmul ||
      (vin && !st->nhwc) || (vres && (!r || !st->nhwc)) || (r && r->nbytes != out->nbytes))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "layout attributes on a conv that cannot take them");
  size_t off = (st->ws_all + 63) / 64 * 64, sz[3] = {in[0]->nbytes, r ? r->nbytes : 0, out->nbytes};
  int need[3] = {vin != st->nhwc, r && vres != st->nhwc, vout != st->nhwc};
  size_t *at[3] = {&st->cv_in, &st->cv_res, &st->cv_out};
  for (int i = 0; i < 3; i++) {
    if (!need[i]) continue;
    *at[i] = off + 1; /* + 1: 0 is "not converted" */
    if (!lc_add_sz(off, (sz[i] + 63) / 64 * 64, &off)) return lcop_fail(n, LC_ERR_OVERFLOW, "scratch size overflows");
  }
  st->ws_all = off;
  return LC_OK;
}

static lc_status conv_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                           lc_exec_ctx *x, void **state) {
  conv_state *st = lc_calloc(1, sizeof *st);
  if (!st) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  st->residual = lcop_conv_has_residual(n);
  st->res_up = st->residual ? lcop_conv_res_up(n) : 1;
  st->prelu = lc_node_attr(n, "_prelu"), st->cmul = lc_node_attr(n, "_chan_mul"), st->cadd = lc_node_attr(n, "_chan_add");
  st->imul = lc_node_attr(n, "_in_mul"), st->iadd = lc_node_attr(n, "_in_add");
  st->hsig = lc_node_attr(n, "_hsig");
  lc_status s = lcop_read_act(n, &st->act);
  size_t C = in[0]->ndim >= 2 ? (size_t)in[0]->dims[1] : 0;
  if (!s && st->hsig && st->hsig->n != 2) s = lcop_fail(n, LC_ERR_INVALID_ARG, "_hsig needs alpha and beta");
  if (!s && (!st->imul != !st->iadd || (st->imul && (st->imul->n != C || st->iadd->n != C || in[0]->ndim < 3))))
    s = lcop_fail(n, LC_ERR_INVALID_ARG, "input affine does not match the %zu input channels", C);
  size_t M = lcop_has(in, n_in, 1) && in[1]->ndim ? (size_t)in[1]->dims[0] : 0;
  if (!s && ((st->prelu && st->prelu->n != M) || (!st->cmul != !st->cadd) || (st->cmul && (st->cmul->n != M || st->cadd->n != M))))
    s = lcop_fail(n, LC_ERR_INVALID_ARG, "per-channel epilogue does not match the %zu output channels", M);
  /* an epilogue the library cannot run (an upsampled residual, a per-channel affine) follows the conv */
  st->prelu_lib = !s && st->prelu && st->prelu->n == M && prelu_in_lib(n, x);
  /* The CPU library adds a same-size residual before its activation (lc_conv_run_residual). */
  st->res_lib = st->residual && st->res_up == 1 && !st->cmul && (!st->prelu || st->prelu_lib) &&
                lc_conv_takes_qmatrix(x->lc);
  int later = (st->residual && !st->res_lib) || (st->prelu && !st->prelu_lib) || st->cmul;
  if (!s) s = lcop_conv_make_in(n, in, n_in, x, !later, NULL, NULL, &st->conv, &st->shape, &st->in_lib);
  st->post_fused = !s && !later && lc_conv_takes_qmatrix(x->lc);
  if (!s && lcop_conv_has_se(n)) { /* the conv writes its N * M gates here, conv_run scales x by them */
    size_t nm = 0;
    if (st->shape.out_h != 1 || st->shape.out_w != 1 || in[0]->dims[0] < 1)
      s = lcop_fail(n, LC_ERR_INVALID_ARG, "_se=1 needs a 1x1 conv output");
    else if (!lc_mul_sz((size_t)in[0]->dims[0], M, &nm))
      s = lcop_fail(n, LC_ERR_OVERFLOW, "gate size overflows");
    else if (!(st->gate = lc_malloc((nm ? nm : 1) * sizeof(float))))
      s = lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
    st->gate_n = nm;
  }
  if (s) {
    lc_conv_destroy(st->conv);
    lc_free(st);
    return s;
  }
  if ((s = layout_scratch(n, in, n_in, out, st))) {
    lc_conv_destroy(st->conv);
    lc_free(st->gate);
    lc_free(st);
    return s;
  }
  lc_conv_device_info di;
  snprintf(st->route, sizeof st->route, "%s", lc_route_name(st->shape.route));
  if (!lc_conv_device_info_get(st->conv, &di) && di.kernel[0])
    snprintf(st->route, sizeof st->route, "%s", di.kernel);
  if (st->nhwc) { /* layout.c ran it NHWC */
    size_t l = strlen(st->route);
    snprintf(st->route + l, sizeof st->route - l, "/nhwc");
  }
  *state = st;
  return LC_OK;
}

static void conv_describe(const void *state, lc_op_info *info) {
  const conv_state *st = state;
  info->route = st->route;
  info->workspace_bytes = st->ws_all;
  info->packed_bytes = lc_conv_weight_bytes(st->conv);
  info->packed_inputs = 2u | 4u; /* weights and bias live in the lc_conv */
}

/* The residual as the nearest Resize by f would have written it (the device reads the small
 * tensor directly; the CPU gets the conv back when the device cannot): NCHW, r is [N, M, OH/f,
 * OW/f]; NULL: out of memory. */
static float *res_upsampled(const lc_tensor *r, const lc_tensor *out, int64_t f) {
  size_t OH = (size_t)out->dims[2], OW = (size_t)out->dims[3], rh = OH / (size_t)f, rw = OW / (size_t)f;
  size_t planes = (size_t)out->dims[0] * (size_t)out->dims[1];
  float *y = lc_malloc(out->nbytes ? out->nbytes : 1);
  const float *x = r->data;
  for (size_t pl = 0; y && pl < planes; pl++)
    for (size_t h = 0; h < OH; h++)
      for (size_t w = 0; w < OW; w++) y[(pl * OH + h) * OW + w] = x[(pl * rh + h / (size_t)f) * rw + w / (size_t)f];
  return y;
}

static lc_status conv_run_lib(const lc_node *n, conv_state *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                              lc_exec_ctx *x);
#define LCOP_CONV_MAX_IN 4 /* X, W, B, and a residual or _se's x (conv_check_inputs) */

/* conv_run with layout.c's conversions: the input and residual into the library's layout, the
 * output out of it, through scratch past the conv's workspace (its own buffer if the model's
 * scratch is short: a conv run alone). */
static lc_status conv_run_converted(const lc_node *n, conv_state *st, const lc_tensor *const *in, int n_in,
                                    lc_tensor *out, lc_exec_ctx *x) {
  if (!x || n_in < 1 || n_in > LCOP_CONV_MAX_IN || !in[0] || in[0]->ndim != 4 || out->ndim != 4 ||
      (st->cv_res && (!in[n_in - 1] || in[n_in - 1]->nbytes != out->nbytes)))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "inputs do not match the planned layout conversions");
  unsigned char *base = x->scratch && x->scratch_bytes >= st->ws_all ? x->scratch : NULL, *own = NULL;
  if (!base && !(base = own = lc_malloc(st->ws_all ? st->ws_all : 1)))
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for %zu bytes of layout scratch", st->ws_all);
  size_t N = (size_t)out->dims[0], hw_in = (size_t)in[0]->dims[2] * (size_t)in[0]->dims[3];
  size_t M = (size_t)out->dims[1], hw_out = (size_t)out->dims[2] * (size_t)out->dims[3];
  lc_tensor ti[LCOP_CONV_MAX_IN], to = *out;
  const lc_tensor *tp[LCOP_CONV_MAX_IN];
  for (int i = 0; i < n_in; i++) { /* an absent optional input stays NULL */
    if (in[i]) ti[i] = *in[i];
    tp[i] = in[i] ? &ti[i] : NULL;
  }
  if (st->cv_in) {
    ti[0].data = base + st->cv_in - 1;
    lcop_layout_convert(x, in[0]->data, ti[0].data, N, (size_t)in[0]->dims[1], hw_in, st->nhwc);
  }
  if (st->cv_res) {
    ti[n_in - 1].data = base + st->cv_res - 1;
    lcop_layout_convert(x, in[n_in - 1]->data, ti[n_in - 1].data, N, M, hw_out, st->nhwc);
  }
  if (st->cv_out) to.data = base + st->cv_out - 1;
  /* the conv's own workspace stays at the scratch's start */
  lc_exec_ctx xs = *x;
  xs.scratch = base, xs.scratch_bytes = st->shape.workspace_bytes;
  lc_status s = conv_run_lib(n, st, tp, n_in, &to, &xs);
  if (!s && st->cv_out) lcop_layout_convert(x, to.data, out->data, N, M, hw_out, !st->nhwc);
  lc_free(own);
  return s;
}

static lc_status conv_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  conv_state *st = state;
  (void)n_out;
  if (!st) return lcop_fail(n, LC_ERR_STATE, "run before init");
  if (st->cv_in || st->cv_res || st->cv_out) return conv_run_converted(n, st, in, n_in, out, x);
  return conv_run_lib(n, st, in, n_in, out, x);
}

static lc_status conv_run_lib(const lc_node *n, conv_state *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                              lc_exec_ctx *x) {
  void *ws = NULL;
  size_t wsz = 0;
  if (x && x->scratch && x->scratch_bytes >= st->shape.workspace_bytes) ws = x->scratch, wsz = x->scratch_bytes;
  /* _se: the conv and its epilogue run on the gate tensor, then the output is x * gate */
  lc_tensor *se_out = NULL, gt;
  if (st->gate) {
    int64_t N = in[0]->dims[0];
    if (N < 1 || !lcop_has(in, n_in, 3) || in[3]->ndim != 4 || out->ndim != 4 || in[3]->nbytes != out->nbytes ||
        st->gate_n != (size_t)N * (size_t)out->dims[1] || in[3]->dims[0] != N || in[3]->dims[1] != out->dims[1])
      return lcop_fail(n, LC_ERR_INVALID_ARG, "_se: x and the gate do not match the output");
    gt = *out;
    gt.dims[2] = gt.dims[3] = 1;
    gt.data = st->gate, gt.nbytes = st->gate_n * sizeof(float);
    se_out = out, out = &gt;
  }
  float *ru = NULL;
  if (st->residual && st->res_up > 1) {
    const lc_tensor *rt = in[n_in - 1];
    int ok = rt->ndim == 4 && out->ndim == 4;
    for (int i = 0; ok && i < 4; i++) ok = rt->dims[i] * (i >= 2 ? st->res_up : 1) == out->dims[i];
    if (!ok) return lcop_fail(n, LC_ERR_INVALID_ARG, "residual does not upsample x%lld to the output", (long long)st->res_up);
    if (!(ru = res_upsampled(rt, out, st->res_up))) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for the residual");
  }
  const float *r = ru ? ru : st->residual ? in[n_in - 1]->data : NULL;
  if (r && in[n_in - 1]->nbytes < out->nbytes && !ru) {
    return lcop_fail(n, LC_ERR_INVALID_ARG, "residual of %zu bytes for an output of %zu", in[n_in - 1]->nbytes,
                     out->nbytes);
  }
  float *xa = st->imul && !st->in_lib ? affine_input(st, in[0]) : NULL;
  if (st->imul && !st->in_lib && !xa) {
    lc_free(ru);
    return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for the input affine");
  }
  const float *xin = xa ? xa : in[0]->data;
  lc_status s = st->res_lib ? lc_conv_run_residual(st->conv, xin, r, out->data, ws, wsz)
                            : lc_conv_run(st->conv, xin, out->data, ws, wsz);
  lc_free(xa);
  if (s) {
    lc_free(ru);
    return lcop_fail(n, s, "conv failed: %s", lc_last_error());
  }
  if ((st->prelu && !st->prelu_lib) || st->cmul) {
    chan_epilogue(x, st, out->data, r, out);
  } else if (st->residual && !st->res_lib) {
    run_epilogue(x, out->data, r, out->nbytes / sizeof(float), &st->act);
  } else if (st->act.post && !st->post_fused) { /* the library applied the activation */
    conv_act post = st->act;
    post.act = LC_ACT_NONE;
    run_epilogue(x, out->data, NULL, out->nbytes / sizeof(float), &post);
  }
  lc_free(ru);
  if (st->hsig) { /* fused on the device only when the conv has no other epilogue */
    float *y = out->data, al = st->hsig->floats[0], be = st->hsig->floats[1];
    for (size_t i = 0; i < out->nbytes / sizeof(float); i++) {
      float t = y[i] * al + be;
      y[i] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    }
  }
  if (se_out) { /* NCHW: plane (n, c) of x times gate (n, c) */
    size_t planes = st->gate_n, P = planes ? se_out->nbytes / sizeof(float) / planes : 0;
    const float *xs = in[3]->data, *gv = st->gate;
    float *y = se_out->data;
    for (size_t pl = 0; pl < planes; pl++)
      for (size_t i = 0; i < P; i++) y[pl * P + i] = xs[pl * P + i] * gv[pl];
  }
  return LC_OK;
}

const lc_op_impl lcop_conv_ops[] = {
    {"Conv", conv_infer, conv_init, conv_fini, conv_run, 0, conv_describe},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
