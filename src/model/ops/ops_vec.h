/* Loops of the operators that are worth twice the vector width: compiled for the baseline
 * (ops_util.c) and with AVX2 (avx2/ops_vec_avx2.c, the folder's flags); lcop_vec_* in
 * ops_internal.h pick one at run time. Include once per translation unit that defines them. */
#ifndef LC_MODEL_OPS_VEC_H
#define LC_MODEL_OPS_VEC_H

#include <math.h>

#include "model/ops/ops_internal.h"

/* y = e^(x - m). */
static inline void vec_exp_sub(float *y, const float *x, float m, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = lcop_exp_fast(x[i] - m);
}

/* Sum of n floats in double with 8 independent partial sums. */
static inline double vec_sum_d(const float *x, size_t n) {
  double acc[8] = {0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) acc[k] += x[i + k];
  for (; i < n; i++) acc[i & 7] += x[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

static inline float vec_max(const float *x, size_t n) {
  float m[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
  for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];
  for (int k = 1; k < 8; k++) m[0] = m[k] > m[0] ? m[k] : m[0];
  return m[0];
}

static inline int vec_has_nan(const float *x, size_t n) {
  int r = 0;
  for (size_t i = 0; i < n; i++) r |= x[i] != x[i];
  return r;
}

/* One contiguous row; y may alias x. */
static inline void vec_softmax_row(const float *x, float *y, size_t len, int lg) {
  float m = vec_max(x, len);
  if (vec_has_nan(x, len) || m == INFINITY || m == -INFINITY) { /* the reference's e^(inf - inf): all NaN */
    for (size_t j = 0; j < len; j++) y[j] = NAN;
    return;
  }
  if (lg) {
    float t[256];
    double s = 0;
    for (size_t j0 = 0; j0 < len; j0 += 256) {
      size_t b = len - j0 < 256 ? len - j0 : 256;
      vec_exp_sub(t, x + j0, m, b);
      s += vec_sum_d(t, b);
    }
    double ls = log(s) + m;
    for (size_t j = 0; j < len; j++) y[j] = (float)((double)x[j] - ls);
    return;
  }
  vec_exp_sub(y, x, m, len);
  float inv = (float)(1.0 / vec_sum_d(y, len));
  for (size_t j = 0; j < len; j++) y[j] *= inv;
}

/* In blocks so that y may alias x: NaN inputs are copied through after the vector loop. */
static inline void vec_sigmoid(float *y, const float *x, size_t n) {
  float t[256];
  for (size_t i0 = 0; i0 < n; i0 += 256) {
    size_t m = n - i0 < 256 ? n - i0 : 256;
    for (size_t i = 0; i < m; i++) t[i] = 1.0f / (1.0f + lcop_exp_fast(-x[i0 + i]));
    for (size_t i = 0; i < m; i++) {
      union { float f; int32_t i; } a = {x[i0 + i]}, b = {t[i]};
      b.i = (a.i & 0x7fffffff) > 0x7f800000 ? a.i : b.i;
      y[i0 + i] = b.f;
    }
  }
}

#endif
