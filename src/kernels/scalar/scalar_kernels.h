/* Portable kernels; the SIMD tables reuse the dw ones for the shapes they do not vectorize. */
#ifndef LC_SCALAR_KERNELS_H
#define LC_SCALAR_KERNELS_H

#include "kernels/kernels.h"

void lc_f32_gemm_4x8_scalar(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                            const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p);
void lc_f32_dw_row_scalar(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                          const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p);
void lc_f32_dw_pixel_scalar(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,
                            const lc_gemm_params *p);
void lc_f32_gather_scalar(float *dst, const float *src, size_t n, size_t stride);

/* Epilogue of one value: v is the accumulator; old is C (read only if accumulate);
 * bias_v / res_v are ignored unless the matching pointer in p is set. */
static inline float lc_f32_epilogue1(float v, float old, float bias_v, float res_v, const lc_gemm_params *p) {
  if (p->accumulate) v += old;
  if (!p->final) return v;
  if (p->bias) v += bias_v;
  if (p->residual) v += res_v;
  return lc_apply_act(v, p);
}

#endif
