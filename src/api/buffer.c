/* Tensors of a context's device, and convs run on them. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "conv/conv.h"
#include "util/alloc.h"
#include "util/error.h"

lc_status lc_buffer_create(lc_context *ctx, size_t bytes, lc_buffer **out) {
  if (!out) return lc_error(LC_ERR_INVALID_ARG, "tensor: out is NULL");
  *out = NULL;
  if (!ctx) return lc_error(LC_ERR_INVALID_ARG, "tensor: context is NULL");
  lc_buffer *t = lc_calloc(1, sizeof *t);
  if (!t) return lc_error(LC_ERR_NO_MEMORY, "tensor: out of memory");
  t->ctx = ctx;
  t->bytes = bytes;
  lc_status s = ctx->be->buffer_alloc(t);
  if (s) {
    lc_free(t);
    return s;
  }
  *out = t;
  return LC_OK;
}

void lc_buffer_destroy(lc_buffer *t) {
  if (!t) return;
  t->ctx->be->buffer_free(t);
  lc_free(t);
}

size_t lc_buffer_bytes(const lc_buffer *t) { return t ? t->bytes : 0; }

lc_status lc_buffer_upload(lc_buffer *t, const void *src, size_t bytes) {
  if (!t || (!src && bytes)) return lc_error(LC_ERR_INVALID_ARG, "tensor upload: tensor or source is NULL");
  if (bytes > t->bytes) return lc_error(LC_ERR_INVALID_ARG, "tensor upload: %zu bytes into a tensor of %zu", bytes, t->bytes);
  return bytes ? t->ctx->be->upload(t, 0, src, bytes) : LC_OK;
}

lc_status lc_buffer_download(const lc_buffer *t, void *dst, size_t bytes) {
  if (!t || (!dst && bytes)) return lc_error(LC_ERR_INVALID_ARG, "tensor download: tensor or destination is NULL");
  if (bytes > t->bytes) return lc_error(LC_ERR_INVALID_ARG, "tensor download: %zu bytes from a tensor of %zu", bytes, t->bytes);
  return bytes ? t->ctx->be->download(t, 0, dst, bytes) : LC_OK;
}

/* Bytes of the prepared input and output (checked at prepare). */
static void io_bytes(const lc_conv *c, size_t *in, size_t *out) {
  const lc_conv_plan *p = &c->plan;
  *in = (size_t)(p->n * c->d.in_channels) * p->ihw * sizeof(float);
  *out = (size_t)(p->n * c->d.out_channels) * p->ohw * sizeof(float);
}

lc_status lc_conv_run_buffers(lc_conv *c, const lc_buffer *in, lc_buffer *out, const lc_buffer *res) {
  if (!c || !in || !out) return lc_error(LC_ERR_INVALID_ARG, "conv: operator, input or output tensor is NULL");
  if (!c->prepared) return lc_error(LC_ERR_STATE, "conv: run called before a successful prepare");
  if (in->ctx != c->ctx || out->ctx != c->ctx || (res && res->ctx != c->ctx))
    return lc_error(LC_ERR_INVALID_ARG, "conv: tensors belong to another context than the conv");
  size_t ib, ob;
  io_bytes(c, &ib, &ob);
  if (in->bytes < ib || out->bytes < ob || (res && res->bytes < ob))
    return lc_error(LC_ERR_INVALID_ARG, "conv: tensors too small (input %zu of %zu bytes, output %zu of %zu%s)",
                    in->bytes, ib, out->bytes, ob, res && res->bytes < ob ? ", residual too small" : "");
  return c->ctx->be->conv_run(c, in, out, res);
}

lc_status lc_conv_device_info_get(const lc_conv *c, lc_conv_device_info *info) {
  if (!c || !info) return lc_error(LC_ERR_INVALID_ARG, "conv: operator or info is NULL");
  if (!c->prepared) return lc_error(LC_ERR_STATE, "conv: device info needs a successful prepare");
  if (c->dev) {
    *info = c->dev_info;
    return LC_OK;
  }
  *info = c->dev_info; /* the route, and where it came from (conv/autotune.h) */
  info->device_bytes = c->weight_bytes;
  return LC_OK;
}

lc_status lc_conv_run_host(lc_conv *c, const float *in, float *out) { return c->ctx->be->conv_run_host(c, in, out); }
