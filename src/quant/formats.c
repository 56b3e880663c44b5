/* The format table (what differs between q8, q4 and f32 apart from kernels) and the portable
 * dequantizers. */
#include <math.h>
#include <string.h>

#include "quant/qkernels.h"

void lc_dequant_q8_scalar(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  const int8_t *q = (const int8_t *)c;
  for (size_t j = 0; j < len; j++) dst[j] = fmaf((float)q[j0 + j], s, o);
}

void lc_dequant_q4_scalar(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
  for (size_t j = 0; j < len; j++) {
    size_t e = j0 + j;
    int u = (c[e >> 1] >> ((e & 1) * 4)) & 15;
    dst[j] = fmaf((float)(u - 8), s, o);
  }
}

void lc_dequant_f32(const uint8_t *c, size_t j0, size_t len, float s, float o, float *dst) {
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
    [LC_WEIGHTS_F32] = {"f32", 32, 0, 0, 0, pack_f32},
    [LC_WEIGHTS_Q8] = {"q8", 8, -128, 127, 127, pack_q8},
    [LC_WEIGHTS_Q4] = {"q4", 4, -8, 7, 7, pack_q4},
};
