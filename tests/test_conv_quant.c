/* Convolution with block-quantized (Q8/Q4) weights, every route x kernel table x format x symmetry
 * x block size on random shapes, against lc_conv_reference on the dequantized weights
 * (lc_conv_get_weights) with the fp32 routes' bound; and the dequantized weights within half a step
 * of the originals. The GEMV path, pre-quantized codes and bad input, weight bytes, budget and
 * threads are in test_conv_q{gemv,codes,budget}.c. LC_TEST_QUICK=1 runs fewer shapes. */

#include "conv_quant_common.h"

/* ---------------------------------------------------------------- part 1: routes */

static long combo_runs[NCOMBO];

/* Reshapes the random weights so the quantizer sees varied blocks. */
static void shape_weights(cc_case *c, int variant) {
  size_t K = (size_t)cc_k(c), OC = (size_t)c->d.out_channels, nw = OC * K;
  switch (variant) {
    case 1: /* off-center: asym pays off */
      for (size_t i = 0; i < nw; i++) c->wts[i] = 0.3f * c->wts[i] + 0.5f;
      break;
    case 2: /* a zero channel, a constant one, a tiny one */
      for (size_t i = 0; i < K; i++) c->wts[i] = 0.0f;
      for (size_t i = 0; OC > 1 && i < K; i++) c->wts[K + i] = 0.375f;
      for (size_t i = 0; OC > 2 && i < K; i++) c->wts[2 * K + i] *= 1e-3f;
      break;
    case 3: /* heavy-tailed: many small, a few large */
      for (size_t i = 0; i < nw; i++) c->wts[i] = c->wts[i] * c->wts[i] * c->wts[i];
      break;
    default: break;
  }
}

static double hs_worst; /* worst |deq - w| / (step / 2) seen */

static void route_shape(cc_case *c, int sidx, int per_shape) {
  size_t nin = cc_in_count(c), nw = (size_t)(c->d.out_channels * cc_k(c));
  float *in = malloc(nin * sizeof(float)), *deq = malloc(nw * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  shape_weights(c, (sidx / 2) % 4);
  int threads = 1 + (sidx & 1);
  for (int j = 0; j < per_shape; j++) {
    int ci = (sidx * per_shape + j) % NCOMBO;
    qcombo q = combo_of(ci);
    cc_case qc = *c;
    set_combo(&qc.d, q);
    char name[64], d[400], msg[300] = "";
    combo_name(q, name, sizeof name);
    lc_conv *cv = NULL;
    lc_status st = lc_conv_create(ctx[0][0], &qc.d, &cv);
    TU_CHECK(st == LC_OK, "create %s: %s", name, lc_last_error());
    if (st != LC_OK) continue;
    st = lc_conv_get_weights(cv, deq);
    TU_CHECK(st == LC_OK, "get_weights: %s", lc_last_error());
    size_t wb = lc_conv_weight_bytes(cv), ewb = expect_wbytes(&qc.d);
    lc_conv_destroy(cv);
    cc_describe(c, d, sizeof d);
    TU_CHECK(wb == ewb, "%s weight bytes %zu, documented layout gives %zu [%s]", name, wb, ewb, d);
    TU_CHECK(lc_conv_quant_blocks(&qc.d) == expect_nb(&qc.d), "%s: quant_blocks %zu, expected %zu [%s]", name,
             lc_conv_quant_blocks(&qc.d), expect_nb(&qc.d), d);
    long bad = check_half_step(&qc.d, c->wts, deq, &hs_worst, msg, sizeof msg);
    TU_CHECK(bad == 0, "%s: %ld blocks beyond half a step, first: %s [%s]", name, bad, msg, d);
    combo_runs[ci]++;
    check_routes(&qc, deq, in, threads, (sidx & 2) != 0);
  }
  free(in);
  free(deq);
  cc_free(c);
}

static void part_routes(void) {
  double t0 = lc_now_s();
  int nshapes = cc_quick() ? 60 : 400, per_shape = cc_quick() ? 2 : 4;
  static const int kinds[10] = {CC_ANY, CC_1X1, CC_DW, CC_ANY, CC_BIGK, CC_TINY_IMG, CC_ANY, CC_1X1, CC_BIG_IMG, CC_WINO};
  for (int s = 0; s < nshapes; s++) {
    cc_case c;
    cc_generate(&c, kinds[s % 10]);
    /* Channel counts beyond one block now and then (full blocks + a short tail per tap). */
    if (s % 7 == 3 && c.d.groups == 1 && c.d.kernel_h * c.d.kernel_w <= 9) {
      cc_free(&c);
      c.d.in_channels = tu_rand_int(0, 1) ? 33 + 2 * tu_rand_int(0, 60) : 257 + tu_rand_int(0, 60);
      c.d.out_channels = tu_rand_int(1, 9);
      c.n = 1;
      c.h = tu_rand_int(3, 6);
      c.w = tu_rand_int(3, 6);
      int64_t oh, ow;
      cc_out_size(&c, &oh, &ow);
      if (oh < 1 || ow < 1) c.d.auto_pad = LC_PAD_SAME_UPPER; /* kernel beyond the small image */
      cc_fill(&c, tu_rand_int(0, 1));
    }
    cc_prelu_of(&c.d, s);
    route_shape(&c, s, per_shape);
  }
  printf("part 1: %d shapes x %d format/symmetry/block combos, %.1f s\n", nshapes, per_shape, lc_now_s() - t0);
  long minc = -1;
  for (int i = 0; i < NCOMBO; i++)
    if (minc < 0 || combo_runs[i] < minc) minc = combo_runs[i];
  printf("  every combo covered on >= %ld shapes; half-step check: worst |deq - w| / (step/2) = %.4f\n", minc, hs_worst);
  TU_CHECK(minc >= (cc_quick() ? 2 : 10), "a format/symmetry/block combo ran on only %ld shapes", minc);
  for (int r = 0; r < LC_ROUTE_COUNT; r++) {
    rstat *s = &rstats[r];
    printf("  %-9s runs %5ld  failures %4ld  worst err/bound %.4f\n", lc_route_name((lc_route)r), s->ran, s->failed,
           s->worst);
    if (s->failed) printf("  MINIMAL FAILING SHAPE for %s: %s\n", lc_route_name((lc_route)r), s->fail);
    /* stem (<= 4 input channels) is rare here: tests/test_conv_stem.c runs it on Q8/Q4; i8gemm (int8
     * activations, its own bound) is tests/test_conv_qi8.c's */
    if (r != LC_ROUTE_WINOGRAD && r != LC_ROUTE_WINOGRAD4 && r != LC_ROUTE_STEM && r != LC_ROUTE_I8GEMM) TU_CHECK(s->ran >= nshapes / 10, "route %s ran only %ld times", lc_route_name((lc_route)r), s->ran);
  }
}

int main(void) {
  size_t start;
  if (cq_setup(&start)) {
    part_routes();
  }
  return cq_finish("test_conv_quant", start);
}
