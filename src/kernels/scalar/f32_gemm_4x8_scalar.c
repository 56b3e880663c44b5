/* Portable GEMM microkernel. 4x8 keeps 32 accumulators, which the compiler maps to 8 SSE registers
 * on baseline x86-64; it is the fallback, not a fast path. */
#include "kernels/scalar/scalar_kernels.h"

#define MR 4
#define NR 8

void lc_f32_gemm_4x8_scalar(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                            const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p) {
  float acc[MR][NR] = {{0}};
  if (m > MR) m = MR;
  if (n > NR) n = NR;
  for (size_t kk = 0; kk < k; kk++) {
    const float *bk = b + kk * rs_b;
    for (size_t i = 0; i < m; i++) {
      const float av = a[i * rs_a + kk * cs_a];
      for (size_t j = 0; j < n; j++) acc[i][j] += av * bk[j];
    }
  }
  for (size_t i = 0; i < m; i++) {
    float *cr = c + i * rs_c;
    const float *res = p->residual ? p->residual + i * p->rs_res : NULL;
    for (size_t j = 0; j < n; j++) {
      float bv = p->bias ? p->bias[p->bias_per_row ? i : j] : 0.0f;
      cr[j] = lc_f32_epilogue1(acc[i][j], p->accumulate ? cr[j] : 0.0f, bv, res ? res[j] : 0.0f, p);
    }
  }
}
