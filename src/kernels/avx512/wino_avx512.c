/* Winograd weight transform U = G g G^T of Q8/Q4 weights with AVX-512 (lc_wino_kernels.weights and
 * weights4 in kernels/wino.h, same fp32 operations, same bits): the codes of 16 output x 16 input channels of
 * a tap are transposed as bytes, so a vector dequantizes 16 output channels, which are then
 * transformed. Q8/Q4 convs run it per weight panel on every chunk: 2.3 ns per (oc, ic) pair with
 * a float transpose after dequantizing, 1.5 ns this way (Zen 4, 512x512 Q4, blocks of 32); what is
 * left is the transform itself (~60 zmm ops and 16 stores per 16 pairs). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/wino.h"
#include "quant/qkernels.h"

LC_WINO_QTILE(tile16, __m512, _mm512)
LC_WINO4_QTILE(tile16_f4, __m512, _mm512)

/* The four 128-bit lanes a, b, c, d (immediates: -O0 builds need them literal). */
static inline __m512i lanes4(__m128i a, __m128i b, __m128i c, __m128i d) {
  __m512i v = _mm512_castsi128_si512(a);
  v = _mm512_inserti32x4(v, b, 1);
  v = _mm512_inserti32x4(v, c, 2);
  return _mm512_inserti32x4(v, d, 3);
}

/* Codes of 16 rows x 16 channels, transposed in the byte domain: out[j][i] = code of row i (NULL:
 * none), channel j < jn. p[i] points at the row's first code byte (e / 2 for Q4). Four rows share
 * a vector (row 4l + r in 128-bit lane l of z[r]); two byte/word unpack levels leave, in lane l,
 * dword d of column 4h + d = rows 4l..4l+3, and a dword permute gathers the lanes. 12 shuffles per
 * 256 codes where the float transpose took 64. */
static inline void codes_t16(const uint8_t *const p[16], size_t jn, int q4, int8_t out[16][16]) {
  __m128i r[16];
  __mmask16 lm = (__mmask16)((1u << (q4 ? (jn + 1) / 2 : jn)) - 1u);
  for (int i = 0; i < 16; i++) r[i] = p[i] ? _mm_maskz_loadu_epi8(lm, p[i]) : _mm_setzero_si128();
  __m512i z[4];
  if (q4) { /* x: lanes (row 4l, row 4l+1) as two qwords of nibbles; y: rows 4l+2, 4l+3 */
    __m128i a[4], b[4];
    for (int l = 0; l < 4; l++) a[l] = _mm_unpacklo_epi64(r[4 * l], r[4 * l + 1]);
    for (int l = 0; l < 4; l++) b[l] = _mm_unpacklo_epi64(r[4 * l + 2], r[4 * l + 3]);
    __m512i x = lanes4(a[0], a[1], a[2], a[3]), y = lanes4(b[0], b[1], b[2], b[3]);
    const __m512i m4 = _mm512_set1_epi8(0x0F), e8 = _mm512_set1_epi8(8);
    __m512i xl = _mm512_and_si512(x, m4), xh = _mm512_and_si512(_mm512_srli_epi16(x, 4), m4);
    __m512i yl = _mm512_and_si512(y, m4), yh = _mm512_and_si512(_mm512_srli_epi16(y, 4), m4);
    z[0] = _mm512_sub_epi8(_mm512_unpacklo_epi8(xl, xh), e8);
    z[1] = _mm512_sub_epi8(_mm512_unpackhi_epi8(xl, xh), e8);
    z[2] = _mm512_sub_epi8(_mm512_unpacklo_epi8(yl, yh), e8);
    z[3] = _mm512_sub_epi8(_mm512_unpackhi_epi8(yl, yh), e8);
  } else {
    for (int k = 0; k < 4; k++) z[k] = lanes4(r[k], r[4 + k], r[8 + k], r[12 + k]);
  }
  __m512i p0 = _mm512_unpacklo_epi8(z[0], z[1]), p1 = _mm512_unpackhi_epi8(z[0], z[1]);
  __m512i q0 = _mm512_unpacklo_epi8(z[2], z[3]), q1 = _mm512_unpackhi_epi8(z[2], z[3]);
  __m512i w[4] = {_mm512_unpacklo_epi16(p0, q0), _mm512_unpackhi_epi16(p0, q0), _mm512_unpacklo_epi16(p1, q1),
                  _mm512_unpackhi_epi16(p1, q1)};
  const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  for (int h = 0; h < 4; h++) _mm512_storeu_si512((void *)out[4 * h], _mm512_permutexvar_epi32(idx, w[h]));
}

void lc_wino_qweights_avx512(const lc_qmatrix *m, size_t row0, size_t noc, size_t nr, size_t ic0, size_t n, float *u,
                             size_t xs, int f4) {
  int q4 = m->format == LC_WEIGHTS_Q4;
  size_t cig = m->k / 9;
  for (size_t i0 = 0; i0 < nr; i0 += 16) {
    size_t rows = noc > i0 ? noc - i0 : 0;
    if (rows > 16) rows = 16;
    __mmask16 om = (__mmask16)((1u << rows) - 1u);
    __m512 s[9], o[9];
    size_t sb_at[9]; /* block whose scales s[t] holds (a block spans several j0 steps) */
    for (size_t t = 0; t < 9; t++) sb_at[t] = SIZE_MAX;
    for (size_t j0 = 0; j0 < n; j0 += 16) {
      size_t jn = n - j0 < 16 ? n - j0 : 16;
      _Alignas(64) int8_t cb[9][16][16];
      for (size_t t = 0; t < 9; t++) {
        /* Channels ic0 + j0.. of tap t (a 16-group never crosses a block). */
        const uint8_t *p[16];
        _Alignas(64) float sv[16], ov[16];
        int fresh = lc_qgroup_at(m, t * cig + ic0 + j0, row0 + i0, rows, p, &sb_at[t], sv, ov);
        codes_t16(p, jn, q4, cb[t]);
        if (fresh) {
          s[t] = _mm512_load_ps(sv);
          o[t] = _mm512_load_ps(ov);
        }
      }
      for (size_t j = 0; j < jn; j++) {
        __m512 x[9];
        for (int t = 0; t < 9; t++) { /* w = fma(q, scale, offset) as lc_dequant_rows; rows >= noc are 0 */
          __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_load_si128((const __m128i *)cb[t][j])));
          x[t] = _mm512_maskz_fmadd_ps(om, q, s[t], o[t]);
        }
        if (f4) tile16_f4(x, u + (j0 + j) * nr + i0, xs);
        else tile16(x, u + (j0 + j) * nr + i0, xs);
      }
    }
  }
}
