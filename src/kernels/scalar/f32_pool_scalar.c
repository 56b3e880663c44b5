/* Sums for the pooling and reduction operators in portable C (kernels/vmath.h). */
#include "kernels/scalar/scalar_kernels.h"

/* Eight independent partial sums, so the loop still vectorizes. */
double lc_f32_sum_d_scalar(const float *x, size_t n) {
  double acc[8] = {0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) acc[k] += x[i + k];
  for (; i < n; i++) acc[i & 7] += x[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

void lc_f32_rows_sum_scalar(float *y, const float *x, size_t n, size_t rows, size_t stride) {
  for (size_t i = 0; i < n; i++) y[i] = x[i];
  for (size_t r = 1; r < rows; r++)
    for (size_t i = 0; i < n; i++) y[i] += x[r * stride + i];
}

void lc_f32_pool_row_scalar(float *y, const float *x, size_t n, size_t rows, size_t stride, size_t s, size_t k,
                            size_t d, const float *inv) {
  for (size_t i = 0; i < n; i++) y[i] = 0.0f;
  for (size_t r = 0; r < rows; r++)
    for (size_t j = 0; j < k; j++)
      for (size_t i = 0; i < n; i++) y[i] += x[r * stride + i * s + j * d];
  for (size_t i = 0; i < n; i++) y[i] *= inv[i];
}
