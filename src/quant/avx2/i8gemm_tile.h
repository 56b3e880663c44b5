/* The 4x16 int8-activation GEMM tile (quant/i8gemm.h) of the AVX2 file, on 256-bit registers:
 * the includer defines I8_DOT_Q4(s, wb, x) and I8_DOT_Q8(d, wb, aw, x) (add the 4-wide dot products
 * of broadcast weights wb (aw = |wb|) and activations x to s / d), I8_Q4_GROUP (quads a 16-bit Q4
 * sum may take before I8_Q4_WIDEN), I8_Q4_FULL and the names. (The 512-bit VNNI table has its own
 * 8x32 tile, quant/avx512/i8gemm_8x32_avx512vnni.c.) */
#include <immintrin.h>
#include <string.h>

#include "quant/i8gemm.h"

#define I8_INLINE static inline __attribute__((always_inline))

I8_INLINE __m256i i8_bcast(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

/* One block's int32 sums d[r][h] into the float tile f (one FMA per block), the offset fold too. */
I8_INLINE void i8_block_fold(__m256i d[4][2], const lc_i8act *a, size_t b, const float *const ws[4],
                             const float *const wo[4], __m256 f[4][2]) {
  __m256 xs[2] = {_mm256_loadu_ps(a->xs + b * 16), _mm256_loadu_ps(a->xs + b * 16 + 8)};
  #pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    __m256 s = _mm256_set1_ps(ws[r][b]);
    #pragma GCC unroll 2
    for (int h = 0; h < 2; h++) f[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d[r][h]), _mm256_mul_ps(s, xs[h]), f[r][h]);
  }
  if (wo[0]) {
    __m256 xm[2] = {_mm256_loadu_ps(a->xsum + b * 16), _mm256_loadu_ps(a->xsum + b * 16 + 8)};
    #pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
      __m256 o = _mm256_set1_ps(wo[r][b]);
      #pragma GCC unroll 2
      for (int h = 0; h < 2; h++) f[r][h] = _mm256_fmadd_ps(o, xm[h], f[r][h]);
    }
  }
}

/* Sums of quads [0, qn) of a Q4 group into s (qn a constant where it is full: the loop unrolls). */
I8_INLINE void i8_q4_group(const uint8_t *const wr[4], size_t off, const int8_t *xq, size_t qn, __m256i s[4][2]) {
  #pragma GCC unroll 4
  for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = _mm256_setzero_si256();
  #pragma GCC unroll 8
  for (size_t q = 0; q < qn; q++) {
    __m256i x0 = _mm256_loadu_si256((const __m256i *)(xq + q * 64));
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(xq + q * 64 + 32));
    #pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
      __m256i wb = i8_bcast(wr[r] + off + 4 * q);
      I8_DOT_Q4(s[r][0], wb, x0);
      I8_DOT_Q4(s[r][1], wb, x1);
    }
  }
}

/* Rows past mr read row 0 and pixels past np are the panel's zero padding: both are computed and
 * dropped, so the loops have no edges. */
I8_INLINE void i8_tile(int q4, const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw,
                       const float *ws, const float *wo, size_t lds, const lc_i8act *a, float *c, size_t ldc,
                       int acc) {
  const uint8_t *wr[4];
  const float *wsr[4], *wor[4];
  for (size_t r = 0; r < 4; r++) {
    size_t rr = r < mr ? r : 0;
    wr[r] = w + rr * ldw, wsr[r] = ws + rr * lds, wor[r] = wo ? wo + rr * lds : NULL;
  }
  /* Edge tiles go through ct; full ones load and store C in place. */
  __attribute__((aligned(32))) float ct[4][16];
  int full = mr == 4 && np == 16;
  float *cb = full ? c : &ct[0][0];
  size_t ldb = full ? ldc : 16;
  if (!full)
    for (size_t r = 0; r < 4; r++)
      for (size_t p = 0; p < 16; p++) ct[r][p] = acc && r < mr && p < np ? c[r * ldc + p] : 0.0f;
  __m256 f[4][2];
  #pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    int z = full && !acc;
    f[r][0] = z ? _mm256_setzero_ps() : _mm256_loadu_ps(cb + r * ldb);
    f[r][1] = z ? _mm256_setzero_ps() : _mm256_loadu_ps(cb + r * ldb + 8);
  }
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t *xq = a->xq;
  size_t off = 0;
  for (size_t b = 0; b < bl->nb; b++) {
    size_t nq = bl->nq[b];
    __m256i d[4][2], d0 = _mm256_setzero_si256(), d1 = d0;
    if (q4) { /* codes are q + 8: start at -8 * sum(xq), exactly */
      d0 = _mm256_sub_epi32(d0, _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(a->isum + b * 16)), 3));
      d1 = _mm256_sub_epi32(d1, _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(a->isum + b * 16 + 8)), 3));
    }
    #pragma GCC unroll 4
    for (int r = 0; r < 4; r++) d[r][0] = d0, d[r][1] = d1;
    if (q4) {
      size_t grp = I8_Q4_GROUP;
      for (size_t q0 = 0; q0 < nq; q0 += grp) {
        size_t qn = q0 + grp < nq ? grp : nq - q0;
        __m256i s[4][2];
        if (qn == I8_Q4_FULL)
          i8_q4_group(wr, off + 4 * q0, xq + 64 * q0, I8_Q4_FULL, s);
        else
          i8_q4_group(wr, off + 4 * q0, xq + 64 * q0, qn, s);
        #pragma GCC unroll 4
        for (int r = 0; r < 4; r++)
          #pragma GCC unroll 2
          for (int h = 0; h < 2; h++) d[r][h] = _mm256_add_epi32(d[r][h], I8_Q4_WIDEN(s[r][h]));
      }
    } else {
      for (size_t q = 0; q < nq; q++) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(xq + q * 64));
        __m256i x1 = _mm256_loadu_si256((const __m256i *)(xq + q * 64 + 32));
        #pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
          __m256i wb = i8_bcast(wr[r] + off + 4 * q), aw = _mm256_abs_epi8(wb);
          I8_DOT_Q8(d[r][0], wb, aw, x0);
          I8_DOT_Q8(d[r][1], wb, aw, x1);
        }
      }
    }
    i8_block_fold(d, a, b, wsr, wor, f);
    off += 4 * nq;
    xq += 64 * nq;
  }
  #pragma GCC unroll 4
  for (int r = 0; r < 4; r++) _mm256_storeu_ps(cb + r * ldb, f[r][0]), _mm256_storeu_ps(cb + r * ldb + 8, f[r][1]);
  if (!full)
    for (size_t r = 0; r < mr; r++)
      for (size_t p = 0; p < np; p++) c[r * ldc + p] = ct[r][p];
}

void I8_NAME_Q4(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw, const float *ws,
                const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c, size_t ldc, int acc) {
  (void)apan; /* 16-pixel tiles */
  i8_tile(1, bl, mr, np, w, ldw, ws, wo, lds, a, c, ldc, acc);
}

void I8_NAME_Q8(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw, const float *ws,
                const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c, size_t ldc, int acc) {
  (void)apan; /* 16-pixel tiles */
  i8_tile(0, bl, mr, np, w, ldw, ws, wo, lds, a, c, ldc, acc);
}
