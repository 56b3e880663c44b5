/* Winograd weight transform U = G g G^T of Q8/Q4 weights with AVX2, the scheme of the AVX-512
 * version (kernels/wino.h; same fp32 operations as wino_weights, same bits): the codes of 16
 * output x 16 input channels of a tap are transposed as bytes, so two vectors dequantize 16
 * output channels of one input channel, which are then transformed in registers. Q8/Q4 convs
 * build U per weight panel on every chunk; through lc_dequant_rows and the strided gathers of
 * wino_weights that was 53% of a 512-channel 7x7 Q4 conv (perf, Zen 3). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/wino.h"
#include "quant/quant.h"

/* 8 output channels of one input channel: x[tap] -> 16 rows of u (at o + xi * xs). */
static inline void tile8(const __m256 x[9], float *o, size_t xs) {
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f), quarter = _mm256_set1_ps(0.25f);
  __m256 t[4][3];
  for (int c = 0; c < 3; c++) {
    __m256 a = _mm256_add_ps(x[c], x[6 + c]);
    t[0][c] = x[c];
    t[1][c] = _mm256_add_ps(a, x[3 + c]);
    t[2][c] = _mm256_sub_ps(a, x[3 + c]);
    t[3][c] = x[6 + c];
  }
  for (int r = 0; r < 4; r++) {
    __m256 b = _mm256_add_ps(t[r][0], t[r][2]), s0 = r == 0 || r == 3 ? one : half, s1 = r == 0 || r == 3 ? half : quarter;
    float *p = o + (size_t)(4 * r) * xs;
    _mm256_storeu_ps(p, _mm256_mul_ps(s0, t[r][0]));
    _mm256_storeu_ps(p + xs, _mm256_mul_ps(s1, _mm256_add_ps(b, t[r][1])));
    _mm256_storeu_ps(p + 2 * xs, _mm256_mul_ps(s1, _mm256_sub_ps(b, t[r][1])));
    _mm256_storeu_ps(p + 3 * xs, _mm256_mul_ps(s0, t[r][2]));
  }
}

/* Codes of 16 rows x 16 channels, transposed: out[j][i] = code of row i (NULL: 0), channel j.
 * p[i] points at the row's first code byte (e / 2 for Q4); the matrix's slack covers the 16-byte
 * loads (channels past the caller's count are read, never used). Four rounds of pairing vector i
 * with i + 8 (unpack lo -> 2i, hi -> 2i + 1) transpose 16 x 16 bytes: 64 shuffles. */
static inline void codes_t16(const uint8_t *const p[16], int q4, int8_t out[16][16]) {
  __m128i r[16], n[16];
  const __m128i m4 = _mm_set1_epi8(0x0F), e8 = _mm_set1_epi8(8);
  for (int i = 0; i < 16; i++) {
    if (!p[i]) {
      r[i] = _mm_setzero_si128();
    } else if (q4) { /* low nibble: even channel, high: odd; stored + 8 */
      __m128i v = _mm_loadl_epi64((const __m128i *)p[i]);
      __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
      r[i] = _mm_sub_epi8(_mm_unpacklo_epi8(lo, hi), e8);
    } else {
      r[i] = _mm_loadu_si128((const __m128i *)p[i]);
    }
  }
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 8; i++) {
      n[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      n[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; i++) r[i] = n[i];
  }
  for (int j = 0; j < 16; j++) _mm_store_si128((__m128i *)out[j], r[j]);
}

static inline __m256 deq8(const int8_t *q, __m256 s, __m256 o) { /* w = fma(q, scale, offset) */
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)q))), s, o);
}

void lc_wino_qweights_avx2(const lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n, float *u,
                           size_t xs) {
  int q4 = m->format == LC_WEIGHTS_Q4;
  size_t cig = m->k / 9, tap_bytes = (m->bpt - 1) * m->block_bytes + m->tail_bytes;
  for (size_t i0 = 0; i0 < nr; i0 += 16) {
    size_t rows = noc > i0 ? noc - i0 : 0;
    if (rows > 16) rows = 16;
    __m256 s[9][2], o[9][2];
    size_t sb_at[9]; /* block whose scales s[t] holds (a block spans several j0 steps) */
    for (size_t t = 0; t < 9; t++) sb_at[t] = SIZE_MAX;
    for (size_t j0 = 0; j0 < n; j0 += 16) {
      size_t jn = n - j0 < 16 ? n - j0 : 16;
      _Alignas(16) int8_t cb[9][16][16];
      for (size_t t = 0; t < 9; t++) {
        /* Where channels ic0 + j0.. of tap t lie: matrix tap tt, block bi, element e of the block. */
        size_t kk = t * cig + ic0 + j0, tt = kk / m->kc, c = kk % m->kc, bi = c / m->block, e = c % m->block;
        size_t off = tt * tap_bytes + bi * m->block_bytes + (q4 ? e / 2 : e), b = tt * m->bpt + bi;
        const uint8_t *p[16];
        for (size_t k = 0; k < 16; k++) p[k] = k < rows ? m->codes + (row0 + i0 + k) * m->row_bytes + off : NULL;
        codes_t16(p, q4, cb[t]);
        if (sb_at[t] == b) continue;
        sb_at[t] = b;
        _Alignas(32) float sv[16] = {0}, ov[16] = {0}; /* rows >= noc: code, scale and offset 0 give +0 */
        for (size_t k = 0; k < rows; k++) sv[k] = m->scales[(row0 + i0 + k) * m->nb + b];
        for (size_t k = 0; m->offsets && k < rows; k++) ov[k] = m->offsets[(row0 + i0 + k) * m->nb + b];
        for (int h = 0; h < 2; h++) s[t][h] = _mm256_load_ps(sv + 8 * h), o[t][h] = _mm256_load_ps(ov + 8 * h);
      }
      for (size_t j = 0; j < jn; j++)
        for (int h = 0; h < 2; h++) {
          __m256 x[9];
          for (int t = 0; t < 9; t++) x[t] = deq8(cb[t][j] + 8 * h, s[t][h], o[t][h]);
          tile8(x, u + (j0 + j) * nr + i0 + 8 * (size_t)h, xs);
        }
    }
  }
}
