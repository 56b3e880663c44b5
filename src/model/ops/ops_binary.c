/* Add / Sub / Mul / Div / Pow / PRelu with ONNX multidirectional broadcasting (float; int64 and
 * int32 for the arithmetic).
 * The two shapes are reduced to at most LC_MAX_DIMS coalesced dims; the innermost dim runs as a
 * contiguous loop in one of four stride patterns (vec/vec, vec/scalar, scalar/vec, scalar/scalar),
 * so per-channel and same-shape cases have no index math inside the inner loop. */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"

/* Output shape of broadcasting a and b; 0 if incompatible. */
static int bcast_shape(const lc_tensor *a, const lc_tensor *b, int *nd, int64_t *dims) {
  int r = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->ndim), ib = i - (r - b->ndim);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return 0;
    dims[i] = da == 1 ? db : da;
  }
  *nd = r;
  return 1;
}

void lcop_bcast_plan(const lc_tensor *a, const lc_tensor *b, const lc_tensor *o, bcast *p) {
  int r = o->ndim;
  int64_t sta = 1, stb = 1;
  int64_t d[LC_MAX_DIMS], sa[LC_MAX_DIMS], sb[LC_MAX_DIMS];
  int k = 0;
  /* Walk from the innermost dim, dropping size-1 output dims. */
  for (int i = r - 1; i >= 0; i--) {
    int ia = i - (r - a->ndim), ib = i - (r - b->ndim);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (o->dims[i] == 1) continue;
    d[k] = o->dims[i];
    sa[k] = da == 1 ? 0 : sta;
    sb[k] = db == 1 ? 0 : stb;
    sta *= da;
    stb *= db;
    k++;
  }
  /* Merge dim k into k-1 (outer into inner) when both strides continue. */
  int m = 0;
  for (int j = 0; j < k; j++) {
    if (m > 0 && sa[j] == sa[m - 1] * p->dims[m - 1] && sb[j] == sb[m - 1] * p->dims[m - 1]) {
      p->dims[m - 1] *= d[j];
      continue;
    }
    p->dims[m] = d[j];
    p->sa[m] = sa[j];
    p->sb[m] = sb[j];
    m++;
  }
  if (m == 0) {
    p->dims[0] = 1;
    p->sa[0] = p->sb[0] = 0;
    m = 1;
  }
  /* Stored innermost-first; reverse to outermost-first. */
  for (int i = 0; i < m / 2; i++) {
    int64_t t;
    t = p->dims[i], p->dims[i] = p->dims[m - 1 - i], p->dims[m - 1 - i] = t;
    t = p->sa[i], p->sa[i] = p->sa[m - 1 - i], p->sa[m - 1 - i] = t;
    t = p->sb[i], p->sb[i] = p->sb[m - 1 - i], p->sb[m - 1 - i] = t;
  }
  p->nd = m;
}

/* mode: bit 0 = a is scalar along the row, bit 1 = b is scalar. No restrict: out may be a or b
 * itself (in place), never a partial overlap, so element i reads only index i and the loops may
 * run as vectors without the compiler's alias checks (ivdep). */
typedef void (*row_fn)(void *o, const void *a, const void *b, size_t n, int mode);

#define LC_IVDEP _Pragma("GCC ivdep")
#define ROW_FN(NAME, T, EXPR)                                                        \
  static void NAME(void *ov, const void *av, const void *bv, size_t n, int mode) {   \
    T *o = ov;                                                                       \
    const T *a = av, *b = bv;                                                        \
    switch (mode) {                                                                  \
    case 0:                                                                          \
      LC_IVDEP for (size_t i = 0; i < n; i++) { T x = a[i], y = b[i]; o[i] = (EXPR); } \
      break;                                                                         \
    case 1: {                                                                        \
      T x = a[0];                                                                    \
      LC_IVDEP for (size_t i = 0; i < n; i++) { T y = b[i]; o[i] = (EXPR); }        \
      break;                                                                         \
    }                                                                                \
    case 2: {                                                                        \
      T y = b[0];                                                                    \
      LC_IVDEP for (size_t i = 0; i < n; i++) { T x = a[i]; o[i] = (EXPR); }        \
      break;                                                                         \
    }                                                                                \
    default: {                                                                       \
      T x = a[0], y = b[0];                                                          \
      LC_IVDEP for (size_t i = 0; i < n; i++) o[i] = (EXPR);                        \
    }                                                                                \
    }                                                                                \
  }

ROW_FN(add_f32, float, x + y)
ROW_FN(sub_f32, float, x - y)
ROW_FN(mul_f32, float, x * y)
ROW_FN(div_f32, float, x / y)
/* Vectorized as a select (CMakeLists.txt: -fno-trapping-math for src/model/ops; with trapping
 * math it was a branch per element, 2.4 ns each: 10 % of IResNet-34's run at one thread). */
ROW_FN(prelu_f32, float, x < 0.0f ? x * y : x)
/* Constant exponents 2 and 1 are exact as products; 0.5 of a positive base is sqrtf (correctly
 * rounded, as powf is); anything else goes to powf. */
ROW_FN(pow_f32, float, y == 2.0f ? x * x : y == 1.0f ? x : (y == 0.5f && x > 0.0f) ? sqrtf(x) : powf(x, y))
/* Wrapping int64 arithmetic through uint64 (signed overflow would be UB). */
ROW_FN(add_i64, int64_t, (int64_t)((uint64_t)x + (uint64_t)y))
ROW_FN(sub_i64, int64_t, (int64_t)((uint64_t)x - (uint64_t)y))
ROW_FN(mul_i64, int64_t, (int64_t)((uint64_t)x * (uint64_t)y))
/* Divisors are checked for 0 before; -1 negates through uint64 so INT64_MIN / -1 does not trap. */
ROW_FN(div_i64, int64_t, y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y)
/* int32 index arithmetic (shape subgraphs exported with int32), wrapping the same way. */
ROW_FN(add_i32, int32_t, (int32_t)((uint32_t)x + (uint32_t)y))
ROW_FN(sub_i32, int32_t, (int32_t)((uint32_t)x - (uint32_t)y))
ROW_FN(mul_i32, int32_t, (int32_t)((uint32_t)x * (uint32_t)y))
ROW_FN(div_i32, int32_t, y == -1 ? (int32_t)(0u - (uint32_t)x) : x / y)

typedef struct binop {
  const char *name;
  row_fn f32, i64, i32;
} binop;

static const binop BINOPS[] = {{"Add", add_f32, add_i64, add_i32}, {"Sub", sub_f32, sub_i64, sub_i32},
                               {"Mul", mul_f32, mul_i64, mul_i32}, {"Div", div_f32, div_i64, div_i32},
                               {"PRelu", prelu_f32, NULL, NULL},   {"Pow", pow_f32, NULL, NULL}};

static const binop *find_binop(const char *name) {
  for (size_t i = 0; i < sizeof BINOPS / sizeof BINOPS[0]; i++)
    if (strcmp(BINOPS[i].name, name) == 0) return &BINOPS[i];
  return NULL;
}

static lc_status binary_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (s) return s;
  if (!in[0] || !in[1]) return lcop_fail(n, LC_ERR_INVALID_ARG, "missing input");
  const lc_tensor *a = in[0], *b = in[1];
  const binop *op = find_binop(n->op_type);
  if (!op) return lcop_fail(n, LC_ERR_INTERNAL, "no kernel");
  if (a->dtype != b->dtype) return lcop_fail(n, LC_ERR_INVALID_ARG, "input dtypes differ (%d, %d)", a->dtype, b->dtype);
  if (!(a->dtype == LC_DT_FLOAT || (a->dtype == LC_DT_INT64 && op->i64) || (a->dtype == LC_DT_INT32 && op->i32)))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s not supported", lc_dtype_name(a->dtype));
  int nd;
  int64_t dims[LC_MAX_DIMS];
  if (!bcast_shape(a, b, &nd, dims)) return lcop_fail(n, LC_ERR_INVALID_ARG, "shapes do not broadcast");
  if (strcmp(n->op_type, "PRelu") == 0 && (nd != a->ndim || memcmp(dims, a->dims, sizeof(int64_t) * nd) != 0))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "slope does not broadcast to X");
  return lcop_set_out(n, out, a->dtype, nd, dims);
}

#define BIN_PAR_MIN 65536 /* below this, one thread beats waking the pool */
#define BIN_CHUNK 16384

typedef struct bin_job {
  row_fn f;
  size_t es;
  char *o;
  const char *a, *b;
  bcast p;
  size_t len, split, rows_per;
  int mode;
} bin_job;

/* Rows [r0, r0 + rows_per) (split == 1), or piece task % split of row task / split. */
static void bin_task(void *arg, size_t task, int thread) {
  const bin_job *j = arg;
  int last = j->p.nd - 1;
  size_t r0 = j->split > 1 ? task / j->split : task * j->rows_per, total_rows = 1;
  for (int d = 0; d < last; d++) total_rows *= (size_t)j->p.dims[d];
  size_t r1 = j->split > 1 ? r0 + 1 : (r0 + j->rows_per < total_rows ? r0 + j->rows_per : total_rows);
  size_t c0 = 0, cn = j->len;
  if (j->split > 1) {
    c0 = task % j->split * BIN_CHUNK;
    cn = j->len - c0 < BIN_CHUNK ? j->len - c0 : BIN_CHUNK;
  }
  (void)thread;
  int64_t idx[LC_MAX_DIMS] = {0};
  size_t oa = 0, ob = 0, rem = r0;
  for (int d = last - 1; d >= 0; d--) { /* start of the odometer at row r0 */
    idx[d] = (int64_t)(rem % (size_t)j->p.dims[d]);
    rem /= (size_t)j->p.dims[d];
    oa += (size_t)idx[d] * (size_t)j->p.sa[d];
    ob += (size_t)idx[d] * (size_t)j->p.sb[d];
  }
  size_t ca = j->mode & 1 ? 0 : c0, cb = j->mode & 2 ? 0 : c0;
  for (size_t r = r0; r < r1; r++) {
    j->f(j->o + (r * j->len + c0) * j->es, j->a + (oa + ca) * j->es, j->b + (ob + cb) * j->es, cn, j->mode);
    for (int d = last - 1; d >= 0; d--) { /* odometer over the outer dims */
      oa += (size_t)j->p.sa[d];
      ob += (size_t)j->p.sb[d];
      if (++idx[d] < j->p.dims[d]) break;
      oa -= (size_t)(j->p.sa[d] * j->p.dims[d]);
      ob -= (size_t)(j->p.sb[d] * j->p.dims[d]);
      idx[d] = 0;
    }
  }
}

static lc_status binary_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *x) {
  const lc_tensor *a = in[0], *b = in[1];
  const binop *op = find_binop(n->op_type);
  size_t total;
  if (lcop_numel(out, &total)) return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  if (total == 0) return LC_OK;
  int is64 = a->dtype == LC_DT_INT64, is32 = a->dtype == LC_DT_INT32;
  size_t es = is64 ? sizeof(int64_t) : sizeof(float);
  row_fn f = is64 ? op->i64 : is32 ? op->i32 : op->f32;
  if (f == div_i64 || f == div_i32) {
    size_t nb;
    if (lcop_numel(b, &nb)) return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
    for (size_t i = 0; i < nb; i++)
      if (is64 ? ((const int64_t *)b->data)[i] == 0 : ((const int32_t *)b->data)[i] == 0)
        return lcop_fail(n, LC_ERR_INVALID_ARG, "integer division by zero");
  }
  bin_job j = {f, es, out->data, a->data, b->data, {0}, 0, 0, 0, 0};
  lcop_bcast_plan(a, b, out, &j.p);
  int last = j.p.nd - 1;
  j.len = (size_t)j.p.dims[last];
  j.mode = (j.p.sa[last] == 0 ? 1 : 0) | (j.p.sb[last] == 0 ? 2 : 0);
  size_t rows = total / j.len;
  /* Tasks of >= BIN_CHUNK elements: whole rows, or pieces of one long row. */
  j.split = j.len > BIN_CHUNK ? (j.len + BIN_CHUNK - 1) / BIN_CHUNK : 1;
  j.rows_per = j.split > 1 ? 1 : (BIN_CHUNK + j.len - 1) / j.len;
  size_t tasks = j.split > 1 ? rows * j.split : (rows + j.rows_per - 1) / j.rows_per;
  if (total < BIN_PAR_MIN || lcop_threads(x) < 2 || tasks < 2) {
    j.split = 1, j.rows_per = rows;
    bin_task(&j, 0, 0);
  } else {
    lcop_parallel(x, tasks, bin_task, &j);
  }
  return LC_OK;
}

const lc_op_impl lcop_binary_ops[] = {
    {"Add", binary_infer, NULL, NULL, binary_run, 1, NULL},   {"Sub", binary_infer, NULL, NULL, binary_run, 1, NULL},
    {"Mul", binary_infer, NULL, NULL, binary_run, 1, NULL},   {"Div", binary_infer, NULL, NULL, binary_run, 1, NULL},
    {"PRelu", binary_infer, NULL, NULL, binary_run, 1, NULL}, {"Pow", binary_infer, NULL, NULL, binary_run, 1, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
