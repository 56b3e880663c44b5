/* The stem route (few input channels, NCHW or NHWC) against lc_conv_reference (fp64 accumulation) on
 * random shapes: both layouts, 1-4 channels, kernels up to 7x7 (K <= 160), strides 1-3 and dilations 1-2 per axis
 * independently, random pads, odd widths across 1-3 kernel calls of 64 pixels (the AVX-512 kernel's
 * 4 vectors, the AVX2 kernel's chunks of 24), batch 1-2, every
 * activation, F32 and Q8/Q4 weights, every kernel table, 1 and 2 threads; AUTO picks it for the
 * RGB stems in both layouts; its smallest budget works and one byte less is LC_ERR_BUDGET. LC_TEST_QUICK=1: fewer. */
#include "conv_cases.h"

static lc_context *ctx[CC_NISA][2];

static int gen_count; /* shapes drawn: every fifth gets PRelu (cc_prelu_of) */

static void stem_case(cc_case *c, int big) {
  for (;;) {
    lc_conv_desc *d = &c->d;
    lc_conv_desc_init(d);
    d->in_channels = tu_rand_int(1, 4);
    d->out_channels = tu_rand_int(0, 2) ? tu_rand_int(1, 70) : 4 * tu_rand_int(1, 16);
    d->kernel_h = tu_rand_int(1, 7);
    d->kernel_w = tu_rand_int(0, 2) ? d->kernel_h : tu_rand_int(1, 7);
    d->stride_h = tu_rand_int(1, 3);
    d->stride_w = tu_rand_int(0, 2) ? d->stride_h : tu_rand_int(1, 3);
    d->dilation_h = tu_rand_int(0, 3) ? 1 : 2;
    d->dilation_w = tu_rand_int(0, 3) ? d->dilation_h : tu_rand_int(1, 2);
    cc_random_pads(d);
    cc_random_act(d);
    cc_prelu_of(d, ++gen_count);
    d->layout = gen_count % 2 ? LC_NHWC : LC_NCHW;
    c->n = tu_rand_int(0, 3) ? 1 : 2;
    c->h = tu_rand_int(1, big ? 40 : 19);
    c->w = tu_rand_int(1, big ? 150 : 31);
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh < 1 || ow < 1 || cc_k(c) > 160 || cc_macs(c) > 2e6) continue;
    cc_fill(c, tu_rand_int(0, 2) != 0);
    return;
  }
}

/* Runs c on every table and thread count through route r; returns the worst err/bound. */
static double check_case(const cc_case *c, lc_route r, const float *in, const float *ref, const cc_bound *b) {
  size_t nout = cc_out_count(c);
  float *out = malloc(nout * sizeof(float)), *avx2 = malloc(nout * sizeof(float));
  int have_avx2 = 0;
  double worst = 0.0;
  char desc[400];
  cc_describe(c, desc, sizeof desc);
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) {
      if (!ctx[i][t]) continue;
      for (size_t k = 0; k < nout; k++) out[k] = NAN;
      lc_conv_shape shape;
      lc_status st = cc_run(ctx[i][t], c, r, in, out, &shape);
      TU_CHECK(st == LC_OK, "%s %s threads %d: %s (%s) [%s]", lc_route_name(r), cc_isa_names[i], t + 1,
               lc_status_name(st), lc_last_error(), desc);
      if (st != LC_OK) continue;
      TU_CHECK(shape.route == LC_ROUTE_STEM, "%s ran as %s [%s]", lc_route_name(r), lc_route_name(shape.route), desc);
      size_t at;
      double e = cc_err_ratio(b, shape.route, out, ref, nout, &at);
      TU_CHECK(e <= 1.0, "%s %s threads %d: err/bound %.3g at %zu (out %g ref %g) [%s]", lc_route_name(r),
               cc_isa_names[i], t + 1, e, at, (double)out[at], (double)ref[at], desc);
      if (e > worst) worst = e;
      /* The AVX-512 rowconv runs the AVX2 one's fma chain per output: the same bits. */
      if (i == 1 && t == 0) {
        memcpy(avx2, out, nout * sizeof(float));
        have_avx2 = 1;
      } else if (i == 2 && have_avx2) {
        size_t bad = 0;
        while (bad < nout && memcmp(&out[bad], &avx2[bad], sizeof(float)) == 0) bad++;
        TU_CHECK(bad == nout, "%s avx512 threads %d differs from avx2 at %zu (%.9g vs %.9g) [%s]", lc_route_name(r),
                 t + 1, bad, bad < nout ? (double)out[bad] : 0.0, bad < nout ? (double)avx2[bad] : 0.0, desc);
      }
    }
  free(out);
  free(avx2);
  return worst;
}

static double check_stem(const cc_case *c, const float *in, const float *ref, const cc_bound *b) {
  return check_case(c, LC_ROUTE_STEM, in, ref, b);
}

static void test_random(void) { cc_random_shapes(stem_case, check_stem); }

/* Q8/Q4 weights: the route dequantizes the rows; compared with the reference on those weights. */
static void test_quant(void) { cc_quant_shapes(ctx[0][0], stem_case, check_stem); }

/* AUTO takes the stem route for the RGB stems, NCHW and NHWC, not for 1x1. */
static void test_auto(void) {
  static const struct {
    int k, s, layout;
    lc_route want;
  } cases[] = {{3, 1, LC_NCHW, LC_ROUTE_STEM}, {3, 2, LC_NCHW, LC_ROUTE_STEM}, {7, 2, LC_NCHW, LC_ROUTE_STEM},
               {3, 2, LC_NHWC, LC_ROUTE_STEM}, {1, 1, LC_NCHW, LC_ROUTE_GEMM1X1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_case c;
    c.d = cc_desc(3, 32, cases[i].k, cases[i].k / 2);
    c.d.stride_h = c.d.stride_w = cases[i].s;
    c.d.layout = (lc_layout)cases[i].layout;
    c.n = 1;
    c.h = c.w = 33;
    cc_fill(&c, 1);
    c.d.weights = c.wts;
    c.d.bias = c.bias;
    for (int t = 0; t < 2; t++) {
      lc_conv *conv = NULL;
      lc_conv_shape shape;
      TU_CHECK(lc_conv_create(ctx[1][t] ? ctx[1][t] : ctx[0][t], &c.d, &conv) == LC_OK &&
                   lc_conv_prepare(conv, c.n, c.h, c.w, &shape) == LC_OK,
               "auto case %zu: %s", i, lc_last_error());
      TU_CHECK(shape.route == cases[i].want, "auto case %zu threads %d: %s, expected %s", i, t + 1,
               lc_route_name(shape.route), lc_route_name(cases[i].want));
      lc_conv_destroy(conv);
    }
    cc_free(&c);
  }
}

/* The smallest budget the route plans under runs correctly; one byte less is LC_ERR_BUDGET. */
static void test_budget(void) {
  cc_case c;
  c.d = cc_desc(3, 24, 5, 2);
  c.d.stride_h = c.d.stride_w = 2;
  c.n = 1;
  c.h = 31;
  c.w = 45;
  cc_fill(&c, 1);
  c.d.weights = c.wts;
  c.d.bias = c.bias;
  c.d.route = LC_ROUTE_STEM;
  lc_conv *conv = NULL;
  lc_conv_shape shape;
  TU_CHECK(lc_conv_create(ctx[0][0], &c.d, &conv) == LC_OK && lc_conv_prepare(conv, 1, c.h, c.w, &shape) == LC_OK,
           "stem unlimited: %s", lc_last_error());
  lc_conv_destroy(conv);
  size_t need = shape.workspace_bytes;
  TU_CHECK(need > 0, "stem uses workspace");
  float *in, *ref, *out = malloc(cc_out_count(&c) * sizeof(float));
  cc_bound b;
  cc_ref_make(&c, &c, &in, &ref, &b);
  for (int t = 1; t <= 2; t++) cc_budget_edge(&c, LC_ROUTE_STEM, need, t, in, ref, out, &b);
  free(b.s);
  free(in);
  free(ref);
  free(out);
  cc_free(&c);
}

int main(void) {
  tu_seed(1212);
  cc_contexts_open(ctx);
  test_random();
  test_quant();
  test_auto();
  test_budget();
  cc_contexts_close(ctx);
  return tu_finish("test_conv_stem");
}
