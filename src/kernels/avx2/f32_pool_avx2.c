/* Sums for the pooling and reduction operators: the double sum of a row, y += x, and one output
 * row of an average pool from its summed input rows (kernels/vmath.h). */
#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

double lc_f32_sum_d_avx2(const float *x, size_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 8)));
    a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 12)));
  }
  for (; i + 4 <= n; i += 4) a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
  __m256d a = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  double s = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  for (; i < n; i++) s += x[i];
  return s;
}

void lc_f32_add_avx2(float *y, const float *x, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(x + i)));
    _mm256_storeu_ps(y + i + 8, _mm256_add_ps(_mm256_loadu_ps(y + i + 8), _mm256_loadu_ps(x + i + 8)));
  }
  for (; i < n; i++) y[i] += x[i];
}

/* The even floats of p[0..15]. */
LC_AI __m256 evens16(const float *p) {
  __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

void lc_f32_pool_row_avx2(float *y, const float *t, size_t n, size_t s, size_t k, size_t d, const float *inv) {
  size_t i = 0;
  if (s == 1) {
    for (; i + 8 <= n; i += 8) {
      __m256 v = _mm256_loadu_ps(t + i);
      for (size_t j = 1; j < k; j++) v = _mm256_add_ps(v, _mm256_loadu_ps(t + i + j * d));
      _mm256_storeu_ps(y + i, _mm256_mul_ps(v, _mm256_loadu_ps(inv + i)));
    }
  } else if (s == 2) {
    /* evens16 reads one float past the last tap of lane 7: stop while that is still in t */
    for (; i + 9 <= n; i += 8) {
      __m256 v = evens16(t + 2 * i);
      for (size_t j = 1; j < k; j++) v = _mm256_add_ps(v, evens16(t + 2 * i + j * d));
      _mm256_storeu_ps(y + i, _mm256_mul_ps(v, _mm256_loadu_ps(inv + i)));
    }
  }
  for (; i < n; i++) {
    float v = t[i * s];
    for (size_t j = 1; j < k; j++) v += t[i * s + j * d];
    y[i] = v * inv[i];
  }
}
