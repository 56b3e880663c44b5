/* Shared helpers of the operator implementations (src/model/ops). Not part of any public API. */
#ifndef LC_MODEL_OPS_INTERNAL_H
#define LC_MODEL_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/vmath.h"
#include "model/ops.h"

/* Records "<op> '<node>': <message>" and returns s. */
lc_status lcop_fail(const lc_node *n, lc_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Element count of t (checked); 0 on success, nonzero on overflow / negative dim. */
int lcop_numel(const lc_tensor *t, size_t *count);
/* Product of dims[lo, hi) (checked): 0 on success. */
int lcop_dims_prod(const int64_t *dims, int lo, int hi, size_t *r);

/* Sets dtype, dims and nbytes of an inferred output (checks rank and overflow). */
lc_status lcop_set_out(const lc_node *n, lc_tensor *t, lc_dtype dt, int ndim, const int64_t *dims);

/* 1 if optional input i is present. */
static inline int lcop_has(const lc_tensor *const *in, int n_in, int i) { return i < n_in && in[i] != NULL; }

/* Checks the input / output counts: in [min_in, max_in], out [min_out, max_out]. */
lc_status lcop_check_io(const lc_node *n, int n_in, int min_in, int max_in, int n_out, int min_out, int max_out);
/* Input i must be present with dtype dt. */
lc_status lcop_need(const lc_node *n, const lc_tensor *const *in, int n_in, int i, lc_dtype dt);

/* Input i must be present with a known dtype and a valid shape (dtype-agnostic ops). */
lc_status lcop_need_any(const lc_node *n, const lc_tensor *const *in, int n_in, int i);

/* Copies an nd-dim strided view (element strides, may be negative or 0) of src, starting at element
 * off, into contiguous dst; dims of size 1 are dropped and contiguous dims merged first. */
void lcop_strided_copy(void *dst, const void *src, size_t es, int nd, const int64_t *dims, const int64_t *st,
                       int64_t off);
/* Row-major element strides of t. */
void lcop_contiguous_strides(const lc_tensor *t, int64_t *st);

/* Reads a constant int64/int32 tensor (rank <= 1) into v[max]; error naming `what` if not constant. */
lc_status lcop_read_ints(const lc_node *n, const lc_tensor *t, const char *what, int64_t *v, size_t max,
                         size_t *count);
/* Reads a constant scalar (or 1-element) float tensor. */
lc_status lcop_read_float(const lc_node *n, const lc_tensor *t, const char *what, float *v);

/* Normalizes axis in [-rank, rank) to [0, rank). */
lc_status lcop_axis(const lc_node *n, int64_t axis, int rank, int *out);

/* Optional per-node opset hint set by the graph layer (attribute "_opset"); 0 if unknown. */
int64_t lcop_opset(const lc_node *n);
/* What an op's own run-time scratch must fit in (lc_exec_ctx.scratch_limit; 0 = no limit). */
size_t lcop_budget(const lc_exec_ctx *x);

/* Copies in -> out unless they share a buffer (in-place reshape-like ops). */
void lcop_copy(void *dst, const void *src, size_t nbytes);

/* Runs fn(arg, task, thread) for task in [0, n) on the context's thread pool (serially without
 * one); lcop_threads says how many distinct `thread` values to size per-thread scratch for. */
void lcop_parallel(lc_exec_ctx *x, size_t n, void (*fn)(void *arg, size_t task, int thread), void *arg);
int lcop_threads(const lc_exec_ctx *x);
/* n images of c channels x hw pixels: NCHW -> NHWC (to_nhwc) or back, src != dst (ops_layout.c). */
void lcop_layout_convert(lc_exec_ctx *x, const float *src, float *dst, size_t n, size_t c, size_t hw, int to_nhwc);

/* Multidirectional broadcast of k <= LCOP_NB_MAX inputs to one output: output dims and each
 * input's element strides (0 where it broadcasts). */
#define LCOP_NB_MAX 64
typedef struct nbcast {
  int k, nd;
  int64_t dims[LC_MAX_DIMS];
  int64_t st[LCOP_NB_MAX][LC_MAX_DIMS];
} nbcast;
lc_status lcop_nbcast_plan(const lc_node *n, const lc_tensor *const *t, int k, nbcast *p);
/* Calls row(job, o, off, inc, len) for every output row (innermost dim): o = the row's first output
 * element, off[i] = input i's element offset there, inc[i] = its step along the row (0 where it broadcasts). */
void lcop_nbcast_rows(const nbcast *p, void (*row)(void *job, size_t o, const size_t *off, const int *inc, size_t len),
                      void *job);

/* No tensor may have more elements than this (8 GiB of float): shapes made from values (Range, Tile,
 * Expand, Resize) past it are refused before anything is allocated, naming the node (fold.c). */
#define LCOP_GEN_MAX ((size_t)1 << 31)

/* The activation (and affine after it) fusion put on a Conv / ConvTranspose node (fold.c). */
typedef struct conv_act {
  lc_activation act;
  float lo, hi, alpha;
  float post_mul, post_add; /* y = y * post_mul + post_add after the activation */
  int post;
} conv_act;
lc_status lcop_read_act(const lc_node *n, conv_act *a);
/* y = act(y + r) (r may be NULL), then the affine. */
void lcop_act_epilogue(float *y, const float *r, size_t n, const conv_act *a);
static inline int lcop_conv_has_residual(const lc_node *n) { return lc_attr_int(n, "_residual", 0) != 0; }
/* fuse_device.c's squeeze-and-excitation form: input 3 is x, the output x * the conv's [N, M, 1, 1]. */
static inline int lcop_conv_has_se(const lc_node *n) { return lc_attr_int(n, "_se", 0) != 0; }
/* "_res_up" = f > 1 (fuse_device.c): the residual is NCHW [N, M, OH/f, OW/f], upsampled nearest. */
static inline int64_t lcop_conv_res_up(const lc_node *n) { return lc_attr_int(n, "_res_up", 1); }
/* Output of a Conv (transpose = 0) or ConvTranspose node, with the fusion inputs checked. */
lc_status lcop_conv_infer_common(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                                 int transpose);

/* The vector math (kernels/vmath.h) of the context's kernel table, so a forced ISA applies to these
 * ops too; without a context, the best this CPU runs. */
const lc_vmath_kernels *lcop_vm(const lc_exec_ctx *x);

/* The positions i in [lo, hi), within [0, out), for which i * s + off lands inside [0, in): the
 * output columns a pooling tap reaches, the input columns a ConvTranspose tap scatters from. */
void lcop_tap_range(int64_t in, int64_t out, int64_t s, int64_t off, int64_t *lo, int64_t *hi);

/* Tables of each op family, terminated by an entry with op_type NULL. */
extern const lc_op_impl lcop_conv_ops[];
extern const lc_op_impl lcop_elementwise_ops[];
extern const lc_op_impl lcop_binary_ops[];
extern const lc_op_impl lcop_pool_ops[];
extern const lc_op_impl lcop_shape_ops[];
extern const lc_op_impl lcop_index_ops[];
extern const lc_op_impl lcop_matmul_ops[];
extern const lc_op_impl lcop_resize_ops[];
extern const lc_op_impl lcop_logic_ops[];
extern const lc_op_impl lcop_gen_ops[];
extern const lc_op_impl lcop_norm_ops[];
extern const lc_op_impl lcop_rnn_ops[];
extern const lc_op_impl lcop_einsum_ops[];
extern const lc_op_impl lcop_convt_ops[];
extern const lc_op_impl lcop_upconcat_ops[]; /* fuse_upsample.c's UpConcat */

#endif
