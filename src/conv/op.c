/* Operator life cycle: create packs the weights, prepare plans, run computes. */
#include <stdint.h>
#include <string.h>

#include "backend/backend.h"
#include "conv/autotune.h"
#include "conv/route.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* Packs OIHW weights into panels of pw output channels, K ordered (ky, kx, ic), zero padded,
 * so both layouts' GEMMs read one contiguous stream per panel. */
static void pack_weights(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  size_t K = c->K, pw = c->pw;
  for (int64_t g = 0; g < d->groups; g++)
    for (size_t q = 0; q < c->npanels; q++) {
      float *dst = c->wpack + ((size_t)g * c->npanels + q) * K * pw;
      for (size_t i = 0; i < pw; i++) {
        int64_t ocg = (int64_t)(q * pw + i);
        for (int64_t t = 0; t < c->taps; t++)
          for (int64_t ic = 0; ic < c->cin_g; ic++) {
            size_t k = (size_t)(t * c->cin_g + ic);
            float v = 0.0f;
            if (ocg < c->cout_g) v = w[(((g * c->cout_g + ocg) * c->cin_g + ic) * c->taps) + t];
            dst[k * pw + i] = v;
          }
      }
    }
}

static void pack_depthwise(lc_conv *c, const float *w) {
  int64_t C = c->d.out_channels, T = c->taps;
  for (int64_t ch = 0; ch < C; ch++)
    for (int64_t t = 0; t < T; t++) {
      float v = w[ch * T + t];
      if (c->d.layout == LC_NCHW)
        c->wdw[ch * T + t] = v;
      else
        c->wdw[t * C + ch] = v;
    }
}

/* c->padv (unless every value is 0 or the conv never pads) and c->wpadv: per (output channel, tap) the sum over the
 * input channels of w * padv, what a padding pixel adds at that tap (the weights as the routes
 * read them: Q8/Q4 dequantized). */
static lc_status pad_values(lc_conv *c, const float *pv) {
  size_t cin = (size_t)c->d.in_channels, cout = (size_t)c->d.out_channels, taps = (size_t)c->taps, n;
  const lc_conv_desc *d = &c->d;
  int any = 0, padded = d->pad_top || d->pad_left || d->pad_bottom || d->pad_right ||
                        (d->auto_pad != LC_PAD_NOTSET && d->auto_pad != LC_PAD_VALID);
  for (size_t i = 0; i < cin; i++) any |= pv[i] != 0.0f;
  if (!any || !padded) return LC_OK; /* no padding pixel ever: every route serves */
  if (!lc_mul_sz(cout, taps, &n)) return lc_error(LC_ERR_OVERFLOW, "conv: pad value sums overflow");
  c->padv = lc_malloc(cin * sizeof(float)); /* <= the weights' size: no overflow */
  c->wpadv = lc_malloc(n * sizeof(float));
  float *row = lc_malloc(c->K * sizeof(float));
  if (!c->padv || !c->wpadv || !row) {
    lc_free(row);
    return lc_error(LC_ERR_NO_MEMORY, "conv: out of memory for the pad values");
  }
  memcpy(c->padv, pv, cin * sizeof(float));
  size_t cig = (size_t)c->cin_g;
  for (size_t oc = 0; oc < cout; oc++) {
    size_t g = oc / (size_t)c->cout_g;
    if (c->qw) lc_conv_qrow(c, (int64_t)oc, row);
    for (size_t t = 0; t < taps; t++) {
      double s = 0.0;
      for (size_t ic = 0; ic < cig; ic++) {
        size_t k = t * cig + ic;
        float w = c->qw ? row[k] : lc_conv_w(c, (int64_t)g, (int64_t)(oc % (size_t)c->cout_g), k);
        s += (double)w * pv[g * cig + ic];
      }
      c->wpadv[oc * taps + t] = (float)s;
    }
  }
  lc_free(row);
  return LC_OK;
}

/* qm: weights already in lowconv's quantized layout, adopted as they are (lc_conv_create_qm). */
static lc_status create(lc_context *ctx, const lc_conv_desc *desc, const lc_qmatrix *qm, lc_conv **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "conv: out pointer is NULL");
  *out = NULL;
  if (!ctx) return lc_error(LC_ERR_INVALID_ARG, "conv: context is NULL");
  lc_status st = lc_conv_desc_check(desc);
  if (st) return st;
  if (qm && ctx->be->conv_create)
    return lc_error(LC_ERR_UNSUPPORTED, "conv: a device context packs its own codes (lc_conv_takes_qmatrix)");
  if (ctx->be->conv_create && (desc->post_mul != 1.0f || desc->post_add != 0.0f))
    return lc_error(LC_ERR_UNSUPPORTED, "conv: post_mul / post_add run on the cpu only");
  if (ctx->be->conv_create && desc->activation == LC_ACT_PRELU)
    return lc_error(LC_ERR_UNSUPPORTED, "conv: LC_ACT_PRELU runs on the cpu only");
  if (ctx->be->conv_create && desc->pad_values)
    return lc_error(LC_ERR_UNSUPPORTED, "conv: pad_values run on the cpu only");
  lc_conv *c = lc_calloc(1, sizeof *c);
  if (!c) return lc_error(LC_ERR_NO_MEMORY, "conv: out of memory");
  c->ctx = ctx;
  c->d = *desc;
  c->d.weights = NULL;
  c->d.bias = NULL;
  c->d.q_codes = NULL;
  c->d.q_scales = c->d.q_offsets = NULL;
  c->d.act_slopes = NULL;
  c->d.pad_values = NULL;
  c->cin_g = desc->in_channels / desc->groups;
  c->cout_g = desc->out_channels / desc->groups;
  c->taps = desc->kernel_h * desc->kernel_w;
  c->K = (size_t)(c->cin_g * c->taps); /* checked by desc_check */
  c->pw = desc->layout == LC_NCHW ? ctx->k->mr : ctx->k->nr;
  c->npanels = lc_div_up((size_t)c->cout_g, c->pw);
  c->depthwise = c->cin_g == 1 && c->cout_g == 1;
  if (ctx->be->conv_create) { /* a device backend packs the weights for its device */
    if ((st = ctx->be->conv_create(c, desc))) {
      lc_conv_destroy(c);
      return st;
    }
    *out = c;
    return LC_OK;
  }
  size_t dwbytes = (size_t)(desc->out_channels * c->taps) * sizeof(float);
  if (qm) {
    st = lc_conv_adopt_qmatrix(c, qm);
  } else if (desc->weight_format != LC_WEIGHTS_F32) {
    st = lc_conv_quantize(c, desc);
  } else {
    size_t nw, tmp;
    if (!lc_mul_sz((size_t)desc->groups, c->npanels, &nw) || !lc_mul_sz(nw, c->K, &nw) ||
        !lc_mul_sz(nw, c->pw, &nw) || !lc_mul_sz(nw, sizeof(float), &tmp)) {
      st = lc_error(LC_ERR_OVERFLOW, "conv: packed weight size overflows");
    } else if (!(c->wpack = lc_malloc(tmp))) {
      st = lc_error(LC_ERR_NO_MEMORY, "conv: cannot allocate %zu bytes of packed weights", tmp);
    } else {
      c->weight_bytes = tmp;
      pack_weights(c, desc->weights);
    }
  }
  /* Depthwise weights stay fp32 (for Q8/Q4: the dequantized values): with one input channel per
   * group a block would hold a single weight, so a scale per weight would cost more than floats. */
  if (!st && c->depthwise) {
    c->wdw = lc_malloc(dwbytes);
    float *deq = c->qw ? lc_malloc(dwbytes) : NULL;
    if (!c->wdw || (c->qw && !deq)) {
      st = lc_error(LC_ERR_NO_MEMORY, "conv: out of memory for depthwise weights");
    } else {
      if (deq)
        for (int64_t oc = 0; oc < desc->out_channels; oc++) lc_conv_qrow(c, oc, deq + oc * c->taps);
      pack_depthwise(c, deq ? deq : desc->weights);
      c->weight_bytes += dwbytes;
    }
    lc_free(deq);
  }
  if (!st && desc->bias) {
    c->bias = lc_malloc((size_t)desc->out_channels * sizeof(float));
    if (!c->bias) {
      st = lc_error(LC_ERR_NO_MEMORY, "conv: out of memory for the bias");
    } else {
      memcpy(c->bias, desc->bias, (size_t)desc->out_channels * sizeof(float));
      c->weight_bytes += (size_t)desc->out_channels * sizeof(float);
    }
  }
  if (!st && desc->activation == LC_ACT_PRELU) {
    c->slopes = lc_malloc((size_t)desc->out_channels * sizeof(float));
    if (!c->slopes) st = lc_error(LC_ERR_NO_MEMORY, "conv: out of memory for the PRelu slopes");
    else memcpy(c->slopes, desc->act_slopes, (size_t)desc->out_channels * sizeof(float));
  }
  if (!st && desc->pad_values) st = pad_values(c, desc->pad_values);
  /* fp32 convs keep transformed weights; Q8/Q4 ones are transformed per panel in run. */
  if (!st && !c->qw) st = lc_winograd_pack(c, desc->weights);
  if (!st && !c->qw) st = lc_winograd4_pack(c, desc->weights);
  if (st) {
    lc_conv_destroy(c);
    return st;
  }
  *out = c;
  return LC_OK;
}

lc_status lc_conv_create(lc_context *ctx, const lc_conv_desc *desc, lc_conv **out) {
  return create(ctx, desc, NULL, out);
}

int lc_conv_takes_qmatrix(const lc_context *ctx) { return ctx && !ctx->be->conv_create; }

lc_status lc_conv_create_qm(lc_context *ctx, const lc_conv_desc *desc, const lc_qmatrix *qm, lc_conv **out) {
  if (!desc || !qm || !qm->codes) return lc_error(LC_ERR_INVALID_ARG, "conv: NULL descriptor or weights");
  lc_conv_desc d = *desc; /* the checks see the codes as given; create copies nothing from them */
  d.weights = NULL;
  d.weight_format = qm->format;
  d.q_codes = (const int8_t *)qm->codes;
  d.q_scales = qm->scales;
  d.q_offsets = qm->offsets;
  d.asym = qm->asym;
  return create(ctx, &d, qm, out);
}

void lc_conv_destroy(lc_conv *c) {
  if (!c) return;
  if (c->dev) c->ctx->be->conv_free(c);
  lc_free(c->wpack);
  lc_free(c->wdw);
  lc_free(c->bias);
  lc_free(c->slopes);
  lc_free(c->padv);
  lc_free(c->wpadv);
  lc_free(c->wwino);
  lc_free(c->wwino4);
  if (c->qw) lc_qmatrix_free(c->qw);
  lc_free(c->qw);
  lc_free(c);
}

size_t lc_conv_weight_bytes(const lc_conv *c) { return c ? c->weight_bytes : 0; }

/* Bytes of each weight representation (for weight_bytes after a release). */
static size_t wpack_bytes(const lc_conv *c) {
  return c->wpack ? (size_t)c->d.groups * c->npanels * c->K * c->pw * sizeof(float) : 0;
}
static size_t wdw_bytes(const lc_conv *c) { return c->wdw ? (size_t)(c->d.out_channels * c->taps) * sizeof(float) : 0; }

lc_status lc_conv_release_unused(lc_conv *c) {
  if (!c) return lc_error(LC_ERR_INVALID_ARG, "conv: operator is NULL");
  if (!c->prepared) return lc_error(LC_ERR_STATE, "conv: release_unused needs a successful prepare first");
  if (c->dev) return LC_OK; /* a device conv holds one representation */
  /* Free every representation the chosen route doesn't read (the quantized matrix is kept). */
  unsigned reads = lc_route_def_of(c->plan.route)->reads;
  size_t freed = 0;
  if (!(reads & LC_WREP_WINO4) && c->wwino4) {
    freed += c->wwino4_bytes;
    lc_free(c->wwino4);
    c->wwino4 = NULL;
    c->wwino4_bytes = 0;
  }
  if (!(reads & LC_WREP_WINO) && c->wwino) {
    freed += c->wwino_bytes;
    lc_free(c->wwino);
    c->wwino = NULL;
    c->wwino_bytes = 0;
  }
  if (!(reads & LC_WREP_PACKED) && c->wpack) {
    freed += wpack_bytes(c);
    lc_free(c->wpack);
    c->wpack = NULL;
  }
  if (!(reads & LC_WREP_DW) && c->wdw) {
    freed += wdw_bytes(c);
    lc_free(c->wdw);
    c->wdw = NULL;
  }
  c->released = 1;
  c->weight_bytes -= freed;
  return LC_OK;
}

static lc_status plan_route(lc_conv *c, lc_route r, lc_conv_plan *p) {
  if (r == LC_ROUTE_AUTO) return c->ctx->tuner ? lc_cpu_tune_plan(c, p) : lc_select_route(c, p);
  const lc_route_def *rd = lc_route_def_of(r);
  if (!rd) return lc_error(LC_ERR_INVALID_ARG, "conv: bad route %d", (int)r);
  /* Without its weights a route can only run if they were released; else its plan says why not. */
  if (c->released && !lc_conv_has_weights_for(c, r))
    return lc_error(LC_ERR_UNSUPPORTED, "%s: its weights were released by lc_conv_release_unused", rd->name);
  return lc_route_plan(c, r, p);
}

lc_status lc_conv_prepare(lc_conv *c, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape) {
  if (!c) return lc_error(LC_ERR_INVALID_ARG, "conv: operator is NULL");
  c->prepared = 0;
  if (batch <= 0) return lc_error(LC_ERR_INVALID_ARG, "conv: batch %lld must be >= 1", (long long)batch);
  if (batch > ((int64_t)1 << 30))
    return lc_error(LC_ERR_OVERFLOW, "conv: batch %lld is larger than 2^30", (long long)batch);
  if (c->dev) return c->ctx->be->conv_prepare(c, batch, in_h, in_w, shape);
  lc_conv_plan p;
  memset(&p, 0, sizeof p);
  int64_t pads[4];
  lc_status st = lc_conv_resolve_pads(&c->d, in_h, in_w, pads, &p.oh, &p.ow);
  if (st) return st;
  p.n = batch;
  p.ih = in_h;
  p.iw = in_w;
  p.pt = pads[0];
  p.pl = pads[1];
  p.pb = pads[2];
  p.pr = pads[3];
  /* Every tensor's element count must fit: input, output, and their byte sizes. */
  size_t sz;
  int64_t fin[4] = {batch, c->d.in_channels, in_h, in_w}, fout[4] = {batch, c->d.out_channels, p.oh, p.ow};
  if (!lc_mul_n(&sz, 4, fin) || !lc_mul_sz(sz, sizeof(float), &sz) || !lc_mul_n(&sz, 4, fout) ||
      !lc_mul_sz(sz, sizeof(float), &sz))
    return lc_error(LC_ERR_OVERFLOW, "conv: tensor size overflows (batch %lld, %lld x %lld)", (long long)batch,
                    (long long)in_h, (long long)in_w);
  p.ihw = (size_t)(in_h * in_w);
  p.ohw = (size_t)(p.oh * p.ow);
  memset(&c->dev_info, 0, sizeof c->dev_info);
  c->tune_src = LC_TSRC_HEURISTIC;
  st = plan_route(c, c->d.route, &p);
  if (st) return st;
  if (!c->dev_info.kernel[0]) snprintf(c->dev_info.kernel, sizeof c->dev_info.kernel, "%s", lc_route_name(p.route));
  if (!lc_mul_sz(p.ws_thread, (size_t)p.threads, &p.ws_total))
    return lc_error(LC_ERR_OVERFLOW, "conv: workspace size overflows");
  if (c->ctx->budget && p.ws_total > c->ctx->budget)
    return lc_error(LC_ERR_INTERNAL, "conv: plan exceeds budget (%zu > %zu)", p.ws_total, c->ctx->budget);
  c->plan = p;
  c->prepared = 1;
  if (shape) {
    shape->batch = batch;
    shape->in_h = in_h;
    shape->in_w = in_w;
    shape->out_h = p.oh;
    shape->out_w = p.ow;
    shape->route = p.route;
    shape->workspace_bytes = p.ws_total;
  }
  return LC_OK;
}

static lc_status run(lc_conv *c, const float *in, const float *res, float *out, void *ws, size_t ws_size) {
  if (!c) return lc_error(LC_ERR_INVALID_ARG, "conv: operator is NULL");
  if (!c->prepared) return lc_error(LC_ERR_STATE, "conv: run called before a successful prepare");
  if (!in || !out) return lc_error(LC_ERR_INVALID_ARG, "conv: input or output pointer is NULL");
  if (c->dev && res) return lc_error(LC_ERR_UNSUPPORTED, "conv: a device conv takes its residual as a buffer (lc_conv_run_buffers)");
  if (c->dev) return lc_conv_run_host(c, in, out);
  const lc_conv_plan *p = &c->plan;
  size_t ob = (size_t)(p->n * c->d.out_channels) * p->ohw * sizeof(float); /* checked at prepare */
  if (res && (uintptr_t)res < (uintptr_t)out + ob && (uintptr_t)out < (uintptr_t)res + ob)
    return lc_error(LC_ERR_INVALID_ARG, "conv: the residual overlaps the output");
  void *own = NULL;
  if (p->ws_total) {
    if (ws) {
      if (ws_size < p->ws_total)
        return lc_error(LC_ERR_INVALID_ARG, "conv: workspace of %zu bytes given, %zu needed", ws_size, p->ws_total);
    } else {
      ws = own = lc_malloc(p->ws_total);
      if (!ws) return lc_error(LC_ERR_NO_MEMORY, "conv: cannot allocate %zu bytes of workspace", p->ws_total);
    }
  }
  lc_status st = lc_conv_run_route(c, in, out, res, ws);
  lc_free(own);
  return st;
}

lc_status lc_conv_run(lc_conv *c, const float *in, float *out, void *ws, size_t ws_size) {
  return run(c, in, NULL, out, ws, ws_size);
}

lc_status lc_conv_run_residual(lc_conv *c, const float *in, const float *residual, float *out, void *ws,
                               size_t ws_size) {
  if (!residual) return lc_error(LC_ERR_INVALID_ARG, "conv: residual pointer is NULL");
  return run(c, in, residual, out, ws, ws_size);
}
