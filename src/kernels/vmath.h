/* Vector math of the non-conv operators (Exp, Sigmoid, Tanh, Softmax rows, sums, average pooling,
 * the k = s = 2 ConvTranspose row, nearest upsampling),
 * one set per ISA in the kernel tables (registry.h). Every y may be the same buffer as x, except
 * convt2_row's and repeat_row's.
 * Error bounds, checked against fp64 over dense sweeps in tests/test_vmath.c; u = 2^-24:
 *   exp      scalar: libm expf. avx2: |y - e^x| <= 1.2e-7 e^x for normal results (8.1e-8 measured);
 *            +inf past 88.72, subnormals below -87.3 within 2^-149, 0 below -103.9; NaN kept.
 *   sigmoid  |y - s(x)| <= 2e-7 s(x) + 2e-38 (1.44e-7 measured; e^-x clamped to [e^-87, e^87]).
 *   tanh     scalar: libm tanhf. avx2: |y - tanh x| <= 2e-7 |tanh x| (1.75e-7 measured), odd, -0
 *            kept, +-1 for |x| >= 9.1. NaN stays NaN in all three.
 *   softmax  the bounds of src/model/ops/ops_norm.c (exps of x - max below e^-87.3 are taken as 0).
 *   sum_d    double accumulation: n * 2^-53 sum|x|. */
#ifndef LC_KERNELS_VMATH_H
#define LC_KERNELS_VMATH_H

#include <stddef.h>
#include <stdint.h>

typedef struct lc_vmath_kernels {
  void (*exp)(float *y, const float *x, size_t n);
  void (*sigmoid)(float *y, const float *x, size_t n);
  void (*tanh)(float *y, const float *x, size_t n);
  /* y = clamp(alpha x + beta, 0, 1), times x when swish (HardSigmoid, HardSwish); NaN stays NaN. */
  void (*hard_sigmoid)(float *y, const float *x, size_t n, float alpha, float beta, int swish);
  /* Softmax (lg = 0) or LogSoftmax of one contiguous row of len > 0: a NaN or an infinite maximum
   * makes the whole row NaN (the reference's e^(inf - inf)). */
  void (*softmax_row)(const float *x, float *y, size_t len, int lg);
  double (*sum_d)(const float *x, size_t n);
  /* y[i] = sum_{r < rows} x[r * stride + i] for i < n; rows >= 1. */
  void (*rows_sum)(float *y, const float *x, size_t n, size_t rows, size_t stride);
  /* One output row of an average pool: y[i] = inv[i] * sum_{r < rows, j < k} x[r * stride + i * s + j * d]
   * for i < n; rows, k, s, d >= 1. Reads no other element of x. */
  void (*pool_row)(float *y, const float *x, size_t n, size_t rows, size_t stride, size_t s, size_t k, size_t d,
                   const float *inv);
  /* One input row of a ConvTranspose whose kernel width is its stride, 2 (no pads or dilation):
   * for j < nj (an output channel and kernel row) and i < w,
   * y[j][2 i + kw] = b[j] + sum_{c < C} wp[(j C + c) 2 + kw] x[c xs + i], the sum in order of c. */
  void (*convt2_row)(float *const *y, const float *x, size_t xs, size_t C, size_t w, const float *wp,
                     const float *b, size_t nj);
  /* Nearest upsampling of a row by k >= 1: y[i k + j] = x[i] for i < n, j < k (x, y apart). */
  void (*repeat_row)(float *y, const float *x, size_t n, size_t k);
} lc_vmath_kernels;

/* The functions of one ISA's set, named lc_f32_<what>_<isa>. */
#define LC_VMATH_DECLS(isa)                                                                          \
  void lc_f32_exp_##isa(float *y, const float *x, size_t n);                                         \
  void lc_f32_sigmoid_##isa(float *y, const float *x, size_t n);                                     \
  void lc_f32_tanh_##isa(float *y, const float *x, size_t n);                                        \
  void lc_f32_hard_sigmoid_##isa(float *y, const float *x, size_t n, float alpha, float beta, int swish); \
  void lc_f32_softmax_row_##isa(const float *x, float *y, size_t len, int lg);                       \
  double lc_f32_sum_d_##isa(const float *x, size_t n);                                               \
  void lc_f32_rows_sum_##isa(float *y, const float *x, size_t n, size_t rows, size_t stride);        \
  void lc_f32_pool_row_##isa(float *y, const float *x, size_t n, size_t rows, size_t stride, size_t s, size_t k,  \
                             size_t d, const float *inv);                                            \
  void lc_f32_convt2_row_##isa(float *const *y, const float *x, size_t xs, size_t C, size_t w, const float *wp, \
                               const float *b, size_t nj);                                        \
  void lc_f32_repeat_row_##isa(float *y, const float *x, size_t n, size_t k)

/* e^x, relative error < 1.2e-7 on [-87, 87] (inputs are clamped there): round-to-nearest by the
 * 1.5 * 2^23 trick, a degree-6 polynomial on [-ln2/2, ln2/2], 2^n through the exponent bits. The
 * clamp is an integer select on the bits: float compares would keep GCC from if-converting (and so
 * vectorizing) the loop under the default -ftrapping-math. NaN is not propagated here; callers fix
 * it up. */
static inline float lc_exp_fast(float x) {
  union { float f; int32_t i; } u = {x}, c, t, s;
  int32_t ax = u.i & 0x7fffffff;
  c.i = (u.i & INT32_MIN) | (ax > 0x42AE0000 ? 0x42AE0000 : ax); /* 0x42AE0000 = 87.0f */
  t.f = c.f * 1.44269504f + 12582912.0f;
  float n = t.f - 12582912.0f;
  float r = c.f - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  s.i = (t.i - 0x4B400000 + 127) * (1 << 23); /* n + 127 in [1, 253]: no overflow */
  return p * s.f;
}

#endif
