/* Stride-2 gathers for the taprows route on AVX2 (the AVX-512 file says why they exist). Eight
 * outputs are the even or odd lanes of two 8-float loads (lc_avx2_even / lc_avx2_odd). The kx = 2
 * tap is the odd lanes of loads one float on, so a block reads no further than its last output
 * needs (s[2j + 16]). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

void lc_f32_gather3_s2_avx2(float *d0, float *d1, float *d2, const float *s, size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const float *p = s + 2 * j;
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 c = _mm256_loadu_ps(p + 1), e = _mm256_loadu_ps(p + 9);
    _mm256_storeu_ps(d0 + j, lc_avx2_even(a, b));
    _mm256_storeu_ps(d1 + j, lc_avx2_odd(a, b));
    _mm256_storeu_ps(d2 + j, lc_avx2_odd(c, e));
  }
  if (j < n) {
    /* r outputs read s[2j .. 2j + 2r]: a, b the first 2r floats, c, e the 2r from 2j + 1 */
    ptrdiff_t m = 2 * (ptrdiff_t)(n - j);
    const float *p = s + 2 * j;
    __m256i lo = lc_avx2_mask_upto(m), hi = lc_avx2_mask_upto(m - 8);
    __m256 a = lc_avx2_load_m(p, 0, lo), b = lc_avx2_load_m(p, 8, hi);
    __m256 c = lc_avx2_load_m(p, 1, lo), e = lc_avx2_load_m(p, 9, hi);
    lc_avx2_store_n(d0 + j, lc_avx2_even(a, b), n - j);
    lc_avx2_store_n(d1 + j, lc_avx2_odd(a, b), n - j);
    lc_avx2_store_n(d2 + j, lc_avx2_odd(c, e), n - j);
  }
}

void lc_f32_gather_s2_rows_avx2(float *d0, float *d1, float *d2, size_t drs, const float *src, size_t srs, size_t rows,
                                size_t n, ptrdiff_t x0, size_t iw) {
  const ptrdiff_t w = (ptrdiff_t)iw;
  /* Blocks of 8 outputs outside, rows inside: a block's masks are the same on every row. */
  for (size_t j = 0; j < n; j += 8) {
    const ptrdiff_t base = 2 * (ptrdiff_t)j + x0; /* column of the first float loaded */
    const size_t nj = n - j < 8 ? n - j : 8;
    /* whole vectors when columns base .. base + 16 (d2's last) lie in the row */
    if (nj == 8 && base >= 0 && base + 17 <= w) {
      for (size_t r = 0; r < rows; r++) {
        const float *p = src + r * srs + base;
        __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
        _mm256_storeu_ps(d0 + r * drs + j, lc_avx2_even(a, b));
        if (d1) {
          __m256 c = _mm256_loadu_ps(p + 1), e = _mm256_loadu_ps(p + 9);
          _mm256_storeu_ps(d1 + r * drs + j, lc_avx2_odd(a, b));
          _mm256_storeu_ps(d2 + r * drs + j, lc_avx2_odd(c, e));
        }
      }
      continue;
    }
    const __m256i ma = lc_avx2_cols_in(base, w), mb = lc_avx2_cols_in(base + 8, w);
    const __m256i mc = lc_avx2_cols_in(base + 1, w), me = lc_avx2_cols_in(base + 9, w);
    for (size_t r = 0; r < rows; r++) {
      const float *p = src + r * srs;
      __m256 a = lc_avx2_load_m(p, base, ma), b = lc_avx2_load_m(p, base + 8, mb);
      lc_avx2_store_n(d0 + r * drs + j, lc_avx2_even(a, b), nj);
      if (d1) {
        __m256 c = lc_avx2_load_m(p, base + 1, mc), e = lc_avx2_load_m(p, base + 9, me);
        lc_avx2_store_n(d1 + r * drs + j, lc_avx2_odd(a, b), nj);
        lc_avx2_store_n(d2 + r * drs + j, lc_avx2_odd(c, e), nj);
      }
    }
  }
}
