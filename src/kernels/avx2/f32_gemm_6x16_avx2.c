/* f32 GEMM microkernel, 6x16, AVX2 + FMA.
 * 12 ymm accumulators + 2 B vectors + 1 broadcast A = 15 of 16 registers. Per k step: 2 B loads,
 * 6 broadcasts, 12 FMAs; at 2 FMA/cycle that is 6 cycles, enough to cover the 4-cycle FMA latency
 * with 12 independent chains. */
#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/f32_gemm_6x16_avx2.h"

/* Epilogue and store of one row of C (n columns). */
static void store_row(__m256 v0, __m256 v1, size_t i, size_t n, float *cr, const lc_gemm_params *p,
                      const lc_avx2_act *act) {
  const int fin = p->final;
  const float *res = fin && p->residual ? p->residual + i * p->rs_res : NULL;
  const float *bcol = fin && p->bias && !p->bias_per_row ? p->bias : NULL;
  const __m256 brow = fin && p->bias && p->bias_per_row ? _mm256_set1_ps(p->bias[i]) : _mm256_setzero_ps();
  if (n == NR) {
    lc_avx2_epilogue(v0, cr, bcol, brow, res, p, act, _mm256_setzero_si256(), 0);
    lc_avx2_epilogue(v1, cr + 8, bcol ? bcol + 8 : NULL, brow, res ? res + 8 : NULL, p, act,
                     _mm256_setzero_si256(), 0);
    return;
  }
  lc_avx2_epilogue(v0, cr, bcol, brow, res, p, act, lc_avx2_mask(n < 8 ? n : 8), 1);
  if (n > 8)
    lc_avx2_epilogue(v1, cr + 8, bcol ? bcol + 8 : NULL, brow, res ? res + 8 : NULL, p, act,
                     lc_avx2_mask(n - 8), 1);
}

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
