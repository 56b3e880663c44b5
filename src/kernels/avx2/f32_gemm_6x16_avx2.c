/* f32 GEMM microkernel, 6x16, AVX2 + FMA.
 * 12 ymm accumulators + 2 B vectors + 1 broadcast A = 15 of 16 registers. Per k step: 2 B loads,
 * 6 broadcasts, 12 FMAs; at 2 FMA/cycle that is 6 cycles, enough to cover the 4-cycle FMA latency
 * with 12 independent chains. */
#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/f32_gemm_6x16_avx2.h"

void lc_f32_gemm_6x16_avx2(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                           const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p) {
  __m256 acc[MR][2];
  if (m == 0 || n == 0) return;
  if (m > MR) m = MR;
  if (n > NR) n = NR;
  gemm_acc(m, n, k, a, rs_a, cs_a, b, rs_b, acc);
  const lc_avx2_act act = lc_avx2_act_init(p);
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++)
    if ((size_t)i < m) store_row(acc[i][0], acc[i][1], (size_t)i, n, c + (size_t)i * rs_c, p, &act);
}
