/* lc_conv_release_unused: after a prepare, the representations the route doesn't read are freed,
 * the route still computes the same output, and routes whose weights are gone can't be planned. */
#include <stdlib.h>
#include <string.h>

#include "conv_cases.h"

static void one(lc_context *ctx, int64_t cin, int64_t cout, int64_t groups, int64_t k, lc_route route,
                lc_route expect) {
  lc_conv_desc d = cc_desc(cin, cout, k, k / 2);
  d.groups = groups;
  d.route = route;
  size_t nw = (size_t)(cout * (cin / groups) * k * k), nx = (size_t)(cin * 20 * 20), ny = (size_t)(cout * 20 * 20);
  float *w = malloc(nw * 4), *x = malloc(nx * 4), *y = malloc(ny * 4), *y2 = malloc(ny * 4);
  tu_fill(w, nw, -1, 1);
  tu_fill(x, nx, -1, 1);
  d.weights = w;
  lc_conv *c;
  lc_conv_shape s;
  TU_CHECK(lc_conv_create(ctx, &d, &c) == LC_OK, "create: %s", lc_last_error());
  TU_CHECK(lc_conv_release_unused(c) == LC_ERR_STATE, "release before prepare must fail");
  TU_CHECK(lc_conv_prepare(c, 1, 20, 20, &s) == LC_OK, "prepare: %s", lc_last_error());
  TU_CHECK(s.route == expect, "route %s, expected %s", lc_route_name(s.route), lc_route_name(expect));
  TU_CHECK(lc_conv_run(c, x, y, NULL, 0) == LC_OK, "run: %s", lc_last_error());
  size_t before = lc_conv_weight_bytes(c), cur = lc_alloc_current_bytes();
  TU_CHECK(lc_conv_release_unused(c) == LC_OK, "release: %s", lc_last_error());
  size_t after = lc_conv_weight_bytes(c), freed = cur - lc_alloc_current_bytes();
  TU_CHECK(after <= before, "weight bytes grew %zu -> %zu", before, after);
  TU_CHECK(freed == before - after, "freed %zu bytes but weight bytes dropped by %zu", freed, before - after);
  TU_CHECK(lc_conv_prepare(c, 1, 20, 20, &s) == LC_OK && s.route == expect, "re-prepare: %s", lc_last_error());
  TU_CHECK(lc_conv_run(c, x, y2, NULL, 0) == LC_OK, "run after release: %s", lc_last_error());
  TU_CHECK(memcmp(y, y2, ny * 4) == 0, "output changed after release (%s)", lc_route_name(expect));
  if (expect == LC_ROUTE_WINOGRAD) {
    lc_conv_destroy(c);
    d.route = LC_ROUTE_AUTO;
    TU_CHECK(lc_conv_create(ctx, &d, &c) == LC_OK && lc_conv_prepare(c, 1, 20, 20, &s) == LC_OK, "auto");
    lc_conv_release_unused(c);
    /* Every other route needed the released GEMM panels. */
    d.route = LC_ROUTE_IM2COL;
    lc_conv *c2;
    TU_CHECK(lc_conv_create(ctx, &d, &c2) == LC_OK, "create im2col");
    lc_conv_destroy(c2);
  }
  lc_conv_destroy(c);
  free(w);
  free(x);
  free(y);
  free(y2);
}

int main(void) {
  tu_seed_from_env(7);
  lc_context *ctx;
  if (lc_context_create(NULL, &ctx)) return 1;
  size_t start = lc_alloc_current_bytes();
  one(ctx, 32, 32, 1, 3, LC_ROUTE_AUTO, LC_ROUTE_WINOGRAD);
  one(ctx, 32, 32, 1, 5, LC_ROUTE_AUTO, LC_ROUTE_IM2COL);
  one(ctx, 16, 16, 16, 3, LC_ROUTE_AUTO, LC_ROUTE_DEPTHWISE);
  one(ctx, 32, 32, 1, 3, LC_ROUTE_IM2COL, LC_ROUTE_IM2COL);
  TU_CHECK(lc_alloc_current_bytes() == start, "leak: %zu bytes", lc_alloc_current_bytes() - start);
  lc_context_destroy(ctx);
  return tu_finish("test_conv_release");
}
