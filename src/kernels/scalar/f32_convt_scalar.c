/* The k = s = 2 ConvTranspose row in portable C (kernels/vmath.h): both kernel columns of one
 * (output channel, kernel row) at a time, so each input value is read once per pair. */
#include "kernels/scalar/scalar_kernels.h"

void lc_f32_convt2_row_scalar(float *const *y, const float *x, size_t xs, size_t C, size_t w, const float *wp,
                              const float *b, size_t nj) {
  for (size_t j = 0; j < nj; j++) {
    const float *wj = wp + j * C * 2;
    float *yj = y[j];
    for (size_t i = 0; i < w; i++) yj[2 * i] = yj[2 * i + 1] = b[j];
    for (size_t c = 0; c < C; c++) {
      const float *xc = x + c * xs;
      float w0 = wj[2 * c], w1 = wj[2 * c + 1];
      for (size_t i = 0; i < w; i++) {
        yj[2 * i] += w0 * xc[i];
        yj[2 * i + 1] += w1 * xc[i];
      }
    }
  }
}
