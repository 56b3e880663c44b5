/* The model runner's operators on the OpenCL device. lc_clop_create builds the device version of
 * one planned node (geometry read once, constant inputs uploaded or packed into convs, tables
 * computed on the host); lc_clop_enqueue puts its kernels on the queue with no host sync. An op
 * without a device version gives LC_ERR_UNSUPPORTED (the runner then falls back to the CPU). */
#ifndef LC_CL_OPS_H
#define LC_CL_OPS_H

#include "backend/backend.h"
#include "backend/opencl/cl_rt.h"
#include "model/ops.h"

typedef struct lc_clop lc_clop;

/* ctx: an OpenCL context. x: the model's weight format, block and q4 policy (x->lc is ignored).
 * const_mask bit i: in[i] is a constant (its data is read now and never again). */
lc_status lc_clop_create(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in,
                         const lc_tensor *out, int n_out, const lc_exec_ctx *x, unsigned const_mask, lc_clop **op);
/* Notes the weights the node's conv will pack (lc_cl_stage_add) where its op is a conv of fp32
 * constant weights read in place (Conv; Gemm with B transposed); 1 if noted. */
int lc_clop_stage(lc_context *ctx, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_exec_ctx *x,
                  unsigned const_mask, int tag, size_t limit);
/* in[i]: device buffer of input i (ignored for constants and absent inputs), out[i] of output i.
 * first/last (may be NULL): events of the first and last command, for profiling. */
lc_status lc_clop_enqueue(lc_clop *op, const cl_mem *in, const cl_mem *out, cl_event *first, cl_event *last);
void lc_clop_free(lc_clop *op);

typedef lc_backend_op_info lc_clop_info; /* backend/backend.h */
void lc_clop_describe(const lc_clop *op, lc_clop_info *info);
/* The node's input and output slot counts (what enqueue's arrays hold). */
int lc_clop_n_inputs(const lc_clop *op);
int lc_clop_n_outputs(const lc_clop *op);

#endif
