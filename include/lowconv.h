/* lowconv: fast, low-memory convolution for CNN inference.
 *
 * Life of an operator:
 *   lc_context_create   threads, workspace budget, CPU features (once per app)
 *   lc_conv_create      validates the descriptor and packs the weights (once per layer)
 *   lc_conv_prepare     fixes the input size: output size, route, workspace bytes
 *   lc_conv_run         computes; workspace from the caller or allocated within the budget
 *   lc_conv_destroy
 * Every function that can fail returns an lc_status; lc_last_error() gives a message
 * naming what was wrong. The library never aborts or exits.
 */
#ifndef LOWCONV_H
#define LOWCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API: the shared library is built with hidden visibility and exports only these. */
#ifndef LC_API
#if defined(__GNUC__) || defined(__clang__)
#define LC_API __attribute__((visibility("default")))
#else
#define LC_API
#endif
#endif

#define LOWCONV_VERSION_MAJOR 0
#define LOWCONV_VERSION_MINOR 1
#define LOWCONV_VERSION_PATCH 0

typedef enum lc_status {
  LC_OK = 0,
  LC_ERR_INVALID_ARG = 1, /* null pointer, zero/negative size, inconsistent descriptor */
  LC_ERR_OVERFLOW = 2,    /* a size product does not fit in size_t / int64 */
  LC_ERR_UNSUPPORTED = 3, /* the route asked for cannot run this shape */
  LC_ERR_BUDGET = 4,      /* the route needs more workspace than the budget allows */
  LC_ERR_NO_MEMORY = 5,   /* an allocation failed */
  LC_ERR_STATE = 6,       /* call order violated (run before prepare, ...) */
  LC_ERR_IO = 7,          /* unreadable / malformed file */
  LC_ERR_INTERNAL = 8
} lc_status;

/* Message of the last failing call on this thread ("" if none). Valid until the next call. */
LC_API const char *lc_last_error(void);
LC_API const char *lc_status_name(lc_status s);

/* ---------------------------------------------------------------- context */

/* CPU feature bits, as detected (cpuid + OS register support via xgetbv). */
enum {
  LC_CPU_AVX2_FMA = 1u << 0,
  LC_CPU_AVX512F = 1u << 1, /* with BW, DQ and VL */
  LC_CPU_AVX512VNNI = 1u << 2,
  LC_CPU_AVXVNNI = 1u << 3
};

/* Kernel tables a context may use. AUTO = best the CPU supports. */
typedef enum lc_isa { LC_ISA_AUTO = 0, LC_ISA_SCALAR = 1, LC_ISA_AVX2 = 2, LC_ISA_AVX512 = 3 } lc_isa;

/* Where a context computes. OPENCL: an OpenCL 1.2 device (GPU, or PoCL on the CPU); tensors and
 * packed weights live in device memory (docs/opencl.md). */
typedef enum lc_backend { LC_BACKEND_CPU = 0, LC_BACKEND_OPENCL = 1 } lc_backend;

/* How much a device backend times kernel candidates at prepare (results persist in the tuning
 * cache, so a warm start times nothing). NONE: the heuristic's choice only. */
typedef enum lc_tune_level { LC_TUNE_NONE = 0, LC_TUNE_FAST = 1, LC_TUNE_NORMAL = 2, LC_TUNE_HEAVY = 3 } lc_tune_level;

typedef struct lc_context_params {
  int threads;              /* 0 = 1 thread; the pool holds threads-1 workers */
  size_t workspace_budget;  /* bytes of scratch any one conv may use; 0 = unlimited */
  lc_isa isa;               /* force a kernel table (tests, benchmarks) */
  lc_backend backend;       /* default LC_BACKEND_CPU */
  int cl_platform, cl_device; /* OpenCL indices; -1 = $LOWCONV_OPENCL_DEVICE ("P:D"), else the first
                                 GPU, else the first device */
  const char *cache_dir;    /* program and tuning caches; NULL = $LOWCONV_CACHE_DIR, else
                               $XDG_CACHE_HOME/lowconv, else ~/.cache/lowconv; "" = no disk cache */
  lc_tune_level tune;       /* default LC_TUNE_FAST */
  lc_tune_level cpu_tune;   /* CPU: NONE (default) = the heuristic selector's route; FAST / NORMAL /
                               HEAVY time the routes (x tiles x splits x threads from NORMAL / HEAVY)
                               of every AUTO conv at prepare and keep the fastest in the tuning cache
                               (cache_dir), keyed by CPU, ISA, threads, shape and format: a warm
                               prepare times nothing (docs/caches.md) */
} lc_context_params;

/* Threading contract (CPU backend; an OpenCL context makes no such promise yet: use each one from
 * one thread at a time).
 * - A context may be shared by any number of caller threads. Its pool runs one caller's parallel
 *   region at a time: the others wait for it (a mutex), so sharing never corrupts results, but
 *   callers take turns on the pool's threads. For callers that must run at the same time, give each
 *   its own context. A task that calls back into the same pool runs its work inline.
 * - An lc_conv belongs to its creator's context and may be run by several threads at once (run only
 *   reads the operator; workspace NULL allocates per call, or pass one workspace per thread).
 *   create, prepare, release_unused and destroy of one operator must not overlap any other call
 *   on that operator.
 * - lc_context_destroy only after every operator of the context is destroyed and no call on it
 *   is in flight. lc_last_error() is per thread. */
typedef struct lc_context lc_context;

LC_API void lc_context_params_init(lc_context_params *p);
LC_API lc_status lc_context_create(const lc_context_params *p, lc_context **out);
LC_API void lc_context_destroy(lc_context *ctx);
LC_API unsigned lc_context_cpu_features(const lc_context *ctx);
/* Name of the kernel table in use: "scalar", "avx2", "avx512". */
LC_API const char *lc_context_isa_name(const lc_context *ctx);
LC_API int lc_context_threads(const lc_context *ctx);
/* Parses a device name into the params: "cpu", "opencl", "opencl:P" or "opencl:P:D". */
LC_API lc_status lc_device_parse(const char *spec, lc_context_params *p);
LC_API lc_backend lc_context_backend(const lc_context *ctx);
/* "cpu", or the OpenCL device's name. */
LC_API const char *lc_context_device_name(const lc_context *ctx);
/* What identifies the device for caches: platform, device, driver and OpenCL C versions, compute
 * units and a hash of the extensions (OpenCL), or the CPU's ISA (CPU). */
LC_API const char *lc_context_fingerprint(const lc_context *ctx);
/* Waits until everything enqueued on the context's device is done. */
LC_API lc_status lc_context_sync(lc_context *ctx);

/* ---------------------------------------------------------------- device buffers */

/* Tensors in the memory of the context's device (host memory for the CPU), as plain bytes (float
 * NCHW or NHWC, as the conv says). Convs read and write them with
 * lc_conv_run_buffers; nothing is copied between layers. */
typedef struct lc_buffer lc_buffer;
LC_API lc_status lc_buffer_create(lc_context *ctx, size_t bytes, lc_buffer **out);
LC_API lc_status lc_buffer_upload(lc_buffer *t, const void *src, size_t bytes);
LC_API lc_status lc_buffer_download(const lc_buffer *t, void *dst, size_t bytes);
LC_API size_t lc_buffer_bytes(const lc_buffer *t);
LC_API void lc_buffer_destroy(lc_buffer *t);

/* ---------------------------------------------------------------- conv */

typedef enum lc_layout { LC_NCHW = 0, LC_NHWC = 1 } lc_layout;

/* ONNX auto_pad. NOTSET uses the explicit pads. */
typedef enum lc_auto_pad {
  LC_PAD_NOTSET = 0,
  LC_PAD_VALID = 1,
  LC_PAD_SAME_UPPER = 2,
  LC_PAD_SAME_LOWER = 3
} lc_auto_pad;

typedef enum lc_activation {
  LC_ACT_NONE = 0,
  LC_ACT_RELU = 1,
  LC_ACT_CLIP = 2,      /* min(max(x, act_min), act_max) */
  LC_ACT_LEAKY_RELU = 3,/* x < 0 ? act_alpha * x : x */
  LC_ACT_HARD_SWISH = 4,/* x * clamp(x / 6 + 0.5, 0, 1) (ONNX HardSwish) */
  LC_ACT_PRELU = 5      /* x < 0 ? act_slopes[o] * x : x, a slope per output channel o (ONNX PRelu) */
} lc_activation;

typedef enum lc_route {
  LC_ROUTE_AUTO = 0,
  LC_ROUTE_DIRECT = 1,
  LC_ROUTE_GEMM1X1 = 2,
  LC_ROUTE_IM2COL = 3,
  LC_ROUTE_IGEMM = 4,
  LC_ROUTE_DEPTHWISE = 5,
  LC_ROUTE_WINOGRAD = 6, /* 3x3 stride 1 dilation 1: Winograd F(2x2, 3x3), 2.25x fewer multiplies */
  LC_ROUTE_WINOGRAD4 = 7, /* the same with F(4x4, 3x3), 4x fewer; fp32 kernels of 3a x 3b (6x6, 9x9) too */
  LC_ROUTE_STEM = 8,      /* NCHW, <= 4 input channels (the RGB stem): a direct kernel over input rows */
  LC_ROUTE_I8GEMM = 9,    /* Q8/Q4 NCHW with int8_activations: integer dot products over int8 patches */
  LC_ROUTE_TAPROWS = 10   /* NCHW: B rows (tap, channel) gathered by whole output rows, read in place */
} lc_route;
#define LC_ROUTE_COUNT 11

/* Route name as used by the CLI ("direct", "gemm1x1", ...); lc_route_from_name returns -1 if unknown. */
LC_API const char *lc_route_name(lc_route r);
LC_API int lc_route_from_name(const char *name);

/* Weight storage. Q8/Q4 are block-quantized along the input channels (docs/quantization.md). */
typedef enum lc_weight_format { LC_WEIGHTS_F32 = 0, LC_WEIGHTS_Q8 = 1, LC_WEIGHTS_Q4 = 2 } lc_weight_format;

/* A 2-D convolution. Weights are OIHW: [out_channels][in_channels/groups][kernel_h][kernel_w]. */
typedef struct lc_conv_desc {
  int64_t in_channels, out_channels, groups;
  int64_t kernel_h, kernel_w;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  lc_auto_pad auto_pad;
  lc_layout layout;        /* input and output tensors: NCHW or NHWC */
  const float *weights;    /* OIHW, copied (packed) at create */
  const float *bias;       /* out_channels values or NULL */
  lc_activation activation;
  float act_min, act_max;  /* LC_ACT_CLIP */
  float act_alpha;         /* LC_ACT_LEAKY_RELU */
  lc_route route;          /* LC_ROUTE_AUTO lets the selector choose */
  lc_weight_format weight_format; /* storage of the packed weights (quantized from `weights`) */
  int block_size;          /* Q8/Q4: 16, 32, 64, 128, 256, or 0 = one block per output channel */
  int asym;                /* Q8/Q4: 1 = scale and offset per block, 0 = symmetric (scale only) */
  int int8_activations;    /* Q8/Q4: 1 = quantize the activations to int8 per block and use integer dot
                              products (faster): the GEMV path (1x1 conv on few pixels, fully connected)
                              and the i8gemm route (NCHW; env LOWCONV_INT8_ACT=1/0 forces it on/off);
                              0 = float activations, weights dequantized in registers (accurate, default) */
  /* Weights quantized elsewhere (Q8/Q4; `weights` may then be NULL): signed codes, one int8 per
   * weight (q4 in [-8, 7]), ordered [out_channel][ky][kx][in_channel / groups]; scales (and offsets
   * when asym) per (out_channel, block), out_channels * lc_conv_quant_blocks() values each;
   * a weight is code * scale + offset. Copied at create, never turned into floats. */
  const int8_t *q_codes;
  const float *q_scales;
  const float *q_offsets;
  /* After the activation: y = y * post_mul + post_add (defaults 1 and 0: none), one rounding each,
   * fused in the output pass (Paddle's learnable affine after HardSwish). CPU only: a device
   * context's lc_conv_create returns LC_ERR_UNSUPPORTED for another value. Finite values. */
  float post_mul, post_add;
  /* LC_ACT_PRELU: out_channels finite slopes, copied at create (NULL otherwise). CPU only, like
   * post_mul; the Winograd routes and the stem apply it in their output pass, the others in a pass
   * after the conv. */
  const float *act_slopes;
  /* The value of the padding pixels, one per input channel (NULL: 0), copied at create: a
   * per-channel affine y = x * s + t before the conv (BatchNormalization) folds into its weights and
   * bias exactly when the padding reads -t / s. CPU only; the routes winograd, winograd4 and direct
   * take it (the others' plans return LC_ERR_UNSUPPORTED, AUTO skips them). Finite values. */
  const float *pad_values;
} lc_conv_desc;

/* Quantization blocks per output channel for this descriptor's weight format and block size
 * (blocks of block_size input channels at one kernel tap; docs/quantization.md); 0 if invalid. */
LC_API size_t lc_conv_quant_blocks(const lc_conv_desc *d);

/* Fills defaults: groups/strides/dilations 1, pads 0, NCHW, no bias, no activation, auto route. */
LC_API void lc_conv_desc_init(lc_conv_desc *d);

typedef struct lc_conv lc_conv;

typedef struct lc_conv_shape {
  int64_t batch, in_h, in_w;    /* what prepare was given */
  int64_t out_h, out_w;
  lc_route route;               /* route chosen */
  size_t workspace_bytes;       /* scratch run needs (<= budget) */
} lc_conv_shape;

LC_API lc_status lc_conv_create(lc_context *ctx, const lc_conv_desc *desc, lc_conv **out);
/* Computes output size, picks the route and the workspace size for this input size. */
LC_API lc_status lc_conv_prepare(lc_conv *conv, int64_t batch, int64_t in_h, int64_t in_w, lc_conv_shape *shape);
/* input/output in the descriptor's layout. workspace: NULL lets the library allocate
 * shape.workspace_bytes (within the budget) for this call; otherwise at least that many bytes,
 * 64-byte alignment recommended. */
LC_API lc_status lc_conv_run(lc_conv *conv, const float *input, float *output, void *workspace, size_t workspace_size);
/* The same with output = post(act(conv(input) + bias + residual)): residual has the output's shape
 * and layout and may not overlap the output. The Winograd and taprows routes add it as they store
 * the output; the others in a pass after the conv. CPU contexts only. */
LC_API lc_status lc_conv_run_residual(lc_conv *conv, const float *input, const float *residual, float *output,
                                      void *workspace, size_t workspace_size);
LC_API void lc_conv_destroy(lc_conv *conv);
/* Runs on buffers of the conv's context: output = act(conv(input) + bias + residual). residual
 * (NULL = none) has the output's shape and is another buffer than the output. No workspace
 * argument: device workspace is allocated at prepare, within the budget. */
LC_API lc_status lc_conv_run_buffers(lc_conv *conv, const lc_buffer *input, lc_buffer *output,
                                     const lc_buffer *residual);

/* What a device backend chose at prepare (kernel family and tile variant, local size, where the
 * choice came from) and what it cost. CPU convs report the route as the kernel. */
typedef struct lc_conv_device_info {
  char kernel[64];          /* "gemm 64x64", "direct c4h1w2", ... */
  size_t local_size[3];     /* 0 = the driver's choice */
  int from_cache;           /* 1: the tuning cache gave the choice (no timing done) */
  int candidates;           /* candidates timed at prepare */
  double tune_ms;           /* time spent timing candidates at prepare */
  double compile_ms;        /* program builds / loads at create and prepare */
  int programs_built;       /* programs compiled from source at prepare (0 on a warm cache) */
  double kernel_ms;         /* device time of the chosen candidate when timed (0 if not) */
  size_t device_bytes;      /* weights on the device + the conv's device workspace */
} lc_conv_device_info;
LC_API lc_status lc_conv_device_info_get(const lc_conv *conv, lc_conv_device_info *info);
/* After a prepare, frees the weight representations the chosen route doesn't read (e.g. the
 * im2col panels of a conv that runs Winograd, or the Winograd weights of one that doesn't), for
 * callers that prepare once (model runners). A later prepare that needs them fails with
 * LC_ERR_UNSUPPORTED (explicit route) or picks among the routes still possible (AUTO). */
LC_API lc_status lc_conv_release_unused(lc_conv *conv);
/* Bytes held by the operator for packed weights and bias. */
LC_API size_t lc_conv_weight_bytes(const lc_conv *conv);
/* The weights as the operator computes with them, OIHW fp32 (for Q8/Q4: the dequantized values),
 * so a reference run on them gives the exact expected result. oihw holds out*in/groups*kh*kw floats. */
LC_API lc_status lc_conv_get_weights(const lc_conv *conv, float *oihw);

/* Output size along one dimension under ONNX rules, or -1 if invalid (pads resolved by auto_pad). */
LC_API int64_t lc_conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                                int64_t pad_end);

/* ---------------------------------------------------------------- reference */

/* The plain reference convolution (fp64 accumulation, no packing, no threads) that every route is
 * tested against. Same descriptor and layouts as lc_conv; output is out_h x out_w as resolved
 * by the descriptor's pads / auto_pad. */
LC_API lc_status lc_conv_reference(const lc_conv_desc *desc, int64_t batch, int64_t in_h, int64_t in_w,
                                   const float *input, float *output);

/* Resolves auto_pad into explicit pads for this input size (writes pads[4] = top, left, bottom, right)
 * and the output size. */
LC_API lc_status lc_conv_resolve_pads(const lc_conv_desc *desc, int64_t in_h, int64_t in_w, int64_t pads[4],
                                      int64_t *out_h, int64_t *out_w);

/* ---------------------------------------------------------------- allocation accounting */

/* Bytes currently allocated by the library and the high-water mark since the last reset,
 * counted over every allocation lowconv makes (tests use it to check budgets). */
LC_API size_t lc_alloc_current_bytes(void);
LC_API size_t lc_alloc_peak_bytes(void);
LC_API void lc_alloc_reset_peak(void);
/* Fail the n-th allocation from now (1 = next), 0 = off: tests of out-of-memory paths. */
LC_API void lc_alloc_fail_after(long n);

#ifdef __cplusplus
}
#endif
#endif
