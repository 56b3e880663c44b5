/* Reference-grade scalar GEMV kernels; every SIMD kernel must agree with these. */
#include <math.h>

#include "quant/qkernels.h"

/* Position of block element e in the padded q4 activation layout (see qkernels.h). */
static inline size_t q4_pos(size_t e) { return (e & ~(size_t)31) + (e & 1) * 16 + ((e & 31) >> 1); }
static inline int q4_code(const uint8_t *c, size_t e) { return ((c[e >> 1] >> ((e & 1) * 4)) & 15) - 8; }

#define ROW_LOOP(BODY)                                                                                  \
  for (size_t n = n0; n < n1; n++)                                                                      \
    for (size_t i = 0; i < a->m; i++) {                                                                 \
      const uint8_t *c = w->codes + n * w->row_bytes;                                                   \
      const float *s = w->scales + n * w->nb;                                                           \
      const float *o = w->offsets ? w->offsets + n * w->nb : NULL;                                      \
      size_t xo = i * a->row_len, b = 0, mb = i * w->nb;                                                \
      float acc = 0.0f;                                                                                 \
      (void)mb;                                                                                         \
      for (size_t t = 0; t < w->taps; t++)                                                              \
        for (size_t bi = 0; bi < w->bpt; bi++, b++) {                                                   \
          size_t len = lc_qblock_len(w, bi);                                                            \
          BODY;                                                                                         \
          c += lc_qblock_nbytes(w, bi);                                                                 \
          xo += lc_qpad(len);                                                                           \
        }                                                                                               \
      y[i * ldy + n] = acc;                                                                             \
    }

void lc_qgemv_q4_accurate_scalar(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  ROW_LOOP({
    float off = o ? o[b] : 0.0f;
    for (size_t e = 0; e < len; e++) acc = fmaf(fmaf((float)q4_code(c, e), s[b], off), a->xf[xo + q4_pos(e)], acc);
  })
}

void lc_qgemv_q8_accurate_scalar(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                 size_t ldy) {
  ROW_LOOP({
    float off = o ? o[b] : 0.0f;
    const int8_t *q = (const int8_t *)c;
    for (size_t e = 0; e < len; e++) acc = fmaf(fmaf((float)q[e], s[b], off), a->xf[xo + e], acc);
  })
}

void lc_qgemv_q4_int8_scalar(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                             size_t ldy) {
  ROW_LOOP({
    int32_t d = 0;
    for (size_t e = 0; e < len; e++) d += q4_code(c, e) * a->xq[xo + q4_pos(e)];
    acc += (float)d * (s[b] * a->xs[mb + b]);
    if (o) acc += o[b] * a->xsum[mb + b];
  })
}

void lc_qgemv_q8_int8_scalar(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                             size_t ldy) {
  ROW_LOOP({
    int32_t d = 0;
    const int8_t *q = (const int8_t *)c;
    for (size_t e = 0; e < len; e++) d += q[e] * a->xq[xo + e];
    acc += (float)d * (s[b] * a->xs[mb + b]);
    if (o) acc += o[b] * a->xsum[mb + b];
  })
}

void lc_qgemv_f32_accurate_scalar(const lc_qmatrix *w, const lc_qact *a, size_t n0, size_t n1, float *y,
                                  size_t ldy) {
  for (size_t n = n0; n < n1; n++)
    for (size_t i = 0; i < a->m; i++) {
      const float *r = (const float *)(const void *)(w->codes + n * w->row_bytes);
      const float *x = a->xf + i * a->row_len;
      float acc = 0.0f;
      for (size_t e = 0; e < w->k; e++) acc = fmaf(r[e], x[e], acc);
      y[i * ldy + n] = acc;
    }
}
