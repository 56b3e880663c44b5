/* Softmax / LogSoftmax of one contiguous row in portable C (error bounds: src/model/ops/ops_norm.c).
 * Partial sums and maxima in eight lanes so that the loops vectorize. */
#include <math.h>
#include <stdint.h>

#include "kernels/scalar/scalar_kernels.h"

/* e^(x - m), 0 where x - m < -87 (-inf included): an integer mask, as in lc_exp_fast. */
static void exp_sub(float *y, const float *x, float m, size_t n) {
  for (size_t i = 0; i < n; i++) {
    union { float f; int32_t i; } d = {x[i] - m}, e;
    e.f = lc_exp_fast(d.f);
    e.i &= (d.i & 0x7fffffff) > 0x42AE0000 ? 0 : -1;
    y[i] = e.f;
  }
}

static float row_max(const float *x, size_t n) {
  float m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
  for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];
  for (int k = 1; k < 8; k++) m[0] = m[k] > m[0] ? m[k] : m[0];
  return m[0];
}

static int has_nan(const float *x, size_t n) {
  int r = 0;
  for (size_t i = 0; i < n; i++) r |= x[i] != x[i];
  return r;
}

void lc_f32_softmax_row_scalar(const float *x, float *y, size_t len, int lg) {
  float m = row_max(x, len);
  if (has_nan(x, len) || m == INFINITY || m == -INFINITY) {
    for (size_t j = 0; j < len; j++) y[j] = NAN;
    return;
  }
  if (lg) {
    float t[256];
    double s = 0;
    for (size_t j0 = 0; j0 < len; j0 += 256) {
      size_t b = len - j0 < 256 ? len - j0 : 256;
      exp_sub(t, x + j0, m, b);
      s += lc_f32_sum_d_scalar(t, b);
    }
    double ls = log(s) + m;
    for (size_t j = 0; j < len; j++) y[j] = (float)((double)x[j] - ls);
    return;
  }
  exp_sub(y, x, m, len);
  float inv = (float)(1.0 / lc_f32_sum_d_scalar(y, len));
  for (size_t j = 0; j < len; j++) y[j] *= inv;
}
