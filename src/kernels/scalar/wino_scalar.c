/* Winograd F(2x2, 3x3) transforms for the baseline ISA (gcc vectorizes them with SSE2). */
#define LC_WINO_TEMPLATE
#include "kernels/wino.h"

const lc_wino_kernels lc_wino_scalar = LC_WINO_TABLE;
