#include "kernels/avx512/avx512_kernels.h"

void lc_f32_gather_avx512(float *dst, const float *src, size_t n, size_t stride);

const lc_kernels lc_kernels_avx512 = {
  .name = "avx512",
  .mr = 8,
  .nr = 32,
  .f32_gemm = lc_f32_gemm_8x32_avx512,
  .f32_dw_row = lc_f32_dw_row_avx512,
  .f32_dw_pixel = lc_f32_dw_pixel_avx512,
  .f32_gather = lc_f32_gather_avx512,
};
