/* Indexing copies, any dtype: Concat, Split, Slice (strided view copy), Gather. */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "model/ops/ops_plan.h"
#include "util/checked.h"

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---------------------------------------------------------------- Concat */

static lc_status concat_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1 << 16, n_out, 1, 1);
  if (s) return s;
  for (int i = 0; i < n_in; i++)
    if ((s = lcop_need_any(n, in, n_in, i))) return s;
  int r = in[0]->ndim, axis;
  if ((s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis))) return s;
  int64_t dims[LC_MAX_DIMS];
  memcpy(dims, in[0]->dims, sizeof(int64_t) * r);
  dims[axis] = 0;
  for (int i = 0; i < n_in; i++) {
    if (in[i]->ndim != r || in[i]->dtype != in[0]->dtype)
      return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: rank or dtype differs", i);
    for (int d = 0; d < r; d++)
      if (d != axis && in[i]->dims[d] != dims[d])
        return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: dim %d is %lld, expected %lld", i, d,
                         (long long)in[i]->dims[d], (long long)dims[d]);
    if (!lc_add_i64(dims[axis], in[i]->dims[axis], &dims[axis])) return lcop_fail(n, LC_ERR_OVERFLOW, "overflow");
  }
  return lcop_set_out(n, out, in[0]->dtype, r, dims);
}

static lc_status concat_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *x) {
  int r = in[0]->ndim, axis;
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis);
  if (s) return s;
  size_t es = lc_dtype_size(in[0]->dtype), outer, inner;
  lcop_dims_prod(out->dims, 0, axis, &outer);
  lcop_dims_prod(out->dims, axis + 1, r, &inner);
  char *o = out->data;
  for (size_t b = 0; b < outer; b++)
    for (int i = 0; i < n_in; i++) {
      size_t chunk = (size_t)in[i]->dims[axis] * inner * es;
      if (chunk) memcpy(o, (const char *)in[i]->data + b * chunk, chunk);
      o += chunk;
    }
  return LC_OK;
}

/* ---------------------------------------------------------------- Split */

lc_status lcop_split_sizes(const lc_node *n, const lc_tensor *const *in, int n_in, int n_out, int *axis,
                             int64_t *sz) {
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), in[0]->ndim, axis);
  if (s) return s;
  int64_t dim = in[0]->dims[*axis], tot = 0, v[LC_MAX_DIMS * 32];
  size_t nv = 0;
  const int64_t *av;
  if (lcop_has(in, n_in, 1)) {
    if ((s = lcop_read_ints(n, in[1], "split", v, sizeof v / sizeof v[0], &nv))) return s;
  } else if ((nv = lc_attr_ints(n, "split", &av)) > 0) {
    if (nv > sizeof v / sizeof v[0]) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many splits");
    memcpy(v, av, nv * sizeof(int64_t));
  }
  if (nv) {
    if (nv != (size_t)n_out) return lcop_fail(n, LC_ERR_INVALID_ARG, "split has %zu values for %d outputs", nv, n_out);
    for (size_t i = 0; i < nv; i++) {
      if (v[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "negative split");
      /* tot stays <= dim, so the sum cannot overflow */
      if (v[i] > dim - tot)
        return lcop_fail(n, LC_ERR_INVALID_ARG, "splits sum past dim %lld", (long long)dim);
      sz[i] = v[i];
      tot += v[i];
    }
    if (tot != dim) return lcop_fail(n, LC_ERR_INVALID_ARG, "splits sum to %lld, dim is %lld", (long long)tot, (long long)dim);
    return LC_OK;
  }
  int64_t parts = lc_attr_int(n, "num_outputs", n_out);
  if (parts != n_out) return lcop_fail(n, LC_ERR_INVALID_ARG, "num_outputs %lld != %d outputs", (long long)parts, n_out);
  int64_t chunk = (dim + parts - 1) / parts; /* opset 18: last chunk may be smaller */
  for (int i = 0; i < n_out; i++) {
    sz[i] = dim - tot < chunk ? dim - tot : chunk;
    tot += sz[i];
  }
  if (tot != dim) return lcop_fail(n, LC_ERR_INVALID_ARG, "cannot split %lld into %d parts", (long long)dim, n_out);
  return LC_OK;
}

#define MAX_SPLIT 256

static lc_status split_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 2, n_out, 1, MAX_SPLIT);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  int axis;
  int64_t sz[MAX_SPLIT], dims[LC_MAX_DIMS];
  if (!s) s = lcop_split_sizes(n, in, n_in, n_out, &axis, sz);
  if (s) return s;
  memcpy(dims, in[0]->dims, sizeof(int64_t) * in[0]->ndim);
  for (int i = 0; i < n_out && !s; i++) {
    dims[axis] = sz[i];
    s = lcop_set_out(n, &out[i], in[0]->dtype, in[0]->ndim, dims);
  }
  return s;
}

static lc_status split_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  int axis;
  int64_t sz[MAX_SPLIT];
  lc_status s = lcop_split_sizes(n, in, n_in, n_out, &axis, sz);
  if (s) return s;
  size_t es = lc_dtype_size(in[0]->dtype), outer, inner;
  lcop_dims_prod(in[0]->dims, 0, axis, &outer);
  lcop_dims_prod(in[0]->dims, axis + 1, in[0]->ndim, &inner);
  const char *src = in[0]->data;
  for (size_t b = 0; b < outer; b++)
    for (int i = 0; i < n_out; i++) {
      size_t chunk = (size_t)sz[i] * inner * es;
      if (chunk) memcpy((char *)out[i].data + b * chunk, src, chunk);
      src += chunk;
    }
  return LC_OK;
}

/* ---------------------------------------------------------------- Slice */


lc_status lcop_slice_plan(const lc_node *n, const lc_tensor *const *in, int n_in, slice_plan *p) {
  const lc_tensor *t = in[0];
  int r = t->ndim;
  int64_t starts[LC_MAX_DIMS], ends[LC_MAX_DIMS], axes[LC_MAX_DIMS], steps[LC_MAX_DIMS];
  size_t ns, ne, na = 0, nst = 0;
  lc_status s;
  if (n_in >= 3) { /* opset >= 10: inputs */
    if (!in[1] || !in[2]) return lcop_fail(n, LC_ERR_INVALID_ARG, "starts and ends are required");
    if ((s = lcop_read_ints(n, in[1], "starts", starts, LC_MAX_DIMS, &ns))) return s;
    if ((s = lcop_read_ints(n, in[2], "ends", ends, LC_MAX_DIMS, &ne))) return s;
    if (lcop_has(in, n_in, 3) && (s = lcop_read_ints(n, in[3], "axes", axes, LC_MAX_DIMS, &na))) return s;
    if (lcop_has(in, n_in, 4) && (s = lcop_read_ints(n, in[4], "steps", steps, LC_MAX_DIMS, &nst))) return s;
  } else { /* opset 1: attributes */
    const int64_t *a;
    ns = lc_attr_ints(n, "starts", &a);
    if (ns > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many starts");
    if (ns) memcpy(starts, a, ns * sizeof(int64_t));
    ne = lc_attr_ints(n, "ends", &a);
    if (ne > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many ends");
    if (ne) memcpy(ends, a, ne * sizeof(int64_t));
    na = lc_attr_ints(n, "axes", &a);
    if (na > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "too many axes");
    if (na) memcpy(axes, a, na * sizeof(int64_t));
  }
  if (ne != ns || (na && na != ns) || (nst && nst != ns))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "starts/ends/axes/steps lengths differ");
  int64_t ist[LC_MAX_DIMS], start[LC_MAX_DIMS], step[LC_MAX_DIMS];
  int used[LC_MAX_DIMS] = {0};
  lcop_contiguous_strides(t, ist);
  for (int i = 0; i < r; i++) start[i] = 0, step[i] = 1, p->dims[i] = t->dims[i];
  for (size_t i = 0; i < ns; i++) {
    int a;
    if ((s = lcop_axis(n, na ? axes[i] : (int64_t)i, r, &a))) return s;
    if (used[a]) return lcop_fail(n, LC_ERR_INVALID_ARG, "repeated axis %d", a);
    used[a] = 1;
    int64_t d = t->dims[a], st = nst ? steps[i] : 1, b = starts[i], e = ends[i];
    if (st == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "step 0 on axis %d", a);
    if (b < 0) b = b < -d ? -1 : b + d; /* keeps INT64_MIN from overflowing */
    if (e < 0) e = e < -d ? -1 : e + d;
    if (st > 0) {
      b = clamp64(b, 0, d);
      e = clamp64(e, 0, d);
      p->dims[a] = e > b ? (e - b - 1) / st + 1 : 0;
    } else {
      b = clamp64(b, 0, d - 1);
      e = clamp64(e, -1, d - 1);
      p->dims[a] = b > e ? (b - e - 1) / -st + 1 : 0;
    }
    if (st > d || st < -d) st = st > 0 ? (d > 0 ? d : 1) : -(d > 0 ? d : 1); /* takes <= 1 element: same result */
    start[a] = b;
    step[a] = st;
  }
  p->off = 0;
  for (int i = 0; i < r; i++) {
    p->st[i] = step[i] * ist[i];
    if (p->dims[i] > 0) p->off += start[i] * ist[i];
  }
  return LC_OK;
}

static lc_status slice_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 5, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  slice_plan p;
  if (!s) s = lcop_slice_plan(n, in, n_in, &p);
  if (s) return s;
  return lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, p.dims);
}

static lc_status slice_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  slice_plan p;
  lc_status s = lcop_slice_plan(n, in, n_in, &p);
  if (s) return s;
  if (out->nbytes) lcop_strided_copy(out->data, in[0]->data, lc_dtype_size(in[0]->dtype), out->ndim, p.dims, p.st, p.off);
  return LC_OK;
}

/* ---------------------------------------------------------------- Gather */

static lc_status gather_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = lcop_need_any(n, in, n_in, 0);
  if (!s) s = lcop_need_any(n, in, n_in, 1);
  if (s) return s;
  if (in[1]->dtype != LC_DT_INT64 && in[1]->dtype != LC_DT_INT32)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "indices must be int64 or int32");
  int r = in[0]->ndim, axis, nd = 0;
  if (r < 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "data must have rank >= 1");
  if ((s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis))) return s;
  if (r - 1 + in[1]->ndim > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_UNSUPPORTED, "output rank too large");
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < axis; i++) dims[nd++] = in[0]->dims[i];
  for (int i = 0; i < in[1]->ndim; i++) dims[nd++] = in[1]->dims[i];
  for (int i = axis + 1; i < r; i++) dims[nd++] = in[0]->dims[i];
  return lcop_set_out(n, out, in[0]->dtype, nd, dims);
}

static lc_status gather_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                            int n_out, lc_exec_ctx *x) {
  int r = in[0]->ndim, axis;
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), r, &axis);
  if (s) return s;
  size_t es = lc_dtype_size(in[0]->dtype), outer, inner, ni;
  lcop_dims_prod(in[0]->dims, 0, axis, &outer);
  lcop_dims_prod(in[0]->dims, axis + 1, r, &inner);
  lcop_numel(in[1], &ni);
  int64_t d = in[0]->dims[axis];
  size_t row = inner * es;
  const char *src = in[0]->data;
  char *o = out->data;
  for (size_t j = 0; j < ni; j++) { /* validate once, before writing */
    int64_t k = in[1]->dtype == LC_DT_INT64 ? ((const int64_t *)in[1]->data)[j] : ((const int32_t *)in[1]->data)[j];
    if (k < -d || k >= d) return lcop_fail(n, LC_ERR_INVALID_ARG, "index %lld out of range [-%lld, %lld)", (long long)k, (long long)d, (long long)d);
  }
  for (size_t b = 0; b < outer; b++)
    for (size_t j = 0; j < ni; j++) {
      int64_t k = in[1]->dtype == LC_DT_INT64 ? ((const int64_t *)in[1]->data)[j] : ((const int32_t *)in[1]->data)[j];
      if (k < 0) k += d;
      if (row) memcpy(o, src + (b * (size_t)d + (size_t)k) * row, row);
      o += row;
    }
  return LC_OK;
}

const lc_op_impl lcop_index_ops[] = {
    {"Concat", concat_infer, NULL, NULL, concat_run, 0, NULL},
    {"Split", split_infer, NULL, NULL, split_run, 0, NULL},
    {"Slice", slice_infer, NULL, NULL, slice_run, 0, NULL},
    {"Gather", gather_infer, NULL, NULL, gather_run, 0, NULL},
    {NULL, NULL, NULL, NULL, NULL, 0, NULL}};
