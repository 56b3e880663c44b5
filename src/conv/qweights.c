/* Conv weights kept block-quantized (Q8/Q4). The GEMM routes dequantize one weight panel
 * (pw output channels x one K block) into the thread's buffer and reuse it over the whole pixel
 * tile, so the fp32 footprint is one cache-resident panel, never the weight tensor. */
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "conv/route.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

static lc_quant_spec spec_of(const lc_conv *c, const lc_conv_desc *d) {
  lc_quant_spec s;
  memset(&s, 0, sizeof s);
  s.format = d->weight_format;
  s.block = d->block_size;
  s.asym = d->asym;
  s.kc = (size_t)c->cin_g;
  s.clip_search = 0;
  return s;
}

size_t lc_conv_quant_blocks(const lc_conv_desc *d) {
  if (!d || d->weight_format == LC_WEIGHTS_F32 || d->groups <= 0 || d->in_channels <= 0 ||
      d->in_channels % d->groups || d->kernel_h <= 0 || d->kernel_w <= 0)
    return 0;
  lc_quant_spec s;
  memset(&s, 0, sizeof s);
  s.format = d->weight_format;
  s.block = d->block_size;
  s.asym = d->asym;
  s.kc = (size_t)(d->in_channels / d->groups);
  size_t k;
  int64_t f[3] = {d->in_channels / d->groups, d->kernel_h, d->kernel_w};
  if (!lc_mul_n(&k, 3, f)) return 0;
  return lc_qmatrix_blocks(k, &s);
}

typedef struct oihw_src {
  const float *w;
  size_t taps, cin;
} oihw_src;

/* Row oc of the OIHW weights in the (ky, kx, ic) order the routes use. */
static void oihw_row(void *ctx, size_t oc, size_t k, float *row) {
  const oihw_src *s = ctx;
  for (size_t t = 0; t < s->taps; t++)
    for (size_t ic = 0; ic < s->cin; ic++) row[t * s->cin + ic] = s->w[(oc * s->cin + ic) * s->taps + t];
}

lc_status lc_conv_quantize(lc_conv *c, const lc_conv_desc *d) {
  size_t OC = (size_t)d->out_channels, K = c->K, taps = (size_t)c->taps, cin = (size_t)c->cin_g;
  lc_quant_spec spec = spec_of(c, d);
  c->qw = lc_calloc(1, sizeof *c->qw);
  if (!c->qw) return lc_error(LC_ERR_NO_MEMORY, "conv: out of memory");
  lc_status st;
  if (d->q_codes) {
    size_t nb = lc_conv_quant_blocks(d), n;
    if (!nb) return lc_error(LC_ERR_INVALID_ARG, "conv: block size %d not allowed", d->block_size);
    if (!lc_mul_sz(nb, OC, &nb) || !lc_mul_sz(OC, K, &n)) return lc_error(LC_ERR_OVERFLOW, "conv: weight size overflows");
    st = lc_qmatrix_from_codes(OC, K, &spec, d->q_codes, n, d->q_scales, nb, d->q_offsets, d->asym ? nb : 0, c->qw);
  } else {
    /* NaN/Inf is an error (docs/quantization.md); name it in the caller's OIHW terms. */
    for (size_t i = 0, n = OC * K; i < n; i++)
      if (!isfinite(d->weights[i]))
        return lc_error(LC_ERR_INVALID_ARG, "conv: weight [%zu][%zu][%zu][%zu] (OIHW index %zu) is %s", i / K,
                        i / taps % cin, i % taps / (size_t)d->kernel_w, i % (size_t)d->kernel_w, i,
                        isnan(d->weights[i]) ? "NaN" : "Inf");
    st = lc_quantize_rows(OC, K, &spec, oihw_row, (void *)&(oihw_src){d->weights, taps, cin}, c->qw);
  }
  if (st) return st;
  c->weight_bytes = lc_qmatrix_bytes(c->qw);
  return LC_OK;
}

lc_status lc_conv_adopt_qmatrix(lc_conv *c, const lc_qmatrix *qm) {
  if (qm->n != (size_t)c->d.out_channels || qm->k != c->K || qm->kc != (qm->block >= qm->k ? qm->k : (size_t)c->cin_g))
    return lc_error(LC_ERR_INVALID_ARG, "conv: quantized matrix %zu x %zu does not fit %lld x %zu weights", qm->n,
                    qm->k, (long long)c->d.out_channels, c->K);
  if (!(c->qw = lc_malloc(sizeof *c->qw))) return lc_error(LC_ERR_NO_MEMORY, "conv: out of memory");
  *c->qw = *qm;
  c->weight_bytes = lc_qmatrix_bytes(c->qw);
  return LC_OK;
}

size_t lc_qpanel_bytes(const lc_conv *c) {
  if (!c->qw) return 0;
  return 2 * lc_round_up(c->pw * lc_min_sz(c->K, LC_KC) * sizeof(float), 64);
}

const float *lc_conv_wpanel(const lc_conv *c, int64_t g, size_t q, size_t k0, size_t kn, float *buf, size_t *rs,
                           size_t *cs) {
  size_t pw = c->pw;
  *rs = 1;
  *cs = pw;
  if (!c->qw) return c->wpack + (((size_t)g * c->npanels + q) * c->K + k0) * pw;
  size_t oc0 = (size_t)g * (size_t)c->cout_g + q * pw;
  size_t noc = lc_min_sz(pw, (size_t)c->cout_g - q * pw);
  if (c->d.layout == LC_NCHW) {
    /* The weights are the A operand, which the kernel reads at any strides: rows as dequantized. */
    lc_dequant_rows_with(c->ctx->k, c->qw, oc0, noc, k0, kn, buf, kn); /* in range by construction */
    *rs = kn;
    *cs = 1;
    return buf;
  }
  /* NHWC: B needs output channels contiguous per k. */
  float *rows = buf + lc_round_up(pw * lc_min_sz(c->K, LC_KC) * sizeof(float), 64) / sizeof(float);
  lc_dequant_rows_with(c->ctx->k, c->qw, oc0, noc, k0, kn, rows, kn);
  for (size_t k = 0; k < kn; k++) {
    float *d = buf + k * pw;
    for (size_t i = 0; i < noc; i++) d[i] = rows[i * kn + k];
  }
  return buf;
}

void lc_conv_qrow(const lc_conv *c, int64_t oc, float *row) {
  lc_dequant_rows_with(c->ctx->k, c->qw, (size_t)oc, 1, 0, c->K, row, c->K);
}

lc_status lc_conv_get_weights(const lc_conv *c, float *oihw) {
  if (!c || !oihw) return lc_error(LC_ERR_INVALID_ARG, "conv: NULL argument to get_weights");
  if (c->dev) return c->ctx->be->conv_weights(c, oihw);
  if (!c->wpack && !c->qw)
    return lc_error(LC_ERR_STATE, "conv: the packed weights were released by lc_conv_release_unused");
  size_t K = c->K, taps = (size_t)c->taps, cin = (size_t)c->cin_g, OC = (size_t)c->d.out_channels;
  float *row = c->qw ? lc_malloc(K * sizeof(float)) : NULL;
  if (c->qw && !row) return lc_error(LC_ERR_NO_MEMORY, "conv: out of memory");
  for (size_t oc = 0; oc < OC; oc++) {
    int64_t g = (int64_t)(oc / (size_t)c->cout_g), ocg = (int64_t)(oc % (size_t)c->cout_g);
    if (row) lc_conv_qrow(c, (int64_t)oc, row);
    for (size_t t = 0; t < taps; t++)
      for (size_t ic = 0; ic < cin; ic++) {
        size_t k = t * cin + ic;
        oihw[(oc * cin + ic) * taps + t] = row ? row[k] : lc_conv_w(c, g, ocg, k);
      }
  }
  lc_free(row);
  return LC_OK;
}

/* GEMV path: 1x1, stride 1, no pad, one group, and the rows (pixels) contiguous with stride in_channels:
 * NHWC, or NCHW with one pixel per image. Few rows: the weights are read once for all of them. */
#define LC_QGEMV_MAX_ROWS 16

/* Upper bound of what lc_qgemv allocates for its prepared activations (values padded per block
 * to 64, scale and sums per block). */
size_t lc_qgemv_bytes_bound(const lc_conv *c, const lc_conv_plan *p) {
  size_t rows = (size_t)p->n * p->ohw;
  const lc_qmatrix *w = c->qw;
  return rows * (w->nb * (lc_round_up(w->block, 64) * sizeof(float) + 3 * sizeof(float)) + 256) + 512;
}

int lc_conv_use_qgemv(const lc_conv *c, const lc_conv_plan *p) {
  if (!c->qw || c->d.groups != 1) return 0;
  size_t rows = (size_t)p->n * p->ohw;
  return rows <= LC_QGEMV_MAX_ROWS && (c->d.layout == LC_NHWC || p->ohw == 1);
}

lc_status lc_run_qgemv(const lc_conv *c, const float *in, float *out) {
  const lc_conv_plan *p = &c->plan;
  lc_qgemv_opts o;
  memset(&o, 0, sizeof o);
  o.mode = c->d.int8_activations ? LC_QGEMV_INT8 : LC_QGEMV_ACCURATE;
  o.threads = p->threads;
  o.isa = c->ctx->isa; /* a context forced to scalar/avx2 also forces the GEMV kernels */
  o.pool = c->ctx->pool;
  size_t rows = (size_t)p->n * p->ohw, cin = (size_t)c->d.in_channels, cout = (size_t)c->d.out_channels;
  lc_status st = lc_qgemv(c->qw, rows, in, cin, c->bias, out, cout, &o);
  if (st) return st;
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  if (ep.act || ep.post) {
    for (size_t i = 0; i < rows * cout; i++) out[i] = lc_apply_act(out[i], &ep);
  }
  return LC_OK;
}
