/* q4 int8 with 16 or more activation rows (AVX-512 VNNI): the rows sit in the vector lanes and the
 * weights are broadcast, so a vpdpbusd does 64 useful products with no reduction (qkernels.h,
 * lc_qprep_bcast). Called by lc_qgemv_q4_int8_avx512vnni (qgemv_avx512.c). */
#include <immintrin.h>
#include <string.h>

#include "quant/avx2/qgemv_avx2_common.h"
#include "quant/qkernels.h"
#include "util/checked.h"

void lc_qprep_bcast(const lc_qmatrix *w, size_t m, const int8_t *xq, size_t ld, const float *xs, uint8_t *xt,
                    float *xst) {
  const size_t k = w->k, nb = w->nb, tiles = lc_div_up(m, 16);
  memset(xt, 128, tiles * 16 * k);
  memset(xst, 0, tiles * 16 * nb * sizeof(float));
  for (size_t i = 0; i < m; i++) {
    uint8_t *d = xt + i / 16 * 16 * k + i % 16 * 4;
    for (size_t e = 0; e < k; e += 4, d += 64)
      for (int j = 0; j < 4; j++) d[j] = (uint8_t)(xq[i * ld + e + j] + 128);
    for (size_t b = 0; b < nb; b++) xst[(i / 16 * nb + b) * 16 + i % 16] = xs[i * nb + b];
  }
}

#define LC_QBC_NR 8 /* weight rows per tile: each activation load feeds 8 vpdpbusd */

/* 16 activation rows (tile t) times nr weight rows. Per chunk of 32 (block 16: 16) weights, each
 * weight row's nibbles are decoded to signed q in a small buffer and broadcast 4 at a time against
 * x + 128; sum((x + 128) q) - 128 sum(q) is the exact int32 dot of the block. */
INLINE void q4_bcast_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t t, float *y,
                          size_t ldy) {
  const size_t L = w->block, nb = w->nb, rb = w->row_bytes, k = w->k, cw = L < 32 ? L : 32;
  const uint8_t *c = w->codes + n * rb, *xt = a->xt + t * 16 * k;
  const float *s = w->scales + n * nb, *xst = a->xst + t * 16 * nb;
  const __m128i m4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  __m512 acc[LC_QBC_NR];
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) acc[r] = _mm512_setzero_ps();
  size_t e = 0;
  for (size_t b = 0; b < nb; b++) {
    __m512i dp[LC_QBC_NR];
    int32_t us[LC_QBC_NR];
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) dp[r] = _mm512_setzero_si512(), us[r] = 0;
    for (const size_t e1 = e + L; e < e1; e += cw) {
      _Alignas(32) int8_t qb[LC_QBC_NR][32];
#pragma GCC unroll 8
      for (int r = 0; r < nr; r++) {
        const uint8_t *cp = c + r * rb + e / 2;
        __m128i v = cw == 32 ? _mm_loadu_si128((const __m128i *)cp) : _mm_loadl_epi64((const __m128i *)cp);
        __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
        __m128i sad = _mm_sad_epu8(_mm_add_epi8(lo, hi), _mm_setzero_si128());
        us[r] += _mm_cvtsi128_si32(sad) + _mm_extract_epi16(sad, 4);
        _mm_store_si128((__m128i *)(void *)qb[r], _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), eight));
        _mm_store_si128((__m128i *)(void *)(qb[r] + 16), _mm_sub_epi8(_mm_unpackhi_epi8(lo, hi), eight));
      }
      /* Keep qb in memory: broadcasting from memory is a load, from a register two shuffles. */
      __asm__ volatile("" ::: "memory");
      for (size_t j = 0; j < cw; j += 4) {
        const __m512i xv = _mm512_loadu_si512(xt + (e + j) * 16);
#pragma GCC unroll 8
        for (int r = 0; r < nr; r++) {
          int32_t q4;
          memcpy(&q4, qb[r] + j, sizeof q4);
          dp[r] = _mm512_dpbusd_epi32(dp[r], xv, _mm512_set1_epi32(q4));
        }
      }
    }
    const __m512 xsv = _mm512_loadu_ps(xst + b * 16);
#pragma GCC unroll 8
    for (int r = 0; r < nr; r++) {
      const __m512i corr = _mm512_set1_epi32(128 * (us[r] - 8 * (int32_t)L));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(dp[r], corr)),
                               _mm512_mul_ps(xsv, _mm512_set1_ps(s[r * nb + b])), acc[r]);
    }
  }
  const size_t rows = lc_min_sz(16, a->m - 16 * t);
#pragma GCC unroll 8
  for (int r = 0; r < nr; r++) {
    float v[16];
    _mm512_storeu_ps(v, acc[r]);
    for (size_t i = 0; i < rows; i++) {
      float f = w->offsets ? offset_fold(w->offsets + (n + r) * nb, a->xsum + (16 * t + i) * nb, nb) : 0.0f;
      y[(16 * t + i) * ldy + n + r] = v[i] + f;
    }
  }
}

/* Blocks of 16 or 32 (one chunk per block): up to 4 activation tiles per pass share each decoded
 * chunk, and the -128 sum(q) correction starts the int32 sum. */
INLINE void q4_bcast_tile32(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t t0, const int tt,
                            float *y, size_t ldy) {
  const size_t L = w->block, nb = w->nb, rb = w->row_bytes, k = w->k;
  const uint8_t *c = w->codes + n * rb, *xt = a->xt + t0 * 16 * k;
  const float *s = w->scales + n * nb, *xst = a->xst + t0 * 16 * nb;
  const __m128i m4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  __m512 acc[4][4];
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int t = 0; t < tt; t++) acc[r][t] = _mm512_setzero_ps();
  for (size_t b = 0; b < nb; b++) {
    _Alignas(32) int8_t qb[4][32];
    int32_t corr[4];
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) {
      const uint8_t *cp = c + r * rb + b * L / 2;
      __m128i v = L == 32 ? _mm_loadu_si128((const __m128i *)cp) : _mm_loadl_epi64((const __m128i *)cp);
      __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
      __m128i sad = _mm_sad_epu8(_mm_add_epi8(lo, hi), _mm_setzero_si128());
      corr[r] = -128 * (_mm_cvtsi128_si32(sad) + _mm_extract_epi16(sad, 4) - 8 * (int32_t)L);
      _mm_store_si128((__m128i *)(void *)qb[r], _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), eight));
      _mm_store_si128((__m128i *)(void *)(qb[r] + 16), _mm_sub_epi8(_mm_unpackhi_epi8(lo, hi), eight));
    }
    __asm__ volatile("" ::: "memory"); /* broadcast qb from memory (see q4_bcast_tile) */
#pragma GCC unroll 4
    for (int t = 0; t < tt; t++) {
      __m512i dp[4];
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++) dp[r] = _mm512_set1_epi32(corr[r]);
      for (size_t j = 0; j < L; j += 4) {
        const __m512i xv = _mm512_loadu_si512(xt + t * 16 * k + (b * L + j) * 16);
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++) {
          int32_t q4;
          memcpy(&q4, qb[r] + j, sizeof q4);
          dp[r] = _mm512_dpbusd_epi32(dp[r], xv, _mm512_set1_epi32(q4));
        }
      }
      const __m512 xsv = _mm512_loadu_ps(xst + (t * nb + b) * 16);
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++)
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp[r]), _mm512_mul_ps(xsv, _mm512_set1_ps(s[r * nb + b])),
                                    acc[r][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int t = 0; t < tt; t++) {
      float v[16];
      _mm512_storeu_ps(v, acc[r][t]);
      for (size_t i = 0, rows = lc_min_sz(16, a->m - 16 * (t0 + t)); i < rows; i++) {
        size_t ai = 16 * (t0 + t) + i;
        float f = w->offsets ? offset_fold(w->offsets + (n + r) * nb, a->xsum + ai * nb, nb) : 0.0f;
        y[ai * ldy + n + r] = v[i] + f;
      }
    }
}

#define BCAST32_TILES(NR, n)                                                                              \
  do {                                                                                                    \
    size_t t0 = 0;                                                                                        \
    for (; t0 + 4 <= tiles; t0 += 4) q4_bcast_tile32(w, a, n, NR, t0, 4, y, ldy);                         \
    switch (tiles - t0) {                                                                                 \
      case 3: q4_bcast_tile32(w, a, n, NR, t0, 3, y, ldy); break;                                         \
      case 2: q4_bcast_tile32(w, a, n, NR, t0, 2, y, ldy); break;                                         \
      case 1: q4_bcast_tile32(w, a, n, NR, t0, 1, y, ldy); break;                                         \
      default: break;                                                                                     \
    }                                                                                                     \
  } while (0)

void lc_qgemv_q4_bcast_avx512(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y, size_t ldy) {
  const size_t tiles = lc_div_up(a->m, 16);
  size_t n = n0;
  if (w->block <= 32) {
    for (; n + 4 <= n1; n += 4) BCAST32_TILES(4, n);
    for (; n < n1; n++) BCAST32_TILES(1, n);
    return;
  }
  for (; n + LC_QBC_NR <= n1; n += LC_QBC_NR)
    for (size_t t = 0; t < tiles; t++) q4_bcast_tile(w, a, n, LC_QBC_NR, t, y, ldy);
  for (; n < n1; n++)
    for (size_t t = 0; t < tiles; t++) q4_bcast_tile(w, a, n, 1, t, y, ldy);
}
