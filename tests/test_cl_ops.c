/* The model runner's device operators (src/backend/opencl/cl_ops*.c) against the CPU operators
 * (src/model/ops) on random inputs: odd shapes, broadcasting, every pool / resize / pad mode,
 * constant and run-time inputs, in place. Tolerances, relative to max |CPU output|:
 *   1e-5 for elementwise and data-moving ops: the same float operations (copies are bit exact;
 *        exp/tanh/erf/pow of the device are within a few ulp of libm's);
 *   1e-4 for sums (conv, products, pools, reductions, softmax): the device adds in another order
 *        and with fused multiply-adds, which moves each of K <= ~2000 terms by <= 1 ulp;
 *   1e-5 for the extra reductions (L1, L2, SumSquare, LogSumExp, Prod), LogSoftmax, Instance- and
 *        GroupNormalization: they accumulate in double on a device with fp64 (PoCL has it), as
 *        the CPU does, so what is left is the float exp / log / sqrt of each side (a few ulp);
 *   exact for Floor / Ceil / Round (Round's ties to even included) and variadic Min / Max; bool
 *        and int outputs (comparisons, logic, ArgMax / ArgMin) are compared byte for byte;
 *   1e-5 for variadic Sum / Mean: the same additions in the same order, Mean's division too;
 *   3e-2 for q8/q4 products: the two paths quantize the weights separately (same scheme). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops.h"
#include "lowconv.h"
#include "model/ops.h"
#include "testutil.h"

static lc_context *g_cpu, *g_dev;
static lc_cl_rt *g_rt;
static int g_wfmt;
static int g_cases;

static lc_attr A_i(const char *name, int64_t v) { lc_attr a = {0}; a.name = name, a.type = LC_ATTR_INT, a.i = v; return a; }
static lc_attr A_f(const char *name, float v) { lc_attr a = {0}; a.name = name, a.type = LC_ATTR_FLOAT, a.f = v; return a; }
static lc_attr A_is(const char *name, const int64_t *v, size_t n) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_INTS, a.ints = v, a.n = n;
  return a;
}
static lc_attr A_s(const char *name, const char *s) { lc_attr a = {0}; a.name = name, a.type = LC_ATTR_STRING, a.s = s; return a; }

/* A tensor with malloc'ed data: float in [lo, hi], int64 from ints (when given). */
static lc_tensor T(lc_dtype dt, int nd, const int64_t *dims, float lo, float hi) {
  lc_tensor t = {0};
  t.name = "t", t.dtype = dt, t.ndim = nd;
  size_t n = 1;
  for (int i = 0; i < nd; i++) t.dims[i] = dims[i], n *= (size_t)dims[i];
  t.nbytes = n * lc_dtype_size(dt);
  t.data = calloc(1, t.nbytes + 8);
  if (dt == LC_DT_FLOAT) tu_fill(t.data, n, lo, hi);
  else if (dt == LC_DT_INT64)
    for (size_t i = 0; i < n; i++) ((int64_t *)t.data)[i] = tu_rand_int((int)lo, (int)hi);
  return t;
}
static lc_tensor Ti(int n, const int64_t *v) {
  int64_t d[1] = {n};
  lc_tensor t = T(LC_DT_INT64, 1, d, 0, 0);
  memcpy(t.data, v, (size_t)n * 8);
  return t;
}
static lc_tensor Tf(int n, const float *v) {
  int64_t d[1] = {n};
  lc_tensor t = T(LC_DT_FLOAT, n < 0 ? 0 : 1, d, 0, 0);
  if (n > 0) memcpy(t.data, v, (size_t)n * 4);
  return t;
}
static const lc_tensor NONE = {0};

#define MAXIO 8

/* Runs op on the CPU and on the device; compares every output. inplace: output 0 is written
 * over input 0's device buffer (ops the planner runs in place). */
static void check(const char *label, const char *op, lc_attr *attrs, int na, lc_tensor *ins, int n_in, unsigned cm,
                  int n_out, double tol, int inplace) {
  static const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  lc_node n = {0};
  n.name = "node0", n.op_type = op, n.domain = "";
  n.n_inputs = n_in, n.n_outputs = n_out, n.inputs = names, n.outputs = names, n.n_attrs = na, n.attrs = attrs;
  const lc_tensor *in[MAXIO];
  lc_tensor oc[MAXIO], od[MAXIO];
  for (int i = 0; i < n_in; i++) in[i] = ins[i].dtype == LC_DT_UNDEFINED ? NULL : &ins[i];
  const lc_op_impl *impl = lc_op_find(op);
  memset(oc, 0, sizeof oc);
  lc_status s = impl->infer(&n, in, n_in, oc, n_out);
  TU_CHECK(!s, "%s: infer: %s", label, lc_last_error());
  if (s) return;
  memcpy(od, oc, sizeof oc);
  if (inplace && (!in[0] || in[0]->nbytes != oc[0].nbytes || (cm & 1u))) inplace = 0; /* as the planner decides */
  for (int i = 0; i < n_out; i++) oc[i].data = calloc(1, oc[i].nbytes + 8), od[i].data = calloc(1, od[i].nbytes + 8);
  lc_exec_ctx x = {0};
  x.lc = g_cpu, x.const_inputs = cm, x.weight_format = g_wfmt, x.weight_block = g_wfmt ? 32 : 0;
  void *st = NULL;
  if (impl->init) s = impl->init(&n, in, n_in, oc, n_out, &x, &st);
  if (!s) s = impl->run(&n, st, in, n_in, oc, n_out, &x);
  if (impl->fini) impl->fini(st);
  TU_CHECK(!s, "%s: cpu run: %s", label, lc_last_error());
  lc_clop *dop = NULL;
  lc_status ds = lc_clop_create(g_dev, &n, in, n_in, od, n_out, &x, cm, &dop);
  TU_CHECK(!ds, "%s: device create: %s", label, lc_last_error());
  cl_mem mi[MAXIO] = {0}, mo[MAXIO] = {0};
  for (int i = 0; !ds && i < n_in; i++)
    if (in[i] && !(cm >> i & 1u)) ds = lc_cl_buffer(g_rt, in[i]->nbytes, in[i]->data, &mi[i]);
  for (int i = 0; !ds && i < n_out; i++)
    if (inplace && i == 0) mo[0] = mi[0];
    else ds = lc_cl_buffer(g_rt, od[i].nbytes, NULL, &mo[i]);
  if (!ds) ds = lc_clop_enqueue(dop, mi, mo, NULL, NULL);
  for (int i = 0; !ds && i < n_out; i++)
    if (od[i].nbytes) ds = lc_cl_read(g_rt, mo[i], 0, od[i].nbytes, od[i].data);
  TU_CHECK(!ds, "%s: device run: %s", label, lc_last_error());
  for (int i = 0; !s && !ds && i < n_out; i++) {
    size_t cnt = oc[i].nbytes / (oc[i].dtype == LC_DT_FLOAT ? 4 : 1);
    if (oc[i].dtype != LC_DT_FLOAT) {
      TU_CHECK(!memcmp(oc[i].data, od[i].data, oc[i].nbytes), "%s: output %d differs", label, i);
      continue;
    }
    const float *a = oc[i].data, *b = od[i].data;
    double mx = 0, err = 0;
    for (size_t k = 0; k < cnt; k++) mx = isfinite(a[k]) ? fmax(mx, fabs(a[k])) : mx; /* inf: compared exactly */
    for (size_t k = 0; k < cnt; k++) {
      double e = isnan(a[k]) || isnan(b[k]) ? (isnan(a[k]) && isnan(b[k]) ? 0 : INFINITY) : fabs(a[k] - b[k]);
      if (isinf(a[k]) && a[k] == b[k]) e = 0;
      err = fmax(err, e);
    }
    TU_CHECK(err <= tol * fmax(mx, 1e-3), "%s: output %d: max error %g, max |out| %g", label, i, err, mx);
  }
  for (int i = 0; i < n_in; i++) lc_cl_release_mem(g_rt, &mi[i]);
  for (int i = inplace ? 1 : 0; i < n_out; i++) lc_cl_release_mem(g_rt, &mo[i]);
  lc_clop_free(dop);
  for (int i = 0; i < n_out; i++) free(oc[i].data), free(od[i].data);
  g_cases++;
}

/* A form without a device version: lc_clop_create refuses it with LC_ERR_UNSUPPORTED and a reason
 * (the runner then falls back to the CPU), leaking nothing. */
static void refuse(const char *label, const char *op, lc_attr *attrs, int na, lc_tensor *ins, int n_in, unsigned cm) {
  static const char *names[] = {"a", "b", "c", "d"};
  lc_node n = {0};
  n.name = "node0", n.op_type = op, n.domain = "";
  n.n_inputs = n_in, n.n_outputs = 1, n.inputs = names, n.outputs = names, n.n_attrs = na, n.attrs = attrs;
  const lc_tensor *in[4];
  for (int i = 0; i < n_in; i++) in[i] = ins[i].dtype == LC_DT_UNDEFINED ? NULL : &ins[i];
  lc_tensor o = {0};
  lc_status s = lc_op_find(op)->infer(&n, in, n_in, &o, 1);
  TU_CHECK(!s, "%s: infer: %s", label, lc_last_error());
  lc_exec_ctx x = {0};
  x.lc = g_cpu, x.const_inputs = cm;
  lc_clop *dop = NULL;
  if (!s) s = lc_clop_create(g_dev, &n, in, n_in, &o, 1, &x, cm, &dop);
  TU_CHECK(s == LC_ERR_UNSUPPORTED && !dop && *lc_last_error(), "%s: status %d, '%s'", label, s, lc_last_error());
  lc_clop_free(dop);
  g_cases++;
}

static void free_ins(lc_tensor *t, int n) {
  for (int i = 0; i < n; i++) free(t[i].data), t[i].data = NULL;
}

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void test_unary(void) {
  static const char *ops[] = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip",
                              "Sqrt", "Reciprocal", "Erf", "Exp", "Neg", "Abs"};
  for (size_t k = 0; k < 2 * (sizeof ops / sizeof ops[0]); k++) { /* 210 elements, then 144 (float4 kernel) */
    size_t o = k % (sizeof ops / sizeof ops[0]);
    int pos = !strcmp(ops[o], "Sqrt") || !strcmp(ops[o], "Reciprocal");
    lc_tensor in[3] = {k == o ? T(LC_DT_FLOAT, 4, D(2, 3, 5, 7), pos ? 0.25f : -4.0f, 4.0f)
                              : T(LC_DT_FLOAT, 4, D(1, 4, 6, 6), pos ? 0.25f : -4.0f, 4.0f)};
    int n_in = 1;
    lc_attr at[2] = {A_f("alpha", 0.3f), A_f("beta", 0.4f)};
    if (!strcmp(ops[o], "Clip")) in[1] = Tf(1, (float[]){-1.5f}), in[2] = Tf(1, (float[]){2.0f}), n_in = 3;
    check(ops[o], ops[o], at, strstr(ops[o], "Leaky") || strstr(ops[o], "HardSig") ? 2 : 0, in, n_in, 6u, 1, 1e-5, 0);
    check(ops[o], ops[o], NULL, 0, in, n_in, 6u, 1, 1e-5, 1);
    free_ins(in, n_in);
  }
  static const char *rnd[] = {"Floor", "Ceil", "Round"};
  for (int k = 0; k < 6; k++) { /* odd count (one float each), then float4s; halves and random values */
    lc_tensor x = k < 3 ? T(LC_DT_FLOAT, 3, D(3, 5, 7), -6, 6) : T(LC_DT_FLOAT, 2, D(8, 9), -6, 6);
    float *v = x.data;
    for (int i = 0; i < 40; i++) v[i] = (float)(i - 20) * 0.5f; /* ties: -10, -9.5, ..., 9.5 */
    v[41] = -0.0f, v[42] = NAN, v[43] = INFINITY, v[44] = 0.49999997f, v[45] = 8388609.0f;
    check(rnd[k % 3], rnd[k % 3], NULL, 0, &x, 1, 0u, 1, 0, 0);
    check(rnd[k % 3], rnd[k % 3], NULL, 0, &x, 1, 0u, 1, 0, 1);
    free(x.data);
  }
  lc_tensor bn[5] = {T(LC_DT_FLOAT, 4, D(2, 3, 4, 5), -2, 2), T(LC_DT_FLOAT, 1, D(3), 0.5f, 2),
                     T(LC_DT_FLOAT, 1, D(3), -1, 1), T(LC_DT_FLOAT, 1, D(3), -1, 1), T(LC_DT_FLOAT, 1, D(3), 0.1f, 2)};
  check("bn", "BatchNormalization", NULL, 0, bn, 5, 0x1eu, 1, 1e-5, 1);
  free(bn[0].data);
  bn[0] = T(LC_DT_FLOAT, 4, D(2, 3, 5, 7), -2, 2); /* inner 35: the one-float kernel */
  check("bn odd", "BatchNormalization", NULL, 0, bn, 5, 0x1eu, 1, 1e-5, 1);
  free_ins(bn, 5);
  int64_t shp[2] = {6, -1};
  lc_tensor v[2] = {T(LC_DT_FLOAT, 4, D(2, 3, 4, 5), -2, 2), Ti(2, shp)};
  check("reshape", "Reshape", NULL, 0, v, 2, 2u, 1, 0, 0);
  check("reshape in place", "Reshape", NULL, 0, v, 2, 2u, 1, 0, 1);
  check("flatten", "Flatten", NULL, 0, v, 1, 0u, 1, 0, 0);
  check("identity", "Identity", NULL, 0, v, 1, 0u, 1, 0, 0);
  free_ins(v, 2);
  static const lc_dtype dts[] = {LC_DT_FLOAT, LC_DT_UINT8, LC_DT_INT8, LC_DT_INT32, LC_DT_INT64, LC_DT_BOOL};
  lc_tensor cf = T(LC_DT_FLOAT, 2, D(7, 9), -300, 300), ci = T(LC_DT_INT64, 2, D(7, 9), -300, 300);
  for (int f = 0; f < 2; f++)
    for (int t = 0; t < 6; t++) {
      lc_attr to[1] = {A_i("to", dts[t])};
      check(f ? "cast from int64" : "cast from float", "Cast", to, 1, f ? &ci : &cf, 1, 0u, 1, 0, 0);
    }
  free(cf.data), free(ci.data);
}

static void test_binary(void) {
  struct { int na, nb; int64_t da[4], db[4]; const char *op; } c[] = {
      {3, 2, {2, 3, 4}, {3, 1}, "Add"},     {4, 4, {2, 3, 4, 5}, {1, 3, 1, 1}, "Mul"}, {1, 0, {7}, {0}, "Sub"},
      {2, 2, {1, 4}, {3, 1}, "Div"},        {3, 3, {2, 1, 5}, {1, 3, 1}, "Add"},      {4, 1, {2, 3, 4, 5}, {5}, "PRelu"},
      {4, 3, {2, 3, 4, 5}, {3, 1, 1}, "PRelu"}, {2, 2, {3, 4}, {3, 4}, "Sub"},       {3, 1, {3, 5, 7}, {1}, "Pow"},
      {4, 4, {1, 1, 1, 1}, {2, 3, 1, 5}, "Mul"},
      /* the float4 forms: same shapes, one value per row (SE-block Mul, PRelu), and swapped */
      {4, 4, {2, 3, 4, 6}, {2, 3, 4, 6}, "Sub"}, {4, 4, {1, 3, 4, 5}, {1, 3, 1, 1}, "Mul"},
      {4, 3, {1, 3, 4, 5}, {3, 1, 1}, "PRelu"},  {4, 4, {1, 3, 1, 1}, {1, 3, 4, 5}, "Mul"},
      {4, 4, {1, 3, 1, 1}, {1, 3, 4, 5}, "Sub"}};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    lc_tensor in[2] = {T(LC_DT_FLOAT, c[k].na, c[k].da, strcmp(c[k].op, "Pow") ? -2.0f : 0.5f, 2.0f),
                       T(LC_DT_FLOAT, c[k].nb, c[k].db, 0.5f, 2.0f)};
    char label[64];
    snprintf(label, sizeof label, "%s case %zu", c[k].op, k);
    for (unsigned cm = 0; cm < 3; cm++) check(label, c[k].op, NULL, 0, in, 2, cm, 1, 1e-5, 0);
    check(label, c[k].op, NULL, 0, in, 2, 0, 1, 1e-5, c[k].na == 4 || k == 7);
    if (!strcmp(c[k].op, "Pow")) {
      for (int e = 0; e < 3; e++) {
        ((float *)in[1].data)[0] = e == 0 ? 2.0f : e == 1 ? 0.5f : 1.0f;
        check("Pow special", "Pow", NULL, 0, in, 2, 2u, 1, 1e-5, 0);
      }
    }
    free_ins(in, 2);
  }
  static const char *i64[] = {"Add", "Sub", "Mul", "Div"};
  for (int k = 0; k < 4; k++) {
    lc_tensor in[2] = {T(LC_DT_INT64, 2, D(3, 4), -50, 50), T(LC_DT_INT64, 1, D(4), 1, 9)};
    ((int64_t *)in[1].data)[1] = -1;
    check(i64[k], i64[k], NULL, 0, in, 2, k == 3 ? 2u : 0u, 1, 0, 0);
    free_ins(in, 2);
  }
}

static void test_variadic(void) {
  struct { int n; int nd[4]; int64_t d[4][4]; } c[] = {
      {1, {3}, {{2, 3, 5}}},                                   /* one input: a copy */
      {2, {4, 4}, {{2, 3, 4, 6}, {2, 3, 4, 6}}},               /* same shapes: float4 */
      {2, {4, 4}, {{1, 3, 4, 5}, {1, 3, 1, 1}}},               /* one value per row: float4 */
      {2, {2, 3}, {{3, 1}, {2, 1, 5}}},                        /* both broadcast */
      {3, {3, 2, 1}, {{2, 3, 4}, {3, 1}, {1}}},
      {4, {3, 3, 1, 3}, {{2, 1, 5}, {1, 3, 1}, {5}, {2, 3, 5}}}, /* out larger than in0 op in1 */
      {4, {2, 2, 2, 2}, {{7, 9}, {7, 9}, {1, 9}, {7, 1}}}};
  static const char *ops[] = {"Min", "Max", "Sum", "Mean"};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    lc_tensor in[4] = {0};
    for (int i = 0; i < c[k].n; i++) in[i] = T(LC_DT_FLOAT, c[k].nd[i], c[k].d[i], -3, 3);
    if (c[k].n == 3) ((float *)in[1].data)[1] = NAN; /* Min / Max propagate NaN */
    for (int o = 0; o < 4; o++) {
      char label[64];
      snprintf(label, sizeof label, "%s case %zu", ops[o], k);
      double tol = o < 2 ? 0 : 1e-5;
      check(label, ops[o], NULL, 0, in, c[k].n, 0u, 1, tol, 0);
      if (c[k].n > 1) check(label, ops[o], NULL, 0, in, c[k].n, 2u, 1, tol, 0); /* a constant input */
    }
    free_ins(in, c[k].n);
  }
}

/* Random bools, and floats / ints with many equal pairs (steps of 0.5 in [-2, 2], ints in [-3, 3]). */
static lc_tensor Tl(lc_dtype dt, int nd, const int64_t *dims) {
  lc_tensor t = T(dt == LC_DT_INT64 ? dt : dt == LC_DT_FLOAT ? dt : LC_DT_UINT8, nd, dims, -3, 3);
  size_t cnt = t.nbytes / lc_dtype_size(t.dtype);
  for (size_t i = 0; i < cnt; i++) {
    if (dt == LC_DT_FLOAT) ((float *)t.data)[i] = (float)tu_rand_int(-4, 4) * 0.5f;
    else if (dt != LC_DT_INT64) ((uint8_t *)t.data)[i] = (uint8_t)tu_rand_int(0, dt == LC_DT_BOOL ? 1 : 255);
  }
  t.dtype = dt;
  return t;
}

static void test_logic(void) {
  static const char *cmp[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  static const lc_dtype dts[] = {LC_DT_FLOAT, LC_DT_INT64, LC_DT_UINT8};
  struct { int na, nb; int64_t da[4], db[4]; } sh[] = {
      {3, 3, {2, 3, 5}, {2, 3, 5}}, {3, 2, {2, 3, 5}, {3, 1}}, {2, 3, {4, 1}, {2, 1, 7}}, {1, 1, {9}, {1}}};
  for (int k = 0; k < 8; k++)
    for (int d = 0; d < (k < 5 ? 3 : 1); d++)
      for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++) {
        lc_dtype dt = k < 5 ? dts[d] : LC_DT_BOOL;
        lc_tensor in[2] = {Tl(dt, sh[c].na, sh[c].da), Tl(dt, sh[c].nb, sh[c].db)};
        char label[64];
        snprintf(label, sizeof label, "%s %s case %zu", cmp[k], lc_dtype_name(dt), c);
        check(label, cmp[k], NULL, 0, in, 2, c == 1 ? 2u : 0u, 1, 0, 0);
        free_ins(in, 2);
      }
  lc_tensor nt = Tl(LC_DT_BOOL, 3, D(3, 5, 7));
  check("not", "Not", NULL, 0, &nt, 1, 0u, 1, 0, 0);
  check("not in place", "Not", NULL, 0, &nt, 1, 0u, 1, 0, 1);
  free(nt.data);
  static const lc_dtype wdt[] = {LC_DT_FLOAT, LC_DT_INT64, LC_DT_UINT8};
  for (int d = 0; d < 3; d++) {
    lc_tensor w[3] = {Tl(LC_DT_BOOL, 3, D(2, 1, 5)), Tl(wdt[d], 2, D(3, 5)), Tl(wdt[d], 1, D(1))};
    check("where", "Where", NULL, 0, w, 3, 0u, 1, 0, 0);
    check("where constant x y", "Where", NULL, 0, w, 3, 6u, 1, 0, 0);
    free_ins(w, 3);
  }
}

static void test_refused(void) {
  lc_tensor i64[2] = {T(LC_DT_INT64, 2, D(3, 4), -5, 5), T(LC_DT_INT64, 1, D(4), -5, 5)};
  refuse("int64 Sum", "Sum", NULL, 0, i64, 2, 0u);
  lc_attr ax[1] = {A_i("axis", 1)};
  refuse("int64 ArgMax", "ArgMax", ax, 1, i64, 1, 0u);
  free_ins(i64, 2);
  lc_tensor gn[3] = {T(LC_DT_FLOAT, 4, D(1, 4, 3, 3), -1, 1), T(LC_DT_FLOAT, 1, D(4), -1, 1), T(LC_DT_FLOAT, 1, D(4), -1, 1)};
  refuse("instancenorm, computed scale", "InstanceNormalization", NULL, 0, gn, 3, 4u);
  lc_attr ga[1] = {A_i("num_groups", 2)};
  refuse("groupnorm, computed bias", "GroupNormalization", ga, 1, gn, 3, 2u);
  free_ins(gn, 3);
}

static void test_data(void) {
  lc_tensor cc[3] = {T(LC_DT_FLOAT, 4, D(2, 3, 4, 5), -1, 1), T(LC_DT_FLOAT, 4, D(2, 1, 4, 5), -1, 1),
                     T(LC_DT_FLOAT, 4, D(2, 5, 4, 5), -1, 1)};
  lc_attr ax1[1] = {A_i("axis", 1)};
  check("concat", "Concat", ax1, 1, cc, 3, 2u, 1, 0, 0);
  lc_attr axm[1] = {A_i("axis", -1)};
  lc_tensor c2[2] = {T(LC_DT_FLOAT, 3, D(3, 2, 7), -1, 1), T(LC_DT_FLOAT, 3, D(3, 2, 1), -1, 1)};
  check("concat last", "Concat", axm, 1, c2, 2, 0u, 1, 0, 0);
  lc_tensor c1[3] = {T(LC_DT_FLOAT, 4, D(1, 3, 4, 5), -1, 1), T(LC_DT_FLOAT, 4, D(1, 1, 4, 5), -1, 1),
                     T(LC_DT_FLOAT, 4, D(1, 5, 4, 5), -1, 1)};
  check("concat batch 1 (buffer copies)", "Concat", ax1, 1, c1, 3, 0u, 1, 0, 0);
  free_ins(c1, 3);
  free_ins(c2, 2);
  lc_tensor sp[2] = {cc[2], Ti(3, (int64_t[]){1, 3, 1})};
  check("split", "Split", ax1, 1, sp, 2, 2u, 3, 0, 0);
  check("split equal", "Split", axm, 1, sp, 1, 0u, 5, 0, 0);
  free(sp[1].data);
  lc_tensor sl[5] = {cc[0], Ti(3, (int64_t[]){-1, 1, 0}), Ti(3, (int64_t[]){-100, 4, 5}), Ti(3, (int64_t[]){3, 2, 1}),
                     Ti(3, (int64_t[]){-2, 2, 2})};
  check("slice", "Slice", NULL, 0, sl, 5, 0x1eu, 1, 0, 0);
  free_ins(sl + 1, 4);
  lc_attr pm[1] = {A_is("perm", (int64_t[]){0, 2, 3, 1}, 4)}, pm2[1] = {A_is("perm", (int64_t[]){3, 1, 0, 2}, 4)};
  check("transpose", "Transpose", pm, 1, cc, 1, 0u, 1, 0, 0);
  check("transpose 2", "Transpose", pm2, 1, cc, 1, 0u, 1, 0, 0);
  lc_tensor ex[2] = {T(LC_DT_FLOAT, 2, D(3, 1), -1, 1), Ti(3, (int64_t[]){2, 3, 4})};
  check("expand", "Expand", NULL, 0, ex, 2, 2u, 1, 0, 0);
  free_ins(ex, 2);
  static const char *modes[] = {"constant", "reflect", "edge", "wrap"};
  for (int m = 0; m < 4; m++) {
    lc_tensor pd[3] = {cc[0], Ti(8, (int64_t[]){0, 1, 2, 3, 0, 2, 1, 4}), Tf(1, (float[]){0.5f})};
    lc_attr am[1] = {A_s("mode", modes[m])};
    check(modes[m], "Pad", am, 1, pd, 3, 6u, 1, 0, 0);
    free_ins(pd + 1, 2);
  }
  lc_tensor g[2] = {cc[0], Ti(4, (int64_t[]){2, -1, 0, 2})};
  check("gather", "Gather", ax1, 1, g, 2, 2u, 1, 0, 0);
  lc_tensor g64[2] = {T(LC_DT_INT64, 2, D(5, 3), -9, 9), g[1]};
  check("gather i64", "Gather", NULL, 0, g64, 2, 2u, 1, 0, 0);
  free(g64[0].data);
  free(g[1].data);
  free_ins(cc, 3);
  static const char *dmodes[] = {"DCR", "CRD"};
  for (int m = 0; m < 2; m++)
    for (int b = 2; b <= 3; b++) {
      lc_attr da[2] = {A_i("blocksize", b), A_s("mode", dmodes[m])};
      lc_tensor d2 = T(LC_DT_FLOAT, 4, D(2, 3 * b * b, 3, 5), -1, 1), s2 = T(LC_DT_FLOAT, 4, D(2, 3, 2 * b, 3 * b), -1, 1);
      check(dmodes[m], "DepthToSpace", da, 2, &d2, 1, 0u, 1, 0, 0);
      check(dmodes[m], "SpaceToDepth", da, 2, &s2, 1, 0u, 1, 0, 0);
      free(d2.data), free(s2.data);
    }
  lc_tensor tl[2] = {T(LC_DT_FLOAT, 3, D(2, 3, 5), -1, 1), Ti(3, (int64_t[]){3, 1, 2})};
  check("tile", "Tile", NULL, 0, tl, 2, 2u, 1, 0, 0);
  lc_tensor tl64[2] = {T(LC_DT_INT64, 4, D(2, 1, 3, 1), -9, 9), Ti(4, (int64_t[]){1, 5, 2, 3})};
  check("tile i64", "Tile", NULL, 0, tl64, 2, 2u, 1, 0, 0);
  free_ins(tl, 2);
  free_ins(tl64, 2);
}

static void test_resize(void) {
  static const char *cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                              "tf_half_pixel_for_nn"};
  static const char *nns[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  lc_tensor x = T(LC_DT_FLOAT, 4, D(2, 3, 5, 7), -2, 2);
  for (int c = 0; c < 6; c++)
    for (int m = 0; m < 5; m++) {
      int linear = m == 4;
      if (linear && c == 5) continue; /* tf_half_pixel_for_nn is for nearest */
      lc_attr at[3] = {A_s("mode", linear ? "linear" : "nearest"), A_s("coordinate_transformation_mode", cts[c]),
                       A_s("nearest_mode", nns[linear ? 0 : m])};
      lc_tensor in[4] = {x, NONE, Tf(4, (float[]){1.0f, 1.0f, 2.0f, 0.6f}), NONE};
      char label[96];
      snprintf(label, sizeof label, "resize %s %s scales", at[0].s, cts[c]);
      check(label, "Resize", at, 3, in, 3, 4u, 1, 1e-5, 0);
      free(in[2].data);
      lc_tensor in2[4] = {x, NONE, NONE, Ti(4, (int64_t[]){2, 3, 11, 3})};
      snprintf(label, sizeof label, "resize %s %s sizes", at[0].s, cts[c]);
      check(label, "Resize", at, 3, in2, 4, 8u, 1, 1e-5, 0);
      free(in2[3].data);
    }
  for (int m = 0; m < 3; m++) { /* Upsample: scales as input 1 (opset 9) and as the attribute (opset 7) */
    const float sc[4] = {1.0f, 1.0f, 2.0f, 3.0f};
    lc_attr ua[2] = {A_s("mode", m == 0 ? "nearest" : m == 1 ? "linear" : "bilinear"), {0}};
    ua[1].name = "scales", ua[1].type = LC_ATTR_FLOATS, ua[1].floats = sc, ua[1].n = 4;
    lc_tensor in[2] = {x, Tf(4, sc)};
    check("upsample scales input", "Upsample", ua, 1, in, 2, 2u, 1, 1e-5, 0);
    check("upsample scales attribute", "Upsample", ua, 2, in, 1, 0u, 1, 1e-5, 0);
    free(in[1].data);
  }
  free(x.data);
}

static void test_pool_reduce(void) {
  lc_tensor x = T(LC_DT_FLOAT, 4, D(2, 3, 9, 11), -2, 2);
  lc_attr mp[3] = {A_is("kernel_shape", D(3, 3), 2), A_is("strides", D(2, 2), 2), A_is("pads", D(1, 1, 1, 1), 4)};
  check("maxpool", "MaxPool", mp, 3, &x, 1, 0, 1, 0, 0);
  for (int incl = 0; incl < 2; incl++) {
    lc_attr ap[5] = {A_is("kernel_shape", D(3, 2), 2), A_is("strides", D(2, 3), 2), A_is("pads", D(1, 0, 2, 1), 4),
                     A_i("count_include_pad", incl), A_i("ceil_mode", 1)};
    check("avgpool", "AveragePool", ap, 5, &x, 1, 0, 1, 1e-5, 0);
  }
  lc_attr dl[3] = {A_is("kernel_shape", D(2, 3), 2), A_is("dilations", D(2, 2), 2), A_s("auto_pad", "SAME_UPPER")};
  check("maxpool dilated same", "MaxPool", dl, 3, &x, 1, 0, 1, 0, 0);
  lc_tensor x1 = T(LC_DT_FLOAT, 3, D(2, 3, 13), -2, 2);
  lc_attr p1[2] = {A_is("kernel_shape", D(4), 1), A_is("strides", D(3), 1)};
  check("avgpool 1d", "AveragePool", p1, 2, &x1, 1, 0, 1, 1e-5, 0);
  free(x1.data);
  check("gap", "GlobalAveragePool", NULL, 0, &x, 1, 0, 1, 1e-4, 0);
  check("gmp", "GlobalMaxPool", NULL, 0, &x, 1, 0, 1, 0, 0);
  lc_tensor big = T(LC_DT_FLOAT, 4, D(1, 2, 40, 41), -2, 2);
  check("gap group", "GlobalAveragePool", NULL, 0, &big, 1, 0, 1, 1e-4, 0);
  lc_tensor big4 = T(LC_DT_FLOAT, 4, D(2, 3, 40, 40), -2, 2); /* rows of a multiple of 4: float4 loads */
  check("gap group float4", "GlobalAveragePool", NULL, 0, &big4, 1, 0, 1, 1e-4, 0);
  check("gmp group float4", "GlobalMaxPool", NULL, 0, &big4, 1, 0, 1, 0, 0);
  free(big4.data);
  lc_attr r1[2] = {A_is("axes", D(1), 1), A_i("keepdims", 0)}, r2[1] = {A_is("axes", D(-1, 0), 2)};
  static const char *reds[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL1",
                               "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd"};
  lc_tensor px = T(LC_DT_FLOAT, 4, D(2, 3, 9, 11), 0.5f, 1.5f), pbig = T(LC_DT_FLOAT, 4, D(1, 2, 40, 41), 0.97f, 1.03f);
  lc_attr r3[2] = {A_is("axes", D(0, 2), 2), A_i("keepdims", 1)}; /* reduced axes between kept ones */
  for (int k = 0; k < 9; k++) {
    lc_tensor *a = k == 8 ? &px : &x, *b = k == 8 ? &pbig : &big; /* products that neither overflow nor vanish */
    double tol = k < 4 ? 1e-4 : 1e-5;
    check(reds[k], reds[k], r1, 2, a, 1, 0, 1, tol, 0);
    check(reds[k], reds[k], r2, 1, a, 1, 0, 1, tol, 0);
    check(reds[k], reds[k], r3, 2, a, 1, 0, 1, tol, 0);
    check(reds[k], reds[k], NULL, 0, b, 1, 0, 1, tol, 0);
  }
  lc_tensor wide = T(LC_DT_FLOAT, 3, D(3, 300, 5), -2, 2); /* 300 terms over a middle axis: the group kernel */
  lc_attr rm[1] = {A_is("axes", D(1), 1)};
  for (int k = 0; k < 9; k++) check("reduce group strided", reds[k], rm, 1, k == 8 ? &pbig : &wide, 1, 0, 1, 1e-5, 0);
  free(wide.data), free(px.data), free(pbig.data);
  lc_tensor ln[3] = {T(LC_DT_FLOAT, 3, D(4, 3, 37), -3, 3), T(LC_DT_FLOAT, 1, D(37), -2, 2), T(LC_DT_FLOAT, 1, D(37), -1, 1)};
  lc_attr la[2] = {A_i("axis", -1), A_f("epsilon", 1e-5f)};
  check("layernorm last axis", "LayerNormalization", la, 2, ln, 3, 6u, 1, 1e-4, 0);
  check("layernorm no bias", "LayerNormalization", la, 2, ln, 2, 2u, 1, 1e-4, 0);
  lc_tensor ln2[2] = {T(LC_DT_FLOAT, 3, D(2, 5, 300), -3, 3), T(LC_DT_FLOAT, 2, D(5, 300), -2, 2)};
  lc_attr la2[1] = {A_i("axis", 1)};
  check("layernorm two axes", "LayerNormalization", la2, 1, ln2, 2, 2u, 1, 1e-4, 0);
  for (int i = 0; i < 3; i++) free(ln[i].data);
  for (int i = 0; i < 2; i++) free(ln2[i].data);
  for (int k = 0; k < 8; k++) { /* ArgMax / ArgMin: axes, keepdims, select_last_index, ties, NaN, int32 */
    const char *op = k & 1 ? "ArgMin" : "ArgMax";
    lc_tensor a = Tl(k < 6 ? LC_DT_FLOAT : LC_DT_UINT8, 3, D(3, 7, 5));
    if (k == 4) ((float *)a.data)[12] = NAN;
    lc_attr aa[3] = {A_i("axis", k / 2 % 3 - 1), A_i("keepdims", k & 2 ? 0 : 1), A_i("select_last_index", k >> 1 & 1)};
    check(op, op, aa, 3, &a, 1, 0u, 1, 0, 0);
    free(a.data);
  }
  lc_tensor a32 = T(LC_DT_INT32, 2, D(4, 9), 0, 0);
  for (int i = 0; i < 36; i++) ((int32_t *)a32.data)[i] = tu_rand_int(-5, 5) * 100000000;
  lc_attr a0[1] = {A_i("axis", 1)};
  check("argmax int32", "ArgMax", a0, 1, &a32, 1, 0u, 1, 0, 0);
  free(a32.data);
  lc_tensor in1[3] = {T(LC_DT_FLOAT, 4, D(2, 3, 7, 9), -3, 3), T(LC_DT_FLOAT, 1, D(3), -2, 2), T(LC_DT_FLOAT, 1, D(3), -1, 1)};
  check("instancenorm", "InstanceNormalization", NULL, 0, in1, 3, 6u, 1, 1e-5, 1);
  free_ins(in1, 3);
  lc_tensor in2[3] = {T(LC_DT_FLOAT, 3, D(1, 2, 1000), 2, 4), T(LC_DT_FLOAT, 1, D(2), -2, 2), T(LC_DT_FLOAT, 1, D(2), -1, 1)};
  check("instancenorm long rows, offset mean", "InstanceNormalization", NULL, 0, in2, 3, 6u, 1, 1e-5, 0);
  free_ins(in2, 3);
  for (int pg = 0; pg < 2; pg++) { /* scale per channel [C], and per group [G] (opset < 21) */
    lc_tensor gn[3] = {T(LC_DT_FLOAT, 4, D(2, 6, 5, 3), -3, 3), T(LC_DT_FLOAT, 1, D(pg ? 3 : 6), -2, 2),
                       T(LC_DT_FLOAT, 1, D(pg ? 3 : 6), -1, 1)};
    lc_attr ga[2] = {A_i("num_groups", 3), A_f("epsilon", 1e-3f)};
    check(pg ? "groupnorm per group" : "groupnorm", "GroupNormalization", ga, 2, gn, 3, 6u, 1, 1e-5, 0);
    free_ins(gn, 3);
  }
  lc_attr s1[1] = {A_i("axis", 1)};
  check("softmax axis 1", "Softmax", s1, 1, &x, 1, 0, 1, 1e-4, 1);
  check("softmax last", "Softmax", NULL, 0, &x, 1, 0, 1, 1e-4, 0);
  lc_tensor row = T(LC_DT_FLOAT, 2, D(3, 1000), -8, 8);
  check("softmax long rows", "Softmax", NULL, 0, &row, 1, 0, 1, 1e-4, 1);
  check("logsoftmax axis 1", "LogSoftmax", s1, 1, &x, 1, 0, 1, 1e-5, 1);
  check("logsoftmax last", "LogSoftmax", NULL, 0, &x, 1, 0, 1, 1e-5, 0);
  check("logsoftmax long rows", "LogSoftmax", NULL, 0, &row, 1, 0, 1, 1e-5, 1);
  free(row.data);
  free(big.data);
  free(x.data);
}

static void test_mm_conv(void) {
  double tq = g_wfmt ? 3e-2 : 1e-4;
  /* Gemm, constant B (transB) and per-column C: a 1x1 conv on the device */
  lc_tensor gm[3] = {T(LC_DT_FLOAT, 2, D(3, 37), -1, 1), T(LC_DT_FLOAT, 2, D(19, 37), -1, 1), T(LC_DT_FLOAT, 1, D(19), -1, 1)};
  lc_attr tb[1] = {A_i("transB", 1)};
  check("gemm fc", "Gemm", tb, 1, gm, 3, 6u, 1, tq, 0);
  lc_tensor gm2[3] = {gm[0], T(LC_DT_FLOAT, 2, D(37, 5), -1, 1), T(LC_DT_FLOAT, 2, D(3, 5), -1, 1)};
  lc_attr ab[2] = {A_f("alpha", 0.5f), A_f("beta", 2.0f)};
  check("gemm fc alpha beta full C", "Gemm", ab, 2, gm2, 3, 6u, 1, tq, 0);
  if (!g_wfmt) {
    check("gemm activations", "Gemm", ab, 2, gm2, 3, 0u, 1, 1e-4, 0);
    lc_tensor ta[2] = {T(LC_DT_FLOAT, 2, D(37, 3), -1, 1), gm[1]};
    lc_attr tt[2] = {A_i("transA", 1), A_i("transB", 1)};
    check("gemm transposed", "Gemm", tt, 2, ta, 2, 2u, 1, 1e-4, 0);
    free(ta[0].data);
    lc_tensor bm[2] = {T(LC_DT_FLOAT, 4, D(2, 1, 4, 5), -1, 1), T(LC_DT_FLOAT, 3, D(3, 5, 6), -1, 1)};
    check("matmul batched", "MatMul", NULL, 0, bm, 2, 0u, 1, 1e-4, 0);
    free_ins(bm, 2);
  }
  lc_tensor mm[2] = {T(LC_DT_FLOAT, 3, D(2, 3, 37), -1, 1), T(LC_DT_FLOAT, 2, D(37, 11), -1, 1)};
  check("matmul fc", "MatMul", NULL, 0, mm, 2, 2u, 1, tq, 0);
  free_ins(mm, 2);
  free_ins(gm2 + 1, 2);
  free_ins(gm, 3);
  /* Conv with bias, residual and activation fused, and a post affine */
  lc_tensor cv[4] = {T(LC_DT_FLOAT, 4, D(2, 6, 9, 7), -1, 1), T(LC_DT_FLOAT, 4, D(10, 3, 3, 3), -1, 1),
                     T(LC_DT_FLOAT, 1, D(10), -1, 1), T(LC_DT_FLOAT, 4, D(2, 10, 5, 3), -1, 1)};
  lc_attr ca[7] = {A_i("group", 2), A_is("strides", D(2, 2), 2), A_is("pads", D(1, 1, 1, 0), 4), A_i("_residual", 1),
                   A_i("_act", LC_ACT_CLIP), A_f("_act_min", -0.5f), A_f("_act_max", 1.5f)};
  check("conv residual clip", "Conv", ca, 7, cv, 4, 6u, 1, tq, 0);
  lc_attr cb[5] = {A_i("group", 2), A_is("strides", D(2, 2), 2), A_is("pads", D(1, 1, 1, 0), 4), A_i("_act", LC_ACT_HARD_SWISH),
                   A_f("_post_mul", 0.5f)};
  check("conv hswish post", "Conv", cb, 5, cv, 3, 6u, 1, tq, 0);
  free_ins(cv, 4);
  if (g_wfmt) return;
  /* ConvTranspose: k2 s2, and k3 s2 pad 1 output_padding 1 with groups, bias, residual, relu */
  lc_tensor ct[4] = {T(LC_DT_FLOAT, 4, D(2, 4, 5, 6), -1, 1), T(LC_DT_FLOAT, 4, D(4, 3, 2, 2), -1, 1),
                     T(LC_DT_FLOAT, 1, D(3), -1, 1), NONE};
  lc_attr k2[1] = {A_is("strides", D(2, 2), 2)};
  check("convtranspose k2s2", "ConvTranspose", k2, 1, ct, 3, 6u, 1, 1e-4, 0);
  free_ins(ct, 3);
  lc_tensor ct2[4] = {T(LC_DT_FLOAT, 4, D(1, 4, 5, 6), -1, 1), T(LC_DT_FLOAT, 4, D(4, 3, 3, 3), -1, 1),
                      T(LC_DT_FLOAT, 1, D(6), -1, 1), T(LC_DT_FLOAT, 4, D(1, 6, 10, 12), -1, 1)};
  lc_attr k3[6] = {A_is("strides", D(2, 2), 2), A_is("pads", D(1, 1, 1, 1), 4), A_is("output_padding", D(1, 1), 2),
                   A_i("group", 2), A_i("_residual", 1), A_i("_act", LC_ACT_RELU)};
  check("convtranspose k3s2 groups residual", "ConvTranspose", k3, 6, ct2, 4, 6u, 1, 1e-4, 0);
  free_ins(ct2, 4);
  lc_tensor ct3[4] = {T(LC_DT_FLOAT, 4, D(1, 4, 5, 7), -1, 1), T(LC_DT_FLOAT, 4, D(4, 3, 2, 2), -1, 1),
                      T(LC_DT_FLOAT, 1, D(6), -1, 1), T(LC_DT_FLOAT, 4, D(1, 6, 10, 14), -1, 1)};
  lc_attr k2g[4] = {A_is("strides", D(2, 2), 2), A_i("group", 2), A_i("_residual", 1), A_i("_act", LC_ACT_LEAKY_RELU)};
  check("convtranspose k2s2 groups residual leaky", "ConvTranspose", k2g, 4, ct3, 4, 6u, 1, 1e-4, 0);
  free_ins(ct3, 4);
}

int main(void) {
  tu_seed_from_env(20261201);
  lc_context_params p;
  lc_context_params_init(&p);
  if (lc_context_create(&p, &g_cpu)) return tu_finish("test_cl_ops");
  p.backend = LC_BACKEND_OPENCL;
  p.tune = LC_TUNE_NONE;
  char dir[] = "/tmp/lc_cl_ops_XXXXXX";
  p.cache_dir = getenv("LOWCONV_CACHE_DIR") ? NULL : mkdtemp(dir) ? dir : ""; /* NULL: that one */
  if (lc_context_create(&p, &g_dev)) {
    int req = getenv("LC_REQUIRE_OPENCL") && atoi(getenv("LC_REQUIRE_OPENCL"));
    printf("no OpenCL device: %s%s\n", lc_last_error(), req ? "" : " (skipped)");
    TU_CHECK(!req, "LC_REQUIRE_OPENCL is set but no device opened");
    lc_context_destroy(g_cpu);
    return tu_finish("test_cl_ops");
  }
  g_rt = ((lc_cl_ctx *)g_dev->dev)->rt;
  printf("device: %s\n", lc_context_device_name(g_dev));
  test_unary();
  test_binary();
  test_variadic();
  test_logic();
  test_refused();
  test_data();
  test_resize();
  test_pool_reduce();
  for (g_wfmt = 0; g_wfmt <= 2; g_wfmt++) test_mm_conv();
  printf("%d device op cases checked\n", g_cases);
  lc_context_destroy(g_dev);
  lc_context_destroy(g_cpu);
  return tu_finish("test_cl_ops");
}
