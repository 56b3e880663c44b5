/* f32 GEMM microkernel, 8x49, AVX-512: 8x48 in 24 zmm accumulators (3 B loads and 8 broadcasts per
 * 24 FMAs; the 8x32 does 2 and 8 per 16) plus a 49th column as one ymm of the 8 rows (A's column
 * loaded whole, B's element broadcast). 49 columns because the maps of the stride-2 layers are
 * 49 x 4^j pixels (7x7 .. 56x56): 8x32 panels left 15 of 64 lanes empty at 7x7 and a 4-pixel
 * call per 14x14 map. The 8x48 part ran 1.05-1.12x the 8x32's GFLOP/s at k = 192-256 with B
 * streamed from L2 (a Xeon model 167). Same contract as f32_gemm with n <= 49, the final epilogue
 * resolved at compile time as f32_gemm_final's; each output is the same sum in the same order as
 * the 8x32's, and the same epilogue operations, so the same bits. */
#define LC_MR 8
#define LC_NV 3
#define LC_TAIL1 1
#define LC_FN lc_f32_gemm_8x49_avx512
#define LC_FINAL_FAST 1
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/avx512/f32_gemm_avx512_tmpl.h"
