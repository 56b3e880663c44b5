/* Helpers shared by the AVX2 and AVX-512 GEMV kernels (both files are built with AVX2 + FMA). */
#ifndef LC_QGEMV_AVX2_COMMON_H
#define LC_QGEMV_AVX2_COMMON_H

#include <immintrin.h>

#include "quant/qkernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* sum over blocks of offset * sum(xq): the asymmetric offsets folded in once per row. */
INLINE float offset_fold(const float *o, const float *xsum, size_t nb) {
  if (!o) return 0.0f;
  __m256 acc = _mm256_setzero_ps();
  size_t b = 0;
  for (; b + 8 <= nb; b += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(o + b), _mm256_loadu_ps(xsum + b), acc);
  return hsum8(acc) + lc_qoffset_fold(o + b, xsum + b, nb - b);
}

#endif
