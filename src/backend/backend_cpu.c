/* The CPU backend: tensors are host memory; convs run through src/conv. */
#include <string.h>

#include "backend/backend.h"
#include "conv/autotune.h"
#include "conv/conv.h"
#include "util/alloc.h"
#include "util/error.h"

static lc_status cpu_open(lc_context *ctx, const lc_context_params *p) { return lc_cpu_tuner_open(ctx, p); }
static void cpu_close(lc_context *ctx) { lc_cpu_tuner_close(ctx); }
static const char *cpu_name(const lc_context *ctx) {
  (void)ctx;
  return "cpu";
}
static const char *cpu_fingerprint(const lc_context *ctx) { return ctx->k->name; }
static lc_status cpu_sync(lc_context *ctx) {
  (void)ctx;
  return LC_OK;
}

static lc_status cpu_buffer_alloc(lc_buffer *t) {
  t->data = lc_malloc(t->bytes ? t->bytes : 1);
  return t->data ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "tensor: cannot allocate %zu bytes", t->bytes);
}
static void cpu_buffer_free(lc_buffer *t) {
  if (!t->sub) lc_free(t->data);
}
static lc_status cpu_buffer_sub(lc_buffer *t, const lc_buffer *parent, size_t off) {
  t->data = (char *)parent->data + off;
  t->sub = 1;
  return LC_OK;
}
static lc_status cpu_upload(lc_buffer *t, size_t off, const void *src, size_t n) {
  memcpy((char *)t->data + off, src, n);
  return LC_OK;
}
static lc_status cpu_download(const lc_buffer *t, size_t off, void *dst, size_t n) {
  memcpy(dst, (const char *)t->data + off, n);
  return LC_OK;
}

static lc_status cpu_conv_run(lc_conv *c, const lc_buffer *in, lc_buffer *out, const lc_buffer *res) {
  return res ? lc_conv_run_residual(c, in->data, res->data, out->data, NULL, 0) : lc_conv_run(c, in->data, out->data, NULL, 0);
}

const lc_backend_ops lc_backend_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .device_name = cpu_name,
    .fingerprint = cpu_fingerprint,
    .sync = cpu_sync,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .conv_create = NULL, /* src/conv/op.c is the CPU's conv */
    .conv_free = NULL,
    .conv_prepare = NULL,
    .conv_run = cpu_conv_run,
    .conv_run_host = NULL,
    .conv_weights = NULL,
    .buffer_sub = cpu_buffer_sub,
    /* limits .. span_ms: NULL, the CPU runner calls src/model/ops itself */
};
