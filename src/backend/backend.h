/* The backend interface: what a compute device offers lowconv. The CPU is the first
 * implementation (backend_cpu.c: tensors in host memory, convs through src/conv); OpenCL the
 * second (opencl/cl_backend.c). docs/backends.md says how a backend plugs in. */
#ifndef LC_BACKEND_H
#define LC_BACKEND_H

#include "lowconv.h"

struct lc_conv;
struct lc_node;
struct lc_tensor;
struct lc_exec_ctx;

struct lc_buffer {
  lc_context *ctx;
  size_t bytes;
  void *data;          /* CPU: host memory; OpenCL: a cl_mem */
  int sub;             /* a view into another buffer (buffer_sub): freeing leaves the parent's memory */
};

/* What the model runner needs to lay out its activation arena on a device. */
typedef struct lc_backend_limits {
  size_t global_mem;   /* device memory in all */
  size_t max_alloc;    /* the largest single buffer */
  size_t base_align;   /* the alignment of a sub-buffer's offset, bytes */
} lc_backend_limits;

/* One model node on the device (backend-private). */
typedef struct lc_backend_op lc_backend_op;

typedef struct lc_backend_op_info {
  const char *route;       /* "ew", "copy", "conv gemv ...", "resize", "view" ... */
  char kernel[64];         /* the kernel (conv: family and variant) */
  int launches;            /* kernels per run (0: a view, nothing to do when in place) */
  size_t device_bytes;     /* weights, constants and tables the op holds on the device */
  unsigned packed_inputs;  /* bit i: input i was copied to the device at create */
  double tune_ms;          /* conv tuning at create */
} lc_backend_op_info;

/* Profiling marks of one enqueued op (its first and last command), read after sync. */
typedef struct lc_backend_span {
  void *first, *last;
} lc_backend_span;

typedef struct lc_backend_ops {
  const char *name;    /* "cpu", "opencl" */
  /* Context: opens the device named by the params (sets ctx->dev); frees it. */
  lc_status (*open)(lc_context *ctx, const lc_context_params *p);
  void (*close)(lc_context *ctx);
  const char *(*device_name)(const lc_context *ctx);
  const char *(*fingerprint)(const lc_context *ctx);
  lc_status (*sync)(lc_context *ctx);
  lc_status (*flush)(lc_context *ctx); /* may be NULL: hands queued work to the device, waits for nothing */
  long (*launches)(lc_context *ctx);   /* may be NULL: kernels enqueued so far */
  /* Tensors: t->ctx and t->bytes are set; alloc sets t->data. */
  lc_status (*buffer_alloc)(lc_buffer *t);
  void (*buffer_free)(lc_buffer *t);
  lc_status (*upload)(lc_buffer *t, size_t offset, const void *src, size_t bytes);
  lc_status (*download)(const lc_buffer *t, size_t offset, void *dst, size_t bytes);
  /* Convs: create fills a zeroed lc_conv whose ctx, d (copy, pointers cleared), cin_g, cout_g,
   * taps, K and depthwise are set; the weights and bias come from desc. */
  lc_status (*conv_create)(struct lc_conv *c, const lc_conv_desc *desc);
  void (*conv_free)(struct lc_conv *c);
  lc_status (*conv_prepare)(struct lc_conv *c, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape);
  /* in/out/res (res may be NULL) are tensors of this backend, sized for the prepared shape. */
  lc_status (*conv_run)(struct lc_conv *c, const lc_buffer *in, lc_buffer *out, const lc_buffer *res);
  /* lc_conv_run on host pointers: the device backend uploads, runs and downloads. */
  lc_status (*conv_run_host)(struct lc_conv *c, const float *in, float *out);
  /* The weights as computed with, OIHW fp32 (lc_conv_get_weights). */
  lc_status (*conv_weights)(const struct lc_conv *c, float *oihw);

  /* ---- The model runner on a device (src/model/exec_device.c); NULL on the CPU, whose
   * runner calls the ops of src/model/ops directly. ---- */
  lc_status (*limits)(const lc_context *ctx, lc_backend_limits *out);
  /* Back-to-back launch latency (µs), measured once per device (the profile's launch floor). */
  lc_status (*launch_us)(lc_context *ctx, double *us);
  /* Time spent compiling or loading device programs since the context opened (ms). */
  double (*compile_ms)(const lc_context *ctx);
  /* A view of bytes t->bytes at offset of parent (offset a multiple of base_align); t->ctx set. */
  lc_status (*buffer_sub)(lc_buffer *t, const lc_buffer *parent, size_t offset);
  /* May be NULL: host memory the device reads and writes by DMA (pinned), for the model's inputs
   * and outputs; freed with host_free after a sync. LC_ERR_UNSUPPORTED: use ordinary memory. */
  lc_status (*host_alloc)(lc_context *ctx, size_t bytes, void **ptr, void **handle);
  void (*host_free)(lc_context *ctx, void *ptr, void *handle);
  /* Queued copies between host memory and a buffer: done (and src/dst free again) at sync. */
  lc_status (*upload_async)(lc_buffer *t, size_t offset, const void *src, size_t bytes);
  lc_status (*download_async)(const lc_buffer *t, size_t offset, void *dst, size_t bytes);
  /* The device version of one planned node, dispatched by n->op_type: elementwise (unary,
   * binary with broadcasting, BatchNormalization and PRelu as per-channel affines), data
   * movement (reshape-likes as views, Concat, Split, Slice, Transpose, Expand, Pad, Gather,
   * Cast), Resize in every CPU mode, pools and reductions, Softmax, and the matrix ops (Conv
   * with fused bias/BN/activation/residual/PRelu/per-channel affine, ConvTranspose, Gemm, MatMul;
   * quantized weights as x->weight_format says). in/out describe the node's tensors (shapes,
   * dtypes); const_mask bit i: in[i] is a constant whose data is read now and never again.
   * LC_ERR_UNSUPPORTED (with the reason in lc_last_error) when the device has no version: the
   * runner then runs the node on the CPU. */
  lc_status (*op_create)(lc_context *ctx, const struct lc_node *n, const struct lc_tensor *const *in, int n_in,
                         const struct lc_tensor *out, int n_out, const struct lc_exec_ctx *x, unsigned const_mask,
                         lc_backend_op **op);
  /* Queues the op's kernels (no wait). in[i]/out[i]: buffers of the node's inputs and outputs
   * (NULL for constants and absent ones). span (may be NULL): profiling marks, read by span_ms. */
  lc_status (*op_enqueue)(lc_backend_op *op, const lc_buffer *const *in, const lc_buffer *const *out,
                          lc_backend_span *span);
  void (*op_describe)(const lc_backend_op *op, lc_backend_op_info *info);
  void (*op_free)(lc_backend_op *op);
  /* After sync: ms[i] (may be NULL) the device time of span i (0 for an empty one), *total the
   * time from the earliest start to the latest end; releases every span, also on failure. */
  lc_status (*span_ms)(lc_context *ctx, lc_backend_span *spans, int n, double *ms, double *total);
  /* May be NULL. A plan's collect pass: between begin and end, op_create (and conv create /
   * prepare) only lists the programs the op's kernels, and the candidates its tuning would time,
   * need; the op is then freed. end starts building every listed program in the background
   * (a program still building is waited for where it is used); join waits for them all. */
  void (*collect_begin)(lc_context *ctx);
  lc_status (*collect_end)(lc_context *ctx);
  lc_status (*collect_join)(lc_context *ctx);
  /* May be NULL. collect_node: what the pass lists until the next call is node `tag`'s;
   * node_ready: 1 when none of node tag's programs is still building (its init waits for none);
   * with tag -1 it waits for the next build to finish instead (0 at once when none is running). */
  void (*collect_node)(lc_context *ctx, int tag);
  int (*node_ready)(lc_context *ctx, int tag);
  /* May be NULL. The host's share of op_create done while the device still opens (a context of
   * lc_context_create_async before lc_context_wait; nothing of the device is touched):
   * stage_node notes the weights node `tag`'s op will pack (1: noted; the notes hold at most
   * `limit` bytes in all), stage_run packs every noted one on a few threads, and op_create of that
   * node copies them instead of packing again; stage_drop frees tag's leftovers (-1: all). */
  int (*stage_node)(lc_context *ctx, const struct lc_node *n, const struct lc_tensor *const *in, int n_in,
                    const struct lc_exec_ctx *x, unsigned const_mask, int tag, size_t limit);
  lc_status (*stage_run)(lc_context *ctx);
  void (*stage_drop)(lc_context *ctx, int tag);
} lc_backend_ops;

extern const lc_backend_ops lc_backend_cpu;
#if LC_HAVE_OPENCL
extern const lc_backend_ops lc_backend_opencl;
#endif

/* The backend of a context (never NULL). */
const lc_backend_ops *lc_context_backend_ops(const lc_context *ctx);

#endif
