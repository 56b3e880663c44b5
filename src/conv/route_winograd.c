/* Winograd F(2x2, 3x3) route: placeholder until the route lands; it never plans. */
#include "conv/conv.h"
#include "util/error.h"

lc_status lc_winograd_pack(lc_conv *c, const float *w) { return LC_OK; }

lc_status lc_plan_winograd(const lc_conv *c, lc_plan *p) {
  return lc_error(LC_ERR_UNSUPPORTED, "winograd: not available");
}

void lc_run_winograd(const lc_conv *c, const float *in, float *out, unsigned char *ws) {}
