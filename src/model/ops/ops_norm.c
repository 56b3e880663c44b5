/* Softmax, LogSoftmax, LayerNormalization, InstanceNormalization, GroupNormalization.
 * Sums are kept in double (8 partial sums, so the loops still vectorize): the float sum of ~18k exps
 * was 4e-4 off. Rows are split over the context's threads. Error bounds (tested against an fp64
 * reference over >= 20k entries in tests/test_ops_numerics.c), u = 2^-24:
 *   Softmax     |y - ref| <= (4e-7 + u |x - max|) * ref + 2e-38 (the stored exp 1.2e-7, exps added
 *               in float trees of 8 before the double sum 3u, the double sum ~n * 2^-53, the scale
 *               u; x - max is rounded in float, as the reference does; 2e-38: exps below e^-87 are
 *               taken as 0)
 *   LogSoftmax  |y - ref| <= u * (|ref| + max|x - max|) + 2e-7 (the log of the double sum off by
 *               the exp's 1.2e-7 and the exps' float arguments)
 * The rows run on the context's kernel table (kernels/vmath.h: the AVX2 one or portable C).
 *   *Norm       |y - ref| <= 4u * (|(x - mean) * invstd * scale| + |bias|) (mean and variance
 *               two-pass in double are exact to ~n * 2^-53; the rest is three float roundings) */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "util/alloc.h"

#define NORM_PAR_MIN 32768 /* elements: below this one thread beats waking the pool */

/* Sum of (x - m)^2 in double. */
static double ssq_d(const float *x, size_t n, double m) {
  double acc[8] = {0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) {
      double d = x[i + k] - m;
      acc[k] += d * d;
    }
  for (; i < n; i++) {
    double d = x[i] - m;
    acc[i & 7] += d * d;
  }
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* ---------------------------------------------------------------- Softmax, LogSoftmax */

/* opset >= 13: along `axis` (default -1). opset < 13: the input flattened to 2-D at `axis`
 * (default 1), over each row. Without an opset hint (_opset) we assume >= 13. */
lc_status lcop_softmax_geom(const lc_node *n, const lc_tensor *t, size_t *outer, size_t *len, size_t *inner) {
  int64_t opset = lcop_opset(n);
  int old = opset > 0 && opset < 13;
  int r = t->ndim, axis;
  if (r == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "input must have rank >= 1");
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", old ? 1 : -1), r, &axis);
  if (s) return s;
  lcop_dims_prod(t->dims, 0, axis, outer);
  if (old) {
    lcop_dims_prod(t->dims, axis, r, len);
    *inner = 1;
  } else {
    *len = (size_t)t->dims[axis];
    lcop_dims_prod(t->dims, axis + 1, r, inner);
  }
  return LC_OK;
}

static lc_status softmax_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  size_t a, b, c;
  if (!s) s = lcop_softmax_geom(n, in[0], &a, &b, &c);
  return s ? s : lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

typedef struct sm_job {
  const float *X;
  float *Y;
  size_t outer, len, inner, nblk;
  int log;
  const lc_vmath_kernels *vm;
} sm_job;

#define SM_BLK 64 /* inner positions per task when softmax is not over the last axis */

/* Positions [i0, i0 + w) of one outer slice, softmax along a strided axis. */
static void sm_cols(const sm_job *j, size_t o, size_t i0, size_t w) {
  const float *X = j->X + o * j->len * j->inner + i0;
  float *Y = j->Y + o * j->len * j->inner + i0;
  float m[SM_BLK];
  double s[SM_BLK] = {0};
  int nan[SM_BLK] = {0};
  for (size_t i = 0; i < w; i++) m[i] = -INFINITY;
  for (size_t k = 0; k < j->len; k++)
    for (size_t i = 0; i < w; i++) {
      float v = X[k * j->inner + i];
      nan[i] |= v != v || v == INFINITY || v == -INFINITY;
      m[i] = v > m[i] ? v : m[i];
    }
  for (size_t k = 0; k < j->len; k++)
    for (size_t i = 0; i < w; i++) {
      float e = lc_exp_fast(X[k * j->inner + i] - m[i]);
      s[i] += e;
      if (!j->log) Y[k * j->inner + i] = e;
    }
  for (size_t i = 0; i < w; i++) nan[i] |= m[i] == -INFINITY; /* as sm_row: all NaN */
  for (size_t k = 0; k < j->len; k++)
    for (size_t i = 0; i < w; i++) {
      if (nan[i]) Y[k * j->inner + i] = NAN;
      else if (j->log) Y[k * j->inner + i] = (float)((double)X[k * j->inner + i] - (log(s[i]) + m[i]));
      else Y[k * j->inner + i] = (float)(Y[k * j->inner + i] / s[i]);
    }
}

static void sm_task(void *arg, size_t task, int thread) {
  const sm_job *j = arg;
  (void)thread;
  if (j->inner == 1) {
    j->vm->softmax_row(j->X + task * j->len, j->Y + task * j->len, j->len, j->log);
    return;
  }
  size_t o = task / j->nblk, i0 = task % j->nblk * SM_BLK;
  sm_cols(j, o, i0, j->inner - i0 < SM_BLK ? j->inner - i0 : SM_BLK);
}

static lc_status softmax_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                             int n_out, lc_exec_ctx *x) {
  sm_job j = {in[0]->data, out->data, 0, 0, 0, 0, n->op_type[0] == 'L', lcop_vm(x)};
  lc_status s = lcop_softmax_geom(n, in[0], &j.outer, &j.len, &j.inner);
  if (s || !out->nbytes) return s;
  j.nblk = (j.inner + SM_BLK - 1) / SM_BLK;
  size_t tasks = j.inner == 1 ? j.outer : j.outer * j.nblk;
  if (out->nbytes / 4 < NORM_PAR_MIN || lcop_threads(x) < 2 || tasks < 2) {
    for (size_t t = 0; t < tasks; t++) sm_task(&j, t, 0);
  } else {
    lcop_parallel(x, tasks, sm_task, &j);
  }
  return LC_OK;
}

/* ---------------------------------------------------------------- normalizations */

/* rows of len elements; row r is normalized with its mean / variance, then y = y * scale + bias
 * where scale and bias advance every `every` elements (scalar per row: every = len; their index
 * is (r % srows) * (len / every) + i / every). */
typedef struct nm_job {
  const float *X, *scale, *bias;
  float *Y, *mean_out, *inv_out;
  size_t rows, len, every, srows;
  float eps;
  double (*sum_d)(const float *x, size_t n);
} nm_job;

static void nm_task(void *arg, size_t r, int thread) {
  const nm_job *j = arg;
  (void)thread;
  const float *x = j->X + r * j->len;
  float *y = j->Y + r * j->len;
  double mean = j->len ? j->sum_d(x, j->len) / (double)j->len : 0.0;
  double var = j->len ? ssq_d(x, j->len, mean) / (double)j->len : 0.0;
  double inv = 1.0 / sqrt(var + (double)j->eps);
  if (j->mean_out) j->mean_out[r] = (float)mean;
  if (j->inv_out) j->inv_out[r] = (float)inv;
  size_t per = j->len / j->every, base = (r % j->srows) * per;
  float fi = (float)inv;
  /* x - mean in double, then rounded: a float mean would cost u * |mean| / std of the result */
  if (j->every == 1) { /* LayerNormalization: scale and bias per element */
    const float *g = j->scale + base, *b = j->bias ? j->bias + base : NULL;
    if (b) for (size_t i = 0; i < j->len; i++) y[i] = (float)(x[i] - mean) * fi * g[i] + b[i];
    else for (size_t i = 0; i < j->len; i++) y[i] = (float)(x[i] - mean) * fi * g[i];
    return;
  }
  for (size_t c = 0; c < per; c++) {
    size_t k = base + c;
    float g = j->scale[k], b = j->bias ? j->bias[k] : 0.0f;
    const float *xs = x + c * j->every;
    float *ys = y + c * j->every;
    for (size_t i = 0; i < j->every; i++) ys[i] = (float)(xs[i] - mean) * fi * g + b;
  }
}

static void nm_run_rows(nm_job *j, lc_exec_ctx *x) {
  if (j->len == 0) return;
  j->sum_d = lcop_vm(x)->sum_d;
  if (j->rows * j->len < NORM_PAR_MIN || lcop_threads(x) < 2 || j->rows < 2) {
    for (size_t r = 0; r < j->rows; r++) nm_task(j, r, 0);
  } else {
    lcop_parallel(x, j->rows, nm_task, j);
  }
}

/* LayerNormalization: over dims[axis:], scale / bias of that many elements (or one). */
static lc_status ln_geom(const lc_node *n, const lc_tensor *const *in, int n_in, int *axis, size_t *rows, size_t *len) {
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", -1), in[0]->ndim, axis);
  if (s) return s;
  lcop_dims_prod(in[0]->dims, 0, *axis, rows);
  lcop_dims_prod(in[0]->dims, *axis, in[0]->ndim, len);
  for (int i = 1; i < 3 && i < n_in; i++) {
    size_t c;
    if (!in[i]) continue;
    if (in[i]->dtype != LC_DT_FLOAT || lcop_numel(in[i], &c) || (c != *len && c != 1))
      return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s must be float32 with %zu elements (the normalized shape)",
                       i == 1 ? "Scale" : "B", *len);
  }
  return LC_OK;
}

static lc_status ln_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 3, n_out, 1, 3);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (!s) s = lcop_need(n, in, n_in, 1, LC_DT_FLOAT);
  int axis;
  size_t rows, len;
  if (!s) s = ln_geom(n, in, n_in, &axis, &rows, &len);
  if (!s) s = lcop_set_out(n, &out[0], LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
  if (s) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = i < axis ? in[0]->dims[i] : 1;
  for (int k = 1; !s && k < n_out; k++) s = lcop_set_out(n, &out[k], LC_DT_FLOAT, in[0]->ndim, dims);
  return s;
}

/* A one-element scale or bias is broadcast: copied out to len elements in scratch. */
static lc_status widen(const lc_node *n, const lc_tensor *t, size_t len, float **buf, const float **v) {
  size_t c;
  *v = t ? t->data : NULL;
  if (!t || lcop_numel(t, &c) || c == len) return LC_OK;
  *buf = lc_malloc((len ? len : 1) * sizeof(float));
  if (!*buf) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  for (size_t i = 0; i < len; i++) (*buf)[i] = *(const float *)t->data;
  *v = *buf;
  return LC_OK;
}

static lc_status ln_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                        lc_exec_ctx *x) {
  int axis;
  size_t rows, len;
  lc_status s = ln_geom(n, in, n_in, &axis, &rows, &len);
  if (s) return s;
  float *ws = NULL, *wb = NULL;
  nm_job j = {in[0]->data, NULL, NULL, out[0].data, n_out > 1 ? out[1].data : NULL, n_out > 2 ? out[2].data : NULL,
              rows, len, 1, 1, lc_attr_float(n, "epsilon", 1e-5f), NULL};
  if (!(s = widen(n, in[1], len, &ws, &j.scale)) && !(s = widen(n, n_in > 2 ? in[2] : NULL, len, &wb, &j.bias)))
    nm_run_rows(&j, x);
  lc_free(ws);
  lc_free(wb);
  return s;
}

/* InstanceNormalization ([N, C, ...], scale and B of [C]) and GroupNormalization (num_groups G;
 * scale / bias of [C], or of [G] before opset 21). */
static lc_status in_geom(const lc_node *n, const lc_tensor *const *in, nm_job *j) {
  const lc_tensor *t = in[0];
  if (t->ndim < 2) return lcop_fail(n, LC_ERR_INVALID_ARG, "X must have rank >= 2");
  size_t N = (size_t)t->dims[0], C = (size_t)t->dims[1], sp, cs, cb;
  lcop_dims_prod(t->dims, 2, t->ndim, &sp);
  int group = n->op_type[0] == 'G';
  int64_t G = group ? lc_attr_int(n, "num_groups", 0) : (int64_t)C;
  if (G <= 0 || C % (size_t)G) return lcop_fail(n, LC_ERR_INVALID_ARG, "num_groups %lld does not divide %zu channels", (long long)G, C);
  if (in[1]->dtype != LC_DT_FLOAT || in[2]->dtype != LC_DT_FLOAT || lcop_numel(in[1], &cs) || lcop_numel(in[2], &cb) ||
      cs != cb)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "scale and bias must be float32 of one size");
  int64_t op = lcop_opset(n);
  int per_group = group && cs == (size_t)G && (cs != C || (op > 0 && op < 21));
  if (cs != C && !per_group) return lcop_fail(n, LC_ERR_INVALID_ARG, "scale has %zu elements, expected %zu", cs, C);
  j->rows = N * (size_t)G;
  j->len = C / (size_t)G * sp;
  j->every = per_group ? j->len : sp;
  j->srows = (size_t)G;
  j->eps = lc_attr_float(n, "epsilon", 1e-5f);
  j->scale = in[1]->data, j->bias = in[2]->data;
  return LC_OK;
}

static lc_status in_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 3, 3, n_out, 1, 1);
  for (int i = 0; !s && i < 3; i++) s = lcop_need(n, in, n_in, i, LC_DT_FLOAT);
  nm_job j;
  if (!s) s = in_geom(n, in, &j);
  return s ? s : lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

static lc_status in_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                        lc_exec_ctx *x) {
  nm_job j = {0};
  lc_status s = in_geom(n, in, &j);
  if (s) return s;
  j.X = in[0]->data, j.Y = out->data;
  nm_run_rows(&j, x);
  return LC_OK;
}

const lc_op_impl lcop_norm_ops[] = {
    {"Softmax", softmax_infer, NULL, NULL, softmax_run, 1, NULL},
    {"LogSoftmax", softmax_infer, NULL, NULL, softmax_run, 1, NULL},
    {"LayerNormalization", ln_infer, NULL, NULL, ln_run, 1, NULL},
    {"InstanceNormalization", in_infer, NULL, NULL, in_run, 1, NULL},
    {"GroupNormalization", in_infer, NULL, NULL, in_run, 1, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
