/* Helpers every route shares (route.h). */
#include <string.h>

#include "conv/route.h"

void lc_route_launch(const lc_conv *c, const float *in, float *out, unsigned char *ws, size_t tasks,
                     void (*fn)(void *job, size_t task, int thread)) {
  lc_route_job jb = {c, in, out, ws};
  lc_pool_run(c->ctx->pool, tasks, c->plan.threads, fn, &jb);
}

int lc_threads_for_budget(const lc_conv *c, size_t per_thread) {
  int t = c->ctx->threads;
  size_t budget = c->ctx->budget;
  if (budget == 0 || per_thread == 0) return t;
  size_t fit = budget / per_thread;
  if (fit == 0) return 0;
  return fit < (size_t)t ? (int)fit : t;
}

void lc_conv_epilogue(const lc_conv *c, lc_gemm_params *p) {
  memset(p, 0, sizeof *p);
  p->act = (int)c->d.activation;
  p->act_min = c->d.act_min;
  p->act_max = c->d.act_max;
  p->act_alpha = c->d.act_alpha;
  p->post = c->d.post_mul != 1.0f || c->d.post_add != 0.0f;
  p->post_mul = c->d.post_mul;
  p->post_add = c->d.post_add;
  if (c->slopes) {
    p->act = 5;
    p->slope = c->slopes;
  }
}

/* Winograd's output transforms and the stem's rows see a few channels of hot output at a time;
 * a GEMM route's tile goes through kernels with one alpha, so those take the pass after. */
int lc_route_prelu_inline(lc_route r) {
  return r == LC_ROUTE_WINOGRAD || r == LC_ROUTE_WINOGRAD4 || r == LC_ROUTE_STEM;
}

/* taprows' GEMM kernels add it in their epilogue. Winograd's output stores in NCHW are strided
 * across channels: reading the residual beside them ran no faster than the pass after (IResNet-34,
 * 1 thread, per layer: F(2x2) +0-4 %, F(4x4) +4-5 %), so they leave it to that pass. */
int lc_route_res_inline(lc_route r) { return r == LC_ROUTE_TAPROWS; }

void lc_prelu_rows(float *y, size_t rows, size_t n, size_t rs, const float *slope, const lc_gemm_params *p) {
  for (size_t i = 0; i < rows; i++) {
    float *r = y + i * rs, s = slope[i];
    for (size_t j = 0; j < n; j++) r[j] = lc_prelu(r[j], s);
    if (p->post)
      for (size_t j = 0; j < n; j++) r[j] = r[j] * p->post_mul + p->post_add;
  }
}
