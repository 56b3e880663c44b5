/* Strided gather for im2col packing; stride 2 by a two-source permute (see the AVX2 version).
 * The tail (n % 16 outputs) runs the same permute on masked loads and a masked store: rows of
 * 7-56 outputs (the stride-2 layers at 7x7-56x56) were half scalar loop, 26 % of a 3x3 s2 conv
 * (perf, 64 ch at 112x112 on Zen 5). */
#include <immintrin.h>
#include <stdint.h>

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
    if (j < n) {
      /* r outputs read the 2r - 1 floats src[2j .. 2j + 2r - 2]; masked lanes touch no memory. */
      size_t r = n - j, m = 2 * r - 1;
      __mmask16 ma = (__mmask16)(m >= 16 ? 0xFFFFu : (1u << m) - 1u);
      __mmask16 mb = (__mmask16)(m > 16 ? (1u << (m - 16)) - 1u : 0u);
      __m512 a = _mm512_maskz_loadu_ps(ma, src + 2 * j);
      __m512 b = _mm512_maskz_loadu_ps(mb, (const float *)((uintptr_t)(src + 2 * j) + 16 * sizeof(float)));
      _mm512_mask_storeu_ps(dst + j, (__mmask16)((1u << r) - 1u), _mm512_permutex2var_ps(a, even, b));
      return;
    }
  }
  for (; j < n; j++) dst[j] = src[j * stride];
}
