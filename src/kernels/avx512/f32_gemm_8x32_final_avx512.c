/* The 8x32 AVX-512 GEMM with its final epilogue resolved at compile time (f32_gemm_final of the
 * AVX-512 tables; see LC_FINAL_FAST in the template). Same contract and bits as the 8x32 kernel. */
#define LC_MR 8
#define LC_NV 2
#define LC_FN lc_f32_gemm_8x32_final_avx512
#define LC_FINAL_FAST 1
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/avx512/f32_gemm_avx512_tmpl.h"
