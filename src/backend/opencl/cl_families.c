/* Every kernel family of the OpenCL conv, in the order the heuristic (tuning level none) tries
 * them: the specialised ones for the shapes they are made for (the float GEMV before the dp4a one,
 * which quantizes the activations), then the general GEMM (float before dp4a, for the same
 * reason), the large-kernel tiles (only where they measure faster: gemm is eligible first), then
 * the Winograd and the split reduction (never the heuristic's: only where they measure faster),
 * the direct tiles, then the baseline. */
#include "backend/opencl/cl_conv.h"

const lc_cl_family *const lc_cl_families[] = {&lc_cl_family_gemv,  &lc_cl_family_gemvq, &lc_cl_family_dw,
                                               &lc_cl_family_gemm,  &lc_cl_family_gemmq, &lc_cl_family_wide,
                                               &lc_cl_family_wino9, &lc_cl_family_wino,  &lc_cl_family_split,
                                               &lc_cl_family_direct, &lc_cl_family_ref};
const int lc_cl_nfamilies = (int)(sizeof lc_cl_families / sizeof lc_cl_families[0]);
