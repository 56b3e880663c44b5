/* Numerics of Softmax, LogSoftmax, reductions and normalizations at large sizes (>= 20k entries)
 * against fp64 references, with the error bounds the operators state (ops_norm.c, ops_pool.c).
 * u = 2^-24, the float unit roundoff. */
#include "ops_harness.h"

#define U (1.0 / 16777216.0)

static float *rand_vec(size_t n, float lo, float hi) {
  float *v = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) v[i] = tu_rand_float(lo, hi);
  return v;
}

/* Softmax and LogSoftmax along axis (rows of len, `inner` apart) against double exps. */
static void check_softmax(int lg, int64_t outer, int64_t len, int64_t inner, float spread) {
  size_t n = (size_t)(outer * len * inner);
  float *x = rand_vec(n, -spread, spread);
  int64_t dims[3] = {outer, len, inner};
  lc_attr at[1] = {a_int("axis", 1)};
  lc_tensor in[1] = {tens(LC_DT_FLOAT, 3, dims, x)}, out[1];
  lc_status s = run_op(lg ? "LogSoftmax" : "Softmax", at, 1, in, 1, out, 1);
  TU_CHECK(s == LC_OK, "%s: %s", lg ? "logsoftmax" : "softmax", lc_last_error());
  double worst = 0;
  for (int64_t o = 0; !s && o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *xr = x + o * len * inner + i;
      const float *yr = (const float *)out[0].data + o * len * inner + i;
      double m = -INFINITY, sum = 0, dmax = 0;
      for (int64_t j = 0; j < len; j++) m = fmax(m, xr[j * inner]);
      for (int64_t j = 0; j < len; j++) sum += exp((double)xr[j * inner] - m), dmax = fmax(dmax, m - xr[j * inner]);
      for (int64_t j = 0; j < len; j++) {
        double d = (double)xr[j * inner] - m, ref = lg ? d - log(sum) : exp(d) / sum;
        /* the bounds of ops_norm.c, plus the exps' float arguments x - m (rounded to u|x - m|) */
        double bound = lg ? U * fabs(ref) + 2e-7 + U * dmax : (4e-7 + U * fabs(d)) * ref + 2e-38;
        double e = fabs(yr[j * inner] - ref);
        worst = fmax(worst, e / bound);
      }
    }
  TU_CHECK(worst <= 1.0, "%s %lldx%lldx%lld: error %.2f x the stated bound", lg ? "logsoftmax" : "softmax",
           (long long)outer, (long long)len, (long long)inner, worst);
  free_outs(out, 1);
  free(x);
}

static void test_softmax(void) {
  check_softmax(0, 2, 20000, 1, 8.0f);    /* the case: ~18k logits, 4e-4 off when summed in float */
  check_softmax(0, 40, 6625, 1, 20.0f);   /* PP-OCR rec's 1x40x6625 */
  check_softmax(0, 2, 20000, 3, 8.0f);    /* a strided axis */
  check_softmax(1, 2, 20000, 1, 8.0f);
  check_softmax(1, 3, 21000, 5, 30.0f);
}

/* Sums of values with a large common offset: float accumulation loses ~n * u * sum. */
static void test_reductions(void) {
  static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceL2", "ReduceSumSquare", "ReduceL1"};
  int64_t dims[2] = {30000, 3};
  size_t n = 90000;
  float *x = rand_vec(n, 999.0f, 1001.0f);
  for (size_t i = 0; i < n; i += 7) x[i] = -x[i]; /* some cancellation for Sum / Mean */
  for (int ax = 0; ax < 2; ax++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      int64_t axes[1] = {ax};
      lc_attr at[2] = {a_ints("axes", axes, 1), a_int("keepdims", 0)};
      lc_tensor in[1] = {tens(LC_DT_FLOAT, 2, dims, x)}, out[1];
      lc_status s = run_op(ops[k], at, 2, in, 1, out, 1);
      TU_CHECK(s == LC_OK, "%s: %s", ops[k], lc_last_error());
      int64_t no = dims[1 - ax], len = dims[ax];
      for (int64_t o = 0; !s && o < no; o++) {
        double acc = 0, abs_sum = 0;
        for (int64_t j = 0; j < len; j++) {
          double v = ax == 0 ? x[j * 3 + o] : x[o * 3 + j];
          acc += k == 2 || k == 3 ? v * v : k == 4 ? fabs(v) : v;
          abs_sum += k == 2 || k == 3 ? v * v : fabs(v);
        }
        double ref = k == 1 ? acc / (double)len : k == 2 ? sqrt(acc) : acc;
        double scale = k == 1 ? abs_sum / (double)len : k == 2 ? sqrt(abs_sum) : abs_sum;
        /* ops_pool.c: u |ref| + n 2^-53 sum|x| (+ u for the final sqrt / division) */
        double bound = 2 * U * fabs(ref) + (double)len * 0x1p-53 * scale;
        double got = ((const float *)out[0].data)[o];
        TU_CHECK(fabs(got - ref) <= bound, "%s axis %d: %.9g vs %.9g (bound %.3g)", ops[k], ax, got, ref, bound);
      }
      free_outs(out, 1);
    }
  free(x);
}

/* y = (x - mean) / sqrt(var + eps) * scale + bias over rows of len, against double two-pass. */
static void check_norm(const float *x, const float *y, size_t rows, size_t len, const float *g, const float *b,
                       size_t every, size_t per_row_params, float eps, const char *what) {
  double worst = 0;
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * len;
    double mean = 0, var = 0;
    for (size_t i = 0; i < len; i++) mean += xr[i];
    mean /= (double)len;
    for (size_t i = 0; i < len; i++) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (double)len;
    double inv = 1.0 / sqrt(var + eps);
    for (size_t i = 0; i < len; i++) {
      size_t k = (r % per_row_params) * (len / every) + i / every;
      double t = (xr[i] - mean) * inv * g[k], ref = t + b[k];
      double bound = 4 * U * (fabs(t) + fabs(b[k])) + 1e-30;
      worst = fmax(worst, fabs(y[r * len + i] - ref) / bound);
    }
  }
  TU_CHECK(worst <= 1.0, "%s: error %.2f x the stated bound", what, worst);
}

static void test_norms(void) {
  /* LayerNormalization over the last axis: rows of 25000 with a large mean (cancellation) */
  size_t rows = 3, len = 25000;
  int64_t dx[2] = {(int64_t)rows, (int64_t)len}, dg[1] = {(int64_t)len};
  float *x = rand_vec(rows * len, 499.0f, 501.0f), *g = rand_vec(len, 0.5f, 1.5f), *b = rand_vec(len, -1, 1);
  lc_attr at[2] = {a_int("axis", -1), a_float("epsilon", 1e-5f)};
  lc_tensor in[3] = {tens(LC_DT_FLOAT, 2, dx, x), tens(LC_DT_FLOAT, 1, dg, g), tens(LC_DT_FLOAT, 1, dg, b)}, out[3];
  lc_status s = run_op("LayerNormalization", at, 2, in, 3, out, 3);
  TU_CHECK(s == LC_OK, "layernorm: %s", lc_last_error());
  if (!s) check_norm(x, out[0].data, rows, len, g, b, 1, 1, 1e-5f, "layernorm");
  free_outs(out, 3);
  free(x), free(g), free(b);
  /* InstanceNormalization over 160x160 planes, GroupNormalization of 4 groups of 2 channels */
  int64_t d4[4] = {1, 8, 160, 160}, dc[1] = {8};
  size_t n = 8 * 160 * 160;
  x = rand_vec(n, 99.0f, 101.0f), g = rand_vec(8, 0.5f, 1.5f), b = rand_vec(8, -1, 1);
  lc_attr ai[1] = {a_float("epsilon", 1e-5f)};
  lc_tensor i3[3] = {tens(LC_DT_FLOAT, 4, d4, x), tens(LC_DT_FLOAT, 1, dc, g), tens(LC_DT_FLOAT, 1, dc, b)};
  s = run_op("InstanceNormalization", ai, 1, i3, 3, out, 1);
  TU_CHECK(s == LC_OK, "instancenorm: %s", lc_last_error());
  if (!s) check_norm(x, out[0].data, 8, 25600, g, b, 25600, 8, 1e-5f, "instancenorm");
  free_outs(out, 1);
  lc_attr ag[3] = {a_float("epsilon", 1e-5f), a_int("num_groups", 4), a_int("_opset", 21)};
  s = run_op("GroupNormalization", ag, 3, i3, 3, out, 1);
  TU_CHECK(s == LC_OK, "groupnorm: %s", lc_last_error());
  if (!s) check_norm(x, out[0].data, 4, 51200, g, b, 25600, 4, 1e-5f, "groupnorm");
  free_outs(out, 1);
  free(x), free(g), free(b);
}

int main(void) {
  static void (*const one[])(void) = {test_softmax, test_reductions, test_norms};
  /* the 2-thread pass splits softmax rows, trailing-axis sums and normalization rows */
  static void (*const two[])(void) = {test_softmax, test_reductions, test_norms};
  return ops_main("test_ops_numerics", one, sizeof one / sizeof one[0], two, sizeof two / sizeof two[0]);
}
