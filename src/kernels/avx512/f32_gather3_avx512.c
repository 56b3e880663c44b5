/* Three stride-2 gathers from one input row at column offsets 0, 1, 2 (the kx taps of a 3x3
 * stride-2 conv): d0[j] = s[2j], d1[j] = s[2j + 1], d2[j] = s[2j + 2]. One pass loads each input
 * line once for the three taps; three gather calls loaded it three times (taprows route).
 * lc_f32_gather_s2_rows_avx512 does the same for a block of rows with the padding columns in
 * masks: a call per input row and its scalar edge columns were ~114 cycles a 56-output row against
 * ~25 of vector work (a Xeon, 64 ch at 112 px: 19 % of the conv). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/avx512/avx512_kernels.h"

static __mmask16 lanes(size_t m) { return (__mmask16)(m >= 16 ? 0xFFFFu : (1u << m) - 1u); }

/* 16 floats at s + off (integer math: masked lanes touch no memory, the address may lie past s's end). */
static __m512 load_m(const float *s, ptrdiff_t off, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, (const float *)((uintptr_t)s + (uintptr_t)(off * (ptrdiff_t)sizeof(float))));
}

void lc_f32_gather3_s2_avx512(float *d0, float *d1, float *d2, const float *s, size_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  size_t j = 0;
  /* 16 outputs read s[2j .. 2j + 32]; the second load of d2 stops at 2j + 32 on the last block. */
  for (; j + 16 <= n; j += 16) {
    const float *p = s + 2 * j;
    __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
    __m512 c = _mm512_loadu_ps(p + 2);
    __m512 e = j + 16 < n ? _mm512_loadu_ps(p + 18) : load_m(p, 18, 0x7FFF);
    _mm512_storeu_ps(d0 + j, _mm512_permutex2var_ps(a, even, b));
    _mm512_storeu_ps(d1 + j, _mm512_permutex2var_ps(a, odd, b));
    _mm512_storeu_ps(d2 + j, _mm512_permutex2var_ps(c, even, e));
  }
  if (j < n) {
    /* r outputs read the 2r + 1 floats s[2j .. 2j + 2r]: d0/d1 the first 2r, d2 the 2r - 1 from 2j + 2. */
    size_t r = n - j, m = 2 * r, m2 = 2 * r - 1;
    const float *p = s + 2 * j;
    __m512 a = load_m(p, 0, lanes(m)), b = load_m(p, 16, m > 16 ? lanes(m - 16) : 0);
    __m512 c = load_m(p, 2, lanes(m2)), e = load_m(p, 18, m2 > 16 ? lanes(m2 - 16) : 0);
    __mmask16 o = lanes(r);
    _mm512_mask_storeu_ps(d0 + j, o, _mm512_permutex2var_ps(a, even, b));
    _mm512_mask_storeu_ps(d1 + j, o, _mm512_permutex2var_ps(a, odd, b));
    _mm512_mask_storeu_ps(d2 + j, o, _mm512_permutex2var_ps(c, even, e));
  }
}

/* Lanes l of 16 columns from `off` with 0 <= off + l < iw. */
static __mmask16 cols_in(ptrdiff_t off, ptrdiff_t iw) {
  ptrdiff_t lo = off < 0 ? -off : 0, hi = iw - off;
  if (lo > 16) lo = 16;
  if (hi < 0) hi = 0;
  return (__mmask16)(lanes((size_t)hi) & ~lanes((size_t)lo));
}

void lc_f32_gather_s2_rows_avx512(float *d0, float *d1, float *d2, size_t drs, const float *src, size_t srs,
                                  size_t rows, size_t n, ptrdiff_t x0, size_t iw) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const ptrdiff_t w = (ptrdiff_t)iw;
  /* Blocks of 16 outputs outside, rows inside: a block's masks are the same on every row. */
  for (size_t j = 0; j < n; j += 16) {
    const ptrdiff_t base = 2 * (ptrdiff_t)j + x0; /* column of the first float loaded */
    const size_t nj = n - j < 16 ? n - j : 16;
    /* whole vectors when columns base .. base + 32 (d2's last) lie in the row */
    if (nj == 16 && base >= 0 && base + 33 <= w) {
      for (size_t r = 0; r < rows; r++) {
        const float *p = src + r * srs + base;
        float *o = d0 + r * drs + j;
        __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
        _mm512_storeu_ps(o, _mm512_permutex2var_ps(a, even, b));
        if (d1) {
          __m512 c = _mm512_loadu_ps(p + 2), e = _mm512_maskz_loadu_ps(0x7FFF, p + 18);
          _mm512_storeu_ps(d1 + r * drs + j, _mm512_permutex2var_ps(a, odd, b));
          _mm512_storeu_ps(d2 + r * drs + j, _mm512_permutex2var_ps(c, even, e));
        }
      }
      continue;
    }
    const __mmask16 ma = cols_in(base, w), mb = cols_in(base + 16, w), mo = lanes(nj);
    const __mmask16 mc = cols_in(base + 2, w), me = (__mmask16)(cols_in(base + 18, w) & 0x7FFF);
    for (size_t r = 0; r < rows; r++) {
      const float *p = src + r * srs;
      __m512 a = load_m(p, base, ma), b = load_m(p, base + 16, mb);
      _mm512_mask_storeu_ps(d0 + r * drs + j, mo, _mm512_permutex2var_ps(a, even, b));
      if (d1) {
        __m512 c = load_m(p, base + 2, mc), e = load_m(p, base + 18, me);
        _mm512_mask_storeu_ps(d1 + r * drs + j, mo, _mm512_permutex2var_ps(a, odd, b));
        _mm512_mask_storeu_ps(d2 + r * drs + j, mo, _mm512_permutex2var_ps(c, even, e));
      }
    }
  }
}
