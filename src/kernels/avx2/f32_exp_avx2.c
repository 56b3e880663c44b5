/* Exp, Sigmoid, Tanh, HardSigmoid / HardSwish of n floats, eight lanes a step, the tail through masked loads and stores
 * (kernels/vmath.h states the error bounds). y may be x. */
#include "kernels/avx2/f32_exp_avx2.h"
#include "kernels/avx2/avx2_kernels.h"

/* 1 / (1 + e^-x) with e^-x clamped to [e^-87, e^87]: within 2e-38 of 0 and 1 outside. */
LC_AI __m256 sigmoid8(__m256 x) {
  __m256 nx = _mm256_xor_ps(x, _mm256_set1_ps(-0.0f));
  nx = _mm256_min_ps(_mm256_set1_ps(87.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), nx));
  __m256 e = lc_avx2_exp_normal(nx);
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

/* tanh |x| = -m / (2 + m) with m = e^(-2|x|) - 1 (no cancellation near 0, where m ~ -2|x|);
 * |x| past 43.5 is clamped, where the result is 1. Then |.| and the sign of x (-0 stays -0). */
LC_AI __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 y = _mm256_mul_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(-2.0f));
  __m256 m = lc_avx2_expm1_neg(_mm256_max_ps(_mm256_set1_ps(-87.0f), y)); /* NaN stays NaN */
  __m256 t = _mm256_div_ps(m, _mm256_add_ps(_mm256_set1_ps(2.0f), m));
  return _mm256_or_ps(_mm256_andnot_ps(sign, t), _mm256_and_ps(x, sign));
}

#define LC_MAP8(name, f)                                                                            \
  void name(float *y, const float *x, size_t n) {                                                    \
    size_t i = 0;                                                                                    \
    for (; i + 32 <= n; i += 32) {                                                                   \
      __m256 a = f(_mm256_loadu_ps(x + i)), b = f(_mm256_loadu_ps(x + i + 8));                       \
      __m256 c = f(_mm256_loadu_ps(x + i + 16)), d = f(_mm256_loadu_ps(x + i + 24));                 \
      _mm256_storeu_ps(y + i, a);                                                                    \
      _mm256_storeu_ps(y + i + 8, b);                                                                \
      _mm256_storeu_ps(y + i + 16, c);                                                               \
      _mm256_storeu_ps(y + i + 24, d);                                                               \
    }                                                                                                \
    for (; i < n; i += 8) {                                                                          \
      __m256i m = lc_avx2_mask(n - i < 8 ? n - i : 8);                                               \
      lc_avx2_store_n(y + i, f(_mm256_maskload_ps(x + i, m)), n - i);                                \
    }                                                                                                \
  }

LC_MAP8(lc_f32_exp_avx2, lc_avx2_exp_full)

/* max / min with the value second: NaN comes through both. */
void lc_f32_hard_sigmoid_avx2(float *y, const float *x, size_t n, float alpha, float beta, int swish) {
  const __m256 a = _mm256_set1_ps(alpha), b = _mm256_set1_ps(beta), zero = _mm256_setzero_ps(),
               one = _mm256_set1_ps(1.0f);
  for (size_t i = 0; i < n; i += 8) {
    __m256i m = lc_avx2_mask(n - i < 8 ? n - i : 8);
    __m256 v = n - i >= 8 ? _mm256_loadu_ps(x + i) : _mm256_maskload_ps(x + i, m);
    __m256 h = _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_fmadd_ps(a, v, b)));
    if (swish) h = _mm256_mul_ps(h, v);
    if (n - i >= 8) _mm256_storeu_ps(y + i, h);
    else lc_avx2_store_n(y + i, h, n - i);
  }
}
LC_MAP8(lc_f32_sigmoid_avx2, sigmoid8)
LC_MAP8(lc_f32_tanh_avx2, tanh8)
