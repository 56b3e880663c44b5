/* The taprows route (NCHW, B rows gathered by whole output rows) against lc_conv_reference (fp64
 * accumulation) on random shapes: 1-300 input channels (so the K block holds whole kernel rows of
 * taps, or LC_KC rows that split them), kernels up to 5x5 with 3-wide ones favoured (the fused
 * three-tap gather), strides 1-4 and dilations 1-2 per axis, random pads, odd widths, groups 1-3,
 * batch 1-3, every activation, F32 and Q8/Q4 weights, every kernel table, 1 and 2 threads (the same
 * bits for both), and 9x9 stride 1; AUTO takes it where measured; its smallest budget works and one
 * byte less is LC_ERR_BUDGET. LC_TEST_QUICK=1: fewer. */
#include "conv/conv.h"
#include "conv_cases.h"

static lc_context *ctx[CC_NISA][2];

static int gen_count; /* shapes drawn: every fifth gets PRelu (cc_prelu_of) */

static void taprows_case(cc_case *c, int big) {
  for (;;) {
    lc_conv_desc *d = &c->d;
    lc_conv_desc_init(d);
    d->groups = tu_rand_int(0, 4) ? 1 : tu_rand_int(2, 3);
    d->in_channels = d->groups * (tu_rand_int(0, 3) ? tu_rand_int(1, 40) : tu_rand_int(41, 300));
    d->out_channels = d->groups * tu_rand_int(1, 40);
    d->kernel_h = tu_rand_int(0, 2) ? 3 : tu_rand_int(1, 5);
    d->kernel_w = tu_rand_int(0, 2) ? 3 : tu_rand_int(1, 5);
    d->stride_h = tu_rand_int(0, 2) ? 2 : tu_rand_int(1, 4);
    d->stride_w = tu_rand_int(0, 2) ? 2 : tu_rand_int(1, 4);
    d->dilation_h = tu_rand_int(0, 3) ? 1 : 2;
    d->dilation_w = tu_rand_int(0, 3) ? 1 : 2;
    d->layout = LC_NCHW;
    cc_random_pads(d);
    cc_random_act(d);
    cc_prelu_of(d, ++gen_count);
    c->n = tu_rand_int(0, 3) ? 1 : tu_rand_int(2, 3);
    c->h = tu_rand_int(1, big ? 40 : 19);
    c->w = tu_rand_int(1, big ? 130 : 37);
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh < 1 || ow < 1 || cc_macs(c) > 3e6) continue;
    cc_fill(c, tu_rand_int(0, 2) != 0);
    return;
  }
}

/* Runs c on every table and thread count through taprows; returns the worst err/bound. */
static double check_case(const cc_case *c, const float *in, const float *ref, const cc_bound *b) {
  size_t nout = cc_out_count(c);
  float *out = malloc(nout * sizeof(float)), *one = malloc(nout * sizeof(float));
  double worst = 0.0;
  char desc[400];
  cc_describe(c, desc, sizeof desc);
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) {
      if (!ctx[i][t]) continue;
      for (size_t k = 0; k < nout; k++) out[k] = NAN;
      lc_conv_shape shape;
      lc_status st = cc_run(ctx[i][t], c, LC_ROUTE_TAPROWS, in, out, &shape);
      TU_CHECK(st == LC_OK, "taprows %s threads %d: %s (%s) [%s]", cc_isa_names[i], t + 1, lc_status_name(st),
               lc_last_error(), desc);
      if (st != LC_OK) continue;
      TU_CHECK(shape.route == LC_ROUTE_TAPROWS, "ran as %s [%s]", lc_route_name(shape.route), desc);
      size_t at;
      double e = cc_err_ratio(b, shape.route, out, ref, nout, &at);
      TU_CHECK(e <= 1.0, "taprows %s threads %d: err/bound %.3g at %zu (out %g ref %g) [%s]", cc_isa_names[i], t + 1,
               e, at, (double)out[at], (double)ref[at], desc);
      if (e > worst) worst = e;
      /* Each output's sum doesn't depend on the tiles the threads took: the same bits. */
      if (t == 0) {
        memcpy(one, out, nout * sizeof(float));
      } else if (ctx[i][0]) {
        size_t bad = 0;
        while (bad < nout && memcmp(&out[bad], &one[bad], sizeof(float)) == 0) bad++;
        TU_CHECK(bad == nout, "taprows %s: 2 threads differ from 1 at %zu [%s]", cc_isa_names[i], bad, desc);
      }
    }
  free(out);
  free(one);
  return worst;
}

/* c against the reference (check_case), then c's buffers released. */
static void check_and_free(cc_case *c) {
  float *in, *ref;
  cc_bound b;
  cc_ref_make(c, c, &in, &ref, &b);
  check_case(c, in, ref, &b);
  free(b.s);
  free(in);
  free(ref);
  cc_free(c);
}

static void test_random(void) { cc_random_shapes(taprows_case, check_case); }

/* Q8/Q4 weights: dequantized per weight panel; compared with the reference on those weights. */
static void test_quant(void) { cc_quant_shapes(ctx[0][0], taprows_case, check_case); }

/* The AVX2 table's choice: taprows for 3x3 stride 2 with K <= 2304 (the three-tap gather, no wide
 * tile; fp32 to 4608) and fp32 1x1 stride 2 with K <= 512 at 7-14 px outputs, fp32 9x9 from 20 px
 * outputs as shifted F(4x4) (route_winograd4.c), im2col otherwise. */
static lc_route avx2_want(int cin, int ih, int k, int s, lc_weight_format fmt) {
  int f32 = fmt == LC_WEIGHTS_F32, oh = (ih - 1) / 2 + 1;
  if (k == 3 && s == 2 && cin * 9 <= (f32 ? 4608 : 2304)) return LC_ROUTE_TAPROWS;
  if (k == 1 && s == 2 && f32 && cin <= 512 && oh >= 7 && oh <= 14) return LC_ROUTE_TAPROWS;
  if (k == 9 && s == 1 && ih >= 20 && cin >= 16 && fmt == LC_WEIGHTS_F32) return LC_ROUTE_WINOGRAD4;
  return LC_ROUTE_IM2COL;
}

/* One AUTO case: cin -> 16 channels, k x k, stride s, at ih px on every table's context with
 * `threads`; taprows expected on the AVX-512 table where `fused`, avx2_want's on the AVX2 table,
 * im2col on the scalar one. */
static void auto_case(size_t i, int cin, int ih, int k, int s, int threads, lc_weight_format fmt, int fused) {
  cc_case c;
  c.d = cc_desc(cin, 16, k, k / 2);
  c.d.stride_h = c.d.stride_w = s;
  c.d.weight_format = fmt;
  c.n = 1;
  c.h = c.w = ih;
  cc_fill(&c, 1);
  c.d.weights = c.wts;
  c.d.bias = c.bias;
  int avx512 = ctx[2][0] != NULL;
  for (int isa = 1; isa < CC_NISA; isa++) {
    lc_context *cx = ctx[isa][threads - 1];
    if (!cx) continue;
    lc_route want = isa == 2 && avx512 && fused ? LC_ROUTE_TAPROWS : LC_ROUTE_IM2COL;
    if (isa == 1) want = avx2_want(cin, ih, k, s, fmt);
    lc_conv *conv = NULL;
    lc_conv_shape shape;
    TU_CHECK(lc_conv_create(cx, &c.d, &conv) == LC_OK && lc_conv_prepare(conv, c.n, c.h, c.w, &shape) == LC_OK,
             "auto case %zu (format %d): %s", i, (int)fmt, lc_last_error());
    TU_CHECK(shape.route == want, "auto case %zu (format %d) %s threads %d: %s, expected %s", i, (int)fmt,
             cc_isa_names[isa], threads, lc_route_name(shape.route), lc_route_name(want));
    lc_conv_destroy(conv);
  }
  cc_free(&c);
}

/* AUTO: taprows for 3x3 stride 2 fp32 NCHW with K <= 2304 on a table with the three-tap gather
 * (AVX2, AVX-512; any K with the wide tile, K <= 4608 on AVX2), for 1x1 stride 2 with K <= 512 at
 * 7-32 px outputs (7-20 px at 2+ threads) on a table with the wide tile and the row-block gather
 * (AVX-512; AVX2: 7-14 px), and
 * for 9x9 stride 1 at <= 40 px outputs at 1 thread with the wide tile; im2col otherwise. */
static void test_auto(void) {
  static const struct {
    int cin, ih, k, s, threads;
    int fused; /* 1: taprows on the AVX-512 tables */
  } cases[] = {{64, 112, 3, 2, 1, 1}, {64, 112, 3, 2, 2, 1}, {128, 56, 3, 2, 1, 1}, {128, 56, 3, 2, 2, 1},
               {512, 14, 3, 2, 1, 1},  {513, 14, 3, 2, 1, 1}, {960, 14, 3, 2, 2, 1}, {64, 112, 1, 2, 1, 0},
               {64, 56, 1, 2, 1, 1},   {64, 56, 1, 2, 2, 0},  {64, 40, 1, 2, 2, 1},  {64, 42, 1, 2, 2, 0},
               {256, 28, 1, 2, 1, 1},  {512, 28, 1, 2, 1, 1}, {513, 28, 1, 2, 1, 0}, {64, 64, 1, 2, 1, 1},
               {64, 66, 1, 2, 1, 0},   {64, 14, 1, 2, 1, 1},  {64, 14, 1, 2, 2, 1},  {64, 12, 1, 2, 1, 0},
               {24, 40, 9, 1, 1, 1},   {24, 17, 9, 1, 1, 1},  {24, 40, 9, 1, 2, 0},  {24, 42, 9, 1, 1, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    auto_case(i, cases[i].cin, cases[i].ih, cases[i].k, cases[i].s, cases[i].threads, LC_WEIGHTS_F32, cases[i].fused);
}

/* AUTO with Q8/Q4 weights: taprows for 3x3 stride 2 with K <= 2304 on the AVX2 and AVX-512 tables
 * (the three-tap gather), im2col above and for the fp32-only rules (1x1 stride 2, 9x9). */
static void test_auto_q(void) {
  static const struct {
    int cin, ih, k, s, threads, fmt; /* fmt: 1 q8, 2 q4 */
    int fused;
  } cases[] = {{64, 112, 3, 2, 1, 2, 1},  {64, 112, 3, 2, 2, 1, 1}, {128, 56, 3, 2, 1, 1, 1}, {256, 28, 3, 2, 2, 2, 1},
               {257, 28, 3, 2, 1, 2, 0},  {512, 14, 3, 2, 1, 1, 0}, {64, 56, 1, 2, 1, 2, 0},  {24, 40, 9, 1, 1, 2, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    auto_case(i, cases[i].cin, cases[i].ih, cases[i].k, cases[i].s, cases[i].threads,
              cases[i].fmt == 1 ? LC_WEIGHTS_Q8 : LC_WEIGHTS_Q4, cases[i].fused);
}

/* AUTO for 9x9 stride 1 fp32 with 32+ channels on both sides: the shifted F(4x4) (winograd4) on the
 * AVX-512 table from 40 px outputs (20 from 128 input channels), else taprows / im2col; on the AVX2
 * table from 20 px (avx2_want). */
static void test_auto_nine(void) {
  static const struct {
    int cin, cout, ih, threads;
    lc_route want; /* on the AVX-512 table */
  } cases[] = {{64, 64, 40, 1, LC_ROUTE_WINOGRAD4}, {64, 64, 40, 2, LC_ROUTE_WINOGRAD4}, {32, 33, 48, 1, LC_ROUTE_WINOGRAD4},
               {128, 32, 20, 1, LC_ROUTE_WINOGRAD4}, {127, 32, 20, 1, LC_ROUTE_TAPROWS}, {64, 31, 40, 1, LC_ROUTE_TAPROWS},
               {31, 64, 40, 1, LC_ROUTE_TAPROWS}, {64, 64, 39, 2, LC_ROUTE_IM2COL}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cc_case c;
    c.d = cc_desc(cases[i].cin, cases[i].cout, 9, 4);
    c.n = 1;
    c.h = c.w = cases[i].ih;
    cc_fill(&c, 1);
    c.d.weights = c.wts;
    c.d.bias = c.bias;
    for (int isa = 1; isa < CC_NISA; isa++) {
      lc_context *cx = ctx[isa][cases[i].threads - 1];
      if (!cx) continue;
      lc_route want = isa == 2 ? cases[i].want
                      : isa == 1 ? avx2_want(cases[i].cin, cases[i].ih, 9, 1, LC_WEIGHTS_F32)
                                 : LC_ROUTE_IM2COL;
      lc_conv *conv = NULL;
      lc_conv_shape shape;
      TU_CHECK(lc_conv_create(cx, &c.d, &conv) == LC_OK && lc_conv_prepare(conv, c.n, c.h, c.w, &shape) == LC_OK,
               "auto nine %zu: %s", i, lc_last_error());
      TU_CHECK(shape.route == want, "auto nine %zu %s threads %d: %s, expected %s", i, cc_isa_names[isa],
               cases[i].threads, lc_route_name(shape.route), lc_route_name(want));
      lc_conv_destroy(conv);
    }
    cc_free(&c);
  }
}

/* 9x9 stride 1, which AUTO runs through taprows at <= 40 px outputs at 1 thread: odd channel
 * counts and widths, pads 4 and 3 (the random shapes stop at 5x5 kernels). */
static void test_nine(void) {
  static const int shapes[][4] = {{24, 16, 17, 4}, {37, 24, 40, 4}, {5, 7, 23, 3}}; /* cin, cout, h, pad */
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    cc_case c;
    c.d = cc_desc(shapes[i][0], shapes[i][1], 9, shapes[i][3]);
    c.n = 1;
    c.h = shapes[i][2];
    c.w = shapes[i][2] + 3;
    cc_fill(&c, 1);
    c.d.weights = c.wts;
    c.d.bias = c.bias;
    check_and_free(&c);
  }
}

/* One tile for 2 threads: the weight-panel split's tasks share the tile's gather (plan variant 1),
 * each gathering a share of the channels (odd counts, one channel: one task gathers none), then
 * running their panels; several K blocks, the three-tap gather, 1x1 and 5-wide kernels. */
static void test_shared(void) {
  static const int shapes[][6] = {/* cin, cout, k, h, w, stride */
                                  {37, 29, 3, 9, 11, 2}, {300, 61, 3, 9, 9, 2}, {45, 70, 1, 15, 13, 2},
                                  {1, 7, 3, 7, 9, 2},     {5, 43, 5, 8, 8, 2},   {131, 33, 3, 6, 6, 1}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    cc_case c;
    c.d = cc_desc(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][2] / 2);
    c.d.stride_h = c.d.stride_w = shapes[i][5];
    c.n = 1;
    c.h = shapes[i][3];
    c.w = shapes[i][4];
    cc_fill(&c, 1);
    c.d.weights = c.wts;
    c.d.bias = c.bias;
    c.d.route = LC_ROUTE_TAPROWS;
    int shared = 0;
    for (int isa = 0; isa < CC_NISA; isa++) {
      if (!ctx[isa][1]) continue;
      lc_conv *conv = NULL;
      lc_conv_shape shape;
      TU_CHECK(lc_conv_create(ctx[isa][1], &c.d, &conv) == LC_OK &&
                   lc_conv_prepare(conv, c.n, c.h, c.w, &shape) == LC_OK,
               "shared %zu: %s", i, lc_last_error());
      if (conv) {
        TU_CHECK(conv->plan.ocsplit == 1 || conv->plan.variant == 1, "shared %zu %s: split %zu without it", i,
                 cc_isa_names[isa], conv->plan.ocsplit);
        shared += conv->plan.variant == 1;
      }
      lc_conv_destroy(conv);
    }
    TU_CHECK(shared > 0, "shared %zu: no table took the shared gather", i);
    check_and_free(&c);
  }
}

/* The smallest budget the route plans under runs correctly; one byte less is LC_ERR_BUDGET. */
static void test_budget(void) {
  cc_case c;
  c.d = cc_desc(20, 24, 3, 1);
  c.d.stride_h = c.d.stride_w = 2;
  c.n = 1;
  c.h = 31;
  c.w = 45;
  cc_fill(&c, 1);
  c.d.weights = c.wts;
  c.d.bias = c.bias;
  c.d.route = LC_ROUTE_TAPROWS;
  float *in, *ref, *out = malloc(cc_out_count(&c) * sizeof(float));
  cc_bound b;
  cc_ref_make(&c, &c, &in, &ref, &b);
  for (int t = 1; t <= 2; t++) {
    /* the least: tiles of one output row, as the plan falls back to them */
    lc_context *cx;
    lc_conv_shape shape;
    size_t lo = 0, need = (size_t)1 << 30; /* lo fails, need runs: bisect */
    while (need - lo > 1) {
      size_t mid = lo + (need - lo) / 2;
      TU_CHECK(cc_context(LC_ISA_AUTO, t, mid, &cx) == LC_OK, "context");
      if (cc_run(cx, &c, LC_ROUTE_TAPROWS, in, out, &shape) == LC_OK) need = mid;
      else lo = mid;
      lc_context_destroy(cx);
    }
    cc_budget_edge(&c, LC_ROUTE_TAPROWS, need, t, in, ref, out, &b);
  }
  free(b.s);
  free(in);
  free(ref);
  free(out);
  cc_free(&c);
}

int main(void) {
  tu_seed(1213);
  cc_contexts_open(ctx);
  test_random();
  test_quant();
  test_auto();
  test_auto_q();
  test_auto_nine();
  test_nine();
  test_shared();
  test_budget();
  cc_contexts_close(ctx);
  return tu_finish("test_conv_taprows");
}
