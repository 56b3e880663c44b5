/* Q4 and Q8 int8-activation GEMM tiles of 8 weight rows x 32 pixels on 512-bit VNNI
 * (quant/i8gemm.h). One zmm holds a quad of 4 k values for 16 pixels, so two activation panels give
 * 32 pixels and 16 int32 accumulators; each quad costs 2 loads, 8 broadcasts and 16 vpdpbusd of
 * unsigned codes (Q4 q + 8, Q8 q + 128) with signed activations, the bias folded out exactly by
 * starting each block's sums at -bias * isum (Q8 needs no sign trick). The 4 x 16 ymm tile did 2 loads, 4 broadcasts
 * and 8 vpdpbusd on half-width registers per quad: a quarter of the MACs per instruction here.
 * Float accumulators would need 16 more registers, so each block's fold reads and writes C (in L1)
 * instead; the fp32 operations per element and their order are the scalar kernel's. */
#include <immintrin.h>
#include <string.h>

#include "quant/i8gemm.h"

#define MR 8
#define INL static inline __attribute__((always_inline))

INL __m512i bcast4(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

/* Quads [0, nq) of one block into d, H 16-pixel halves (nq a constant for full blocks: the loop
 * unrolls). */
INL void quads(int H, const uint8_t *const wr[MR], size_t off, const int8_t *x0, const int8_t *x1, size_t nq,
               __m512i d[MR][2]) {
  #pragma GCC unroll 8
  for (size_t q = 0; q < nq; q++) {
    __m512i a0 = _mm512_loadu_si512(x0 + 64 * q), a1 = H > 1 ? _mm512_loadu_si512(x1 + 64 * q) : a0;
    #pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
      __m512i wb = bcast4(wr[r] + off + 4 * q);
      d[r][0] = _mm512_dpbusd_epi32(d[r][0], wb, a0);
      if (H > 1) d[r][1] = _mm512_dpbusd_epi32(d[r][1], wb, a1);
    }
  }
}

/* shift: log2 of the codes' bias (3: Q4, 7: Q8); H: 16-pixel halves computed (1 where np <= 16). */
INL void tile(int shift, int H, const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw, const float *ws,
              const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c, size_t ldc, int acc) {
  /* Rows past mr read row 0; with np <= 16 the second half reads the first panel again; pixels past
   * np are a panel's zero padding: computed and dropped, so the loops have no edges. */
  const uint8_t *wr[MR];
  const float *wsr[MR], *wor[MR];
  for (size_t r = 0; r < MR; r++) {
    size_t rr = r < mr ? r : 0;
    wr[r] = w + rr * ldw, wsr[r] = ws + rr * lds, wor[r] = wo ? wo + rr * lds : NULL;
  }
  size_t ap = np > LC_I8_NR ? apan : 0;
  const int8_t *x0 = a->xq, *x1 = (const int8_t *)((const char *)a->xq + ap);
  const float *xs[2] = {a->xs, (const float *)((const char *)a->xs + ap)};
  const float *xm[2] = {a->xsum, (const float *)((const char *)a->xsum + ap)};
  const int32_t *is[2] = {a->isum, (const int32_t *)((const char *)a->isum + ap)};
  /* Edge tiles go through ct; full ones fold into C in place. */
  __attribute__((aligned(64))) float ct[MR][2 * LC_I8_NR];
  int full = mr == MR && np == (size_t)H * LC_I8_NR;
  float *cb = full ? c : &ct[0][0];
  size_t ldb = full ? ldc : 2 * LC_I8_NR;
  if (!full)
    for (size_t r = 0; r < MR; r++)
      for (size_t p = 0; p < 2 * LC_I8_NR; p++) ct[r][p] = acc && r < mr && p < np ? c[r * ldc + p] : 0.0f;
  int fresh = full && !acc; /* the first fold starts from zero, not from C */
  size_t off = 0;
  for (size_t b = 0; b < bl->nb; b++) {
    size_t nq = bl->nq[b];
    __m512i d[MR][2];
    __m512i d0 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_loadu_si512(is[0] + b * 16), (unsigned)shift));
    __m512i d1 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_loadu_si512(is[1] + b * 16), (unsigned)shift));
    #pragma GCC unroll 8
    for (int r = 0; r < MR; r++) d[r][0] = d0, d[r][1] = d1;
    if (nq == 8)
      quads(H, wr, off, x0, x1, 8, d);
    else
      quads(H, wr, off, x0, x1, nq, d);
    __m512 s0 = _mm512_loadu_ps(xs[0] + b * 16), s1 = _mm512_loadu_ps(xs[1] + b * 16);
    __m512 m0 = _mm512_setzero_ps(), m1 = m0;
    if (wo) m0 = _mm512_loadu_ps(xm[0] + b * 16), m1 = _mm512_loadu_ps(xm[1] + b * 16);
    #pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
      __m512 sr = _mm512_set1_ps(wsr[r][b]);
      float *cr = cb + r * ldb;
      __m512 f0 = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(cr);
      f0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d[r][0]), _mm512_mul_ps(sr, s0), f0);
      if (wo) f0 = _mm512_fmadd_ps(_mm512_set1_ps(wor[r][b]), m0, f0);
      _mm512_storeu_ps(cr, f0);
      if (H > 1) {
        __m512 f1 = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(cr + 16);
        f1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d[r][1]), _mm512_mul_ps(sr, s1), f1);
        if (wo) f1 = _mm512_fmadd_ps(_mm512_set1_ps(wor[r][b]), m1, f1);
        _mm512_storeu_ps(cr + 16, f1);
      }
    }
    fresh = 0;
    off += 4 * nq;
    x0 += 64 * nq, x1 += 64 * nq;
  }
  if (fresh) /* no blocks: the tile is zero */
    for (size_t r = 0; r < MR; r++) memset(cb + r * ldb, 0, (size_t)H * LC_I8_NR * sizeof(float));
  if (!full)
    for (size_t r = 0; r < mr; r++)
      for (size_t p = 0; p < np; p++) c[r * ldc + p] = ct[r][p];
}

/* The exported tiles: Q4 codes biased by 8 (shift 3), Q8 by 128 (shift 7). */
#define I8_TILE_FN(name, shift)                                                                                 \
  void name(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw, const float *ws,        \
            const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c, size_t ldc, int acc) {      \
    if (np <= LC_I8_NR)                                                                                        \
      tile(shift, 1, bl, mr, np, w, ldw, ws, wo, lds, a, apan, c, ldc, acc);                                   \
    else                                                                                                       \
      tile(shift, 2, bl, mr, np, w, ldw, ws, wo, lds, a, apan, c, ldc, acc);                                   \
  }
I8_TILE_FN(lc_i8gemm_q4_8x32_avx512vnni, 3)
I8_TILE_FN(lc_i8gemm_q8_8x32_avx512vnni, 7)
