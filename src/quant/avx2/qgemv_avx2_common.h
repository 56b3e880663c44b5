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

/* Activation rows in groups of 4, remainder 1..3, each with a specialised (inlined) row function.
 * `storage` is empty for exported kernels, `static` for file-local ones. */
#define LC_QDEFINE_ROWS(storage, name, rowfn)                                                             \
  storage void name(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y, size_t ldy) { \
    for (size_t n = n0; n < n1; n++) {                                                                    \
      size_t i = 0;                                                                                       \
      for (; i + 4 <= a->m; i += 4) rowfn(w, a, n, i, 4, y, ldy);                                         \
      switch (a->m - i) {                                                                                 \
        case 3: rowfn(w, a, n, i, 3, y, ldy); break;                                                      \
        case 2: rowfn(w, a, n, i, 2, y, ldy); break;                                                      \
        case 1: rowfn(w, a, n, i, 1, y, ldy); break;                                                      \
        default: break;                                                                                   \
      }                                                                                                   \
    }                                                                                                     \
  }

#endif
