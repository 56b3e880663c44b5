#include "kernels/scalar/scalar_kernels.h"

void lc_f32_gather_scalar(float *dst, const float *src, size_t n, size_t stride) {
  for (size_t j = 0; j < n; j++) dst[j] = src[j * stride];
}
