/* The k = s = 2 ConvTranspose row (kernels/vmath.h): J (output channel, kernel row) pairs x both
 * kernel columns x 16 input columns in 4J accumulators, one FMA chain per accumulator in order of
 * the input channel; the two columns' sums are interleaved into 32 consecutive outputs per pair.
 * 24->24 on 160x160 (PP-OCRv4 det): the output is written once, no column matrix. */
#include <string.h>

#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

/* y[0..15] = (a0 b0 a1 b1 ... a7 b7) */
LC_AI void store_pairs(float *y, __m256 a, __m256 b) {
  __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
  _mm256_storeu_ps(y, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(y + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

/* J pairs, input columns [i, i + 16) (nv = 2) or [i, i + 8) (nv = 1, the last block masked to m
 * lanes when partial). */
LC_AI void block(float *const *y, const float *x, size_t xs, size_t C, const float *wp, const float *b, size_t J,
                 size_t i, int nv, size_t m) {
  __m256 acc[3][2][2];
  for (size_t j = 0; j < J; j++) {
    __m256 bj = _mm256_set1_ps(b[j]);
    acc[j][0][0] = acc[j][0][1] = acc[j][1][0] = acc[j][1][1] = bj;
  }
  __m256i mask = lc_avx2_mask(m);
  for (size_t c = 0; c < C; c++) {
    const float *xc = x + c * xs + i;
    __m256 x0 = m < 8 ? _mm256_maskload_ps(xc, mask) : _mm256_loadu_ps(xc);
    __m256 x1 = nv == 2 ? _mm256_loadu_ps(xc + 8) : x0;
    for (size_t j = 0; j < J; j++) {
      const float *w = wp + (j * C + c) * 2;
      __m256 w0 = _mm256_broadcast_ss(w), w1 = _mm256_broadcast_ss(w + 1);
      acc[j][0][0] = _mm256_fmadd_ps(w0, x0, acc[j][0][0]);
      acc[j][1][0] = _mm256_fmadd_ps(w1, x0, acc[j][1][0]);
      if (nv == 2) {
        acc[j][0][1] = _mm256_fmadd_ps(w0, x1, acc[j][0][1]);
        acc[j][1][1] = _mm256_fmadd_ps(w1, x1, acc[j][1][1]);
      }
    }
  }
  for (size_t j = 0; j < J; j++) {
    float *yj = y[j] + 2 * i;
    if (m < 8) { /* partial: through a buffer, 2m outputs */
      float t[16];
      store_pairs(t, acc[j][0][0], acc[j][1][0]);
      memcpy(yj, t, 2 * m * sizeof(float));
      continue;
    }
    store_pairs(yj, acc[j][0][0], acc[j][1][0]);
    if (nv == 2) store_pairs(yj + 16, acc[j][0][1], acc[j][1][1]);
  }
}

LC_AI void pairs_row(float *const *y, const float *x, size_t xs, size_t C, size_t w, const float *wp, const float *b,
                     size_t J) {
  size_t i = 0;
  for (; i + 16 <= w; i += 16) block(y, x, xs, C, wp, b, J, i, 2, 8);
  for (; i < w; i += 8) block(y, x, xs, C, wp, b, J, i, 1, w - i < 8 ? w - i : 8);
}

void lc_f32_convt2_row_avx2(float *const *y, const float *x, size_t xs, size_t C, size_t w, const float *wp,
                            const float *b, size_t nj) {
  size_t j = 0;
  for (; j + 3 <= nj; j += 3) pairs_row(y + j, x, xs, C, w, wp + j * C * 2, b + j, 3);
  if (nj - j == 2) pairs_row(y + j, x, xs, C, w, wp + j * C * 2, b + j, 2);
  if (nj - j == 1) pairs_row(y + j, x, xs, C, w, wp + j * C * 2, b + j, 1);
}
