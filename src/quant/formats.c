/* The format table: everything that differs between q8, q4 and f32 is looked up here. */
#include <math.h>
#include <string.h>

#include "quant/qkernels.h"

static void dequant_q8(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  const int8_t *q = (const int8_t *)c;
  for (size_t j = 0; j < len; j++) dst[j] = fmaf((float)q[j0 + j], s, o);
}

static void dequant_q4(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  for (size_t j = 0; j < len; j++) {
    size_t e = j0 + j;
    int u = (c[e >> 1] >> ((e & 1) * 4)) & 15;
    dst[j] = fmaf((float)(u - 8), s, o);
  }
}

static void dequant_f32(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  (void)s;
  (void)o;
  memcpy(dst, c + j0 * sizeof(float), len * sizeof(float));
}

static void pack_q8(const int8_t *q, size_t len, uint8_t *c) { memcpy(c, q, len); }

static void pack_q4(const int8_t *q, size_t len, uint8_t *c) {
  memset(c, 0, (len + 1) / 2);
  for (size_t j = 0; j < len; j++) c[j >> 1] |= (uint8_t)(((q[j] + 8) & 15) << ((j & 1) * 4));
}

static void pack_f32(const int8_t *q, size_t len, uint8_t *c) {
  (void)q;
  (void)len;
  (void)c; /* f32 rows are copied by the quantizer, never packed from codes */
}

const lc_qformat lc_qformats[3] = {
    [LC_WEIGHTS_F32] = {"f32", 32, 0, 0, 0, dequant_f32, pack_f32,
                        {lc_qgemv_f32_accurate_scalar, lc_qgemv_f32_accurate_avx2, NULL},
                        {NULL, NULL, NULL}},
    [LC_WEIGHTS_Q8] = {"q8", 8, -128, 127, 127, dequant_q8, pack_q8,
                       {lc_qgemv_q8_accurate_scalar, lc_qgemv_q8_accurate_avx2, NULL},
                       {lc_qgemv_q8_int8_scalar, lc_qgemv_q8_int8_avx2, lc_qgemv_q8_int8_avx512vnni}},
    [LC_WEIGHTS_Q4] = {"q4", 4, -8, 7, 7, dequant_q4, pack_q4,
                       {lc_qgemv_q4_accurate_scalar, lc_qgemv_q4_accurate_avx2, lc_qgemv_q4_accurate_avx512},
                       {lc_qgemv_q4_int8_scalar, lc_qgemv_q4_int8_avx2, lc_qgemv_q4_int8_avx512vnni}},
};
