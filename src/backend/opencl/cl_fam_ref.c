/* The baseline family: one work item per output element (kernels/conv_ref.cl). The tuner checks
 * every candidate's output against it; it runs any conv, so it is also the last resort. */
#include "backend/opencl/cl_conv.h"

static const char *const ref_variants[] = {"plain"};

static int ref_eligible(const lc_cl_conv *c, int v) {
  (void)c;
  return v == 0;
}

static int ref_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  (void)v, (void)level;
  if (max < 1) return 0;
  size_t x = c->rt->info.max_wg >= 64 ? 64 : c->rt->info.max_wg;
  if (x > c->rt->info.max_wi[0]) x = c->rt->info.max_wi[0];
  lws[0][0] = x, lws[0][1] = 1, lws[0][2] = 1;
  return 1;
}

static size_t ref_ws(const lc_cl_conv *c, const lc_cl_cand *x) {
  (void)c, (void)x;
  return 0;
}

static lc_status ref_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                             cl_event *first, cl_event *last) {
  const lc_cl_conv_args *a = &c->a;
  size_t gws[3] = {(size_t)a->ow, (size_t)a->oh, (size_t)a->n * (size_t)a->groups * (size_t)a->cout_g};
  return lc_cl_conv_enqueue_std(c, cand, "conv_ref", "conv_ref", 3, gws, in, out, res, first, last);
}

const lc_cl_family lc_cl_family_ref = {"ref", "conv_ref", 1, ref_variants, ref_eligible, ref_local_sizes, ref_ws,
                                       ref_enqueue};
