/* Nearest upsampling of one row by an integer factor k (kernels/vmath.h): below 8, eight inputs
 * become k vectors by lane permutes; from 8 up, each input is broadcast and stored k / 8 times,
 * the last store overlapping the one before when 8 does not divide k. */
#include <string.h>

#include "kernels/avx2/avx2_common.h"
#include "kernels/avx2/avx2_kernels.h"

void lc_f32_repeat_row_avx2(float *y, const float *x, size_t n, size_t k) {
  if (k == 1) {
    memcpy(y, x, n * sizeof(float));
    return;
  }
  size_t i = 0;
  if (k >= 8) {
    for (; i < n; i++, y += k) {
      __m256 v = _mm256_broadcast_ss(x + i);
      for (size_t j = 0; j + 8 <= k; j += 8) _mm256_storeu_ps(y + j, v);
      if (k & 7) _mm256_storeu_ps(y + k - 8, v);
    }
    return;
  }
  /* idx[t] lane e: (8 t + e) / k, by a running quotient */
  __m256i idx[7];
  int32_t lane[8 * 7];
  for (size_t p = 0, q = 0, r = 0; p < 8 * k; p++) {
    lane[p] = (int32_t)q;
    if (++r == k) r = 0, q++;
  }
  for (size_t t = 0; t < k; t++) idx[t] = _mm256_loadu_si256((const __m256i *)(const void *)(lane + 8 * t));
  for (; i + 8 <= n; i += 8, y += 8 * k) {
    __m256 v = _mm256_loadu_ps(x + i);
    for (size_t t = 0; t < k; t++) _mm256_storeu_ps(y + 8 * t, _mm256_permutevar8x32_ps(v, idx[t]));
  }
  for (; i < n; i++, y += k)
    for (size_t j = 0; j < k; j++) y[j] = x[i];
}
