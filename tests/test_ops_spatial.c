/* Model operators over images: pooling, resize, conv and conv transpose (against naive loops). */
#include "ops_harness.h"

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

/* AveragePool on rows wide enough for every vector path of the pool_row kernels (s 1 / 2 / 3,
 * the 2x2 pair path, dilations, pads on either side, ceil_mode overhangs, both counts), three
 * channels so that the per-thread rows are reused, against the naive loop per channel. */
static void test_avgpool_wide(void) {
  lc_tensor out[1];
  for (int it = 0; it < 200; it++) {
    int incl = it & 1, ceil_mode = (it >> 1) & 1;
    int64_t H = tu_rand_int(1, 7), W = tu_rand_int(1, 45), C = 3;
    int64_t k[2] = {tu_rand_int(1, 4), tu_rand_int(1, 4)}, s[2] = {tu_rand_int(1, 3), tu_rand_int(1, 3)};
    int64_t d[2] = {tu_rand_int(1, 2), tu_rand_int(1, 2)};
    if (it % 4 == 0) k[1] = s[1] = 2, d[1] = 1;
    int64_t p[4] = {tu_rand_int(0, (int)k[0] - 1), tu_rand_int(0, (int)k[1] - 1), tu_rand_int(0, (int)k[0] - 1),
                    tu_rand_int(0, (int)k[1] - 1)};
    if (it % 3 == 0) p[1] = p[3] = 0; /* no column pads: the kernel reads the input rows directly */
    if (H + p[0] + p[2] < (k[0] - 1) * d[0] + 1 || W + p[1] + p[3] < (k[1] - 1) * d[1] + 1) continue;
    /* OH <= 7 + 6 and OW <= 45 + 6: a 16 x 64 plane per channel */
    float *x = malloc((size_t)(C * H * W) * sizeof(float)), *want = malloc((size_t)(C * 16 * 64) * sizeof(float));
    tu_fill(x, (size_t)(C * H * W), -3, 3);
    int64_t OH = 0, OW = 0, dims[4] = {1, C, H, W};
    for (int64_t c = 0; c < C; c++)
      naive_pool(0, incl, x + c * H * W, H, W, k, s, d, p, ceil_mode, want + c * 16 * 64, &OH, &OW);
    lc_attr a[6] = {a_ints("kernel_shape", k, 2), a_ints("strides", s, 2), a_ints("pads", p, 4),
                    a_int("ceil_mode", ceil_mode), a_ints("dilations", d, 2), a_int("count_include_pad", incl)};
    lc_tensor tin[1] = {tens(LC_DT_FLOAT, 4, dims, x)};
    lc_status st = run_op("AveragePool", a, 6, tin, 1, out, 1);
    int64_t od[4] = {1, C, OH, OW};
    TU_CHECK(st == LC_OK && same_dims(&out[0], 4, od), "avgpool wide %d: %s", it, lc_last_error());
    double diff = 0;
    for (int64_t c = 0; !st && c < C && same_dims(&out[0], 4, od); c++)
      for (int64_t q = 0; q < OH * OW; q++)
        diff = fmax(diff, fabs(((float *)out[0].data)[c * OH * OW + q] - want[c * 16 * 64 + q]));
    TU_CHECK(diff <= 1e-5, "avgpool wide %d (incl %d ceil %d H %lld W %lld k %lldx%lld s %lldx%lld d %lldx%lld): diff %g",
             it, incl, ceil_mode, (long long)H, (long long)W, (long long)k[0], (long long)k[1], (long long)s[0],
             (long long)s[1], (long long)d[0], (long long)d[1], diff);
    free_outs(out, 1);
    free(x), free(want);
  }
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

/* Gather-form reference in double: y[m, oh] sums x[c, ih] w[c, m, kh] where ih * s - p + kh * d = oh,
 * then the fused residual and ReLU. Tolerance 1e-5 absolute: |x|, |w| <= 1, at most 24 terms. */
static void test_conv_transpose(void) {
  struct { int64_t C, H, W, M, G, K, s, d, p, op, relu, res; } c[6 + 10] = {
      {2, 3, 4, 3, 1, 3, 2, 1, 1, 1, 0, 0}, {4, 5, 3, 4, 2, 2, 2, 1, 0, 0, 0, 0}, {3, 4, 4, 2, 1, 3, 1, 2, 2, 0, 0, 0},
      {2, 2, 3, 2, 1, 4, 3, 1, 1, 2, 0, 0},
      /* tall enough for the GEMM route's input slabs (a column block of ~256 KiB), k == s and not */
      {2, 128, 64, 4, 1, 2, 2, 1, 0, 0, 0, 0}, {2, 96, 64, 4, 1, 3, 2, 1, 1, 1, 0, 0}};
  /* k = s = 2 (the direct route) at random odd sizes: any remainder of its 16 / 8 input columns and
   * 3 channel pairs, more than its 48 pairs per call, groups, the fused residual and ReLU */
  for (size_t t = 6; t < sizeof c / sizeof c[0]; t++) {
    int64_t G = tu_rand_int(1, 3);
    c[t].G = G, c[t].C = G * tu_rand_int(1, 8), c[t].M = G * (t == 6 ? 25 : tu_rand_int(1, 9));
    c[t].H = tu_rand_int(1, 7), c[t].W = t == 7 ? 16 : tu_rand_int(1, 41), c[t].K = c[t].s = 2, c[t].d = 1;
    c[t].relu = tu_rand_int(0, 1), c[t].res = tu_rand_int(0, 1);
  }
  for (size_t t = 0; t < sizeof c / sizeof c[0]; t++) {
    int64_t Cg = c[t].C / c[t].G, Mg = c[t].M / c[t].G, K = c[t].K;
    int64_t OH = c[t].s * (c[t].H - 1) + c[t].op + (K - 1) * c[t].d + 1 - 2 * c[t].p;
    int64_t OW = c[t].s * (c[t].W - 1) + c[t].op + (K - 1) * c[t].d + 1 - 2 * c[t].p;
    size_t nx = (size_t)(c[t].C * c[t].H * c[t].W), nw = (size_t)(c[t].C * Mg * K * K), ny = (size_t)(c[t].M * OH * OW);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)c[t].M * 4), *want = malloc(ny * 4),
          *r = malloc(ny * 4);
    tu_fill(x, nx, -1, 1), tu_fill(w, nw, -1, 1), tu_fill(b, (size_t)c[t].M, -1, 1), tu_fill(r, ny, -1, 1);
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
          size_t o = (size_t)((m * OH + oh) * OW + ow);
          acc += c[t].res ? r[o] : 0.0;
          want[o] = (float)(c[t].relu && acc < 0 ? 0.0 : acc);
        }
    int64_t dx[4] = {1, c[t].C, c[t].H, c[t].W}, dw[4] = {c[t].C, Mg, K, K}, db[1] = {c[t].M}, dy[4] = {1, c[t].M, OH, OW};
    int64_t st[2] = {c[t].s, c[t].s}, dl[2] = {c[t].d, c[t].d}, pd[4] = {c[t].p, c[t].p, c[t].p, c[t].p},
            op[2] = {c[t].op, c[t].op};
    lc_attr at[7] = {a_ints("strides", st, 2), a_ints("dilations", dl, 2), a_ints("pads", pd, 4),
                     a_int("group", c[t].G), a_ints("output_padding", op, 2),
                     a_int("_act", c[t].relu ? LC_ACT_RELU : LC_ACT_NONE), a_int("_residual", (int)c[t].res)};
    lc_tensor in[4] = {tens(LC_DT_FLOAT, 4, dx, x), tens(LC_DT_FLOAT, 4, dw, w), tens(LC_DT_FLOAT, 1, db, b),
                       tens(LC_DT_FLOAT, 4, dy, r)};
    lc_tensor out[1];
    for (int route = 0; route < 2; route++) { /* weights at run time (rows), constant (GEMM + col2im) */
      g_const_mask = route ? 2u : 0u;
      lc_status s = run_op("ConvTranspose", at, 7, in, c[t].res ? 4 : 3, out, 1);
      TU_CHECK(s == LC_OK && same_dims(&out[0], 4, dy), "convtranspose case %zu route %d: %s", t, route, lc_last_error());
      if (!s) check_floats("convtranspose", out[0].data, want, ny, 1e-5f);
      free_outs(out, 1);
    }
    g_const_mask = 0;
    free(x), free(w), free(b), free(want), free(r);
  }
}

/* The shapes of trained models' AveragePools (PP-OCRv4 rec's 1x480x3x80 k3x2 s3x2) and odd
 * neighbours of them: ceil_mode overhangs, pads on one side, odd widths, both counts. */
static void test_avgpool_models(void) {
  static const struct { int64_t C, H, W, k[2], s[2], p[4]; int ceil, incl; } T[] = {
      {480, 3, 80, {3, 2}, {3, 2}, {0, 0, 0, 0}, 0, 0}, {33, 3, 81, {3, 2}, {3, 2}, {0, 0, 0, 0}, 1, 0},
      {17, 5, 83, {3, 2}, {3, 2}, {0, 0, 1, 1}, 1, 1},  {9, 7, 37, {2, 2}, {2, 2}, {1, 1, 0, 0}, 0, 1},
      {5, 6, 65, {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 0},   {3, 9, 31, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 1}};
  for (size_t t = 0; t < sizeof T / sizeof T[0]; t++) {
    int64_t C = T[t].C, H = T[t].H, W = T[t].W, d[2] = {1, 1}, OH = 0, OW = 0, dims[4] = {1, C, H, W};
    size_t plane = (size_t)((H + 2) * (W + 2));
    float *x = malloc((size_t)(C * H * W) * sizeof(float)), *want = malloc((size_t)C * plane * sizeof(float));
    tu_fill(x, (size_t)(C * H * W), -3, 3);
    for (int64_t c = 0; c < C; c++)
      naive_pool(0, T[t].incl, x + c * H * W, H, W, T[t].k, T[t].s, d, T[t].p, T[t].ceil, want + c * OH * OW, &OH, &OW);
    lc_attr a[5] = {a_ints("kernel_shape", T[t].k, 2), a_ints("strides", T[t].s, 2), a_ints("pads", T[t].p, 4),
                    a_int("ceil_mode", T[t].ceil), a_int("count_include_pad", T[t].incl)};
    lc_tensor tin[1] = {tens(LC_DT_FLOAT, 4, dims, x)}, out[1];
    lc_status st = run_op("AveragePool", a, 5, tin, 1, out, 1);
    int64_t od[4] = {1, C, OH, OW};
    TU_CHECK(st == LC_OK && same_dims(&out[0], 4, od), "avgpool model case %zu: %s", t, lc_last_error());
    if (!st && same_dims(&out[0], 4, od)) check_floats("avgpool model case", out[0].data, want, (size_t)(C * OH * OW), 1e-5f);
    free_outs(out, 1);
    free(x), free(want);
  }
}

/* A pool's init plans for one input shape; a run on another (a model re-planned with new dims)
 * must plan for that one, not reuse the tables. */
static void test_pool_other_shape(void) {
  int64_t k[2] = {3, 2}, s[2] = {3, 2}, p[4] = {1, 0, 1, 1}, d0[4] = {1, 2, 3, 8}, d1[4] = {1, 3, 7, 21};
  float x0[48] = {0}, x1[441];
  tu_fill(x1, 441, -3, 3);
  for (int is_max = 0; is_max < 2; is_max++) {
    lc_attr a[4] = {a_ints("kernel_shape", k, 2), a_ints("strides", s, 2), a_ints("pads", p, 4),
                    a_int("count_include_pad", 1)};
    lc_node n = {0};
    static const char *names[] = {"x"};
    n.name = "node0", n.op_type = is_max ? "MaxPool" : "AveragePool", n.domain = "";
    n.n_inputs = n.n_outputs = 1, n.inputs = n.outputs = names, n.n_attrs = 4, n.attrs = a;
    const lc_op_impl *impl = lc_op_find(n.op_type);
    lc_tensor t0 = tens(LC_DT_FLOAT, 4, d0, x0), t1 = tens(LC_DT_FLOAT, 4, d1, x1), o0, o1;
    const lc_tensor *i0[1] = {&t0}, *i1[1] = {&t1};
    lc_exec_ctx x = {0};
    x.lc = g_ctx;
    void *st = NULL;
    TU_CHECK(impl && !impl->infer(&n, i0, 1, &o0, 1) && !impl->infer(&n, i1, 1, &o1, 1) &&
                 !impl->init(&n, i0, 1, &o0, 1, &x, &st), "pool other shape: %s", lc_last_error());
    float want[3 * 3 * 11], *got = calloc(1, o1.nbytes);
    int64_t OH, OW, dd[2] = {1, 1};
    for (int c = 0; c < 3; c++) naive_pool(is_max, 1, x1 + c * 147, 7, 21, k, s, dd, p, 0, want + c * 33, &OH, &OW);
    o1.data = got;
    TU_CHECK(OH == 3 && OW == 11 && !impl->run(&n, st, i1, 1, &o1, 1, &x), "pool other shape run: %s", lc_last_error());
    check_floats(n.op_type, got, want, 99, 1e-5f);
    impl->fini(st);
    free(got);
  }
}

int main(void) {
  static void (*const one[])(void) = {test_pool, test_avgpool_wide, test_avgpool_models, test_pool_other_shape,
                                      test_resize, test_conv, test_conv_transpose};
  static void (*const two[])(void) = {test_pool, test_avgpool_wide, test_avgpool_models, test_conv, test_conv_transpose};
  return ops_main("test_ops_spatial", one, sizeof one / sizeof one[0], two, sizeof two / sizeof two[0]);
}
