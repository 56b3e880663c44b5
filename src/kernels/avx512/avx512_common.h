/* Helpers shared by the AVX-512 kernels: lane masks and the vector epilogue. */
#ifndef LC_AVX512_COMMON_H
#define LC_AVX512_COMMON_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/kernels.h"

#define LC_AI static inline __attribute__((always_inline))

/* Mask of the first cnt lanes, cnt in 0..16. */
LC_AI __mmask16 lc_avx512_mask(size_t cnt) { return (__mmask16)((1u << cnt) - 1u); }

typedef struct {
  int act, post;
  __m512 lo, hi, alpha, pmul, padd;
} lc_avx512_act;

LC_AI lc_avx512_act lc_avx512_act_init(const lc_gemm_params *p) {
  lc_avx512_act a;
  a.act = p->act;
  a.lo = _mm512_set1_ps(p->act_min);
  a.hi = _mm512_set1_ps(p->act_max);
  a.alpha = _mm512_set1_ps(p->act_alpha);
  a.post = p->post;
  a.pmul = _mm512_set1_ps(p->post_mul);
  a.padd = _mm512_set1_ps(p->post_add);
  return a;
}

/* Same results as lc_apply_act, NaN included (see the AVX2 version). */
LC_AI __m512 lc_avx512_act_only(__m512 x, const lc_avx512_act *a) {
  const __m512 zero = _mm512_setzero_ps();
  switch (a->act) {
    case 1: return _mm512_max_ps(x, zero);
    case 2: return _mm512_min_ps(a->hi, _mm512_max_ps(a->lo, x));
    case 3: return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), a->alpha, x);
    case 4: {
      __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
      t = _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(zero, t));
      return _mm512_mul_ps(x, t);
    }
    default: return x;
  }
}

/* Then the post affine (as the AVX2 version). */
LC_AI __m512 lc_avx512_apply_act(__m512 x, const lc_avx512_act *a) {
  x = lc_avx512_act_only(x, a);
  return a->post ? _mm512_add_ps(_mm512_mul_ps(x, a->pmul), a->padd) : x;
}

/* Full epilogue of 16 lanes; lanes outside mask are neither read nor written. */
LC_AI void lc_avx512_epilogue(__m512 v, float *c, const float *bias_col, __m512 bias_row, const float *res,
                              const lc_gemm_params *p, const lc_avx512_act *a, __mmask16 mask) {
  if (p->accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, c));
  if (p->final) {
    if (bias_col) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias_col));
    else if (p->bias) v = _mm512_add_ps(v, bias_row);
    if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, res));
    v = lc_avx512_apply_act(v, a);
  }
  _mm512_mask_storeu_ps(c, mask, v);
}

#endif
