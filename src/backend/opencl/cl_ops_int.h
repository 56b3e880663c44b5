/* Internals of the device operators (cl_ops*.c): an op is a list of launches whose arguments
 * name the node's inputs and outputs by slot, so one op serves any buffers at run time. */
#ifndef LC_CL_OPS_INT_H
#define LC_CL_OPS_INT_H

#include "backend/opencl/cl_ops.h"
#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"

#define CLOP_MAX_ARGS 16

enum { CLOP_A_IN, CLOP_A_OUT, CLOP_A_MEM, CLOP_A_VAL };

typedef struct clop_arg {
  int kind, slot;
  cl_mem mem;
  size_t size;
  unsigned char val[8];
} clop_arg;

typedef enum { CLOP_KERNEL, CLOP_CONV, CLOP_COPY } clop_kind;

typedef struct clop_launch {
  clop_kind kind;
  cl_kernel k;
  const char *name;
  int nargs;
  clop_arg a[CLOP_MAX_ARGS];
  size_t gws, lws;          /* 1-D; lws 0 = the driver's choice */
  struct lc_conv *conv;     /* CLOP_CONV: input slot in, residual slot res (-1: res_mem or none) */
  int in, out, res;
  cl_mem res_mem;
  size_t bytes;             /* CLOP_COPY: slot in -> slot out, at these byte offsets */
  size_t src_off, dst_off;
} clop_launch;

struct lc_clop {
  lc_context *ctx;
  lc_cl_rt *rt;
  const char *route;
  int n_in, n_out;          /* the node's slots */
  int nl, capl;
  clop_launch *l;
  cl_mem *owned;
  int nowned, capowned;
  struct lc_conv *convs[2];
  size_t device_bytes;
  unsigned packed;
  int failed;               /* a helper failed: the status is in lc_last_error */
};

/* A kernel launch of program `prog` over n items (n > 0) appended to op; NULL on failure. */
clop_launch *clop_kernel(lc_clop *op, const char *prog, const char *name, size_t n, size_t lws);
/* The same with program build options (a conv's "-DWFMT=.. -DASYM=..": its weights' format). */
clop_launch *clop_kernel_opt(lc_clop *op, const char *prog, const char *options, const char *name, size_t n,
                             size_t lws);
/* A whole-buffer copy from input slot in to output slot out (none when they are one buffer). */
clop_launch *clop_copy(lc_clop *op, int in, int out, size_t bytes);
void clop_in(lc_clop *op, clop_launch *l, int slot);
void clop_out(lc_clop *op, clop_launch *l, int slot);
void clop_mem(lc_clop *op, clop_launch *l, cl_mem m);
/* Appends arguments by a format: I input slot (int), O output slot (int), M cl_mem, N int64_t
 * passed as an int (the op fails if it does not fit), F double passed as a float, U uint64_t. */
void clop_args(lc_clop *op, clop_launch *l, const char *fmt, ...);
/* A device copy of host data owned by the op (NULL on failure). */
cl_mem clop_upload(lc_clop *op, const void *data, size_t bytes);
/* An int table (int64 values checked to fit an int) owned by the op. */
cl_mem clop_ints(lc_clop *op, const int64_t *v, int n);
/* The status of the op so far (LC_OK or what failed). */
lc_status clop_status(const lc_clop *op);
/* Fails the op: records the message, returns s. */
lc_status clop_fail(lc_clop *op, const lc_node *n, lc_status s, const char *why);
/* Element count of t as an int (< 2^31) or -1. */
int64_t clop_numel(const lc_tensor *t);
/* Kernel name suffix of an element size: "u8", "u32", "u64" (NULL if none). */
const char *clop_esuffix(size_t es);

/* Per family (cl_ops_ew.c, cl_ops_data.c, cl_ops_reduce.c, cl_ops_mm.c): LC_ERR_UNSUPPORTED
 * when the node has no device version. */
lc_status clop_make_ew(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                       int n_out, unsigned cm);
lc_status clop_make_data(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                         int n_out, unsigned cm);
lc_status clop_make_reduce(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                           const lc_tensor *out, int n_out, unsigned cm);
lc_status clop_make_mm(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                       int n_out, const lc_exec_ctx *x, unsigned cm);
/* A y = x * a + b launch over n floats from slot/mem src to slot dst (conv post-affine). */
lc_status clop_affine(lc_clop *op, int out_slot, int64_t n, float a, float b);

#endif
