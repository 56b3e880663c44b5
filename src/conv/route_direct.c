/* Direct route: plain loops over the packed weights, no workspace. The fallback for anything the
 * other routes don't take; correctness over speed. One task per (image, output row). */
#include "conv/conv.h"
#include "util/checked.h"
#include "util/error.h"

lc_status lc_plan_direct(const lc_conv *c, lc_plan *p) {
  p->route = LC_ROUTE_DIRECT;
  p->tile = 0;
  p->ntiles = (size_t)p->oh;
  /* Q8/Q4: one output channel's weights dequantized at a time. */
  p->ws_thread = c->qw ? lc_round_up(c->K * sizeof(float), 64) : 0;
  p->threads = lc_threads_for_budget(c, p->ws_thread);
  if (p->threads == 0)
    return lc_error(LC_ERR_BUDGET, "direct: a dequantized weight row needs %zu bytes, budget is %zu", p->ws_thread,
                    c->ctx->budget);
  return LC_OK;
}

typedef struct direct_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
} direct_job;

static void direct_task(void *arg, size_t task, int thread) {
  const direct_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_desc *d = &c->d;
  const lc_plan *p = &c->plan;
  int64_t n = (int64_t)(task / (size_t)p->oh), oy = (int64_t)(task % (size_t)p->oh);
  int64_t cin = d->in_channels, cout = d->out_channels;
  int nchw = d->layout == LC_NCHW;
  const float *img = jb->in + (size_t)n * (size_t)cin * p->ihw;
  float *o = jb->out + (size_t)n * (size_t)cout * p->ohw;
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  for (int64_t oc = 0; oc < cout; oc++) {
    int64_t g = oc / c->cout_g, ocg = oc % c->cout_g;
    float *wrow = c->qw ? (float *)(jb->ws + (size_t)thread * p->ws_thread) : NULL;
    if (wrow) lc_conv_qrow(c, oc, wrow);
    for (int64_t ox = 0; ox < p->ow; ox++) {
      float acc = 0.0f;
      for (int64_t ky = 0; ky < d->kernel_h; ky++) {
        int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
        if (iy < 0 || iy >= p->ih) continue;
        for (int64_t kx = 0; kx < d->kernel_w; kx++) {
          int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
          if (ix < 0 || ix >= p->iw) continue;
          size_t kb = (size_t)((ky * d->kernel_w + kx) * c->cin_g);
          for (int64_t ic = 0; ic < c->cin_g; ic++) {
            int64_t ch = g * c->cin_g + ic;
            float x = nchw ? img[(size_t)ch * p->ihw + (size_t)(iy * p->iw + ix)]
                           : img[(size_t)(iy * p->iw + ix) * (size_t)cin + (size_t)ch];
            acc += x * (wrow ? wrow[kb + (size_t)ic] : lc_conv_w(c, g, ocg, kb + (size_t)ic));
          }
        }
      }
      if (c->bias) acc += c->bias[oc];
      acc = lc_apply_act(acc, &ep);
      size_t pix = (size_t)(oy * p->ow + ox);
      if (nchw)
        o[(size_t)oc * p->ohw + pix] = acc;
      else
        o[pix * (size_t)cout + (size_t)oc] = acc;
    }
  }
}

void lc_run_direct(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  direct_job jb = {c, in, out, ws};
  lc_pool_run(c->ctx->pool, (size_t)c->plan.n * (size_t)c->plan.oh, c->plan.threads, direct_task, &jb);
}
