/* Pool, reduction and softmax device ops: MaxPool, AveragePool (1-D and 2-D), GlobalAveragePool,
 * GlobalMaxPool, ReduceMean/Sum/Max/Min/L1/L2/SumSquare/LogSumExp/Prod over any axes, Softmax,
 * LogSoftmax, LayerNormalization, InstanceNormalization, GroupNormalization, ArgMax, ArgMin. Few elements reduced per output:
 * one work item each; many: one work group each (kernels/ops_reduce.cl). */
#include <stdint.h>
#include <string.h>

#include "backend/opencl/cl_ops_int.h"
#include "util/alloc.h"
#include "util/error.h"

#define RED_LWS 64        /* matches RED_LWS in ops_reduce.cl */
#define RED_ROWS_LWS 256  /* matches RED_ROWS_LWS in ops_reduce.cl */
#define RED_GROUP_MIN 256 /* reduced elements per output from which a work group each pays off */

static lc_status make_pool(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out) {
  pool_geom g;
  int is_max = n->op_type[0] == 'M';
  lc_status s = lcop_pool_geometry(n, in[0], is_max, &g);
  if (s) return s;
  int64_t cnt = clop_numel(out);
  if (cnt < 0 || clop_numel(in[0]) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "pool";
  if (!cnt) return LC_OK;
  int64_t geo[17] = {g.N * g.C, g.H, g.W, g.OH, g.OW, g.k[0], g.k[1], g.s[0], g.s[1], g.d[0], g.d[1],
                     g.pb[0], g.pb[1], g.pe[0], g.pe[1], is_max, lc_attr_int(n, "count_include_pad", 0)};
  cl_mem gm = clop_ints(op, geo, 17);
  clop_launch *l = clop_kernel(op, "ops_reduce", "pool2d", (size_t)cnt, 64);
  clop_args(op, l, "IOMN", 0, 0, gm, (int64_t)cnt);
  return clop_status(op);
}

/* The kernels' reduction kinds (ops_reduce.cl); 0 mean (ReduceMean, GlobalAveragePool). */
static int red_kind(const char *t) {
  static const char *const names[] = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                                      "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"};
  if (!strcmp(t, "GlobalMaxPool")) return 2;
  for (int i = 0; i < 8; i++)
    if (!strcmp(t, names[i])) return 1 + i;
  return 0;
}

static lc_status make_reduce(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                             const lc_tensor *out, unsigned cm) {
  int mask[LC_MAX_DIMS], keep;
  lc_status s = lcop_red_axes(n, in, n_in, mask, &keep);
  if (s) return s;
  op->packed |= cm & 2u;
  const lc_tensor *t = in[0];
  int64_t cnt = clop_numel(out), total = clop_numel(t), st[LC_MAX_DIMS], acc = 1, g[34] = {0};
  if (cnt < 0 || total < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "reduce";
  if (!cnt) return LC_OK;
  for (int i = t->ndim - 1; i >= 0; i--) st[i] = acc, acc *= t->dims[i];
  int nk = 0, nr = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->dims[i] == 1) continue;
    if (mask[i]) g[18 + nr] = t->dims[i], g[26 + nr] = st[i], nr++;
    else g[1 + nk] = t->dims[i], g[9 + nk] = st[i], nk++;
  }
  g[0] = nk, g[17] = nr;
  int64_t per = cnt ? total / cnt : 0;
  int group = per >= RED_GROUP_MIN, trailing = 1; /* the reduced axes innermost: rows of per elements */
  for (int i = 0, seen = 0; i < t->ndim; i++) {
    if (t->dims[i] == 1) continue;
    if (mask[i]) seen = 1;
    else if (seen) trailing = 0;
  }
  if (trailing) {
    clop_launch *l = clop_kernel(op, "ops_reduce", group ? "reduce_rows_group" : "reduce_rows_item",
                                 (size_t)(group ? cnt * RED_ROWS_LWS : cnt), group ? RED_ROWS_LWS : 64);
    if (l && group && !l->lws) return lcop_fail(n, LC_ERR_UNSUPPORTED, "device work groups too small");
    clop_args(op, l, "IONNN", 0, 0, (int64_t)cnt, (int64_t)per, (int64_t)(red_kind(n->op_type)));
    return clop_status(op);
  }
  cl_mem gm = clop_ints(op, g, 34);
  clop_launch *l = clop_kernel(op, "ops_reduce", group ? "reduce_group" : "reduce_item",
                               (size_t)(group ? cnt * RED_LWS : cnt), group ? RED_LWS : 64);
  if (l && group && !l->lws) return lcop_fail(n, LC_ERR_UNSUPPORTED, "device work groups too small");
  clop_args(op, l, "IOMNNN", 0, 0, gm, (int64_t)cnt, (int64_t)per, (int64_t)(red_kind(n->op_type)));
  return clop_status(op);
}

/* One work group per row of len floats normalized (norm_group in ops_reduce.cl). */
static lc_status norm_launch(lc_clop *op, const lc_node *n, cl_mem sm, cl_mem bm, int64_t rows, int64_t len,
                             int64_t every, int64_t srows) {
  clop_launch *l = clop_kernel(op, "ops_reduce", "norm_group", (size_t)rows * RED_ROWS_LWS, RED_ROWS_LWS);
  if (l && !l->lws) return lcop_fail(n, LC_ERR_UNSUPPORTED, "device work groups too small");
  clop_args(op, l, "IOMMNNNF", 0, 0, sm, bm, len, every, srows, (double)lc_attr_float(n, "epsilon", 1e-5f));
  return clop_status(op);
}

/* LayerNormalization with constant Scale (and B): rows of the trailing axes, one output. */
static lc_status make_layernorm(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                                const lc_tensor *out, int n_out, unsigned cm) {
  int64_t rank = in[0]->ndim, axis = lc_attr_int(n, "axis", -1), len = 1, cnt = clop_numel(out);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return lcop_fail(n, LC_ERR_INVALID_ARG, "axis out of range");
  if (!(cm & 2u) || (lcop_has(in, n_in, 2) && !(cm & 4u)) || n_out > 1)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "LayerNormalization on the device needs constant Scale and B, one output");
  for (int64_t i = axis; i < rank; i++) len *= in[0]->dims[i];
  if (cnt < 0 || len <= 0 || len > INT32_MAX) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  float *t = lc_malloc(2 * (size_t)len * sizeof(float));
  if (!t) return lc_error(LC_ERR_NO_MEMORY, "opencl ops: out of memory");
  const lc_tensor *sc = in[1], *b = lcop_has(in, n_in, 2) ? in[2] : NULL;
  size_t ns = sc->nbytes / sizeof(float), nb = b ? b->nbytes / sizeof(float) : 0;
  for (int64_t i = 0; i < len; i++) {
    t[i] = ((const float *)sc->data)[ns == 1 ? 0 : i];
    t[len + i] = b ? ((const float *)b->data)[nb == 1 ? 0 : i] : 0.0f;
  }
  cl_mem sm = clop_upload(op, t, (size_t)len * sizeof(float)), bm = clop_upload(op, t + len, (size_t)len * sizeof(float));
  lc_free(t);
  op->packed |= cm & 6u;
  op->route = "layernorm";
  if (!cnt) return clop_status(op);
  return norm_launch(op, n, sm, bm, cnt / len, len, 1, 1);
}

/* InstanceNormalization / GroupNormalization with constant scale and B: rows of one (image,
 * group), scale / bias per channel, or per group (opset < 21, or [G] where G != C), as the CPU. */
static lc_status make_groupnorm(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                                unsigned cm) {
  const lc_tensor *t = in[0];
  if ((cm & 6u) != 6u || t->ndim < 2)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "%s on the device needs constant scale and B", n->op_type);
  int64_t C = t->dims[1], cnt = clop_numel(out), sp = 1, cs = clop_numel(in[1]), opset = lcop_opset(n);
  int64_t G = n->op_type[0] == 'G' ? lc_attr_int(n, "num_groups", 0) : C;
  if (cnt < 0 || G <= 0 || C % G) return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device version of this form");
  int per_group = n->op_type[0] == 'G' && cs == G && (cs != C || (opset > 0 && opset < 21));
  cl_mem sm = clop_upload(op, in[1]->data, in[1]->nbytes), bm = clop_upload(op, in[2]->data, in[2]->nbytes);
  op->packed |= 6u;
  op->route = "layernorm";
  if (!cnt) return clop_status(op);
  for (int i = 2; i < t->ndim; i++) sp *= t->dims[i]; /* no dim 0: <= cnt */
  int64_t len = C / G * sp;
  return norm_launch(op, n, sm, bm, cnt / len, len, per_group ? len : sp, G);
}

static lc_status make_softmax(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out) {
  size_t outer, len, inner;
  lc_status s = lcop_softmax_geom(n, in[0], &outer, &len, &inner);
  if (s) return s;
  int64_t cnt = clop_numel(out), lg = n->op_type[0] == 'L';
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "softmax";
  if (!cnt) return LC_OK;
  int64_t rows = (int64_t)(outer * inner);
  if (inner == 1 && len >= RED_GROUP_MIN && op->rt->info.max_wg >= RED_LWS) {
    clop_launch *l = clop_kernel(op, "ops_reduce", "softmax_group", (size_t)rows * RED_LWS, RED_LWS);
    clop_args(op, l, "IONN", 0, 0, (int64_t)len, (int64_t)lg);
  } else {
    clop_launch *l = clop_kernel(op, "ops_reduce", "softmax_item", (size_t)rows, 64);
    clop_args(op, l, "IONNNN", 0, 0, (int64_t)rows, (int64_t)len, (int64_t)inner, (int64_t)lg);
  }
  return clop_status(op);
}

/* ArgMax / ArgMin to int64 (float, int32, uint8: int64 the CPU compares through double). */
static lc_status make_arg(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out) {
  const lc_tensor *t = in[0];
  int dt = t->dtype == LC_DT_FLOAT ? 0 : t->dtype == LC_DT_INT32 ? 2 : t->dtype == LC_DT_UINT8 ? 3 : -1, axis;
  if (dt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "no %s device version", lc_dtype_name(t->dtype));
  lc_status s = lcop_axis(n, lc_attr_int(n, "axis", 0), t->ndim, &axis);
  if (s) return s;
  int64_t cnt = clop_numel(out);
  if (cnt < 0 || clop_numel(t) < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "reduce";
  if (!cnt) return LC_OK;
  size_t len = (size_t)t->dims[axis], inner;
  lcop_dims_prod(t->dims, axis + 1, t->ndim, &inner);
  clop_launch *l = clop_kernel(op, "ops_reduce", "arg_reduce", (size_t)cnt, 64);
  clop_args(op, l, "IONNNNNN", 0, 0, cnt, (int64_t)len, (int64_t)inner, (int64_t)(n->op_type[4] == 'a'),
            lc_attr_int(n, "select_last_index", 0) != 0 ? (int64_t)1 : (int64_t)0, (int64_t)dt);
  return clop_status(op);
}

lc_status clop_make_reduce(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                           const lc_tensor *out, int n_out, unsigned cm) {
  const char *t = n->op_type;
  int pool = !strcmp(t, "MaxPool") || !strcmp(t, "AveragePool");
  int red = !strncmp(t, "Reduce", 6) || !strcmp(t, "GlobalAveragePool") || !strcmp(t, "GlobalMaxPool");
  int sm = !strcmp(t, "Softmax") || !strcmp(t, "LogSoftmax"), ln = !strcmp(t, "LayerNormalization");
  int gn = !strcmp(t, "InstanceNormalization") || !strcmp(t, "GroupNormalization");
  int arg = !strcmp(t, "ArgMax") || !strcmp(t, "ArgMin");
  if (!pool && !red && !sm && !ln && !gn && !arg) return LC_ERR_UNSUPPORTED;
  if (cm & 1u) return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input (folded on the host)");
  if (arg) return make_arg(op, n, in, out);
  if (gn) return make_groupnorm(op, n, in, out, cm);
  if (ln) return make_layernorm(op, n, in, n_in, out, n_out, cm);
  if (pool) return make_pool(op, n, in, out);
  if (red) return make_reduce(op, n, in, n_in, out, cm);
  return make_softmax(op, n, in, out);
}
