/* AVX-512 (F/BW/DQ/VL) kernels. */
#ifndef LC_AVX512_KERNELS_H
#define LC_AVX512_KERNELS_H

#include "kernels/kernels.h"

void lc_f32_gemm_8x32_avx512(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                             const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p);
void lc_f32_dw_row_avx512(size_t ow, size_t kh, size_t kw, size_t sw, size_t dw,
                          const float *const *in_rows, const float *w, float *out, const lc_gemm_params *p);
void lc_f32_dw_pixel_avx512(size_t c, size_t taps, const float *const *in_ptrs, const float *w, float *out,
                            const lc_gemm_params *p);
void lc_f32_gather_avx512(float *dst, const float *src, size_t n, size_t stride);

#endif
