/* Shape ops, any dtype: Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Shape, Constant, Cast,
 * ConstantOfShape, Expand. Concat / Split / Slice / Gather are in ops_index.c. */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/checked.h"

static lc_status copy_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  lcop_copy(out->data, in[0]->data, out->nbytes);
  return LC_OK;
}

/* ---------------------------------------------------------------- Flatten, Reshape */

static lc_status flatten_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (s) return s;
  int r = in[0]->ndim;
  int64_t axis = lc_attr_int(n, "axis", 1);
  if (axis < -r || axis > r) return lcop_fail(n, LC_ERR_INVALID_ARG, "axis %lld out of range", (long long)axis);
  if (axis < 0) axis += r;
  size_t a, b;
  lcop_dims_prod(in[0]->dims, 0, (int)axis, &a);
  lcop_dims_prod(in[0]->dims, (int)axis, r, &b);
  int64_t dims[2] = {(int64_t)a, (int64_t)b};
  return lcop_set_out(n, out, in[0]->dtype, 2, dims);
}

static lc_status reshape_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  if (s) return s;
  int64_t v[LC_MAX_DIMS];
  size_t nv, total, known = 1;
  if ((s = lcop_read_ints(n, in[1], "shape", v, LC_MAX_DIMS, &nv))) return s;
  int allowzero = (int)lc_attr_int(n, "allowzero", 0), neg = -1;
  lcop_numel(in[0], &total);
  for (size_t i = 0; i < nv; i++) {
    if (v[i] == 0 && !allowzero) {
      if ((int)i >= in[0]->ndim) return lcop_fail(n, LC_ERR_INVALID_ARG, "shape[%zu]=0 has no input dim to copy", i);
      v[i] = in[0]->dims[i];
    }
    if (v[i] == -1) {
      if (neg >= 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "more than one -1 in shape");
      neg = (int)i;
      continue;
    }
    if (v[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "shape[%zu]=%lld", i, (long long)v[i]);
    if (!lc_mul_sz(known, (size_t)v[i], &known)) return lcop_fail(n, LC_ERR_OVERFLOW, "shape overflows");
  }
  if (neg >= 0) {
    if (known == 0 || total % known) return lcop_fail(n, LC_ERR_INVALID_ARG, "cannot infer -1 dim");
    v[neg] = (int64_t)(total / known);
    known = total;
  }
  if (known != total) return lcop_fail(n, LC_ERR_INVALID_ARG, "shape has %zu elements, input %zu", known, total);
  return lcop_set_out(n, out, in[0]->dtype, (int)nv, v);
}

/* ---------------------------------------------------------------- Squeeze, Unsqueeze */

static lc_status read_axes(const lc_node *n, const lc_tensor *const *in, int n_in, int64_t *axes, size_t *na) {
  if (lcop_has(in, n_in, 1)) return lcop_read_ints(n, in[1], "axes", axes, LC_MAX_DIMS, na);
  const int64_t *av;
  *na = lc_attr_ints(n, "axes", &av);
  if (*na > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many axes");
  if (*na) memcpy(axes, av, *na * sizeof(int64_t));
  return LC_OK;
}

static lc_status squeeze_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int64_t axes[LC_MAX_DIMS], dims[LC_MAX_DIMS];
  size_t na;
  if (!s) s = read_axes(n, in, n_in, axes, &na);
  if (s) return s;
  int r = in[0]->ndim, drop[LC_MAX_DIMS] = {0}, nd = 0;
  for (size_t i = 0; i < na; i++) {
    int a;
    if ((s = lcop_axis(n, axes[i], r, &a))) return s;
    if (in[0]->dims[a] != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "axis %d has size %lld, not 1", a, (long long)in[0]->dims[a]);
    drop[a] = 1;
  }
  for (int i = 0; i < r; i++)
    if (!(na ? drop[i] : in[0]->dims[i] == 1)) dims[nd++] = in[0]->dims[i];
  return lcop_set_out(n, out, in[0]->dtype, nd, dims);
}

static lc_status unsqueeze_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out,
                                 int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int64_t axes[LC_MAX_DIMS], dims[LC_MAX_DIMS];
  size_t na;
  if (!s) s = read_axes(n, in, n_in, axes, &na);
  if (s) return s;
  int r = in[0]->ndim + (int)na, add[LC_MAX_DIMS] = {0};
  if (na == 0 || r > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "bad axes count %zu", na);
  for (size_t i = 0; i < na; i++) {
    int a;
    if ((s = lcop_axis(n, axes[i], r, &a))) return s;
    if (add[a]) return lcop_fail(n, LC_ERR_INVALID_ARG, "duplicate axis %d", a);
    add[a] = 1;
  }
  for (int i = 0, j = 0; i < r; i++) dims[i] = add[i] ? 1 : in[0]->dims[j++];
  return lcop_set_out(n, out, in[0]->dtype, r, dims);
}

/* ---------------------------------------------------------------- Transpose */

lc_status lcop_transpose_perm(const lc_node *n, const lc_tensor *t, int *perm) {
  const int64_t *p;
  size_t np = lc_attr_ints(n, "perm", &p);
  int r = t->ndim, seen[LC_MAX_DIMS] = {0};
  if (np && np != (size_t)r) return lcop_fail(n, LC_ERR_INVALID_ARG, "perm has %zu values for rank %d", np, r);
  for (int i = 0; i < r; i++) {
    int64_t v = np ? p[i] : r - 1 - i;
    if (v < 0 || v >= r || seen[v]) return lcop_fail(n, LC_ERR_INVALID_ARG, "perm is not a permutation");
    seen[v] = 1;
    perm[i] = (int)v;
  }
  return LC_OK;
}

static lc_status transpose_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out,
                                 int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int perm[LC_MAX_DIMS];
  if (!s) s = lcop_transpose_perm(n, in[0], perm);
  if (s) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = in[0]->dims[perm[i]];
  return lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, dims);
}

static lc_status transpose_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                               int n_out, lc_exec_ctx *x) {
  int perm[LC_MAX_DIMS];
  lc_status s = lcop_transpose_perm(n, in[0], perm);
  if (s) return s;
  int64_t ist[LC_MAX_DIMS], st[LC_MAX_DIMS];
  lcop_contiguous_strides(in[0], ist);
  for (int i = 0; i < in[0]->ndim; i++) st[i] = ist[perm[i]];
  lcop_strided_copy(out->data, in[0]->data, lc_dtype_size(in[0]->dtype), out->ndim, out->dims, st, 0);
  return LC_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---------------------------------------------------------------- Shape */

static void shape_range(const lc_node *n, const lc_tensor *t, int64_t *b, int64_t *e) {
  int64_t r = t->ndim;
  *b = lc_attr_int(n, "start", 0);
  *e = lc_attr_int(n, "end", r);
  if (*b < 0) *b += r;
  if (*e < 0) *e += r;
  *b = clamp64(*b, 0, r);
  *e = clamp64(*e, *b, r);
}

static lc_status shape_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (s) return s;
  if (!in[0] || in[0]->ndim < 0 || in[0]->ndim > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "bad input");
  int64_t b, e;
  shape_range(n, in[0], &b, &e);
  int64_t dims[1] = {e - b};
  return lcop_set_out(n, out, LC_DT_INT64, 1, dims);
}

/* Reads only in[0]'s dims, so the graph may run it with in[0]->data == NULL (constant folding). */
static lc_status shape_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  int64_t b, e;
  shape_range(n, in[0], &b, &e);
  if (e > b) memcpy(out->data, in[0]->dims + b, (size_t)(e - b) * sizeof(int64_t));
  return LC_OK;
}

/* ---------------------------------------------------------------- Constant */

static lc_status constant_value(const lc_node *n, lc_dtype *dt, int *nd, int64_t *dims, const void **data) {
  const lc_attr *a;
  static const int64_t zero = 0;
  if ((a = lc_node_attr(n, "value")) && a->type == LC_ATTR_TENSOR && a->t) {
    *dt = a->t->dtype;
    *nd = a->t->ndim;
    if (*nd < 0 || *nd > LC_MAX_DIMS || lc_dtype_size(*dt) == 0)
      return lcop_fail(n, LC_ERR_UNSUPPORTED, "value tensor %s / rank %d", lc_dtype_name((lc_dtype)*dt), *nd);
    memcpy(dims, a->t->dims, sizeof(int64_t) * (size_t)*nd);
    *data = a->t->data;
    return LC_OK;
  }
  if ((a = lc_node_attr(n, "value_float")) && a->type == LC_ATTR_FLOAT) {
    *dt = LC_DT_FLOAT, *nd = 0, *data = &a->f;
  } else if ((a = lc_node_attr(n, "value_floats")) && a->type == LC_ATTR_FLOATS) {
    *dt = LC_DT_FLOAT, *nd = 1, dims[0] = (int64_t)a->n, *data = a->floats;
  } else if ((a = lc_node_attr(n, "value_int")) && a->type == LC_ATTR_INT) {
    *dt = LC_DT_INT64, *nd = 0, *data = &a->i;
  } else if ((a = lc_node_attr(n, "value_ints")) && a->type == LC_ATTR_INTS) {
    *dt = LC_DT_INT64, *nd = 1, dims[0] = (int64_t)a->n, *data = a->ints;
  } else {
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "only value, value_float(s) and value_int(s) are supported");
  }
  if (!*data) *data = &zero; /* empty list */
  return LC_OK;
}

static lc_status constant_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 0, 0, n_out, 1, 1);
  lc_dtype dt = LC_DT_UNDEFINED;
  int nd = 0;
  int64_t dims[LC_MAX_DIMS];
  const void *data = NULL;
  if (!s) s = constant_value(n, &dt, &nd, dims, &data);
  if (!s) s = lcop_set_out(n, out, dt, nd, dims);
  if (!s && !data && out->nbytes) s = lcop_fail(n, LC_ERR_INVALID_ARG, "value tensor has no data");
  return s;
}

static lc_status constant_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                              int n_out, lc_exec_ctx *x) {
  lc_dtype dt = LC_DT_UNDEFINED;
  int nd = 0;
  int64_t dims[LC_MAX_DIMS];
  const void *data = NULL;
  lc_status s = constant_value(n, &dt, &nd, dims, &data);
  if (s) return s;
  if (out->nbytes) memcpy(out->data, data, out->nbytes);
  return LC_OK;
}

/* ---------------------------------------------------------------- Cast, ConstantOfShape, Expand */

static int cast_ok(lc_dtype t) {
  return t == LC_DT_FLOAT || t == LC_DT_DOUBLE || t == LC_DT_INT64 || t == LC_DT_INT32 || t == LC_DT_INT8 ||
         t == LC_DT_UINT8 || t == LC_DT_BOOL;
}

static lc_status cast_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (s) return s;
  lc_dtype to = (lc_dtype)lc_attr_int(n, "to", 0);
  if (!cast_ok(in[0]->dtype) || !cast_ok(to))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "cast from %s to %s", lc_dtype_name(in[0]->dtype), lc_dtype_name((lc_dtype)to));
  return lcop_set_out(n, out, to, in[0]->ndim, in[0]->dims);
}

/* Integers go through int64, floats through double; float -> integer saturates (NaN -> 0) because
 * an out-of-range conversion would be undefined behaviour. */
static lc_status cast_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  size_t cnt;
  lcop_numel(in[0], &cnt);
  lc_dtype from = in[0]->dtype, to = out->dtype;
  if (from == to) {
    lcop_copy(out->data, in[0]->data, out->nbytes);
    return LC_OK;
  }
  const void *src = in[0]->data;
  void *dst = out->data;
  int src_float = from == LC_DT_FLOAT || from == LC_DT_DOUBLE;
  for (size_t i = 0; i < cnt; i++) {
    double d = 0.0;
    int64_t v = 0;
    switch (from) {
    case LC_DT_FLOAT: d = ((const float *)src)[i]; break;
    case LC_DT_DOUBLE: d = ((const double *)src)[i]; break;
    case LC_DT_INT64: v = ((const int64_t *)src)[i]; break;
    case LC_DT_INT32: v = ((const int32_t *)src)[i]; break;
    case LC_DT_INT8: v = ((const int8_t *)src)[i]; break;
    default: v = ((const uint8_t *)src)[i]; break; /* UINT8, BOOL */
    }
    if (src_float && to != LC_DT_FLOAT && to != LC_DT_DOUBLE) {
      if (to == LC_DT_BOOL) v = d != 0.0;
      else v = d != d ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
    } else if (!src_float) {
      d = (double)v;
    }
    switch (to) {
    case LC_DT_FLOAT: ((float *)dst)[i] = (float)d; break;
    case LC_DT_DOUBLE: ((double *)dst)[i] = d; break;
    case LC_DT_INT64: ((int64_t *)dst)[i] = v; break;
    case LC_DT_INT32: ((int32_t *)dst)[i] = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); break;
    case LC_DT_INT8: ((int8_t *)dst)[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v); break;
    case LC_DT_BOOL: ((uint8_t *)dst)[i] = v != 0; break;
    default: ((uint8_t *)dst)[i] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v); break;
    }
  }
  return LC_OK;
}

static lc_status cos_value(const lc_node *n, lc_dtype *dt, const void **val) {
  static const float zero = 0.0f;
  const lc_attr *a = lc_node_attr(n, "value");
  *dt = LC_DT_FLOAT, *val = &zero;
  if (!a) return LC_OK;
  size_t cnt;
  if (a->type != LC_ATTR_TENSOR || !a->t || lcop_numel(a->t, &cnt) || cnt != 1 || !a->t->data ||
      lc_dtype_size(a->t->dtype) == 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "value must be a one-element tensor");
  *dt = a->t->dtype, *val = a->t->data;
  return LC_OK;
}

static lc_status cos_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int64_t dims[LC_MAX_DIMS];
  size_t nd;
  lc_dtype dt;
  const void *val;
  if (!s) s = lcop_read_ints(n, in[0], "shape", dims, LC_MAX_DIMS, &nd);
  if (!s) s = cos_value(n, &dt, &val);
  if (!s) s = lcop_set_out(n, out, dt, (int)nd, dims);
  return s;
}

static lc_status cos_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                         int n_out, lc_exec_ctx *x) {
  lc_dtype dt;
  const void *val;
  lc_status s = cos_value(n, &dt, &val);
  if (s) return s;
  size_t es = lc_dtype_size(dt);
  for (size_t off = 0; off < out->nbytes; off += es) memcpy((char *)out->data + off, val, es);
  return LC_OK;
}

static lc_status expand_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  int64_t shp[LC_MAX_DIMS], dims[LC_MAX_DIMS];
  size_t ns;
  if (!s) s = lcop_read_ints(n, in[1], "shape", shp, LC_MAX_DIMS, &ns);
  if (s) return s;
  int r = in[0]->ndim > (int)ns ? in[0]->ndim : (int)ns;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - in[0]->ndim), is = i - (r - (int)ns);
    int64_t a = ia >= 0 ? in[0]->dims[ia] : 1, b = is >= 0 ? shp[is] : 1;
    if (a != b && a != 1 && b != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "shape does not broadcast");
    dims[i] = a == 1 ? b : a;
  }
  return lcop_set_out(n, out, in[0]->dtype, r, dims);
}

static lc_status expand_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *x) {
  if (out->nbytes == 0) return LC_OK;
  int64_t ist[LC_MAX_DIMS], st[LC_MAX_DIMS];
  lcop_contiguous_strides(in[0], ist);
  int r = out->ndim, off = r - in[0]->ndim;
  for (int i = 0; i < r; i++) st[i] = i < off || in[0]->dims[i - off] == 1 ? 0 : ist[i - off];
  lcop_strided_copy(out->data, in[0]->data, lc_dtype_size(out->dtype), r, out->dims, st, 0);
  return LC_OK;
}

const lc_op_impl lcop_shape_ops[] = {
    {"Cast", cast_infer, NULL, NULL, cast_run, 0, NULL},
    {"ConstantOfShape", cos_infer, NULL, NULL, cos_run, 0, NULL},
    {"Expand", expand_infer, NULL, NULL, expand_run, 0, NULL},
    {"Flatten", flatten_infer, NULL, NULL, copy_run, 1, NULL},
    {"Reshape", reshape_infer, NULL, NULL, copy_run, 1, NULL},
    {"Squeeze", squeeze_infer, NULL, NULL, copy_run, 1, NULL},
    {"Unsqueeze", unsqueeze_infer, NULL, NULL, copy_run, 1, NULL},
    {"Transpose", transpose_infer, NULL, NULL, transpose_run, 0, NULL},
    {"Shape", shape_infer, NULL, NULL, shape_run, 0, NULL},
    {"Constant", constant_infer, NULL, NULL, constant_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
