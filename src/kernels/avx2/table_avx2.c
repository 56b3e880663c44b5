#include "kernels/avx2/avx2_kernels.h"

void lc_f32_gather_avx2(float *dst, const float *src, size_t n, size_t stride);

const lc_kernels lc_kernels_avx2 = {
  .name = "avx2",
  .mr = 6,
  .nr = 16,
  .f32_gemm = lc_f32_gemm_6x16_avx2,
  .f32_dw_row = lc_f32_dw_row_avx2,
  .f32_dw_pixel = lc_f32_dw_pixel_avx2,
  .f32_gather = lc_f32_gather_avx2,
};
