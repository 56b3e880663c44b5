#include "kernels/scalar/scalar_kernels.h"

void lc_f32_gather_scalar(float *dst, const float *src, size_t n, size_t stride);

const lc_kernels lc_kernels_scalar = {
  .name = "scalar",
  .mr = 4,
  .nr = 8,
  .f32_gemm = lc_f32_gemm_4x8_scalar,
  .f32_dw_row = lc_f32_dw_row_scalar,
  .f32_dw_pixel = lc_f32_dw_pixel_scalar,
  .f32_gather = lc_f32_gather_scalar,
};
