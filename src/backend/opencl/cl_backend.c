/* The OpenCL backend's lc_backend_ops: a device per context, tensors as device buffers. */
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops.h"
#include "backend/opencl/cl_program.h"

#include "conv/conv.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/timer.h"

static lc_status cl_open(lc_context *ctx, const lc_context_params *p) {
  lc_cl_ctx *x = lc_calloc(1, sizeof *x);
  if (!x) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  lc_status s = lc_cl_rt_create(p->cl_platform, p->cl_device, p->cache_dir, &x->rt);
  if (s) {
    lc_free(x);
    return s;
  }
  x->tune = p->tune;
  const char *grp = getenv("LOWCONV_CL_GROUP"); /* 0: one program per kernel (A/B runs) */
  x->rt->group_kernels = p->tune >= LC_TUNE_FAST && !(grp && grp[0] == '0');
  if (x->rt->cache_dir && lc_tune_cache_open(x->rt->cache_dir, x->rt->info.fingerprint, &x->tc)) {
    lc_cl_warn_once(x->rt, "tuning cache unusable (%s); tunings are not kept", lc_last_error());
    x->tc = NULL;
  }
  lc_cl_probe_features(x);
  ctx->dev = x;
  return LC_OK;
}

static void cl_close(lc_context *ctx) {
  lc_cl_ctx *x = ctx->dev;
  if (!x) return;
  if (x->tc) {
    if (x->tuned_since_save && lc_tune_cache_save(x->tc))
      lc_cl_warn_once(x->rt, "cannot save the tuning cache (%s); it only costs start-up time", lc_last_error());
    lc_tune_cache_close(x->tc);
  }
  lc_cl_rt_destroy(x->rt);
  lc_free(x);
  ctx->dev = NULL;
}

static const char *cl_name(const lc_context *ctx) { return ((lc_cl_ctx *)ctx->dev)->rt->info.device; }
static const char *cl_fingerprint(const lc_context *ctx) { return ((lc_cl_ctx *)ctx->dev)->rt->info.fingerprint; }
static lc_status cl_sync(lc_context *ctx) { return lc_cl_finish(((lc_cl_ctx *)ctx->dev)->rt); }
static long cl_launches(lc_context *ctx) { return ((lc_cl_ctx *)ctx->dev)->rt->n_enq; }
static lc_status cl_flush(lc_context *ctx) {
  lc_cl_rt *rt = ((lc_cl_ctx *)ctx->dev)->rt;
  cl_int e = rt->cl->Flush(rt->queue);
  return e ? lc_cl_fail(rt, e, "flushing the queue") : LC_OK;
}

static lc_status cl_buffer_alloc(lc_buffer *t) {
  cl_mem m;
  lc_status s = lc_cl_buffer(((lc_cl_ctx *)t->ctx->dev)->rt, t->bytes, NULL, &m);
  t->data = s ? NULL : m;
  return s;
}
static void cl_buffer_free(lc_buffer *t) {
  cl_mem m = t->data;
  lc_cl_release_mem(((lc_cl_ctx *)t->ctx->dev)->rt, &m);
}
static lc_status cl_upload(lc_buffer *t, size_t off, const void *src, size_t n) {
  return lc_cl_write(((lc_cl_ctx *)t->ctx->dev)->rt, t->data, off, n, src);
}
static lc_status cl_download(const lc_buffer *t, size_t off, void *dst, size_t n) {
  return lc_cl_read(((lc_cl_ctx *)t->ctx->dev)->rt, t->data, off, n, dst);
}
static lc_status cl_conv_run(lc_conv *c, const lc_buffer *in, lc_buffer *out, const lc_buffer *res) {
  return lc_cl_conv_enqueue(c, in->data, out->data, res ? res->data : NULL);
}

/* ---- the model runner's entry points ---- */

static lc_cl_rt *rt_of(const lc_context *ctx) { return ((lc_cl_ctx *)ctx->dev)->rt; }

/* Test hooks, as no test device is that small: LOWCONV_CL_MAX_ALLOC and LOWCONV_CL_GLOBAL_MEM
 * (bytes) lower the largest buffer (the arena split) and the device memory (the plan-time
 * out-of-memory error) the runner plans with. */
static void lower_by_env(const char *name, size_t *v) {
  const char *e = getenv(name);
  char *end;
  unsigned long long x = e ? strtoull(e, &end, 10) : 0;
  if (e && *end == 0 && x > 0 && x < *v) *v = (size_t)x;
}

static lc_status cl_limits(const lc_context *ctx, lc_backend_limits *o) {
  lc_cl_rt *rt = rt_of(ctx);
  cl_uint bits = 0;
  if (rt->cl->GetDeviceInfo(rt->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL)) bits = 0;
  o->global_mem = (size_t)rt->info.global_mem;
  o->max_alloc = (size_t)rt->info.max_alloc;
  o->base_align = bits / 8 > 64 ? bits / 8 : 64;
  lower_by_env("LOWCONV_CL_MAX_ALLOC", &o->max_alloc);
  lower_by_env("LOWCONV_CL_GLOBAL_MEM", &o->global_mem);
  return LC_OK;
}

static lc_status cl_launch_us(lc_context *ctx, double *us) {
  lc_cl_limits lim;
  lc_status s = lc_cl_limits_get(ctx, &lim);
  *us = s ? 0 : lim.launch_us;
  return s;
}

/* Background builds count from their start until joined (rt->bg: set and cleared by this thread). */
static double cl_compile_ms(const lc_context *ctx) {
  const lc_cl_rt *rt = rt_of(ctx);
  return rt->compile_ms + (rt->bg ? lc_cl_bg_ms(rt) : 0.0);
}

static void cl_collect_begin(lc_context *ctx) {
  lc_cl_rt *rt = rt_of(ctx);
  pthread_mutex_lock(&rt->lock);
  rt->collect_pass = 1;
  rt->ntags = 0; /* this pass's nodes only */
  pthread_mutex_unlock(&rt->lock);
}

static void cl_collect_node(lc_context *ctx, int tag) {
  lc_cl_rt *rt = rt_of(ctx);
  pthread_mutex_lock(&rt->lock);
  lc_cl_collect_tag(rt, tag);
  pthread_mutex_unlock(&rt->lock);
}

static int cl_node_ready(lc_context *ctx, int tag) {
  lc_cl_rt *rt = rt_of(ctx);
  return tag < 0 ? lc_cl_build_wait_one(rt) : lc_cl_tag_ready(rt, tag);
}

static lc_status cl_collect_end(lc_context *ctx) {
  lc_cl_rt *rt = rt_of(ctx);
  pthread_mutex_lock(&rt->lock);
  rt->collect_pass = 0;
  lc_cl_collect_tag(rt, -1);
  lc_status s = lc_cl_build_wanted_async(rt);
  pthread_mutex_unlock(&rt->lock);
  return s;
}

static lc_status cl_collect_join(lc_context *ctx) {
  lc_cl_rt *rt = rt_of(ctx);
  pthread_mutex_lock(&rt->lock);
  lc_status s = lc_cl_build_join(rt), su = lc_cl_uploads_wait(rt); /* the last weights' copies, errors at plan */
  pthread_mutex_unlock(&rt->lock);
  if (!s) s = su;
  return s;
}

static lc_status cl_buffer_sub(lc_buffer *t, const lc_buffer *parent, size_t off) {
  lc_cl_rt *rt = rt_of(t->ctx);
  cl_buffer_region r = {off, t->bytes};
  cl_int e;
  cl_mem m = rt->cl->CreateSubBuffer(parent->data, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
  if (!m) return lc_cl_fail(rt, e, "a sub-buffer of %zu bytes at %zu of a %zu-byte buffer", t->bytes, off, parent->bytes);
  t->data = m;
  t->sub = 1;
  return LC_OK;
}

static lc_status cl_upload_async(lc_buffer *t, size_t off, const void *src, size_t n) {
  lc_cl_rt *rt = rt_of(t->ctx);
  double t0 = lc_now_ms();
  cl_int e = rt->cl->EnqueueWriteBuffer(rt->queue, t->data, CL_FALSE, off, n, src, 0, NULL, NULL);
  rt->xfer_ms += lc_now_ms() - t0;
  return e ? lc_cl_fail(rt, e, "uploading %zu bytes", n) : LC_OK;
}
static lc_status cl_download_async(const lc_buffer *t, size_t off, void *dst, size_t n) {
  lc_cl_rt *rt = rt_of(t->ctx);
  double t0 = lc_now_ms();
  cl_int e = rt->cl->EnqueueReadBuffer(rt->queue, t->data, CL_FALSE, off, n, dst, 0, NULL, NULL);
  rt->xfer_ms += lc_now_ms() - t0;
  return e ? lc_cl_fail(rt, e, "downloading %zu bytes", n) : LC_OK;
}

/* Pinned host memory: NVIDIA copies pageable memory through its own staging at a few GB/s (a
 * 640x640 input, 4.9 MB, took ~1.5 ms of a 3 ms OCR-det run on the H200). */
static lc_status cl_host_alloc(lc_context *ctx, size_t n, void **ptr, void **handle) {
  if (!lc_cl_pinned_wanted(1)) return LC_ERR_UNSUPPORTED;
  cl_mem m;
  lc_status s = lc_cl_pinned_alloc(((lc_cl_ctx *)ctx->dev)->rt, n, ptr, &m);
  *handle = m;
  return s;
}

static void cl_host_free(lc_context *ctx, void *ptr, void *handle) {
  lc_cl_pinned_free(((lc_cl_ctx *)ctx->dev)->rt, ptr, (cl_mem)handle);
}

static lc_status cl_op_create(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in,
                              const lc_tensor *out, int n_out, const lc_exec_ctx *x, unsigned cm, lc_backend_op **op) {
  lc_clop *o = NULL;
  lc_status s = lc_clop_create(ctx, n, in, n_in, out, n_out, x, cm, &o);
  *op = (lc_backend_op *)o;
  return s;
}

static int cl_stage_node(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_exec_ctx *x,
                         unsigned cm, int tag, size_t limit) {
  return lc_clop_stage(ctx, n, in, n_in, x, cm, tag, limit);
}

/* The node's buffers as cl_mem, input slots first (a small node needs no allocation). */
static lc_status cl_op_enqueue(lc_backend_op *op, const lc_buffer *const *in, const lc_buffer *const *out,
                               lc_backend_span *span) {
  lc_clop *o = (lc_clop *)op;
  int ni = lc_clop_n_inputs(o), no = lc_clop_n_outputs(o);
  cl_mem local[64], *m = ni + no <= 64 ? local : lc_malloc((size_t)(ni + no) * sizeof *m);
  if (!m) return lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory");
  for (int k = 0; k < ni; k++) m[k] = in[k] ? in[k]->data : NULL;
  for (int k = 0; k < no; k++) m[ni + k] = out[k] ? out[k]->data : NULL;
  lc_status s = lc_clop_enqueue(o, m, m + ni, span ? (cl_event *)&span->first : NULL,
                                span ? (cl_event *)&span->last : NULL);
  if (m != local) lc_free(m);
  return s;
}

static void cl_op_describe(const lc_backend_op *op, lc_backend_op_info *info) {
  lc_clop_describe((const lc_clop *)op, info);
}
static void cl_op_free(lc_backend_op *op) { lc_clop_free((lc_clop *)op); }

static lc_status cl_span_ms(lc_context *ctx, lc_backend_span *sp, int n, double *ms, double *total) {
  lc_cl_rt *rt = rt_of(ctx);
  cl_ulong lo = 0, hi = 0;
  lc_status s = LC_OK;
  for (int i = 0; i < n; i++) {
    cl_event a = sp[i].first, b = sp[i].last;
    if (ms) ms[i] = 0;
    if (!s && a && b) {
      cl_ulong t0 = 0, t1 = 0;
      cl_int e = rt->cl->GetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
      if (!e) e = rt->cl->GetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
      if (e) s = lc_cl_fail(rt, e, "reading the profiling times of op %d", i);
      if (ms && !e) ms[i] = t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
      if (!e && (!lo || t0 < lo)) lo = t0;
      if (!e && t1 > hi) hi = t1;
    }
    if (a) rt->cl->ReleaseEvent(a);
    if (b) rt->cl->ReleaseEvent(b);
    sp[i].first = sp[i].last = NULL;
  }
  if (total) *total = hi > lo ? (double)(hi - lo) * 1e-6 : 0.0;
  return s;
}

const lc_backend_ops lc_backend_opencl = {
    .name = "opencl",
    .open = cl_open,
    .close = cl_close,
    .device_name = cl_name,
    .fingerprint = cl_fingerprint,
    .sync = cl_sync,
    .flush = cl_flush,
    .launches = cl_launches,
    .buffer_alloc = cl_buffer_alloc,
    .buffer_free = cl_buffer_free,
    .upload = cl_upload,
    .download = cl_download,
    .conv_create = lc_cl_conv_create,
    .conv_free = lc_cl_conv_free,
    .conv_prepare = lc_cl_conv_prepare,
    .conv_run = cl_conv_run,
    .conv_run_host = lc_cl_conv_run_host,
    .conv_weights = lc_cl_conv_weights,
    .limits = cl_limits,
    .launch_us = cl_launch_us,
    .compile_ms = cl_compile_ms,
    .buffer_sub = cl_buffer_sub,
    .host_alloc = cl_host_alloc,
    .host_free = cl_host_free,
    .upload_async = cl_upload_async,
    .download_async = cl_download_async,
    .op_create = cl_op_create,
    .op_enqueue = cl_op_enqueue,
    .op_describe = cl_op_describe,
    .op_free = cl_op_free,
    .span_ms = cl_span_ms,
    .collect_begin = cl_collect_begin,
    .collect_end = cl_collect_end,
    .collect_join = cl_collect_join,
    .collect_node = cl_collect_node,
    .node_ready = cl_node_ready,
    .stage_node = cl_stage_node,
    .stage_run = lc_cl_stage_run,
    .stage_drop = lc_cl_stage_drop,
};

lc_status lc_cl_conv_time(lc_conv *c, const lc_buffer *in, lc_buffer *out, int reps, double *ms) {
  lc_cl_conv *cc = c->dev;
  const lc_cl_family *f = lc_cl_families[cc->cand.family];
  cc->a.has_res = 0;
  lc_status s = LC_OK;
  pthread_mutex_lock(&cc->rt->lock);
  for (int r = 0; !s && r < reps; r++) {
    cl_event e0 = NULL, e1 = NULL;
    s = f->enqueue(cc, &cc->cand, in->data, out->data, NULL, &e0, &e1);
    if (!s) s = lc_cl_event_ms(cc->rt, e0, e1, &ms[r]);
  }
  pthread_mutex_unlock(&cc->rt->lock);
  return s;
}
