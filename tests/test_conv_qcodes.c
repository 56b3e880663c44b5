/* Q8/Q4 convs from weights quantized elsewhere (q_codes), bad input and out-of-memory runs. */

#include "conv_quant_common.h"

/* ---------------------------------------------------------------- part 4: pre-quantized codes, bad input */

static int ci_contains(const char *hay, const char *needle) {
  for (; *hay; hay++) {
    size_t i = 0;
    while (needle[i] && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
    if (!needle[i]) return 1;
  }
  return 0;
}

typedef struct qset {
  int8_t *codes;
  float *scales, *offsets;
} qset;

/* Random codes over the full range (q4: -8..7, q8: -128..127) and per-block scales / offsets. */
static void qset_make(const lc_conv_desc *d, qset *s) {
  size_t nw = (size_t)(d->out_channels * cin_g(d) * taps_of(d)), ns = (size_t)d->out_channels * expect_nb(d);
  int lo = d->weight_format == LC_WEIGHTS_Q4 ? -8 : -128, hi = d->weight_format == LC_WEIGHTS_Q4 ? 7 : 127;
  s->codes = malloc(nw);
  s->scales = malloc(ns * sizeof(float));
  s->offsets = d->asym ? malloc(ns * sizeof(float)) : NULL;
  for (size_t i = 0; i < nw; i++) s->codes[i] = (int8_t)tu_rand_int(lo, hi);
  for (size_t i = 0; i < ns; i++) s->scales[i] = tu_rand_float(0.001f, 0.05f) * (hi == 7 ? 8.0f : 1.0f);
  for (size_t i = 0; s->offsets && i < ns; i++) s->offsets[i] = tu_rand_float(-0.3f, 0.3f);
}

static void qset_free(qset *s) {
  free(s->codes);
  free(s->scales);
  free(s->offsets);
}

static void prequant_case(qcombo q, int64_t cin, int64_t cout, int64_t groups, int64_t k, lc_layout layout) {
  cc_case c;
  lc_conv_desc_init(&c.d);
  c.d.in_channels = cin;
  c.d.out_channels = cout;
  c.d.groups = groups;
  c.d.kernel_h = c.d.kernel_w = k;
  c.d.pad_top = c.d.pad_left = c.d.pad_bottom = c.d.pad_right = k / 2;
  c.d.layout = layout;
  c.n = 2;
  c.h = 6;
  c.w = 5;
  cc_fill(&c, 1);
  free(c.wts);
  c.wts = NULL;
  c.d.weights = NULL;
  set_combo(&c.d, q);
  qset s;
  qset_make(&c.d, &s);
  c.d.q_codes = s.codes;
  c.d.q_scales = s.scales;
  c.d.q_offsets = s.offsets;
  char name[64];
  combo_name(q, name, sizeof name);
  TU_CHECK(lc_conv_quant_blocks(&c.d) == expect_nb(&c.d), "%s: quant_blocks %zu, expected %zu", name,
           lc_conv_quant_blocks(&c.d), expect_nb(&c.d));
  int64_t cg = cin_g(&c.d), T = taps_of(&c.d);
  size_t nw = (size_t)(cout * cg * T), nb = expect_nb(&c.d);
  float *deq = malloc(nw * sizeof(float)), *want = malloc(nw * sizeof(float));
  for (int64_t oc = 0; oc < cout; oc++)
    for (int64_t t = 0; t < T; t++)
      for (int64_t ic = 0; ic < cg; ic++) {
        size_t b = (size_t)oc * nb + block_of(&c.d, ic, t);
        float code = (float)s.codes[(oc * T + t) * cg + ic]; /* [oc][ky][kx][ic] */
        want[(oc * cg + ic) * T + t] = fmaf(code, s.scales[b], s.offsets ? s.offsets[b] : 0.0f);
      }
  lc_conv *cv = NULL;
  lc_status st = lc_conv_create(ctx[0][0], &c.d, &cv);
  TU_CHECK(st == LC_OK, "pre-quantized %s: %s", name, lc_last_error());
  if (st == LC_OK) {
    int8_t *keep = malloc(nw);
    memcpy(keep, s.codes, nw);
    memset(s.codes, 0x7f, nw); /* copied at create: later changes must not matter */
    st = lc_conv_get_weights(cv, deq);
    memcpy(s.codes, keep, nw);
    free(keep);
    TU_CHECK(st == LC_OK && memcmp(deq, want, nw * sizeof(float)) == 0,
             "pre-quantized %s: get_weights differs from fmaf(code, scale, offset)", name);
    TU_CHECK(lc_conv_weight_bytes(cv) == expect_wbytes(&c.d), "pre-quantized %s: weight bytes %zu, expected %zu", name,
             lc_conv_weight_bytes(cv), expect_wbytes(&c.d));
    lc_conv_destroy(cv);
    float *in = malloc(cc_in_count(&c) * sizeof(float));
    tu_fill(in, cc_in_count(&c), -1.0f, 1.0f);
    check_routes(&c, want, in, 1 + (int)(cout % 2), 0);
    free(in);
  }
  qset_free(&s);
  free(deq);
  free(want);
  cc_free(&c);
}

/* create must fail with a message containing `needle`, leaking nothing. */
static void expect_bad(const lc_conv_desc *d, const char *what, const char *needle) {
  size_t before = lc_alloc_current_bytes();
  lc_conv *cv = NULL;
  lc_status st = lc_conv_create(ctx[0][0], d, &cv);
  const char *m = lc_last_error();
  TU_CHECK(st != LC_OK && cv == NULL, "%s: create returned %s", what, lc_status_name(st));
  TU_CHECK(m && m[0] && ci_contains(m, needle), "%s: message \"%s\" should mention \"%s\"", what, m ? m : "(null)",
           needle);
  if (cv) lc_conv_destroy(cv);
  TU_CHECK(lc_alloc_current_bytes() == before, "%s: %zu bytes leaked", what, lc_alloc_current_bytes() - before);
}

static void part_bad_input(void) {
  lc_conv_desc d = cc_desc(20, 3, 3, 0);
  float *w = cq_random_weights(&d);
  d.weight_format = LC_WEIGHTS_Q4;
  d.block_size = 16;
  lc_conv_desc e = d;
  static const int bad_blocks[] = {24, 8, 512, -16, 1};
  for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; i++) {
    char what[64], needle[16];
    e = d;
    e.block_size = bad_blocks[i];
    snprintf(what, sizeof what, "float weights, block %d", bad_blocks[i]);
    snprintf(needle, sizeof needle, "%d", bad_blocks[i]);
    expect_bad(&e, what, needle);
    TU_CHECK(lc_conv_quant_blocks(&e) == 0, "quant_blocks for block %d should be 0", bad_blocks[i]);
  }
  e = d;
  e.weight_format = (lc_weight_format)7;
  expect_bad(&e, "weight format 7", "format");
  for (int f = 1; f <= 2; f++) {
    e = d;
    e.weight_format = (lc_weight_format)f;
    w[100] = NAN;
    expect_bad(&e, f == 1 ? "q8 NaN weight" : "q4 NaN weight", "NaN");
    w[100] = -INFINITY;
    e.asym = 1;
    expect_bad(&e, f == 1 ? "q8 asym -Inf weight" : "q4 asym -Inf weight", "inf");
    w[100] = 0.5f;
    w[0] = 3e38f; /* finite, but max - min overflows (same tap: one block) */
    w[9] = -3e38f;
    expect_bad(&e, "asym block range overflowing float", "range");
    w[0] = w[9] = 0.25f;
  }
  e = d;
  e.weights = NULL;
  expect_bad(&e, "q4 without weights or codes", "weights");

  /* Codes given: q4 in [-8, 7]. */
  qset s;
  qset_make(&d, &s);
  lc_conv_desc qd = d;
  qd.weights = NULL;
  qd.q_codes = s.codes;
  qd.q_scales = s.scales;
  lc_conv *cv = NULL;
  TU_CHECK(lc_conv_create(ctx[0][0], &qd, &cv) == LC_OK, "valid codes rejected: %s", lc_last_error());
  lc_conv_destroy(cv);
  s.codes[17] = 9;
  expect_bad(&qd, "q4 code 9", "code");
  s.codes[17] = -9;
  expect_bad(&qd, "q4 code -9", "code");
  s.codes[17] = 0;
  e = qd;
  e.block_size = 24;
  expect_bad(&e, "codes with block 24", "24");
  e = qd;
  e.weight_format = LC_WEIGHTS_F32;
  e.weights = w;
  expect_bad(&e, "codes with weight format f32", "f32");
  e = qd;
  e.q_scales = NULL;
  expect_bad(&e, "codes without scales", "scales");
  e = qd;
  e.asym = 1;
  expect_bad(&e, "asym codes without offsets", "offsets");
  s.scales[4] = NAN;
  expect_bad(&qd, "NaN scale", "scale");
  s.scales[4] = 3e38f; /* 7 * 3e38 overflows */
  expect_bad(&qd, "scale overflowing the code range", "scale");
  s.scales[4] = 0.01f;
  qset_free(&s);
  lc_conv_desc ad = d;
  ad.asym = 1;
  qset_make(&ad, &s);
  ad.weights = NULL;
  ad.q_codes = s.codes;
  ad.q_scales = s.scales;
  ad.q_offsets = s.offsets;
  s.offsets[2] = INFINITY;
  expect_bad(&ad, "Inf offset", "offset");
  qset_free(&s);

  /* Out of memory at every allocation of create (float weights and codes): an error, no leak. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass) qset_make(&d, &s);
    lc_conv_desc od = d;
    if (pass) {
      od.weights = NULL;
      od.q_codes = s.codes;
      od.q_scales = s.scales;
    }
    int ok_at = 0;
    for (long n = 1; n <= 40 && !ok_at; n++) {
      size_t before = lc_alloc_current_bytes();
      lc_alloc_fail_after(n);
      lc_conv *oc = NULL;
      lc_status st = lc_conv_create(ctx[0][0], &od, &oc);
      lc_alloc_fail_after(0);
      TU_CHECK(st == LC_OK || (st == LC_ERR_NO_MEMORY && oc == NULL), "create with allocation %ld failing: %s", n,
               lc_status_name(st));
      if (st == LC_OK) ok_at = 1;
      lc_conv_destroy(oc);
      TU_CHECK(lc_alloc_current_bytes() == before, "create with allocation %ld failing leaked %zu bytes", n,
               lc_alloc_current_bytes() - before);
    }
    TU_CHECK(ok_at, "create still failing after 40 allocations");
    if (pass) qset_free(&s);
  }
  free(w);
}

/* Out of memory during run: the run reports it, or (if it allocates nothing) gives the right output. */
static void oom_run_case(int64_t cin, int64_t cout, int64_t k, int64_t h, int64_t w, lc_layout layout, lc_route route,
                         int int8) {
  cc_case c;
  c.d = cc_desc(cin, cout, k, 0);
  c.d.layout = layout;
  c.d.route = route;
  c.d.int8_activations = int8;
  c.n = 1;
  c.h = h;
  c.w = w;
  cc_fill(&c, 1);
  set_combo(&c.d, combo_of(1));
  size_t nin = cc_in_count(&c), nout = cc_out_count(&c);
  float *in = malloc(nin * sizeof(float)), *good = malloc(nout * sizeof(float)), *out = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  lc_conv *cv = NULL;
  lc_conv_shape sh;
  lc_status st = lc_conv_create(ctx[0][0], &c.d, &cv);
  if (st == LC_OK) st = lc_conv_prepare(cv, c.n, c.h, c.w, &sh);
  if (st == LC_OK) st = lc_conv_run(cv, in, good, NULL, 0);
  TU_CHECK(st == LC_OK, "oom case setup: %s", lc_last_error());
  if (st == LC_OK) {
    for (size_t i = 0; i < nout; i++) out[i] = NAN;
    size_t before = lc_alloc_current_bytes();
    lc_alloc_fail_after(1);
    st = lc_conv_run(cv, in, out, NULL, 0);
    lc_alloc_fail_after(0);
    TU_CHECK(st == LC_ERR_NO_MEMORY || (st == LC_OK && memcmp(out, good, nout * sizeof(float)) == 0),
             "run (route %s, %lldx%lldx%lld -> %lld, %s%s) with its first allocation failing returned %s and %s "
             "output",
             lc_route_name(sh.route), (long long)cin, (long long)h, (long long)w, (long long)cout,
             layout == LC_NHWC ? "nhwc" : "nchw", int8 ? ", int8" : "", lc_status_name(st),
             memcmp(out, good, nout * sizeof(float)) == 0 ? "the right" : "WRONG (unwritten)");
    TU_CHECK(lc_alloc_current_bytes() == before, "run with a failing allocation leaked");
  }
  lc_conv_destroy(cv);
  free(in);
  free(good);
  free(out);
  cc_free(&c);
}

static void part_prequant(void) {
  double t0 = lc_now_s();
  int n = 0;
  for (int ci = 0; ci < NCOMBO; ci++, n++) {
    int64_t groups = ci % 3 == 2 ? 2 : 1;
    int64_t cin = groups * (ci % 2 ? 37 : 19 + ci), cout = groups * (1 + ci % 5);
    prequant_case(combo_of(ci), cin, cout, groups, ci % 4 == 3 ? 1 : 3, (lc_layout)((ci / 2) % 2));
  }
  prequant_case(combo_of(5), 6, 6, 6, 3, LC_NHWC); /* depthwise */
  prequant_case(combo_of(2), 300, 7, 1, 1, LC_NCHW);
  n += 2;
  part_bad_input();
  oom_run_case(40, 9, 1, 1, 3, LC_NHWC, LC_ROUTE_GEMM1X1, 0); /* GEMV path, accurate */
  oom_run_case(40, 9, 1, 1, 3, LC_NHWC, LC_ROUTE_GEMM1X1, 1); /* GEMV path, int8 */
  oom_run_case(40, 9, 3, 8, 8, LC_NCHW, LC_ROUTE_IM2COL, 0);
  oom_run_case(40, 9, 3, 8, 8, LC_NHWC, LC_ROUTE_DIRECT, 0);
  printf("part 4: %d pre-quantized convs + bad input + out-of-memory, %.1f s\n", n, lc_now_s() - t0);
}

int main(void) {
  size_t start;
  if (cq_setup(&start)) {
    part_prequant();
  }
  return cq_finish("test_conv_qcodes", start);
}
