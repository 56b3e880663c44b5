/* Generators and rearrangements: Range, Tile, DepthToSpace, SpaceToDepth, ArgMax / ArgMin, TopK.
 * Range and Tile make outputs whose size comes from values: Range refuses counts past LCOP_GEN_MAX
 * as it computes them, and the graph refuses any output past that, or past the memory cap, before
 * allocating it (fold.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ops/ops_internal.h"
#include "util/alloc.h"
#include "util/checked.h"

/* ---------------------------------------------------------------- Range */

static lc_status range_count(const lc_node *n, const lc_tensor *const *in, int64_t *cnt) {
  for (int i = 0; i < 3; i++) {
    size_t c;
    if (!in[i]->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "input %d must be a constant (its value sets the output size)", i);
    if (lcop_numel(in[i], &c) || c != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d must be a scalar", i);
    if (in[i]->dtype != in[0]->dtype) return lcop_fail(n, LC_ERR_INVALID_ARG, "inputs differ in dtype");
  }
  lc_dtype t = in[0]->dtype;
  if (t == LC_DT_INT64 || t == LC_DT_INT32) {
    int64_t a, b, d;
    a = t == LC_DT_INT64 ? *(const int64_t *)in[0]->data : *(const int32_t *)in[0]->data;
    b = t == LC_DT_INT64 ? *(const int64_t *)in[1]->data : *(const int32_t *)in[1]->data;
    d = t == LC_DT_INT64 ? *(const int64_t *)in[2]->data : *(const int32_t *)in[2]->data;
    if (d == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "delta is 0");
    /* in double: limit - start may not fit int64 */
    double q = ceil(((double)b - (double)a) / (double)d);
    if (q > (double)LCOP_GEN_MAX) return lcop_fail(n, LC_ERR_BUDGET, "%.0f elements (more than 2^31)", q);
    *cnt = q > 0 ? (int64_t)q : 0;
    return LC_OK;
  }
  if (t != LC_DT_FLOAT) return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s", lc_dtype_name(t));
  float a = *(const float *)in[0]->data, b = *(const float *)in[1]->data, d = *(const float *)in[2]->data;
  if (d == 0.0f || !isfinite(a) || !isfinite(b) || !isfinite(d))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "start, limit and delta must be finite and delta nonzero");
  double q = ceil(((double)b - (double)a) / (double)d);
  if (q > (double)LCOP_GEN_MAX) return lcop_fail(n, LC_ERR_BUDGET, "%.0f elements (more than 2^31)", q);
  *cnt = q > 0 ? (int64_t)q : 0;
  return LC_OK;
}

static lc_status range_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 3, 3, n_out, 1, 1);
  for (int i = 0; !s && i < 3; i++) s = lcop_need_any(n, in, n_in, i);
  int64_t cnt;
  if (!s) s = range_count(n, in, &cnt);
  return s ? s : lcop_set_out(n, out, in[0]->dtype, 1, &cnt);
}

static lc_status range_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  int64_t cnt;
  lc_status s = range_count(n, in, &cnt);
  if (s) return s;
  /* start + i * delta, as the reference computes it (no accumulated rounding) */
  if (out->dtype == LC_DT_FLOAT) {
    float a = *(const float *)in[0]->data, d = *(const float *)in[2]->data, *o = out->data;
    for (int64_t i = 0; i < cnt; i++) o[i] = a + (float)i * d;
  } else if (out->dtype == LC_DT_INT64) {
    uint64_t a = (uint64_t)*(const int64_t *)in[0]->data, d = (uint64_t)*(const int64_t *)in[2]->data;
    int64_t *o = out->data;
    for (int64_t i = 0; i < cnt; i++) o[i] = (int64_t)(a + (uint64_t)i * d);
  } else {
    int64_t a = *(const int32_t *)in[0]->data, d = *(const int32_t *)in[2]->data;
    int32_t *o = out->data;
    for (int64_t i = 0; i < cnt; i++) o[i] = (int32_t)(a + i * d); /* |values| < 2^31 by the count */
  }
  return LC_OK;
}

/* ---------------------------------------------------------------- Tile */

static lc_status tile_dims(const lc_node *n, const lc_tensor *const *in, int64_t *dims, int64_t *rep) {
  size_t nr;
  lc_status s = lcop_read_ints(n, in[1], "repeats", rep, LC_MAX_DIMS, &nr);
  if (s) return s;
  if ((int)nr != in[0]->ndim) return lcop_fail(n, LC_ERR_INVALID_ARG, "repeats has %zu values for rank %d", nr, in[0]->ndim);
  for (int i = 0; i < in[0]->ndim; i++) {
    if (rep[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "repeats[%d] = %lld", i, (long long)rep[i]);
    if (!lc_mul_i64(in[0]->dims[i], rep[i], &dims[i])) return lcop_fail(n, LC_ERR_BUDGET, "output dim %d overflows", i);
  }
  return LC_OK;
}

static lc_status tile_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  int64_t dims[LC_MAX_DIMS], rep[LC_MAX_DIMS];
  if (!s) s = tile_dims(n, in, dims, rep);
  return s ? s : lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, dims);
}

/* Output row by output row (innermost dim): the input row, repeated rep[last] times. */
static lc_status tile_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  if (!out->nbytes) return LC_OK;
  const lc_tensor *t = in[0];
  int r = t->ndim;
  size_t es = lc_dtype_size(t->dtype);
  if (r == 0) {
    memcpy(out->data, t->data, es);
    return LC_OK;
  }
  int64_t ist[LC_MAX_DIMS], idx[LC_MAX_DIMS] = {0};
  lcop_contiguous_strides(t, ist);
  size_t len = (size_t)t->dims[r - 1] * es, reps = (size_t)(out->dims[r - 1] / t->dims[r - 1]), rows = 1;
  for (int d = 0; d + 1 < r; d++) rows *= (size_t)out->dims[d];
  char *o = out->data;
  for (size_t row = 0; row < rows; row++) {
    size_t off = 0;
    for (int d = 0; d + 1 < r; d++) off += (size_t)(idx[d] % t->dims[d] * ist[d]);
    for (size_t k = 0; k < reps; k++, o += len) memcpy(o, (const char *)t->data + off * es, len);
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
  return LC_OK;
}

/* ---------------------------------------------------------------- DepthToSpace, SpaceToDepth */

/* The output as a 6-D strided view of the input: dims od, element strides os. */
static lc_status d2s_view(const lc_node *n, const lc_tensor *t, int64_t *od, int64_t *os, int64_t *dims) {
  if (t->ndim != 4) return lcop_fail(n, LC_ERR_INVALID_ARG, "input must be 4-D NCHW");
  int64_t b = lc_attr_int(n, "blocksize", 0), N = t->dims[0], C = t->dims[1], H = t->dims[2], W = t->dims[3];
  if (b < 1 || b > 4096) return lcop_fail(n, LC_ERR_INVALID_ARG, "blocksize %lld", (long long)b);
  const char *mode = lc_attr_string(n, "mode", "DCR");
  int crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR")) return lcop_fail(n, LC_ERR_INVALID_ARG, "mode '%s' (DCR or CRD)", mode);
  if (n->op_type[0] == 'D') {
    if (C % (b * b)) return lcop_fail(n, LC_ERR_INVALID_ARG, "channels %lld not divisible by blocksize^2", (long long)C);
    int64_t c = C / (b * b), sb1 = crd ? b * H * W : b * c * H * W, sb2 = crd ? H * W : c * H * W,
            sc = crd ? b * b * H * W : H * W;
    int64_t d[6] = {N, c, H, b, W, b}, s[6] = {C * H * W, sc, W, sb1, 1, sb2};
    memcpy(od, d, sizeof d), memcpy(os, s, sizeof s);
    dims[0] = N, dims[1] = c, dims[2] = H * b, dims[3] = W * b;
  } else {
    if (H % b || W % b) return lcop_fail(n, LC_ERR_INVALID_ARG, "H and W must be divisible by blocksize");
    int64_t h = H / b, w = W / b;
    int64_t dc[6] = {N, C, b, b, h, w}, sc[6] = {C * H * W, H * W, W, 1, b * W, b};
    int64_t dd[6] = {N, b, b, C, h, w}, sd[6] = {C * H * W, W, 1, H * W, b * W, b};
    memcpy(od, crd ? dc : dd, sizeof dc), memcpy(os, crd ? sc : sd, sizeof sc);
    dims[0] = N, dims[1] = C * b * b, dims[2] = h, dims[3] = w;
  }
  return LC_OK;
}

static lc_status d2s_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int64_t od[6], os[6], dims[4];
  if (!s) s = d2s_view(n, in[0], od, os, dims);
  return s ? s : lcop_set_out(n, out, in[0]->dtype, 4, dims);
}

static lc_status d2s_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                         int n_out, lc_exec_ctx *x) {
  int64_t od[6], os[6], dims[4];
  lc_status s = d2s_view(n, in[0], od, os, dims);
  if (!s && out->nbytes) lcop_strided_copy(out->data, in[0]->data, lc_dtype_size(in[0]->dtype), 6, od, os, 0);
  return s;
}

/* ---------------------------------------------------------------- ArgMax, ArgMin */

static lc_status arg_geom(const lc_node *n, const lc_tensor *t, int *axis, size_t *outer, size_t *len, size_t *inner) {
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), t->ndim, axis);
  if (s) return s;
  if (t->dims[*axis] == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "reduced axis is empty");
  lcop_dims_prod(t->dims, 0, *axis, outer);
  lcop_dims_prod(t->dims, *axis + 1, t->ndim, inner);
  *len = (size_t)t->dims[*axis];
  return LC_OK;
}

static lc_status arg_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (s) return s;
  lc_dtype t = in[0]->dtype;
  if (t != LC_DT_FLOAT && t != LC_DT_INT64 && t != LC_DT_INT32 && t != LC_DT_UINT8)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s", lc_dtype_name(t));
  int axis, nd = 0;
  size_t a, b, c;
  if (in[0]->ndim < 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "input must have rank >= 1");
  if ((s = arg_geom(n, in[0], &axis, &a, &b, &c))) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++)
    if (i != axis) dims[nd++] = in[0]->dims[i];
    else if (lc_attr_int(n, "keepdims", 1)) dims[nd++] = 1;
  return lcop_set_out(n, out, LC_DT_INT64, nd, dims);
}

static lc_status arg_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                         int n_out, lc_exec_ctx *x) {
  int axis;
  size_t outer = 0, len = 0, inner = 0;
  lc_status s = arg_geom(n, in[0], &axis, &outer, &len, &inner);
  if (s) return s;
  int mx = n->op_type[3] == 'M' && n->op_type[4] == 'a', last = (int)lc_attr_int(n, "select_last_index", 0);
  const void *X = in[0]->data;
  lc_dtype t = in[0]->dtype;
  int64_t *Y = out->data;
  for (size_t o = 0; o < outer; o++)
    for (size_t i = 0; i < inner; i++) {
      size_t base = o * len * inner + i, best = 0;
      double bv = 0;
      for (size_t j = 0; j < len; j++) {
        double v = t == LC_DT_FLOAT ? ((const float *)X)[base + j * inner]
                   : t == LC_DT_INT64 ? (double)((const int64_t *)X)[base + j * inner]
                   : t == LC_DT_INT32 ? ((const int32_t *)X)[base + j * inner]
                                      : ((const uint8_t *)X)[base + j * inner];
        int better = j == 0 || (mx ? v > bv : v < bv) || (last && v == bv) || (v != v && bv == bv);
        if (better) best = j, bv = v;
      }
      Y[o * inner + i] = (int64_t)best;
    }
  return LC_OK;
}

/* ---------------------------------------------------------------- TopK */

static lc_status topk_geom(const lc_node *n, const lc_tensor *const *in, int n_in, int *axis, int64_t *k) {
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", -1), in[0]->ndim, axis);
  int64_t v[1];
  size_t nv;
  if (!s && lcop_has(in, n_in, 1)) s = lcop_read_ints(n, in[1], "K", v, 1, &nv);
  else if (!s) v[0] = lc_attr_int(n, "k", -1), nv = 1; /* opset 1 */
  if (s) return s;
  if (nv != 1 || v[0] < 0 || v[0] > in[0]->dims[*axis])
    return lcop_fail(n, LC_ERR_INVALID_ARG, "K must be one value in [0, %lld]", (long long)in[0]->dims[*axis]);
  *k = v[0];
  return LC_OK;
}

static lc_status topk_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 2, 2);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (s) return s;
  lc_dtype t = in[0]->dtype;
  if (t != LC_DT_FLOAT && t != LC_DT_INT64 && t != LC_DT_INT32)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "element type %s", lc_dtype_name(t));
  if (in[0]->ndim < 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "input must have rank >= 1");
  int axis;
  int64_t k, dims[LC_MAX_DIMS];
  if ((s = topk_geom(n, in, n_in, &axis, &k))) return s;
  memcpy(dims, in[0]->dims, sizeof(int64_t) * (size_t)in[0]->ndim);
  dims[axis] = k;
  s = lcop_set_out(n, &out[0], t, in[0]->ndim, dims);
  return s ? s : lcop_set_out(n, &out[1], LC_DT_INT64, in[0]->ndim, dims);
}

typedef struct tk_item {
  double v;
  int64_t i;
} tk_item;

/* NaN sorts as the largest value (as the reference's numpy sort does); ties keep the lower index. */
static int tk_desc(const void *a, const void *b) {
  const tk_item *x = a, *y = b;
  int xn = x->v != x->v, yn = y->v != y->v;
  if (xn != yn) return xn ? -1 : 1;
  if (!xn && x->v != y->v) return x->v > y->v ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static int tk_asc(const void *a, const void *b) {
  const tk_item *x = a, *y = b;
  int xn = x->v != x->v, yn = y->v != y->v;
  if (xn != yn) return xn ? 1 : -1;
  if (!xn && x->v != y->v) return x->v < y->v ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static lc_status topk_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  int axis;
  int64_t k;
  lc_status s = topk_geom(n, in, n_in, &axis, &k);
  if (s || k == 0) return s;
  size_t outer, inner, len = (size_t)in[0]->dims[axis];
  lcop_dims_prod(in[0]->dims, 0, axis, &outer);
  lcop_dims_prod(in[0]->dims, axis + 1, in[0]->ndim, &inner);
  tk_item *it = lc_malloc(len * sizeof(tk_item));
  if (!it) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory for %zu items", len);
  int largest = (int)lc_attr_int(n, "largest", 1);
  lc_dtype t = in[0]->dtype;
  const void *X = in[0]->data;
  for (size_t o = 0; o < outer; o++)
    for (size_t i = 0; i < inner; i++) {
      size_t base = o * len * inner + i, ob = o * (size_t)k * inner + i;
      for (size_t j = 0; j < len; j++) {
        size_t e = base + j * inner;
        it[j].v = t == LC_DT_FLOAT ? ((const float *)X)[e]
                  : t == LC_DT_INT64 ? (double)((const int64_t *)X)[e] : ((const int32_t *)X)[e];
        it[j].i = (int64_t)j;
      }
      qsort(it, len, sizeof *it, largest ? tk_desc : tk_asc);
      for (int64_t j = 0; j < k; j++) {
        size_t e = ob + (size_t)j * inner, src = base + (size_t)it[j].i * inner;
        size_t es = lc_dtype_size(t);
        memcpy((char *)out[0].data + e * es, (const char *)X + src * es, es); /* exact, also for int64 */
        ((int64_t *)out[1].data)[e] = it[j].i;
      }
    }
  lc_free(it);
  return LC_OK;
}

const lc_op_impl lcop_gen_ops[] = {
    {"Range", range_infer, NULL, NULL, range_run, 0, NULL},
    {"Tile", tile_infer, NULL, NULL, tile_run, 0, NULL},
    {"DepthToSpace", d2s_infer, NULL, NULL, d2s_run, 0, NULL},
    {"SpaceToDepth", d2s_infer, NULL, NULL, d2s_run, 0, NULL},
    {"ArgMax", arg_infer, NULL, NULL, arg_run, 0, NULL},
    {"ArgMin", arg_infer, NULL, NULL, arg_run, 0, NULL},
    {"TopK", topk_infer, NULL, NULL, topk_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
