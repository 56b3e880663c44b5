/* Every route and kernel table gives bitwise the same output with 1, 2, 3 and 4 threads: work is
 * split by output tiles and the summation order never depends on the thread count. */
#include "conv_cases.h"

#define NTHR 4

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* keep what was printed if the library crashes */
  tu_seed_from_env(0x7412EADull);
  const int nshapes = cc_quick() ? 24 : 64;
  lc_context *ctx[CC_NISA][NTHR] = {{NULL}};
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < NTHR; t++) {
      lc_status st = cc_context(cc_isas[i], t + 1, 0, &ctx[i][t]);
      TU_CHECK(st == LC_OK || st == LC_ERR_UNSUPPORTED, "context %s: %s", cc_isa_names[i], lc_status_name(st));
      if (st != LC_OK) ctx[i][t] = NULL;
    }
  long compared[LC_ROUTE_COUNT] = {0}, differ[LC_ROUTE_COUNT] = {0};
  static const int kinds[7] = {CC_ANY, CC_ANY, CC_1X1, CC_DW, CC_BIGK, CC_WINO, CC_ANY};
  for (int s = 0; s < nshapes; s++) {
    cc_case c;
    cc_generate(&c, kinds[s % 7]);
    if (s % 8 == 7) { /* the stem route's shapes: <= 4 input channels, one group, NCHW */
      cc_free(&c);
      c.d.groups = 1;
      c.d.in_channels = c.d.kernel_h * c.d.kernel_w > 40 ? 1 : tu_rand_int(1, 4);
      c.d.out_channels = tu_rand_int(1, 40);
      c.d.layout = LC_NCHW;
      cc_fill(&c, 1);
    }
    /* Bigger images than the routes test so there are several tiles to split. */
    if (s % 3 == 0 && cc_macs(&c) < 50000.0) {
      c.h = c.h * 3 + 5;
      c.w = c.w * 2 + 7;
    }
    size_t nin = cc_in_count(&c), nout = cc_out_count(&c);
    float *in = malloc(nin * sizeof(float)), *o1 = malloc(nout * sizeof(float)), *on = malloc(nout * sizeof(float));
    tu_fill(in, nin, -1.0f, 1.0f);
    for (int i = 0; i < CC_NISA; i++)
      for (int r = 0; r < LC_ROUTE_COUNT && ctx[i][0]; r++) {
        lc_conv_shape shape;
        lc_status st = cc_run(ctx[i][0], &c, (lc_route)r, in, o1, &shape);
        if (st != LC_OK) continue; /* unsupported shapes; wrong statuses are test_conv_routes' job */
        for (int t = 1; t < NTHR; t++) {
          if (!ctx[i][t]) continue;
          memset(on, 0xff, nout * sizeof(float));
          st = cc_run(ctx[i][t], &c, (lc_route)r, in, on, &shape);
          TU_CHECK(st == LC_OK, "%s/%s threads %d: %s", lc_route_name((lc_route)r), cc_isa_names[i], t + 1,
                   lc_status_name(st));
          compared[r]++;
          if (st == LC_OK && memcmp(o1, on, nout * sizeof(float)) != 0) {
            char d[400];
            cc_describe(&c, d, sizeof d);
            differ[r]++;
            TU_CHECK(0, "THREADS MISMATCH route %s table %s: 1 vs %d threads differ (max |diff| %g) [%s]",
                     lc_route_name((lc_route)r), cc_isa_names[i], t + 1, tu_max_abs_diff(o1, on, nout), d);
          }
        }
      }
    free(in);
    free(o1);
    free(on);
    cc_free(&c);
  }
  for (int r = 0; r < LC_ROUTE_COUNT; r++) {
    printf("  %-9s %ld comparisons with 2-4 threads, %ld differ\n", lc_route_name((lc_route)r), compared[r],
           differ[r]);
    /* i8gemm: Q8/Q4 with int8 activations, threads compared bitwise in test_conv_qi8.c */
    TU_CHECK(compared[r] > 0 || r == LC_ROUTE_I8GEMM, "route %s never ran", lc_route_name((lc_route)r));
  }
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < NTHR; t++)
      if (ctx[i][t]) lc_context_destroy(ctx[i][t]);
  return tu_finish("test_conv_threads");
}
