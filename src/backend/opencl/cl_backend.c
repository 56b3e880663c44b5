/* The OpenCL backend's lc_backend_ops: a device per context, tensors as device buffers. */
#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_program.h"

#include "conv/conv.h"
#include "tune/tune_cache.h"
#include "util/alloc.h"
#include "util/error.h"

static lc_status cl_open(lc_context *ctx, const lc_context_params *p) {
  lc_cl_ctx *x = lc_calloc(1, sizeof *x);
  if (!x) return lc_error(LC_ERR_NO_MEMORY, "opencl: out of memory");
  lc_status s = lc_cl_rt_create(p->cl_platform, p->cl_device, p->cache_dir, &x->rt);
  if (s) {
    lc_free(x);
    return s;
  }
  x->tune = p->tune;
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

const lc_backend_ops lc_backend_opencl = {
    .name = "opencl",
    .open = cl_open,
    .close = cl_close,
    .device_name = cl_name,
    .fingerprint = cl_fingerprint,
    .sync = cl_sync,
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
