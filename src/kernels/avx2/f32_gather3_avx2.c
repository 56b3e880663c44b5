/* Stride-2 gathers for the taprows route on AVX2 (the AVX-512 file says why they exist). Eight
 * outputs are the even or odd lanes of two 8-float loads: shuffle_ps picks them per 128-bit lane,
 * permute4x64 puts the halves in order. The kx = 2 tap is the odd lanes of loads one float on,
 * so a block reads no further than its last output needs (s[2j + 16]). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/avx2/avx2_kernels.h"

static __m256i lanes(ptrdiff_t m) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(m < 0 ? 0 : (m > 8 ? 8 : m))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* 8 floats at s + off, lanes outside m zero (integer math: masked lanes touch no memory, the
 * address may lie outside s). */
static __m256 load_m(const float *s, ptrdiff_t off, __m256i m) {
  return _mm256_maskload_ps((const float *)((uintptr_t)s + (uintptr_t)(off * (ptrdiff_t)sizeof(float))), m);
}

static __m256 even(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
}

static __m256 odd(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

void lc_f32_gather3_s2_avx2(float *d0, float *d1, float *d2, const float *s, size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const float *p = s + 2 * j;
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 c = _mm256_loadu_ps(p + 1), e = _mm256_loadu_ps(p + 9);
    _mm256_storeu_ps(d0 + j, even(a, b));
    _mm256_storeu_ps(d1 + j, odd(a, b));
    _mm256_storeu_ps(d2 + j, odd(c, e));
  }
  if (j < n) {
    /* r outputs read s[2j .. 2j + 2r]: a, b the first 2r floats, c, e the 2r from 2j + 1 */
    ptrdiff_t m = 2 * (ptrdiff_t)(n - j);
    const float *p = s + 2 * j;
    __m256i lo = lanes(m), hi = lanes(m - 8), o = lanes((ptrdiff_t)(n - j));
    __m256 a = load_m(p, 0, lo), b = load_m(p, 8, hi), c = load_m(p, 1, lo), e = load_m(p, 9, hi);
    _mm256_maskstore_ps(d0 + j, o, even(a, b));
    _mm256_maskstore_ps(d1 + j, o, odd(a, b));
    _mm256_maskstore_ps(d2 + j, o, odd(c, e));
  }
}

/* Lanes l of 8 columns from `off` with 0 <= off + l < iw. */
static __m256i cols_in(ptrdiff_t off, ptrdiff_t iw) {
  return _mm256_andnot_si256(lanes(-off), lanes(iw - off));
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
        _mm256_storeu_ps(d0 + r * drs + j, even(a, b));
        if (d1) {
          __m256 c = _mm256_loadu_ps(p + 1), e = _mm256_loadu_ps(p + 9);
          _mm256_storeu_ps(d1 + r * drs + j, odd(a, b));
          _mm256_storeu_ps(d2 + r * drs + j, odd(c, e));
        }
      }
      continue;
    }
    const __m256i ma = cols_in(base, w), mb = cols_in(base + 8, w), mo = lanes((ptrdiff_t)nj);
    const __m256i mc = cols_in(base + 1, w), me = cols_in(base + 9, w);
    for (size_t r = 0; r < rows; r++) {
      const float *p = src + r * srs;
      __m256 a = load_m(p, base, ma), b = load_m(p, base + 8, mb);
      _mm256_maskstore_ps(d0 + r * drs + j, mo, even(a, b));
      if (d1) {
        __m256 c = load_m(p, base + 1, mc), e = load_m(p, base + 9, me);
        _mm256_maskstore_ps(d1 + r * drs + j, mo, odd(a, b));
        _mm256_maskstore_ps(d2 + r * drs + j, mo, odd(c, e));
      }
    }
  }
}
