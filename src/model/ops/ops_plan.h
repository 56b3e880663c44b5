/* Geometry and plans of the operators (shapes, pads, tables) shared by the CPU implementations
 * in src/model/ops and the device kernels (src/backend/opencl/cl_ops*.c), so both compute the
 * same thing from one reading of the node. */
#ifndef LC_MODEL_OPS_PLAN_H
#define LC_MODEL_OPS_PLAN_H

#include "model/ops.h"

/* Broadcast of two inputs to the output, coalesced to at most LC_MAX_DIMS dims (outermost first). */
typedef struct bcast {
  int nd;                      /* coalesced rank (>= 1) */
  int64_t dims[LC_MAX_DIMS];
  int64_t sa[LC_MAX_DIMS], sb[LC_MAX_DIMS]; /* element strides, 0 where broadcast */
} bcast;
void lcop_bcast_plan(const lc_tensor *a, const lc_tensor *b, const lc_tensor *o, bcast *p);

/* Unary op kind (the order of ops_elementwise.c's table) and its two parameters. */
lc_status lcop_unary_params(const lc_node *n, const lc_tensor *const *in, int n_in, int *kind, float *a, float *b);
/* The EwChain step kind of Add / Mul / Sub / Div with a scalar operand (first or second), or -1. */
int lcop_chain_kind(const char *op, int scalar_first);
/* EwChain's attributes: _n steps (at most LCOP_CHAIN_MAX), step i's kind, a and b named
 * lcop_chain_attr[0][i], [1][i], [2][i]. */
#define LCOP_CHAIN_MAX 8
extern const char *const lcop_chain_attr[3][LCOP_CHAIN_MAX];
/* The EwChain step kind of x * Sigmoid(x). */
int lcop_chain_silu(void);

typedef struct pool_geom {
  int64_t N, C, H, W, OH, OW;
  int64_t k[2], s[2], d[2], pb[2], pe[2]; /* [0] = H, [1] = W */
} pool_geom;
lc_status lcop_pool_geometry(const lc_node *n, const lc_tensor *x, int is_max, pool_geom *g);
/* Reduced axes of a Reduce* / Global*Pool node: mask[axis] = 1, keep = keepdims. */
lc_status lcop_red_axes(const lc_node *n, const lc_tensor *const *in, int n_in, int *mask, int *keep);

typedef enum ct_mode { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC,
                       CT_TF_HALF_PIXEL_NN } ct_mode;
typedef enum nn_mode { NN_ROUND_PREFER_FLOOR, NN_ROUND_PREFER_CEIL, NN_FLOOR, NN_CEIL } nn_mode;
typedef struct resize_plan {
  int r;
  int64_t out[LC_MAX_DIMS];
  double scale[LC_MAX_DIMS];
  int linear;
  ct_mode ct;
  nn_mode nn;
} resize_plan;
lc_status lcop_resize_plan(const lc_node *n, const lc_tensor *const *in, int n_in, resize_plan *p);
/* Per output position o < lout: source indices i0, i1 and the weight w of i1 (linear). */
void lcop_resize_axis(const resize_plan *p, int64_t lin, int64_t lout, double scale, int64_t *i0, int64_t *i1,
                      float *w);

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;
lc_status lcop_pad_plan(const lc_node *n, const lc_tensor *const *in, int n_in, int64_t *pb, int64_t *pe,
                        pad_mode *mode);

lc_status lcop_split_sizes(const lc_node *n, const lc_tensor *const *in, int n_in, int n_out, int *axis, int64_t *sz);
/* Slice as a strided view of the input: element strides st (may be negative), start offset off. */
typedef struct slice_plan {
  int64_t dims[LC_MAX_DIMS], st[LC_MAX_DIMS], off;
} slice_plan;
lc_status lcop_slice_plan(const lc_node *n, const lc_tensor *const *in, int n_in, slice_plan *p);
lc_status lcop_transpose_perm(const lc_node *n, const lc_tensor *t, int *perm);

lc_status lcop_gemm_dims(const lc_node *n, const lc_tensor *const *in, int64_t *M, int64_t *N, int64_t *K);
typedef struct mm_shape {
  int64_t M, N, K;
  int nb; /* batch rank of the output */
  int64_t bd[LC_MAX_DIMS], sa[LC_MAX_DIMS], sb[LC_MAX_DIMS]; /* batch dims and matrix strides of A, B */
} mm_shape;
lc_status lcop_mm_shape(const lc_node *n, const lc_tensor *A, const lc_tensor *B, mm_shape *p, int *ond,
                        int64_t *odims);
lc_status lcop_softmax_geom(const lc_node *n, const lc_tensor *t, size_t *outer, size_t *len, size_t *inner);

typedef struct conv_geom {
  int sp;                                  /* spatial rank: 1 or 2 */
  int64_t N, C, H, W, M, group, KH, KW, OH, OW;
  int64_t s[2], d[2], pb[2], pe[2], opad[2]; /* [0] = H, [1] = W */
} conv_geom;
lc_status lcop_conv_geometry(const lc_node *n, const lc_tensor *const *in, int transpose, conv_geom *g);
/* A fresh descriptor (lc_conv_desc_init) with g's channels, groups, kernel, strides, dilations and
 * resolved pads; no weights. */
void lcop_conv_desc_geom(const conv_geom *g, lc_conv_desc *d);
/* The node's conv created and prepared on x->lc (CPU or device context), weights quantized by
 * the model's policy; the fused activation goes into the library when fuse_act. */
lc_status lcop_conv_make(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                         lc_conv **conv, lc_conv_shape *shape);
/* lcop_conv_make with hook(conv, arg) run between create and prepare (a device's epilogue and
 * input tables, which the tuner at prepare must see); NULL: none. */
lc_status lcop_conv_make_hooked(const lc_node *n, const lc_tensor *const *in, int n_in, lc_exec_ctx *x, int fuse_act,
                                lc_status (*hook)(lc_conv *conv, void *arg), void *arg, lc_conv **conv,
                                lc_conv_shape *shape);

#endif
