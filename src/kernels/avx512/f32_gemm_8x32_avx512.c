/* f32 GEMM microkernel, 8x32, AVX-512 (zmm; Zen4 splits each into two 256-bit halves, so the gain
 * over AVX2 is 32 registers and mask registers, not width).
 * Tile choice, packed A/B, Zen4, GFLOP/s at k = 64 / 256 / 1024 (AVX2 6x16 for reference:
 * 100 / 110 / 115): 6x32 106/114/116, 8x32 106/114/115, 12x32 105/112/116, 14x32 104/113/115,
 * 16x16 102/112/116, 28x16 100/112/112. All tiles are within noise at large k; 8x32 is among the
 * fastest at small k and leaves no padded rows when the row count is a multiple of 8. Against AVX2
 * it wins most on in-place B streamed from L3 (104 vs 83) and on ragged edge tiles (86 vs 61). */
#define LC_MR 8
#define LC_NV 2
#define LC_FN lc_f32_gemm_8x32_avx512
#include "kernels/avx512/avx512_kernels.h"
#include "kernels/avx512/f32_gemm_avx512_tmpl.h"
