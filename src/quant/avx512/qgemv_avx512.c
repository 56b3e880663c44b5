/* AVX-512 kernels: int8 dot products with VNNI (vpdpbusd on 256-bit vectors, AVX512VL), and the
 * accurate q4 kernel that decodes nibbles through a 16-entry per-block table (vpermps). */
#include <immintrin.h>

#include "quant/qkernels.h"

#define INLINE static inline __attribute__((always_inline))

INLINE float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

INLINE float offset_fold(const float *o, const float *xsum, size_t nb) {
  if (!o) return 0.0f;
  __m256 acc = _mm256_setzero_ps();
  size_t b = 0;
  for (; b + 8 <= nb; b += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(o + b), _mm256_loadu_ps(xsum + b), acc);
  return hsum8(acc) + lc_qoffset_fold(o + b, xsum + b, nb - b);
}

/* vpdpbusd multiplies unsigned by signed bytes: q8 weights go in as u = q ^ 0x80 = q + 128 and
 * each block's sum starts at -128 * sum(xq). */
INLINE void int8_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                     size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const __m256i flip = _mm256_set1_epi8((char)0x80);
  __m256 acc[4];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) acc[r] = _mm256_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m256i is[4];
      #pragma GCC unroll 4
      for (int r = 0; r < mt; r++)
        is[r] = _mm256_setr_epi32(-128 * a->isum[(i0 + r) * w->nb + b], 0, 0, 0, 0, 0, 0, 0);
      for (size_t ch = 0; ch < nch; ch++) {
        __m256i u = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 32 * ch)), flip);
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          __m256i xv = _mm256_loadu_si256((const __m256i *)(a->xq + (i0 + r) * a->row_len + xo + 32 * ch));
          is[r] = _mm256_dpbusd_epi32(is[r], u, xv);
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

/* q4 with activations in natural order (see lc_qgemv_natural_q4): 16 code bytes widen to 32
 * nibbles in order with cvtepu8_epi16 + shift + one ternary logic op. The +8 of the stored nibble
 * is removed after the loop: y -= 8 * sum_b scale_b * xsum_b (folded with the offsets). */
INLINE __m128 load2(const float *p) { return _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)p)); }

INLINE __m256i q4_expand16(const uint8_t *c) {
  __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)c));
  return _mm256_ternarylogic_epi32(w, _mm256_slli_epi16(w, 4), _mm256_set1_epi16(0x0F0F), 0xA8); /* (a|b)&c */
}
INLINE __m512i q4_expand32(const uint8_t *c) {
  __m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)c));
  return _mm512_ternarylogic_epi32(w, _mm512_slli_epi16(w, 4), _mm512_set1_epi16(0x0F0F), 0xA8);
}

INLINE void q4_int8_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                        size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const size_t nb = w->nb;
  __m512 acc[4];
#pragma GCC unroll 4
  for (int r = 0; r < mt; r++) acc[r] = _mm512_setzero_ps();
  size_t b = 0;
  if (w->block == 32 && w->tail == 32) {
    /* Two 32-weight blocks per zmm: int32 lanes 0-7 are block b, 8-15 block b + 1. */
    const __m512i pair = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    for (; b + 2 <= nb; b += 2) {
      __m512i u = q4_expand32(c + 16 * b);
      __m512 sv = _mm512_castps128_ps512(load2(s + b));
#pragma GCC unroll 4
      for (int r = 0; r < mt; r++) {
        const size_t xb = (i0 + r) * nb + b;
        __m512i is = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u,
                                         _mm512_loadu_si512(a->xq + (i0 + r) * a->row_len + 32 * b));
        __m128 d = _mm_mul_ps(load2(a->xs + xb),
                              _mm512_castps512_ps128(sv));
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_permutexvar_ps(pair, _mm512_castps128_ps512(d)),
                                 acc[r]);
      }
    }
  }
  /* Any other block shape: block by block, 32 weights per step. */
  size_t xo = b * 32, cb = b * 16;
  for (; b < nb; b++) {
    size_t bi = b % w->bpt, len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
    __m256i is[4];
#pragma GCC unroll 4
    for (int r = 0; r < mt; r++) is[r] = _mm256_setzero_si256();
    for (size_t ch = 0; ch < nch; ch++) {
      __m256i u = q4_expand16(c + cb + 16 * ch);
#pragma GCC unroll 4
      for (int r = 0; r < mt; r++)
        is[r] = _mm256_dpbusd_epi32(
            is[r], u, _mm256_loadu_si256((const __m256i *)(a->xq + (i0 + r) * a->row_len + xo + 32 * ch)));
    }
#pragma GCC unroll 4
    for (int r = 0; r < mt; r++)
      acc[r] = _mm512_add_ps(acc[r], _mm512_castps256_ps512(_mm256_mul_ps(
                                         _mm256_cvtepi32_ps(is[r]), _mm256_set1_ps(s[b] * a->xs[(i0 + r) * nb + b]))));
    cb += lc_qblock_nbytes(w, bi);
    xo += nch * LC_QCHUNK;
  }
  const float *o = w->offsets ? w->offsets + n * nb : NULL;
#pragma GCC unroll 4
  for (int r = 0; r < mt; r++) {
    const float *xsum = a->xsum + (i0 + r) * nb;
    __m256 f = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + 8 <= nb; j += 8) {
      __m256 sv = _mm256_loadu_ps(s + j), xv = _mm256_loadu_ps(xsum + j);
      f = _mm256_fnmadd_ps(_mm256_mul_ps(sv, _mm256_set1_ps(8.0f)), xv, f);
      if (o) f = _mm256_fmadd_ps(_mm256_loadu_ps(o + j), xv, f);
    }
    float t = _mm512_reduce_add_ps(acc[r]) + hsum8(f);
    for (; j < nb; j++) t += ((o ? o[j] : 0.0f) - 8.0f * s[j]) * xsum[j];
    y[(i0 + r) * ldy + n] = t;
  }
}

INLINE void q8_int8_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                        size_t ldy) {
  int8_row(w, a, n, i0, mt, y, ldy);
}

/* Accurate q4: table[u] = fmaf(u - 8, scale, offset) built once per block, so every weight is
 * exactly what lc_dequant_rows gives; one vpermps decodes 16 weights. */
INLINE void q4_acc_row(const lc_qmatrix *w, const lc_qact *a, size_t n, size_t i0, const int mt, float *y,
                       size_t ldy) {
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * w->nb;
  const float *o = w->offsets ? w->offsets + n * w->nb : NULL;
  const __m512 qv = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m512 acc[4][2];
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  size_t xo = 0, b = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m512 T = _mm512_fmadd_ps(qv, _mm512_set1_ps(s[b]), _mm512_set1_ps(o ? o[b] : 0.0f));
      for (size_t ch = 0; ch < nch; ch++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(c + 16 * ch));
        __m512 w0 = _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm_and_si128(v, m4)), T);
        __m512 w1 = _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(v, 4), m4)), T);
        #pragma GCC unroll 4
        for (int r = 0; r < mt; r++) {
          const float *x = a->xf + (i0 + r) * a->row_len + xo + 32 * ch;
          acc[r][0] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x), acc[r][0]);
          acc[r][1] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + 16), acc[r][1]);
        }
      }
      c += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
  #pragma GCC unroll 4
  for (int r = 0; r < mt; r++) y[(i0 + r) * ldy + n] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
}

#define DEFINE_KERNEL(name, rowfn)                                                                        \
  void name(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y, size_t ldy) {          \
    for (size_t n = n0; n < n1; n++) {                                                                    \
      size_t i = 0;                                                                                       \
      for (; i + 4 <= a->m; i += 4) rowfn(w, a, n, i, 4, y, ldy);                                         \
      switch (a->m - i) {                                                                                 \
        case 3: rowfn(w, a, n, i, 3, y, ldy); break;                                                      \
        case 2: rowfn(w, a, n, i, 2, y, ldy); break;                                                      \
        case 1: rowfn(w, a, n, i, 1, y, ldy); break;                                                      \
        default: break;                                                                                   \
      }                                                                                                   \
    }                                                                                                     \
  }

DEFINE_KERNEL(lc_qgemv_q4_int8_avx512vnni, q4_int8_row)
DEFINE_KERNEL(lc_qgemv_q8_int8_avx512vnni, q8_int8_row)
DEFINE_KERNEL(lc_qgemv_q4_accurate_avx512, q4_acc_row)
