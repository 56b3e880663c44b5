/* The device's measured limits (kernels/bench.cl), kept in the tuning cache so each device and
 * driver is measured once. Peak figures in reports divide by these, never by a datasheet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#include "tune/tune_cache.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over 5 timed runs (after one warm-up) of kernel k. */
static lc_status time_kernel(lc_cl_rt *rt, cl_kernel k, const char *name, size_t gws, size_t lws, int batch,
                             double *ms) {
  double t[5];
  lc_status s = lc_cl_enqueue(rt, k, name, 1, &gws, &lws, NULL);
  for (int r = 0; !s && r < 5; r++) {
    cl_event e0 = NULL, e1 = NULL;
    s = lc_cl_enqueue(rt, k, name, 1, &gws, &lws, &e0);
    for (int i = 1; !s && i < batch; i++) s = lc_cl_enqueue(rt, k, name, 1, &gws, &lws, i == batch - 1 ? &e1 : NULL);
    if (s) {
      if (e0) rt->cl->ReleaseEvent(e0);
      break;
    }
    if (batch == 1) rt->cl->RetainEvent(e0), e1 = e0;
    s = lc_cl_event_ms(rt, e0, e1, &t[r]);
  }
  if (s) return s;
  qsort(t, 5, sizeof t[0], cmp_d);
  *ms = t[2];
  return LC_OK;
}

static lc_status measure(lc_cl_rt *rt, lc_cl_limits *l) {
  cl_kernel kf, kr, ke;
  cl_mem out = NULL, buf = NULL;
  lc_status s;
  if ((s = lc_cl_kernel(rt, "bench", "", "bench_fma", &kf)) || (s = lc_cl_kernel(rt, "bench", "", "bench_read", &kr)) ||
      (s = lc_cl_kernel(rt, "bench", "", "bench_empty", &ke)))
    return s;
  size_t lws = rt->info.max_wg < 256 ? rt->info.max_wg : 256, cu = rt->info.compute_units ? rt->info.compute_units : 1;
  size_t items = cu * (rt->info.is_pocl ? 1024 : 2048) / lws * lws + lws;
  /* PoCL runs on the host's cores: a smaller buffer keeps `lowconv devices` quick there. */
  size_t bytes = (size_t)(rt->info.is_pocl ? 64 : 512) << 20;
  if (bytes > rt->info.max_alloc / 2) bytes = (size_t)(rt->info.max_alloc / 2) / 16 * 16;
  size_t step = 4 * items;
  bytes = bytes / (16 * step) * (16 * step); /* every item reads the same number of float4s */
  int n4 = (int)(bytes / 16);
  float a = 0.999f, b = 1e-4f;
  cl_kernel kfill;
  if ((s = lc_cl_kernel(rt, "bench", "", "bench_fill", &kfill))) return s;
  if ((s = lc_cl_buffer(rt, 64, NULL, &out)) || (s = lc_cl_buffer(rt, bytes, NULL, &buf))) goto done;
  size_t nfill = (size_t)n4;
  const size_t szf[1] = {sizeof(cl_mem)};
  const void *vf[1] = {&buf};
  /* Written once first: never-touched device memory may read faster than real data. */
  if ((s = lc_cl_set_args(rt, kfill, "bench_fill", 1, szf, vf)) ||
      (s = lc_cl_enqueue(rt, kfill, "bench_fill", 1, &nfill, NULL, NULL)))
    goto done;
  double ms;
  const size_t sz3[3] = {sizeof(cl_mem), sizeof a, sizeof b};
  const void *v3[3] = {&out, &a, &b};
  if ((s = lc_cl_set_args(rt, kf, "bench_fma", 3, sz3, v3)) || (s = time_kernel(rt, kf, "bench_fma", items, lws, 1, &ms)))
    goto done;
  l->fma_gflops = (double)items * 8 * 4 * 2 * 256 / (ms * 1e6);
  const size_t szr[3] = {sizeof(cl_mem), sizeof n4, sizeof(cl_mem)};
  const void *vr[3] = {&buf, &n4, &out};
  if ((s = lc_cl_set_args(rt, kr, "bench_read", 3, szr, vr)) ||
      (s = time_kernel(rt, kr, "bench_read", items, lws, 1, &ms)))
    goto done;
  l->read_gbs = (double)bytes / (ms * 1e6);
  const size_t sze[1] = {sizeof(cl_mem)};
  const void *ve[1] = {&out};
  if ((s = lc_cl_set_args(rt, ke, "bench_empty", 1, sze, ve)) ||
      (s = time_kernel(rt, ke, "bench_empty", lws, lws, 100, &ms)))
    goto done;
  l->launch_us = ms * 1e3 / 100;
done:
  lc_cl_release_mem(rt, &out);
  lc_cl_release_mem(rt, &buf);
  return s;
}

lc_status lc_cl_limits_get(lc_context *ctx, lc_cl_limits *out) {
  lc_cl_ctx *x = ctx->dev;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&x->rt->lock);
  const char *v = x->tc ? lc_tune_cache_get(x->tc, "limits") : NULL;
  lc_status s = LC_OK;
  if (!v || sscanf(v, "%lf %lf %lf", &out->fma_gflops, &out->read_gbs, &out->launch_us) != 3 ||
      !(out->fma_gflops > 0)) {
    s = measure(x->rt, out);
    if (!s && x->tc) {
      char buf[96];
      snprintf(buf, sizeof buf, "%.1f %.1f %.3f", out->fma_gflops, out->read_gbs, out->launch_us);
      if (!lc_tune_cache_put(x->tc, "limits", buf)) x->tuned_since_save++;
    }
  }
  pthread_mutex_unlock(&x->rt->lock);
  return s;
}
