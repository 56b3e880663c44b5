/* AVX2 + FMA kernels (compiled with -mavx2 -mfma). */
#ifndef LC_AVX2_KERNELS_H
#define LC_AVX2_KERNELS_H

#include "kernels/kernels.h"
#include "kernels/vmath.h"

LC_F32_KERNEL_DECLS(lc_f32_gemm_6x16_avx2, avx2);
LC_VMATH_DECLS(avx2);
void lc_f32_rowconv_avx2(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                       size_t rs_c, const lc_gemm_params *p);

#endif
