/* Helpers shared by the AVX2 kernels: lane masks and the vector epilogue. */
#ifndef LC_AVX2_COMMON_H
#define LC_AVX2_COMMON_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/kernels.h"

#define LC_AI static inline __attribute__((always_inline))

static const int32_t lc_avx2_mask_tbl[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* Mask of the first cnt lanes, cnt in 0..8. */
LC_AI __m256i lc_avx2_mask(size_t cnt) {
  return _mm256_loadu_si256((const __m256i *)(const void *)(lc_avx2_mask_tbl + 8 - cnt));
}

/* Mask of the lanes l < m, m clamped to 0..8. */
LC_AI __m256i lc_avx2_mask_upto(ptrdiff_t m) { return lc_avx2_mask(m < 0 ? 0 : m > 8 ? 8 : (size_t)m); }

/* Lanes l of 8 columns from `off` with 0 <= off + l < iw. */
LC_AI __m256i lc_avx2_cols_in(ptrdiff_t off, ptrdiff_t iw) {
  return _mm256_andnot_si256(lc_avx2_mask_upto(-off), lc_avx2_mask_upto(iw - off));
}

/* The first n lanes (0..8) of v to d, nothing past them. Not vmaskmovps: AMD's masked store costs
 * ~14 cycles (Zen 3: 4.4 ns a store against 1.2 ns for these 128 / 64 / 32-bit stores); Intel's
 * costs about one, and these no more. */
LC_AI void lc_avx2_store_n(float *d, __m256 v, size_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(d, v);
    return;
  }
  __m128 x = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(d, x);
    x = _mm256_extractf128_ps(v, 1);
    d += 4, n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi((__m64 *)(void *)d, x);
    x = _mm_movehl_ps(x, x);
    d += 2, n -= 2;
  }
  if (n) _mm_store_ss(d, x);
}

/* Lanes set in a mask of the first lanes (lc_avx2_mask's). */
LC_AI size_t lc_avx2_mask_count(__m256i prefix) {
  return (size_t)__builtin_ctz(~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(prefix)));
}

/* 8 floats at s + off under mask m (integer address math: masked lanes touch no memory, so the
 * address may lie outside s). */
LC_AI __m256 lc_avx2_load_m(const float *s, ptrdiff_t off, __m256i m) {
  return _mm256_maskload_ps((const float *)((uintptr_t)s + (uintptr_t)(off * (ptrdiff_t)sizeof(float))), m);
}

/* Even / odd lanes of the 16 floats a:b: shuffle_ps picks them per 128-bit lane, permute4x64 puts
 * the halves in order. */
LC_AI __m256 lc_avx2_even(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
}
LC_AI __m256 lc_avx2_odd(__m256 a, __m256 b) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

/* Activation parameters broadcast once per call. */
typedef struct {
  int act, post;
  __m256 lo, hi, alpha, pmul, padd;
} lc_avx2_act;

LC_AI lc_avx2_act lc_avx2_act_init(const lc_gemm_params *p) {
  lc_avx2_act a;
  a.act = p->act;
  a.lo = _mm256_set1_ps(p->act_min);
  a.hi = _mm256_set1_ps(p->act_max);
  a.alpha = _mm256_set1_ps(p->act_alpha);
  a.post = p->post;
  a.pmul = _mm256_set1_ps(p->post_mul);
  a.padd = _mm256_set1_ps(p->post_add);
  return a;
}

/* Same results as lc_apply_act, NaN included: the operand order of max/min keeps x when it is NaN,
 * except relu, whose scalar form maps NaN to 0 like max(x, 0) does. */
LC_AI __m256 lc_avx2_act_only(__m256 x, const lc_avx2_act *a) {
  const __m256 zero = _mm256_setzero_ps();
  switch (a->act) {
    case 1: return _mm256_max_ps(x, zero);
    case 2: return _mm256_min_ps(a->hi, _mm256_max_ps(a->lo, x));
    case 3: return _mm256_blendv_ps(x, _mm256_mul_ps(a->alpha, x), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
    case 4: {
      __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
      t = _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(zero, t));
      return _mm256_mul_ps(x, t);
    }
    default: return x;
  }
}

/* Then the post affine as lc_apply_act: a mul and an add, not an FMA (the same bits). */
LC_AI __m256 lc_avx2_apply_act(__m256 x, const lc_avx2_act *a) {
  x = lc_avx2_act_only(x, a);
  return a->post ? _mm256_add_ps(_mm256_mul_ps(x, a->pmul), a->padd) : x;
}

/* Full epilogue of 8 lanes; c/bias_col/res point at the lanes, bias_row is the row's bias value.
 * mask: the first lanes (lc_avx2_mask); lanes outside it are neither read nor written. */
LC_AI void lc_avx2_epilogue(__m256 v, float *c, const float *bias_col, __m256 bias_row, const float *res,
                            const lc_gemm_params *p, const lc_avx2_act *a, __m256i mask, int masked) {
  if (p->accumulate) v = _mm256_add_ps(v, masked ? _mm256_maskload_ps(c, mask) : _mm256_loadu_ps(c));
  if (p->final) {
    if (bias_col) v = _mm256_add_ps(v, masked ? _mm256_maskload_ps(bias_col, mask) : _mm256_loadu_ps(bias_col));
    else if (p->bias) v = _mm256_add_ps(v, bias_row);
    if (res) v = _mm256_add_ps(v, masked ? _mm256_maskload_ps(res, mask) : _mm256_loadu_ps(res));
    v = lc_avx2_apply_act(v, a);
  }
  if (masked) lc_avx2_store_n(c, v, lc_avx2_mask_count(mask));
  else _mm256_storeu_ps(c, v);
}

#endif
