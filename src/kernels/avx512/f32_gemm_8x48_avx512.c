/* f32 GEMM microkernel, 8x48, AVX-512: 24 accumulators, 3 B loads and 8 broadcasts per 24 FMAs
 * (8x32: 2 and 8 per 16). For the taprows route's pixel panels on Intel, where it ran 1.05-1.12x
 * the 8x32's GFLOP/s at k = 192-256 with B streamed from L2 (a Xeon model 167). Same contract as
 * f32_gemm with n <= 48, the final epilogue resolved at compile time as f32_gemm_final's; each
 * output is the same sum in the same order as the 8x32's, so the same bits. */
#define LC_MR 8
#define LC_NV 3
#define LC_FN lc_f32_gemm_8x48_avx512
#define LC_FINAL_FAST 1
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/avx512/f32_gemm_avx512_tmpl.h"
