/* Shared helpers of the operator implementations (src/model/ops). Not part of any public API. */
#ifndef LC_MODEL_OPS_INTERNAL_H
#define LC_MODEL_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* Tables of each op family, terminated by an entry with op_type NULL. */
extern const lc_op_impl lcop_conv_ops[];
extern const lc_op_impl lcop_elementwise_ops[];
extern const lc_op_impl lcop_binary_ops[];
extern const lc_op_impl lcop_pool_ops[];
extern const lc_op_impl lcop_shape_ops[];
extern const lc_op_impl lcop_index_ops[];
extern const lc_op_impl lcop_matmul_ops[];
extern const lc_op_impl lcop_resize_ops[];

#endif
