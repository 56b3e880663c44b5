/* Model operators: MatMul / Gemm (plain and with packed or quantized weights), Softmax, and
 * elementwise ops on tensors large enough to be split over threads. */
#include "ops_harness.h"

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

/* MatMul of two computed operands by the GEMM microkernel's tiles: every M / N remainder of the
 * 6x16 (avx2) and 4x8 (scalar) tiles, K from 0, batches broadcast on either side, and enough
 * work on the 2-thread pass to split the batches. Against double dot products; the bound is
 * K float roundings of sum |a b|. */
static void test_matmul_tiles(void) {
  for (int it = 0; it < 120; it++) {
    int64_t M = tu_rand_int(1, 40), N = tu_rand_int(1, 40), K = it < 4 ? it : tu_rand_int(1, 64);
    int64_t b0 = tu_rand_int(1, 3), b1 = tu_rand_int(1, 4);
    if (it % 10 == 9) M = 64, N = 64, K = 64, b0 = 4, b1 = 2; /* past MM_PAR_MIN */
    int bcast = it % 3; /* 0: none, 1: A has batch dim 1 on axis 1, 2: B is 3-D */
    int64_t da[4] = {b0, bcast == 1 ? 1 : b1, M, K}, db[4] = {b0, b1, K, N}, dy[4] = {b0, b1, M, N};
    size_t na = (size_t)(da[0] * da[1] * M * K), nb = (size_t)((bcast == 2 ? 1 : b0) * b1 * K * N);
    float *A = malloc((na + 1) * sizeof(float)), *B = malloc((nb + 1) * sizeof(float));
    tu_fill(A, na, -1, 1), tu_fill(B, nb, -1, 1);
    lc_tensor in[2] = {tens(LC_DT_FLOAT, 4, da, A),
                       bcast == 2 ? tens(LC_DT_FLOAT, 3, db + 1, B) : tens(LC_DT_FLOAT, 4, db, B)};
    lc_tensor out[1];
    lc_status st = run_op("MatMul", NULL, 0, in, 2, out, 1);
    TU_CHECK(st == LC_OK && same_dims(&out[0], 4, dy), "matmul tiles %d: %s", it, lc_last_error());
    double worst = 0;
    for (int64_t x = 0; !st && x < b0; x++)
      for (int64_t y = 0; y < b1; y++)
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            const float *a = A + ((x * da[1] + (bcast == 1 ? 0 : y)) * M + i) * K;
            const float *b = B + ((bcast == 2 ? 0 : x) * b1 + y) * K * N + j;
            double ref = 0, mag = 0;
            for (int64_t p = 0; p < K; p++) ref += (double)a[p] * b[p * N], mag += fabs((double)a[p] * b[p * N]);
            double got = ((const float *)out[0].data)[((x * b1 + y) * M + i) * N + j];
            worst = fmax(worst, fabs(got - ref) / ((double)(K + 1) * 6e-8 * mag + 1e-30));
          }
    TU_CHECK(worst <= 1.0, "matmul tiles %d (%lldx%lldx%lld, batch %lldx%lld, bcast %d): error %.3g x the bound", it,
             (long long)M, (long long)N, (long long)K, (long long)b0, (long long)b1, bcast, worst);
    free_outs(out, 1);
    free(A), free(B);
  }
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

int main(void) {
  static void (*const one[])(void) = {test_matmul, test_matmul_tiles, test_fc_packed, test_large_elementwise};
  static void (*const two[])(void) = {test_matmul_tiles, test_fc_packed, test_large_elementwise};
  return ops_main("test_ops_matmul", one, sizeof one / sizeof one[0], two, sizeof two / sizeof two[0]);
}
