/* `lowconv conv --device opencl`: timing on a device. Device time per run comes from profiling
 * events (what the kernels cost); wall time per run of back-to-back runs ending in one sync is
 * what a network pays, launch gaps included. The input is uploaded once, as in a model. */
#include "conv_device.h"

#include "util/timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if LC_HAVE_OPENCL
#include "backend/opencl/cl_backend.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
#endif

lc_status conv_device_time(lc_context *ctx, lc_conv *conv, lc_conv *const *extra, int nx, const float *in, size_t n_in,
                           float *out, size_t n_out, int warmup, int repeat, conv_device_result *r) {
#if LC_HAVE_OPENCL
  lc_buffer *ti = NULL, *to = NULL;
  double *t = NULL;
  int reps = repeat > 0 ? repeat : 50;
  lc_status s = lc_buffer_create(ctx, n_in * sizeof(float), &ti);
  if (!s) s = lc_buffer_create(ctx, n_out * sizeof(float), &to);
  if (!s) s = lc_buffer_upload(ti, in, n_in * sizeof(float));
  for (int i = 0; !s && i < (warmup > 0 ? warmup : 1); i++) s = lc_conv_run_buffers(conv, ti, to, NULL);
  if (!s && !(t = malloc(sizeof(double) * (size_t)reps))) s = LC_ERR_NO_MEMORY;
  if (!s) s = lc_context_sync(ctx);
  if (!s) s = lc_cl_conv_time(conv, ti, to, reps, t);
  if (!s) {
    qsort(t, (size_t)reps, sizeof t[0], cmp_d);
    r->device_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    r->min_ms = t[0];
    for (int i = 0; !s && i < nx; i++) s = lc_conv_run_buffers(extra[i], ti, to, NULL); /* their first runs */
    if (!s) s = lc_context_sync(ctx);
    double t0 = lc_now_ms();
    for (int i = 0; !s && i < reps; i++) s = lc_conv_run_buffers(i % (nx + 1) ? extra[i % (nx + 1) - 1] : conv, ti, to, NULL);
    if (!s) s = lc_context_sync(ctx);
    r->wall_ms = (lc_now_ms() - t0) / reps;
  }
  if (!s) s = lc_buffer_download(to, out, n_out * sizeof(float));
  lc_cl_limits lim;
  if (!s && !lc_cl_limits_get(ctx, &lim)) r->peak_gflops = lim.fma_gflops;
  if (!s) s = lc_conv_device_info_get(conv, &r->info);
  free(t);
  lc_buffer_destroy(ti);
  lc_buffer_destroy(to);
  return s;
#else
  (void)ctx, (void)conv, (void)extra, (void)nx, (void)in, (void)n_in, (void)out, (void)n_out, (void)warmup, (void)repeat, (void)r;
  return LC_ERR_UNSUPPORTED;
#endif
}
