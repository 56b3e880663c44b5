/* Helpers shared by the op families: error messages naming the node, checked sizes, constant reads. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/context.h"
#include "model/ops/ops_internal.h"
#include "util/checked.h"
#include "util/error.h"

lc_status lcop_fail(const lc_node *n, lc_status s, const char *fmt, ...) {
  char msg[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lc_error(s, "%s '%s': %s", n && n->op_type ? n->op_type : "?", n && n->name ? n->name : "", msg);
}

int lcop_dims_prod(const int64_t *dims, int lo, int hi, size_t *r) {
  if (hi < lo) return 1;
  return !lc_mul_n(r, hi - lo, dims + lo);
}

int lcop_numel(const lc_tensor *t, size_t *count) {
  if (t->ndim < 0 || t->ndim > LC_MAX_DIMS) return 1;
  return lcop_dims_prod(t->dims, 0, t->ndim, count);
}

lc_status lcop_set_out(const lc_node *n, lc_tensor *t, lc_dtype dt, int ndim, const int64_t *dims) {
  if (ndim < 0 || ndim > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_UNSUPPORTED, "output rank %d > %d", ndim, LC_MAX_DIMS);
  size_t cnt, bytes;
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "negative output dim %lld", (long long)dims[i]);
  if (!lc_mul_n(&cnt, ndim, dims) || !lc_mul_sz(cnt, lc_dtype_size(dt), &bytes))
    return lcop_fail(n, LC_ERR_OVERFLOW, "output size overflows");
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->dims[i] = dims[i];
  t->nbytes = bytes;
  return LC_OK;
}

lc_status lcop_check_io(const lc_node *n, int n_in, int min_in, int max_in, int n_out, int min_out, int max_out) {
  if (n_in < min_in || n_in > max_in)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "expects %d..%d inputs, got %d", min_in, max_in, n_in);
  if (n_out < min_out || n_out > max_out)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "expects %d..%d outputs, got %d", min_out, max_out, n_out);
  return LC_OK;
}

lc_status lcop_need(const lc_node *n, const lc_tensor *const *in, int n_in, int i, lc_dtype dt) {
  if (!lcop_has(in, n_in, i)) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d is missing", i);
  /* weights kept quantized (model/qweight.h) are float values to the ops that pack them */
  if (in[i]->dtype != dt && !(dt == LC_DT_FLOAT && in[i]->quant))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "input %d is %s, expected %s", i, lc_dtype_name(in[i]->dtype), lc_dtype_name(dt));
  size_t cnt;
  if (in[i]->ndim < 0 || in[i]->ndim > LC_MAX_DIMS) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: bad rank", i);
  if (lcop_numel(in[i], &cnt) || cnt > ((size_t)1 << 48))
    return lcop_fail(n, LC_ERR_OVERFLOW, "input %d: element count overflows", i);
  return LC_OK;
}

lc_status lcop_read_ints(const lc_node *n, const lc_tensor *t, const char *what, int64_t *v, size_t max,
                         size_t *count) {
  size_t cnt;
  if (!t->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s must be a constant", what);
  if (t->ndim > 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "%s must be 1-D", what);
  if (lcop_numel(t, &cnt) || cnt > max) return lcop_fail(n, LC_ERR_INVALID_ARG, "%s has too many values", what);
  if (t->dtype == LC_DT_INT64) {
    memcpy(v, t->data, cnt * sizeof(int64_t));
  } else if (t->dtype == LC_DT_INT32) {
    const int32_t *s = t->data;
    for (size_t i = 0; i < cnt; i++) v[i] = s[i];
  } else {
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s must be int64 or int32", what);
  }
  *count = cnt;
  return LC_OK;
}

lc_status lcop_read_float(const lc_node *n, const lc_tensor *t, const char *what, float *v) {
  size_t cnt;
  if (!t->data) return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s must be a constant", what);
  if (lcop_numel(t, &cnt) || cnt != 1) return lcop_fail(n, LC_ERR_INVALID_ARG, "%s must be a scalar", what);
  if (t->dtype != LC_DT_FLOAT) return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s must be float", what);
  *v = *(const float *)t->data;
  return LC_OK;
}

lc_status lcop_axis(const lc_node *n, int64_t axis, int rank, int *out) {
  if (axis < -(int64_t)rank || axis >= rank)
    return lcop_fail(n, LC_ERR_INVALID_ARG, "axis %lld out of range for rank %d", (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return LC_OK;
}

int64_t lcop_opset(const lc_node *n) { return lc_attr_int(n, "_opset", 0); }

void lcop_copy(void *dst, const void *src, size_t nbytes) {
  if (dst != src && nbytes) memmove(dst, src, nbytes);
}

size_t lcop_budget(const lc_exec_ctx *x) { return x ? x->scratch_limit : 0; }

int lcop_threads(const lc_exec_ctx *x) { return x && x->lc && x->lc->pool ? lc_pool_threads(x->lc->pool) : 1; }

void lcop_parallel(lc_exec_ctx *x, size_t n, void (*fn)(void *arg, size_t task, int thread), void *arg) {
  lc_pool_run(x && x->lc ? x->lc->pool : NULL, n, 0, fn, arg);
}

lc_status lcop_need_any(const lc_node *n, const lc_tensor *const *in, int n_in, int i) {
  if (!lcop_has(in, n_in, i)) return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d is missing", i);
  if (lc_dtype_size(in[i]->dtype) == 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "input %d: unsupported element type %s", i, lc_dtype_name(in[i]->dtype));
  size_t c;
  if (in[i]->ndim < 0 || in[i]->ndim > LC_MAX_DIMS || lcop_numel(in[i], &c))
    return lcop_fail(n, LC_ERR_INVALID_ARG, "input %d: bad shape", i);
  return LC_OK;
}

/* Copies an nd-dim strided view (element strides, may be negative) of src into contiguous dst. */
void lcop_strided_copy(void *dst, const void *src, size_t es, int nd, const int64_t *dims_in, const int64_t *st_in,
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

void lcop_contiguous_strides(const lc_tensor *t, int64_t *st) {
  int64_t acc = 1;
  for (int i = t->ndim - 1; i >= 0; i--) st[i] = acc, acc *= t->dims[i];
}


const lc_vmath_kernels *lcop_vm(const lc_exec_ctx *x) {
  if (x && x->lc && x->lc->k) return x->lc->k->vmath;
  return lc_kernels_clamp(LC_ISA_AUTO)->vmath; /* the scalar table runs anywhere: never NULL */
}
