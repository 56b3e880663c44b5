/* Elementwise device ops: the unary activations and math, Floor / Ceil / Round, BatchNormalization
 * (folded per channel on the host), the binary ops with broadcasting (float; int64 Add/Sub/Mul/Div),
 * variadic Min / Max / Sum / Mean (float, broadcasting), comparisons and logic to bool and Where
 * (broadcasting over up to three operands), and the views
 * (Identity, Dropout, Reshape, Flatten, Squeeze, Unsqueeze, same-type Cast) as buffer copies
 * that vanish when the planner made them in place. kernels/ops_ew.cl. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/opencl/cl_ops_int.h"
#include "util/alloc.h"

#define EW_LWS 64

static int is_op(const lc_node *n, const char *const *names) {
  for (; *names; names++)
    if (!strcmp(n->op_type, *names)) return 1;
  return 0;
}

/* Binds input i: its constant copy (uploaded once) or the run-time buffer of slot i. */
static void bind_input(lc_clop *op, clop_launch *l, const lc_tensor *t, int i, unsigned cm) {
  if (cm >> i & 1u) {
    clop_args(op, l, "M", clop_upload(op, t->data, t->nbytes));
    op->packed |= 1u << i;
  } else {
    clop_args(op, l, "I", i);
  }
}

static lc_status make_view(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                           int n_out, unsigned cm) {
  if (n_out > 1 || (cm & 1u) || !in[0] || in[0]->nbytes != out->nbytes)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device version of this form");
  clop_copy(op, 0, 0, out->nbytes);
  op->route = "view";
  return clop_status(op);
}

static lc_status make_bn(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                         unsigned cm) {
  if ((cm & 0x1eu) != 0x1eu || (cm & 1u)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "BatchNormalization with non-constant parameters");
  int64_t cnt = clop_numel(out), C = in[0]->dims[1], inner = C ? cnt / (in[0]->dims[0] ? in[0]->dims[0] : 1) / C : 0;
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  float *ko = lc_malloc((size_t)(2 * C + 1) * sizeof(float));
  if (!ko) return lcop_fail(n, LC_ERR_NO_MEMORY, "out of memory");
  const float *sc = in[1]->data, *bi = in[2]->data, *mu = in[3]->data, *va = in[4]->data;
  float eps = lc_attr_float(n, "epsilon", 1e-5f);
  for (int64_t c = 0; c < C; c++) { /* as the CPU's bn_task computes them */
    ko[c] = sc[c] / sqrtf(va[c] + eps);
    ko[C + c] = bi[c] - mu[c] * ko[c];
  }
  cl_mem k = clop_upload(op, ko, (size_t)C * sizeof(float)), o = clop_upload(op, ko + C, (size_t)C * sizeof(float));
  lc_free(ko);
  op->packed |= 0x1eu;
  op->route = "ew";
  if (!cnt) return clop_status(op);
  int v4 = inner % 4 == 0 && inner;
  clop_launch *l = clop_kernel(op, "ops_ew", v4 ? "ew_chan_affine4" : "ew_chan_affine", (size_t)(v4 ? cnt / 4 : cnt),
                               EW_LWS);
  clop_args(op, l, "IOMMNNN", 0, 0, k, o, (int64_t)(v4 ? cnt / 4 : cnt),
            (int64_t)(v4 ? inner / 4 : inner ? inner : 1), (int64_t)(C ? C : 1));
  return clop_status(op);
}

static int bin_kind(const char *op) {
  static const char *const names[] = {"Add", "Sub", "Mul", "Div", "PRelu", "Pow"};
  for (int i = 0; i < 6; i++)
    if (!strcmp(op, names[i])) return i;
  return -1;
}

/* Binds operand t: input slot i (its constant copy when cm says so), or output slot 0 when i < 0
 * (a variadic op's running result). */
static void bind_src(lc_clop *op, clop_launch *l, const lc_tensor *t, int i, unsigned cm) {
  if (i < 0) clop_args(op, l, "O", 0);
  else bind_input(op, l, t, i, cm);
}

/* out = t[0] kind t[1] with broadcasting, operands bound by bind_src's slots s[2]. */
static lc_status bin_launch(lc_clop *op, const lc_tensor *const *t, const int *s, const lc_tensor *out, int64_t cnt,
                            int kind, int is64, unsigned cm) {
  bcast p;
  lcop_bcast_plan(t[0], t[1], out, &p);
  /* float4 forms: a contiguous and b contiguous too or one value per row (swapped when a is the
   * row operand of a commutative op). */
  int flat = p.nd == 1 && p.sa[0] == 1 && p.sb[0] == 1;
  int row = p.nd == 2 && p.sa[0] == p.dims[1] && p.sa[1] == 1 && p.sb[0] == 1 && p.sb[1] == 0;
  int rowsw = p.nd == 2 && p.sb[0] == p.dims[1] && p.sb[1] == 1 && p.sa[0] == 1 && p.sa[1] == 0 &&
              (kind == 0 || kind == 2); /* not Min / Max: which of -0 and +0 is kept follows the order */
  int64_t inner = p.nd == 2 ? p.dims[1] : 0;
  if (!is64 && cnt % 4 == 0 && (flat || ((row || rowsw) && inner % 4 == 0))) {
    clop_launch *l = clop_kernel(op, "ops_ew", flat ? "ew_binary_flat4" : "ew_binary_row4", (size_t)(cnt / 4), EW_LWS);
    bind_src(op, l, t[rowsw], s[rowsw], cm);
    bind_src(op, l, t[!rowsw], s[!rowsw], cm);
    clop_args(op, l, "ON", 0, (int64_t)(cnt / 4));
    if (!flat) clop_args(op, l, "N", (int64_t)(inner / 4));
    clop_args(op, l, "N", (int64_t)kind);
    return clop_status(op);
  }
  int64_t g[25] = {p.nd};
  for (int d = 0; d < p.nd; d++) g[1 + d] = p.dims[d], g[9 + d] = p.sa[d], g[17 + d] = p.sb[d];
  cl_mem geo = clop_ints(op, g, 25);
  clop_launch *l = clop_kernel(op, "ops_ew", is64 ? "ew_binary_i64" : "ew_binary", (size_t)cnt, EW_LWS);
  bind_src(op, l, t[0], s[0], cm);
  bind_src(op, l, t[1], s[1], cm);
  clop_args(op, l, "OMNN", 0, geo, (int64_t)cnt, (int64_t)kind);
  return clop_status(op);
}

static lc_status make_binary(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out,
                             unsigned cm) {
  int kind = bin_kind(n->op_type);
  int is64 = in[0]->dtype == LC_DT_INT64;
  if (!is64 && in[0]->dtype != LC_DT_FLOAT) /* int32 arithmetic: the CPU's */
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no %s device version", lc_dtype_name(in[0]->dtype));
  if (is64 && kind > 3) return lcop_fail(n, LC_ERR_UNSUPPORTED, "no int64 device version");
  if (is64 && kind == 3) { /* divisors must be known to be nonzero */
    if (!(cm & 2u)) return lcop_fail(n, LC_ERR_UNSUPPORTED, "int64 Div by a non-constant divisor");
    int64_t nb = clop_numel(in[1]);
    for (int64_t i = 0; i < nb; i++)
      if (((const int64_t *)in[1]->data)[i] == 0) return lcop_fail(n, LC_ERR_INVALID_ARG, "integer division by zero");
  }
  int64_t cnt = clop_numel(out);
  if (cnt < 0 || clop_numel(in[0]) < 0 || clop_numel(in[1]) < 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "ew";
  if (!cnt) return LC_OK;
  return bin_launch(op, in, (const int[]){0, 1}, out, cnt, kind, is64, cm);
}

/* The output's element count, -1 when it or an input's is 2^31 or more. */
static int64_t out_count(const lc_tensor *const *in, int n_in, const lc_tensor *out) {
  int64_t cnt = clop_numel(out);
  for (int i = 0; i < n_in; i++)
    if (in[i] && clop_numel(in[i]) < 0) cnt = -1;
  return cnt;
}

/* Variadic Min / Max / Sum / Mean (float): out = in0 op in1, then out = out op in_i for each
 * further input (each broadcast to out, as the CPU's running result), Mean then divided by the
 * count. One input: a broadcast copy (x + 0 would turn -0 into +0: Max of x and x instead). */
static lc_status make_variadic(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                               const lc_tensor *out, unsigned cm) {
  int mean = !strcmp(n->op_type, "Mean"), kind = n->op_type[1] == 'i' ? 6 : n->op_type[1] == 'a' ? 7 : 0;
  if (out->dtype != LC_DT_FLOAT)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no %s device version", lc_dtype_name(out->dtype));
  int64_t cnt = out_count(in, n_in, out);
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "ew";
  if (!cnt) return LC_OK;
  for (int i = 1; i < n_in || i == 1; i++) {
    const lc_tensor *t[2] = {i == 1 ? in[0] : out, in[n_in > 1 ? i : 0]};
    int s[2] = {i == 1 ? 0 : -1, n_in > 1 ? i : 0};
    lc_status st = bin_launch(op, t, s, out, cnt, n_in > 1 ? kind : 7, 0, cm);
    if (st) return st;
  }
  if (mean && n_in > 1) {
    clop_launch *l = clop_kernel(op, "ops_ew", "ew_unary", (size_t)cnt, EW_LWS);
    clop_args(op, l, "OONNFF", 0, 0, cnt, (int64_t)17, (double)n_in, 0.0);
  }
  return clop_status(op);
}

/* The broadcast plan of k (<= 3) operands to out as the kernels' int table (ew_nb). */
static cl_mem nb_geometry(lc_clop *op, const lc_node *n, const lc_tensor *const *t, int k) {
  nbcast p;
  int64_t g[33] = {0};
  if (lcop_nbcast_plan(n, t, k, &p)) { /* infer checked the shapes: not expected */
    char why[256];
    snprintf(why, sizeof why, "%s", lc_last_error());
    clop_fail(op, NULL, LC_ERR_INVALID_ARG, why);
    return NULL;
  }
  g[0] = p.nd;
  for (int d = 0; d < p.nd; d++)
    for (int i = 0; i < 3; i++) g[1 + d] = p.dims[d], g[9 + 8 * i + d] = i < k ? p.st[i][d] : 0;
  return clop_ints(op, g, 33);
}

/* Comparisons, And / Or / Xor / Not to bool, and Where (any element size) with broadcasting. */
static lc_status make_logic(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in,
                            const lc_tensor *out, unsigned cm) {
  static const char *const kinds[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
                                      "Not"};
  int where = !strcmp(n->op_type, "Where"), kind = 0;
  while (!where && strcmp(kinds[kind], n->op_type)) kind++;
  lc_dtype t = in[where]->dtype;
  int dt = t == LC_DT_FLOAT ? 0 : t == LC_DT_INT64 ? 1 : t == LC_DT_INT32 ? 2 : t == LC_DT_UINT8 || t == LC_DT_BOOL ? 3
           : t == LC_DT_INT8 ? 4 : -1;
  size_t es = lc_dtype_size(out->dtype);
  if (where ? !clop_esuffix(es) : dt < 0)
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no %s device version", lc_dtype_name(t));
  int64_t cnt = out_count(in, n_in, out);
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "ew";
  if (!cnt) return LC_OK;
  const lc_tensor *ops[3] = {in[0], n_in > 1 ? in[1] : in[0], n_in > 2 ? in[2] : in[0]};
  cl_mem geo = nb_geometry(op, n, ops, where ? 3 : 2);
  if (where) {
    static const char *const names[] = {"where_u8", "where_u32", "where_u64"};
    clop_launch *l = clop_kernel(op, "ops_ew", names[es == 1 ? 0 : es == 4 ? 1 : 2], (size_t)cnt, EW_LWS);
    for (int i = 0; i < 3; i++) bind_input(op, l, in[i], i, cm);
    clop_args(op, l, "OMN", 0, geo, cnt);
    return clop_status(op);
  }
  clop_launch *l = clop_kernel(op, "ops_ew", "ew_compare", (size_t)cnt, EW_LWS);
  bind_input(op, l, in[0], 0, cm);
  bind_input(op, l, ops[1], n_in > 1, cm);
  clop_args(op, l, "OMNNN", 0, geo, cnt, (int64_t)kind, (int64_t)dt);
  return clop_status(op);
}

static int cast_dtype(lc_dtype t) {
  return t == LC_DT_FLOAT || t == LC_DT_UINT8 || t == LC_DT_INT8 || t == LC_DT_INT32 || t == LC_DT_INT64 || t == LC_DT_BOOL;
}

static lc_status make_cast(lc_clop *op, const lc_node *n, const lc_tensor *const *in, const lc_tensor *out, unsigned cm) {
  if (!cast_dtype(in[0]->dtype) || !cast_dtype(out->dtype) || (cm & 1u))
    return lcop_fail(n, LC_ERR_UNSUPPORTED, "no device kernel for a Cast from dtype %d to %d", in[0]->dtype, out->dtype);
  int64_t cnt = clop_numel(out);
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "ew";
  if (!cnt) return LC_OK;
  clop_launch *l = clop_kernel(op, "ops_ew", "ew_cast", (size_t)cnt, EW_LWS);
  clop_args(op, l, "IONNN", 0, 0, (int64_t)cnt, (int64_t)(in[0]->dtype), (int64_t)(out->dtype));
  return clop_status(op);
}

lc_status clop_make_ew(lc_clop *op, const lc_node *n, const lc_tensor *const *in, int n_in, const lc_tensor *out,
                       int n_out, unsigned cm) {
  static const char *const unary[] = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip",
                                      "Sqrt", "Reciprocal", "Erf", "Exp", "Neg", "Abs", NULL};
  static const char *const rounding[] = {"Floor", "Ceil", "Round", NULL};
  static const char *const variadic[] = {"Min", "Max", "Sum", "Mean", NULL};
  static const char *const logic[] = {"Equal", "Less",    "Greater", "LessOrEqual", "GreaterOrEqual", "And",
                                      "Or",    "Xor",     "Not",     "Where",       NULL};
  static const char *const views[] = {"Identity", "Dropout", "Reshape", "Flatten", "Squeeze", "Unsqueeze", NULL};
  if (!strcmp(n->op_type, "Cast") && in[0] && in[0]->dtype != out->dtype) return make_cast(op, n, in, out, cm);
  if (is_op(n, views) || !strcmp(n->op_type, "Cast")) return make_view(op, n, in, out, n_out, cm);
  if (!strcmp(n->op_type, "BatchNormalization")) return make_bn(op, n, in, out, cm);
  if (bin_kind(n->op_type) >= 0) return make_binary(op, n, in, out, cm);
  if (is_op(n, variadic)) return make_variadic(op, n, in, n_in, out, cm);
  if (is_op(n, logic)) return make_logic(op, n, in, n_in, out, cm);
  int round = is_op(n, rounding);
  if (!round && !is_op(n, unary)) return LC_ERR_UNSUPPORTED;
  if (cm & 1u) return lcop_fail(n, LC_ERR_UNSUPPORTED, "constant input (folded on the host)");
  int kind = 14 + (n->op_type[0] == 'C') + 2 * (n->op_type[0] == 'R'); /* Floor, Ceil, Round */
  float a = 0.0f, b = 0.0f;
  lc_status s = round ? LC_OK : lcop_unary_params(n, in, n_in, &kind, &a, &b);
  if (s) return s;
  op->packed |= cm & 6u; /* Clip's min and max were read */
  int64_t cnt = clop_numel(out);
  if (cnt < 0) return lcop_fail(n, LC_ERR_UNSUPPORTED, "tensor of 2^31 elements or more");
  op->route = "ew";
  if (!cnt) return LC_OK;
  int v4 = cnt % 4 == 0;
  clop_launch *l = clop_kernel(op, "ops_ew", v4 ? "ew_unary4" : "ew_unary", (size_t)(v4 ? cnt / 4 : cnt), EW_LWS);
  clop_args(op, l, "IONNFF", 0, 0, (int64_t)(v4 ? cnt / 4 : cnt), (int64_t)kind, (double)a, (double)b);
  return clop_status(op);
}
