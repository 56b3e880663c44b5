/* AVX2 + FMA GEMV kernels and dequantization. Tiles: one weight row at a time, activation rows
 * in groups of up to 4 so each code chunk is decoded once per group. */
#include <immintrin.h>
#include <math.h>

#include "quant/avx2/qgemv_avx2_common.h"
#include "quant/qkernels.h"


/* Accurate kernels accumulate in acc[r][0..1] (4 rows) or acc[0][0..3] (one row, more
 * independent FMA chains); y[r * ldy] gets each row's sum. */
INLINE void store_acc_rows(__m256 acc[4][4], const int mt, float *y, size_t ldy) {
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) {
    __m256 t = _mm256_add_ps(acc[r][0], acc[r][1]);
    if (mt == 1) t = _mm256_add_ps(t, _mm256_add_ps(acc[r][2], acc[r][3]));
    y[r * ldy] = hsum8(t);
  }
}

/* ---------------------------------------------------------------- int8 activations */

/* q4: u = q + 8 is unsigned, so maddubs(u, xq) needs no sign trick; the +8 is removed by starting
 * each block's sum at -8 * sum(xq) (exact, in int32). maddubs cannot saturate: 2 * 15 * 127. */
INLINE void q4_int8_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                        size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  __m256 acc[4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) acc[r] = _mm256_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m256i is[4];
      #pragma GCC unroll 4
      for (int r = 0; r < mt; r++) is[r] = _mm256_setr_epi32(-8 * a->isum[(i0 + r) * w->nb + b], 0, 0, 0, 0, 0, 0, 0);
      for (size_t ch = 0; ch < nch; ch++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(c + 16 * ch));
        __m256i u = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), m4);
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          __m256i xv = _mm256_loadu_si256((const __m256i *)(a->xq + (i0 + r) * a->row_len + xo + 32 * ch));
          is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, xv), ones));
        }
      }
      #pragma GCC unroll 4
      for (int r = 0; r < mt; r++)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[r]), _mm256_set1_ps(s[b] * a->xs[(i0 + r) * w->nb + b]),
                                 acc[r]);
      c += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
  const float *o = w->offsets ? w->offsets + n * w->nb : NULL;
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++)
    y[(i0 + r) * ldy + n] = hsum8(acc[r]) + offset_fold(o, a->xsum + (i0 + r) * w->nb, w->nb);
}

/* q8: both operands signed; maddubs(|q|, sign(xq, q)) (|q| <= 128, |xq| <= 127: no saturation). */
INLINE void q8_int8_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                        size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) acc[r] = _mm256_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m256i is[4];
      #pragma GCC unroll 4
      for (int r = 0; r < mt; r++) is[r] = _mm256_setzero_si256();
      for (size_t ch = 0; ch < nch; ch++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(c + 32 * ch));
        __m256i av = _mm256_sign_epi8(v, v);
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          __m256i xv = _mm256_loadu_si256((const __m256i *)(a->xq + (i0 + r) * a->row_len + xo + 32 * ch));
          is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(av, _mm256_sign_epi8(xv, v)), ones));
        }
      }
      #pragma GCC unroll 4
      for (int r = 0; r < mt; r++)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[r]), _mm256_set1_ps(s[b] * a->xs[(i0 + r) * w->nb + b]),
                                 acc[r]);
      c += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
  const float *o = w->offsets ? w->offsets + n * w->nb : NULL;
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++)
    y[(i0 + r) * ldy + n] = hsum8(acc[r]) + offset_fold(o, a->xsum + (i0 + r) * w->nb, w->nb);
}

/* ---------------------------------------------------------------- fp32 activations */

/* Weights are decoded to exactly fmaf(q, scale, offset), as lc_dequant_rows gives, then FMA'd
 * with x. One row: 4 accumulators hide FMA latency; groups of rows: 2 per row. */
INLINE void q4_acc_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                       size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const float *o = w->offsets ? w->offsets + n * w->nb : NULL;
  const __m128i m4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  __m256 acc[4][4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++)
    #pragma GCC unroll 4
    for (int j = 0; j < 4; j++) acc[r][j] = _mm256_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m256 S = _mm256_set1_ps(s[b]), O = _mm256_set1_ps(o ? o[b] : 0.0f);
      for (size_t ch = 0; ch < nch; ch++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(c + 16 * ch));
        __m128i lo = _mm_sub_epi8(_mm_and_si128(v, m4), eight);
        __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m4), eight);
        __m256 wv[4];
        wv[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), S, O);
        wv[1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), S, O);
        wv[2] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), S, O);
        wv[3] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), S, O);
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          const float *x = a->xf + (i0 + r) * a->row_len + xo + 32 * ch;
          #pragma GCC unroll 4
          for (int j = 0; j < 4; j++) {
            int ja = mt == 1 ? j : (j & 1);
            acc[r][ja] = _mm256_fmadd_ps(wv[j], _mm256_loadu_ps(x + 8 * j), acc[r][ja]);
          }
        }
      }
      c += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
  store_acc_rows(acc, mt, y + i0 * ldy + n, ldy);
}

INLINE void q8_acc_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                       size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const float *o = w->offsets ? w->offsets + n * w->nb : NULL;
  __m256 acc[4][4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++)
    #pragma GCC unroll 4
    for (int j = 0; j < 4; j++) acc[r][j] = _mm256_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m256 S = _mm256_set1_ps(s[b]), O = _mm256_set1_ps(o ? o[b] : 0.0f);
      for (size_t ch = 0; ch < nch; ch++) {
        __m256 wv[4];
        #pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
          __m128i q = _mm_loadl_epi64((const __m128i *)(c + 32 * ch + 8 * j));
          wv[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), S, O);
        }
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          const float *x = a->xf + (i0 + r) * a->row_len + xo + 32 * ch;
          #pragma GCC unroll 4
          for (int j = 0; j < 4; j++) {
            int ja = mt == 1 ? j : (j & 1);
            acc[r][ja] = _mm256_fmadd_ps(wv[j], _mm256_loadu_ps(x + 8 * j), acc[r][ja]);
          }
        }
      }
      c += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
  store_acc_rows(acc, mt, y + i0 * ldy + n, ldy);
}

/* f32 rows: x is padded to 32 with zeros; reads past a row land in the next row or the slack. */
INLINE void f32_acc_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                        size_t ldy) {
  const float *wr = (const float *)(const void *)(w->codes + n * w->row_bytes);
  __m256 acc[4][4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++)
    #pragma GCC unroll 4
    for (int j = 0; j < 4; j++) acc[r][j] = _mm256_setzero_ps();
  for (size_t e = 0; e < a->row_len; e += 32) {
    __m256 wv[4];
    #pragma GCC unroll 4
    for (int j = 0; j < 4; j++) wv[j] = _mm256_loadu_ps(wr + e + 8 * j);
    #pragma GCC unroll 4
    for (int r = 0; r < mt; r++)
      #pragma GCC unroll 4
      for (int j = 0; j < 4; j++) {
        int ja = mt == 1 ? j : (j & 1);
        acc[r][ja] = _mm256_fmadd_ps(wv[j], _mm256_loadu_ps(a->xf + (i0 + r) * a->row_len + e + 8 * j), acc[r][ja]);
      }
  }
  store_acc_rows(acc, mt, y + i0 * ldy + n, ldy);
}

LC_QDEFINE_ROWS(, lc_qgemv_q4_int8_avx2, q4_int8_row)
LC_QDEFINE_ROWS(, lc_qgemv_q8_int8_avx2, q8_int8_row)
LC_QDEFINE_ROWS(, lc_qgemv_q4_accurate_avx2, q4_acc_row)
LC_QDEFINE_ROWS(, lc_qgemv_q8_accurate_avx2, q8_acc_row)
LC_QDEFINE_ROWS(, lc_qgemv_f32_accurate_avx2, f32_acc_row)

/* ---------------------------------------------------------------- dequantization */

void lc_dequant_q4_avx2(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  size_t e = j0, end = j0 + len;
  const __m128i m4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m256 S = _mm256_set1_ps(s), O = _mm256_set1_ps(o);
  for (; e < end && (e & 1); e++) *dst++ = fmaf((float)(((c[e >> 1] >> 4) & 15) - 8), s, o);
  for (; e + 32 <= end; e += 32, dst += 32) {
    __m128i v = _mm_loadu_si128((const __m128i *)(c + e / 2));
    __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
    __m128i n0 = _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), eight), n1 = _mm_sub_epi8(_mm_unpackhi_epi8(lo, hi), eight);
    _mm256_storeu_ps(dst, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(n0)), S, O));
    _mm256_storeu_ps(dst + 8, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(n0, 8))), S, O));
    _mm256_storeu_ps(dst + 16, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(n1)), S, O));
    _mm256_storeu_ps(dst + 24, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(n1, 8))), S, O));
  }
  for (; e < end; e++) *dst++ = fmaf((float)(((c[e >> 1] >> ((e & 1) * 4)) & 15) - 8), s, o);
}

void lc_dequant_q8_avx2(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  const int8_t *q = (const int8_t *)c + j0;
  const __m256 S = _mm256_set1_ps(s), O = _mm256_set1_ps(o);
  size_t e = 0;
  for (; e + 8 <= len; e += 8) {
    __m128i v = _mm_loadl_epi64((const __m128i *)(q + e));
    _mm256_storeu_ps(dst + e, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)), S, O));
  }
  for (; e < len; e++) dst[e] = fmaf((float)q[e], s, o);
}
