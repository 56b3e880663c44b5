/* The direct route (kernel call per tap, input in place): random and targeted shapes that reach
 * every path (in-place taps, taps with columns in the padding, rows and whole taps in the padding,
 * NHWC strides, NCHW gathered strides, groups, dilation, K blocks within a tap, Q8/Q4 weights)
 * against lc_conv_reference with the conv_cases.h bound, on every kernel table; 2 threads and
 * tight budgets (the low-memory variants) bitwise equal to 1 thread unlimited; peak allocation
 * within the budget. */
#include "conv_cases.h"

static lc_context *ctx_isa[CC_NISA], *ctx2;
static const char *const isa_names[CC_NISA] = {"auto", "scalar", "avx2"};

/* Runs c through the direct route; *peak: bytes allocated by prepare+run. */
static lc_status run_direct(lc_context *cx, const cc_case *c, const float *in, float *out, size_t *peak) {
  lc_conv_desc d = c->d;
  d.route = LC_ROUTE_DIRECT;
  lc_conv *conv = NULL;
  lc_status st = lc_conv_create(cx, &d, &conv);
  if (st) return st;
  size_t before = lc_alloc_current_bytes();
  lc_alloc_reset_peak();
  lc_conv_shape shape;
  st = lc_conv_prepare(conv, c->n, c->h, c->w, &shape);
  if (st == LC_OK) st = lc_conv_run(conv, in, out, NULL, 0);
  if (peak) *peak = lc_alloc_peak_bytes() - before;
  if (st == LC_OK) TU_CHECK(shape.route == LC_ROUTE_DIRECT, "route %s", lc_route_name(shape.route));
  lc_conv_destroy(conv);
  return st;
}

/* c's weights as the library holds them (dequantized for Q8/Q4) into c->wts. */
static lc_status take_weights(cc_case *c) {
  if (c->d.weight_format == LC_WEIGHTS_F32) return LC_OK;
  lc_conv *conv = NULL;
  lc_status st = lc_conv_create(ctx_isa[0], &c->d, &conv);
  if (st == LC_OK) st = lc_conv_get_weights(conv, c->wts);
  lc_conv_destroy(conv);
  return st;
}

static void check_case(cc_case *c, const char *what) {
  char dsc[400];
  cc_describe(c, dsc, sizeof dsc);
  size_t nin = cc_in_count(c), nout = cc_out_count(c);
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float));
  float *out1 = malloc(nout * sizeof(float)), *out = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  lc_status st = take_weights(c);
  TU_CHECK(st == LC_OK, "%s: weights: %s [%s]", what, lc_last_error(), dsc);
  lc_conv_desc fd = c->d;
  fd.weight_format = LC_WEIGHTS_F32;
  cc_case fc = *c;
  fc.d = fd;
  cc_bound b = {0};
  if (st == LC_OK) st = lc_conv_reference(&fd, c->n, c->h, c->w, in, ref);
  if (st == LC_OK) st = cc_bound_make(&fc, in, &b);
  TU_CHECK(st == LC_OK, "%s: reference: %s", what, lc_last_error());
  for (int i = 0; st == LC_OK && i < CC_NISA; i++) {
    if (!ctx_isa[i]) continue;
    float *o = i == 0 ? out1 : out;
    lc_status s = run_direct(ctx_isa[i], c, in, o, NULL);
    TU_CHECK(s == LC_OK, "%s %s: %s [%s]", what, isa_names[i], lc_last_error(), dsc);
    if (s) continue;
    size_t at;
    double r = cc_err_ratio(&b, LC_ROUTE_DIRECT, o, ref, nout, &at);
    TU_CHECK(r <= 1.0, "%s %s: element %zu = %g, reference %g (%.2f x bound) [%s]", what, isa_names[i], at, o[at],
             ref[at], r, dsc);
  }
  /* The rest use the default table: out1 came from ctx_isa[0] (auto). */
  if (st == LC_OK) {
    lc_status s = run_direct(ctx2, c, in, out, NULL);
    TU_CHECK(s == LC_OK && !memcmp(out, out1, nout * sizeof(float)), "%s: 2 threads differ from 1 [%s]", what, dsc);
    /* 1 KiB: the low-memory variants (one weight row, one pixel per call) where they apply. */
    lc_context *cb = NULL;
    const size_t budget = 1024;
    TU_CHECK(cc_context(LC_ISA_AUTO, 2, budget, &cb) == LC_OK, "context");
    size_t peak = 0;
    s = run_direct(cb, c, in, out, &peak);
    TU_CHECK(s == LC_OK, "%s budget %zu: %s [%s]", what, budget, lc_last_error(), dsc);
    TU_CHECK(s || peak <= budget, "%s budget %zu: peak %zu [%s]", what, budget, peak, dsc);
    TU_CHECK(s || !memcmp(out, out1, nout * sizeof(float)), "%s budget %zu: output differs [%s]", what, budget, dsc);
    lc_context_destroy(cb);
  }
  free(b.s);
  free(in);
  free(ref);
  free(out1);
  free(out);
}

static void set_q(cc_case *c, int fmt) {
  c->d.weight_format = (lc_weight_format)fmt;
  c->d.block_size = fmt && c->d.in_channels / c->d.groups >= 16 ? 16 : 0;
  c->d.asym = fmt == LC_WEIGHTS_Q4;
}

/* A targeted shape: k x k, stride, dilation and pads (t, l, b, r) given. */
static void targeted(const char *what, lc_layout layout, int64_t cin, int64_t cout, int64_t g, int64_t h, int64_t w,
                     int64_t k, int64_t sh, int64_t sw, int64_t dil, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                     int fmt) {
  cc_case c;
  c.d = cc_desc(cin, cout, k, 0);
  c.d.groups = g;
  c.d.stride_h = sh;
  c.d.stride_w = sw;
  c.d.dilation_h = c.d.dilation_w = dil;
  c.d.pad_top = pt;
  c.d.pad_left = pl;
  c.d.pad_bottom = pb;
  c.d.pad_right = pr;
  c.d.layout = layout;
  c.d.activation = LC_ACT_RELU;
  c.n = 2;
  c.h = h;
  c.w = w;
  cc_fill(&c, 1);
  set_q(&c, fmt);
  check_case(&c, what);
  cc_free(&c);
}

static void test_targeted(void) {
  for (int l = 0; l < 2; l++) {
    lc_layout L = (lc_layout)l;
    for (int fmt = 0; fmt < 3; fmt++) {
      targeted("in place + partial columns", L, 16, 20, 1, 9, 37, 3, 1, 1, 1, 1, 1, 1, 1, fmt);
      targeted("rows and taps all padding", L, 5, 7, 1, 4, 6, 3, 1, 1, 1, 4, 4, 4, 1, fmt);
      targeted("tap columns all padding", L, 4, 9, 1, 5, 1, 3, 1, 1, 3, 3, 3, 3, 3, fmt);
      targeted("stride 2, dilation 2", L, 12, 33, 1, 15, 17, 3, 2, 2, 2, 2, 2, 1, 2, fmt);
      targeted("stride 3 wide", L, 6, 5, 1, 7, 70, 5, 1, 3, 1, 2, 2, 2, 2, fmt);
      targeted("groups", L, 15, 12, 3, 8, 9, 3, 1, 2, 1, 1, 0, 1, 2, fmt);
      targeted("K blocks in a tap", L, 300, 10, 1, 5, 6, 3, 1, 1, 1, 1, 1, 1, 1, fmt);
      targeted("long rows (one row per task)", L, 4, 5, 1, 3, 600, 3, 1, 1, 1, 1, 1, 1, 1, fmt);
    }
    targeted("9x9", L, 8, 40, 1, 12, 12, 9, 1, 1, 1, 4, 4, 4, 4, 0);
  }
}

static void test_random(void) {
  static const int kinds[] = {CC_ANY, CC_ANY, CC_BIGK, CC_BIG_IMG, CC_TINY_IMG, CC_DW, CC_WINO};
  int count = cc_quick() ? 30 : 120;
  for (int i = 0; i < count; i++) {
    cc_case c;
    cc_generate(&c, kinds[i % (int)(sizeof kinds / sizeof kinds[0])]);
    set_q(&c, i % 3 == 2 ? tu_rand_int(1, 2) : 0);
    char what[32];
    snprintf(what, sizeof what, "random %d", i);
    check_case(&c, what);
    cc_free(&c);
  }
}

/* Q8/Q4 under a budget below one dequantized weight row: LC_ERR_BUDGET with a message. */
static void test_budget_error(void) {
  cc_case c;
  lc_conv_desc_init(&c.d);
  c.d.in_channels = c.d.out_channels = 64;
  c.d.kernel_h = c.d.kernel_w = 3;
  c.n = 1;
  c.h = c.w = 8;
  cc_fill(&c, 0);
  set_q(&c, LC_WEIGHTS_Q8);
  lc_context *cb = NULL;
  TU_CHECK(cc_context(LC_ISA_AUTO, 1, 64, &cb) == LC_OK, "context");
  float *in = calloc(cc_in_count(&c), sizeof(float)), *out = calloc(cc_out_count(&c), sizeof(float));
  lc_status st = run_direct(cb, &c, in, out, NULL);
  TU_CHECK(st == LC_ERR_BUDGET && lc_last_error()[0], "Q8 direct under 64 bytes: %s", lc_status_name(st));
  free(in);
  free(out);
  lc_context_destroy(cb);
  cc_free(&c);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(23);
  size_t start = lc_alloc_current_bytes();
  static const lc_isa isas[CC_NISA] = {LC_ISA_AUTO, LC_ISA_SCALAR, LC_ISA_AVX2};
  for (int i = 0; i < CC_NISA; i++)
    if (cc_context(isas[i], 1, 0, &ctx_isa[i]) != LC_OK) ctx_isa[i] = NULL;
  TU_CHECK(ctx_isa[0] && cc_context(LC_ISA_AUTO, 2, 0, &ctx2) == LC_OK, "contexts");
  if (ctx_isa[0] && ctx2) {
    test_targeted();
    test_random();
    test_budget_error();
  }
  for (int i = 0; i < CC_NISA; i++) lc_context_destroy(ctx_isa[i]);
  lc_context_destroy(ctx2);
  TU_CHECK(lc_alloc_current_bytes() == start, "leak: %zu bytes", lc_alloc_current_bytes() - start);
  return tu_finish("test_conv_direct");
}
