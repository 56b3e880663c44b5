/* lowconv model API: run an ONNX CNN from C.
 *
 * Life of a network:
 *   lc_net_options_init  defaults (1 thread, fp32 weights, no budget, device "cpu")
 *   lc_net_load          parses the file (or lc_net_load_memory a buffer); nothing planned yet
 *   lc_net_input_info    names, element types and shapes; symbolic dims are -1, with their names
 *   lc_net_set_input_shape  fixes symbolic dims (or give them in lc_net_options.shapes)
 *   lc_net_prepare       shape inference, folding, fusion, memory plan, weights packed
 *   lc_net_run           inputs and outputs in caller buffers, by name or index; as often as needed
 *   lc_net_layer         per-layer profile of the last run
 *   lc_net_free
 * Every function that can fail returns an lc_status; lc_last_error() says what was wrong.
 * A network is not thread-safe: one thread at a time per lc_net.
 */
#ifndef LOWCONV_MODEL_H
#define LOWCONV_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LC_NET_MAX_DIMS 8

/* Element types, numbered as ONNX numbers them. */
typedef enum lc_elem_type {
  LC_ELEM_FLOAT32 = 1,
  LC_ELEM_UINT8 = 2,
  LC_ELEM_INT8 = 3,
  LC_ELEM_INT32 = 6,
  LC_ELEM_INT64 = 7,
  LC_ELEM_BOOL = 9,
  LC_ELEM_FLOAT16 = 10,
  LC_ELEM_FLOAT64 = 11
} lc_elem_type;

/* "float32", "int64", ...; "unknown" for other numbers. */
LC_API const char *lc_elem_type_name(int type);

/* With LC_WEIGHTS_Q4: each layer's precision (docs/quantization.md, "q4 at load"). */
typedef enum lc_q4_layer_policy {
  LC_Q4_POLICY_MIXED = 0, /* quick rule: first conv, small-K and 1x1 convs and Gemm/MatMul stay q8 */
  LC_Q4_POLICY_ALL = 1,   /* every layer q4 */
  LC_Q4_POLICY_PLAN = 2   /* default: `lowconv quantize`'s per-layer choice and rounding, made at the first
                             load of a model file (Python with the lowconv package; minutes) and kept in
                             the cache directory; the quick rule where it cannot be made or with
                             LOWCONV_Q4_FAST=1. A quantized file loads as it is. */
} lc_q4_layer_policy;

/* A shape for one input, e.g. {"x", 4, {1, 3, 640, 640}}. */
typedef struct lc_net_shape {
  const char *name;
  int ndim;
  int64_t dims[LC_NET_MAX_DIMS];
} lc_net_shape;

/* LC_NET_LAYOUT_AUTO (default): fp32 convs that feed each other run NHWC where the estimated gain
 * beats converting at the group's border (ResNets: 7-10 % faster on a Xeon); NCHW: none; NHWC:
 * every fp32 conv that can. Tensors seen by the caller are NCHW whatever the choice. */
typedef enum lc_net_layout { LC_NET_LAYOUT_AUTO = 0, LC_NET_LAYOUT_NCHW = 1, LC_NET_LAYOUT_NHWC = 2 } lc_net_layout;

typedef struct lc_net_options {
  int threads;                     /* 0 or 1 = one thread */
  size_t workspace_budget;         /* bytes of scratch any one conv may use; 0 = unlimited */
  lc_weight_format weight_format;  /* storage of Conv/Gemm/MatMul weights (default LC_WEIGHTS_F32) */
  int weight_block;                /* q8/q4 block of input channels: 16..256, 0 = per output channel */
  lc_q4_layer_policy q4_policy;    /* with LC_WEIGHTS_Q4 */
  size_t max_memory;               /* memory cap of the plan (folded constants, activation arena,
                                      scratch, packed weights), checked before allocating; 0 = a
                                      quarter of physical memory, SIZE_MAX = no cap */
  int no_fusion;                   /* 1 = keep BatchNormalization / activations / Add as separate nodes */
  const char *device;              /* backend that runs the net: NULL or "cpu" (the only one built today) */
  const lc_net_shape *shapes;      /* input shape overrides (symbolic dims), applied at load; copied */
  int n_shapes;
  lc_net_layout layout;            /* CPU: which fp32 convs run with channels last (NHWC) */
} lc_net_options;

LC_API void lc_net_options_init(lc_net_options *o);

typedef struct lc_net lc_net;

/* Loads a model (options may be NULL: defaults). The options are copied. */
LC_API lc_status lc_net_load(const char *path, const lc_net_options *o, lc_net **out);
/* The same from a buffer holding the file's bytes; the buffer is not needed after the call. */
LC_API lc_status lc_net_load_memory(const void *data, size_t size, const lc_net_options *o, lc_net **out);
LC_API void lc_net_free(lc_net *net);
/* How the weights' precision was chosen at load: "" unless LC_WEIGHTS_Q4 with LC_Q4_POLICY_PLAN,
 * else e.g. "plan (cached): 47 layers (f32 5, q4 4, q8 38), weights 0.255x fp32, cosine 0.99930"
 * or "quick rule (LOWCONV_Q4_FAST)". Owned by the network. */
LC_API const char *lc_net_weights_plan(const lc_net *net);

/* One graph input or output. Before lc_net_prepare, dims are as declared: -1 where symbolic (its
 * name in dim_names[d]) or unknown; after it, every dim is fixed. Outputs have ndim -1 (unknown)
 * before prepare. dim_names keep reporting which input dims were symbolic. Strings are owned by
 * the network. */
typedef struct lc_net_io {
  const char *name;
  lc_elem_type type;
  int ndim;
  int64_t dims[LC_NET_MAX_DIMS];
  const char *dim_names[LC_NET_MAX_DIMS]; /* symbolic dim names (inputs), NULL where fixed */
  size_t bytes;                           /* after prepare: size of the tensor; 0 before */
} lc_net_io;

LC_API int lc_net_n_inputs(const lc_net *net);
LC_API int lc_net_n_outputs(const lc_net *net);
LC_API lc_status lc_net_input_info(const lc_net *net, int i, lc_net_io *io);
LC_API lc_status lc_net_output_info(const lc_net *net, int i, lc_net_io *io);
/* Index of the input/output with that name, or -1 (the error message lists the valid names). */
LC_API int lc_net_input_index(const lc_net *net, const char *name);
LC_API int lc_net_output_index(const lc_net *net, const char *name);

/* Fixes an input's shape (declared dims must match; symbolic ones take the value). Before prepare. */
LC_API lc_status lc_net_set_input_shape(lc_net *net, const char *name, int ndim, const int64_t *dims);
/* Plans the network for the input shapes: every symbolic dim except a leading batch dim (which
 * defaults to 1) must be fixed. Once only; lc_net_run calls it if the caller did not. */
LC_API lc_status lc_net_prepare(lc_net *net);

/* A caller buffer for one input or output: by name, or by index when name is NULL. Data is in the
 * element type and shape lc_net_io reports, C order; bytes is the buffer's size. */
typedef struct lc_net_buffer {
  const char *name;
  int index;
  void *data;
  size_t bytes;
} lc_net_buffer;

/* Runs the network. Every input must be given once (bytes equal to lc_net_io.bytes); outputs are
 * copied into the buffers given (bytes at least lc_net_io.bytes), any subset, possibly none. */
LC_API lc_status lc_net_run(lc_net *net, const lc_net_buffer *inputs, int n_inputs, lc_net_buffer *outputs,
                            int n_outputs);
/* Output i of the last run without a copy, valid until the next run or free; NULL before a run. */
LC_API const void *lc_net_output_data(const lc_net *net, int i);

/* One executed node after prepare: what it computes and, after a run, how long it took. */
typedef struct lc_net_layer_info {
  const char *name, *op_type;
  const char *route;    /* conv route ("winograd", ...), "" for other ops */
  char fused[48];       /* ops fused into it, e.g. "bn+add+relu", or "" */
  int ndim;
  int64_t dims[LC_NET_MAX_DIMS]; /* output 0 */
  double ms;            /* last run */
  double flops;         /* multiply-adds count 2 */
  size_t workspace_bytes;
} lc_net_layer_info;

LC_API int lc_net_n_layers(const lc_net *net);
LC_API lc_status lc_net_layer(const lc_net *net, int i, lc_net_layer_info *info);

/* Memory of a prepared network. */
typedef struct lc_net_memory_info {
  size_t weight_bytes;        /* constants the planned nodes read */
  size_t packed_weight_bytes; /* packed conv weights (quantized size with q8/q4) */
  size_t activation_bytes;    /* the one activation arena */
  size_t scratch_bytes;       /* shared conv workspace */
} lc_net_memory_info;

LC_API lc_status lc_net_memory(const lc_net *net, lc_net_memory_info *info);

#ifdef __cplusplus
}
#endif
#endif
