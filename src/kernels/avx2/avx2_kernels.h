/* AVX2 + FMA kernels (compiled with -mavx2 -mfma). */
#ifndef LC_AVX2_KERNELS_H
#define LC_AVX2_KERNELS_H

#include "kernels/kernels.h"
#include "kernels/vmath.h"

LC_F32_KERNEL_DECLS(lc_f32_gemm_6x16_avx2, avx2);
void lc_f32_gemm_6x16_final_avx2(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a, const float *b,
                                 size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p);
LC_VMATH_DECLS(avx2);
void lc_f32_rowconv_avx2(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                       size_t rs_c, const lc_gemm_params *p);
void lc_f32_dw_row_unpadded_avx2(size_t ow, size_t rows, size_t ors, size_t s, size_t k, size_t pl, size_t iw,
                                 const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p);
void lc_f32_dw_c8_avx2(const lc_dw_c8_args *a);
void lc_f32_gather3_s2_avx2(float *d0, float *d1, float *d2, const float *s, size_t n);
void lc_f32_gather_s2_rows_avx2(float *d0, float *d1, float *d2, size_t drs, const float *src, size_t srs, size_t rows,
                                size_t n, ptrdiff_t x0, size_t iw);

#endif
