/* A conv whose fused residual is read through nearest integer upsampling ("_res_up" = f, set by
 * src/model/fuse_upsample.c for a plan on a device): the residual input is the small NCHW tensor
 * r, the epilogue adds r[n][o][y / f][x / f]. Checked against the plain reference, the CPU Conv
 * op with the residual upsampled beforehand (no _res_up), on odd shapes, f = 2 and 3, batch 2:
 *   the CPU Conv op with _res_up (what runs should the device hand the node back): exact;
 *   the device op with every conv kernel family forced (LOWCONV_CL_FAMILY / _VARIANT), including
 *   the split-K reduction (gemm 32x32s, wide) and Winograd's output transform: 1e-4 of max |out|
 *   for f32 (another summation order, fused multiply-adds), 3e-2 for q8 (the two sides quantize
 *   the weights separately);
 *   a residual that does not upsample to the output: refused by infer.
 * And UpConcat, the Concat that reads Resizes' inputs through their tables (check_upconcat). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#include "backend/opencl/cl_ops.h"
#include "lowconv.h"
#include "model/ops.h"
#include "model/ops/ops_plan.h"
#include "testutil.h"

static lc_context *g_cpu, *g_dev;
static lc_cl_rt *g_rt;

static lc_tensor tens(int nd, const int64_t *dims) {
  lc_tensor t = {0};
  t.name = "t", t.dtype = LC_DT_FLOAT, t.ndim = nd;
  size_t n = 1;
  for (int i = 0; i < nd; i++) t.dims[i] = dims[i], n *= (size_t)dims[i];
  t.nbytes = n * sizeof(float);
  t.data = calloc(1, t.nbytes + 8);
  tu_fill(t.data, n, -1, 1);
  return t;
}

/* CPU op run of node n into out (shape from infer); 0 on success. */
static int cpu_run(const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out, int wfmt) {
  const lc_op_impl *impl = lc_op_find("Conv");
  memset(out, 0, sizeof *out);
  lc_exec_ctx x = {0};
  x.lc = g_cpu, x.const_inputs = 6u, x.weight_format = wfmt, x.weight_block = wfmt ? 32 : 0;
  void *st = NULL;
  lc_status s = impl->infer(n, in, n_in, out, 1);
  if (!s) out->data = calloc(1, out->nbytes + 8);
  if (!s) s = impl->init(n, in, n_in, out, 1, &x, &st);
  if (!s) s = impl->run(n, st, in, n_in, out, 1, &x);
  if (st) impl->fini(st);
  return s != LC_OK;
}

static double max_err(const lc_tensor *a, const float *b, double *mx) {
  const float *p = a->data;
  double e = 0;
  *mx = 0;
  for (size_t i = 0; i < a->nbytes / sizeof(float); i++) *mx = fmax(*mx, fabs(p[i])), e = fmax(e, fabs(p[i] - b[i]));
  return e;
}

/* One case: conv C -> M (groups g, k x k, pad k / 2) on [N, C, OH, OW], residual upsampled by f. */
static void check(const char *fam, const char *var, int wfmt, int64_t N, int64_t C, int64_t M, int64_t g, int64_t k,
                  int64_t OH, int64_t OW, int64_t f) {
  char label[96];
  snprintf(label, sizeof label, "%s %s %s f=%lld %lldx%lld", wfmt ? "q8" : "f32", fam, var ? var : "",
           (long long)f, (long long)OH, (long long)OW);
  setenv("LOWCONV_CL_FAMILY", fam, 1);
  if (var) setenv("LOWCONV_CL_VARIANT", var, 1);
  else unsetenv("LOWCONV_CL_VARIANT");
  static const char *names[] = {"x", "w", "b", "r"};
  int64_t p = k / 2, pads[4] = {p, p, p, p};
  lc_tensor t[4] = {tens(4, (int64_t[]){N, C, OH, OW}), tens(4, (int64_t[]){M, C / g, k, k}), tens(1, (int64_t[]){M}),
                    tens(4, (int64_t[]){N, M, OH / f, OW / f})};
  lc_tensor big = tens(4, (int64_t[]){N, M, OH, OW}); /* r upsampled: the reference's residual */
  float *bp = big.data, *rp = t[3].data;
  for (int64_t i = 0; i < N * M * OH * OW; i++) {
    int64_t x = i % OW, y = i / OW % OH, pl = i / (OW * OH);
    bp[i] = rp[(pl * (OH / f) + y / f) * (OW / f) + x / f];
  }
  lc_attr at[4] = {{.name = "pads", .type = LC_ATTR_INTS, .ints = pads, .n = 4},
                   {.name = "group", .type = LC_ATTR_INT, .i = g},
                   {.name = "_residual", .type = LC_ATTR_INT, .i = 1},
                   {.name = "_res_up", .type = LC_ATTR_INT, .i = f}};
  lc_node n = {0};
  n.name = "conv", n.op_type = "Conv", n.domain = "", n.n_inputs = 4, n.n_outputs = 1, n.inputs = names;
  n.outputs = names, n.attrs = at, n.n_attrs = 4;
  lc_node plain = n;
  plain.n_attrs = 3;
  const lc_tensor *in[4] = {&t[0], &t[1], &t[2], &t[3]}, *inb[4] = {&t[0], &t[1], &t[2], &big};
  lc_tensor ref, cpu, dev;
  int bad = cpu_run(&plain, inb, 4, &ref, wfmt) || cpu_run(&n, in, 4, &cpu, wfmt);
  TU_CHECK(!bad, "%s: cpu: %s", label, lc_last_error());
  double mx = 0;
  if (!bad) TU_CHECK(max_err(&ref, cpu.data, &mx) == 0, "%s: CPU _res_up differs from the reference", label);
  dev = ref;
  dev.data = calloc(1, ref.nbytes + 8);
  lc_exec_ctx x = {0};
  x.lc = g_cpu, x.const_inputs = 6u, x.weight_format = wfmt, x.weight_block = wfmt ? 32 : 0;
  lc_clop *op = NULL;
  lc_status s = bad ? LC_ERR_INTERNAL : lc_clop_create(g_dev, &n, in, 4, &dev, 1, &x, 6u, &op);
  TU_CHECK(!s, "%s: device create: %s", label, lc_last_error());
  cl_mem mi[4] = {0}, mo[1] = {0};
  if (!s) s = lc_cl_buffer(g_rt, t[0].nbytes, t[0].data, &mi[0]);
  if (!s) s = lc_cl_buffer(g_rt, t[3].nbytes, t[3].data, &mi[3]);
  if (!s) s = lc_cl_buffer(g_rt, dev.nbytes, NULL, &mo[0]);
  if (!s) s = lc_clop_enqueue(op, mi, mo, NULL, NULL);
  if (!s) s = lc_cl_read(g_rt, mo[0], 0, dev.nbytes, dev.data);
  TU_CHECK(op == NULL || !s, "%s: device run: %s", label, lc_last_error());
  if (op && !s) {
    lc_clop_info info;
    lc_clop_describe(op, &info);
    double e = max_err(&ref, dev.data, &mx), tol = wfmt ? 3e-2 : 1e-4;
    TU_CHECK(!strncmp(info.kernel, fam, strlen(fam)), "%s: ran %s", label, info.kernel);
    TU_CHECK(e <= tol * fmax(mx, 1e-3), "%s: max error %g, max |out| %g", label, e, mx);
    printf("  %-34s %-14s err %.2e (max %.2f)\n", label, info.kernel, e, mx);
  }
  for (int i = 0; i < 4; i++) lc_cl_release_mem(g_rt, &mi[i]);
  lc_cl_release_mem(g_rt, &mo[0]);
  lc_clop_free(op);
  for (int i = 0; i < 4; i++) free(t[i].data);
  free(big.data), free(ref.data), free(cpu.data), free(dev.data);
}

/* The residual must be exactly [N, M, OH / f, OW / f]. */
static void check_refused(void) {
  static const char *names[] = {"x", "w", "b", "r"};
  int64_t pads[4] = {1, 1, 1, 1};
  lc_tensor t[4] = {tens(4, (int64_t[]){1, 3, 9, 12}), tens(4, (int64_t[]){4, 3, 3, 3}), tens(1, (int64_t[]){4}),
                    tens(4, (int64_t[]){1, 4, 3, 5})};
  lc_attr at[3] = {{.name = "pads", .type = LC_ATTR_INTS, .ints = pads, .n = 4},
                   {.name = "_residual", .type = LC_ATTR_INT, .i = 1},
                   {.name = "_res_up", .type = LC_ATTR_INT, .i = 3}};
  lc_node n = {0};
  n.name = "conv", n.op_type = "Conv", n.domain = "", n.n_inputs = 4, n.n_outputs = 1, n.inputs = names;
  n.outputs = names, n.attrs = at, n.n_attrs = 3;
  const lc_tensor *in[4] = {&t[0], &t[1], &t[2], &t[3]};
  lc_tensor out = {0};
  lc_status s = lc_op_find("Conv")->infer(&n, in, 4, &out, 1);
  TU_CHECK(s == LC_ERR_INVALID_ARG && strstr(lc_last_error(), "residual"), "mismatched residual: %d %s", (int)s,
           lc_last_error());
  for (int i = 0; i < 4; i++) free(t[i].data);
}

/* Runs op (CPU) into *out; 0 on success. */
static int cpu_op(const char *op, const lc_node *n, const lc_tensor *const *in, int n_in, lc_tensor *out) {
  const lc_op_impl *impl = lc_op_find(op);
  lc_exec_ctx x = {0};
  x.lc = g_cpu;
  void *st = NULL;
  memset(out, 0, sizeof *out);
  lc_status s = impl->infer(n, in, n_in, out, 1);
  if (!s) out->data = calloc(1, out->nbytes + 8);
  if (!s && impl->init) s = impl->init(n, in, n_in, out, 1, &x, &st);
  if (!s) s = impl->run(n, st, in, n_in, out, 1, &x);
  if (impl->fini) impl->fini(st);
  return s != LC_OK;
}

/* UpConcat (fuse_upsample.c) of 5 inputs (two device launches), batch 2, to 9x15: nearest x3
 * asymmetric / floor, plain, linear x3 half_pixel, nearest x3 half_pixel, linear x3 align_corners;
 * tables from the CPU's own resize plan. Against the CPU Resize ops and a concatenation: the CPU
 * UpConcat (the fallback) exact, the device 1e-6 of max |out| (the same operations; a device may
 * contract the blends into fused multiply-adds). */
static void check_upconcat(void) {
  static const char *names[] = {"a", "b", "c", "d", "e"};
  static const char *modes[5][2] = {{"nearest", "asymmetric"}, {NULL, NULL}, {"linear", "half_pixel"},
                                     {"nearest", "half_pixel"}, {"linear", "align_corners"}};
  const int64_t C[5] = {3, 2, 4, 1, 5}, OH = 9, OW = 15, L = OH + OW;
  float three[4] = {1, 1, 3, 3};
  lc_tensor sc = {0};
  sc.name = "s", sc.dtype = LC_DT_FLOAT, sc.ndim = 1, sc.dims[0] = 4, sc.nbytes = sizeof three, sc.data = three;
  lc_tensor x[5], rs[5], ref = tens(4, (int64_t[]){2, 15, OH, OW}), cpu = {0}, dev;
  int64_t mode[5], tab[5 * 2 * 24], hw[2] = {OH, OW}, at = 0, nr = 0;
  float wt[5 * 24];
  int bad = 0;
  for (int k = 0; k < 5; k++) {
    x[k] = modes[k][0] ? tens(4, (int64_t[]){2, C[k], 3, 5}) : tens(4, (int64_t[]){2, C[k], OH, OW});
    mode[k] = !modes[k][0] ? 0 : modes[k][0][0] == 'n' ? 1 : 2;
    rs[k] = x[k], rs[k].data = NULL;
    if (mode[k]) {
      lc_attr ra[3] = {{.name = "mode", .type = LC_ATTR_STRING, .s = modes[k][0]},
                       {.name = "coordinate_transformation_mode", .type = LC_ATTR_STRING, .s = modes[k][1]},
                       {.name = "nearest_mode", .type = LC_ATTR_STRING, .s = "floor"}};
      lc_node rn = {0};
      rn.name = "resize", rn.op_type = "Resize", rn.domain = "", rn.n_inputs = 3, rn.n_outputs = 1;
      rn.inputs = names, rn.outputs = names, rn.attrs = ra, rn.n_attrs = 3;
      const lc_tensor *ri[3] = {&x[k], NULL, &sc};
      resize_plan rp;
      bad |= cpu_op("Resize", &rn, ri, 3, &rs[k]) || lcop_resize_plan(&rn, ri, 3, &rp) != LC_OK;
      lcop_resize_axis(&rp, 3, OH, rp.scale[2], tab + nr * 2 * L, tab + nr * 2 * L + OH, wt + nr * L);
      lcop_resize_axis(&rp, 5, OW, rp.scale[3], tab + nr * 2 * L + 2 * OH, tab + nr * 2 * L + 2 * OH + OW,
                       wt + nr * L + OH);
      nr++;
    }
    const float *src = mode[k] ? rs[k].data : x[k].data;
    for (int64_t b = 0; !bad && b < 2; b++) /* the concatenation */
      memcpy((float *)ref.data + (b * 15 + at) * OH * OW, src + b * C[k] * OH * OW, (size_t)(C[k] * OH * OW) * 4);
    at += C[k];
  }
  TU_CHECK(!bad, "upconcat: reference: %s", lc_last_error());
  lc_attr ua[4] = {{.name = "_up_hw", .type = LC_ATTR_INTS, .ints = hw, .n = 2},
                   {.name = "_up_mode", .type = LC_ATTR_INTS, .ints = mode, .n = 5},
                   {.name = "_up_tab", .type = LC_ATTR_INTS, .ints = tab, .n = (size_t)(nr * 2 * L)},
                   {.name = "_up_wt", .type = LC_ATTR_FLOATS, .floats = wt, .n = (size_t)(nr * L)}};
  lc_node n = {0};
  n.name = "upconcat", n.op_type = "UpConcat", n.domain = "", n.n_inputs = 5, n.n_outputs = 1, n.inputs = names;
  n.outputs = names, n.attrs = ua, n.n_attrs = 4;
  const lc_tensor *in[5] = {&x[0], &x[1], &x[2], &x[3], &x[4]};
  double mx = 0;
  if (!bad) bad = cpu_op("UpConcat", &n, in, 5, &cpu);
  TU_CHECK(!bad, "upconcat: cpu: %s", lc_last_error());
  if (!bad) TU_CHECK(max_err(&ref, cpu.data, &mx) == 0, "upconcat: CPU UpConcat differs from Resize + Concat");
  dev = ref;
  dev.data = calloc(1, ref.nbytes + 8);
  lc_exec_ctx xc = {0};
  xc.lc = g_cpu;
  lc_clop *op = NULL;
  lc_status s = bad ? LC_ERR_INTERNAL : lc_clop_create(g_dev, &n, in, 5, &dev, 1, &xc, 0u, &op);
  TU_CHECK(!s, "upconcat: device create: %s", lc_last_error());
  cl_mem mi[5] = {0}, mo[1] = {0};
  for (int k = 0; !s && k < 5; k++) s = lc_cl_buffer(g_rt, x[k].nbytes, x[k].data, &mi[k]);
  if (!s) s = lc_cl_buffer(g_rt, dev.nbytes, NULL, &mo[0]);
  if (!s) s = lc_clop_enqueue(op, mi, mo, NULL, NULL);
  if (!s) s = lc_cl_read(g_rt, mo[0], 0, dev.nbytes, dev.data);
  TU_CHECK(op == NULL || !s, "upconcat: device run: %s", lc_last_error());
  if (op && !s) {
    double e = max_err(&ref, dev.data, &mx);
    TU_CHECK(e <= 1e-6 * fmax(mx, 1e-3), "upconcat: device max error %g, max |out| %g", e, mx);
    printf("  %-34s %-14s err %.2e (max %.2f)\n", "upconcat 5 inputs", "concat_up4", e, mx);
  }
  for (int k = 0; k < 5; k++) lc_cl_release_mem(g_rt, &mi[k]), free(x[k].data), free(rs[k].data);
  lc_cl_release_mem(g_rt, &mo[0]);
  lc_clop_free(op);
  free(ref.data), free(cpu.data), free(dev.data);
}

int main(void) {
  tu_seed_from_env(20261203);
  lc_context_params p;
  lc_context_params_init(&p);
  if (lc_context_create(&p, &g_cpu)) return tu_finish("test_cl_res_up");
  check_refused();
  p.backend = LC_BACKEND_OPENCL;
  p.tune = LC_TUNE_NONE;
  char dir[] = "/tmp/lc_cl_res_up_XXXXXX";
  p.cache_dir = getenv("LOWCONV_CACHE_DIR") ? NULL : mkdtemp(dir) ? dir : "";
  if (lc_context_create(&p, &g_dev)) {
    int req = getenv("LC_REQUIRE_OPENCL") && atoi(getenv("LC_REQUIRE_OPENCL"));
    printf("no OpenCL device: %s%s\n", lc_last_error(), req ? "" : " (skipped)");
    TU_CHECK(!req, "LC_REQUIRE_OPENCL is set but no device opened");
    lc_context_destroy(g_cpu);
    return tu_finish("test_cl_res_up");
  }
  g_rt = ((lc_cl_ctx *)g_dev->dev)->rt;
  setenv("LOWCONV_CL_DP4A_EMU", "1", 1); /* gemmq on a device without dp4a */
  check("gemm", "32x32", 0, 2, 5, 7, 1, 3, 9, 15, 3);
  check("gemm", "32x32s", 0, 1, 37, 6, 1, 3, 10, 14, 2);
  check("gemm", "32x32", 0, 2, 6, 10, 2, 1, 10, 14, 2);
  check("wide", NULL, 0, 2, 5, 7, 1, 3, 9, 15, 3);
  check("wino", "f2x2_32x32", 0, 2, 5, 7, 1, 3, 10, 14, 2);
  check("wino", "f4x4_32x32", 0, 1, 5, 7, 1, 3, 9, 15, 3);
  check("direct", "c8h4w1", 0, 2, 5, 7, 1, 3, 9, 15, 3);
  check("direct", "c4h1w4", 0, 1, 5, 9, 1, 3, 10, 14, 2);
  check("ref", NULL, 0, 2, 5, 7, 1, 3, 9, 15, 3);
  check("dw", "w4", 0, 2, 6, 6, 6, 3, 9, 15, 3);
  check("dw", "w1", 0, 1, 5, 5, 5, 3, 10, 14, 2);
  check("gemv", "p1", 0, 1, 9, 6, 1, 1, 2, 4, 2);
  check("gemmq", NULL, 1, 2, 8, 7, 1, 3, 9, 15, 3);
  unsetenv("LOWCONV_CL_FAMILY"), unsetenv("LOWCONV_CL_VARIANT");
  check_upconcat();
  lc_context_destroy(g_dev);
  lc_context_destroy(g_cpu);
  return tu_finish("test_cl_res_up");
}
