/* The backend interface: what a compute device offers lowconv. The CPU is the first
 * implementation (backend_cpu.c: tensors in host memory, convs through src/conv); OpenCL the
 * second (opencl/cl_backend.c). docs/backends.md says how a backend plugs in. */
#ifndef LC_BACKEND_H
#define LC_BACKEND_H

#include "lowconv.h"

struct lc_conv;

struct lc_tensor {
  lc_context *ctx;
  size_t bytes;
  void *data;          /* CPU: host memory; OpenCL: a cl_mem */
};

typedef struct lc_backend_ops {
  const char *name;    /* "cpu", "opencl" */
  /* Context: opens the device named by the params (sets ctx->dev); frees it. */
  lc_status (*open)(lc_context *ctx, const lc_context_params *p);
  void (*close)(lc_context *ctx);
  const char *(*device_name)(const lc_context *ctx);
  const char *(*fingerprint)(const lc_context *ctx);
  lc_status (*sync)(lc_context *ctx);
  /* Tensors: t->ctx and t->bytes are set; alloc sets t->data. */
  lc_status (*tensor_alloc)(lc_tensor *t);
  void (*tensor_free)(lc_tensor *t);
  lc_status (*upload)(lc_tensor *t, size_t offset, const void *src, size_t bytes);
  lc_status (*download)(const lc_tensor *t, size_t offset, void *dst, size_t bytes);
  /* Convs: create fills a zeroed lc_conv whose ctx, d (copy, pointers cleared), cin_g, cout_g,
   * taps, K and depthwise are set; the weights and bias come from desc. */
  lc_status (*conv_create)(struct lc_conv *c, const lc_conv_desc *desc);
  void (*conv_free)(struct lc_conv *c);
  lc_status (*conv_prepare)(struct lc_conv *c, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape);
  /* in/out/res (res may be NULL) are tensors of this backend, sized for the prepared shape. */
  lc_status (*conv_run)(struct lc_conv *c, const lc_tensor *in, lc_tensor *out, const lc_tensor *res);
  /* lc_conv_run on host pointers: the device backend uploads, runs and downloads. */
  lc_status (*conv_run_host)(struct lc_conv *c, const float *in, float *out);
  /* The weights as computed with, OIHW fp32 (lc_conv_get_weights). */
  lc_status (*conv_weights)(const struct lc_conv *c, float *oihw);
} lc_backend_ops;

extern const lc_backend_ops lc_backend_cpu;
#if LC_HAVE_OPENCL
extern const lc_backend_ops lc_backend_opencl;
#endif

/* The backend of a context (never NULL). */
const lc_backend_ops *lc_context_backend_ops(const lc_context *ctx);

#endif
