/* AVX-512 kernels: int8 dot products with VNNI (vpdpbusd), the accurate q4 kernel that decodes
 * nibbles through a 16-entry per-block table (vpermps), the accurate q8 one, and block dequantizers.
 * q4 int8 with full blocks: few activation rows read the codes 64 bytes at a time against the
 * split128 activation layout (q4_split_tile); 16 or more activation rows put the rows in the
 * vector lanes and broadcast the weights (qgemv_bcast_avx512.c). Other shapes: q4_int8_row. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "quant/avx2/qgemv_avx2_common.h"
#include "quant/qkernels.h"
#include "util/checked.h"


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

/* q4, any block shape (fallback when lc_q4_split128 does not hold): activations in natural order: 16 code bytes widen to 32
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

/* ---------------------------------------------------------------- q4 int8, split128 layout */

/* roundf (half away from zero), exactly: t = trunc(v) and v - t is exact, so step once when >= 0.5. */
INLINE __m512 round_away(__m512 v) {
  __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), d = _mm512_sub_ps(v, t);
  t = _mm512_mask_add_ps(t, _mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f), _CMP_GE_OQ), t, _mm512_set1_ps(1.0f));
  return _mm512_mask_sub_ps(t, _mm512_cmp_ps_mask(d, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), t, _mm512_set1_ps(1.0f));
}

/* Same values as the scalar preparation (xs = amax / 127, xq = clamp(roundf(x / xs))), quantized in
 * natural order into xq, then each group of 128 split into even and odd bytes in place. */
void lc_qprep_split128_avx512(const lc_qmatrix *w, const float *x, int8_t *xq, float *xs, int32_t *isum,
                              float *xsum, int32_t *ibias, int deinterleave) {
  const size_t L = w->block, k = w->k, rl = lc_round_up(k, 128);
  const __m512 lim = _mm512_set1_ps(127.0f), nlim = _mm512_set1_ps(-127.0f);
  memset(ibias, 0, rl / 8 * sizeof(int32_t));
  memset(xq + k, 0, rl - k);
  for (size_t b = 0; b < w->nb; b++) {
    const float *xb = x + b * L;
    __m512 mx = _mm512_setzero_ps();
    for (size_t e = 0; e < L; e += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(xb + e)));
    float amax = _mm512_reduce_max_ps(mx), sc = amax / 127.0f;
    __m512i acc = _mm512_setzero_si512();
    const __m512 sv = _mm512_set1_ps(sc);
    for (size_t e = 0; e < L; e += 16) {
      __m512i q = _mm512_setzero_si512();
      if (sc > 0.0f) {
        __m512 r = round_away(_mm512_div_ps(_mm512_loadu_ps(xb + e), sv));
        q = _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(r, nlim), lim));
      }
      acc = _mm512_add_epi32(acc, q);
      _mm_storeu_si128((__m128i *)(void *)(xq + b * L + e), _mm512_cvtepi32_epi8(q));
    }
    int32_t sum = _mm512_reduce_add_epi32(acc);
    xs[b] = sc;
    isum[b] = sum;
    xsum[b] = sc * (float)sum;
    ibias[b * L / 8] = -8 * sum;
  }
  for (size_t g = 0; deinterleave && g < rl; g += 128) {
    __m512i a = _mm512_loadu_si512(xq + g), b = _mm512_loadu_si512(xq + g + 64);
    __m512i lo = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(a)), _mm512_cvtepi16_epi8(b), 1);
    __m512i hi = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(_mm512_srli_epi16(a, 8))),
                                    _mm512_cvtepi16_epi8(_mm512_srli_epi16(b, 8)), 1);
    _mm512_storeu_si512(xq + g, lo);
    _mm512_storeu_si512(xq + g + 64, hi);
  }
}

#ifndef LC_QNR1
#define LC_QNR1 2 /* weight rows per tile, one activation row (see DEFINE_TILED): 1, 3, 4 measured slower */
#endif
#ifndef LC_QNRM
#define LC_QNRM 2 /* weight rows per tile, several activation rows: 3 and 4 within 5 %, 1 is 1.5x slower */
#endif
#ifndef LC_QNR1_ACC
#define LC_QNR1_ACC 4 /* accurate mode is compute-bound: more rows share more loads */
#endif
#ifndef LC_QPF_HINT
#define LC_QPF_HINT _MM_HINT_T0
#endif
#ifndef LC_QPF
#define LC_QPF 4096 /* software prefetch distance, code bytes */
#endif

/* One 128-weight group of nr weight rows times mr activation rows: int32 per lane (ibias start).
 * vpdpbusd takes the nibbles as unsigned bytes u = q + 8, low nibbles against even elements. */
#define SPLIT_GROUP(DP_INIT, DP_OUT)                                                                      \
  do {                                                                                                    \
    __m512i lo[4], hi[4];                                                                                 \
    _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {                                                \
      const uint8_t *cp = c + r * rs * rb + 64 * g;                                                       \
      if (LC_QPF) _mm_prefetch((const char *)cp + LC_QPF, LC_QPF_HINT);                                   \
      __m512i v = _mm512_loadu_si512(cp);                                                                 \
      lo[r] = _mm512_and_si512(v, m4);                                                                    \
      hi[r] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);                                              \
    }                                                                                                     \
    _Pragma("GCC unroll 4") for (int i = 0; i < mr; i++) {                                                \
      const int8_t *xp = a->xq + (i0 + i) * rl + 128 * g;                                                 \
      __m512i xl = _mm512_loadu_si512(xp), xh = _mm512_loadu_si512(xp + 64);                              \
      __m512i cb = _mm512_loadu_si512(a->ibias + (i0 + i) * (rl / 8) + 16 * g);                           \
      _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) DP_OUT =                                       \
          _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(DP_INIT, lo[r], xl), hi[r], xh);                        \
    }                                                                                                     \
  } while (0)

/* q4 int8, split128 layout: per 16 blocks the combined scales weight * activation, then per group
 * of 128 weights one vpdpbusd pair per (weight row, activation row), converted once and scaled by
 * the lanes' block scales (vpermps of the 16 combined scales). Blocks over 128 stay in int32. */
INLINE void q4_split_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t rs, size_t i0,
                          const int mr, float *y, size_t ldy) {
  const size_t L = w->block, nb = w->nb, rb = w->row_bytes, ng = lc_div_up(rb, 64), rl = a->row_len;
  const uint8_t *c = w->codes + n * rb;
  const float *s = w->scales + n * nb;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512 acc[4][4];
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) acc[r][i] = _mm512_setzero_ps();
  for (size_t b0 = 0; b0 < nb; b0 += 16) {
    /* Combined scales weight * activation of 16 blocks; lanes past the row are 0 (their dp is 0). */
    const __mmask16 km = nb - b0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nb - b0)) - 1);
    __m512 cs[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) {
      __m512 xv = _mm512_maskz_loadu_ps(km, a->xs + (i0 + i) * nb + b0);
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++) cs[r][i] = _mm512_mul_ps(_mm512_maskz_loadu_ps(km, s + r * rs * nb + b0), xv);
    }
    if (L <= 128) {
      /* Lane j of a group is block 8j / L of it: the scale index advances by 128 / L per group. */
      const int sh = __builtin_ctzll(L) - 3;
      const __m512i step = _mm512_set1_epi32(16 >> sh);
      __m512i idx = _mm512_srlv_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                      _mm512_set1_epi32(sh));
      for (size_t g = b0 * L / 128, g1 = lc_min_sz(g + L / 8, ng); g < g1; g++) {
        __m512i dp[4][4];
        SPLIT_GROUP(cb, dp[r][i]);
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
          for (int i = 0; i < mr; i++)
            acc[r][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp[r][i]), _mm512_permutexvar_ps(idx, cs[r][i]), acc[r][i]);
        idx = _mm512_add_epi32(idx, step);
      }
    } else {
      /* Blocks of 128 k: int32 over the whole block, one conversion per block. */
      const size_t gpb = L / 128;
      for (size_t bb = b0; bb < lc_min_sz(b0 + 16, nb); bb++) {
        __m512i dp[4][4];
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
          for (int i = 0; i < mr; i++) dp[r][i] = _mm512_setzero_si512();
        for (size_t g = bb * gpb; g < (bb + 1) * gpb; g++) SPLIT_GROUP(_mm512_add_epi32(dp[r][i], cb), dp[r][i]);
        const __m512i sel = _mm512_set1_epi32((int)(bb - b0));
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
          for (int i = 0; i < mr; i++)
            acc[r][i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dp[r][i]), _mm512_permutexvar_ps(sel, cs[r][i]), acc[r][i]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) {
      float t = _mm512_reduce_add_ps(acc[r][i]);
      if (w->offsets) t += offset_fold(w->offsets + (n + r * rs) * nb, a->xsum + (i0 + i) * nb, nb);
      y[(i0 + i) * ldy + n + r * rs] = t;
    }
}

/* ---------------------------------------------------------------- accurate (q4, q8) */

/* Accurate mode, any blocks: each weight decoded to exactly fmaf(q, scale, offset), as
 * lc_dequant_rows gives. q4: through a per-block table (vpermps reads only the low 4 bits of each
 * index: the low nibble needs no mask, the high one is the byte shifted right by 4); q8: 16 codes
 * widened, converted and FMA'd a vector (the AVX2 kernel's 8 ran IResNet-34's 25088 x 512 q8
 * classifier compute-bound: 2.9 ms, 1.0 this way). nr weight rows share each activation load. */
INLINE void acc_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t rs, size_t i0,
                     const int mr, float *y, size_t ldy, const int q4) {
  const size_t rb = w->row_bytes * rs, nb = w->nb, rnb = nb * rs;
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * nb;
  const float *o = w->offsets ? w->offsets + n * nb : NULL;
  const __m512 qv = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  __m512 acc[4][4][2];
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) acc[r][i][0] = acc[r][i][1] = _mm512_setzero_ps();
  size_t xo = 0, b = 0, co = 0;
  for (size_t t = 0; t < w->taps; t++)
    for (size_t bi = 0; bi < w->bpt; bi++, b++) {
      size_t len = lc_qblock_len(w, bi), nch = lc_qpad(len) / LC_QCHUNK;
      __m512 S[4], O[4], T[4]; /* q8: scale and offset; q4: the table */
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++) {
        S[r] = _mm512_set1_ps(s[r * rnb + b]);
        O[r] = _mm512_set1_ps(o ? o[r * rnb + b] : 0.0f);
        if (q4) T[r] = _mm512_fmadd_ps(qv, S[r], O[r]);
      }
      for (size_t ch = 0; ch < nch; ch++) {
        __m512 w0[4], w1[4];
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++) {
          const uint8_t *cp = c + r * rb + co + (q4 ? 16 : 32) * ch;
          if (LC_QPF) _mm_prefetch((const char *)cp + LC_QPF, LC_QPF_HINT);
          if (q4) {
            __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)cp));
            w0[r] = _mm512_permutexvar_ps(u, T[r]);
            w1[r] = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), T[r]);
          } else {
            __m512 q0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)cp)));
            __m512 q1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(cp + 16))));
            w0[r] = _mm512_fmadd_ps(q0, S[r], O[r]);
            w1[r] = _mm512_fmadd_ps(q1, S[r], O[r]);
          }
        }
#pragma GCC unroll 4
        for (int i = 0; i < mr; i++) {
          const float *x = a->xf + (i0 + i) * a->row_len + xo + 32 * ch;
          __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
#pragma GCC unroll 4
          for (int r = 0; r < nr; r++) {
            acc[r][i][0] = _mm512_fmadd_ps(w0[r], x0, acc[r][i][0]);
            acc[r][i][1] = _mm512_fmadd_ps(w1[r], x1, acc[r][i][1]);
          }
        }
      }
      co += lc_qblock_nbytes(w, bi);
      xo += nch * LC_QCHUNK;
    }
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++)
      y[(i0 + i) * ldy + n + r * rs] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][i][0], acc[r][i][1]));
}

INLINE void q4_acc_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t rs, size_t i0,
                        const int mr, float *y, size_t ldy) {
  acc_tile(w, a, n, nr, rs, i0, mr, y, ldy, 1);
}

INLINE void q8_acc_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t rs, size_t i0,
                        const int mr, float *y, size_t ldy) {
  acc_tile(w, a, n, nr, rs, i0, mr, y, ldy, 0);
}

/* Same, when every block is full and a multiple of 32 long: no padding, one flat loop; two blocks
 * per step so a single row still has four independent FMA chains. */
INLINE void q4_accf_block(const uint8_t *c, const float *s, const float *o, const lc_qact *a, size_t b, size_t rb,
                          size_t rnb, size_t L, const int nr, size_t i0, const int mr, __m512 acc[4][8][2]) {
  const __m512 qv = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  __m512 T[4];
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
    T[r] = o ? _mm512_fmadd_ps(qv, _mm512_set1_ps(s[r * rnb + b]), _mm512_set1_ps(o[r * rnb + b]))
             : _mm512_mul_ps(qv, _mm512_set1_ps(s[r * rnb + b]));
  for (size_t e = b * L; e < (b + 1) * L; e += 32) {
    __m512 w0[4], w1[4];
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) {
      const uint8_t *cp = c + r * rb + e / 2;
      if (LC_QPF) _mm_prefetch((const char *)cp + LC_QPF, LC_QPF_HINT);
      __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)cp));
      w0[r] = _mm512_permutexvar_ps(u, T[r]);
      w1[r] = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), T[r]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++) {
      const float *x = a->xf + (i0 + i) * a->row_len + e;
      __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++) { /* several rows: enough chains with one accumulator each */
        acc[r][i][0] = _mm512_fmadd_ps(w0[r], x0, acc[r][i][0]);
        acc[r][i][mr == 1] = _mm512_fmadd_ps(w1[r], x1, acc[r][i][mr == 1]);
      }
    }
  }
}

INLINE void q4_accf_tile(const lc_qmatrix *w, const lc_qact *a, size_t n, const int nr, size_t rs, size_t i0,
                         const int mr, float *y, size_t ldy) {
  const size_t rb = w->row_bytes * rs, nb = w->nb, rnb = nb * rs, L = w->block;
  const uint8_t *c = w->codes + n * w->row_bytes;
  const float *s = w->scales + n * nb;
  const float *o = w->offsets ? w->offsets + n * nb : NULL;
  __m512 acc[4][8][2], acc2[4][8][2];
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++) acc[r][i][0] = acc[r][i][1] = acc2[r][i][0] = acc2[r][i][1] = _mm512_setzero_ps();
  size_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    q4_accf_block(c, s, o, a, b, rb, rnb, L, nr, i0, mr, acc);
    q4_accf_block(c, s, o, a, b + 1, rb, rnb, L, nr, i0, mr, mr == 1 ? acc2 : acc);
  }
  if (b < nb) q4_accf_block(c, s, o, a, b, rb, rnb, L, nr, i0, mr, acc);
#pragma GCC unroll 4
  for (int r = 0; r < nr; r++)
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
      y[(i0 + i) * ldy + n + r * rs] = _mm512_reduce_add_ps(
          _mm512_add_ps(_mm512_add_ps(acc[r][i][0], acc[r][i][1]), _mm512_add_ps(acc2[r][i][0], acc2[r][i][1])));
}

/* Activation rows in tiles of 4 (remainder 1..3) times NR weight rows rs rows apart. */
#define TILE_M4(tile, NR, n, rs, i0)                                                                      \
  do {                                                                                                    \
    size_t i = i0;                                                                                        \
    for (; i + 4 <= a->m; i += 4) tile(w, a, n, NR, rs, i, 4, y, ldy);                                    \
    switch (a->m - i) {                                                                                   \
      case 3: tile(w, a, n, NR, rs, i, 3, y, ldy); break;                                                 \
      case 2: tile(w, a, n, NR, rs, i, 2, y, ldy); break;                                                 \
      case 1: tile(w, a, n, NR, rs, i, 1, y, ldy); break;                                                 \
      default: break;                                                                                     \
    }                                                                                                     \
  } while (0)

/* Tiles of 8 first: the decode of a weight chunk is shared by twice as many FMAs. */
#define TILE_M8(tile, NR, n, rs, i0)                                                                      \
  do {                                                                                                    \
    size_t i8 = i0;                                                                                       \
    for (; i8 + 8 <= a->m; i8 += 8) tile(w, a, n, NR, rs, i8, 8, y, ldy);                                 \
    TILE_M4(tile, NR, n, rs, i8);                                                                         \
  } while (0)

/* The NR weight rows of a tile share every activation load. They are taken far apart (the range
 * cut in NR parts, tile j = rows j, j + D, j + 2D, ...): adjacent rows, interleaved, halved the
 * DRAM bandwidth (12-13 vs 23 GB/s, K=4096 N=11008 1 thread), apparently confusing the hardware
 * prefetcher with two streams in one page; rows D apart keep one stream per page. */
#define DEFINE_TILED(name, tile, NR1, NR, TILE_M)                                                         \
  static void name(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y, size_t ldy) {   \
    const size_t nr = a->m == 1 ? NR1 : NR, d = (n1 - n0) / nr;                                           \
    if (nr > 1 && d > 0)                                                                                  \
      for (size_t j = 0; j < d; j++) {                                                                    \
        if (a->m == 1)                                                                                    \
          tile(w, a, n0 + j, NR1, d, 0, 1, y, ldy);                                                       \
        else                                                                                              \
          TILE_M(tile, NR, n0 + j, d, 0);                                                                 \
      }                                                                                                   \
    for (size_t n = n0 + (nr > 1 ? d * nr : 0); n < n1; n++) TILE_M(tile, 1, n, 1, 0);                    \
  }

DEFINE_TILED(q4_split_tiles, q4_split_tile, LC_QNR1, LC_QNRM, TILE_M4)
DEFINE_TILED(q4_acc_tiles, q4_acc_tile, LC_QNR1, 2, TILE_M4)
DEFINE_TILED(q4_accf_tiles, q4_accf_tile, LC_QNR1_ACC, 2, TILE_M8)
DEFINE_TILED(q8_acc_tiles, q8_acc_tile, LC_QNR1_ACC, 2, TILE_M4)

LC_QDEFINE_ROWS(static, q4_int8_rows, q4_int8_row)
LC_QDEFINE_ROWS(static, q8_int8_rows, q8_int8_row)

void lc_qgemv_q4_int8_avx512vnni(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  if (a->xt)
    lc_qgemv_q4_bcast_avx512(w, a, n0, n1, y, ldy);
  else if (lc_q4_split128(w))
    q4_split_tiles(w, a, n0, n1, y, ldy);
  else
    q4_int8_rows(w, a, n0, n1, y, ldy);
}

void lc_qgemv_q8_int8_avx512vnni(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  q8_int8_rows(w, a, n0, n1, y, ldy);
}

void lc_qgemv_q4_accurate_avx512(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  if (w->tail == w->block && w->block % 32 == 0)
    q4_accf_tiles(w, a, n0, n1, y, ldy);
  else
    q4_acc_tiles(w, a, n0, n1, y, ldy);
}

void lc_qgemv_q8_accurate_avx512(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  q8_acc_tiles(w, a, n0, n1, y, ldy);
}

/* ---------------------------------------------------------------- dequantization */

/* The same values as lc_dequant_q4_scalar (fmaf(q - 8, s, o)) through the block's table, 32 a
 * step; codes hold element 2i in the low nibble of byte i, so the two nibble vectors interleave. */
void lc_dequant_q4_avx512(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  size_t e = j0, end = j0 + len;
  for (; e < end && (e & 1); e++) *dst++ = fmaf((float)(((c[e >> 1] >> 4) & 15) - 8), s, o);
  const __m512 qv = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const __m512 T = _mm512_fmadd_ps(qv, _mm512_set1_ps(s), _mm512_set1_ps(o));
  const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (; e + 32 <= end; e += 32, dst += 32) {
    __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + e / 2)));
    __m512 lo = _mm512_permutexvar_ps(u, T), hi = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), T);
    _mm512_storeu_ps(dst, _mm512_permutex2var_ps(lo, ilo, hi));
    _mm512_storeu_ps(dst + 16, _mm512_permutex2var_ps(lo, ihi, hi));
  }
  if (e + 16 <= end) {
    __m512i u = _mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(c + e / 2)));
    __m512 lo = _mm512_permutexvar_ps(u, T), hi = _mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), T);
    _mm512_storeu_ps(dst, _mm512_permutex2var_ps(lo, ilo, hi));
    e += 16, dst += 16;
  }
  for (; e < end; e++) *dst++ = fmaf((float)(((c[e >> 1] >> ((e & 1) * 4)) & 15) - 8), s, o);
}

void lc_dequant_q8_avx512(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  const int8_t *q = (const int8_t *)c + j0;
  const __m512 S = _mm512_set1_ps(s), O = _mm512_set1_ps(o);
  size_t e = 0;
  for (; e + 16 <= len; e += 16)
    _mm512_storeu_ps(dst + e,
                     _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(q + e)))), S, O));
  for (; e < len; e++) dst[e] = fmaf((float)q[e], s, o);
}
