/* Strided gather for im2col packing; stride 2 by a two-source permute (see the AVX2 version). */
#include <immintrin.h>

#include "kernels/avx512/avx512_kernels.h"

void lc_f32_gather_avx512(float *dst, const float *src, size_t n, size_t stride) {
  size_t j = 0;
  if (stride == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    /* 32 loaded floats give 16 outputs; the last block loads 31 so nothing past src[(n-1)*2] is read. */
    for (; j + 16 <= n; j += 16) {
      __m512 a = _mm512_loadu_ps(src + 2 * j);
      __m512 b = j + 16 < n ? _mm512_loadu_ps(src + 2 * j + 16) : _mm512_maskz_loadu_ps(0x7FFF, src + 2 * j + 16);
      _mm512_storeu_ps(dst + j, _mm512_permutex2var_ps(a, even, b));
    }
  }
  for (; j < n; j++) dst[j] = src[j * stride];
}
