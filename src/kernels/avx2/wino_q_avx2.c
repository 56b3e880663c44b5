/* Winograd weight transform U = G g G^T of Q8/Q4 weights with AVX2, the scheme of the AVX-512
 * version (kernels/wino.h; same fp32 operations as wino_weights and wino4_weights, same bits): the codes of 16
 * output x 16 input channels of a tap are transposed as bytes, so two vectors dequantize 16
 * output channels of one input channel, which are then transformed in registers. Q8/Q4 convs
 * build U per weight panel on every chunk; through lc_dequant_rows and the strided gathers of
 * wino_weights that was 53% of a 512-channel 7x7 Q4 conv (perf, Zen 3). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/wino.h"
#include "quant/qkernels.h"

LC_WINO_QTILE(tile8, __m256, _mm256)
LC_WINO4_QTILE(tile8_f4, __m256, _mm256)

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
                           size_t xs, int f4) {
  int q4 = m->format == LC_WEIGHTS_Q4;
  size_t cig = m->k / 9;
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
        /* Channels ic0 + j0.. of tap t (a 16-group never crosses a block); rows >= noc: code, scale
         * and offset 0 give +0. */
        const uint8_t *p[16];
        _Alignas(32) float sv[16], ov[16];
        int fresh = lc_qgroup_at(m, t * cig + ic0 + j0, row0 + i0, rows, p, &sb_at[t], sv, ov);
        codes_t16(p, q4, cb[t]);
        if (fresh)
          for (int h = 0; h < 2; h++) s[t][h] = _mm256_load_ps(sv + 8 * h), o[t][h] = _mm256_load_ps(ov + 8 * h);
      }
      for (size_t j = 0; j < jn; j++)
        for (int h = 0; h < 2; h++) {
          __m256 x[9];
          for (int t = 0; t < 9; t++) x[t] = deq8(cb[t][j] + 8 * h, s[t][h], o[t][h]);
          if (f4) tile8_f4(x, u + (j0 + j) * nr + i0 + 8 * (size_t)h, xs);
          else tile8(x, u + (j0 + j) * nr + i0 + 8 * (size_t)h, xs);
        }
    }
  }
}
