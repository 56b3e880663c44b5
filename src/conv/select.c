/* Route selector for LC_ROUTE_AUTO. Every size product is checked; when a route can't run the
 * shape or doesn't fit the budget the next candidate is tried, ending at direct (no workspace). */
#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"

lc_status lc_select_route(const lc_conv *c, lc_conv_plan *p) {
  const lc_conv_desc *d = &c->d;
  lc_route order[6];
  int n = 0;
  if (c->depthwise) order[n++] = LC_ROUTE_DEPTHWISE;
  if (d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1 && !p->pt && !p->pl && !p->pb &&
      !p->pr)
    order[n++] = LC_ROUTE_GEMM1X1;
  /* 3x3 stride 1: Winograd F(2x2,3x3) does 2.25x fewer multiplies; 1.6-2.2x faster than im2col
   * from 16 channels (route_winograd.c). */
  if ((c->wwino || c->qw) && lc_winograd_auto(c)) order[n++] = LC_ROUTE_WINOGRAD;
  /* NHWC direct (input read in place per tap, route_direct.c) beat im2col on every measured shape,
   * 1 thread: 9x9 256ch 20..160px 1.1-1.6x, 3x3 32/64ch 1.3-1.6x, 3x3 s2 3ch 1.1x, q4 1.2x.
   * NCHW direct was slower on 9x9 256ch <= 80px (B rows at the plane stride) and sh2 3ch. */
  if (d->layout == LC_NHWC && d->groups == 1) order[n++] = LC_ROUTE_DIRECT;
  /* igemm is never chosen: it packs each pixel's whole K per chunk and streams all the weights per
   * chunk; im2col blocks K, keeps larger tiles and less memory, and measured faster (1 thread:
   * 9x9 256ch at 80 px 0.71 vs 1.28 s; 3x3 64ch at 56 px 2.7 vs 2.9 ms). igemm serves when asked. */
  order[n++] = LC_ROUTE_IM2COL;
  order[n++] = LC_ROUTE_DIRECT;
  for (int i = 0; i < n; i++) {
    lc_conv_plan q = *p;
    if (!lc_conv_has_weights_for(c, order[i])) continue;
    lc_status st = lc_route_def_of(order[i])->plan(c, &q);
    if (st == LC_OK) {
      *p = q;
      return LC_OK;
    }
    if (st != LC_ERR_UNSUPPORTED && st != LC_ERR_BUDGET) return st;
  }
  return lc_error(LC_ERR_INTERNAL, "conv: no route could be planned");
}
