/* One input row of one channel block quantized for the i8gemm planes (conv/i8planes.h): 16 columns
 * a vector, each column's scale from its amax over the block's channels; the operations and their
 * order are lc_i8prep_16_avx2's, so the codes and scales keep their bits. */
#include <immintrin.h>

#include "quant/i8gemm.h"

void lc_i8fill_avx512(const float *src, size_t ld, size_t len, size_t n, uint32_t *codes, size_t pix, float *xs,
                      int32_t *isum, float *xsum) {
  const __m512 q127 = _mm512_set1_ps(127.0f), m127 = _mm512_set1_ps(-127.0f);
  const __m512i lo = _mm512_set1_epi32(255);
  for (size_t x0 = 0; x0 < n; x0 += 16) {
    __mmask16 k = n - x0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - x0)) - 1);
    __m512 am = _mm512_setzero_ps();
    for (size_t e = 0; e < len; e++) am = _mm512_max_ps(am, _mm512_abs_ps(_mm512_maskz_loadu_ps(k, src + e * ld + x0)));
    __mmask16 nz = _mm512_cmp_ps_mask(am, _mm512_setzero_ps(), _CMP_GT_OQ);
    __m512 inv = _mm512_maskz_div_ps(nz, q127, am);
    __m512i sum = _mm512_setzero_si512();
    for (size_t q = 0; 4 * q < len; q++) {
      __m512i acc = _mm512_setzero_si512();
      for (size_t e4 = 0; e4 < 4 && 4 * q + e4 < len; e4++) {
        __m512 r = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, src + (4 * q + e4) * ld + x0), inv);
        __m512i v = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, m127), q127));
        sum = _mm512_add_epi32(sum, v);
        acc = _mm512_or_si512(acc, _mm512_slli_epi32(_mm512_and_si512(v, lo), (unsigned)(8 * e4)));
      }
      _mm512_mask_storeu_epi32(codes + q * pix + x0, k, acc);
    }
    __m512 s = _mm512_div_ps(am, q127);
    _mm512_mask_storeu_ps(xs + x0, k, s);
    _mm512_mask_storeu_epi32(isum + x0, k, sum);
    _mm512_mask_storeu_ps(xsum + x0, k, _mm512_mul_ps(s, _mm512_cvtepi32_ps(sum)));
  }
}
