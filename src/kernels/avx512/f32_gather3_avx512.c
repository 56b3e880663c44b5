/* Three stride-2 gathers from one input row at column offsets 0, 1, 2 (the kx taps of a 3x3
 * stride-2 conv): d0[j] = s[2j], d1[j] = s[2j + 1], d2[j] = s[2j + 2]. One pass loads each input
 * line once for the three taps; three gather calls loaded it three times (taprows route). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/avx512/avx512_kernels.h"

static __mmask16 lanes(size_t m) { return (__mmask16)(m >= 16 ? 0xFFFFu : (1u << m) - 1u); }

/* 16 floats at s + off (integer math: masked lanes touch no memory, the address may lie past s's end). */
static __m512 load_m(const float *s, size_t off, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, (const float *)((uintptr_t)s + off * sizeof(float)));
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
