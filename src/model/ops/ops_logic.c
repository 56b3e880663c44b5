/* Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual) to bool, logic (Not, And, Or,
 * Xor), Where, variadic Min / Max / Sum / Mean, and Floor / Ceil / Round. These carry the integer
 * and bool tensors of index subgraphs (masks, anchor selection), so they take float, int64, int32,
 * uint8 and bool where ONNX allows, with multidirectional broadcasting over up to three inputs. */
#include <math.h>
#include <string.h>

#include "model/ops/ops_internal.h"

/* ---------------------------------------------------------------- n-ary broadcasting */

lc_status lcop_nbcast_plan(const lc_node *n, const lc_tensor *const *t, int k, nbcast *p) {
  int r = 0;
  for (int i = 0; i < k; i++) r = t[i]->ndim > r ? t[i]->ndim : r;
  p->k = k;
  p->nd = r;
  for (int d = 0; d < r; d++) {
    int64_t v = 1;
    for (int i = 0; i < k; i++) {
      int id = d - (r - t[i]->ndim);
      int64_t e = id >= 0 ? t[i]->dims[id] : 1;
      if (e != 1 && v != 1 && e != v) return lcop_fail(n, LC_ERR_INVALID_ARG, "shapes do not broadcast (dim %d)", d);
      if (e != 1) v = e;
    }
    p->dims[d] = v;
  }
  for (int i = 0; i < k; i++) {
    int64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) {
      int id = d - (r - t[i]->ndim);
      int64_t e = id >= 0 ? t[i]->dims[id] : 1;
      p->st[i][d] = e == 1 ? 0 : acc;
      acc *= e;
    }
  }
  return LC_OK;
}

void lcop_nbcast_rows(const nbcast *p, void (*row)(void *job, size_t o, const size_t *off, const int *inc, size_t len),
                      void *job) {
  size_t len = p->nd ? (size_t)p->dims[p->nd - 1] : 1, rows = 1, off[LCOP_NB_MAX] = {0};
  int inc[LCOP_NB_MAX];
  int64_t idx[LC_MAX_DIMS] = {0};
  for (int d = 0; d + 1 < p->nd; d++) rows *= (size_t)p->dims[d];
  if (!len) return;
  for (int i = 0; i < p->k; i++) inc[i] = p->nd ? (int)p->st[i][p->nd - 1] : 0;
  for (size_t r = 0; r < rows; r++) {
    row(job, r * len, off, inc, len);
    for (int d = p->nd - 2; d >= 0; d--) {
      for (int i = 0; i < p->k; i++) off[i] += (size_t)p->st[i][d];
      if (++idx[d] < p->dims[d]) break;
      for (int i = 0; i < p->k; i++) off[i] -= (size_t)(p->st[i][d] * p->dims[d]);
      idx[d] = 0;
    }
  }
}

/* ---------------------------------------------------------------- element access */

static double get_d(const void *p, lc_dtype t, size_t i) {
  switch (t) {
  case LC_DT_FLOAT: return ((const float *)p)[i];
  case LC_DT_DOUBLE: return ((const double *)p)[i];
  case LC_DT_INT64: return (double)((const int64_t *)p)[i];
  case LC_DT_INT32: return ((const int32_t *)p)[i];
  case LC_DT_INT8: return ((const int8_t *)p)[i];
  default: return ((const uint8_t *)p)[i];
  }
}

static int64_t get_i(const void *p, lc_dtype t, size_t i) {
  switch (t) {
  case LC_DT_INT64: return ((const int64_t *)p)[i];
  case LC_DT_INT32: return ((const int32_t *)p)[i];
  case LC_DT_INT8: return ((const int8_t *)p)[i];
  default: return ((const uint8_t *)p)[i];
  }
}

static int is_int(lc_dtype t) {
  return t == LC_DT_INT64 || t == LC_DT_INT32 || t == LC_DT_INT8 || t == LC_DT_UINT8 || t == LC_DT_BOOL;
}

/* ---------------------------------------------------------------- comparisons and logic */

typedef enum lg_kind { LG_EQ, LG_LT, LG_GT, LG_LE, LG_GE, LG_AND, LG_OR, LG_XOR } lg_kind;

static int lg_kind_of(const char *op) {
  static const char *const T[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  for (int i = 0; i < 8; i++)
    if (!strcmp(T[i], op)) return i;
  return -1;
}

typedef struct lg_job {
  lg_kind k;
  const lc_tensor *a, *b;
  uint8_t *o;
} lg_job;

static int cmp_f(lg_kind k, double x, double y) {
  switch (k) {
  case LG_EQ: return x == y;
  case LG_LT: return x < y;
  case LG_GT: return x > y;
  case LG_LE: return x <= y;
  default: return x >= y;
  }
}

static int cmp_i(lg_kind k, int64_t x, int64_t y) {
  switch (k) {
  case LG_EQ: return x == y;
  case LG_LT: return x < y;
  case LG_GT: return x > y;
  case LG_LE: return x <= y;
  case LG_GE: return x >= y;
  case LG_AND: return x && y;
  case LG_OR: return x || y;
  default: return !x != !y;
  }
}

static void lg_row(void *arg, size_t o, const size_t *off, const int *inc, size_t len) {
  const lg_job *j = arg;
  const lc_tensor *a = j->a, *b = j->b;
  size_t ia = off[0], ib = off[1];
  if (a->dtype == LC_DT_FLOAT && inc[0] == 1 && inc[1] <= 1) { /* the common mask case */
    const float *x = (const float *)a->data + ia, *y = (const float *)b->data + ib;
    for (size_t i = 0; i < len; i++) j->o[o + i] = (uint8_t)cmp_f(j->k, x[i], y[inc[1] ? i : 0]);
    return;
  }
  int in = is_int(a->dtype);
  for (size_t i = 0; i < len; i++, ia += (size_t)inc[0], ib += (size_t)inc[1])
    j->o[o + i] = (uint8_t)(in ? cmp_i(j->k, get_i(a->data, a->dtype, ia), get_i(b->data, b->dtype, ib))
                               : cmp_f(j->k, get_d(a->data, a->dtype, ia), get_d(b->data, b->dtype, ib)));
}

static lc_status lg_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  if (s) return s;
  int k = lg_kind_of(n->op_type);
  lc_dtype t = in[0]->dtype;
  if (t != in[1]->dtype) return lcop_fail(n, LC_ERR_INVALID_ARG, "input dtypes differ (%s, %s)", lc_dtype_name(t), lc_dtype_name(in[1]->dtype));
  if (k >= LG_AND ? t != LC_DT_BOOL : t == LC_DT_FLOAT16)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s not supported", lc_dtype_name(t));
  nbcast p;
  if ((s = lcop_nbcast_plan(n, in, 2, &p))) return s;
  return lcop_set_out(n, out, LC_DT_BOOL, p.nd, p.dims);
}

static lc_status lg_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                        lc_exec_ctx *x) {
  nbcast p;
  lc_status s = lcop_nbcast_plan(n, in, 2, &p);
  if (s || !out->nbytes) return s;
  lg_job j = {(lg_kind)lg_kind_of(n->op_type), in[0], in[1], out->data};
  lcop_nbcast_rows(&p, lg_row, &j);
  return LC_OK;
}

static lc_status not_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_BOOL);
  return s ? s : lcop_set_out(n, out, LC_DT_BOOL, in[0]->ndim, in[0]->dims);
}

static lc_status not_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                         lc_exec_ctx *x) {
  const uint8_t *a = in[0]->data;
  uint8_t *o = out->data;
  for (size_t i = 0; i < out->nbytes; i++) o[i] = !a[i];
  return LC_OK;
}

/* ---------------------------------------------------------------- Where */

typedef struct where_job {
  const uint8_t *c;
  const char *x, *y;
  char *o;
  size_t es;
} where_job;

static void where_row(void *arg, size_t o, const size_t *off, const int *inc, size_t len) {
  const where_job *j = arg;
  size_t ic = off[0], ix = off[1], iy = off[2], es = j->es;
  if (es == 4 && inc[0] == 1 && inc[1] == 1 && inc[2] == 1) {
    const float *x = (const float *)j->x + ix, *y = (const float *)j->y + iy;
    const uint8_t *c = j->c + ic;
    float *d = (float *)j->o + o;
    for (size_t i = 0; i < len; i++) d[i] = c[i] ? x[i] : y[i];
    return;
  }
  for (size_t i = 0; i < len; i++, ic += (size_t)inc[0], ix += (size_t)inc[1], iy += (size_t)inc[2])
    memcpy(j->o + (o + i) * es, j->c[ic] ? j->x + ix * es : j->y + iy * es, es);
}

static lc_status where_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 3, 3, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_BOOL);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 2);
  if (s) return s;
  if (in[1]->dtype != in[2]->dtype) return lcop_fail(n, LC_ERR_INVALID_ARG, "X and Y dtypes differ");
  nbcast p;
  if ((s = lcop_nbcast_plan(n, in, 3, &p))) return s;
  return lcop_set_out(n, out, in[1]->dtype, p.nd, p.dims);
}

static lc_status where_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  nbcast p;
  lc_status s = lcop_nbcast_plan(n, in, 3, &p);
  if (s || !out->nbytes) return s;
  where_job j = {in[0]->data, in[1]->data, in[2]->data, out->data, lc_dtype_size(out->dtype)};
  lcop_nbcast_rows(&p, where_row, &j);
  return LC_OK;
}

/* ---------------------------------------------------------------- Min, Max, Sum, Mean */

typedef enum vr_kind { VR_MIN, VR_MAX, VR_SUM, VR_MEAN } vr_kind;

typedef struct vr_job {
  vr_kind k;
  lc_dtype t;
  char *o;             /* accumulator: the output (in 0: itself, contiguous) */
  const char *b;
  int first;           /* b is copied, not combined */
} vr_job;

/* Wrapping integer sums through uint64 (signed overflow is UB); float Min/Max propagate NaN as
 * the ONNX reference does. */
#define VR_LOOP(T, SUM)                                                                                 \
  do {                                                                                                  \
    T *o = (T *)j->o + oo;                                                                              \
    const T *b = (const T *)j->b + ib;                                                                  \
    for (size_t i = 0; i < len; i++, b += inc[1]) {                                                     \
      T v = *b;                                                                                         \
      if (j->first) o[i] = v;                                                                           \
      else if (j->k == VR_MIN) o[i] = v < o[i] || v != v ? v : o[i];                                    \
      else if (j->k == VR_MAX) o[i] = v > o[i] || v != v ? v : o[i];                                    \
      else o[i] = SUM;                                                                                  \
    }                                                                                                   \
  } while (0)

static void vr_row(void *arg, size_t oo, const size_t *off, const int *inc, size_t len) {
  const vr_job *j = arg;
  size_t ib = off[1];
  if (j->t == LC_DT_FLOAT) VR_LOOP(float, o[i] + v);
  else if (j->t == LC_DT_INT64) VR_LOOP(int64_t, (int64_t)((uint64_t)o[i] + (uint64_t)v));
  else if (j->t == LC_DT_INT32) VR_LOOP(int32_t, (int32_t)(uint32_t)((uint32_t)o[i] + (uint32_t)v));
  else if (j->t == LC_DT_INT8) VR_LOOP(int8_t, o[i]); /* Min / Max only */
  else VR_LOOP(uint8_t, o[i]);
}

static lc_status vr_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, LCOP_NB_MAX, n_out, 1, 1);
  for (int i = 0; !s && i < n_in; i++) s = lcop_need_any(n, in, n_in, i);
  if (s) return s;
  lc_dtype t = in[0]->dtype;
  int mean = !strcmp(n->op_type, "Mean"), sum = mean || !strcmp(n->op_type, "Sum");
  int ok = t == LC_DT_FLOAT || (!mean && (t == LC_DT_INT64 || t == LC_DT_INT32)) ||
           (!sum && (t == LC_DT_INT8 || t == LC_DT_UINT8));
  if (!ok)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s not supported (float32%s)", lc_dtype_name(t),
                     mean ? "" : sum ? ", int64, int32" : ", int64, int32, int8, uint8");
  for (int i = 1; i < n_in; i++)
    if (in[i]->dtype != t) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d dtype differs", i);
  nbcast p;
  if ((s = lcop_nbcast_plan(n, in, n_in, &p))) return s;
  return lcop_set_out(n, out, t, p.nd, p.dims);
}

static lc_status vr_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out,
                        lc_exec_ctx *x) {
  static const char *const K[] = {"Min", "Max", "Sum", "Mean"};
  vr_job j = {VR_MIN, out->dtype, out->data, NULL, 1};
  for (int k = 0; k < 4; k++)
    if (!strcmp(K[k], n->op_type)) j.k = (vr_kind)k;
  if (!out->nbytes) return LC_OK;
  for (int i = 0; i < n_in; i++) {
    const lc_tensor *pair[2] = {out, in[i]};
    nbcast p;
    lc_status s = lcop_nbcast_plan(n, pair, 2, &p);
    if (s) return s;
    j.b = in[i]->data;
    j.first = i == 0;
    lcop_nbcast_rows(&p, vr_row, &j);
  }
  if (j.k == VR_MEAN) {
    float *o = out->data, d = (float)n_in;
    for (size_t i = 0; i < out->nbytes / 4; i++) o[i] /= d;
  }
  return LC_OK;
}

/* ---------------------------------------------------------------- Floor, Ceil, Round */

static lc_status round_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need(n, in, n_in, 0, LC_DT_FLOAT);
  return s ? s : lcop_set_out(n, out, LC_DT_FLOAT, in[0]->ndim, in[0]->dims);
}

static lc_status round_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  const float *a = in[0]->data;
  float *o = out->data;
  size_t cnt = out->nbytes / 4;
  char c = n->op_type[0];
  /* Round is half to even: rintf in the default rounding mode. */
  if (c == 'F') for (size_t i = 0; i < cnt; i++) o[i] = floorf(a[i]);
  else if (c == 'C') for (size_t i = 0; i < cnt; i++) o[i] = ceilf(a[i]);
  else for (size_t i = 0; i < cnt; i++) o[i] = rintf(a[i]);
  return LC_OK;
}

const lc_op_impl lcop_logic_ops[] = {
    {"Equal", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"Less", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"Greater", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"LessOrEqual", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"GreaterOrEqual", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"And", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"Or", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"Xor", lg_infer, NULL, NULL, lg_run, 0, NULL},
    {"Not", not_infer, NULL, NULL, not_run, 1, NULL},
    {"Where", where_infer, NULL, NULL, where_run, 0, NULL},
    {"Min", vr_infer, NULL, NULL, vr_run, 0, NULL},
    {"Max", vr_infer, NULL, NULL, vr_run, 0, NULL},
    {"Sum", vr_infer, NULL, NULL, vr_run, 0, NULL},
    {"Mean", vr_infer, NULL, NULL, vr_run, 0, NULL},
    {"Floor", round_infer, NULL, NULL, round_run, 1, NULL},
    {"Ceil", round_infer, NULL, NULL, round_run, 1, NULL},
    {"Round", round_infer, NULL, NULL, round_run, 1, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
