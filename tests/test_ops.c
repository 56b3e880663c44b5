/* Unit tests of the ONNX operator implementations (src/model/ops), called directly with hand-built
 * nodes and tensors; each tricky case is compared with a naive loop or hand-computed values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "model/ops.h"
#include "testutil.h"

/* ---------------------------------------------------------------- harness */

static lc_attr a_int(const char *name, int64_t v) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_INT, a.i = v;
  return a;
}
static lc_attr a_float(const char *name, float v) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_FLOAT, a.f = v;
  return a;
}
static lc_attr a_ints(const char *name, const int64_t *v, size_t n) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_INTS, a.ints = v, a.n = n;
  return a;
}
static lc_attr a_str(const char *name, const char *s) {
  lc_attr a = {0};
  a.name = name, a.type = LC_ATTR_STRING, a.s = s;
  return a;
}

static lc_tensor tens(lc_dtype dt, int nd, const int64_t *dims, const void *data) {
  lc_tensor t = {0};
  t.name = "t", t.dtype = dt, t.ndim = nd;
  size_t n = 1;
  for (int i = 0; i < nd; i++) t.dims[i] = dims[i], n *= (size_t)dims[i];
  t.data = (void *)data;
  t.nbytes = n * (dt == LC_DT_INT64 ? 8 : 4);
  return t;
}

static lc_context *g_ctx;
static unsigned g_const_mask;       /* inputs the op may pack at init (lc_exec_ctx.const_inputs) */
static int g_wfmt, g_wblock;        /* weight format and block for Gemm / MatMul packing */

/* Runs infer / init / run / fini; outputs are malloc'ed (caller frees out[i].data). */
static lc_status run_op(const char *op, lc_attr *attrs, int na, lc_tensor *ins, int n_in, lc_tensor *out,
                        int n_out) {
  static const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  lc_node n = {0};
  n.name = "node0", n.op_type = op, n.domain = "";
  n.n_inputs = n_in, n.n_outputs = n_out, n.inputs = names, n.outputs = names;
  n.n_attrs = na, n.attrs = attrs;
  const lc_tensor *in[8];
  for (int i = 0; i < n_in; i++) in[i] = ins[i].dtype == LC_DT_UNDEFINED ? NULL : &ins[i];
  const lc_op_impl *impl = lc_op_find(op);
  if (!impl) return LC_ERR_UNSUPPORTED;
  for (int i = 0; i < n_out; i++) memset(&out[i], 0, sizeof out[i]);
  lc_status s = impl->infer(&n, in, n_in, out, n_out);
  if (s) return s;
  for (int i = 0; i < n_out; i++) out[i].data = calloc(1, out[i].nbytes + 1);
  lc_exec_ctx x = {0};
  x.lc = g_ctx;
  x.const_inputs = g_const_mask;
  x.weight_format = g_wfmt;
  x.weight_block = g_wblock;
  void *state = NULL;
  if (impl->init) s = impl->init(&n, in, n_in, out, n_out, &x, &state);
  if (!s) s = impl->run(&n, state, in, n_in, out, n_out, &x);
  if (impl->fini) impl->fini(state);
  return s;
}

static void free_outs(lc_tensor *out, int n) {
  for (int i = 0; i < n; i++) free(out[i].data), out[i].data = NULL;
}

static int same_dims(const lc_tensor *t, int nd, const int64_t *d) {
  if (t->ndim != nd) return 0;
  for (int i = 0; i < nd; i++)
    if (t->dims[i] != d[i]) return 0;
  return 1;
}

static void check_floats(const char *what, const float *got, const float *want, size_t n, float tol) {
  double d = tu_max_abs_diff(got, want, n);
  TU_CHECK(d <= tol, "%s: max diff %g", what, d);
}

/* ---------------------------------------------------------------- broadcasting */

static void test_broadcast(void) {
  /* [2,3,4] + [3,1], [2,3,4,5] * [1,3,1,1], [4] - scalar, [1,4] / [3,1] */
  struct { int na, nb; int64_t da[4], db[4]; const char *op; } cases[] = {
      {3, 2, {2, 3, 4}, {3, 1}, "Add"},        {4, 4, {2, 3, 4, 5}, {1, 3, 1, 1}, "Mul"},
      {1, 0, {4}, {0}, "Sub"},                 {2, 2, {1, 4}, {3, 1}, "Div"},
      {3, 3, {2, 1, 5}, {1, 3, 1}, "Add"},     {4, 1, {2, 3, 4, 5}, {5}, "PRelu"},
      {2, 2, {3, 4}, {3, 4}, "Sub"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int r = cases[c].na > cases[c].nb ? cases[c].na : cases[c].nb;
    int64_t od[4];
    size_t na = 1, nb = 1, no = 1;
    for (int i = 0; i < cases[c].na; i++) na *= (size_t)cases[c].da[i];
    for (int i = 0; i < cases[c].nb; i++) nb *= (size_t)cases[c].db[i];
    for (int i = 0; i < r; i++) {
      int ia = i - (r - cases[c].na), ib = i - (r - cases[c].nb);
      int64_t x = ia >= 0 ? cases[c].da[ia] : 1, y = ib >= 0 ? cases[c].db[ib] : 1;
      od[i] = x > y ? x : y;
      no *= (size_t)od[i];
    }
    float *A = malloc(na * 4), *B = malloc(nb * 4), *want = malloc(no * 4);
    tu_fill(A, na, -2, 2);
    tu_fill(B, nb, 0.5f, 2);
    for (size_t o = 0; o < no; o++) { /* naive: decompose the flat output index */
      size_t rem = o, ia = 0, ib = 0, sa = 1, sb = 1;
      for (int i = r - 1; i >= 0; i--) {
        size_t k = rem % (size_t)od[i];
        rem /= (size_t)od[i];
        int xa = i - (r - cases[c].na), xb = i - (r - cases[c].nb);
        if (xa >= 0) ia += (cases[c].da[xa] == 1 ? 0 : k) * sa, sa *= (size_t)cases[c].da[xa];
        if (xb >= 0) ib += (cases[c].db[xb] == 1 ? 0 : k) * sb, sb *= (size_t)cases[c].db[xb];
      }
      float x = A[ia], y = B[ib];
      const char *op = cases[c].op;
      want[o] = op[0] == 'A' ? x + y : op[0] == 'S' ? x - y : op[0] == 'M' ? x * y : op[0] == 'D' ? x / y
                                                                                    : (x < 0 ? x * y : x);
    }
    lc_tensor in[2] = {tens(LC_DT_FLOAT, cases[c].na, cases[c].da, A), tens(LC_DT_FLOAT, cases[c].nb, cases[c].db, B)};
    lc_tensor out[1];
    lc_status s = run_op(cases[c].op, NULL, 0, in, 2, out, 1);
    TU_CHECK(s == LC_OK, "broadcast case %zu: %s", c, lc_last_error());
    if (!s) {
      TU_CHECK(same_dims(&out[0], r, od), "broadcast case %zu: shape", c);
      check_floats(cases[c].op, out[0].data, want, no, 1e-6f);
    }
    free_outs(out, 1);
    free(A), free(B), free(want);
  }
  /* int64 shape arithmetic and its error path */
  int64_t d1[1] = {3}, d0[1] = {1};
  int64_t a[3] = {6, -9, INT64_MIN}, b[1] = {-1}, z[1] = {0};
  lc_tensor in[2] = {tens(LC_DT_INT64, 1, d1, a), tens(LC_DT_INT64, 1, d0, b)};
  lc_tensor out[1];
  TU_CHECK(run_op("Div", NULL, 0, in, 2, out, 1) == LC_OK, "int64 div");
  if (out[0].data) TU_CHECK(((int64_t *)out[0].data)[0] == -6 && ((int64_t *)out[0].data)[1] == 9, "int64 div values");
  free_outs(out, 1);
  in[1].data = z;
  TU_CHECK(run_op("Div", NULL, 0, in, 2, out, 1) == LC_ERR_INVALID_ARG, "int64 division by zero is an error");
  free_outs(out, 1);
  int64_t bad[2] = {2, 3}, bad2[2] = {4, 3};
  float buf[12] = {0};
  lc_tensor mis[2] = {tens(LC_DT_FLOAT, 2, bad, buf), tens(LC_DT_FLOAT, 2, bad2, buf)};
  TU_CHECK(run_op("Add", NULL, 0, mis, 2, out, 1) == LC_ERR_INVALID_ARG, "shapes that do not broadcast");
  TU_CHECK(strstr(lc_last_error(), "node0") != NULL, "message names the node: %s", lc_last_error());
}

/* ---------------------------------------------------------------- pooling */

/* Naive pool: ONNX output size; windows clipped to the input; count_include_pad counts taps inside
 * the declared pads. */
static void naive_pool(int is_max, int incl, const float *x, int64_t H, int64_t W, const int64_t *k, const int64_t *s,
                       const int64_t *d, const int64_t *p, int ceil_mode, float *y, int64_t *OH, int64_t *OW) {
  int64_t in[2] = {H, W}, out[2];
  for (int i = 0; i < 2; i++) {
    int64_t ek = (k[i] - 1) * d[i] + 1, span = in[i] + p[i] + p[i + 2] - ek;
    out[i] = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
    if (ceil_mode && (out[i] - 1) * s[i] >= in[i] + p[i]) out[i]--;
  }
  *OH = out[0], *OW = out[1];
  for (int64_t oh = 0; oh < out[0]; oh++)
    for (int64_t ow = 0; ow < out[1]; ow++) {
      double acc = is_max ? -INFINITY : 0;
      int64_t cnt = 0, pc = 0;
      for (int64_t i = 0; i < k[0]; i++)
        for (int64_t j = 0; j < k[1]; j++) {
          int64_t ih = oh * s[0] - p[0] + i * d[0], iw = ow * s[1] - p[1] + j * d[1];
          if (ih >= -p[0] && ih < H + p[2] && iw >= -p[1] && iw < W + p[3]) pc++;
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          cnt++;
          if (is_max) acc = fmax(acc, x[ih * W + iw]);
          else acc += x[ih * W + iw];
        }
      y[oh * out[1] + ow] = (float)(is_max ? acc : acc / (double)(incl ? pc : cnt));
    }
}

static void test_pool(void) {
  /* hand case: AveragePool 3x3 -> 2x2, k2 s2 ceil_mode: last windows are partial */
  float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, want9[4] = {3, 4.5f, 7.5f, 9};
  int64_t d4[4] = {1, 1, 3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2};
  lc_attr at[3] = {a_ints("kernel_shape", k2, 2), a_ints("strides", s2, 2), a_int("ceil_mode", 1)};
  lc_tensor in[1] = {tens(LC_DT_FLOAT, 4, d4, x9)}, out[1];
  TU_CHECK(run_op("AveragePool", at, 3, in, 1, out, 1) == LC_OK, "avgpool ceil: %s", lc_last_error());
  int64_t o4[4] = {1, 1, 2, 2};
  TU_CHECK(same_dims(&out[0], 4, o4), "avgpool ceil shape");
  if (out[0].data) check_floats("avgpool ceil", out[0].data, want9, 4, 1e-6f);
  free_outs(out, 1);
  /* sweep against the naive loop */
  for (int it = 0; it < 300; it++) {
    int is_max = it & 1, incl = (it >> 1) & 1, ceil_mode = (it >> 2) & 1;
    int64_t H = tu_rand_int(1, 9), W = tu_rand_int(1, 9);
    int64_t k[2] = {tu_rand_int(1, 3), tu_rand_int(1, 3)}, s[2] = {tu_rand_int(1, 3), tu_rand_int(1, 3)};
    int64_t d[2] = {is_max ? tu_rand_int(1, 2) : 1, is_max ? tu_rand_int(1, 2) : 1};
    int64_t p[4] = {tu_rand_int(0, (int)k[0] - 1), tu_rand_int(0, (int)k[1] - 1), tu_rand_int(0, (int)k[0] - 1),
                    tu_rand_int(0, (int)k[1] - 1)};
    if (H + p[0] + p[2] < (k[0] - 1) * d[0] + 1 || W + p[1] + p[3] < (k[1] - 1) * d[1] + 1) continue;
    float x[81], want[400];
    tu_fill(x, (size_t)(H * W), -3, 3);
    int64_t OH, OW, dims[4] = {1, 1, H, W};
    naive_pool(is_max, incl, x, H, W, k, s, d, p, ceil_mode, want, &OH, &OW);
    lc_attr a[6] = {a_ints("kernel_shape", k, 2), a_ints("strides", s, 2), a_ints("pads", p, 4),
                    a_int("ceil_mode", ceil_mode), is_max ? a_ints("dilations", d, 2) : a_int("count_include_pad", incl),
                    a_str("auto_pad", "NOTSET")};
    lc_tensor tin[1] = {tens(LC_DT_FLOAT, 4, dims, x)};
    lc_status st = run_op(is_max ? "MaxPool" : "AveragePool", a, 6, tin, 1, out, 1);
    int64_t od[4] = {1, 1, OH, OW};
    TU_CHECK(st == LC_OK && same_dims(&out[0], 4, od), "pool sweep %d: %s", it, lc_last_error());
    if (!st && same_dims(&out[0], 4, od)) {
      double diff = 0; /* windows entirely in the padding give -inf in both */
      for (int64_t q = 0; q < OH * OW; q++) {
        float g = ((float *)out[0].data)[q];
        if (g != want[q]) diff = fmax(diff, isnan(g - want[q]) ? INFINITY : fabs(g - want[q]));
      }
      TU_CHECK(diff <= 1e-5, "pool sweep %d (max %d incl %d ceil %d H %lld W %lld k %lldx%lld s %lldx%lld p %lld,%lld,%lld,%lld): diff %g",
               it, is_max, incl, ceil_mode, (long long)H, (long long)W, (long long)k[0], (long long)k[1], (long long)s[0],
               (long long)s[1], (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3], diff);
    }
    free_outs(out, 1);
  }
  /* SAME_UPPER puts the odd pad at the end: 1-D, W=4, k=3, s=2 -> out 2, pads (0, 1) */
  float x4[4] = {1, 2, 3, 4}, w2[2] = {2, 3.5f};
  int64_t d3[3] = {1, 1, 4}, k1[1] = {3}, s1[1] = {2};
  lc_attr a1[3] = {a_ints("kernel_shape", k1, 1), a_ints("strides", s1, 1), a_str("auto_pad", "SAME_UPPER")};
  lc_tensor t1[1] = {tens(LC_DT_FLOAT, 3, d3, x4)};
  TU_CHECK(run_op("AveragePool", a1, 3, t1, 1, out, 1) == LC_OK, "avgpool 1-D same_upper: %s", lc_last_error());
  if (out[0].data) check_floats("avgpool same_upper", out[0].data, w2, 2, 1e-6f);
  free_outs(out, 1);
  /* GlobalAveragePool and ReduceMean over axes {1, 3} with keepdims=0 */
  float g[24];
  for (int i = 0; i < 24; i++) g[i] = (float)i;
  int64_t dg[4] = {1, 2, 3, 4}, axes[2] = {1, 3};
  lc_tensor tg[1] = {tens(LC_DT_FLOAT, 4, dg, g)};
  TU_CHECK(run_op("GlobalAveragePool", NULL, 0, tg, 1, out, 1) == LC_OK, "gap");
  float gw[2] = {5.5f, 17.5f};
  if (out[0].data) check_floats("gap", out[0].data, gw, 2, 1e-5f);
  free_outs(out, 1);
  lc_attr ra[2] = {a_ints("axes", axes, 2), a_int("keepdims", 0)};
  TU_CHECK(run_op("ReduceMean", ra, 2, tg, 1, out, 1) == LC_OK, "reducemean");
  float rw[3] = {7.5f, 11.5f, 15.5f}; /* mean over c and w of rows h = 0..2 */
  int64_t rd[2] = {1, 3};
  TU_CHECK(same_dims(&out[0], 2, rd), "reducemean shape");
  if (out[0].data) check_floats("reducemean", out[0].data, rw, 3, 1e-5f);
  free_outs(out, 1);
  /* bad: kernel larger than the padded input */
  int64_t k9[2] = {9, 9};
  lc_attr bad[1] = {a_ints("kernel_shape", k9, 2)};
  TU_CHECK(run_op("MaxPool", bad, 1, in, 1, out, 1) == LC_ERR_INVALID_ARG, "pool kernel too large");
}

/* ---------------------------------------------------------------- resize */

static void test_resize(void) {
  float x[4] = {1, 2, 3, 4};
  int64_t d[4] = {1, 1, 2, 2}, d1[1] = {4}, d0[1] = {0};
  float sc2[4] = {1, 1, 2, 2};
  lc_tensor out[1];
  lc_tensor in[3] = {tens(LC_DT_FLOAT, 4, d, x), tens(LC_DT_FLOAT, 1, d0, NULL), tens(LC_DT_FLOAT, 1, d1, sc2)};
  /* linear half_pixel, the ONNX spec example */
  float lin[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
  lc_attr al[1] = {a_str("mode", "linear")};
  TU_CHECK(run_op("Resize", al, 1, in, 3, out, 1) == LC_OK, "resize linear: %s", lc_last_error());
  if (out[0].data) check_floats("resize linear half_pixel", out[0].data, lin, 16, 1e-6f);
  free_outs(out, 1);
  /* nearest asymmetric floor */
  float nn[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  lc_attr an[3] = {a_str("mode", "nearest"), a_str("coordinate_transformation_mode", "asymmetric"),
                   a_str("nearest_mode", "floor")};
  TU_CHECK(run_op("Resize", an, 3, in, 3, out, 1) == LC_OK, "resize nearest");
  if (out[0].data) check_floats("resize nearest asymmetric", out[0].data, nn, 16, 0);
  free_outs(out, 1);
  /* linear align_corners with sizes 3x3 */
  int64_t sizes[4] = {1, 1, 3, 3};
  float ac[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
  lc_tensor ins[4] = {in[0], tens(LC_DT_UNDEFINED, 0, NULL, NULL), tens(LC_DT_UNDEFINED, 0, NULL, NULL),
                      tens(LC_DT_INT64, 1, d1, sizes)};
  lc_attr aa[2] = {a_str("mode", "linear"), a_str("coordinate_transformation_mode", "align_corners")};
  TU_CHECK(run_op("Resize", aa, 2, ins, 4, out, 1) == LC_OK, "resize align_corners: %s", lc_last_error());
  if (out[0].data) check_floats("resize align_corners", out[0].data, ac, 9, 1e-6f);
  free_outs(out, 1);
  /* nearest half_pixel round_prefer_ceil downsample 4 -> 2 along W (1-D view) */
  float x4[4] = {1, 2, 3, 4}, half[1] = {0.5f}, w2[2] = {2, 4};
  int64_t dw[1] = {4}, one[1] = {1};
  lc_tensor in1[3] = {tens(LC_DT_FLOAT, 1, dw, x4), tens(LC_DT_UNDEFINED, 0, NULL, NULL), tens(LC_DT_FLOAT, 1, one, half)};
  lc_attr ap[1] = {a_str("nearest_mode", "round_prefer_ceil")};
  TU_CHECK(run_op("Resize", ap, 1, in1, 3, out, 1) == LC_OK, "resize prefer_ceil: %s", lc_last_error());
  if (out[0].data) check_floats("resize round_prefer_ceil", out[0].data, w2, 2, 0);
  free_outs(out, 1);
  /* unsupported: cubic; scaling the channel axis */
  lc_attr cub[1] = {a_str("mode", "cubic")};
  TU_CHECK(run_op("Resize", cub, 1, in, 3, out, 1) == LC_ERR_UNSUPPORTED, "cubic is unsupported");
  float scc[4] = {1, 2, 1, 1};
  in[2].data = scc;
  TU_CHECK(run_op("Resize", NULL, 0, in, 3, out, 1) == LC_ERR_UNSUPPORTED, "resizing C is unsupported");
}

/* ---------------------------------------------------------------- shape ops */

static void test_slice(void) {
  float x[10];
  for (int i = 0; i < 10; i++) x[i] = (float)i;
  int64_t d[1] = {10}, one[1] = {1};
  struct { int64_t st, en, step; int n; float first, last; } c[] = {
      {-3, -1, 1, 2, 7, 8},   {-1, INT64_MIN, -1, 10, 9, 0}, {100, 200, 1, 0, 0, 0}, {1, 9, 3, 3, 1, 7},
      {-100, 3, 1, 3, 0, 2},  {8, 2, -2, 3, 8, 4},           {0, INT64_MAX, INT64_MAX, 1, 0, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    int64_t ax[1] = {0};
    lc_tensor in[5] = {tens(LC_DT_FLOAT, 1, d, x), tens(LC_DT_INT64, 1, one, &c[i].st), tens(LC_DT_INT64, 1, one, &c[i].en),
                       tens(LC_DT_INT64, 1, one, ax), tens(LC_DT_INT64, 1, one, &c[i].step)};
    lc_tensor out[1];
    lc_status s = run_op("Slice", NULL, 0, in, 5, out, 1);
    TU_CHECK(s == LC_OK && out[0].dims[0] == c[i].n, "slice %zu: %s, got %lld elements", i, lc_last_error(),
             (long long)out[0].dims[0]);
    if (!s && c[i].n > 0) {
      const float *y = out[0].data;
      TU_CHECK(y[0] == c[i].first && y[c[i].n - 1] == c[i].last, "slice %zu values %g..%g", i, y[0], y[c[i].n - 1]);
    }
    free_outs(out, 1);
  }
  /* 2-D: negative axis, rows reversed */
  float m[6] = {1, 2, 3, 4, 5, 6}, want[4] = {5, 6, 1, 2};
  int64_t dm[2] = {3, 2}, st = -1, en = INT64_MIN, ax = -2, step = -2;
  lc_tensor in2[5] = {tens(LC_DT_FLOAT, 2, dm, m), tens(LC_DT_INT64, 1, one, &st), tens(LC_DT_INT64, 1, one, &en),
                      tens(LC_DT_INT64, 1, one, &ax), tens(LC_DT_INT64, 1, one, &step)};
  lc_tensor out[1];
  TU_CHECK(run_op("Slice", NULL, 0, in2, 5, out, 1) == LC_OK, "slice 2-D");
  if (out[0].data) check_floats("slice 2-D reverse", out[0].data, want, 4, 0);
  free_outs(out, 1);
  /* errors: step 0; non-constant starts */
  int64_t zero = 0;
  in2[4].data = &zero;
  TU_CHECK(run_op("Slice", NULL, 0, in2, 5, out, 1) == LC_ERR_INVALID_ARG, "slice step 0");
  in2[4].data = &step;
  in2[1].data = NULL;
  TU_CHECK(run_op("Slice", NULL, 0, in2, 5, out, 1) == LC_ERR_UNSUPPORTED, "slice non-constant starts");
}

static void test_shape_ops(void) {
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  int64_t d[3] = {2, 3, 4};
  lc_tensor out[3];
  /* Transpose [2,3,4] perm (2,0,1) */
  int64_t perm[3] = {2, 0, 1};
  lc_attr tp[1] = {a_ints("perm", perm, 3)};
  lc_tensor in[2] = {tens(LC_DT_FLOAT, 3, d, x)};
  TU_CHECK(run_op("Transpose", tp, 1, in, 1, out, 1) == LC_OK, "transpose");
  if (out[0].data) {
    int ok = 1;
    const float *y = out[0].data;
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) ok &= y[(k * 2 + i) * 3 + j] == x[(i * 3 + j) * 4 + k];
    TU_CHECK(ok, "transpose values");
  }
  free_outs(out, 1);
  /* Reshape with 0 and -1; allowzero */
  int64_t shp[2] = {0, -1}, two[1] = {2};
  lc_tensor rin[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_INT64, 1, two, shp)};
  TU_CHECK(run_op("Reshape", NULL, 0, rin, 2, out, 1) == LC_OK && out[0].dims[0] == 2 && out[0].dims[1] == 12,
           "reshape 0,-1");
  free_outs(out, 1);
  lc_attr az[1] = {a_int("allowzero", 1)};
  TU_CHECK(run_op("Reshape", az, 1, rin, 2, out, 1) == LC_ERR_INVALID_ARG, "allowzero: 0 is a real zero -> mismatch");
  rin[1].data = NULL;
  TU_CHECK(run_op("Reshape", NULL, 0, rin, 2, out, 1) == LC_ERR_UNSUPPORTED, "reshape with non-constant shape");
  /* Concat along axis -1 of [2,3,4] and [2,3,1] */
  float c1[6] = {100, 101, 102, 103, 104, 105};
  int64_t dc[3] = {2, 3, 1};
  lc_tensor cin[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_FLOAT, 3, dc, c1)};
  lc_attr ca[1] = {a_int("axis", -1)};
  TU_CHECK(run_op("Concat", ca, 1, cin, 2, out, 1) == LC_OK && out[0].dims[2] == 5, "concat");
  if (out[0].data) TU_CHECK(((float *)out[0].data)[4] == 100 && ((float *)out[0].data)[9] == 101, "concat values");
  free_outs(out, 1);
  lc_tensor cbad[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_FLOAT, 2, dc, c1)};
  TU_CHECK(run_op("Concat", ca, 1, cbad, 2, out, 1) == LC_ERR_INVALID_ARG, "concat rank mismatch");
  /* Split [2,3,4] on axis 2 into 3 outputs (num_outputs rule: 2,1,1 not possible -> ceil: 2,2,0?) use split input */
  int64_t sp[3] = {1, 2, 1}, three[1] = {3};
  lc_tensor sin[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_INT64, 1, three, sp)};
  lc_attr sa[1] = {a_int("axis", 2)};
  TU_CHECK(run_op("Split", sa, 1, sin, 2, out, 3) == LC_OK, "split");
  if (out[1].data) TU_CHECK(out[1].dims[2] == 2 && ((float *)out[1].data)[0] == 1 && ((float *)out[2].data)[1] == 7, "split values");
  free_outs(out, 3);
  /* Gather axis 1 with negative indices */
  int64_t idx[2] = {-1, 0}, di[1] = {2};
  lc_tensor gin[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_INT64, 1, di, idx)};
  lc_attr ga[1] = {a_int("axis", 1)};
  TU_CHECK(run_op("Gather", ga, 1, gin, 2, out, 1) == LC_OK && out[0].dims[1] == 2, "gather");
  if (out[0].data) TU_CHECK(((float *)out[0].data)[0] == 8 && ((float *)out[0].data)[4] == 0, "gather values");
  free_outs(out, 1);
  idx[0] = 3;
  TU_CHECK(run_op("Gather", ga, 1, gin, 2, out, 1) == LC_ERR_INVALID_ARG, "gather index out of range");
  free_outs(out, 1);
  /* Unsqueeze (axes input) then Squeeze (axes attribute) round trip; Shape with start */
  int64_t ua[2] = {0, -1};
  lc_tensor uin[2] = {tens(LC_DT_FLOAT, 3, d, x), tens(LC_DT_INT64, 1, di, ua)};
  TU_CHECK(run_op("Unsqueeze", NULL, 0, uin, 2, out, 1) == LC_OK && out[0].ndim == 5 && out[0].dims[4] == 1 &&
               out[0].dims[0] == 1,
           "unsqueeze");
  free_outs(out, 1);
  int64_t d5[5] = {1, 2, 3, 4, 1}, sq[1] = {4};
  lc_attr qa[1] = {a_ints("axes", sq, 1)};
  lc_tensor qin[1] = {tens(LC_DT_FLOAT, 5, d5, x)};
  TU_CHECK(run_op("Squeeze", qa, 1, qin, 1, out, 1) == LC_OK && out[0].ndim == 4, "squeeze");
  free_outs(out, 1);
  sq[0] = 1;
  TU_CHECK(run_op("Squeeze", qa, 1, qin, 1, out, 1) == LC_ERR_INVALID_ARG, "squeeze of a non-1 axis");
  lc_attr sha[1] = {a_int("start", -2)};
  lc_tensor shin[1] = {tens(LC_DT_FLOAT, 3, d, NULL)}; /* Shape needs no data */
  TU_CHECK(run_op("Shape", sha, 1, shin, 1, out, 1) == LC_OK && out[0].dims[0] == 2, "shape");
  if (out[0].data) TU_CHECK(((int64_t *)out[0].data)[0] == 3 && ((int64_t *)out[0].data)[1] == 4, "shape values");
  free_outs(out, 1);
  /* Pad reflect / edge on [3] -> pads (2, 1) */
  float p3[3] = {1, 2, 3}, wref[6] = {3, 2, 1, 2, 3, 2}, wedge[6] = {1, 1, 1, 2, 3, 3};
  int64_t dp[1] = {3}, pads[2] = {2, 1};
  lc_tensor pin[2] = {tens(LC_DT_FLOAT, 1, dp, p3), tens(LC_DT_INT64, 1, di, pads)};
  lc_attr pr[1] = {a_str("mode", "reflect")};
  TU_CHECK(run_op("Pad", pr, 1, pin, 2, out, 1) == LC_OK, "pad reflect: %s", lc_last_error());
  if (out[0].data) check_floats("pad reflect", out[0].data, wref, 6, 0);
  free_outs(out, 1);
  pr[0] = a_str("mode", "edge");
  TU_CHECK(run_op("Pad", pr, 1, pin, 2, out, 1) == LC_OK, "pad edge");
  if (out[0].data) check_floats("pad edge", out[0].data, wedge, 6, 0);
  free_outs(out, 1);
  /* Flatten axis 0 */
  lc_attr fa[1] = {a_int("axis", 0)};
  TU_CHECK(run_op("Flatten", fa, 1, in, 1, out, 1) == LC_OK && out[0].dims[0] == 1 && out[0].dims[1] == 24, "flatten");
  free_outs(out, 1);
  /* Constant value_ints */
  int64_t cv[3] = {7, 8, 9};
  lc_attr ka[1] = {a_ints("value_ints", cv, 3)};
  TU_CHECK(run_op("Constant", ka, 1, NULL, 0, out, 1) == LC_OK && out[0].dtype == LC_DT_INT64 && out[0].dims[0] == 3,
           "constant");
  if (out[0].data) TU_CHECK(((int64_t *)out[0].data)[2] == 9, "constant values");
  free_outs(out, 1);
  /* Cast float -> int64 truncates toward zero and saturates (NaN -> 0); Expand broadcasts */
  float cf[5] = {2.7f, -2.7f, 1e30f, -1e30f, NAN};
  int64_t dc5[1] = {5}, want5[5] = {2, -2, INT64_MAX, INT64_MIN, 0};
  lc_attr to[1] = {a_int("to", LC_DT_INT64)};
  lc_tensor cin1[1] = {tens(LC_DT_FLOAT, 1, dc5, cf)};
  TU_CHECK(run_op("Cast", to, 1, cin1, 1, out, 1) == LC_OK && out[0].dtype == LC_DT_INT64, "cast");
  if (out[0].data) TU_CHECK(memcmp(out[0].data, want5, sizeof want5) == 0, "cast values");
  free_outs(out, 1);
  float e3[3] = {1, 2, 3};
  int64_t de[2] = {3, 1}, es[3] = {2, 1, 4}, d3e[1] = {3};
  lc_tensor ein[2] = {tens(LC_DT_FLOAT, 2, de, e3), tens(LC_DT_INT64, 1, d3e, es)};
  TU_CHECK(run_op("Expand", NULL, 0, ein, 2, out, 1) == LC_OK && out[0].ndim == 3 && out[0].dims[1] == 3 &&
               out[0].dims[2] == 4,
           "expand");
  if (out[0].data) TU_CHECK(((float *)out[0].data)[5] == 2 && ((float *)out[0].data)[23] == 3, "expand values");
  free_outs(out, 1);
  TU_CHECK(lc_op_find("NoSuchOp") == NULL, "unknown op");
}

/* ---------------------------------------------------------------- gemm, matmul, softmax */

static void test_matmul(void) {
  /* Gemm transA, transB, alpha/beta, C as [N] */
  int64_t M = 3, N = 5, K = 7;
  float A[21], B[35], C[5], want[15];
  tu_fill(A, 21, -1, 1), tu_fill(B, 35, -1, 1), tu_fill(C, 5, -1, 1);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t p = 0; p < K; p++) s += (double)A[p * M + i] * B[j * K + p]; /* A is KxM, B is NxK */
      want[i * N + j] = (float)(0.5 * s + 2.0 * C[j]);
    }
  int64_t da[2] = {K, M}, db[2] = {N, K}, dc[1] = {N};
  lc_tensor in[3] = {tens(LC_DT_FLOAT, 2, da, A), tens(LC_DT_FLOAT, 2, db, B), tens(LC_DT_FLOAT, 1, dc, C)};
  lc_attr ga[4] = {a_int("transA", 1), a_int("transB", 1), a_float("alpha", 0.5f), a_float("beta", 2.0f)};
  lc_tensor out[1];
  TU_CHECK(run_op("Gemm", ga, 4, in, 3, out, 1) == LC_OK, "gemm: %s", lc_last_error());
  if (out[0].data) check_floats("gemm", out[0].data, want, 15, 1e-5f);
  free_outs(out, 1);
  /* MatMul [2,1,3,4] x [3,4,2] -> [2,3,3,2] */
  float X[24], Y[24], W[36];
  tu_fill(X, 24, -1, 1), tu_fill(Y, 24, -1, 1);
  for (int b0 = 0; b0 < 2; b0++)
    for (int b1 = 0; b1 < 3; b1++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
          double s = 0;
          for (int p = 0; p < 4; p++) s += (double)X[b0 * 12 + i * 4 + p] * Y[b1 * 8 + p * 2 + j];
          W[((b0 * 3 + b1) * 3 + i) * 2 + j] = (float)s;
        }
  int64_t dx[4] = {2, 1, 3, 4}, dy[3] = {3, 4, 2}, dw[4] = {2, 3, 3, 2};
  lc_tensor min[2] = {tens(LC_DT_FLOAT, 4, dx, X), tens(LC_DT_FLOAT, 3, dy, Y)};
  TU_CHECK(run_op("MatMul", NULL, 0, min, 2, out, 1) == LC_OK && same_dims(&out[0], 4, dw), "matmul: %s", lc_last_error());
  if (out[0].data) check_floats("matmul batched", out[0].data, W, 36, 1e-5f);
  free_outs(out, 1);
  /* Softmax axis 1 of [2,3,2] */
  float s[12], sw[12];
  tu_fill(s, 12, -3, 3);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 2; k++) {
      double z = 0;
      for (int c = 0; c < 3; c++) z += exp(s[b * 6 + c * 2 + k]);
      for (int c = 0; c < 3; c++) sw[b * 6 + c * 2 + k] = (float)(exp(s[b * 6 + c * 2 + k]) / z);
    }
  int64_t ds[3] = {2, 3, 2};
  lc_tensor sin[1] = {tens(LC_DT_FLOAT, 3, ds, s)};
  lc_attr sa[1] = {a_int("axis", 1)};
  TU_CHECK(run_op("Softmax", sa, 1, sin, 1, out, 1) == LC_OK, "softmax");
  if (out[0].data) check_floats("softmax", out[0].data, sw, 12, 1e-6f);
  free_outs(out, 1);
}

/* Gemm / MatMul with a constant B packed at init (f32 copy, q8, q4) against a naive loop:
 * M across the lc_qgemv path (<= 8) and the panel path, transB, alpha, C as [N] (folded into
 * the bias) and [M, N] (added after). Tolerance: per output, sum_k |a_k| * (half a code step of
 * the row's block), i.e. sum |a| * max|w| / (2 qmax), plus fp32 rounding. */
static void test_fc_packed(void) {
  static const int64_t Ms[] = {1, 3, 9, 37}, Ns[] = {5, 33}, Ks[] = {7, 64, 129};
  static const int qmax[3] = {0, 127, 7};
  enum { MAXE = 37 * 129 + 33 * 129 };
  float *A = malloc(37 * 129 * 4), *B = malloc(33 * 129 * 4), *C = malloc(37 * 33 * 4), *want = malloc(37 * 33 * 4),
        *tol = malloc(37 * 33 * 4);
  int cases = 0;
  for (int fmt = 0; fmt < 3; fmt++)
    for (size_t mi = 0; mi < 4; mi++)
      for (size_t ni = 0; ni < 2; ni++)
        for (size_t ki = 0; ki < 3; ki++)
          for (int tb = 0; tb < 2; tb++) {
            int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki];
            int cmode = (int)((mi + ki + (size_t)tb) % 3); /* 0 none, 1 [N], 2 [M, N] */
            float alpha = (mi + ni) % 2 ? 0.5f : 1.0f, beta = 1.5f;
            tu_fill(A, (size_t)(M * K), -1, 1), tu_fill(B, (size_t)(N * K), -1, 1), tu_fill(C, (size_t)(M * N), -1, 1);
            for (int64_t i = 0; i < M; i++)
              for (int64_t j = 0; j < N; j++) {
                double acc = 0, sa = 0, wmax = 0;
                for (int64_t p = 0; p < K; p++) {
                  float w = tb ? B[j * K + p] : B[p * N + j];
                  acc += (double)A[i * K + p] * w;
                  sa += fabs(A[i * K + p]);
                  wmax = fabs(w) > wmax ? fabs(w) : wmax;
                }
                double c = cmode == 1 ? C[j] : cmode == 2 ? C[i * N + j] : 0;
                want[i * N + j] = (float)(alpha * acc + beta * c);
                tol[i * N + j] = (float)(fmt ? alpha * sa * wmax / (2.0 * qmax[fmt]) * 1.01 : 0) + 1e-4f * (float)(1 + sa);
              }
            int64_t da[2] = {M, K}, db[2] = {tb ? N : K, tb ? K : N}, dc1[1] = {N}, dc2[2] = {M, N};
            lc_tensor in[3] = {tens(LC_DT_FLOAT, 2, da, A), tens(LC_DT_FLOAT, 2, db, B),
                               cmode == 2 ? tens(LC_DT_FLOAT, 2, dc2, C) : tens(LC_DT_FLOAT, 1, dc1, C)};
            lc_attr ga[3] = {a_int("transB", tb), a_float("alpha", alpha), a_float("beta", beta)};
            lc_tensor out[1];
            g_const_mask = 2u | 4u, g_wfmt = fmt, g_wblock = fmt ? 32 : 0;
            lc_status st = run_op("Gemm", ga, 3, in, cmode ? 3 : 2, out, 1);
            TU_CHECK(st == LC_OK, "packed gemm fmt %d M %lld: %s", fmt, (long long)M, lc_last_error());
            int bad = 0;
            for (int64_t e = 0; st == LC_OK && e < M * N && !bad; e++)
              bad = !(fabsf(((float *)out[0].data)[e] - want[e]) <= tol[e]);
            TU_CHECK(!bad, "packed gemm fmt %d M %lld N %lld K %lld transB %d C %d: out of tolerance", fmt, (long long)M,
                     (long long)N, (long long)K, tb, cmode);
            free_outs(out, 1);
            if (!tb && alpha == 1.0f) { /* MatMul [M/?, ..., K] x constant [K, N] */
              lc_tensor mm[2] = {tens(LC_DT_FLOAT, 2, da, A), tens(LC_DT_FLOAT, 2, db, B)};
              g_const_mask = 2u;
              st = run_op("MatMul", NULL, 0, mm, 2, out, 1);
              TU_CHECK(st == LC_OK, "packed matmul: %s", lc_last_error());
              bad = 0;
              for (int64_t e = 0; st == LC_OK && e < M * N && !bad; e++) {
                float w0 = want[e] - (cmode == 1 ? beta * C[e % N] : cmode == 2 ? beta * C[e] : 0.0f);
                bad = !(fabsf(((float *)out[0].data)[e] - w0) <= tol[e] + 1e-5f);
              }
              TU_CHECK(!bad, "packed matmul fmt %d M %lld N %lld K %lld: out of tolerance", fmt, (long long)M,
                       (long long)N, (long long)K);
              free_outs(out, 1);
            }
            cases++;
          }
  g_const_mask = 0, g_wfmt = 0, g_wblock = 0;
  TU_CHECK(cases == 144, "fc cases %d", cases);
  (void)MAXE;
  free(A), free(B), free(C), free(want), free(tol);
}

/* Elementwise ops over >= 64K elements split across the pool: each task pattern (pieces of one
 * long row, blocks of rows, unary chunks, BN planes) against a naive loop. */
static void test_large_elementwise(void) {
  enum { CH = 64, HW = 1700, E = CH * HW };
  float *x = malloc(E * 4), *y = malloc(E * 4), *ch = malloc(CH * 4), *want = malloc(E * 4);
  float one = 0.75f;
  tu_fill(x, E, -2, 2), tu_fill(y, E, -2, 2), tu_fill(ch, CH, 0.5f, 2);
  int64_t d[4] = {1, CH, 34, 50}, dch[4] = {1, CH, 1, 1}, d1[1] = {1}, dc[1] = {CH};
  lc_tensor out[1];
  struct { const char *op; int kind; } c[] = {{"Add", 0}, {"Mul", 1}, {"Sub", 2}, {"Pow", 3}, {"Sigmoid", 4}};
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    lc_tensor in[2] = {tens(LC_DT_FLOAT, 4, d, x), c[k].kind == 0 ? tens(LC_DT_FLOAT, 4, d, y)
                                                   : c[k].kind == 1 ? tens(LC_DT_FLOAT, 4, dch, ch)
                                                                    : tens(LC_DT_FLOAT, 1, d1, &one)};
    for (int e = 0; e < E; e++) {
      float a = x[e];
      want[e] = c[k].kind == 0 ? a + y[e] : c[k].kind == 1 ? a * ch[e / HW] : c[k].kind == 2 ? a - one
                : c[k].kind == 3 ? powf(a, one) : (float)(1.0 / (1.0 + exp(-(double)a)));
    }
    TU_CHECK(run_op(c[k].op, NULL, 0, in, c[k].kind == 4 ? 1 : 2, out, 1) == LC_OK, "%s large: %s", c[k].op,
             lc_last_error());
    int bad = 0;
    for (int e = 0; out[0].data && e < E && !bad; e++)
      bad = !(fabsf(((float *)out[0].data)[e] - want[e]) <= 1e-6f * (1 + fabsf(want[e]))) &&
            !(isnan(want[e]) && isnan(((float *)out[0].data)[e]));
    TU_CHECK(!bad, "%s large: differs from the naive loop", c[k].op);
    free_outs(out, 1);
  }
  float *var = malloc(CH * 4), *mean = malloc(CH * 4);
  tu_fill(var, CH, 0.5f, 2), tu_fill(mean, CH, -1, 1);
  lc_tensor bn[5] = {tens(LC_DT_FLOAT, 4, d, x), tens(LC_DT_FLOAT, 1, dc, ch), tens(LC_DT_FLOAT, 1, dc, mean),
                     tens(LC_DT_FLOAT, 1, dc, mean), tens(LC_DT_FLOAT, 1, dc, var)};
  for (int e = 0; e < E; e++) {
    int q = e / HW;
    float kk = ch[q] / sqrtf(var[q] + 1e-5f);
    want[e] = x[e] * kk + (mean[q] - mean[q] * kk);
  }
  TU_CHECK(run_op("BatchNormalization", NULL, 0, bn, 5, out, 1) == LC_OK, "bn large: %s", lc_last_error());
  if (out[0].data) check_floats("bn large", out[0].data, want, E, 1e-5f);
  free_outs(out, 1);
  free(x), free(y), free(ch), free(want), free(var), free(mean);
}

/* ---------------------------------------------------------------- conv, conv transpose */

/* Naive NCHW conv, explicit pads, groups; optional residual then relu. */
static void naive_conv(const float *x, const float *w, const float *b, const float *res, int relu, int64_t N,
                       int64_t C, int64_t H, int64_t W, int64_t M, int64_t G, int64_t KH, int64_t KW, int64_t s,
                       int64_t dil, int64_t p, float *y, int64_t OH, int64_t OW) {
  int64_t Cg = C / G, Mg = M / G;
  for (int64_t n = 0; n < N; n++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double acc = b ? b[m] : 0;
          for (int64_t c = 0; c < Cg; c++)
            for (int64_t i = 0; i < KH; i++)
              for (int64_t j = 0; j < KW; j++) {
                int64_t ih = oh * s - p + i * dil, iw = ow * s - p + j * dil;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += (double)x[((n * C + (m / Mg) * Cg + c) * H + ih) * W + iw] * w[((m * Cg + c) * KH + i) * KW + j];
              }
          size_t o = (size_t)(((n * M + m) * OH + oh) * OW + ow);
          if (res) acc += res[o];
          y[o] = (float)(relu && acc < 0 ? 0 : acc);
        }
}

static void test_conv(void) {
  struct { int64_t N, C, H, W, M, G, K, s, d, p; int res, relu; } c[] = {
      {1, 4, 7, 6, 8, 1, 3, 1, 1, 1, 0, 1}, {2, 6, 5, 5, 6, 3, 3, 2, 1, 1, 1, 1},
      {1, 8, 6, 7, 8, 8, 3, 1, 2, 2, 1, 0}, {1, 3, 4, 4, 5, 1, 1, 1, 1, 0, 0, 0}};
  for (size_t t = 0; t < sizeof c / sizeof c[0]; t++) {
    int64_t OH = (c[t].H + 2 * c[t].p - (c[t].K - 1) * c[t].d - 1) / c[t].s + 1;
    int64_t OW = (c[t].W + 2 * c[t].p - (c[t].K - 1) * c[t].d - 1) / c[t].s + 1;
    size_t nx = (size_t)(c[t].N * c[t].C * c[t].H * c[t].W), nw = (size_t)(c[t].M * c[t].C / c[t].G * c[t].K * c[t].K);
    size_t ny = (size_t)(c[t].N * c[t].M * OH * OW);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)c[t].M * 4), *r = malloc(ny * 4),
          *want = malloc(ny * 4);
    tu_fill(x, nx, -1, 1), tu_fill(w, nw, -1, 1), tu_fill(b, (size_t)c[t].M, -1, 1), tu_fill(r, ny, -1, 1);
    naive_conv(x, w, b, c[t].res ? r : NULL, c[t].relu, c[t].N, c[t].C, c[t].H, c[t].W, c[t].M, c[t].G, c[t].K,
               c[t].K, c[t].s, c[t].d, c[t].p, want, OH, OW);
    int64_t dx[4] = {c[t].N, c[t].C, c[t].H, c[t].W}, dw[4] = {c[t].M, c[t].C / c[t].G, c[t].K, c[t].K},
            db[1] = {c[t].M}, dy[4] = {c[t].N, c[t].M, OH, OW};
    int64_t st[2] = {c[t].s, c[t].s}, dl[2] = {c[t].d, c[t].d}, pd[4] = {c[t].p, c[t].p, c[t].p, c[t].p};
    lc_attr at[6] = {a_ints("strides", st, 2), a_ints("dilations", dl, 2), a_ints("pads", pd, 4),
                     a_int("group", c[t].G), a_int("_act", c[t].relu ? LC_ACT_RELU : LC_ACT_NONE),
                     a_int("_residual", c[t].res)};
    lc_tensor in[4] = {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_FLOAT, 4, dw, w), tens(LC_DT_FLOAT, 1, db, b),
                       tens(LC_DT_FLOAT, 4, dy, r)};
    lc_tensor out[1];
    lc_status s = run_op("Conv", at, 6, in, c[t].res ? 4 : 3, out, 1);
    TU_CHECK(s == LC_OK && same_dims(&out[0], 4, dy), "conv case %zu: %s", t, lc_last_error());
    if (!s) check_floats("conv", out[0].data, want, ny, 1e-4f);
    free_outs(out, 1);
    free(x), free(w), free(b), free(r), free(want);
  }
  /* bad: group does not divide C */
  float z[64] = {0};
  int64_t dx[4] = {1, 3, 2, 2}, dw[4] = {2, 1, 1, 1};
  lc_attr g2[1] = {a_int("group", 2)};
  lc_tensor in[2] = {tens(LC_DT_FLOAT, 4, dx, z), tens(LC_DT_FLOAT, 4, dw, z)};
  lc_tensor out[1];
  TU_CHECK(run_op("Conv", g2, 1, in, 2, out, 1) == LC_ERR_INVALID_ARG, "conv group mismatch");
  int64_t d5[5] = {1, 3, 2, 2, 2};
  lc_tensor in5[2] = {tens(LC_DT_FLOAT, 5, d5, z), tens(LC_DT_FLOAT, 5, d5, z)};
  TU_CHECK(run_op("Conv", NULL, 0, in5, 2, out, 1) == LC_ERR_UNSUPPORTED, "3-D conv unsupported");
  int64_t dw1[4] = {3, 3, 1, 1};
  lc_tensor nc[2] = {tens(LC_DT_FLOAT, 4, dx, z), tens(LC_DT_FLOAT, 4, dw1, NULL)};
  TU_CHECK(run_op("Conv", NULL, 0, nc, 2, out, 1) == LC_ERR_UNSUPPORTED, "conv with non-constant weights");
}

/* Gather-form reference: y[m, oh] sums x[c, ih] w[c, m, kh] where ih * s - p + kh * d = oh. */
static void test_conv_transpose(void) {
  struct { int64_t C, H, W, M, G, K, s, d, p, op; } c[] = {
      {2, 3, 4, 3, 1, 3, 2, 1, 1, 1}, {4, 5, 3, 4, 2, 2, 2, 1, 0, 0}, {3, 4, 4, 2, 1, 3, 1, 2, 2, 0},
      {2, 2, 3, 2, 1, 4, 3, 1, 1, 2}};
  for (size_t t = 0; t < sizeof c / sizeof c[0]; t++) {
    int64_t Cg = c[t].C / c[t].G, Mg = c[t].M / c[t].G, K = c[t].K;
    int64_t OH = c[t].s * (c[t].H - 1) + c[t].op + (K - 1) * c[t].d + 1 - 2 * c[t].p;
    int64_t OW = c[t].s * (c[t].W - 1) + c[t].op + (K - 1) * c[t].d + 1 - 2 * c[t].p;
    size_t nx = (size_t)(c[t].C * c[t].H * c[t].W), nw = (size_t)(c[t].C * Mg * K * K), ny = (size_t)(c[t].M * OH * OW);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)c[t].M * 4), *want = malloc(ny * 4);
    tu_fill(x, nx, -1, 1), tu_fill(w, nw, -1, 1), tu_fill(b, (size_t)c[t].M, -1, 1);
    for (int64_t m = 0; m < c[t].M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double acc = b[m];
          int64_t g = m / Mg;
          for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t i = 0; i < K; i++)
              for (int64_t j = 0; j < K; j++) {
                int64_t th = oh + c[t].p - i * c[t].d, tw = ow + c[t].p - j * c[t].d;
                if (th < 0 || tw < 0 || th % c[t].s || tw % c[t].s) continue;
                int64_t ih = th / c[t].s, iw = tw / c[t].s, cc = g * Cg + ci;
                if (ih >= c[t].H || iw >= c[t].W) continue;
                acc += (double)x[(cc * c[t].H + ih) * c[t].W + iw] * w[((cc * Mg + m % Mg) * K + i) * K + j];
              }
          want[(m * OH + oh) * OW + ow] = (float)acc;
        }
    int64_t dx[4] = {1, c[t].C, c[t].H, c[t].W}, dw[4] = {c[t].C, Mg, K, K}, db[1] = {c[t].M}, dy[4] = {1, c[t].M, OH, OW};
    int64_t st[2] = {c[t].s, c[t].s}, dl[2] = {c[t].d, c[t].d}, pd[4] = {c[t].p, c[t].p, c[t].p, c[t].p},
            op[2] = {c[t].op, c[t].op};
    lc_attr at[5] = {a_ints("strides", st, 2), a_ints("dilations", dl, 2), a_ints("pads", pd, 4),
                     a_int("group", c[t].G), a_ints("output_padding", op, 2)};
    lc_tensor in[3] = {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_FLOAT, 4, dw, w), tens(LC_DT_FLOAT, 1, db, b)};
    lc_tensor out[1];
    lc_status s = run_op("ConvTranspose", at, 5, in, 3, out, 1);
    TU_CHECK(s == LC_OK && same_dims(&out[0], 4, dy), "convtranspose case %zu: %s", t, lc_last_error());
    if (!s) check_floats("convtranspose", out[0].data, want, ny, 1e-5f);
    free_outs(out, 1);
    free(x), free(w), free(b), free(want);
  }
}

/* ---------------------------------------------------------------- elementwise */

static void test_elementwise(void) {
  float x[8] = {-4, -1, -0.5f, 0, 0.5f, 1, 3, 8};
  int64_t d[1] = {8}, dc[4] = {1, 2, 2, 2}, one[1] = {1}, d0[1] = {0};
  lc_tensor out[2];
  float lo = -1, hi = 2, wclip[8] = {-1, -1, -0.5f, 0, 0.5f, 1, 2, 2};
  lc_tensor cin[3] = {tens(LC_DT_FLOAT, 1, d, x), tens(LC_DT_FLOAT, 0, d0, &lo), tens(LC_DT_FLOAT, 0, d0, &hi)};
  TU_CHECK(run_op("Clip", NULL, 0, cin, 3, out, 1) == LC_OK, "clip inputs");
  if (out[0].data) check_floats("clip", out[0].data, wclip, 8, 0);
  free_outs(out, 1);
  lc_attr ca[2] = {a_float("min", -1), a_float("max", 2)};
  TU_CHECK(run_op("Clip", ca, 2, cin, 1, out, 1) == LC_OK, "clip attributes");
  if (out[0].data) check_floats("clip attr", out[0].data, wclip, 8, 0);
  free_outs(out, 1);
  float whs[8], whsig[8];
  for (int i = 0; i < 8; i++) {
    float v = fminf(fmaxf(x[i] / 6 + 0.5f, 0), 1);
    whs[i] = x[i] * v;
    whsig[i] = fminf(fmaxf(0.2f * x[i] + 0.5f, 0), 1);
  }
  TU_CHECK(run_op("HardSwish", NULL, 0, cin, 1, out, 1) == LC_OK, "hardswish");
  if (out[0].data) check_floats("hardswish", out[0].data, whs, 8, 1e-6f);
  free_outs(out, 1);
  TU_CHECK(run_op("HardSigmoid", NULL, 0, cin, 1, out, 1) == LC_OK, "hardsigmoid");
  if (out[0].data) check_floats("hardsigmoid", out[0].data, whsig, 8, 1e-6f);
  free_outs(out, 1);
  /* Sigmoid (polynomial exp) against fp64 over a wide range, NaN and infinities */
  enum { NS = 2003 };
  static float sx[NS], sw[NS];
  for (int i = 0; i < NS - 3; i++) sx[i] = -100.0f + 200.0f * (float)i / (float)(NS - 4);
  sx[NS - 3] = NAN, sx[NS - 2] = INFINITY, sx[NS - 1] = -INFINITY;
  for (int i = 0; i < NS; i++) sw[i] = (float)(1.0 / (1.0 + exp(-(double)sx[i])));
  int64_t dsn[1] = {NS};
  lc_tensor sin[1] = {tens(LC_DT_FLOAT, 1, dsn, sx)};
  TU_CHECK(run_op("Sigmoid", NULL, 0, sin, 1, out, 1) == LC_OK, "sigmoid");
  if (out[0].data) {
    const float *y = out[0].data;
    double worst = 0;
    for (int i = 0; i < NS - 3; i++) worst = fmax(worst, fabs(y[i] - sw[i]) / fmax(sw[i], 1e-30));
    TU_CHECK(worst < 1e-6, "sigmoid relative error %g", worst);
    TU_CHECK(isnan(y[NS - 3]) && y[NS - 2] == 1.0f && y[NS - 1] < 1e-30f, "sigmoid NaN/inf: %g %g %g", y[NS - 3],
             y[NS - 2], y[NS - 1]);
  }
  free_outs(out, 1);
  /* BatchNormalization on [1,2,2,2] */
  float sc[2] = {2, 0.5f}, bi[2] = {1, -1}, mu[2] = {0.5f, -2}, var[2] = {4, 0.25f}, wbn[8];
  for (int i = 0; i < 8; i++) {
    int c = i / 4;
    wbn[i] = (x[i] - mu[c]) / sqrtf(var[c] + 1e-5f) * sc[c] + bi[c];
  }
  int64_t d2[1] = {2};
  lc_tensor bin[5] = {tens(LC_DT_FLOAT, 4, dc, x), tens(LC_DT_FLOAT, 1, d2, sc), tens(LC_DT_FLOAT, 1, d2, bi),
                      tens(LC_DT_FLOAT, 1, d2, mu), tens(LC_DT_FLOAT, 1, d2, var)};
  TU_CHECK(run_op("BatchNormalization", NULL, 0, bin, 5, out, 1) == LC_OK, "batchnorm");
  if (out[0].data) check_floats("batchnorm", out[0].data, wbn, 8, 1e-5f);
  free_outs(out, 1);
  bin[1].dims[0] = 3;
  TU_CHECK(run_op("BatchNormalization", NULL, 0, bin, 5, out, 1) == LC_ERR_INVALID_ARG, "batchnorm bad scale shape");
  /* Dropout: identity plus an all-true mask; training mode is refused */
  TU_CHECK(run_op("Dropout", NULL, 0, cin, 1, out, 2) == LC_OK && out[1].dtype == LC_DT_BOOL, "dropout mask");
  if (out[1].data) TU_CHECK(((unsigned char *)out[1].data)[7] == 1 && ((float *)out[0].data)[6] == 3, "dropout values");
  free_outs(out, 2);
  unsigned char tr = 1;
  float ratio = 0.5f;
  lc_tensor din[3] = {cin[0], tens(LC_DT_FLOAT, 0, one, &ratio), tens(LC_DT_BOOL, 0, one, &tr)};
  TU_CHECK(run_op("Dropout", NULL, 0, din, 3, out, 1) == LC_ERR_UNSUPPORTED, "dropout training mode");
  free_outs(out, 1);
}

/* Every allocation an op makes may fail: the op must return LC_ERR_NO_MEMORY (or succeed if the
 * failing allocation is past its last one) and leak nothing. */
static void test_alloc_failures(void) {
  float x[2 * 4 * 6 * 6], w[4 * 4 * 3 * 3], b[4];
  tu_fill(x, sizeof x / 4, -1, 1), tu_fill(w, sizeof w / 4, -1, 1), tu_fill(b, 4, -1, 1);
  int64_t dx[4] = {2, 4, 6, 6}, dw[4] = {4, 4, 3, 3}, db[1] = {4}, k3[2] = {3, 3}, p1[4] = {1, 1, 1, 1};
  int64_t d4[1] = {4}, d8[1] = {8}, pads[8] = {0, 0, 1, 2, 0, 0, 2, 1};
  float sc[4] = {1, 1, 2, 2};
  struct { const char *op; lc_attr a[2]; int na; lc_tensor in[3]; int n_in; } c[] = {
      {"Conv", {a_ints("pads", p1, 4)}, 1, {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_FLOAT, 4, dw, w), tens(LC_DT_FLOAT, 1, db, b)}, 3},
      {"ConvTranspose", {a_ints("pads", p1, 4)}, 1, {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_FLOAT, 4, dw, w), tens(LC_DT_FLOAT, 1, db, b)}, 3},
      {"MaxPool", {a_ints("kernel_shape", k3, 2), a_ints("pads", p1, 4)}, 2, {tens(LC_DT_FLOAT, 4, dx, x)}, 1},
      {"Resize", {a_str("mode", "linear")}, 1, {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_UNDEFINED, 0, NULL, NULL), tens(LC_DT_FLOAT, 1, d4, sc)}, 3},
      {"Pad", {a_str("mode", "reflect")}, 1, {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_INT64, 1, d8, pads)}, 2}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    size_t base = lc_alloc_current_bytes();
    int ok_seen = 0;
    for (long k = 1; k <= 12 && !ok_seen; k++) {
      lc_tensor out[1];
      lc_alloc_fail_after(k);
      lc_status s = run_op(c[i].op, c[i].a, c[i].na, c[i].in, c[i].n_in, out, 1);
      lc_alloc_fail_after(0);
      TU_CHECK(s == LC_OK || s == LC_ERR_NO_MEMORY, "%s: failing allocation %ld gave %s: %s", c[i].op, k,
               lc_status_name(s), lc_last_error());
      TU_CHECK(lc_alloc_current_bytes() == base, "%s: leak after failing allocation %ld", c[i].op, k);
      ok_seen = s == LC_OK;
      free_outs(out, 1);
    }
    TU_CHECK(ok_seen, "%s never succeeded", c[i].op);
  }
}

int main(void) {
  tu_seed_from_env(12345);
  lc_context_params p;
  lc_context_params_init(&p);
  if (lc_context_create(&p, &g_ctx) != LC_OK) {
    fprintf(stderr, "context: %s\n", lc_last_error());
    return 1;
  }
  test_broadcast();
  test_pool();
  test_resize();
  test_slice();
  test_shape_ops();
  test_matmul();
  test_fc_packed();
  test_large_elementwise();
  test_conv();
  test_conv_transpose();
  test_elementwise();
  test_alloc_failures();
  lc_context_destroy(g_ctx);
  /* again with a 2-thread pool: ops that split work across threads must give the same results */
  p.threads = 2;
  if (lc_context_create(&p, &g_ctx) != LC_OK) return 1;
  test_pool();
  test_fc_packed();
  test_large_elementwise();
  test_conv();
  test_conv_transpose();
  lc_context_destroy(g_ctx);
  TU_CHECK(lc_alloc_current_bytes() == 0, "library allocations leaked: %zu bytes", lc_alloc_current_bytes());
  return tu_finish("test_ops");
}
