/* Portable kernels; the SIMD tables reuse the dw ones for the shapes they do not vectorize. */
#ifndef LC_SCALAR_KERNELS_H
#define LC_SCALAR_KERNELS_H

#include "kernels/kernels.h"
#include "kernels/vmath.h"

LC_F32_KERNEL_DECLS(lc_f32_gemm_4x8_scalar, scalar);
LC_VMATH_DECLS(scalar);
void lc_f32_rowconv_scalar(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                       size_t rs_c, const lc_gemm_params *p);

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
