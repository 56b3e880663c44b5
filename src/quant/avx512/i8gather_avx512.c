/* The i8gemm planes' panels (conv/i8planes.c), a row of the planes at a time across a tile's panels,
 * so that each row streams (a panel at a time walked ~100 rows a line each: too many streams for the
 * hardware prefetcher). A panel's 16 pixels are one or a few runs of an image row (stride 1 or 2):
 * masked loads (fault-free past the run) and, at stride 2, one even-lane permute replace 16 scalar
 * copies, which were ~10 % of a q4 IResNet-34 run at 2 threads; other strides and many short runs
 * take the gather instruction. */
#include <immintrin.h>

#include "quant/i8gemm.h"

/* p + off elements: a run's frame may start before the row (only the mask's lanes are read). */
static inline const void *frame(const uint32_t *p, int64_t off) {
  return (const void *)((uintptr_t)p + (uintptr_t)off * 4u);
}

static inline __m512i panel_row(const uint32_t *src, const lc_i8runs *ru) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  __m512i v = _mm512_setzero_si512();
  const int runs = ru->n;
  if (ru->step == 1 && runs <= 4) {
    for (int s = 0; s < runs; s++) v = _mm512_mask_loadu_epi32(v, ru->lanes[s], frame(src, ru->at[s]));
  } else if (ru->step == 2 && runs <= 4) {
    for (int s = 0; s < runs; s++) {
      __m512i lo = _mm512_maskz_loadu_epi32(ru->load[s][0], frame(src, ru->at[s]));
      __m512i hi = _mm512_maskz_loadu_epi32(ru->load[s][1], frame(src, ru->at[s] + 16));
      v = _mm512_mask_mov_epi32(v, ru->lanes[s], _mm512_permutex2var_epi32(lo, even, hi));
    }
  } else {
    __mmask16 all = 0;
    for (int s = 0; s < runs; s++) all |= ru->lanes[s];
    v = _mm512_mask_i32gather_epi32(v, all, _mm512_loadu_si512(ru->off), src, 4);
  }
  return v;
}

void lc_i8gather_avx512(const uint32_t *src, size_t ld, size_t n, const lc_i8runs *ru, size_t npan, uint32_t *dst,
                        size_t ldd, size_t dpan) {
  for (size_t r = 0; r < n; r++, src += ld, dst += ldd)
    for (size_t j = 0; j < npan; j++) _mm512_storeu_si512(dst + j * dpan, panel_row(src, &ru[j]));
}
