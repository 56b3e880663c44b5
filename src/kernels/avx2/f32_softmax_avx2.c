/* Softmax / LogSoftmax of one contiguous row in three passes: the maximum (with a NaN flag), the
 * exps stored and summed in double, the scale. Error bounds: src/model/ops/ops_norm.c. */
#include <math.h>
#include <stdint.h>

#include "kernels/avx2/f32_exp_avx2.h"
#include "kernels/avx2/avx2_kernels.h"

LC_AI float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

LC_AI double hsum4d(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* The row's maximum; *bad = 1 when a NaN is in it. Masked-off tail lanes load as 0 and are
 * replaced by -inf before they can win. This pass meets the row first: prefetching 1 KiB ahead
 * took PP-OCR rec's 1x40x6625 from 1.29x to ~1.05x onnxruntime's time. */
static float row_max(const float *x, size_t len, int *bad) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 m0 = ninf, m1 = ninf, nan = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    _mm_prefetch((const char *)((uintptr_t)(x + i) + 1024), _MM_HINT_T0); /* may pass the row: no fault */
    __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    m0 = _mm256_max_ps(m0, a);
    m1 = _mm256_max_ps(m1, b);
  }
  for (; i < len; i += 8) {
    size_t r = len - i < 8 ? len - i : 8;
    __m256i k = lc_avx2_mask(r);
    __m256 a = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
    m0 = _mm256_max_ps(m0, a);
  }
  *bad = _mm256_movemask_ps(nan) != 0;
  return hmax8(_mm256_max_ps(m0, m1));
}

/* e^(x - m), 0 where x - m < -87.3 (-inf included): whatever the exponent bits made of those
 * arguments is masked off, so they need no clamp. */
LC_AI __m256 exp_sub(__m256 x, __m256 m) {
  __m256 d = _mm256_sub_ps(x, m);
  return _mm256_and_ps(lc_avx2_exp_normal(d), _mm256_cmp_ps(d, _mm256_set1_ps(-87.3f), _CMP_GE_OQ));
}

LC_AI __m256d add8d(__m256d acc, __m256 v, __m256d *acc2) {
  *acc2 = _mm256_add_pd(*acc2, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  return _mm256_add_pd(acc, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
}

/* Sum of e^(x - m) in double; the exps are stored to y unless y is NULL. Eight vectors are
 * first added as a float tree of depth 3 (3u relative, ops_norm.c's bound), so that only one
 * in eight pays the conversions to double. */
static double exp_sum(const float *x, float *y, size_t len, float mf) {
  const __m256 m = _mm256_set1_ps(mf);
  __m256d s0 = _mm256_setzero_pd(), s1 = s0;
  size_t i = 0;
  for (; i + 64 <= len; i += 64) {
    __m256 e[8];
    if (y)
      for (int k = 0; k < 4; k++) __builtin_prefetch((const void *)((uintptr_t)(y + i) + 1024 + 64 * k), 1);
    for (int k = 0; k < 8; k++) {
      e[k] = exp_sub(_mm256_loadu_ps(x + i + 8 * k), m);
      if (y) _mm256_storeu_ps(y + i + 8 * k, e[k]);
    }
    __m256 lo = _mm256_add_ps(_mm256_add_ps(e[0], e[1]), _mm256_add_ps(e[2], e[3]));
    __m256 hi = _mm256_add_ps(_mm256_add_ps(e[4], e[5]), _mm256_add_ps(e[6], e[7]));
    s0 = add8d(s0, _mm256_add_ps(lo, hi), &s1);
  }
  for (; i + 16 <= len; i += 16) {
    __m256 a = exp_sub(_mm256_loadu_ps(x + i), m), b = exp_sub(_mm256_loadu_ps(x + i + 8), m);
    if (y) _mm256_storeu_ps(y + i, a), _mm256_storeu_ps(y + i + 8, b);
    s0 = add8d(s0, _mm256_add_ps(a, b), &s1);
  }
  for (; i < len; i += 8) {
    __m256i k = lc_avx2_mask(len - i < 8 ? len - i : 8);
    __m256 a = _mm256_and_ps(exp_sub(_mm256_maskload_ps(x + i, k), m), _mm256_castsi256_ps(k));
    if (y) lc_avx2_store_n(y + i, a, len - i);
    s0 = add8d(s0, a, &s1);
  }
  return hsum4d(_mm256_add_pd(s0, s1));
}

void lc_f32_softmax_row_avx2(const float *x, float *y, size_t len, int lg) {
  int bad;
  float mf = row_max(x, len, &bad);
  if (bad || mf == INFINITY || mf == -INFINITY) {
    for (size_t j = 0; j < len; j++) y[j] = NAN;
    return;
  }
  size_t i = 0;
  if (lg) {
    const __m256d ls = _mm256_set1_pd(log(exp_sum(x, NULL, len, mf)) + mf);
    for (; i + 8 <= len; i += 8) {
      __m256 v = _mm256_loadu_ps(x + i);
      __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), ls));
      __m128 hi = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), ls));
      _mm256_storeu_ps(y + i, _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1));
    }
    double lsd = _mm256_cvtsd_f64(ls);
    for (; i < len; i++) y[i] = (float)((double)x[i] - lsd);
    return;
  }
  const __m256 inv = _mm256_set1_ps((float)(1.0 / exp_sum(x, y, len, mf)));
  for (; i + 8 <= len; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
  for (; i < len; i++) y[i] *= _mm256_cvtss_f32(inv);
}
