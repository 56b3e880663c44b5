/* The AVX2 e^x of eight lanes (kernels/vmath.h states its error), shared by the elementwise and
 * Softmax kernels: n = round(x / ln 2) by the 1.5 * 2^23 trick, r = x - n ln 2 in two FMAs, the
 * degree-6 polynomial 1 + r + r^2 Q(r), Q fitted to the relative error of e^r on [-ln2/2, ln2/2]
 * (6.8e-8 evaluated in float), then 2^n through the exponent bits. NaN inputs stay NaN because
 * every min / max puts x second (those return their second operand when one is NaN). */
#ifndef LC_F32_EXP_AVX2_H
#define LC_F32_EXP_AVX2_H

#include "kernels/avx2/avx2_common.h"

/* q ~ e^r - 1 = r + r^2 Q(r) with r = x - n ln 2 (exact for |x| < ln2/2, where n = 0); t holds
 * n + 1.5 * 2^23 (its low mantissa bits are n). */
LC_AI __m256 lc_avx2_exp_reduce(__m256 x, __m256 *t) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  *t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504f), magic);
  __m256 n = _mm256_sub_ps(*t, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.3814557272e-3f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3686955248e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1668387074e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666520810e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.9999993457e-1f));
  return _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
}

/* 2^n for t from lc_avx2_exp_reduce, n + 127 in [1, 254]. */
LC_AI __m256 lc_avx2_pow2n(__m256 t) {
  __m256i e = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000 - 127)), 23);
  return _mm256_castsi256_ps(e);
}

/* e^x = 2^n (1 + q) for x already in [-87.3, 88.3] (or NaN): 2^n is one normal float. */
LC_AI __m256 lc_avx2_exp_normal(__m256 x) {
  __m256 t, q = lc_avx2_exp_reduce(x, &t), s = lc_avx2_pow2n(t);
  return _mm256_fmadd_ps(q, s, s);
}

/* e^x - 1 = 2^n q + (2^n - 1) for x in [-87.3, 0]: 2^n - 1 is exact, and for n = 0 this is q,
 * accurate relative to e^x - 1 however small x is. */
LC_AI __m256 lc_avx2_expm1_neg(__m256 x) {
  __m256 t, q = lc_avx2_exp_reduce(x, &t), s = lc_avx2_pow2n(t);
  return _mm256_fmadd_ps(q, s, _mm256_sub_ps(s, _mm256_set1_ps(1.0f)));
}

/* e^x for any x: clamped to [-104, 89], where the results are 0 and +inf, and 2^n applied as two
 * normal factors 2^(n >> 1) * 2^(n - (n >> 1)) so that subnormal and overflowing results round
 * once. */
LC_AI __m256 lc_avx2_exp_full(__m256 x) {
  __m256 xc = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x));
  __m256 t, q = lc_avx2_exp_reduce(xc, &t);
  __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000));
  __m256i h = _mm256_srai_epi32(n, 1), bias = _mm256_set1_epi32(127);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(n, h), bias), 23));
  return _mm256_mul_ps(_mm256_fmadd_ps(q, s1, s1), s2);
}

#endif
