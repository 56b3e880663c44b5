/* Portable depthwise kernels (NCHW row and NHWC pixel). */
#include "kernels/scalar/scalar_kernels.h"

void lc_f32_dw_row_scalar(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                          const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p) {
  const float bv = p->bias ? p->bias[0] : 0.0f;
  for (size_t ox = 0; ox < ow; ox++) {
    float acc = 0.0f;
    for (size_t ky = 0; ky < kh; ky++) {
      const float *row = in_rows[ky] + ox * sw;
      for (size_t kx = 0; kx < kw; kx++) acc += row[kx * dw] * w[ky * kw + kx];
    }
    out[ox] = lc_f32_epilogue1(acc, p->accumulate ? out[ox] : 0.0f, bv,
                               p->residual ? p->residual[ox] : 0.0f, p);
  }
}

void lc_f32_dw_pixel_scalar(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,
                            const lc_gemm_params *p) {
  for (size_t ch = 0; ch < c; ch++) {
    float acc = 0.0f;
    for (size_t t = 0; t < taps; t++)
      if (in_ptrs[t]) acc += in_ptrs[t][ch] * w[t * c + ch];
    out[ch] = lc_f32_epilogue1(acc, p->accumulate ? out[ch] : 0.0f, p->bias ? p->bias[ch] : 0.0f,
                               p->residual ? p->residual[ch] : 0.0f, p);
  }
}
