/* Winograd weight transform U = G g G^T of Q8/Q4 weights with AVX-512 (lc_wino_kernels.weights in
 * kernels/wino.h, same fp32 operations, same bits): 16 channels of a tap dequantized per vector,
 * transposed 16 x 16 in registers so a vector holds 16 output channels, then transformed.
 * Q8/Q4 convs run it per weight panel on every chunk, so it stays a few cycles per weight. */
#include <immintrin.h>

#include "kernels/wino.h"
#include "quant/quant.h"

/* r[k][j] -> r[j][k]. Rows 4G..4G+3 first become, per column c of each 128-bit lane, s[G][c];
 * a 4 x 4 transpose of 128-bit lanes then gathers each column. */
static inline void tr16(__m512 r[16]) {
  __m512 s[4][4];
  for (int G = 0; G < 4; G++) {
    __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(r[4 * G], r[4 * G + 1]));
    __m512d t1 = _mm512_castps_pd(_mm512_unpackhi_ps(r[4 * G], r[4 * G + 1]));
    __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(r[4 * G + 2], r[4 * G + 3]));
    __m512d t3 = _mm512_castps_pd(_mm512_unpackhi_ps(r[4 * G + 2], r[4 * G + 3]));
    s[G][0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    s[G][1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    s[G][2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    s[G][3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int c = 0; c < 4; c++) {
    __m512 u0 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0x44), u1 = _mm512_shuffle_f32x4(s[0][c], s[1][c], 0xEE);
    __m512 u2 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0x44), u3 = _mm512_shuffle_f32x4(s[2][c], s[3][c], 0xEE);
    r[c] = _mm512_shuffle_f32x4(u0, u2, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
    r[8 + c] = _mm512_shuffle_f32x4(u1, u3, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
  }
}

/* 16 output channels of one input channel: x[tap] -> the 16 rows of u (at o + xi * xs). */
static inline void tile16(const __m512 x[9], float *o, size_t xs) {
  const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f), quarter = _mm512_set1_ps(0.25f);
  __m512 t[4][3];
  for (int c = 0; c < 3; c++) {
    __m512 a = _mm512_add_ps(x[c], x[6 + c]);
    t[0][c] = x[c];
    t[1][c] = _mm512_add_ps(a, x[3 + c]);
    t[2][c] = _mm512_sub_ps(a, x[3 + c]);
    t[3][c] = x[6 + c];
  }
  for (int r = 0; r < 4; r++) {
    __m512 b = _mm512_add_ps(t[r][0], t[r][2]), s0 = r == 0 || r == 3 ? one : half, s1 = r == 0 || r == 3 ? half : quarter;
    float *p = o + (size_t)(4 * r) * xs;
    _mm512_storeu_ps(p, _mm512_mul_ps(s0, t[r][0]));
    _mm512_storeu_ps(p + xs, _mm512_mul_ps(s1, _mm512_add_ps(b, t[r][1])));
    _mm512_storeu_ps(p + 2 * xs, _mm512_mul_ps(s1, _mm512_sub_ps(b, t[r][1])));
    _mm512_storeu_ps(p + 3 * xs, _mm512_mul_ps(s0, t[r][2]));
  }
}

int lc_wino_qweights_avx512_ok(const lc_qmatrix *m) {
  if (m->format != LC_WEIGHTS_Q8 && m->format != LC_WEIGHTS_Q4) return 0;
  size_t cig = m->k / 9;
  return m->scales && m->k % 9 == 0 && (m->bpt == 1 || m->block % 16 == 0) &&
         (m->format == LC_WEIGHTS_Q8 || m->kc == cig || cig % 2 == 0);
}

/* 16 codes from element e of a block (e even for Q4), jn valid, as floats. */
static inline __m512 codes16(const uint8_t *blk, size_t e, size_t jn, int q4) {
  __m128i v;
  if (q4) {
    v = _mm_maskz_loadu_epi8((__mmask16)((1u << ((jn + 1) / 2)) - 1u), blk + e / 2);
    const __m128i m4 = _mm_set1_epi8(0x0F);
    __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
    v = _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), _mm_set1_epi8(8));
  } else {
    v = _mm_maskz_loadu_epi8((__mmask16)((1u << jn) - 1u), blk + e);
  }
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v));
}

void lc_wino_qweights_avx512(const lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n, float *u,
                             size_t xs) {
  int q4 = m->format == LC_WEIGHTS_Q4;
  size_t cig = m->k / 9, tap_bytes = (m->bpt - 1) * m->block_bytes + m->tail_bytes;
  for (size_t i0 = 0; i0 < nr; i0 += 16) {
    size_t rows = noc > i0 ? noc - i0 : 0;
    if (rows > 16) rows = 16;
    for (size_t j0 = 0; j0 < n; j0 += 16) {
      size_t jn = n - j0 < 16 ? n - j0 : 16;
      __mmask16 jm = (__mmask16)((1u << jn) - 1u);
      __m512 g[9][16];
      for (size_t t = 0; t < 9; t++) {
        /* Where channels ic0 + j0.. of tap t lie: matrix tap tt, block bi, element e of the block. */
        size_t kk = t * cig + ic0 + j0, tt = kk / m->kc, c = kk % m->kc, bi = c / m->block, e = c % m->block;
        size_t off = tt * tap_bytes + bi * m->block_bytes, b = tt * m->bpt + bi;
        for (size_t k = 0; k < 16; k++) {
          if (k >= rows) {
            g[t][k] = _mm512_setzero_ps();
            continue;
          }
          size_t row = row0 + i0 + k;
          __m512 s = _mm512_set1_ps(m->scales[row * m->nb + b]);
          __m512 o = m->offsets ? _mm512_set1_ps(m->offsets[row * m->nb + b]) : _mm512_setzero_ps();
          __m512 q = codes16(m->codes + row * m->row_bytes + off, e, jn, q4);
          g[t][k] = _mm512_maskz_fmadd_ps(jm, q, s, o);
        }
        tr16(g[t]);
      }
      for (size_t j = 0; j < jn; j++) {
        __m512 x[9];
        for (int t = 0; t < 9; t++) x[t] = g[t][j];
        tile16(x, u + (j0 + j) * nr + i0, xs);
      }
    }
  }
}
