/* Every route x every kernel table the CPU has x threads 1 and 2, against lc_conv_reference on
 * randomized shapes (error bound: see cc_bound in conv_cases.h). LC_TEST_QUICK=1 runs fewer shapes. */
#include "conv_cases.h"

#define NTHR 2
static const int thread_counts[NTHR] = {1, 2};

typedef struct route_stats {
  long ran, unsupported, failed;
  long failed_isa[CC_NISA];
  double worst_ratio, worst_c; /* err / bound; err / (u * K) (the "C" of C*eps*K*max|w|*max|x|) */
  double fail_macs;            /* size of the smallest failing shape kept below */
  char fail_desc[512];
} route_stats;

static route_stats stats[LC_ROUTE_COUNT];
static long auto_chose[LC_ROUTE_COUNT];
static int first_isa; /* shapes are counted on this table with 1 thread */
/* LC_TEST_ROUTE=name restricts the run to one route, LC_TEST_VERBOSE=1 names each run (debugging). */
static int route_enabled[LC_ROUTE_COUNT];
static int verbose;
static lc_context *ctx[CC_NISA][NTHR];

static void note_failure(route_stats *s, const cc_case *c, const char *what, int isa, int threads) {
  char d[400];
  cc_describe(c, d, sizeof d);
  s->failed++;
  s->failed_isa[isa]++;
  if (s->failed <= 3)
    fprintf(stderr, "ROUTE FAILURE %s isa=%s threads=%d: %s [%s]\n", lc_route_name((lc_route)(s - stats)),
            cc_isa_names[isa], threads, what, d);
  if (s->fail_desc[0] == 0 || cc_macs(c) < s->fail_macs) {
    s->fail_macs = cc_macs(c);
    snprintf(s->fail_desc, sizeof s->fail_desc, "isa=%s threads=%d %s: %s", cc_isa_names[isa], threads, what, d);
  }
}

/* Runs one shape through one route on one context and checks it; returns 1 if the route ran it. */
static int check_one(lc_context *cx, const cc_case *c, lc_route r, int isa, int threads, const float *in,
                     const float *ref, const cc_bound *b, float *out) {
  size_t nout = cc_out_count(c);
  route_stats *s = &stats[r];
  if (!route_enabled[r]) return 0;
  if (verbose) { /* names the shape before a crash */
    char d[400];
    cc_describe(c, d, sizeof d);
    fprintf(stderr, "run %s isa=%s threads=%d: %s\n", lc_route_name(r), cc_isa_names[isa], threads, d);
  }
  for (size_t i = 0; i < nout; i++) out[i] = NAN; /* unwritten outputs show up as NaN */
  lc_conv_shape shape;
  lc_status st = cc_run(cx, c, r, in, out, &shape);
  char what[300];
  if (st == LC_ERR_UNSUPPORTED && r != LC_ROUTE_AUTO) {
    if (isa == first_isa && threads == 1) s->unsupported++;
    return 0;
  }
  if (st != LC_OK) {
    snprintf(what, sizeof what, "status %s (%s)", lc_status_name(st), lc_last_error());
    note_failure(s, c, what, isa, threads);
    TU_CHECK(0, "route %s returned %s", lc_route_name(r), lc_status_name(st));
    return 0;
  }
  int64_t oh, ow;
  cc_out_size(c, &oh, &ow);
  if (shape.out_h != oh || shape.out_w != ow || (r != LC_ROUTE_AUTO && shape.route != r)) {
    snprintf(what, sizeof what, "prepare reported out %lldx%lld route %s, expected %lldx%lld", (long long)shape.out_h,
             (long long)shape.out_w, lc_route_name(shape.route), (long long)oh, (long long)ow);
    note_failure(s, c, what, isa, threads);
    TU_CHECK(0, "%s", what);
    return 0;
  }
  if (r == LC_ROUTE_AUTO && shape.route >= 0 && shape.route < LC_ROUTE_COUNT) auto_chose[shape.route]++;
  size_t at;
  double ratio = cc_err_ratio(b, shape.route, out, ref, nout, &at);
  double c_obs = fabs((double)out[at] - (double)ref[at]) / (ldexp(1.0, -24) * (double)cc_k(c));
  if (ratio > s->worst_ratio) s->worst_ratio = ratio;
  if (c_obs > s->worst_c && ratio <= 1.0) s->worst_c = c_obs;
  if (isa == first_isa && threads == 1) s->ran++;
  if (!(ratio <= 1.0)) {
    snprintf(what, sizeof what, "wrong output: element %zu = %g, reference %g (err/bound %.3g)", at, out[at], ref[at],
             ratio);
    note_failure(s, c, what, isa, threads);
    TU_CHECK(0, "%s", what);
  }
  return 1;
}

/* All routes, tables and thread counts on one shape; frees the shape. */
static void test_shape(cc_case *c, const int *have_isa, int with_residual) {
  size_t nin = cc_in_count(c), nout = cc_out_count(c);
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *out = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  cc_bound b;
  /* a residual (lc_conv_run_residual) in [-1, 1], not drawn from the generator: the shapes stay the seed's */
  float *res = with_residual ? malloc(nout * sizeof(float)) : NULL, *radd = res ? malloc(nout * sizeof(float)) : NULL;
  for (size_t i = 0; res && i < nout; i++) res[i] = (float)((int)((i * 2654435761u) >> 8 & 2047u) - 1024) / 1024.0f;
  lc_status st = res ? cc_residual_ref(c, in, res, ref, radd) : lc_conv_reference(&c->d, c->n, c->h, c->w, in, ref);
  lc_status st2 = cc_bound_make(c, in, &b);
  b.radd = radd;
  cc_residual = res;
  TU_CHECK(st == LC_OK && st2 == LC_OK, "reference failed: %s", lc_last_error());
  for (int i = 0; st == LC_OK && i < CC_NISA; i++)
    for (int t = 0; have_isa[i] && t < NTHR; t++)
      for (int r = 0; r < LC_ROUTE_COUNT; r++)
        check_one(ctx[i][t], c, (lc_route)r, i, thread_counts[t], in, ref, &b, out);
  cc_residual = NULL;
  free(res);
  free(radd);
  free(b.s);
  free(in);
  free(ref);
  free(out);
  cc_free(c);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* keep what was printed if the library crashes */
  tu_seed_from_env(0x5EEDC0DEull);
  int nshapes = cc_quick() ? 60 : 320;
  const char *only = getenv("LC_TEST_ROUTE");
  for (int r = 0; r < LC_ROUTE_COUNT; r++) route_enabled[r] = !only || lc_route_from_name(only) == r;
  verbose = getenv("LC_TEST_VERBOSE") != NULL;
  int have_isa[CC_NISA] = {0};
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < NTHR; t++) {
      lc_status st = cc_context(cc_isas[i], thread_counts[t], 0, &ctx[i][t]);
      TU_CHECK(st == LC_OK || st == LC_ERR_UNSUPPORTED, "context %s: %s", cc_isa_names[i], lc_status_name(st));
      have_isa[i] = st == LC_OK;
      if (st != LC_OK) ctx[i][t] = NULL;
    }
  TU_CHECK(have_isa[0], "the scalar table must always be available");
  for (int i = 0; i < CC_NISA; i++) printf("table %s: %s\n", cc_isa_names[i], have_isa[i] ? "tested" : "not supported");

  first_isa = have_isa[0] ? 0 : (have_isa[1] ? 1 : 2);
  static const int kinds[10] = {CC_ANY, CC_ANY, CC_BIG_IMG, CC_1X1, CC_DW, CC_BIGK, CC_TINY_IMG, CC_WINO, CC_ANY, CC_BIG_IMG};
  for (int sidx = 0; sidx < nshapes; sidx++) {
    cc_case c;
    cc_generate(&c, kinds[sidx % 10]);
    cc_post_of(&c.d, sidx);
    cc_prelu_of(&c.d, sidx);
    cc_padv_of(&c.d, sidx);
    test_shape(&c, have_isa, sidx % 3 == 2);
  }
  /* Pixel counts around the 256-pixel tile and the mr/nr panel widths, where packing loops end. */
  static const int64_t edge_w[] = {8, 9, 10, 18, 19, 254, 255, 256, 257, 258, 259, 260, 514, 515};
  int nedge = 0;
  for (size_t i = 0; i < sizeof edge_w / sizeof edge_w[0]; i++)
    for (int layout = 0; layout < 2; layout++)
      for (int rows = 1; rows <= 2; rows++, nedge++) {
        cc_case c;
        lc_conv_desc_init(&c.d);
        c.d.in_channels = 1 + (int64_t)(i % 3);
        c.d.out_channels = 1 + (int64_t)(i % 5) * 4;
        c.d.kernel_w = 3;
        c.d.kernel_h = 1;
        c.d.layout = (lc_layout)layout;
        c.n = 1;
        c.h = rows;
        c.w = rows == 1 ? edge_w[i] : edge_w[i] / 2 + 1; /* 2 rows of half the pixels */
        cc_fill(&c, 1);
        test_shape(&c, have_isa, 0);
      }
  nshapes += nedge;
  /* Depthwise 3x3 / 5x5 stride 1 and 3x3 stride 2, 8-70 px wide (the DIRECT variant reads the rows
   * in place, 1, 2 or 4 rows a call): pads 0..k-1 on the left, asymmetric, odd sizes, every fifth
   * with PRelu, some with a residual. {k, channels, left/top pad, right/bottom pad, out w, in h, stride} */
  static const int64_t dwc[][7] = {{3, 17, 1, 1, 40, 9, 1}, {3, 5, 0, 2, 41, 7, 1}, {5, 9, 2, 2, 45, 6, 1},
                                   {5, 3, 4, 0, 52, 5, 1},  {3, 33, 2, 1, 70, 4, 1}, {5, 16, 1, 3, 64, 3, 1},
                                   {3, 7, 1, 1, 8, 11, 2},  {3, 19, 1, 0, 33, 9, 2}, {3, 4, 0, 2, 40, 6, 2},
                                   {3, 9, 2, 1, 17, 2, 2}};
  for (size_t i = 0; i < sizeof dwc / sizeof dwc[0]; i++, nshapes++) {
    cc_case c;
    lc_conv_desc_init(&c.d);
    c.d.in_channels = c.d.out_channels = c.d.groups = dwc[i][1];
    c.d.kernel_h = c.d.kernel_w = dwc[i][0];
    c.d.stride_h = c.d.stride_w = dwc[i][6];
    c.d.pad_left = c.d.pad_top = dwc[i][2];
    c.d.pad_right = c.d.pad_bottom = dwc[i][3];
    c.d.activation = (lc_activation)(i % 5);
    c.n = 1 + (int64_t)(i % 2);
    c.h = dwc[i][5];
    /* output width dwc[i][4]: (w + pads - k) / s + 1 */
    c.w = (dwc[i][4] - 1) * dwc[i][6] + dwc[i][0] - dwc[i][2] - dwc[i][3] + (int64_t)(i % 2) * (dwc[i][6] - 1);
    cc_fill(&c, (int)(i % 2));
    cc_prelu_of(&c.d, (int)i);
    test_shape(&c, have_isa, i % 3 == 0);
  }
  /* K >= 2048 (im2col's panel-first order, route_gemm.c): stride 1 and 2, odd sizes, pads, both layouts. */
  static const int64_t bigk[][6] = {{256, 40, 3, 2, 15, 13}, {230, 17, 3, 1, 9, 11}, {27, 33, 9, 1, 12, 10},
                                    {512, 9, 3, 2, 7, 9}};
  for (size_t i = 0; i < sizeof bigk / sizeof bigk[0]; i++, nshapes++) {
    cc_case c;
    lc_conv_desc_init(&c.d);
    c.d.in_channels = bigk[i][0];
    c.d.out_channels = bigk[i][1];
    c.d.kernel_h = c.d.kernel_w = bigk[i][2];
    c.d.stride_h = c.d.stride_w = bigk[i][3];
    c.d.pad_top = c.d.pad_left = bigk[i][2] / 2;
    c.d.pad_bottom = (int64_t)(i % 2);
    c.d.pad_right = bigk[i][2] / 2;
    c.d.layout = (lc_layout)(i % 2);
    c.n = 1;
    c.h = bigk[i][4];
    c.w = bigk[i][5];
    cc_fill(&c, 1);
    cc_post_of(&c.d, (int)i * 4 + 3);
    test_shape(&c, have_isa, (int)(i % 2));
  }

  printf("%d shapes; per route: shapes run / unsupported / failures (any table, any threads), worst err/bound, "
         "worst err/(u*K):\n", nshapes);
  for (int r = 0; r < LC_ROUTE_COUNT; r++) {
    route_stats *s = &stats[r];
    printf("  %-9s ran %4ld  unsupported %4ld  failures %4ld  err/bound %.4f  err/(u*K) %.3f\n",
           lc_route_name((lc_route)r), s->ran, s->unsupported, s->failed, s->worst_ratio, s->worst_c);
    if (s->failed)
      printf("  %-9s failures per table: scalar %ld, avx2 %ld, avx512 %ld\n", "", s->failed_isa[0], s->failed_isa[1],
             s->failed_isa[2]);
    if (s->failed) printf("  MINIMAL FAILING SHAPE for %s: %s\n", lc_route_name((lc_route)r), s->fail_desc);
    /* Every route must have run a good share of the shapes (1/10 of them are aimed at each special route). */
    /* i8gemm runs Q8/Q4 weights only (test_conv_qi8.c). */
    TU_CHECK(!route_enabled[r] || r == LC_ROUTE_I8GEMM || s->ran >= nshapes / 16, "route %s ran only %ld of %d shapes", lc_route_name((lc_route)r), s->ran,
             nshapes);
  }
  printf("AUTO chose:");
  for (int r = 1; r < LC_ROUTE_COUNT; r++) printf(" %s %ld", lc_route_name((lc_route)r), auto_chose[r]);
  printf("\n");
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < NTHR; t++)
      if (ctx[i][t]) lc_context_destroy(ctx[i][t]);
  return tu_finish("test_conv_routes");
}
