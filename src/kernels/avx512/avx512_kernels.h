/* AVX-512 (F/BW/DQ/VL) kernels. */
#ifndef LC_AVX512_KERNELS_H
#define LC_AVX512_KERNELS_H

#include "kernels/kernels.h"

LC_F32_KERNEL_DECLS(lc_f32_gemm_8x32_avx512, avx512);

#endif
