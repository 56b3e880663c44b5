/* Internal model graph: values (tensors) and nodes in topological order. Shared by graph.c
 * (build), fold.c (shapes, folding, fusion), planner.c (memory) and exec.c (init, run). */
#ifndef LC_MODEL_GRAPH_H
#define LC_MODEL_GRAPH_H

#include "model/model.h"
#include "model/onnx_pb.h"
#include "model/ops.h"

typedef struct lc_value {
  lc_tensor t;       /* name, dtype, dims; data for constants and, once planned, activations */
  int is_const;      /* initializer or folded */
  int owned;         /* t.data is ours (lc_malloc) */
  int shaped;        /* dims known */
  int producer;      /* node position, -1 for inputs and constants */
  int is_input, is_output;
  int n_uses, consumer; /* live consumers; position of the last one seen */
  int first, last;   /* liveness (node positions; inputs -1, outputs n) */
  int alias;         /* value whose buffer this one shares, or -1 */
  size_t offset;     /* in the arena */
  const char *dim_param[LC_MAX_DIMS];
  int has_decl;      /* graph input with a declared shape */
  /* BN-folded conv weights are computed just before the conv packs them (so at most one
   * folded copy exists at a time): data = lazy_src's data * lazy_scale[output channel]. */
  int lazy_src;      /* -1 when not lazy */
  double *lazy_scale;
  int pending;       /* init loop: live reads not yet packed away */
} lc_value;

typedef struct lc_gnode {
  lc_node n;         /* arrays live in the model arena; fusion rewrites them */
  int *in, *out;     /* value ids, -1 for an absent optional input */
  const lc_op_impl *op;
  void *state;
  int dead;          /* folded or fused away */
  int inplace;
  char fused[48];
  const char *route;
  size_t ws;
  double ms, flops;
} lc_gnode;

struct lc_model {
  lc_onnx_model *onnx;
  lc_arena *arena;
  lc_value *values;
  int n_values, cap_values;
  int *ht;           /* name -> value id, open addressing */
  size_t ht_cap;
  lc_gnode *nodes;   /* topological order */
  int n_nodes;
  int *inputs, *outputs, n_inputs, n_outputs;
  int planned;
  lc_model_options opt;
  lc_context *ctx;
  lc_exec_ctx x;
  void *arena_buf;
  const lc_tensor **io_in; /* per-node call arrays, sized for the widest node */
  lc_tensor *io_out;
  lc_model_stats st;
  int *layers, n_layers; /* positions of the live nodes once planned (lc_model_layer in O(1)) */
  struct lc_model_dev *dev; /* exec_device.c: the device plan, NULL on the CPU */
  void (*dev_free)(struct lc_model *m); /* frees dev (a hook: graph.c does not depend on exec_device.c) */
  size_t arena_align;       /* activation offsets' alignment, 0 = the planner's default */
};

int lc_graph_find(const lc_model *m, const char *name);
/* LC_ERR_INVALID_ARG "no input named ..." listing the valid names. */
lc_status lc_graph_no_input(const lc_model *m, const char *name);
/* New value (name copied into the arena); -1 on allocation failure (error recorded). */
int lc_graph_add_value(lc_model *m, const char *name);
/* Gathers a node's input pointers and copies of its output tensors (the op interface takes
 * outputs as one array). Returns the output count with absent trailing outputs dropped. */
int lc_graph_io(lc_model *m, const lc_gnode *g, const lc_tensor **in, lc_tensor *out);
/* Makes a constant's data readable (the loader copies large misaligned tensors on demand). */
void lc_graph_ensure(lc_model *m, int id);
void lc_graph_ensure_inputs(lc_model *m, const lc_gnode *g);
/* Bytes of a tensor from dtype and dims; 0 on success. */
int lc_graph_nbytes(lc_tensor *t);

/* graph.c: every unsupported op in one message; a PRelu's [C] slope on [N, C, ...] as [C, 1, ..]. */
lc_status lc_graph_check_ops(lc_model *m);
lc_status lc_graph_prelu_slope(lc_model *m, lc_gnode *g);
lc_status lc_graph_opset6(lc_model *m, lc_gnode *g);
lc_status lc_fold_and_infer(lc_model *m);   /* fold.c */
lc_status lc_fuse(lc_model *m);             /* fold.c */
/* fold.c's fusion helpers (fuse_device.c uses them too): the single live consumer of value v or
 * -1; a private attribute added to g; conv node p moved into consumer c's slot (taking its
 * output, tag appended to its fused list), returning c; constant float input k of g with n
 * elements or NULL; per-channel values (f[M]) of constant input k broadcast against conv output y. */
int lc_fold_sole_consumer(const lc_model *m, int v);
/* Values a and b are float tensors of one shape. */
int lc_fold_same_shape(const lc_model *m, int a, int b);
/* Node `last` becomes `op`(x) with no attributes; nodes dead[0..nd) die (their outputs unread). */
lc_status lc_fold_become_unary(lc_model *m, int last, const char *op, int x, const int *dead, int nd);
/* fuse_norm.c: written-out layer norms as LayerNormalization nodes. */
lc_status lc_fuse_layernorm(lc_model *m);
lc_status lc_fold_add_attr(lc_model *m, lc_gnode *g, const char *name, lc_attr_type type, int64_t i, float f);
int lc_fold_absorb(lc_model *m, int p, int c, const char *tag);
const float *lc_fold_const_f32(lc_model *m, const lc_gnode *g, int k, size_t n);
/* A new constant value like `like` (data allocated unless lazy) named base + suffix. */
lc_status lc_fold_new_const(lc_model *m, const char *base, const char *suffix, const lc_tensor *like, int lazy,
                            int *id);
/* Input k of g becomes value v (inputs added up to k as absent). */
lc_status lc_fold_set_input(lc_model *m, lc_gnode *g, int k, int v);
/* fold_convt.c: the per-channel factors of BatchNormalization b after conv k (M outputs) and its
 * new bias constant *bid; *f NULL when b cannot be folded. */
lc_status lc_fold_bn_factors(lc_model *m, const lc_gnode *k, const lc_gnode *b, int64_t M, const char *base,
                             double **f, int *bid);
/* fold_convt.c: BatchNormalization c after ConvTranspose *pp folded into its weights and bias. */
lc_status lc_fold_bn_convt(lc_model *m, int *pp, int c);
int lc_fold_channel_const(lc_model *m, const lc_gnode *g, int k, int y, double *f);
/* fuse_device.c: PRelu node c with a constant per-channel (or scalar) slope after conv *pp becomes
 * its _prelu (f: scratch of the conv's output channels); nothing changes if c does not qualify. */
lc_status lc_fold_prelu(lc_model *m, int *pp, int c, double *f);
/* fuse_device.c: a BatchNormalization whose only reader is Conv p's data input becomes the conv's
 * _in_mul / _in_add (FLOATS per input channel); nothing happens when the pattern doesn't match. */
lc_status lc_fold_bn_before(lc_model *m, int p);
/* fuse_device.c: fusions only a device conv's epilogue can run (PRelu, a per-channel affine
 * after the residual add); for a plan on a device, after lc_fuse. */
lc_status lc_fuse_device(lc_model *m);
/* fuse_upsample.c: nearest integer-factor Resizes read through by their only reader (a conv's
 * residual); for a plan on a device, called by lc_fuse_device. */
lc_status lc_fuse_upsample(lc_model *m);
lc_status lc_plan_memory(lc_model *m);      /* planner.c */
/* layout.c: which convs of a CPU plan run NHWC (private attributes on the conv nodes). */
lc_status lc_plan_layout(lc_model *m);
/* planner.c: the init loop: folded weights made on demand, consumed constants released. */
lc_status lc_fuse_chains(lc_model *m);
lc_status lc_plan_prefold(lc_model *m);
lc_status lc_plan_init_ops(lc_model *m, int dev_collect);
void lc_plan_count_uses(lc_model *m);       /* planner.c */
/* limits.c: total charged so far; charges bytes for `what` of node g (NULL: none) against the cap,
 * adding them to *field (NULL: check only); the opset ranges. */
size_t lc_model_memory_used(const lc_model *m);
lc_status lc_model_charge(lc_model *m, const lc_gnode *g, const char *what, size_t bytes, size_t *field);
lc_status lc_model_check_opsets(const lc_onnx_model *o);

/* exec_device.c: a plan on an OpenCL device (no-ops for a CPU plan). open: the device context,
 * before memory planning (it sets arena_align); bind: the device arena, after it; init_node:
 * the node's device op (*done = 0: it runs on the CPU; packed: inputs copied to the device). */
lc_status lc_dev_open(lc_model *m);
/* open in two steps: start (async: the driver's start on a thread of its own, lc_context_create_async)
 * and wait (the open's error as a synchronous open gives it; a failed open leaves m->dev NULL).
 * opening: started, not waited for. stage: while it opens, the weights the device ops will pack
 * are packed into host memory (at most limit bytes; lc_backend_ops.stage_node); the nodes noted. */
lc_status lc_dev_open_start(lc_model *m, int async);
lc_status lc_dev_open_wait(lc_model *m);
int lc_dev_opening(const lc_model *m);
int lc_dev_stage(lc_model *m, size_t limit);
lc_status lc_dev_bind(lc_model *m);
lc_status lc_dev_init_node(lc_model *m, lc_gnode *g, int *done, unsigned *packed);
/* Before the ops' init (weights folded early): begin (0: no collect pass on this backend), each
 * node in init order has its device op's programs listed, end starts building them on worker
 * threads in the background; lc_dev_collect_join waits for them (no-ops on the CPU). */
int lc_dev_collect_begin(lc_model *m);
void lc_dev_collect_node(lc_model *m, lc_gnode *g, int tag);
/* 1 when none of the programs node `tag` (its collect_node tag) listed is still building. */
int lc_dev_node_ready(lc_model *m, int tag);
/* Waits for the next of the collect pass's builds to finish; 0 at once when none is running. */
int lc_dev_build_wait(lc_model *m);
lc_status lc_dev_collect_end(lc_model *m);
lc_status lc_dev_collect_join(lc_model *m);
lc_status lc_dev_run(lc_model *m);
/* After the ops exist: inputs and outputs only device ops touch move to pinned host memory. */
lc_status lc_dev_pin_io(lc_model *m);
void lc_dev_free(lc_model *m);

#endif
