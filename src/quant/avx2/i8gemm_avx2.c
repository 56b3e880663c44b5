/* AVX2 int8-activation GEMM (quant/i8gemm.h) and the activation quantizer.
 * Q4: vpmaddubsw(u = q + 8, xq) pairs are at most 2 * 15 * 127 = 3810, so 8 quads add up in 16 bits
 * (30480) before one vpmaddwd widens them. Q8: both signed, so vpmaddubsw(|q|, sign(xq, q)): a pair
 * is at most 2 * 128 * 127 = 32512, exact but widened every quad. */
#include <immintrin.h>

#define I8_Q4_GROUP 8
#define I8_Q4_FULL 8
#define I8_Q4_WIDEN(s) _mm256_madd_epi16((s), ones)
#define I8_DOT_Q4(s, wb, x) ((s) = _mm256_add_epi16((s), _mm256_maddubs_epi16((wb), (x))))
#define I8_DOT_Q8(d, wb, aw, x) \
  ((d) = _mm256_add_epi32((d), _mm256_madd_epi16(_mm256_maddubs_epi16((aw), _mm256_sign_epi8((x), (wb))), ones)))
#define I8_NAME_Q4 lc_i8gemm_q4_4x16_avx2
#define I8_NAME_Q8 lc_i8gemm_q8_4x16_avx2
#include "quant/avx2/i8gemm_tile.h"

/* Bytes [k][p] of a 4 x 4 block to [p][k] in each 128-bit lane. */
static const int8_t transpose4[32] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                      0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};

void lc_i8prep_16_avx2(const lc_i8blocks *bl, const float *x, size_t ldx, int8_t *xq, float *xs, int32_t *isum, float *xsum) {
  const __m256 sign = _mm256_set1_ps(-0.0f), q127 = _mm256_set1_ps(127.0f), m127 = _mm256_set1_ps(-127.0f);
  const __m256i tr = _mm256_loadu_si256((const __m256i *)transpose4);
  for (size_t b = 0; b < bl->nb; b++) {
    size_t len = bl->len[b], nq = bl->nq[b];
    __m256 am[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (size_t e = 0; e < len; e++)
      for (int h = 0; h < 2; h++) am[h] = _mm256_max_ps(am[h], _mm256_andnot_ps(sign, _mm256_loadu_ps(x + e * ldx + 8 * h)));
    __m256 inv[2];
    __m256i is[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int h = 0; h < 2; h++) {
      __m256 nz = _mm256_cmp_ps(am[h], _mm256_setzero_ps(), _CMP_GT_OQ);
      inv[h] = _mm256_and_ps(_mm256_div_ps(q127, _mm256_or_ps(am[h], _mm256_andnot_ps(nz, q127))), nz);
    }
    for (size_t q = 0; q < nq; q++) {
      __m256i v[4][2];
      for (int j = 0; j < 4; j++)
        for (int h = 0; h < 2; h++) {
          size_t e = 4 * q + (size_t)j;
          if (e >= len) {
            v[j][h] = _mm256_setzero_si256();
            continue;
          }
          __m256 r = _mm256_mul_ps(_mm256_loadu_ps(x + e * ldx + 8 * h), inv[h]);
          v[j][h] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, m127), q127));
          is[h] = _mm256_add_epi32(is[h], v[j][h]);
        }
      for (int h = 0; h < 2; h++) {
        __m256i t = _mm256_packs_epi16(_mm256_packs_epi32(v[0][h], v[1][h]), _mm256_packs_epi32(v[2][h], v[3][h]));
        _mm256_storeu_si256((__m256i *)(xq + q * 64 + 32 * h), _mm256_shuffle_epi8(t, tr));
      }
    }
    for (int h = 0; h < 2; h++) {
      __m256 s = _mm256_div_ps(am[h], q127);
      _mm256_storeu_ps(xs + b * 16 + 8 * h, s);
      _mm256_storeu_si256((__m256i *)(isum + b * 16 + 8 * h), is[h]);
      _mm256_storeu_ps(xsum + b * 16 + 8 * h, _mm256_mul_ps(s, _mm256_cvtepi32_ps(is[h])));
    }
    x += len * ldx;
    xq += nq * 64;
  }
}
