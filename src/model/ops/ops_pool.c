/* MaxPool, AveragePool (1-D and 2-D), GlobalAveragePool, GlobalMaxPool, ReduceMean/Sum/Max/Min.
 * Pool windows are clipped by per-row / per-column tap ranges computed once per call, so the
 * inner loops carry no bounds checks. */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/alloc.h"
#include "util/checked.h"

static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t div_ceil(int64_t a, int64_t b) { return -div_floor(-a, b); }

/* Resolves kernel/strides/dilations/pads/auto_pad/ceil_mode for a 3-D or 4-D input. */
lc_status lcop_pool_geometry(const lc_node *n, const lc_tensor *x, int is_max, pool_geom *g) {
  int sp = x->ndim - 2;
  if (sp < 1 || sp > 2) return lcop_fail(n, LC_ERR_UNSUPPORTED, "only 1-D and 2-D pooling (input rank %d)", x->ndim);
  const int64_t *ks, *ss = NULL, *ds = NULL, *ps = NULL;
  size_t nk = lc_attr_ints(n, "kernel_shape", &ks);
  size_t ns = lc_attr_ints(n, "strides", &ss), nd = lc_attr_ints(n, "dilations", &ds);
  size_t np = lc_attr_ints(n, "pads", &ps);
  if (nk != (size_t)sp) return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel_shape must have %d values", sp);
  if ((ns && ns != (size_t)sp) || (nd && nd != (size_t)sp) || (np && np != (size_t)(2 * sp)))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "strides/dilations/pads length does not match rank");
  const char *ap = lc_attr_string(n, "auto_pad", "NOTSET");
  int ceil_mode = (int)lc_attr_int(n, "ceil_mode", 0);
  g->N = x->dims[0];
  g->C = x->dims[1];
  g->H = sp == 2 ? x->dims[2] : 1;
  g->W = x->dims[sp + 1];
  int64_t in[2] = {g->H, g->W}, out[2];
  for (int i = 0; i < 2; i++) {
    int a = i - (2 - sp); /* attribute index, < 0 for the dummy H of 1-D */
    g->k[i] = a >= 0 ? ks[a] : 1;
    g->s[i] = a >= 0 && ns ? ss[a] : 1;
    g->d[i] = a >= 0 && nd ? ds[a] : 1;
    g->pb[i] = a >= 0 && np ? ps[a] : 0;
    g->pe[i] = a >= 0 && np ? ps[a + sp] : 0;
    if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1 || g->k[i] > (1 << 20) || g->s[i] > (1 << 20) ||
        g->d[i] > (1 << 20) || g->pb[i] < 0 || g->pe[i] < 0 || g->pb[i] > (1 << 20) || g->pe[i] > (1 << 20))
      return lcop_fail(n, LC_ERR_INVALID_ARG, "bad kernel/stride/dilation/pad");
    int64_t ek = (g->k[i] - 1) * g->d[i] + 1;
    if (strcmp(ap, "NOTSET") == 0) {
      int64_t span = in[i] + g->pb[i] + g->pe[i] - ek;
      if (span < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel larger than padded input");
      out[i] = (ceil_mode ? div_ceil(span, g->s[i]) : span / g->s[i]) + 1;
      if (ceil_mode && (out[i] - 1) * g->s[i] >= in[i] + g->pb[i]) out[i]--; /* last window starts in the pad */
    } else if (strcmp(ap, "VALID") == 0) {
      if (in[i] < ek) return lcop_fail(n, LC_ERR_INVALID_ARG, "kernel larger than input");
      out[i] = (in[i] - ek) / g->s[i] + 1;
      g->pb[i] = g->pe[i] = 0;
    } else if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
      out[i] = div_ceil(in[i], g->s[i]);
      int64_t tot = (out[i] - 1) * g->s[i] + ek - in[i];
      if (tot < 0) tot = 0;
      g->pb[i] = ap[5] == 'U' ? tot / 2 : tot - tot / 2;
      g->pe[i] = tot - g->pb[i];
    } else {
      return lcop_fail(n, LC_ERR_UNSUPPORTED, "auto_pad '%s'", ap);
    }
  }
  (void)is_max;
  g->OH = out[0];
  g->OW = out[1];
  return LC_OK;
}

static lc_status pool_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 2);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (s) return s;
  if (n_out > 1) return lcop_fail(n, LC_ERR_UNSUPPORTED, "the Indices output is not supported");
  pool_geom g;
  s = lcop_pool_geometry(n, in[0], n->op_type[0] == 'M', &g);
  if (s) return s;
  int64_t dims[4] = {g.N, g.C, g.OH, g.OW};
  if (in[0]->ndim == 3) dims[2] = g.OW;
  return lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, dims);
}

/* Valid tap range [lo, hi) of each output position along one axis, and the tap count inside
 * the declared padding (for count_include_pad). */
static void tap_ranges(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, int64_t *lo,
                       int64_t *hi, int64_t *padcnt) {
  for (int64_t o = 0; o < out; o++) {
    int64_t start = o * s - pb, l = 0, h = k, pc = 0;
    while (l < k && start + l * d < 0) l++;
    while (h > l && start + (h - 1) * d >= in) h--;
    for (int64_t t = 0; t < k; t++) {
      int64_t p = start + t * d;
      pc += p >= -pb && p < in + pe;
    }
    lo[o] = l, hi[o] = h, padcnt[o] = pc;
  }
}

/* Output range [lo, hi) for which column tap j reads inside the input: 0 <= o*s - pb + j*d < in. */
void lcop_tap_range(int64_t in, int64_t out, int64_t s, int64_t off, int64_t *lo, int64_t *hi) {
  int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t h = in - off <= 0 ? 0 : (in - off + s - 1) / s;
  *lo = l < out ? l : out;
  *hi = h < out ? h : out;
  if (*hi < *lo) *hi = *lo;
}

/* MaxPool, row-wise: for each output row and each valid (kernel row, kernel column) tap, one
 * branch-free loop over the output columns that tap reaches. 3x3 s2 on 1x64x112x112: 9.5 ms
 * per-window with fmaxf (a libm call), 0.49 ms this way. */
typedef struct max_job {
  const pool_geom *g;
  const float *X;
  float *Y;
  const int64_t *hlo, *hhi, *jlo, *jhi;
} max_job;

static void max_task(void *arg, size_t task, int thread) {
  const max_job *j = arg;
  const pool_geom *g = j->g;
  const float *X = j->X + (int64_t)task * g->H * g->W;
  float *Y = j->Y + (int64_t)task * g->OH * g->OW;
  const int64_t sw = g->s[1];
  (void)thread;
  for (int64_t oh = 0; oh < g->OH; oh++) {
    float *y = Y + oh * g->OW;
    for (int64_t ow = 0; ow < g->OW; ow++) y[ow] = -INFINITY;
    for (int64_t i = j->hlo[oh]; i < j->hhi[oh]; i++) {
      const float *row = X + (oh * g->s[0] - g->pb[0] + i * g->d[0]) * g->W;
      for (int64_t k = 0; k < g->k[1]; k++) {
        int64_t off = k * g->d[1] - g->pb[1];
        for (int64_t ow = j->jlo[k]; ow < j->jhi[k]; ow++) {
          float v = row[ow * sw + off];
          y[ow] = v > y[ow] ? v : y[ow];
        }
      }
    }
  }
}

/* AveragePool, per output row: vm->pool_row sums the window's valid input rows and k[1] column
 * taps of them and scales by 1 / count, reading the input itself when no column tap leaves it;
 * otherwise the rows are first summed (vector adds) into a row with zeros where the pads and a
 * ceil_mode overhang are. No loop checks bounds. The counts exclude or include the declared pads
 * (tap_ranges). PP-OCR rec's 1x480x3x80 k 3x2 s 3x2: 0.067 -> ~0.02 ms. */
typedef struct avg_job {
  const pool_geom *g;
  const float *X;
  float *Y, *inv, *rows; /* inv: [OH][OW]; rows: one padded row of tl floats per thread, or NULL */
  size_t tl;
  const int64_t *hlo, *hhi;
  const lc_vmath_kernels *vm;
} avg_job;

static void avg_task(void *arg, size_t task, int thread) {
  const avg_job *j = arg;
  const pool_geom *g = j->g;
  const float *X = j->X + (int64_t)task * g->H * g->W;
  float *Y = j->Y + (int64_t)task * g->OH * g->OW;
  size_t W = (size_t)g->W, OW = (size_t)g->OW, s = (size_t)g->s[1], k = (size_t)g->k[1], d = (size_t)g->d[1];
  size_t stride = (size_t)(g->d[0] * g->W);
  for (int64_t oh = 0; oh < g->OH; oh++) {
    int64_t i = j->hlo[oh];
    size_t nr = (size_t)(j->hhi[oh] - i);
    const float *x0 = X + (oh * g->s[0] - g->pb[0] + i * g->d[0]) * g->W;
    float *y = Y + oh * g->OW;
    if (nr == 0) { /* every row of the window in the pads */
      memset(y, 0, OW * sizeof(float));
    } else if (!j->rows) {
      j->vm->pool_row(y, x0, OW, nr, stride, s, k, d, j->inv + oh * g->OW);
    } else {
      float *t = j->rows + (size_t)thread * j->tl;
      j->vm->rows_sum(t + g->pb[1], x0, W, nr, stride);
      j->vm->pool_row(y, t, OW, 1, 0, s, k, d, j->inv + oh * g->OW);
    }
  }
}

/* Everything a pool's run needs besides the data, for one input shape: built once by init (at the
 * start of a call that came in cold, geometry, attribute lookups and two small allocations cost
 * 7-9 us, more than rec's 1x480x3x80 pool itself) and per call only for a shape init did not see. */
typedef struct pool_plan {
  pool_geom g;
  int is_max, ndim;
  int64_t dims[4];
  size_t tl; /* floats per padded row (avg with a column tap outside the input), else 0 */
  int64_t *hlo, *hhi, *jlo, *jhi;
  float *inv; /* avg: [OH][OW] 1 / window count */
} pool_plan;

/* The per-thread padded rows a run allocates: checked at plan time and again at run time, where
 * the model's memory cap leaves less. */
static lc_status rows_budget(const lc_node *n, const pool_plan *p, lc_exec_ctx *x) {
  size_t nr = 0;
  if (!lc_mul_sz((size_t)lcop_threads(x), p->tl, &nr) || nr > SIZE_MAX / sizeof(float))
    return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  if (lcop_budget(x) && nr * sizeof(float) > lcop_budget(x))
    return lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of scratch", nr * sizeof(float));
  return LC_OK;
}

static lc_status plan_make(const lc_node *n, const lc_tensor *in, lc_exec_ctx *x, pool_plan **out) {
  pool_plan p = {0};
  p.is_max = n->op_type[0] == 'M';
  lc_status s = lcop_pool_geometry(n, in, p.is_max, &p.g);
  if (s) return s;
  const pool_geom *g = &p.g;
  int incl = (int)lc_attr_int(n, "count_include_pad", 0);
  size_t oh = (size_t)g->OH, ow = (size_t)g->OW, W = (size_t)g->W;
  /* the padded row, when a column tap leaves the input: pb[1] zeros, the input row, zeros up to
   * the last tap of the last column */
  size_t last = ow ? (ow - 1) * (size_t)g->s[1] + (size_t)(g->k[1] - 1) * (size_t)g->d[1] : 0;
  p.tl = p.is_max || (g->pb[1] == 0 && last < W) ? 0 : lc_max_sz((size_t)g->pb[1] + W, last + 1);
  size_t nt = oh * 3 + ow * 3 + (size_t)g->k[1] * 2, nf = 0, bytes = 0;
  if ((!p.is_max && !lc_mul_sz(oh, ow, &nf)) || !lc_mul_sz(nt, sizeof(int64_t), &bytes) ||
      !lc_add_sz(bytes, sizeof p, &bytes) || nf > SIZE_MAX / sizeof(float) || !lc_add_sz(bytes, nf * sizeof(float), &bytes))
    return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  lc_status b = rows_budget(n, &p, x);
  if (b) return b;
  if (lcop_budget(x) && bytes > lcop_budget(x)) return lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of tables", bytes);
  pool_plan *q = lc_malloc(bytes);
  if (!q) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  *q = p;
  q->ndim = in->ndim;
  memcpy(q->dims, in->dims, (size_t)in->ndim * sizeof(int64_t));
  int64_t *hlo = (int64_t *)(q + 1), *hhi = hlo + oh, *hpc = hhi + oh, *wlo = hpc + oh, *whi = wlo + ow, *wpc = whi + ow;
  q->hlo = hlo, q->hhi = hhi, q->jlo = wpc + ow, q->jhi = q->jlo + g->k[1];
  q->inv = (float *)(q->jhi + g->k[1]);
  tap_ranges(g->H, g->OH, g->k[0], g->s[0], g->d[0], g->pb[0], g->pe[0], hlo, hhi, hpc);
  tap_ranges(g->W, g->OW, g->k[1], g->s[1], g->d[1], g->pb[1], g->pe[1], wlo, whi, wpc);
  for (int64_t k = 0; k < g->k[1]; k++) lcop_tap_range(g->W, g->OW, g->s[1], k * g->d[1] - g->pb[1], &q->jlo[k], &q->jhi[k]);
  for (size_t r = 0; r < nf / (ow ? ow : 1); r++)
    for (size_t c = 0; c < ow; c++) {
      int64_t cnt = (incl ? hpc[r] : hhi[r] - hlo[r]) * (incl ? wpc[c] : whi[c] - wlo[c]);
      q->inv[r * ow + c] = cnt > 0 ? 1.0f / (float)cnt : 0.0f;
    }
  *out = q;
  return LC_OK;
}

static lc_status pool_init(const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out, int n_out,
                           lc_exec_ctx *x, void **state) {
  (void)n_in, (void)out, (void)n_out;
  return plan_make(n, in[0], x, (pool_plan **)state);
}

static void pool_fini(void *state) { lc_free(state); }

static lc_status pool_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  (void)n_in, (void)n_out;
  if (out->nbytes == 0) return LC_OK;
  pool_plan *p = st, *own = NULL;
  if (!p || p->ndim != in[0]->ndim || memcmp(p->dims, in[0]->dims, (size_t)p->ndim * sizeof(int64_t))) {
    lc_status s = plan_make(n, in[0], x, &own);
    if (s) return s;
    p = own;
  }
  const pool_geom *g = &p->g;
  float *rows = NULL; /* calloc: the rows' pads stay zero */
  lc_status s = p->tl ? rows_budget(n, p, x) : LC_OK;
  if (!s && p->tl && !(rows = lc_calloc((size_t)lcop_threads(x) * p->tl, sizeof(float))))
    s = lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  if (s) {
    lc_free(own);
    return s;
  }
  if (p->is_max) {
    max_job j = {g, in[0]->data, out->data, p->hlo, p->hhi, p->jlo, p->jhi};
    lcop_parallel(x, (size_t)(g->N * g->C), max_task, &j);
  } else {
    avg_job j = {g, in[0]->data, out->data, p->inv, rows, p->tl, p->hlo, p->hhi, lcop_vm(x)};
    lcop_parallel(x, (size_t)(g->N * g->C), avg_task, &j);
  }
  lc_free(rows);
  lc_free(own);
  return LC_OK;
}

/* ---------------------------------------------------------------- reductions */

/* Sums (Mean, Sum, L1, L2, SumSquare, LogSumExp) and products accumulate in double: for n terms
 * the accumulated error is <= n * 2^-53 * sum|x| (~1e-12 relative at 20k terms), so the float
 * result is within 1 ulp (2^-24 relative) of the exact one, plus a 2^-24 relative for
 * the final sqrt / log / division (tests/test_ops_numerics.c checks this against fp64). */
typedef enum red_kind { RED_MEAN, RED_SUM, RED_L1, RED_L2, RED_SSQ, RED_LSE, RED_PROD, RED_MAX, RED_MIN } red_kind;

static red_kind red_kind_of(const char *op) {
  static const struct { const char *n; red_kind k; } T[] = {
      {"ReduceSum", RED_SUM}, {"ReduceMax", RED_MAX}, {"GlobalMaxPool", RED_MAX}, {"ReduceMin", RED_MIN},
      {"ReduceL1", RED_L1}, {"ReduceL2", RED_L2}, {"ReduceSumSquare", RED_SSQ}, {"ReduceLogSumExp", RED_LSE},
      {"ReduceProd", RED_PROD}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (!strcmp(op, T[i].n)) return T[i].k;
  return RED_MEAN;
}

/* Marks reduced axes in mask[rank]; axes from the attribute or input 1 (opset 18, ReduceSum 13). */
lc_status lcop_red_axes(const lc_node *n, const lc_tensor *const *in, int n_in, int *mask, int *keep) {
  int rank = in[0]->ndim;
  int global = strncmp(n->op_type, "Global", 6) == 0;
  int64_t axes[LC_MAX_DIMS];
  size_t na = 0;
  memset(mask, 0, sizeof(int) * LC_MAX_DIMS);
  *keep = global ? 1 : (int)lc_attr_int(n, "keepdims", 1);
  if (global) {
    if (rank < 2) return lcop_fail(n, LC_ERR_INVALID_ARG, "input rank must be >= 2");
    for (int i = 2; i < rank; i++) mask[i] = 1;
    return LC_OK;
  }
  if (lcop_has(in, n_in, 1)) {
    lc_status s = lcop_read_ints(n, in[1], "axes", axes, LC_MAX_DIMS, &na);
    if (s) return s;
  } else {
    const int64_t *av;
    na = lc_attr_ints(n, "axes", &av);
    if (na > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many axes");
    if (na) memcpy(axes, av, na * sizeof(int64_t));
  }
  if (na == 0) {
    if (lc_attr_int(n, "noop_with_empty_axes", 0)) return LC_OK;
    for (int i = 0; i < rank; i++) mask[i] = 1;
    return LC_OK;
  }
  for (size_t i = 0; i < na; i++) {
    int a;
    lc_status s = lcop_axis(n, axes[i], rank, &a);
    if (s) return s;
    mask[a] = 1;
  }
  return LC_OK;
}

static lc_status red_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  if (s) return s;
  int mask[LC_MAX_DIMS], keep, nd = 0;
  if ((s = lcop_red_axes(n, in, n_in, mask, &keep))) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) {
    if (mask[i] && in[0]->dims[i] == 0 && red_kind_of(n->op_type) >= RED_MAX)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "max/min over an empty axis");
    if (!mask[i]) dims[nd++] = in[0]->dims[i];
    else if (keep) dims[nd++] = 1;
  }
  return lcop_set_out(n, out, LC_DT_FLOAT, nd, dims);
}

static inline double red_term(red_kind k, float x) {
  return k == RED_L1 ? fabs((double)x) : k == RED_L2 || k == RED_SSQ ? (double)x * x : k == RED_LSE ? exp((double)x) : x;
}

/* ReduceSum / ReduceMean / GlobalAveragePool over trailing axes: each output is the double sum
 * of one contiguous run (vm->sum_d), outputs split over the threads when the input is large. */
#define RED_PAR_MIN 65536
#define RED_TASK 16 /* outputs per task */

typedef struct sum_job {
  const float *X;
  float *Y;
  size_t len, rows;
  int mean;
  double (*sum_d)(const float *x, size_t n);
} sum_job;

static void sum_task(void *arg, size_t task, int thread) {
  const sum_job *j = arg;
  size_t r1 = (task + 1) * RED_TASK < j->rows ? (task + 1) * RED_TASK : j->rows;
  (void)thread;
  for (size_t r = task * RED_TASK; r < r1; r++) {
    double v = j->sum_d(j->X + r * j->len, j->len);
    j->Y[r] = (float)(j->mean ? (j->len ? v / (double)j->len : NAN) : v);
  }
}

static lc_status red_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                         int n_out, lc_exec_ctx *x) {
  int mask[LC_MAX_DIMS], keep;
  lc_status s = lcop_red_axes(n, in, n_in, mask, &keep);
  if (s) return s;
  const lc_tensor *t = in[0];
  red_kind k = red_kind_of(n->op_type);
  size_t total, ototal;
  if (lcop_numel(t, &total) || lcop_numel(out, &ototal)) return lcop_fail(n, LC_ERR_OVERFLOW, "size overflows");
  float *Y = out->data;
  const float *X = t->data;
  int minmax = k >= RED_MAX;
  const lc_vmath_kernels *vm = lcop_vm(x);
  int r = t->ndim, first = r;
  while (first > 0 && mask[first - 1]) first--;
  int suffix = first < r;
  for (int i = 0; i < first; i++) suffix &= !mask[i];
  if (suffix && k <= RED_SUM && ototal) { /* the reduced axes are the trailing ones */
    sum_job j = {X, Y, total / ototal, ototal, k == RED_MEAN, vm->sum_d};
    size_t tasks = (ototal + RED_TASK - 1) / RED_TASK;
    if (total < RED_PAR_MIN || lcop_threads(x) < 2 || tasks < 2)
      for (size_t q = 0; q < tasks; q++) sum_task(&j, q, 0);
    else
      lcop_parallel(x, tasks, sum_task, &j);
    return LC_OK;
  }
  double *acc = NULL;
  if (!minmax && ototal) {
    if (lcop_budget(x) && ototal * sizeof(double) > lcop_budget(x))
      return lcop_fail(n, LC_ERR_BUDGET, "needs %zu bytes of scratch", ototal * sizeof(double));
    if (!(acc = lc_malloc(ototal * sizeof(double)))) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < ototal; i++) acc[i] = k == RED_PROD ? 1.0 : 0.0;
  } else {
    for (size_t i = 0; i < ototal; i++) Y[i] = k == RED_MAX ? -INFINITY : INFINITY;
  }
  /* Output stride of each input dim (0 where reduced). */
  int64_t ost[LC_MAX_DIMS], idx[LC_MAX_DIMS] = {0};
  int64_t a = 1;
  for (int i = r - 1; i >= 0; i--) {
    ost[i] = mask[i] ? 0 : a;
    if (!mask[i]) a *= t->dims[i];
  }
  size_t len = r ? (size_t)t->dims[r - 1] : 1, rows = len ? total / len : 0;
  int inner_red = r ? mask[r - 1] : 1;
  size_t off = 0;
  for (size_t row = 0; row < rows; row++) {
    const float *xr = X + row * len;
    if (minmax && inner_red) {
      float v = Y[off];
      if (k == RED_MAX) for (size_t j = 0; j < len; j++) v = xr[j] > v || xr[j] != xr[j] ? xr[j] : v;
      else for (size_t j = 0; j < len; j++) v = xr[j] < v || xr[j] != xr[j] ? xr[j] : v;
      Y[off] = v;
    } else if (minmax) {
      float *yr = Y + off;
      if (k == RED_MAX) for (size_t j = 0; j < len; j++) yr[j] = xr[j] > yr[j] || xr[j] != xr[j] ? xr[j] : yr[j];
      else for (size_t j = 0; j < len; j++) yr[j] = xr[j] < yr[j] || xr[j] != xr[j] ? xr[j] : yr[j];
    } else if (inner_red) {
      double v[4] = {0, 0, 0, 0};
      if (k == RED_PROD) {
        v[0] = acc[off];
        for (size_t j = 0; j < len; j++) v[0] *= xr[j];
        acc[off] = v[0];
      } else if (k <= RED_SUM) {
        acc[off] += vm->sum_d(xr, len);
      } else {
        for (size_t j = 0; j < len; j++) v[j & 3] += red_term(k, xr[j]);
        acc[off] += (v[0] + v[2]) + (v[1] + v[3]);
      }
    } else {
      double *ar = acc + off;
      if (k == RED_PROD) for (size_t j = 0; j < len; j++) ar[j] *= xr[j];
      else if (k <= RED_SUM) for (size_t j = 0; j < len; j++) ar[j] += xr[j];
      else for (size_t j = 0; j < len; j++) ar[j] += red_term(k, xr[j]);
    }
    for (int d = r - 2; d >= 0; d--) {
      off += (size_t)ost[d];
      if (++idx[d] < t->dims[d]) break;
      off -= (size_t)(ost[d] * t->dims[d]);
      idx[d] = 0;
    }
  }
  if (acc) {
    double cnt = ototal ? (double)(total / ototal) : 1.0;
    for (size_t i = 0; i < ototal; i++) {
      double v = acc[i];
      Y[i] = (float)(k == RED_MEAN ? (total ? v / cnt : NAN) : k == RED_L2 ? sqrt(v) : k == RED_LSE ? log(v) : v);
    }
    lc_free(acc);
  }
  return LC_OK;
}

const lc_op_impl lcop_pool_ops[] = {
    {"MaxPool", pool_infer, pool_init, pool_fini, pool_run, 0, NULL},
    {"AveragePool", pool_infer, pool_init, pool_fini, pool_run, 0, NULL},
    {"GlobalAveragePool", red_infer, NULL, NULL, red_run, 0, NULL},
    {"GlobalMaxPool", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceMean", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceSum", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceMax", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceMin", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceL1", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceL2", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceSumSquare", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceLogSumExp", red_infer, NULL, NULL, red_run, 0, NULL},
    {"ReduceProd", red_infer, NULL, NULL, red_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
