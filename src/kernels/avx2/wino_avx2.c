/* Winograd F(2x2, 3x3) transforms built with AVX2: the same C as wino_scalar.c, 8 floats wide. */
#define LC_WINO_TEMPLATE
#include "kernels/wino.h"

const lc_wino_kernels lc_wino_avx2 = LC_WINO_TABLE;
