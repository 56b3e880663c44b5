/* Nearest upsampling of one row by an integer factor, in portable C (kernels/vmath.h). */
#include <string.h>

#include "kernels/scalar/scalar_kernels.h"

void lc_f32_repeat_row_scalar(float *y, const float *x, size_t n, size_t k) {
  if (k == 1) {
    memcpy(y, x, n * sizeof(float));
    return;
  }
  for (size_t i = 0; i < n; i++, y += k)
    for (size_t j = 0; j < k; j++) y[j] = x[i];
}
