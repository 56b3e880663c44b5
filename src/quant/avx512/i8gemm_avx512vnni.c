/* AVX-512 VNNI (on 256-bit registers, AVX512VL) int8-activation GEMM: vpdpbusd adds the 4-wide
 * u8 x s8 dot products straight into int32, so Q4 needs no 16-bit stage; Q8 keeps the sign trick. */
#include <immintrin.h>

#define I8_Q4_GROUP 0
#define I8_Q4_FULL 8 /* unrolled when a block is 32 long */
#define I8_Q4_WIDEN(s) (s)
#define I8_DOT_Q4(s, wb, x) ((s) = _mm256_dpbusd_epi32((s), (wb), (x)))
#define I8_DOT_Q8(d, wb, aw, x) ((d) = _mm256_dpbusd_epi32((d), (aw), _mm256_sign_epi8((x), (wb))))
#define I8_NAME_Q4 lc_i8gemm_q4_4x16_avx512vnni
#define I8_NAME_Q8 lc_i8gemm_q8_4x16_avx512vnni
#include "quant/avx2/i8gemm_tile.h"
