/* Harness of the model operator tests (test_ops_*.c): attributes, tensors, one op run through
 * lc_op_find / init / run, and a main that runs the tests on 1 and then 2 threads.
 * Header-only: each test links only with testutil.c. */
#ifndef LC_TEST_OPS_HARNESS_H
#define LC_TEST_OPS_HARNESS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "model/ops.h"
#include "testutil.h"

/* ---------------------------------------------------------------- harness */

static inline lc_attr a_int(const char *name, int64_t v) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_INT, a.i = v;
  return a;
}
static inline lc_attr a_float(const char *name, float v) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_FLOAT, a.f = v;
  return a;
}
static inline lc_attr a_ints(const char *name, const int64_t *v, size_t n) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_INTS, a.ints = v, a.n = n;
  return a;
}
static inline lc_attr a_str(const char *name, const char *s) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_STRING, a.s = s;
  return a;
}

static inline lc_tensor tens(lc_dtype dt, int nd, const int64_t *dims, const void *data) {
  lc_tensor t = {0};
  t.name = "t", t.dtype = dt, t.ndim = nd;
  size_t n = 1;
  for (int i = 0; i < nd; i++) t.dims[i] = dims[i], n *= (size_t)dims[i];
  t.data = (void *)data;
  t.nbytes = n * (dt == LC_DT_INT64 ? 8 : 4);
  return t;
}

static lc_context *g_ctx;
static unsigned g_const_mask;       /* inputs the op may pack at init (lc_exec_ctx.const_inputs) */
static int g_wfmt, g_wblock;        /* weight format and block for Gemm / MatMul packing */

/* Runs infer / init / run / fini; outputs are malloc'ed (caller frees out[i].data). */
static inline lc_status run_op(const char *op, lc_attr *attrs, int na, lc_tensor *ins, int n_in, lc_tensor *out,
                        int n_out) {
  static const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  lc_node n = {0};
  n.name = "node0", n.op_type = op, n.domain = "";
  n.n_inputs = n_in, n.n_outputs = n_out, n.inputs = names, n.outputs = names;
  n.n_attrs = na, n.attrs = attrs;
  const lc_tensor *in[8];
  for (int i = 0; i < n_in; i++) in[i] = ins[i].dtype == LC_DT_UNDEFINED ? NULL : &ins[i];
  const lc_op_impl *impl = lc_op_find(op);
  if (!impl) return LC_ERR_UNSUPPORTED;
  for (int i = 0; i < n_out; i++) memset(&out[i], 0, sizeof out[i]);
  lc_status s = impl->infer(&n, in, n_in, out, n_out);
  if (s) return s;
  for (int i = 0; i < n_out; i++) out[i].data = calloc(1, out[i].nbytes + 1);
  lc_exec_ctx x = {0};
  x.lc = g_ctx;
  x.const_inputs = g_const_mask;
  x.weight_format = g_wfmt;
  x.weight_block = g_wblock;
  void *state = NULL;
  if (impl->init) s = impl->init(&n, in, n_in, out, n_out, &x, &state);
  if (!s) s = impl->run(&n, state, in, n_in, out, n_out, &x);
  if (impl->fini) impl->fini(state);
  return s;
}

static inline void free_outs(lc_tensor *out, int n) {
  for (int i = 0; i < n; i++) free(out[i].data), out[i].data = NULL;
}

static inline int same_dims(const lc_tensor *t, int nd, const int64_t *d) {
  if (t->ndim != nd) return 0;
  for (int i = 0; i < nd; i++)
    if (t->dims[i] != d[i]) return 0;
  return 1;
}

static inline void check_floats(const char *what, const float *got, const float *want, size_t n, float tol) {
  double d = tu_max_abs_diff(got, want, n);
  TU_CHECK(d <= tol, "%s: max diff %g", what, d);
}

/* Runs `one` on a 1-thread context, then `two` on a 2-thread one: ops that split work across
 * threads must give the same results. */
static inline int ops_main(const char *name, void (*const *one)(void), size_t n1, void (*const *two)(void), size_t n2) {
  tu_seed_from_env(12345);
  lc_context_params p;
  lc_context_params_init(&p);
  for (int pass = 0; pass < 2; pass++) {
    p.threads = pass + 1;
    if (lc_context_create(&p, &g_ctx) != LC_OK) {
      fprintf(stderr, "context: %s\n", lc_last_error());
      return 1;
    }
    for (size_t i = 0; i < (pass ? n2 : n1); i++) (pass ? two : one)[i]();
    lc_context_destroy(g_ctx);
  }
  TU_CHECK(lc_alloc_current_bytes() == 0, "library allocations leaked: %zu bytes", lc_alloc_current_bytes());
  return tu_finish(name);
}

#endif
