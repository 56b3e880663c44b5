/* Running an ONNX CNN: load, fix input shapes, plan (shape inference, constant folding, fusion,
 * one-arena memory plan, operator init), then run as often as needed. Used by the CLI. */
#ifndef LC_MODEL_MODEL_H
#define LC_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lowconv.h"
#include "model/tensor.h"

typedef struct lc_model lc_model;

typedef struct lc_model_options {
  int threads;                 /* 0 = 1; ignored when context is given */
  lc_context *context;         /* run on this context (may be shared: include/lowconv.h); NULL = the
                                  model makes its own from threads and workspace_budget */
  int weight_format;           /* lc_weight_format for Conv weights */
  int weight_block;            /* q8/q4 block size, 0 = per output channel */
  int q4_policy;               /* lc_q4_policy (model/ops.h): 0 = every layer q4 */
  size_t workspace_budget;     /* per-conv scratch limit, 0 = unlimited */
  size_t max_memory_bytes;     /* memory cap of the plan: folded constants, activation arena, shared
                                  scratch and packed weights together; 0 = the default cap
                                  (lc_model_default_memory_cap), SIZE_MAX = no cap */
  int no_fusion;               /* keep BatchNormalization / activations / Add as separate nodes */
  int dry_run;                 /* shapes, folding, fusion and memory plan only: no op init, no arena */
  const char *device;          /* NULL or "cpu"; "opencl[:P[:D]]": activations and ops on that device */
  int device_tune;             /* lc_tune_level of device convs; -1 = the context's default (fast); > 0 also
                                  tunes the CPU convs' routes (lc_context_params.cpu_tune) */
  int device_profile;          /* device plan: time every node from profiling events (layer ms) */
  int layout;                  /* lc_model_layout: which convs of a CPU plan run NHWC (0 = auto) */
  int device_no_io;            /* device plan: runs after the first leave the input and outputs on the
                                  device (bench --no-io: the kernels alone, as a peer's graph replay on
                                  device-resident tensors is timed) */
} lc_model_options;

/* LC_LAYOUT_AUTO: fp32 convs run NHWC in groups where layout.c's estimate says it pays for the
 * conversions at the group's border; NCHW: none; NHWC: every fp32 conv that can. */
typedef enum lc_model_layout { LC_LAYOUT_AUTO = 0, LC_LAYOUT_NCHW = 1, LC_LAYOUT_NHWC = 2 } lc_model_layout;

void lc_model_options_init(lc_model_options *o);

/* Default memory cap: physical memory / LC_MODEL_MEMORY_DIVISOR (sysconf), or the fallback when
 * the OS does not say. Sizes are charged when they become known, before they are allocated;
 * a plan that would pass the cap fails with LC_ERR_BUDGET naming the node and the bytes. */
#define LC_MODEL_MEMORY_DIVISOR 4
#define LC_MODEL_MEMORY_FALLBACK ((size_t)4 << 30)
size_t lc_model_default_memory_cap(void);
/* Opsets of the default domain a model may declare (docs/operators.md); others are refused. */
#define LC_OPSET_MIN 6
#define LC_OPSET_MAX 28

lc_status lc_model_load(const char *path, lc_model **out);
lc_status lc_model_load_buffer(const void *buf, size_t len, lc_model **out);
void lc_model_free(lc_model *m);

/* Graph inputs (initializers excluded). Before planning, dims are as declared (-1 = symbolic). */
int lc_model_n_inputs(const lc_model *m);
const lc_tensor *lc_model_input(const lc_model *m, int i);
int lc_model_n_outputs(const lc_model *m);
/* Name of input i's symbolic dim d as declared in the file ("batch", "h"); NULL if fixed. */
const char *lc_model_input_dim_name(const lc_model *m, int i, int d);
/* After lc_model_run, data holds the result (valid until the next run or free). */
const lc_tensor *lc_model_output(const lc_model *m, int i);

/* Overrides an input's shape; call before lc_model_plan. */
lc_status lc_model_set_input_shape(lc_model *m, const char *name, int ndim, const int64_t *dims);
lc_status lc_model_plan(lc_model *m, const lc_model_options *o);

/* Copies src (dtype and dims must match the planned input exactly) into the model. */
lc_status lc_model_set_input(lc_model *m, const char *name, const lc_tensor *src);
lc_status lc_model_run(lc_model *m);

/* One executed node, after planning (timing after a run). */
typedef struct lc_layer_info {
  const char *name, *op_type;
  int ndim;
  int64_t dims[LC_MAX_DIMS];   /* output 0 */
  const char *route;           /* conv route name, "" for other ops */
  char fused[48];              /* e.g. "bn+add+relu" */
  double ms;                   /* last run */
  double flops;                /* multiply-adds count 2 */
  size_t workspace_bytes;
  int inplace;
} lc_layer_info;

int lc_model_n_layers(const lc_model *m);
void lc_model_layer(const lc_model *m, int i, lc_layer_info *info);

typedef struct lc_model_stats {
  int64_t ir_version, opset;
  int nodes_loaded, nodes_planned, folded, fused_bn, fused_add, fused_act, inplace;
  size_t weight_bytes;          /* constants the planned nodes read (initializers, folded values) */
  size_t packed_weight_bytes;   /* packed conv weights, as lc_conv_weight_bytes reports */
  size_t mapped_code_bytes;     /* of which quantized codes read where the file is mapped (no copy) */
  size_t peak_activation_bytes; /* the one activation arena */
  size_t scratch_bytes;         /* shared conv workspace */
  size_t folded_bytes;          /* constants computed by folding (charged before each is made) */
  size_t memory_cap;            /* the cap the plan ran under */
} lc_model_stats;

void lc_model_get_stats(const lc_model *m, lc_model_stats *s);

/* A model planned on a device (options.device): what runs where and what it holds there. */
typedef struct lc_model_device_stats {
  const char *device;           /* the device's name; NULL for a CPU plan */
  int fallbacks;                /* nodes without a device kernel (run on the CPU, with transfers) */
  int kernels;                  /* kernel launches per run */
  size_t weight_bytes;          /* weights, constants and tables in device memory */
  size_t activation_bytes;      /* the device activation arena */
  int arena_buffers;            /* device buffers it is made of (> 1: split past the largest allocation) */
  size_t pinned_bytes;          /* inputs and outputs in pinned host memory (copied at full speed) */
  double compile_ms, tune_ms;   /* program builds / loads and conv tuning at plan time */
  double last_run_ms;           /* device time of the last run, first kernel start to last end */
} lc_model_device_stats;
void lc_model_get_device_stats(const lc_model *m, lc_model_device_stats *s);
/* 1 if layer i (as lc_model_layer counts) runs on the CPU in a device plan. */
int lc_model_layer_on_host(const lc_model *m, int i);
/* The device's back-to-back kernel launch latency (measured once per device and driver, cached). */
lc_status lc_model_device_launch_us(lc_model *m, double *us);

#endif
