/* Reference-grade scalar int8-activation GEMM (quant/i8gemm.h); the SIMD kernels agree with it
 * exactly in int32 per block and to float rounding after. */
#include <math.h>
#include <string.h>

#include "quant/i8gemm.h"

/* Codes x * (127 / amax), nearest even, as cvtps2dq rounds; NaN (undefined input) becomes 0. */
static inline int8_t code_of(float v, float inv) {
  float r = v * inv;
  if (!(r == r)) return 0;
  r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
  return (int8_t)rintf(r);
}

void lc_i8prep_16_scalar(const lc_i8blocks *bl, const float *x, size_t ldx, int8_t *xq, float *xs, int32_t *isum,
                         float *xsum) {
  for (size_t b = 0; b < bl->nb; b++) {
    size_t len = bl->len[b], nq = bl->nq[b];
    for (size_t p = 0; p < LC_I8_NR; p++) {
      float amax = 0.0f;
      for (size_t e = 0; e < len; e++) amax = fmaxf(amax, fabsf(x[e * ldx + p]));
      float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
      int32_t s = 0;
      for (size_t e = 0; e < 4 * nq; e++) {
        int8_t q = e < len ? code_of(x[e * ldx + p], inv) : 0;
        xq[(e / 4) * 4 * LC_I8_NR + p * 4 + e % 4] = q;
        s += q;
      }
      xs[b * LC_I8_NR + p] = amax / 127.0f;
      isum[b * LC_I8_NR + p] = s;
      xsum[b * LC_I8_NR + p] = amax / 127.0f * (float)s;
    }
    x += len * ldx;
    xq += nq * 4 * LC_I8_NR;
  }
}

/* bias: -8 for Q4 codes stored as q + 8, 0 for Q8. */
static void i8gemm_scalar(int bias, const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw,
                          const float *ws, const float *wo, size_t lds, const lc_i8act *a, float *c, size_t ldc,
                          int acc) {
  for (size_t r = 0; r < mr; r++)
    for (size_t p = 0; p < np; p++) {
      float sum = acc ? c[r * ldc + p] : 0.0f;
      const uint8_t *wr = w + r * ldw;
      const int8_t *xq = a->xq;
      for (size_t b = 0; b < bl->nb; b++) {
        int32_t d = bias * a->isum[b * LC_I8_NR + p];
        for (size_t e = 0; e < 4 * bl->nq[b]; e++) {
          int q = bias ? (int)wr[e] : (int)(int8_t)wr[e];
          d += q * xq[(e / 4) * 4 * LC_I8_NR + p * 4 + e % 4];
        }
        sum = fmaf((float)d, ws[r * lds + b] * a->xs[b * LC_I8_NR + p], sum);
        if (wo) sum = fmaf(wo[r * lds + b], a->xsum[b * LC_I8_NR + p], sum);
        wr += 4 * bl->nq[b];
        xq += 4 * LC_I8_NR * bl->nq[b];
      }
      c[r * ldc + p] = sum;
    }
}

void lc_i8gemm_q4_4x16_scalar(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw,
                              const float *ws, const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c,
                              size_t ldc, int acc) {
  (void)apan; /* 16-pixel tiles */
  i8gemm_scalar(-8, bl, mr, np, w, ldw, ws, wo, lds, a, c, ldc, acc);
}

void lc_i8gemm_q8_4x16_scalar(const lc_i8blocks *bl, size_t mr, size_t np, const uint8_t *w, size_t ldw,
                              const float *ws, const float *wo, size_t lds, const lc_i8act *a, size_t apan, float *c,
                              size_t ldc, int acc) {
  (void)apan; /* 16-pixel tiles */
  i8gemm_scalar(0, bl, mr, np, w, ldw, ws, wo, lds, a, c, ldc, acc);
}
