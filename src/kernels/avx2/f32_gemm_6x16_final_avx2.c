/* The AVX2 6x16 GEMM with its final epilogue fixed at compile time (the avx2 table's
 * f32_gemm_final): C (+)= acc, the row's bias, the activation and the post affine, when there is no
 * residual and the bias is per row or absent. The generic store tests accumulate, final, bias,
 * residual, the activation and the affine per vector, which at small k costs as much as the
 * products (1x1 convs of 16-48 channels, PP-OCR det's first layers). Same operations in the same
 * order as lc_avx2_epilogue, so the same bits as lc_f32_gemm_6x16_avx2. */
#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/f32_gemm_6x16_avx2.h"

LC_AI void store_fast(__m256 acc[MR][2], size_t m, size_t n, float *c, size_t rs_c, const lc_gemm_params *p,
                      const lc_avx2_act *a, const int act, const int post) {
  lc_avx2_act ca = *a;
  ca.act = act;
  ca.post = post;
  const int accum = p->accumulate, full = n == NR;
  const __m256i m0 = lc_avx2_mask(n < 8 ? n : 8), m1 = lc_avx2_mask(n > 8 ? n - 8 : 0);
  for (size_t i = 0; i < m; i++) {
    float *cr = c + i * rs_c;
    __m256 v0 = acc[i][0], v1 = acc[i][1];
    if (accum) {
      v0 = _mm256_add_ps(v0, full ? _mm256_loadu_ps(cr) : _mm256_maskload_ps(cr, m0));
      v1 = _mm256_add_ps(v1, full ? _mm256_loadu_ps(cr + 8) : _mm256_maskload_ps(cr + 8, m1));
    }
    if (p->bias) {
      const __m256 b = _mm256_set1_ps(p->bias[i]);
      v0 = _mm256_add_ps(v0, b), v1 = _mm256_add_ps(v1, b);
    }
    v0 = lc_avx2_apply_act(v0, &ca), v1 = lc_avx2_apply_act(v1, &ca);
    if (full) {
      _mm256_storeu_ps(cr, v0);
      _mm256_storeu_ps(cr + 8, v1);
    } else {
      lc_avx2_store_n(cr, v0, n < 8 ? n : 8);
      if (n > 8) lc_avx2_store_n(cr + 8, v1, n - 8);
    }
  }
}

void lc_f32_gemm_6x16_final_avx2(size_t m, size_t n, size_t k, const float *a, size_t rs_a, size_t cs_a,
                                 const float *b, size_t rs_b, float *c, size_t rs_c, const lc_gemm_params *p) {
  __m256 acc[MR][2];
  if (m == 0 || n == 0) return;
  if (m > MR) m = MR;
  if (n > NR) n = NR;
  gemm_acc(m, n, k, a, rs_a, cs_a, b, rs_b, acc);
  if (p->final && !p->residual && (!p->bias || p->bias_per_row) && p->act >= 0 && p->act <= 4) {
    const lc_avx2_act act = lc_avx2_act_init(p);
#define LC_FAST(f) \
  p->post ? store_fast(acc, m, n, c, rs_c, p, &act, f, 1) : store_fast(acc, m, n, c, rs_c, p, &act, f, 0)
    switch (p->act) {
      case 0: LC_FAST(0); return;
      case 1: LC_FAST(1); return;
      case 2: LC_FAST(2); return;
      case 3: LC_FAST(3); return;
      default: LC_FAST(4); return;
    }
#undef LC_FAST
  }
  const lc_avx2_act act = lc_avx2_act_init(p);
  for (size_t i = 0; i < m; i++) store_row(acc[i][0], acc[i][1], i, n, c + i * rs_c, p, &act);
}
