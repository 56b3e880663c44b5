/* Operator registry: one lc_op_impl per ONNX op type. The graph layer (graph.c / exec.c) calls
 * infer once per node after loading (shapes are static once inputs are fixed), init once to build
 * per-node state (e.g. a packed lc_conv), then run for every inference. */
#ifndef LC_MODEL_OPS_H
#define LC_MODEL_OPS_H

#include "model/tensor.h"

typedef struct lc_exec_ctx {
  lc_context *lc;            /* threads, workspace budget, kernel table */
  int weight_format;         /* lc_weight_format for Conv / Gemm / MatMul weights (0 = f32) */
  int weight_block;          /* block size for q8/q4 (0 = per output channel) */
  int q4_policy;             /* lc_q4_policy: which layers stay q8 when weight_format is q4 */
  unsigned const_inputs;     /* set before each init: bit i = input i is a constant (weights to pack) */
  void *scratch;             /* shared workspace for this run, scratch_bytes long (may be NULL) */
  size_t scratch_bytes;
  size_t scratch_limit;      /* bytes an op may allocate for itself at run time, 0 = no limit (the
                                plan sets what its memory cap leaves) */
} lc_exec_ctx;

/* What an initialized node holds, for the plan report and for freeing the weights it copied. */
typedef struct lc_op_info {
  const char *route;         /* conv route name or NULL */
  size_t workspace_bytes;    /* shared scratch run needs */
  size_t packed_bytes;       /* weights held in the state */
  unsigned packed_inputs;    /* bit i: input i was copied into the state and run never reads it */
} lc_op_info;

/* --weights q4 precision policy: layers that lose most under q4 stay q8 (docs/onnx.md). */
typedef enum lc_q4_policy {
  LC_Q4_MIXED = 0,     /* default: first conv, small-K and 1x1 convs and Gemm/MatMul q8, clip search */
  LC_Q4_ALL = 1        /* every layer q4 */
} lc_q4_policy;

typedef struct lc_op_impl {
  const char *op_type;
  /* Output dtypes and dims from the inputs. in[i]->data is non-NULL only for constant inputs
   * (initializers or folded values); ops that need a value (Reshape's shape, Slice's starts...)
   * fail with LC_ERR_UNSUPPORTED naming the node when it is not constant. An absent optional
   * input is NULL. */
  lc_status (*infer)(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out);
  /* Optional: build per-node state once shapes are known (weights packed, routes chosen). */
  lc_status (*init)(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                    lc_exec_ctx *x, void **state);
  void (*fini)(void *state);
  /* Compute. out[i]->data is allocated by the caller with out[i]->nbytes from infer. */
  lc_status (*run)(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                   int n_out, lc_exec_ctx *x);
  /* Optional: 1 if output 0 may share the buffer of input 0 (elementwise in place). */
  int inplace_ok;
  /* Optional: fills info from an initialized state. */
  void (*describe)(const void *state, lc_op_info *info);
} lc_op_impl;

/* NULL if the op is not supported. */
const lc_op_impl *lc_op_find(const char *op_type);
/* NULL-terminated list of supported op types (for `lowconv info` and tests). */
const char *const *lc_op_supported(void);

#endif
