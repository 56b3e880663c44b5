/* Depthwise route (channel multiplier 1, any kernel, stride 1 or 2, any dilation).
 * NCHW: per (image, channel) plane; each output row gathers its kh input rows, padded left/right,
 * into the thread's slot (zero rows for taps above/below), then one dw_row kernel call.
 * NHWC: per (image, output row); a pointer per tap into the channel vectors, NULL for padding. */
#include <string.h>

#include "conv/conv.h"
#include "util/checked.h"
#include "util/error.h"

static size_t padded_w(const lc_conv *c, const lc_plan *p) {
  return (size_t)((p->ow - 1) * c->d.stride_w + (c->d.kernel_w - 1) * c->d.dilation_w + 1);
}

lc_status lc_plan_depthwise(const lc_conv *c, lc_plan *p) {
  if (!c->depthwise) return lc_error(LC_ERR_UNSUPPORTED, "depthwise: needs groups == in == out channels");
  if (c->d.stride_h > 2 || c->d.stride_w > 2) return lc_error(LC_ERR_UNSUPPORTED, "depthwise: stride must be 1 or 2");
  size_t per;
  if (c->d.layout == LC_NCHW) {
    /* kh padded rows + 1 zero row + kh row pointers */
    size_t rows = (size_t)c->d.kernel_h + 1;
    if (!lc_mul_sz(rows, padded_w(c, p), &per) || !lc_mul_sz(per, sizeof(float), &per))
      return lc_error(LC_ERR_OVERFLOW, "depthwise: row buffer overflows");
    per = lc_round_up(per, 64) + lc_round_up((size_t)c->d.kernel_h * sizeof(float *), 64);
    p->ntiles = (size_t)c->d.out_channels;
  } else {
    per = lc_round_up((size_t)c->taps * sizeof(float *), 64);
    p->ntiles = (size_t)p->oh;
  }
  int threads = lc_threads_for_budget(c, per);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "depthwise: needs %zu bytes per thread, budget is %zu", per, c->ctx->budget);
  p->route = LC_ROUTE_DEPTHWISE;
  p->ws_thread = per;
  p->threads = threads;
  return LC_OK;
}

typedef struct dw_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
} dw_job;

static void dw_nchw_task(void *arg, size_t task, int thread) {
  const dw_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_desc *d = &c->d;
  const lc_plan *p = &c->plan;
  size_t C = (size_t)d->out_channels, ch = task % C, n = task / C;
  const float *plane = jb->in + (n * C + ch) * p->ihw;
  float *oplane = jb->out + (n * C + ch) * p->ohw;
  size_t pw = padded_w(c, p), kh = (size_t)d->kernel_h;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  float *rows = (float *)slot;
  float *zero = rows + kh * pw;
  const float **rp = (const float **)(slot + lc_round_up((kh + 1) * pw * sizeof(float), 64));
  memset(zero, 0, pw * sizeof(float));
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.final = 1;
  ep.bias = c->bias ? c->bias + ch : NULL;
  /* Valid input columns land at [x0, x0 + n) of a padded row. */
  int64_t x0 = p->pl, xn = p->iw;
  if (x0 + xn > (int64_t)pw) xn = (int64_t)pw - x0; /* right pad may cut input columns never read */
  for (int64_t oy = 0; oy < p->oh; oy++) {
    for (size_t ky = 0; ky < kh; ky++) {
      int64_t iy = oy * d->stride_h - p->pt + (int64_t)ky * d->dilation_h;
      if (iy < 0 || iy >= p->ih || xn <= 0) {
        rp[ky] = zero;
        continue;
      }
      float *r = rows + ky * pw;
      memset(r, 0, (size_t)x0 * sizeof(float));
      memcpy(r + x0, plane + (size_t)iy * (size_t)p->iw, (size_t)xn * sizeof(float));
      memset(r + x0 + xn, 0, (pw - (size_t)(x0 + xn)) * sizeof(float));
      rp[ky] = r;
    }
    c->ctx->k->f32_dw_row((size_t)p->ow, kh, (size_t)d->kernel_w, (size_t)d->stride_w, (size_t)d->dilation_w, rp,
                          c->wdw + ch * (size_t)c->taps, oplane + (size_t)oy * (size_t)p->ow, &ep);
  }
}

static void dw_nhwc_task(void *arg, size_t task, int thread) {
  const dw_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_desc *d = &c->d;
  const lc_plan *p = &c->plan;
  size_t C = (size_t)d->out_channels, oh = (size_t)p->oh;
  size_t n = task / oh;
  int64_t oy = (int64_t)(task % oh);
  const float *img = jb->in + n * C * p->ihw;
  float *orow = jb->out + (n * p->ohw + (size_t)oy * (size_t)p->ow) * C;
  const float **ptrs = (const float **)(jb->ws + (size_t)thread * p->ws_thread);
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.final = 1;
  ep.bias = c->bias;
  for (int64_t ox = 0; ox < p->ow; ox++) {
    size_t t = 0;
    for (int64_t ky = 0; ky < d->kernel_h; ky++) {
      int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
      for (int64_t kx = 0; kx < d->kernel_w; kx++, t++) {
        int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
        ptrs[t] = (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw) ? img + (size_t)(iy * p->iw + ix) * C : NULL;
      }
    }
    c->ctx->k->f32_dw_pixel(C, (size_t)c->taps, ptrs, c->wdw, orow + (size_t)ox * C, &ep);
  }
}

void lc_run_depthwise(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  dw_job jb = {c, in, out, ws};
  size_t tasks = (size_t)c->plan.n * c->plan.ntiles;
  lc_pool_run(c->ctx->pool, tasks, c->plan.threads, c->d.layout == LC_NCHW ? dw_nchw_task : dw_nhwc_task, &jb);
}
