/* Winograd F(2x2, 3x3) route: random eligible shapes against lc_conv_reference on every kernel table,
 * bitwise identity across thread counts and chunk sizes (budgets), statuses for ineligible shapes and
 * tight budgets, and allocation failures at create.
 *
 * Error bound. Per output, out = sum_xi a_xi M_xi + bias, M_xi = sum_ic U_xi,ic V_xi,ic, with
 * V = B^T d B (2 roundings: rows then columns, entries of B are 0/+-1), U = G g G^T (fp32, 4
 * roundings: two sums per pass; the factors 1/2 are exact), the ic sum (IC roundings), A^T M A (4
 * roundings) and the bias (1). Every term thus sees at most IC + 11 roundings, so |out - exact| <= gamma(IC + 8) * (S_w + |bias|), where
 * S_w = sum_xi |a_xi| sum_ic |U||V|. In 1-D, sum_x |a_x| |u_x| |v_x| <= 8 X W for either output
 * (|u| <= W, 1.5 W, 1.5 W, W; |v| <= 2 X; X = max|x|, W = max|w|), and the 2-D transforms are tensor
 * products, so S_w <= 64 * IC * X * W. With K = 9 * IC this is c * K * u * X * W with
 * c = 64 (IC + 11) / 9: a worst case (like the cc_bound of direct summation it is quadratic in IC);
 * the test also prints the observed err / (u K X W), the typical c. Activations as in conv_cases.h:
 * Lipschitz factor L and 8u|ref| for their own rounding.
 * Q8/Q4 weights (transformed per panel while running, never held whole): the same bound on the
 * dequantized weights (lc_conv_get_weights), and up to 128 input channels per group bitwise the
 * output of an fp32 conv created from those values (beyond, the K blocks differ); threads and
 * budgets bitwise too, and the peak allocation within the smallest budget that plans.
 *
 * F(4x4, 3x3) (route winograd4): the same argument with 6x6 tiles. 1-D: |v| <= 10 X (rows of
 * B^T: L1 norms 10, 10, 10, 6, 6, 10), |u| <= W/4, W/2, W/2, 7W/24, 7W/24, W, and over the outputs
 * max sum_x |a_x| |u_x| / W = 1 + 2 (8 * 7/24) + 1 = 20/3 (last row of A^T: 0 1 -1 8 -8 1), so
 * S_w <= (10 * 20/3)^2 IC X W = 4444.5 IC X W. Roundings: V 2 x 4, U 6 (fp32 for fp32 and Q8/Q4
 * weights alike, kernels/wino.h: 4 sums, the scale and its product, each bounded by |G||g||G^T|,
 * test_wino_qweights; it was 1 when fp32 U came from double), the ic sum IC (Q8/Q4: K blocks of 128,
 * no more roundings), A^T M A 2 x 5, bias 1: at most IC + 25. Worst case c = 4444.5 (IC + 25) / 9,
 * about 70x F(2x2)'s: the price of the larger points; the observed c is printed next to F(2x2)'s.
 * Q8/Q4 F(4x4) transforms U per task from the codes (none kept): the same bound on the dequantized
 * weights, and up to 128 input channels per group the fp32 twin's bits. */
#include "conv_cases.h"

#define NSHAPES 160

static int gen_count; /* shapes drawn: every fifth gets PRelu (cc_prelu_of) */

static double wino_bound(const cc_case *c, double ref, double xw, double bmax, int f4) {
  /* A 3a x 3b kernel runs as S = ab shifted 3x3 ones whose outputs add up: S times the terms, S - 1
   * more roundings. */
  double S = (double)((c->d.kernel_h / 3) * (c->d.kernel_w / 3));
  double u = ldexp(1.0, -24), ic = (double)(c->d.in_channels / c->d.groups), n = ic + (f4 ? 24.0 + S : 11.0);
  double s = (f4 ? 40000.0 / 9.0 : 64.0) * S;
  return cc_act_lip(&c->d) * (n * u / (1.0 - n * u)) * (s * ic * xw + bmax) + 8.0 * u * fabs(ref) + 1e-30;
}

/* Largest |got - ref| / wino_bound over the output (NaN counts as the largest), and where. */
static double worst_err_ratio(const cc_case *c, const float *got, const float *ref, size_t n, double xw, double bm,
                              int f4, size_t *at) {
  double worst = 0.0;
  *at = 0;
  for (size_t k = 0; k < n; k++) {
    double r = fabs((double)got[k] - (double)ref[k]) / wino_bound(c, ref[k], xw, bm, f4);
    if (!(r <= worst)) worst = r, *at = k;
  }
  return worst;
}

/* One random eligible shape: 3x3, stride 1, dilation 1, pads 0..2 (asymmetric) or auto_pad. split:
 * several weight panels on few tiles, so that 2-3 threads split a chunk's panels and, from 256
 * input channels, share its V (route_winograd.c WINO_SHARED_V), with pad values on some. */
static void gen_shape(cc_case *c, int big, int wide, int split) {
  lc_conv_desc *d = &c->d;
  lc_conv_desc_init(d);
  int64_t g = tu_rand_int(0, 3) ? 1 : tu_rand_int(2, 3);
  int64_t cig = big ? tu_rand_int(250, 300) : tu_rand_int(1, 19), cog = big ? tu_rand_int(1, 12) : tu_rand_int(1, 21);
  /* split: with 256+ input channels the V is shared (WINO_SHARED_V_MIN_CIN), with fewer repeated */
  if (split) cig = tu_rand_int(0, 1) ? tu_rand_int(1, 40) : tu_rand_int(256, 280), cog = tu_rand_int(33, 100);
  if (cig == 1 && cog == 1) cog = 2; /* groups == channels is depthwise (its own route) */
  d->in_channels = g * cig;
  d->out_channels = g * cog;
  d->groups = g;
  d->kernel_h = d->kernel_w = 3;
  d->auto_pad = tu_rand_int(0, 7) ? LC_PAD_NOTSET : (lc_auto_pad)tu_rand_int(1, 3);
  d->pad_top = tu_rand_int(0, 2);
  d->pad_left = tu_rand_int(0, 2);
  d->pad_bottom = tu_rand_int(0, 2);
  d->pad_right = tu_rand_int(0, 2);
  d->layout = (lc_layout)tu_rand_int(0, 1);
  cc_random_act(d);
  cc_prelu_of(d, ++gen_count);
  if (split) cc_padv_of(d, tu_rand_int(0, 1) ? 3 : 0);
  c->n = tu_rand_int(0, 3) ? 1 : 2;
  for (;;) {
    c->h = big || split ? tu_rand_int(1, 9) : tu_rand_int(1, 19);
    c->w = big || split ? tu_rand_int(1, 9) : tu_rand_int(1, 19);
    if (tu_rand_int(0, 5) == 0) c->w = c->w * 3 + 1; /* several tile rows per panel and the reverse */
    if (wide) c->h = tu_rand_int(1, 5), c->w = tu_rand_int(129, 150); /* rows of more than 64 tiles */
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh >= 1 && ow >= 1) break;
  }
  cc_fill(c, tu_rand_int(0, 2) != 0);
}

/* A random kernel of 3a x 3b taps (6x6, 9x9, 3x9, ...; not 3x3) for winograd4's shifted 3x3 kernels,
 * pads 0 .. kernel / 2 + 1. */
static void gen_shape_k(cc_case *c) {
  static const int64_t ks[3] = {3, 6, 9};
  lc_conv_desc *d = &c->d;
  lc_conv_desc_init(d);
  int64_t g = tu_rand_int(0, 4) ? 1 : 2, cig = tu_rand_int(1, 19), cog = tu_rand_int(1, 40);
  if (cig == 1 && cog == 1) cog = 2; /* groups == channels is depthwise (its own route) */
  d->in_channels = g * cig;
  d->out_channels = g * cog;
  d->groups = g;
  do {
    d->kernel_h = ks[tu_rand_int(0, 2)];
    d->kernel_w = ks[tu_rand_int(0, 2)];
  } while (d->kernel_h * d->kernel_w == 9);
  d->pad_top = tu_rand_int(0, (int)d->kernel_h / 2 + 1);
  d->pad_bottom = tu_rand_int(0, (int)d->kernel_h / 2 + 1);
  d->pad_left = tu_rand_int(0, (int)d->kernel_w / 2 + 1);
  d->pad_right = tu_rand_int(0, (int)d->kernel_w / 2 + 1);
  d->layout = (lc_layout)tu_rand_int(0, 1);
  cc_random_act(d);
  cc_prelu_of(d, ++gen_count);
  c->n = tu_rand_int(0, 3) ? 1 : 2;
  for (;;) {
    c->h = tu_rand_int(1, 26);
    c->w = tu_rand_int(1, 26);
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh >= 1 && ow >= 1) break;
  }
  cc_fill(c, tu_rand_int(0, 2) != 0);
}

static lc_context *ctxs[CC_NISA];
static lc_context *ctx_thr[3]; /* default table: 2, 3 threads, and 2 threads with a small budget */
static int top; /* best table the CPU has */
static double worst_ratio[2], worst_c[2]; /* [F(2x2), F(4x4)] */
static long ran[2], compared[2], shifted;

static void check_shape(const cc_case *c, lc_route route) {
  int f4 = route == LC_ROUTE_WINOGRAD4;
  size_t nin = cc_in_count(c), nout = cc_out_count(c), nw = (size_t)(c->d.out_channels * cc_k(c));
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float));
  float *o1 = malloc(nout * sizeof(float)), *on = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  char desc[400];
  cc_describe(c, desc, sizeof desc);
  lc_status st = lc_conv_reference(&c->d, c->n, c->h, c->w, in, ref);
  TU_CHECK(st == LC_OK, "reference: %s", lc_last_error());
  float xm = 0.0f, wm = 0.0f, bm = 0.0f;
  for (size_t i = 0; i < nin; i++) xm = fmaxf(xm, fabsf(in[i]));
  for (size_t i = 0; i < nw; i++) wm = fmaxf(wm, fabsf(c->wts[i]));
  for (int64_t i = 0; c->bias && i < c->d.out_channels; i++) bm = fmaxf(bm, fabsf(c->bias[i]));
  double xw = xm > 0.0f && wm > 0.0f ? (double)xm * (double)wm : 1.0, u = ldexp(1.0, -24);
  for (int i = 0; i < CC_NISA; i++) {
    if (!ctxs[i]) continue;
    lc_conv_shape sh;
    for (size_t k = 0; k < nout; k++) o1[k] = NAN;
    st = cc_run(ctxs[i], c, route, in, o1, &sh);
    TU_CHECK(st == LC_OK && sh.route == route, "%s: status %s (%s) [%s]", cc_isa_names[i],
             lc_status_name(st), lc_last_error(), desc);
    if (st != LC_OK) continue;
    ran[f4]++;
    double worst = 0.0;
    size_t at = 0;
    for (size_t k = 0; k < nout; k++) {
      double e = fabs((double)o1[k] - (double)ref[k]), r = e / wino_bound(c, ref[k], xw, bm, f4);
      if (r != r) r = INFINITY;
      if (r > worst) worst = r, at = k;
      double cobs = e / (u * (double)cc_k(c) * xw);
      if (cobs > worst_c[f4] && cobs == cobs) worst_c[f4] = cobs;
    }
    if (worst > worst_ratio[f4]) worst_ratio[f4] = worst;
    TU_CHECK(worst <= 1.0, "%s %s: element %zu = %g, reference %g, err/bound %.3g [%s]", lc_route_name(route), cc_isa_names[i], at, o1[at],
             ref[at], worst, desc);
  }
  /* Same table, other thread counts and a small budget (more, smaller chunks): bitwise equal. */
  lc_conv_shape sh;
  st = cc_run(ctxs[top], c, route, in, o1, &sh);
  TU_CHECK(st == LC_OK, "1 thread: %s", lc_status_name(st));
  for (int t = 0; t < 3; t++) {
    memset(on, 0xff, nout * sizeof(float));
    lc_status s2 = cc_run(ctx_thr[t], c, route, in, on, &sh);
    if (t == 2 && s2 == LC_ERR_BUDGET) continue; /* wide layers don't fit the small budget */
    TU_CHECK(s2 == LC_OK, "threads ctx %d: %s (%s) [%s]", t, lc_status_name(s2), lc_last_error(), desc);
    if (s2 != LC_OK) continue;
    compared[f4]++;
    TU_CHECK(memcmp(o1, on, nout * sizeof(float)) == 0, "ctx %d differs from 1 thread (max |diff| %g) [%s]", t,
             tu_max_abs_diff(o1, on, nout), desc);
  }
  free(in);
  free(ref);
  free(o1);
  free(on);
}

/* Statuses: ineligible shapes are UNSUPPORTED, a budget below one chunk is BUDGET. */
static void check_statuses(lc_context *ctx) {
  cc_case c;
  memset(&c, 0, sizeof c);
  lc_conv_desc_init(&c.d);
  c.d.in_channels = 8;
  c.d.out_channels = 8;
  c.n = 1;
  c.h = c.w = 9;
  static const int64_t bad[4][4] = {{5, 5, 1, 1}, {3, 3, 2, 1}, {3, 3, 1, 2}, {3, 1, 1, 1}}; /* kh kw stride dil */
  for (int i = 0; i < 4; i++) {
    c.d.kernel_h = bad[i][0];
    c.d.kernel_w = bad[i][1];
    c.d.stride_h = c.d.stride_w = bad[i][2];
    c.d.dilation_h = c.d.dilation_w = bad[i][3];
    cc_fill(&c, 0);
    lc_conv_desc d = c.d;
    d.route = LC_ROUTE_WINOGRAD;
    lc_conv *conv = NULL;
    /* refused at create, from the descriptor alone, saying what the route needs */
    lc_status st = lc_conv_create(ctx, &d, &conv);
    TU_CHECK(st == LC_ERR_UNSUPPORTED, "shape %d: %s", i, lc_status_name(st));
    TU_CHECK(strstr(lc_last_error(), "winograd needs a 3x3 kernel") != NULL, "message: %s", lc_last_error());
    lc_conv_destroy(conv);
    cc_free(&c);
  }
  /* A 3x3 conv created for another route keeps no Winograd weights. */
  c.d.kernel_h = c.d.kernel_w = 3;
  c.d.stride_h = c.d.stride_w = c.d.dilation_h = c.d.dilation_w = 1;
  cc_fill(&c, 1);
  lc_conv_desc d = c.d;
  d.route = LC_ROUTE_IM2COL;
  lc_conv *conv = NULL;
  TU_CHECK(lc_conv_create(ctx, &d, &conv) == LC_OK, "create im2col");
  size_t wb_im2col = lc_conv_weight_bytes(conv);
  lc_conv_destroy(conv);
  d.route = LC_ROUTE_WINOGRAD;
  TU_CHECK(lc_conv_create(ctx, &d, &conv) == LC_OK, "create winograd");
  TU_CHECK(lc_conv_weight_bytes(conv) >= wb_im2col + 16 * 8 * 8 * sizeof(float),
           "winograd weights counted: %zu vs %zu", lc_conv_weight_bytes(conv), wb_im2col);
  lc_conv_destroy(conv);
  /* AUTO keeps them for 8 input channels in NHWC (NCHW takes winograd from 16), not for a 3-channel stem. */
  d.route = LC_ROUTE_AUTO;
  d.layout = LC_NHWC;
  TU_CHECK(lc_conv_create(ctx, &d, &conv) == LC_OK, "create auto");
  TU_CHECK(lc_conv_weight_bytes(conv) > wb_im2col, "auto keeps winograd weights for 8 channels");
  lc_conv_destroy(conv);
  d.layout = LC_NCHW;
  cc_case stem;
  memset(&stem, 0, sizeof stem);
  lc_conv_desc_init(&stem.d);
  stem.d.in_channels = 3;
  stem.d.out_channels = 8;
  stem.d.kernel_h = stem.d.kernel_w = 3;
  cc_fill(&stem, 0);
  size_t wb[2];
  for (int i = 0; i < 2; i++) {
    lc_conv_desc ds = stem.d;
    ds.route = i ? LC_ROUTE_AUTO : LC_ROUTE_IM2COL;
    TU_CHECK(lc_conv_create(ctx, &ds, &conv) == LC_OK, "create stem %d", i);
    wb[i] = lc_conv_weight_bytes(conv);
    lc_conv_destroy(conv);
  }
  TU_CHECK(wb[0] == wb[1], "auto stem keeps no winograd weights: %zu vs %zu", wb[1], wb[0]);
  cc_free(&stem);
  d.route = LC_ROUTE_WINOGRAD;
  /* Budget: 1 KiB holds no chunk. */
  lc_context *tiny = NULL;
  TU_CHECK(cc_context(LC_ISA_AUTO, 1, 1024, &tiny) == LC_OK, "tiny context");
  TU_CHECK(lc_conv_create(tiny, &d, &conv) == LC_OK, "create tiny");
  lc_status st = lc_conv_prepare(conv, 1, 9, 9, NULL);
  TU_CHECK(st == LC_ERR_BUDGET, "tiny budget: %s", lc_status_name(st));
  lc_conv_destroy(conv);
  lc_context_destroy(tiny);
  /* Allocation failures at create leave nothing behind. */
  size_t before = lc_alloc_current_bytes();
  int failed = 0;
  for (long n = 1; n <= 6; n++) {
    lc_alloc_fail_after(n);
    st = lc_conv_create(ctx, &d, &conv);
    lc_alloc_fail_after(0);
    if (st == LC_OK) {
      lc_conv_destroy(conv);
      continue;
    }
    failed++;
    TU_CHECK(st == LC_ERR_NO_MEMORY, "injected failure %ld: %s", n, lc_status_name(st));
    TU_CHECK(lc_alloc_current_bytes() == before, "leak after failure %ld", n);
  }
  TU_CHECK(failed >= 3, "expected create to fail on its first allocations, got %d failures", failed);
  cc_free(&c);
}

/* ------------------------------------------------------------ Q8/Q4 weights */

static long q_ran, q_bitwise, q_budgets;

/* Max |x| over n values (1 when 0, so the bound never divides by 0). */
static double max_abs(const float *x, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
  return m > 0.0f ? (double)m : 1.0;
}

/* Runs c (Q8/Q4 set in c->d) through winograd on ctx; deq gets the dequantized weights. */
static lc_status run_qr(lc_context *ctx, const cc_case *c, lc_route route, const float *in, float *out, float *deq,
                        lc_conv_shape *sh) {
  lc_conv_desc d = c->d;
  d.route = route;
  lc_conv *conv = NULL;
  lc_status st = lc_conv_create(ctx, &d, &conv);
  if (st == LC_OK && deq) st = lc_conv_get_weights(conv, deq);
  if (st == LC_OK) st = lc_conv_prepare(conv, c->n, c->h, c->w, sh);
  if (st == LC_OK) st = lc_conv_run(conv, in, out, NULL, 0);
  lc_conv_destroy(conv);
  return st;
}

static lc_status run_q(lc_context *ctx, const cc_case *c, const float *in, float *out, float *deq, lc_conv_shape *sh) {
  return run_qr(ctx, c, LC_ROUTE_WINOGRAD, in, out, deq, sh);
}

/* Peak bytes allocated by prepare + run (create excluded) under a budget; st its status. */
static size_t q_peak(const cc_case *c, size_t budget, const float *in, float *out, lc_status *st) {
  lc_context *ctx = NULL;
  *st = cc_context(cc_isas[top], 2, budget, &ctx);
  if (*st) return 0;
  lc_conv_desc d = c->d;
  d.route = LC_ROUTE_WINOGRAD;
  lc_conv *conv = NULL;
  size_t used = 0;
  *st = lc_conv_create(ctx, &d, &conv);
  if (*st == LC_OK) {
    size_t before = lc_alloc_current_bytes();
    lc_alloc_reset_peak();
    lc_conv_shape sh;
    *st = lc_conv_prepare(conv, c->n, c->h, c->w, &sh);
    if (*st == LC_OK) *st = lc_conv_run(conv, in, out, NULL, 0);
    used = lc_alloc_peak_bytes() - before;
  }
  lc_conv_destroy(conv);
  lc_context_destroy(ctx);
  return used;
}

static void check_quant(int s) {
  static const int blocks[] = {0, 16, 32, 64, 128, 256};
  cc_case c;
  gen_shape(&c, s % 8 == 7, s % 8 == 3, s % 8 == 1);
  if (s % 8 == 5) { /* two K blocks with a tail, IC not a multiple of any block */
    int64_t cig = tu_rand_int(257, 300), cog = tu_rand_int(1, 40);
    cc_free(&c);
    c.d.in_channels = cig * c.d.groups;
    c.d.out_channels = cog * c.d.groups;
    int64_t oh, ow;
    do { /* the pads may leave no output at 2 px */
      c.h = tu_rand_int(2, 7), c.w = tu_rand_int(2, 7);
      cc_out_size(&c, &oh, &ow);
    } while (oh < 1 || ow < 1);
    cc_fill(&c, tu_rand_int(0, 1));
  }
  c.d.weight_format = s % 2 ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
  c.d.asym = (s / 2) % 2;
  c.d.block_size = blocks[(s / 4) % 6];
  size_t nin = cc_in_count(&c), nout = cc_out_count(&c), nw = (size_t)(c.d.out_channels * cc_k(&c));
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *deq = malloc(nw * sizeof(float));
  float *o1 = malloc(nout * sizeof(float)), *o2 = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  char desc[400];
  cc_describe(&c, desc, sizeof desc);
  lc_conv_shape sh;
  lc_status st = run_q(ctxs[0], &c, in, o1, deq, &sh);
  TU_CHECK(st == LC_OK && sh.route == LC_ROUTE_WINOGRAD, "q winograd: %s (%s) [%s]", lc_status_name(st),
           lc_last_error(), desc);
  cc_case f = c; /* fp32 twin on the dequantized values */
  f.d.weight_format = LC_WEIGHTS_F32;
  f.d.asym = 0;
  f.d.block_size = 0;
  f.d.weights = deq;
  st = lc_conv_reference(&f.d, c.n, c.h, c.w, in, ref);
  TU_CHECK(st == LC_OK, "reference: %s", lc_last_error());
  double xw = max_abs(in, nin) * max_abs(deq, nw), bm = c.bias ? max_abs(c.bias, (size_t)c.d.out_channels) : 0.0;
  for (int i = 0; i < CC_NISA; i++) {
    if (!ctxs[i]) continue;
    st = run_q(ctxs[i], &c, in, o1, NULL, &sh);
    TU_CHECK(st == LC_OK, "%s: %s (%s) [%s]", cc_isa_names[i], lc_status_name(st), lc_last_error(), desc);
    if (st) continue;
    q_ran++;
    size_t at = 0;
    double worst = worst_err_ratio(&c, o1, ref, nout, xw, bm, 0, &at);
    if (worst > worst_ratio[0]) worst_ratio[0] = worst;
    TU_CHECK(worst <= 1.0, "%s q: element %zu = %g, reference %g, err/bound %.3g [%s]", cc_isa_names[i], at, o1[at],
             ref[at], worst, desc);
    st = cc_run(ctxs[i], &f, LC_ROUTE_WINOGRAD, in, o2, &sh);
    TU_CHECK(st == LC_OK, "%s fp32 twin: %s", cc_isa_names[i], lc_status_name(st));
    /* Q8/Q4 sum K in blocks of 128 channels, fp32 in blocks of LC_KC = 256: beyond 128 channels per
     * group only the bound above holds. */
    if (c.d.in_channels / c.d.groups > 128) continue;
    q_bitwise++;
    TU_CHECK(st == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0,
             "%s: q differs from fp32 on its dequantized weights (max |diff| %g) [%s]", cc_isa_names[i],
             tu_max_abs_diff(o1, o2, nout), desc);
  }
  /* Forced F(4x4): U made per task from the codes; F(4x4)'s bound against the reference and, up to
   * 128 channels per group (one K block), the fp32 twin's bits. */
  for (int i = 0; i < CC_NISA; i++) {
    if (!ctxs[i]) continue;
    st = run_qr(ctxs[i], &c, LC_ROUTE_WINOGRAD4, in, o1, NULL, &sh);
    TU_CHECK(st == LC_OK && sh.route == LC_ROUTE_WINOGRAD4, "%s q winograd4: %s (%s) [%s]", cc_isa_names[i],
             lc_status_name(st), lc_last_error(), desc);
    if (st) continue;
    q_ran++;
    size_t at = 0;
    double worst = worst_err_ratio(&c, o1, ref, nout, xw, bm, 1, &at);
    if (worst > worst_ratio[1]) worst_ratio[1] = worst;
    TU_CHECK(worst <= 1.0, "%s q F(4x4): element %zu = %g, reference %g, err/bound %.3g [%s]", cc_isa_names[i], at,
             o1[at], ref[at], worst, desc);
    st = cc_run(ctxs[i], &f, LC_ROUTE_WINOGRAD4, in, o2, &sh);
    TU_CHECK(st == LC_OK, "%s fp32 twin F(4x4): %s", cc_isa_names[i], lc_status_name(st));
    if (c.d.in_channels / c.d.groups > 128) continue;
    q_bitwise++;
    TU_CHECK(st == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0,
             "%s: q F(4x4) differs from fp32 on its dequantized weights (max |diff| %g) [%s]", cc_isa_names[i],
             tu_max_abs_diff(o1, o2, nout), desc);
  }
  /* Threads and budgets: bitwise the 1-thread output of the best table, both routes (F(4x4) under
   * the small budget: a U block per chunk instead of all panels cached, the same sums). */
  for (int r = 0; r < 2; r++) {
    lc_route route = r ? LC_ROUTE_WINOGRAD4 : LC_ROUTE_WINOGRAD;
    st = run_qr(ctxs[top], &c, route, in, o1, NULL, &sh);
    for (int t = 0; t < 3; t++) {
      memset(o2, 0xff, nout * sizeof(float));
      lc_status s2 = run_qr(ctx_thr[t], &c, route, in, o2, NULL, &sh);
      if (t == 2 && s2 == LC_ERR_BUDGET) continue;
      TU_CHECK(st == LC_OK && s2 == LC_OK, "q %s threads ctx %d: %s (%s) [%s]", lc_route_name(route), t,
               lc_status_name(s2), lc_last_error(), desc);
      q_bitwise++;
      TU_CHECK(s2 == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0, "q %s ctx %d differs from 1 thread [%s]",
               lc_route_name(route), t, desc);
    }
  }
  st = run_q(ctxs[top], &c, in, o1, NULL, &sh);
  /* Smallest budget that plans (2 threads): prepare + run stay within it, the output is the same. */
  if (s % 4 == 0) {
    size_t lo = 1, hi = (size_t)64 << 20, used;
    lc_status sb;
    q_peak(&c, hi, in, o2, &sb);
    TU_CHECK(sb == LC_OK, "q budget %zu: %s [%s]", hi, lc_status_name(sb), desc);
    while (sb == LC_OK && lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      q_peak(&c, mid, in, o2, &sb);
      if (sb == LC_OK) hi = mid;
      else lo = mid + 1;
      TU_CHECK(sb == LC_OK || sb == LC_ERR_BUDGET, "q budget %zu: %s", mid, lc_status_name(sb));
      sb = LC_OK;
    }
    memset(o2, 0xff, nout * sizeof(float));
    used = q_peak(&c, hi, in, o2, &sb);
    q_budgets++;
    TU_CHECK(sb == LC_OK && used <= hi, "q smallest budget %zu: %s, allocated %zu [%s]", hi, lc_status_name(sb), used,
             desc);
    TU_CHECK(sb == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0, "q budget %zu differs [%s]", hi, desc);
  }
  free(in);
  free(ref);
  free(deq);
  free(o1);
  free(o2);
  cc_free(&c);
}

/* A 3x3 'same' conv of ch -> ch channels on one hw x hw image, data filled. */
static void pad1_case(cc_case *c, int ch, int hw) {
  memset(c, 0, sizeof *c);
  lc_conv_desc_init(&c->d);
  c->d.in_channels = c->d.out_channels = ch;
  c->d.kernel_h = c->d.kernel_w = 3;
  c->d.pad_top = c->d.pad_left = c->d.pad_bottom = c->d.pad_right = 1;
  c->n = 1;
  c->h = c->w = hw;
  cc_fill(c, 1);
}

/* AUTO takes winograd for a quantized ResNet 3x3 layer; create keeps no fp32 copy of the weights. */
static void check_quant_auto(void) {
  cc_case c;
  pad1_case(&c, 64, 8);
  c.d.weight_format = LC_WEIGHTS_Q4;
  c.d.block_size = 32;
  lc_conv *conv = NULL;
  lc_conv_shape sh;
  TU_CHECK(lc_conv_create(ctxs[top], &c.d, &conv) == LC_OK, "create q4 auto");
  TU_CHECK(lc_conv_weight_bytes(conv) < (size_t)64 * 64 * 9 * sizeof(float) / 4, "q4 conv holds %zu bytes of weights",
           lc_conv_weight_bytes(conv));
  TU_CHECK(lc_conv_prepare(conv, 1, 8, 8, &sh) == LC_OK && sh.route == LC_ROUTE_WINOGRAD, "auto q4 route %s",
           lc_route_name(sh.route));
  lc_conv_destroy(conv);
  cc_free(&c);
}

/* Q8/Q4 and F(4x4) under AUTO: the fp32 rule (lc_wino4_size_first), so a q conv takes winograd4
 * exactly where its fp32 twin on the dequantized values does; it keeps no U (weight bytes those of
 * a route-im2col q conv, before and after prepare), stays within F(4x4)'s bound, gives the forced
 * route's bits at 1 and 2 threads; a 1 KiB budget makes forced winograd4 LC_ERR_BUDGET and AUTO
 * fall back. Odd channels and sizes, groups, both layouts, Q8/Q4, symmetric or not, blocks. Even
 * s: AVX-512 rule sizes (16-24 -> at least as many channels, 56-66 px), odd: AVX2's (64-70, 14-22). */
static long q_auto_f4;

/* Status of prepare for route r on a 1-thread context of the best table with this budget; with out,
 * it also runs. */
static lc_status at_budget(const cc_case *c, lc_route r, size_t budget, const float *in, float *out) {
  lc_context *ctx = NULL;
  lc_status st = cc_context(cc_isas[top], 1, budget, &ctx);
  lc_conv_desc d = c->d;
  d.route = r;
  lc_conv *conv = NULL;
  if (!st) st = lc_conv_create(ctx, &d, &conv);
  if (!st) st = lc_conv_prepare(conv, c->n, c->h, c->w, NULL);
  if (!st && out) st = lc_conv_run(conv, in, out, NULL, 0);
  lc_conv_destroy(conv);
  lc_context_destroy(ctx);
  return st;
}

static void check_quant_auto_f4(int s, lc_context *tiny) {
  static const int blocks[] = {0, 16, 32, 64, 128};
  cc_case c;
  memset(&c, 0, sizeof c);
  lc_conv_desc_init(&c.d);
  int64_t g = s % 3 == 2 ? 2 : 1, cig, cog, hw;
  if (s % 2 == 0) cig = tu_rand_int(16, 24), cog = cig + tu_rand_int(0, 24), hw = tu_rand_int(56, 66);
  else cig = tu_rand_int(64, 70), cog = tu_rand_int(1, 40), hw = tu_rand_int(14, 22);
  c.d.in_channels = g * cig;
  c.d.out_channels = g * cog;
  c.d.groups = g;
  c.d.kernel_h = c.d.kernel_w = 3;
  c.d.pad_top = c.d.pad_left = c.d.pad_bottom = c.d.pad_right = 1;
  c.d.layout = (lc_layout)((s / 2) % 2);
  cc_random_act(&c.d);
  c.n = 1;
  c.h = hw;
  c.w = hw + tu_rand_int(0, 3);
  cc_fill(&c, s % 4 != 1);
  c.d.weight_format = (s / 4) % 2 ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
  c.d.asym = (s / 8) % 2;
  c.d.block_size = blocks[(s / 3) % 5];
  size_t nin = cc_in_count(&c), nout = cc_out_count(&c), nw = (size_t)(c.d.out_channels * cc_k(&c));
  float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *deq = malloc(nw * sizeof(float));
  float *o1 = malloc(nout * sizeof(float)), *o2 = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  char desc[400];
  cc_describe(&c, desc, sizeof desc);
  cc_case f = c; /* fp32 twin on the dequantized values */
  f.d.weight_format = LC_WEIGHTS_F32;
  f.d.asym = 0;
  f.d.block_size = 0;
  f.d.weights = deq;
  int have_ref = 0;
  double xw = 0.0, bm = c.bias ? max_abs(c.bias, (size_t)c.d.out_channels) : 0.0;
  for (int i = 0; i < CC_NISA; i++) {
    if (!ctxs[i]) continue;
    lc_conv *conv = NULL, *im = NULL;
    lc_conv_desc d = c.d;
    d.route = LC_ROUTE_IM2COL;
    lc_status st = lc_conv_create(ctxs[i], &d, &im);
    size_t wim = st ? 0 : lc_conv_weight_bytes(im);
    lc_conv_destroy(im);
    if (!st) st = lc_conv_create(ctxs[i], &c.d, &conv);
    size_t wq = st ? 0 : lc_conv_weight_bytes(conv);
    if (!st) st = lc_conv_get_weights(conv, deq);
    lc_conv_shape sh, shf;
    if (!st) st = lc_conv_prepare(conv, c.n, c.h, c.w, &sh);
    if (!st) st = lc_conv_run(conv, in, o1, NULL, 0);
    TU_CHECK(st == LC_OK, "%s q auto: %s (%s) [%s]", cc_isa_names[i], lc_status_name(st), lc_last_error(), desc);
    TU_CHECK(wq == wim && lc_conv_weight_bytes(conv) == wq, "%s q auto holds %zu / %zu weight bytes, im2col %zu [%s]",
             cc_isa_names[i], wq, lc_conv_weight_bytes(conv), wim, desc);
    lc_conv_destroy(conv);
    if (st) continue;
    if (!have_ref) {
      have_ref = 1;
      TU_CHECK(lc_conv_reference(&f.d, c.n, c.h, c.w, in, ref) == LC_OK, "reference: %s", lc_last_error());
      xw = max_abs(in, nin) * max_abs(deq, nw);
    }
    lc_status sf = cc_run(ctxs[i], &f, LC_ROUTE_AUTO, in, o2, &shf);
    TU_CHECK(sf == LC_OK && shf.route == sh.route, "%s: q auto took %s, its fp32 twin %s [%s]", cc_isa_names[i],
             lc_route_name(sh.route), lc_route_name(shf.route), desc);
    if (sh.route != LC_ROUTE_WINOGRAD4) continue;
    q_auto_f4++;
    size_t at = 0;
    double worst = worst_err_ratio(&c, o1, ref, nout, xw, bm, 1, &at);
    if (worst > worst_ratio[1]) worst_ratio[1] = worst;
    TU_CHECK(worst <= 1.0, "%s q auto F(4x4): element %zu = %g, reference %g, err/bound %.3g [%s]", cc_isa_names[i],
             at, o1[at], ref[at], worst, desc);
    q_bitwise++;
    TU_CHECK(memcmp(o1, o2, nout * sizeof(float)) == 0, "%s q auto F(4x4) differs from its fp32 twin [%s]",
             cc_isa_names[i], desc);
    if (cc_isas[i] != cc_isas[top]) continue;
    for (int t = 0; t < 3; t++) { /* forced, 2 and 3 threads, small budget: the same bits */
      memset(o2, 0xff, nout * sizeof(float));
      lc_status s2 = run_qr(ctx_thr[t], &c, LC_ROUTE_WINOGRAD4, in, o2, NULL, &sh);
      if (t == 2 && s2 == LC_ERR_BUDGET) continue;
      TU_CHECK(s2 == LC_OK, "q F(4x4) ctx %d: %s (%s) [%s]", t, lc_status_name(s2), lc_last_error(), desc);
      q_bitwise++;
      TU_CHECK(s2 == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0, "q F(4x4) ctx %d differs from auto [%s]", t,
               desc);
    }
    /* The smallest budget F(4x4) plans in holds one U block, not every panel's: the same bits. */
    size_t lo = 1, hi = (size_t)64 << 20;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (at_budget(&c, LC_ROUTE_WINOGRAD4, mid, NULL, NULL) == LC_OK) hi = mid;
      else lo = mid + 1;
    }
    memset(o2, 0xff, nout * sizeof(float));
    st = at_budget(&c, LC_ROUTE_WINOGRAD4, hi, in, o2);
    q_bitwise++;
    TU_CHECK(st == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0, "q F(4x4) at budget %zu: %s [%s]", hi,
             lc_status_name(st), desc);
  }
  /* 1 KiB: no F(4x4) chunk fits; AUTO falls back (direct needs no workspace). */
  lc_conv_shape sh;
  lc_status st = run_qr(tiny, &c, LC_ROUTE_WINOGRAD4, in, o2, NULL, &sh);
  TU_CHECK(st == LC_ERR_BUDGET && strstr(lc_last_error(), "winograd4") != NULL, "q F(4x4) in 1 KiB: %s (%s) [%s]",
           lc_status_name(st), lc_last_error(), desc);
  st = run_qr(tiny, &c, LC_ROUTE_AUTO, in, o2, NULL, &sh);
  TU_CHECK(st == LC_OK && sh.route != LC_ROUTE_WINOGRAD4, "q auto in 1 KiB: %s, %s [%s]", lc_status_name(st),
           lc_route_name(sh.route), desc);
  free(in), free(ref), free(deq), free(o1), free(o2);
  cc_free(&c);
}

/* The tuner times F(4x4) for Q8/Q4 convs wherever it does for fp32: the same candidates for a 3x3
 * stride-1 conv and its q twins (before, Q8/Q4 had one fewer: no winograd4), and a tuned q conv
 * still holds only its codes. In-memory tuning cache (cache_dir ""). */
static void check_quant_tuner(void) {
  lc_context_params cp;
  lc_context_params_init(&cp);
  cp.cpu_tune = LC_TUNE_FAST;
  cp.cache_dir = "";
  lc_context *tc = NULL;
  TU_CHECK(lc_context_create(&cp, &tc) == LC_OK, "tuner context: %s", lc_last_error());
  if (!tc) return;
  cc_case c;
  pad1_case(&c, 32, 20);
  static const lc_weight_format fmts[3] = {LC_WEIGHTS_F32, LC_WEIGHTS_Q8, LC_WEIGHTS_Q4};
  int cand[3] = {0, 0, 0};
  for (int f = 0; f < 3; f++) {
    lc_conv_desc d = c.d;
    d.weight_format = fmts[f];
    d.block_size = f ? 32 : 0;
    lc_conv *conv = NULL;
    lc_conv_device_info di;
    memset(&di, 0, sizeof di);
    lc_status st = lc_conv_create(tc, &d, &conv);
    size_t wb = st ? 0 : lc_conv_weight_bytes(conv);
    if (!st) st = lc_conv_prepare(conv, c.n, c.h, c.w, NULL);
    if (!st) st = lc_conv_device_info_get(conv, &di);
    TU_CHECK(st == LC_OK && di.candidates >= 2, "tuned format %d: %s, %d candidates", f, lc_last_error(),
             di.candidates);
    TU_CHECK(!f || lc_conv_weight_bytes(conv) == wb, "tuned q conv: %zu weight bytes, %zu at create",
             lc_conv_weight_bytes(conv), wb);
    cand[f] = di.candidates;
    lc_conv_destroy(conv);
  }
  TU_CHECK(cand[1] == cand[0] && cand[2] == cand[0], "tuner candidates f32 %d, q8 %d, q4 %d", cand[0], cand[1],
           cand[2]);
  cc_free(&c);
  lc_context_destroy(tc);
}

/* AUTO's F(4x4) rule (src/conv/select.c): the AVX2 table takes winograd4 from 64 input channels
 * and from 16 from 56x56; with 64+ at one thread from 20x20 outputs (14x14 with twice as many output
 * channels, 28x28 with fewer), at 2+ threads from 28x28; the AVX-512 table from 16 input channels from 80x80, from 56x56 with at least
 * as many output channels and from 28x28 with twice as many, F(2x2) otherwise; the
 * scalar table keeps F(2x2). F(4x4) weights are transformed only where the rule may pick it (not
 * for 8 channels), release_unused frees the unused transform, and AUTO's
 * output is the forced route's bits (its tiles never change a sum; check_shape holds winograd4 to
 * its error bound). */
static int f4_weights(lc_isa isa, int64_t ic) {
  return (isa == LC_ISA_AVX2 || isa == LC_ISA_AVX512) && ic >= 16;
}

static void check_auto_f4(void) {
  static const struct {
    int64_t ic, hw;
    lc_route avx2, avx512;
    int64_t oc; /* 0: 8 */
  } cases[] = {{64, 16, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 0},    {128, 7, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 0},
               {64, 16, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD, 128}, {64, 20, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD, 64},
               {64, 20, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 0},
               {32, 16, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 0},  {64, 88, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD4, 0},
               {32, 88, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD4, 0}, {16, 81, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD4, 0},
               {64, 79, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD, 0},
               {32, 57, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD4, 32}, {32, 57, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD, 31},
               {32, 55, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 40},   {16, 29, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD4, 32},
               {16, 29, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 31},   {16, 27, LC_ROUTE_WINOGRAD, LC_ROUTE_WINOGRAD, 64},
               {64, 28, LC_ROUTE_WINOGRAD4, LC_ROUTE_WINOGRAD4, 128}};
  for (int i = 0; i < CC_NISA; i++) {
    if (!ctxs[i]) continue;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      cc_case c;
      memset(&c, 0, sizeof c);
      lc_conv_desc_init(&c.d);
      c.d.in_channels = cases[k].ic;
      c.d.out_channels = cases[k].oc ? cases[k].oc : 8;
      c.d.kernel_h = c.d.kernel_w = 3;
      c.d.pad_top = c.d.pad_left = c.d.pad_bottom = c.d.pad_right = 1;
      c.n = 1;
      c.h = c.w = cases[k].hw;
      cc_fill(&c, 1);
      lc_route want = cc_isas[i] == LC_ISA_AVX2     ? cases[k].avx2
                      : cc_isas[i] == LC_ISA_AVX512 ? cases[k].avx512
                                                    : LC_ROUTE_WINOGRAD;
      size_t nin = cc_in_count(&c), nout = cc_out_count(&c);
      float *in = malloc(nin * sizeof(float)), *o1 = malloc(nout * sizeof(float)), *o2 = malloc(nout * sizeof(float));
      tu_fill(in, nin, -1.0f, 1.0f);
      lc_conv *conv = NULL, *f2 = NULL;
      lc_conv_shape sh;
      c.d.route = LC_ROUTE_WINOGRAD;
      TU_CHECK(lc_conv_create(ctxs[i], &c.d, &f2) == LC_OK, "create winograd");
      c.d.route = LC_ROUTE_AUTO;
      lc_status st = lc_conv_create(ctxs[i], &c.d, &conv);
      if (!st) st = lc_conv_prepare(conv, 1, c.h, c.w, &sh);
      TU_CHECK(st == LC_OK && sh.route == want, "%s ic %lld at %lld: auto took %s, want %s", cc_isa_names[i],
               (long long)cases[k].ic, (long long)cases[k].hw, lc_route_name(sh.route), lc_route_name(want));
      size_t wb = lc_conv_weight_bytes(conv), wb2 = lc_conv_weight_bytes(f2);
      if (f4_weights(cc_isas[i], cases[k].ic))
        TU_CHECK(wb > wb2, "%s ic %lld: F(4x4) weights kept too (%zu vs %zu)", cc_isa_names[i],
                 (long long)cases[k].ic, wb, wb2);
      else
        TU_CHECK(wb == wb2, "%s ic %lld: no F(4x4) weights (%zu vs %zu)", cc_isa_names[i], (long long)cases[k].ic, wb,
                 wb2);
      if (!st) st = lc_conv_release_unused(conv);
      if (!st) st = lc_conv_run(conv, in, o1, NULL, 0);
      TU_CHECK(st == LC_OK, "auto run: %s", lc_last_error());
      if (sh.route == LC_ROUTE_WINOGRAD4)
        TU_CHECK(lc_conv_weight_bytes(conv) < wb, "release_unused kept F(2x2) weights (%zu of %zu)",
                 lc_conv_weight_bytes(conv), wb);
      st = cc_run(ctxs[i], &c, sh.route, in, o2, &sh);
      TU_CHECK(st == LC_OK && memcmp(o1, o2, nout * sizeof(float)) == 0, "%s ic %lld at %lld: auto differs from %s",
               cc_isa_names[i], (long long)cases[k].ic, (long long)cases[k].hw, lc_route_name(sh.route));
      lc_conv_destroy(conv);
      lc_conv_destroy(f2);
      free(in), free(o1), free(o2);
      cc_free(&c);
    }
  }
  /* Two threads on the AVX2 table: F(2x2) below 28x28 whatever the output channels. */
  if (cc_isas[top] == LC_ISA_AVX2 && ctx_thr[0]) {
    static const int64_t hw2[][3] = {
        {64, 20, LC_ROUTE_WINOGRAD}, {64, 16, LC_ROUTE_WINOGRAD}, {64, 28, LC_ROUTE_WINOGRAD4}};
    for (size_t k = 0; k < 3; k++) {
      cc_case c;
      memset(&c, 0, sizeof c);
      c.d = cc_desc(hw2[k][0], 128, 3, 1);
      cc_fill(&c, 0);
      lc_conv *conv = NULL;
      lc_conv_shape sh;
      lc_status st = lc_conv_create(ctx_thr[0], &c.d, &conv);
      if (!st) st = lc_conv_prepare(conv, 1, hw2[k][1], hw2[k][1], &sh);
      TU_CHECK(st == LC_OK && sh.route == (lc_route)hw2[k][2], "avx2 2 threads ic 64 -> 128 at %lld: auto took %s",
               (long long)hw2[k][1], st ? lc_last_error() : lc_route_name(sh.route));
      lc_conv_destroy(conv);
      cc_free(&c);
    }
  }
}

int main(void) {
  tu_seed_from_env(0x3A3F23ull);
  int nshapes = cc_quick() ? 60 : NSHAPES;
  for (int i = 0; i < CC_NISA; i++)
    if (cc_context(cc_isas[i], 1, 0, &ctxs[i]) != LC_OK) ctxs[i] = NULL;
  TU_CHECK(ctxs[0] != NULL, "scalar context");
  top = ctxs[2] ? 2 : ctxs[1] ? 1 : 0;
  TU_CHECK(cc_context(cc_isas[top], 2, 0, &ctx_thr[0]) == LC_OK, "2 threads");
  TU_CHECK(cc_context(cc_isas[top], 3, 0, &ctx_thr[1]) == LC_OK, "3 threads");
  TU_CHECK(cc_context(cc_isas[top], 2, 96 << 10, &ctx_thr[2]) == LC_OK, "budget");
  for (int s = 0; s < nshapes; s++) {
    cc_case c;
    gen_shape(&c, s % 20 == 19, s % 20 == 9, s % 5 == 2);
    check_shape(&c, LC_ROUTE_WINOGRAD);
    if (c.d.weight_format == LC_WEIGHTS_F32) check_shape(&c, LC_ROUTE_WINOGRAD4);
    cc_free(&c);
  }
  for (int s = 0; s < (cc_quick() ? 12 : 40); s++) { /* larger kernels as shifted 3x3 F(4x4) (fp32) */
    cc_case c;
    gen_shape_k(&c);
    if (c.d.weight_format == LC_WEIGHTS_F32) check_shape(&c, LC_ROUTE_WINOGRAD4), shifted++;
    cc_free(&c);
  }
  TU_CHECK(shifted > 0, "no shifted-kernel case ran");
  { /* Q8/Q4 keep to 3x3: a 9x9 q conv forced onto winograd4 is UNSUPPORTED, AUTO runs it elsewhere */
    cc_case c;
    gen_shape_k(&c);
    c.d.weight_format = LC_WEIGHTS_Q8;
    float *in = calloc(cc_in_count(&c), sizeof(float)), *out = malloc(cc_out_count(&c) * sizeof(float));
    lc_conv_shape sh;
    lc_status st = cc_run(ctxs[top], &c, LC_ROUTE_WINOGRAD4, in, out, &sh);
    TU_CHECK(st == LC_ERR_UNSUPPORTED, "q8 %lldx%lld on winograd4: %s", (long long)c.d.kernel_h,
             (long long)c.d.kernel_w, lc_status_name(st));
    st = cc_run(ctxs[top], &c, LC_ROUTE_AUTO, in, out, &sh);
    TU_CHECK(st == LC_OK && sh.route != LC_ROUTE_WINOGRAD4, "q8 auto: %s route %d", lc_status_name(st), (int)sh.route);
    free(in), free(out);
    cc_free(&c);
  }
  check_statuses(ctxs[0]);
  for (int s = 0; s < (cc_quick() ? 24 : 72); s++) check_quant(s);
  check_quant_auto();
  lc_context *tiny = NULL;
  TU_CHECK(cc_context(cc_isas[top], 1, 1024, &tiny) == LC_OK, "tiny context");
  for (int s = 0; s < (cc_quick() ? 8 : 20); s++) check_quant_auto_f4(s, tiny);
  lc_context_destroy(tiny);
  TU_CHECK(top == 0 || q_auto_f4 > 0, "AUTO never took F(4x4) for a Q8/Q4 conv");
  check_quant_tuner();
  check_auto_f4();
  printf("winograd q8/q4: %ld runs against the reference, %ld bitwise comparisons (fp32 twin, threads, budgets), "
         "%ld smallest budgets, %ld AUTO F(4x4) runs\n", q_ran, q_bitwise, q_budgets, q_auto_f4);
  for (int f = 0; f < 2; f++)
    printf("%s: %ld runs against the reference, worst err/bound %.4f, worst err/(u*K*X*W) %.3f; %ld bitwise "
           "comparisons across threads/budgets\n",
           f ? "winograd4 F(4x4)" : "winograd F(2x2)", ran[f], worst_ratio[f], worst_c[f], compared[f]);
  TU_CHECK(ran[1] > 0, "winograd4 never ran");
  for (int i = 0; i < CC_NISA; i++)
    if (ctxs[i]) lc_context_destroy(ctxs[i]);
  for (int t = 0; t < 3; t++)
    if (ctx_thr[t]) lc_context_destroy(ctx_thr[t]);
  return tu_finish("test_conv_winograd");
}
