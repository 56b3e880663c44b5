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

void lc_f32_rows_sum_avx2(float *y, const float *x, size_t n, size_t rows, size_t stride) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    for (size_t r = 1; r < rows; r++) {
      a = _mm256_add_ps(a, _mm256_loadu_ps(x + r * stride + i));
      b = _mm256_add_ps(b, _mm256_loadu_ps(x + r * stride + i + 8));
    }
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i < n; i += 8) {
    __m256i m = lc_avx2_mask(n - i < 8 ? n - i : 8);
    __m256 a = _mm256_maskload_ps(x + i, m);
    for (size_t r = 1; r < rows; r++) a = _mm256_add_ps(a, _mm256_maskload_ps(x + r * stride + i, m));
    lc_avx2_store_n(y + i, a, n - i);
  }
}

/* Sum over rows of x[r * stride + 0..7]. */
LC_AI __m256 col8(const float *x, size_t rows, size_t stride) {
  __m256 v = _mm256_loadu_ps(x);
  if (rows == 1) return v;
  __m256 w = _mm256_loadu_ps(x + stride); /* two chains: 3x3 / 3x2 windows are the common case */
  for (size_t r = 2; r + 1 < rows; r += 2) {
    v = _mm256_add_ps(v, _mm256_loadu_ps(x + r * stride));
    w = _mm256_add_ps(w, _mm256_loadu_ps(x + (r + 1) * stride));
  }
  if (rows & 1) v = _mm256_add_ps(v, _mm256_loadu_ps(x + (rows - 1) * stride));
  return _mm256_add_ps(v, w);
}

/* The even lanes of (a, b) in order; the sums of their adjacent pairs. */
LC_AI __m256 evens(__m256 a, __m256 b) {
  __m256 e = _mm256_shuffle_ps(a, b, 0x88);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}
LC_AI __m256 pairs(__m256 a, __m256 b) { /* two shuffles and an add: cheaper than hadd on Zen 3 */
  __m256 e = _mm256_add_ps(_mm256_shuffle_ps(a, b, 0x88), _mm256_shuffle_ps(a, b, 0xDD));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

/* Eight outputs from i on, taps j * d apart with column stride s (1 or 2); the rows are summed
 * before the (shared) shuffles. */
LC_AI __m256 taps8(const float *x, size_t i, size_t rows, size_t stride, size_t s, size_t k, size_t d) {
  __m256 v = _mm256_setzero_ps();
  for (size_t j = 0; j < k; j++) {
    const float *p = x + s * i + j * d;
    v = _mm256_add_ps(v, s == 1 ? col8(p, rows, stride) : evens(col8(p, rows, stride), col8(p + 8, rows, stride)));
  }
  return v;
}

#define POOL_STORE(i, v) _mm256_storeu_ps(y + (i), _mm256_mul_ps((v), _mm256_loadu_ps(inv + (i))))

#define PAIRS8(b) pairs(col8(x + 2 * (b), rows, stride), col8(x + 2 * (b) + 8, rows, stride))

/* 2x2-style windows (k = s = 2 along the row): adjacent pairs of the summed rows. Inlined with
 * rows a constant for the usual 1-3 rows: rec's 1x480x3x80 k3x2 pool 7.1 -> 3.3 us with the rows
 * unrolled (L1-resident input). */
LC_AI void pool_pairs(float *y, const float *x, size_t n, size_t rows, size_t stride, const float *inv) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) POOL_STORE(i, PAIRS8(i));
  if (i < n) POOL_STORE(n - 8, PAIRS8(n - 8));
}

void lc_f32_pool_row_avx2(float *y, const float *x, size_t n, size_t rows, size_t stride, size_t s, size_t k,
                          size_t d, const float *inv) {
  /* Loads end at x[i s + (k - 1) d + 7] (s == 1) or x[2 i + (k - 1) d + 15] (s == 2): inside
   * while i + 8 <= n, except for general s == 2 taps (lane 7 reads one float past its own: i + 9).
   * Where the limit is i + 8, a last partial block is redone from n - 8 (the same sums). */
  size_t i = 0;
  if (n >= 8 && s == 2 && k == 2 && d == 1) {
    if (rows == 1) pool_pairs(y, x, n, 1, stride, inv);
    else if (rows == 2) pool_pairs(y, x, n, 2, stride, inv);
    else if (rows == 3) pool_pairs(y, x, n, 3, stride, inv);
    else pool_pairs(y, x, n, rows, stride, inv);
    return;
  }
  if (n >= 8 && s == 1) {
    for (; i + 8 <= n; i += 8) POOL_STORE(i, taps8(x, i, rows, stride, 1, k, d));
    if (i < n) POOL_STORE(n - 8, taps8(x, n - 8, rows, stride, 1, k, d));
    return;
  }
  if (s == 2)
    for (; i + 9 <= n; i += 8) POOL_STORE(i, taps8(x, i, rows, stride, 2, k, d));
  for (; i < n; i++) {
    float v = 0.0f;
    for (size_t j = 0; j < k; j++) {
      float c = x[i * s + j * d];
      for (size_t r = 1; r < rows; r++) c += x[r * stride + i * s + j * d];
      v += c;
    }
    y[i] = v * inv[i];
  }
}
