#include "kernels/scalar/scalar_kernels.h"

void lc_f32_rowconv_scalar(size_t m, size_t n, size_t k, const float *w, const float *const *rows, size_t x0, float *c,
                           size_t rs_c, const lc_gemm_params *p) {
  if (m > LC_ROWCONV_MR) m = LC_ROWCONV_MR;
  if (n > LC_ROWCONV_NR) n = LC_ROWCONV_NR;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float v = 0.0f;
      for (size_t kk = 0; kk < k; kk++) v += w[kk * LC_ROWCONV_MR + i] * rows[kk][x0 + j];
      float *o = c + i * rs_c + j;
      float b = p->bias ? p->bias[p->bias_per_row ? i : j] : 0.0f;
      float r = p->residual ? p->residual[i * p->rs_res + j] : 0.0f;
      *o = lc_f32_epilogue1(v, p->accumulate ? *o : 0.0f, b, r, p);
    }
}
