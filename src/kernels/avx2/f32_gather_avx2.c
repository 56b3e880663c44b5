/* Strided gather for im2col packing; stride 2 (the common strided conv) by shuffles: a plain loop
 * compiles to scalar loads and took 28% of a stride-2 3x3 conv (perf, 64 ch at 112x112). */
#include <immintrin.h>

#include "kernels/avx2/avx2_kernels.h"

void lc_f32_gather_avx2(float *dst, const float *src, size_t n, size_t stride) {
  size_t j = 0;
  if (stride == 2) {
    /* 16 loaded floats give 8 outputs; the last block loads 15 so nothing past src[(n-1)*2] is read. */
    const __m256i first7 = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
    for (; j + 8 <= n; j += 8) {
      __m256 a = _mm256_loadu_ps(src + 2 * j);
      __m256 b = j + 8 < n ? _mm256_loadu_ps(src + 2 * j + 8) : _mm256_maskload_ps(src + 2 * j + 8, first7);
      __m256 e = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
      _mm256_storeu_ps(dst + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
    }
  }
  for (; j < n; j++) dst[j] = src[j * stride];
}
