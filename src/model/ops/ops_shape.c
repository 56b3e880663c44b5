/* Data-movement ops, any dtype: Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Concat, Split,
 * Slice, Gather, Shape, Constant. Transpose and Slice share one strided copy. */
#include <string.h>

#include "model/ops/ops_internal.h"
#include "util/checked.h"

static lc_status need_any(const lc_node *n, const lc_tensor *const *in, int n_in, int i) {
  if (!lcop_has(in, n_in, i)) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d is missing", i);
  if (lc_dtype_size(in[i]->dtype) == 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "input %d: dtype %d", i, in[i]->dtype);
  size_t c;
  if (in[i]->ndim < 0 || in[i]->ndim > LC_MAX_DIMS || lcop_numel(in[i], &c))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: bad shape", i);
  return LC_OK;
}

/* Copies an nd-dim strided view (element strides, may be negative) of src into contiguous dst. */
static void strided_copy(void *dst, const void *src, size_t es, int nd, const int64_t *dims_in, const int64_t *st_in,
                         int64_t off) {
  int64_t dims[LC_MAX_DIMS], st[LC_MAX_DIMS];
  int m = 0;
  for (int i = 0; i < nd; i++) {
    if (dims_in[i] == 1) continue;
    if (dims_in[i] == 0) return;
    if (m > 0 && st[m - 1] == st_in[i] * dims_in[i]) { /* outer dim continues the inner one */
      dims[m - 1] *= dims_in[i];
      st[m - 1] = st_in[i];
      continue;
    }
    dims[m] = dims_in[i];
    st[m] = st_in[i];
    m++;
  }
  if (m == 0) {
    memcpy(dst, (const char *)src + off * (int64_t)es, es);
    return;
  }
  int64_t len = dims[m - 1], s = st[m - 1], idx[LC_MAX_DIMS] = {0}, rows = 1;
  for (int i = 0; i < m - 1; i++) rows *= dims[i];
  char *o = dst;
  const char *base = src;
  for (int64_t r = 0; r < rows; r++, o += len * (int64_t)es) {
    const char *p = base + off * (int64_t)es;
    if (s == 1) memcpy(o, p, (size_t)len * es);
    else if (es == 4)
      for (int64_t j = 0; j < len; j++) memcpy(o + j * 4, p + j * s * 4, 4);
    else
      for (int64_t j = 0; j < len; j++) memcpy(o + j * (int64_t)es, p + j * s * (int64_t)es, es);
    for (int d = m - 2; d >= 0; d--) {
      off += st[d];
      if (++idx[d] < dims[d]) break;
      off -= st[d] * dims[d];
      idx[d] = 0;
    }
  }
}

static void contiguous_strides(const lc_tensor *t, int64_t *st) {
  int64_t acc = 1;
  for (int i = t->ndim - 1; i >= 0; i--) st[i] = acc, acc *= t->dims[i];
}

static lc_status copy_run(const lc_node *n, void *st, const lc_tensor *const *in, int n_in, lc_tensor *out,
                          int n_out, lc_exec_ctx *x) {
  lcop_copy(out->data, in[0]->data, out->nbytes);
  return LC_OK;
}

/* ---------------------------------------------------------------- Flatten, Reshape */

static lc_status flatten_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1, n_out, 1, 1);
  if (!s) s = need_any(n, in, n_in, 0);
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
  if (!s) s = need_any(n, in, n_in, 0);
  if (!s) s = need_any(n, in, n_in, 1);
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
  if (!s) s = need_any(n, in, n_in, 0);
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
  if (!s) s = need_any(n, in, n_in, 0);
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

static lc_status transpose_perm(const lc_node *n, const lc_tensor *t, int *perm) {
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
  if (!s) s = need_any(n, in, n_in, 0);
  int perm[LC_MAX_DIMS];
  if (!s) s = transpose_perm(n, in[0], perm);
  if (s) return s;
  int64_t dims[LC_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = in[0]->dims[perm[i]];
  return lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, dims);
}

static lc_status transpose_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                               int n_out, lc_exec_ctx *x) {
  int perm[LC_MAX_DIMS];
  lc_status s = transpose_perm(n, in[0], perm);
  if (s) return s;
  int64_t ist[LC_MAX_DIMS], st[LC_MAX_DIMS];
  contiguous_strides(in[0], ist);
  for (int i = 0; i < in[0]->ndim; i++) st[i] = ist[perm[i]];
  strided_copy(out->data, in[0]->data, lc_dtype_size(in[0]->dtype), out->ndim, out->dims, st, 0);
  return LC_OK;
}

/* ---------------------------------------------------------------- Concat */

static lc_status concat_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 1, 1 << 16, n_out, 1, 1);
  if (s) return s;
  for (int i = 0; i < n_in; i++)
    if ((s = need_any(n, in, n_in, i))) return s;
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

static lc_status split_sizes(const lc_node *n, const lc_tensor *const *in, int n_in, int n_out, int *axis,
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
  if (!s) s = need_any(n, in, n_in, 0);
  int axis;
  int64_t sz[MAX_SPLIT], dims[LC_MAX_DIMS];
  if (!s) s = split_sizes(n, in, n_in, n_out, &axis, sz);
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
  lc_status s = split_sizes(n, in, n_in, n_out, &axis, sz);
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

typedef struct slice_plan {
  int64_t dims[LC_MAX_DIMS], st[LC_MAX_DIMS], off;
} slice_plan;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static lc_status slice_plan_make(const lc_node *n, const lc_tensor *const *in, int n_in, slice_plan *p) {
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
  contiguous_strides(t, ist);
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
  if (!s) s = need_any(n, in, n_in, 0);
  slice_plan p;
  if (!s) s = slice_plan_make(n, in, n_in, &p);
  if (s) return s;
  return lcop_set_out(n, out, in[0]->dtype, in[0]->ndim, p.dims);
}

static lc_status slice_run(const lc_node *n, void *state, const lc_tensor *const *in, int n_in, lc_tensor *out,
                           int n_out, lc_exec_ctx *x) {
  slice_plan p;
  lc_status s = slice_plan_make(n, in, n_in, &p);
  if (s) return s;
  if (out->nbytes) strided_copy(out->data, in[0]->data, lc_dtype_size(in[0]->dtype), out->ndim, p.dims, p.st, p.off);
  return LC_OK;
}

/* ---------------------------------------------------------------- Gather */

static lc_status gather_infer(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int n_out) {
  lc_status s = lcop_check_io(n, n_in, 2, 2, n_out, 1, 1);
  if (!s) s = need_any(n, in, n_in, 0);
  if (!s) s = need_any(n, in, n_in, 1);
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
      return lcop_fail(n, LC_ERR_UNSUPPORTED, "value tensor dtype %d / rank %d", *dt, *nd);
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
  if (!s) s = need_any(n, in, n_in, 0);
  if (s) return s;
  lc_dtype to = (lc_dtype)lc_attr_int(n, "to", 0);
  if (!cast_ok(in[0]->dtype) || !cast_ok(to))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "cast from dtype %d to %d", in[0]->dtype, (int)to);
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
  if (!s) s = need_any(n, in, n_in, 0);
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
  if (!s) s = need_any(n, in, n_in, 0);
  if (!s) s = need_any(n, in, n_in, 1);
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
  contiguous_strides(in[0], ist);
  int r = out->ndim, off = r - in[0]->ndim;
  for (int i = 0; i < r; i++) st[i] = i < off || in[0]->dims[i - off] == 1 ? 0 : ist[i - off];
  strided_copy(out->data, in[0]->data, lc_dtype_size(out->dtype), r, out->dims, st, 0);
  return LC_OK;
}

const lc_op_impl lcop_shape_ops[] = {
    {"Cast", cast_infer, NULL, NULL, cast_run, 0},
    {"ConstantOfShape", cos_infer, NULL, NULL, cos_run, 0},
    {"Expand", expand_infer, NULL, NULL, expand_run, 0},
    {"Flatten", flatten_infer, NULL, NULL, copy_run, 1},
    {"Reshape", reshape_infer, NULL, NULL, copy_run, 1},
    {"Squeeze", squeeze_infer, NULL, NULL, copy_run, 1},
    {"Unsqueeze", unsqueeze_infer, NULL, NULL, copy_run, 1},
    {"Transpose", transpose_infer, NULL, NULL, transpose_run, 0},
    {"Concat", concat_infer, NULL, NULL, concat_run, 0},
    {"Split", split_infer, NULL, NULL, split_run, 0},
    {"Slice", slice_infer, NULL, NULL, slice_run, 0},
    {"Gather", gather_infer, NULL, NULL, gather_run, 0},
    {"Shape", shape_infer, NULL, NULL, shape_run, 0},
    {"Constant", constant_infer, NULL, NULL, constant_run, 0},
    {NULL, NULL, NULL, NULL, NULL, 0}};
