/* Exp, Sigmoid, Tanh, HardSigmoid / HardSwish in portable C: libm's expf and tanhf; the sigmoid through lc_exp_fast in
 * blocks, so that y may alias x and NaN inputs are copied through after the vectorizable loop. */
#include <math.h>
#include <stdint.h>

#include "kernels/scalar/scalar_kernels.h"

void lc_f32_exp_scalar(float *y, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = expf(x[i]);
}

void lc_f32_tanh_scalar(float *y, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

/* Comparisons, not fminf / fmaxf (libm calls without -ffast-math); NaN fails both and stays. */
static inline float clamp01(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

void lc_f32_hard_sigmoid_scalar(float *y, const float *x, size_t n, float alpha, float beta, int swish) {
  if (swish)
    for (size_t i = 0; i < n; i++) y[i] = x[i] * clamp01(alpha * x[i] + beta);
  else
    for (size_t i = 0; i < n; i++) y[i] = clamp01(alpha * x[i] + beta);
}

void lc_f32_sigmoid_scalar(float *y, const float *x, size_t n) {
  float t[256];
  for (size_t i0 = 0; i0 < n; i0 += 256) {
    size_t m = n - i0 < 256 ? n - i0 : 256;
    for (size_t i = 0; i < m; i++) t[i] = 1.0f / (1.0f + lc_exp_fast(-x[i0 + i]));
    for (size_t i = 0; i < m; i++) {
      union { float f; int32_t i; } a = {x[i0 + i]}, b = {t[i]};
      b.i = (a.i & 0x7fffffff) > 0x7f800000 ? a.i : b.i;
      y[i0 + i] = b.f;
    }
  }
}
