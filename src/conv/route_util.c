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
}
