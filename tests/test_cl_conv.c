/* OpenCL conv: every kernel family x variant against lc_conv_reference (fp64) on randomized shapes
 * (odd channels, every remainder, strides 1-3, dilation, groups, depthwise, batch 1-3), every
 * weight format x symmetry, activations, bias and residual, both layouts.
 *
 * Tolerance: max |got - ref| <= 1e-4 * max |ref| over the output. The reference runs on the
 * weights the device computes with (lc_conv_get_weights: the dequantized codes), so the only
 * difference is fp32 accumulation order: for K <= a few hundred terms of values in [-1, 1] that
 * is ~sqrt(K) * 2^-24 * rms, three orders below the bound, while any indexing error moves an
 * output by one term, ~1e-2 of max |ref| or more.
 *
 * Winograd (family wino) gets its own randomized 3x3 stride-1 shapes (fp32, and q8/q4 whose U the
 * GEMM makes from the codes; up to 130 channels, maps 1..24, every pad, batch 1-3). F(2x2, 3x3) is
 * held to the same 1e-4 (for q8/q4 too: the reference runs on the dequantized codes, and U from
 * them rounds as fp32's U from fp32 weights): its transforms have exact coefficients (0, +-1, +-1/2); measured on PoCL at most 1.1e-5 of max |ref| (that worst is
 * a clipped output, max |ref| 0.7 over pre-activation values ~30; 4e-7 of the scale otherwise,
 * like the GEMM's 6.5e-7). F(4x4, 3x3) gets 5e-4: its matrices hold 1/24 .. 8, so rounding grows
 * ~10x (Lavin & Gray); measured at most 9.5e-5 of max |ref| (clipped output again; 7e-6 of the
 * scale otherwise). A wrong tile, channel or transform entry is off by ~1e-1 of max |ref|.
 *
 * gemmq (q8/q4 integer GEMM) quantizes the activations to int8 in units of 32 channels per pixel
 * and group; it is checked against the reference on the input as it rounds it (tu_act_int8_unit on
 * each unit, the device's float operations), again at 1e-4: the integer sums are exact and what is
 * left is fp32 rounding of the per-unit scaling and of the dequantized weights (~2^-24 relative per
 * term), while a wrong unit, scale or lane moves outputs by ~1e-2 of max |ref| or more. Its own
 * shapes (check_gemmq) cover 1-140 channels (every remainder of the 32..128 tiles), 1x1 to 5x5,
 * strides 1-3, dilation, pads, groups, batch 1-3, block sizes 0/32/64/128, q8/q4 sym/asym.
 *
 * wide (large kernels, few output channels) gets its own shapes too (check_wide): 3..9 taps, up to
 * 100 input channels (K up to 8100 terms, still ~1e-6 of max |ref| in fp32), at the same 1e-4.
 *
 * wino9 (Winograd F(3x3, 3x3) over a 9x9 conv's sub-kernels, check_wino9) gets F(4x4)'s 5e-4 of
 * the pre-activation scale (max |conv + residual|): B^T's entries reach 3, A^T's 4, G holds
 * sixths, as F(4x4)'s, over K up to 8100 terms, and its clipped outputs (max |ref| 0.7 over
 * values ~30-100) would otherwise measure that rounding against the clip. Measured on PoCL at
 * most 7.2e-6 of that scale on four seeds; a wrong tile, sub-kernel or transform
 * entry moves outputs by ~1e-1 of it.
 *
 * Env: LOWCONV_CL_FAMILY / LOWCONV_CL_VARIANT restrict the families tested (as in the tuner);
 * LC_TEST_QUICK=1 fewer shapes; LC_REQUIRE_OPENCL=1 makes a missing device a failure (CI). */
#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/opencl/cl_conv.h"
#include "lowconv.h"
#include "testutil.h"

typedef struct shape {
  int n, g, cin_g, cout_g, ih, iw, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} shape;

static void random_shape(shape *s, int i) {
  memset(s, 0, sizeof *s);
  s->n = tu_rand_int(1, 3);
  int kind = i % 5; /* 0 plain, 1 grouped, 2 depthwise, 3 1x1 (GEMV/GEMM), 4 wide channels; every 20th
                       is wider still, so the GEMM's 128-row tiles and split-K run */
  s->g = kind == 1 ? tu_rand_int(2, 3) : 1;
  s->cin_g = tu_rand_int(1, 13), s->cout_g = tu_rand_int(1, 19);
  if (kind == 2) s->g = tu_rand_int(2, 21), s->cin_g = 1, s->cout_g = 1;
  if (kind == 4) s->cin_g = tu_rand_int(16, 70), s->cout_g = tu_rand_int(9, 70);
  if (i % 20 == 19) s->g = 1, s->cin_g = tu_rand_int(100, 130), s->cout_g = tu_rand_int(129, 150); /* 128-row tiles */
  static const int ks[] = {1, 2, 3, 3, 5};
  s->kh = ks[tu_rand_int(0, 4)], s->kw = ks[tu_rand_int(0, 4)];
  s->sh = tu_rand_int(1, 3), s->sw = tu_rand_int(1, 3);
  s->dh = tu_rand_int(0, 3) ? 1 : 2, s->dw = tu_rand_int(0, 3) ? 1 : 2;
  s->pt = tu_rand_int(0, 2), s->pl = tu_rand_int(0, 2), s->pb = tu_rand_int(0, 2), s->pr = tu_rand_int(0, 2);
  if (kind == 3) {
    s->kh = s->kw = 1, s->dh = s->dw = 1, s->pt = s->pl = s->pb = s->pr = 0;
    s->sh = s->sw = tu_rand_int(0, 2) ? 1 : 2;
    s->cin_g = tu_rand_int(1, 90);
    if (tu_rand_int(0, 1)) s->n = 1, s->ih = s->iw = 1; /* fully connected */
    if (i % 10 == 8) s->n = 1, s->ih = s->iw = 1, s->cin_g = 8 * tu_rand_int(1, 11); /* gemvq */
  }
  if (!s->ih) {
    int kmin_h = (s->kh - 1) * s->dh + 1, kmin_w = (s->kw - 1) * s->dw + 1;
    s->ih = tu_rand_int(kmin_h > s->pt + s->pb ? kmin_h - s->pt - s->pb : 1, 17);
    s->iw = tu_rand_int(kmin_w > s->pl + s->pr ? kmin_w - s->pl - s->pr : 1, 19);
  }
}

static double act_ref(double v, const lc_conv_desc *d) {
  switch (d->activation) {
    case LC_ACT_RELU: return v > 0 ? v : 0;
    case LC_ACT_CLIP: return v < d->act_min ? d->act_min : v > d->act_max ? d->act_max : v;
    case LC_ACT_LEAKY_RELU: return v < 0 ? v * d->act_alpha : v;
    case LC_ACT_HARD_SWISH: {
      double t = v / 6.0 + 0.5;
      return v * (t < 0 ? 0 : t > 1 ? 1 : t);
    }
    default: return v;
  }
}

static int tested_runs, skipped_runs, gemvq_runs, gemmq_runs;
#define WINO4_TOL 5e-4 /* F(4x4, 3x3): see the header */
static double worst_rel[16][16]; /* per family, variant: max over runs of max |got - ref| / max |ref| */
static double secs[16][16];      /* per family, variant: prepare (program builds) + run, for the summary */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One conv: every eligible family x variant, checked against the reference. */
static void check_shape(lc_context *ctx, const shape *s, int idx) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = s->g * s->cin_g, d.out_channels = s->g * s->cout_g, d.groups = s->g;
  d.kernel_h = s->kh, d.kernel_w = s->kw, d.stride_h = s->sh, d.stride_w = s->sw;
  d.dilation_h = s->dh, d.dilation_w = s->dw;
  d.pad_top = s->pt, d.pad_left = s->pl, d.pad_bottom = s->pb, d.pad_right = s->pr;
  d.layout = idx % 7 == 6 ? LC_NHWC : LC_NCHW;
  static const lc_weight_format fmts[] = {LC_WEIGHTS_F32, LC_WEIGHTS_Q8, LC_WEIGHTS_Q4};
  d.weight_format = fmts[idx % 3];
  d.asym = (idx / 3) % 2;
  static const int blocks[] = {0, 16, 32, 64, 128};
  d.block_size = blocks[(idx / 6) % (idx >= 1000 ? 5 : 4)]; /* check_gemmq: 128 too */
  d.activation = (lc_activation)(idx % 5);
  d.act_min = -0.5f, d.act_max = 0.7f, d.act_alpha = 0.1f;
  int use_res = idx % 4 == 1, use_bias = idx % 3 != 2;
  size_t nw = (size_t)(d.out_channels * s->cin_g * s->kh * s->kw);
  float *w = malloc(nw * sizeof(float)), *b = malloc((size_t)d.out_channels * sizeof(float));
  tu_fill(w, nw, -1.0f, 1.0f);
  tu_fill(b, (size_t)d.out_channels, -1.0f, 1.0f);
  d.weights = w;
  d.bias = use_bias ? b : NULL;
  lc_conv *conv = NULL;
  lc_status st = lc_conv_create(ctx, &d, &conv);
  TU_CHECK(st == LC_OK, "shape %d create: %s", idx, lc_last_error());
  if (st) goto out_w;
  int64_t oh = lc_conv_out_size(s->ih, s->kh, s->sh, s->dh, s->pt, s->pb);
  int64_t ow = lc_conv_out_size(s->iw, s->kw, s->sw, s->dw, s->pl, s->pr);
  size_t nin = (size_t)(s->n * d.in_channels * s->ih * s->iw), nout = (size_t)(s->n * d.out_channels * oh * ow);
  float *x = malloc(nin * sizeof(float)), *r = malloc(nout * sizeof(float)), *ref = malloc(nout * sizeof(float));
  float *got = malloc(nout * sizeof(float)), *wq = malloc(nw * sizeof(float));
  tu_fill(x, nin, -1.0f, 1.0f);
  tu_fill(r, nout, -1.0f, 1.0f);
  TU_CHECK(lc_conv_get_weights(conv, wq) == LC_OK, "get_weights: %s", lc_last_error());
  /* Reference: the same conv on the device's weights, no activation, then + residual, act;
   * refq on the input as gemvq rounds it to int8 (its one input pixel, units of 8 channels). */
  lc_conv_desc rd = d;
  rd.weights = wq, rd.weight_format = LC_WEIGHTS_F32, rd.activation = LC_ACT_NONE;
  float *xd = malloc(nin * sizeof(float)), *refq = malloc(nout * sizeof(float));
  float *xm = malloc(nin * sizeof(float)), *refm = malloc(nout * sizeof(float));
  memcpy(xd, x, nin * sizeof(float));
  if (d.in_channels % 8 == 0)
    tu_act_int8(x, (size_t)d.in_channels / 8, d.layout == LC_NCHW ? (size_t)(s->ih * s->iw) : 1, xd, NULL);
  tu_act_int8_grouped(x, (size_t)s->n, (size_t)s->g, (size_t)s->cin_g, (size_t)(s->ih * s->iw), d.layout == LC_NCHW,
                      32, xm); /* gemmq's units */
  TU_CHECK(lc_conv_reference(&rd, s->n, s->ih, s->iw, x, ref) == LC_OK, "reference: %s", lc_last_error());
  TU_CHECK(lc_conv_reference(&rd, s->n, s->ih, s->iw, xd, refq) == LC_OK, "reference: %s", lc_last_error());
  TU_CHECK(lc_conv_reference(&rd, s->n, s->ih, s->iw, xm, refm) == LC_OK, "reference: %s", lc_last_error());
  double mx = 0, mxq = 0, mxm = 0, mxpre = 0;
  for (size_t i = 0; i < nout; i++) {
    mxpre = fmax(mxpre, fabs((double)ref[i] + (use_res ? r[i] : 0.0)));
    ref[i] = (float)act_ref((double)ref[i] + (use_res ? r[i] : 0.0), &d);
    refq[i] = (float)act_ref((double)refq[i] + (use_res ? r[i] : 0.0), &d);
    refm[i] = (float)act_ref((double)refm[i] + (use_res ? r[i] : 0.0), &d);
    mx = fmax(mx, fabs(ref[i])), mxq = fmax(mxq, fabs(refq[i])), mxm = fmax(mxm, fabs(refm[i]));
  }
  lc_buffer *tin = NULL, *tout = NULL, *tres = NULL;
  TU_CHECK(!lc_buffer_create(ctx, nin * 4, &tin) && !lc_buffer_create(ctx, nout * 4, &tout) &&
               !lc_buffer_create(ctx, nout * 4, &tres),
           "tensors: %s", lc_last_error());
  if (!tin || !tout || !tres) goto out;
  lc_buffer_upload(tin, x, nin * 4);
  lc_buffer_upload(tres, r, nout * 4);
  const char *only_f = getenv("LOWCONV_CL_FAMILY"), *only_v = getenv("LOWCONV_CL_VARIANT");
  for (int f = 0; f < lc_cl_nfamilies; f++) {
    const lc_cl_family *fam = lc_cl_families[f];
    if (only_f && *only_f && strcmp(only_f, fam->name)) continue;
    for (int v = 0; v < fam->nvariants; v++) {
      if (only_v && *only_v && strcmp(only_v, fam->variants[v])) continue;
      setenv("LOWCONV_CL_FAMILY", fam->name, 1);
      setenv("LOWCONV_CL_VARIANT", fam->variants[v], 1);
      lc_conv_shape sh;
      double t0 = now_s();
      st = lc_conv_prepare(conv, s->n, s->ih, s->iw, &sh);
      if (st == LC_ERR_UNSUPPORTED) { /* not eligible for this shape */
        skipped_runs++;
        continue;
      }
      TU_CHECK(st == LC_OK, "shape %d %s %s prepare: %s", idx, fam->name, fam->variants[v], lc_last_error());
      if (st) continue;
      for (size_t i = 0; i < nout; i++) got[i] = NAN;
      lc_buffer_upload(tout, got, nout * 4); /* poisoned: every element must be written */
      st = lc_conv_run_buffers(conv, tin, tout, use_res ? tres : NULL);
      TU_CHECK(st == LC_OK, "shape %d %s %s run: %s", idx, fam->name, fam->variants[v], lc_last_error());
      TU_CHECK(lc_buffer_download(tout, got, nout * 4) == LC_OK, "download: %s", lc_last_error());
      if (f < 16 && v < 16) secs[f][v] += now_s() - t0;
      int isq = !strcmp(fam->name, "gemvq"), ism = !strcmp(fam->name, "gemmq");
      const float *rf = isq ? refq : ism ? refm : ref;
      int is9 = !strcmp(fam->name, "wino9"); /* its scale: the pre-activation one (the header says why) */
      double err = 0, m = isq ? mxq : ism ? mxm : is9 ? fmax(mx, mxpre) : mx;
      for (size_t i = 0; i < nout; i++) err = fmax(err, isfinite(got[i]) ? fabs(got[i] - rf[i]) : INFINITY);
      tested_runs++;
      gemvq_runs += isq;
      gemmq_runs += ism;
      if (f < 16 && v < 16) worst_rel[f][v] = fmax(worst_rel[f][v], err / fmax(m, 1e-30));
      double tol = (!strcmp(fam->name, "wino") && !strncmp(fam->variants[v], "f4x4", 4)) || is9 ? WINO4_TOL : 1e-4;
      TU_CHECK(err <= tol * fmax(m, 1e-30),
               "shape %d %s %s: err %.3g, max|ref| %.3g (n%d g%d cin_g%d cout_g%d %dx%d k%dx%d s%dx%d d%dx%d p%d%d%d%d "
               "fmt%d asym%d block%d act%d res%d %s)",
               idx, fam->name, fam->variants[v], err, m, s->n, s->g, s->cin_g, s->cout_g, s->ih, s->iw, s->kh, s->kw,
               s->sh, s->sw, s->dh, s->dw, s->pt, s->pl, s->pb, s->pr, (int)d.weight_format, d.asym, d.block_size,
               (int)d.activation, use_res, d.layout == LC_NCHW ? "nchw" : "nhwc");
    }
  }
  if (only_f) setenv("LOWCONV_CL_FAMILY", only_f, 1); else unsetenv("LOWCONV_CL_FAMILY");
  if (only_v) setenv("LOWCONV_CL_VARIANT", only_v, 1); else unsetenv("LOWCONV_CL_VARIANT");
out:
  lc_buffer_destroy(tin);
  lc_buffer_destroy(tout);
  lc_buffer_destroy(tres);
  lc_conv_destroy(conv);
  free(x), free(r), free(ref), free(got), free(wq), free(xd), free(refq), free(xm), free(refm);
out_w:
  free(w), free(b);
}

/* Winograd on its own shapes: 3x3, stride 1, one group, every format, odd sizes. */
static void check_wino(lc_context *ctx, int n) {
  const char *only_f = getenv("LOWCONV_CL_FAMILY");
  if (only_f && *only_f && strcmp(only_f, "wino")) return;
  setenv("LOWCONV_CL_FAMILY", "wino", 1);
  int runs0 = tested_runs, fw = -1;
  for (int f = 0; f < lc_cl_nfamilies; f++)
    if (!strcmp(lc_cl_families[f]->name, "wino")) fw = f;
  for (int i = 0; i < n; i++) {
    shape s;
    memset(&s, 0, sizeof s);
    s.n = tu_rand_int(1, 3), s.g = 1, s.kh = s.kw = 3, s.sh = s.sw = 1, s.dh = s.dw = 1;
    s.cin_g = i % 4 == 3 ? tu_rand_int(60, 130) : tu_rand_int(1, 40);
    s.cout_g = i % 4 == 2 ? tu_rand_int(60, 140) : tu_rand_int(1, 40);
    s.pt = tu_rand_int(0, 2), s.pl = tu_rand_int(0, 2), s.pb = tu_rand_int(0, 2), s.pr = tu_rand_int(0, 2);
    s.ih = tu_rand_int(3 > s.pt + s.pb ? 3 - s.pt - s.pb : 1, 24);
    s.iw = tu_rand_int(3 > s.pl + s.pr ? 3 - s.pl - s.pr : 1, 24);
    if (i % 8 >= 6) { /* > 32 channels out, > 64 tiles: the 64x64 tiles over several work-groups */
      s.n = tu_rand_int(2, 3), s.cout_g = tu_rand_int(33, 100);
      s.ih = tu_rand_int(17, 24), s.iw = tu_rand_int(17, 24);
    }
    /* even i: fp32; odd i: every format, symmetry, block size 0..128 (q8/q4: U made from the codes) */
    check_shape(ctx, &s, i % 2 ? 5001 + i : 3 * i);
  }
  if (only_f) setenv("LOWCONV_CL_FAMILY", only_f, 1); else unsetenv("LOWCONV_CL_FAMILY");
  TU_CHECK(tested_runs > runs0, "no Winograd run was checked");
  printf("wino: %d runs on %d shapes; worst max|err| / max|ref|:", tested_runs - runs0, n);
  for (int v = 0; fw >= 0 && fw < 16 && v < lc_cl_families[fw]->nvariants && v < 16; v++)
    printf(" %s %.3g", lc_cl_families[fw]->variants[v], worst_rel[fw][v]);
  printf(" (bounds: f2x2 1e-4, f4x4 %g)\n", WINO4_TOL);
}

/* wino9 (Winograd F(3x3) over a 9x9 conv's 3x3 sub-kernels) on its own shapes: 9x9, stride and
 * dilation 1, one group, f32 (U stored) and q8/q4 (U made from the codes as they are staged), every
 * block size and symmetry, 1..32 output channels, pads 0..4, batch 1..3, NCHW and NHWC, every
 * variant and split multiplier. Bound: F(4x4)'s (WINO4_TOL): the transforms'
 * entries (B^T to 3, A^T to 4, G's sixths) amplify fp32 rounding as F(4x4)'s do. */
static void check_wino9(lc_context *ctx, int n) {
  const char *only_f = getenv("LOWCONV_CL_FAMILY");
  if (only_f && *only_f && strcmp(only_f, "wino9")) return;
  setenv("LOWCONV_CL_FAMILY", "wino9", 1);
  int runs0 = tested_runs, fw = -1;
  for (int f = 0; f < lc_cl_nfamilies; f++)
    if (!strcmp(lc_cl_families[f]->name, "wino9")) fw = f;
  for (int i = 0; i < n; i++) {
    shape s;
    memset(&s, 0, sizeof s);
    s.n = tu_rand_int(1, 3), s.g = 1, s.kh = s.kw = 9, s.sh = s.sw = 1, s.dh = s.dw = 1;
    s.cin_g = i % 4 == 3 ? tu_rand_int(40, 100) : tu_rand_int(1, 24);
    s.cout_g = i % 3 == 0 ? 24 : tu_rand_int(1, 32);
    s.pt = tu_rand_int(0, 4), s.pl = tu_rand_int(0, 4), s.pb = tu_rand_int(0, 4), s.pr = tu_rand_int(0, 4);
    s.ih = tu_rand_int(9 > s.pt + s.pb ? 9 - s.pt - s.pb : 1, 26);
    s.iw = tu_rand_int(9 > s.pl + s.pr ? 9 - s.pl - s.pr : 1, 30);
    if (i % 3 == 1) setenv("LOWCONV_CL_WIDE_MUL", i % 2 ? "2" : "4", 1); /* more input-channel chunks */
    check_shape(ctx, &s, 3000 + i); /* every format, symmetry, block size 0..128, NHWC where idx % 7 == 6 */
    unsetenv("LOWCONV_CL_WIDE_MUL");
  }
  if (only_f) setenv("LOWCONV_CL_FAMILY", only_f, 1); else unsetenv("LOWCONV_CL_FAMILY");
  TU_CHECK(tested_runs > runs0, "no wino9 run was checked");
  printf("wino9: %d runs on %d shapes; worst max|err| / max|ref|:", tested_runs - runs0, n);
  for (int v = 0; fw >= 0 && fw < 16 && v < lc_cl_families[fw]->nvariants && v < 16; v++)
    printf(" %s %.3g", lc_cl_families[fw]->variants[v], worst_rel[fw][v]);
  printf(" (bound %g)\n", WINO4_TOL);
}

/* gemmq on its own shapes: q8/q4 (idx % 3 != 0), block sizes 0/32/64/128 ((idx / 6) % 5 != 1). */
static void check_gemmq(lc_context *ctx, int n) {
  const char *only_f = getenv("LOWCONV_CL_FAMILY");
  if (only_f && *only_f && strcmp(only_f, "gemmq")) return;
  setenv("LOWCONV_CL_FAMILY", "gemmq", 1);
  int runs0 = gemmq_runs, fm = -1;
  for (int f = 0; f < lc_cl_nfamilies; f++)
    if (!strcmp(lc_cl_families[f]->name, "gemmq")) fm = f;
  for (int i = 0, idx = 1000; i < n; i++, idx++) {
    while (idx % 3 == 0 || (idx / 6) % 5 == 1) idx++;
    shape s;
    memset(&s, 0, sizeof s);
    s.n = tu_rand_int(1, 3), s.g = i % 6 == 5 ? 2 : 1;
    s.cin_g = i % 3 == 0 ? 32 * tu_rand_int(1, 3) : tu_rand_int(1, 100);
    s.cout_g = i % 4 == 0 ? tu_rand_int(100, 140) : tu_rand_int(1, 70);
    static const int ks[] = {1, 1, 3, 3, 5};
    s.kh = ks[tu_rand_int(0, 4)], s.kw = i % 5 == 4 ? ks[tu_rand_int(0, 4)] : s.kh;
    s.sh = tu_rand_int(1, 3), s.sw = i % 2 ? s.sh : tu_rand_int(1, 3);
    s.dh = tu_rand_int(0, 3) ? 1 : 2, s.dw = tu_rand_int(0, 3) ? 1 : 2;
    s.pt = tu_rand_int(0, 2), s.pl = tu_rand_int(0, 2), s.pb = tu_rand_int(0, 2), s.pr = tu_rand_int(0, 2);
    int kmin_h = (s.kh - 1) * s.dh + 1, kmin_w = (s.kw - 1) * s.dw + 1;
    s.ih = tu_rand_int(kmin_h > s.pt + s.pb ? kmin_h - s.pt - s.pb : 1, 20);
    s.iw = tu_rand_int(kmin_w > s.pl + s.pr ? kmin_w - s.pl - s.pr : 1, 20);
    check_shape(ctx, &s, idx);
  }
  if (only_f) setenv("LOWCONV_CL_FAMILY", only_f, 1); else unsetenv("LOWCONV_CL_FAMILY");
  TU_CHECK(gemmq_runs > runs0, "no gemmq run was checked");
  printf("gemmq: %d runs on %d shapes; worst max|err| / max|ref|:", gemmq_runs - runs0, n);
  for (int v = 0; fm >= 0 && fm < 16 && v < lc_cl_families[fm]->nvariants && v < 16; v++)
    printf(" %s %.3g", lc_cl_families[fm]->variants[v], worst_rel[fm][v]);
  printf(" (bound 1e-4)\n");
}

/* wide on its own shapes: taps 3..9 along x (stride, dilation 1 there), any kh <= 9, stride and
 * dilation along y, 1..32 output channels (every oc4 block count 1..8), input channels split in
 * chunks with remainders, every column remainder of the 2/4/8-column tiles, pads up to 4. */
static void check_wide(lc_context *ctx, int n) {
  const char *only_f = getenv("LOWCONV_CL_FAMILY");
  if (only_f && *only_f && strcmp(only_f, "wide")) return;
  setenv("LOWCONV_CL_FAMILY", "wide", 1);
  int runs0 = tested_runs, fw = -1;
  for (int f = 0; f < lc_cl_nfamilies; f++)
    if (!strcmp(lc_cl_families[f]->name, "wide")) fw = f;
  for (int i = 0, idx = 2000; i < n; i++, idx++) {
    shape s;
    memset(&s, 0, sizeof s);
    static const int kws[] = {3, 5, 7, 9}, khs[] = {1, 3, 5, 9};
    s.n = tu_rand_int(1, 3), s.g = i % 7 == 6 ? 2 : 1;
    s.kw = kws[tu_rand_int(0, 3)], s.kh = i % 3 ? s.kw : khs[tu_rand_int(0, 3)];
    s.sw = s.dw = 1, s.sh = tu_rand_int(1, 3), s.dh = tu_rand_int(0, 3) ? 1 : 2;
    s.cin_g = i % 4 == 3 ? tu_rand_int(60, 100) : tu_rand_int(1, 40);
    s.cout_g = i % 8 == 0 ? 24 : tu_rand_int(1, 32);
    s.pt = tu_rand_int(0, s.kh / 2), s.pb = tu_rand_int(0, s.kh / 2);
    s.pl = tu_rand_int(0, s.kw / 2), s.pr = tu_rand_int(0, s.kw / 2);
    int kmin_h = (s.kh - 1) * s.dh + 1;
    s.ih = tu_rand_int(kmin_h > s.pt + s.pb ? kmin_h - s.pt - s.pb : 1, 24);
    s.iw = tu_rand_int(s.kw > s.pl + s.pr ? s.kw - s.pl - s.pr : 1, 33);
    if (i % 2) { /* the aligned float4 row loads (wide_vec): iw and pl multiples of 4 */
      s.pl = s.kw == 9 && tu_rand_int(0, 1) ? 4 : 0;
      s.iw = 4 * tu_rand_int(s.kw > s.pl + s.pr ? (s.kw - s.pl - s.pr + 3) / 4 : 1, 9);
    }
    if (i % 3 == 2) setenv("LOWCONV_CL_WIDE_MUL", i % 2 ? "2" : "4", 1); /* more input-channel chunks */
    check_shape(ctx, &s, idx);
    unsetenv("LOWCONV_CL_WIDE_MUL");
  }
  if (only_f) setenv("LOWCONV_CL_FAMILY", only_f, 1); else unsetenv("LOWCONV_CL_FAMILY");
  TU_CHECK(tested_runs > runs0, "no wide run was checked");
  printf("wide: %d runs on %d shapes; worst max|err| / max|ref|:", tested_runs - runs0, n);
  for (int v = 0; fw >= 0 && fw < 16 && v < lc_cl_families[fw]->nvariants && v < 16; v++)
    printf(" %s %.3g", lc_cl_families[fw]->variants[v], worst_rel[fw][v]);
  printf(" (bound 1e-4)\n");
}

/* Where the test's time goes (PoCL builds dominate): the slowest family x variant pairs since the last call. */
static void print_secs(const char *what) {
  double tot = 0;
  for (int f = 0; f < 16; f++)
    for (int v = 0; v < 16; v++) tot += secs[f][v];
  printf("%s: %.1f s in prepare + run; slowest:", what, tot);
  for (int k = 0; k < 8; k++) {
    int bf = -1, bv = -1;
    for (int f = 0; f < lc_cl_nfamilies && f < 16; f++)
      for (int v = 0; v < lc_cl_families[f]->nvariants && v < 16; v++)
        if (secs[f][v] > 0 && (bf < 0 || secs[f][v] > secs[bf][bv])) bf = f, bv = v;
    if (bf < 0) break;
    printf(" %s/%s %.1f", lc_cl_families[bf]->name, lc_cl_families[bf]->variants[bv], secs[bf][bv]);
    secs[bf][bv] = -secs[bf][bv];
  }
  printf("\n");
  memset(secs, 0, sizeof secs);
}

/* Host-pointer run and the tuner's own choice (level fast) on a few shapes. */
static void check_tuned(lc_context *ctx) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = 24, d.out_channels = 20, d.kernel_h = d.kernel_w = 3, d.pad_top = d.pad_left = 1;
  d.pad_bottom = d.pad_right = 1;
  size_t nw = 20 * 24 * 9, nin = 24 * 15 * 13, nout = 20 * 15 * 13;
  float *w = malloc(nw * 4), *x = malloc(nin * 4), *y = malloc(nout * 4), *ref = malloc(nout * 4);
  tu_fill(w, nw, -1, 1);
  tu_fill(x, nin, -1, 1);
  d.weights = w;
  lc_conv *c;
  lc_conv_shape sh;
  TU_CHECK(lc_conv_create(ctx, &d, &c) == LC_OK, "create: %s", lc_last_error());
  TU_CHECK(lc_conv_prepare(c, 1, 15, 13, &sh) == LC_OK, "prepare: %s", lc_last_error());
  TU_CHECK(lc_conv_run(c, x, y, NULL, 0) == LC_OK, "run: %s", lc_last_error());
  lc_conv_reference(&d, 1, 15, 13, x, ref);
  double err = 0, mx = 0;
  for (size_t i = 0; i < nout; i++) err = fmax(err, fabs(y[i] - ref[i])), mx = fmax(mx, fabs(ref[i]));
  TU_CHECK(err <= 1e-4 * mx, "tuned run: err %.3g of %.3g", err, mx);
  lc_conv_device_info info;
  TU_CHECK(lc_conv_device_info_get(c, &info) == LC_OK && info.kernel[0], "device info");
  printf("tuned 24->20 3x3 15x13: %s, %d candidates, %.1f ms tuning\n", info.kernel, info.candidates, info.tune_ms);
  lc_conv_destroy(c);
  free(w), free(x), free(y), free(ref);
}

int main(void) {
  tu_seed_from_env(20261201);
  lc_context_params p;
  lc_context_params_init(&p);
  p.backend = LC_BACKEND_OPENCL;
  p.tune = LC_TUNE_NONE;
  char dir[] = "/tmp/lc_cl_test_XXXXXX";
  p.cache_dir = mkdtemp(dir) ? dir : "";
  lc_context *ctx;
  if (tu_no_opencl()) return tu_finish("test_cl_conv");
  setenv("LOWCONV_CL_DP4A_EMU", "1", 0); /* gemvq with dp4a emulated where the device has none */
  TU_CHECK(lc_context_create(&p, &ctx) == LC_OK, "context: %s", lc_last_error());
  printf("device: %s\n", lc_context_device_name(ctx));
  int nshapes = getenv("LC_TEST_QUICK") && *getenv("LC_TEST_QUICK") == '1' ? 40 : 120;
  for (int i = 0; i < nshapes; i++) {
    shape s;
    random_shape(&s, i);
    check_shape(ctx, &s, i);
  }
  printf("%d family x variant runs checked (%d gemvq), %d not eligible\n", tested_runs, gemvq_runs, skipped_runs);
  print_secs("main shapes");
  const char *ff = getenv("LOWCONV_CL_FAMILY");
  TU_CHECK(gemvq_runs > 0 || (ff && *ff && strcmp(ff, "gemvq")), "no gemvq run: no 1-pixel q8/q4 1x1 shape with K %% 8 == 0");
  check_wino(ctx, nshapes / 2);
  check_gemmq(ctx, nshapes / 2);
  check_wide(ctx, nshapes / 2);
  check_wino9(ctx, nshapes / 4);
  print_secs("wino, gemmq, wide, wino9 shapes");
  { /* the post affine runs on the cpu only: a device conv refuses it rather than drop it */
    lc_conv_desc d;
    lc_conv_desc_init(&d);
    float w[4] = {1, 2, 3, 4};
    d.in_channels = 2, d.out_channels = 2, d.kernel_h = d.kernel_w = 1, d.weights = w, d.post_mul = 2.0f;
    lc_conv *c = NULL;
    TU_CHECK(lc_conv_create(ctx, &d, &c) == LC_ERR_UNSUPPORTED && !c, "post_mul on a device conv: not refused");
  }
  lc_context_destroy(ctx);
  p.tune = LC_TUNE_FAST;
  unsetenv("LOWCONV_CL_FAMILY"); /* the tuner's own choice among every family */
  unsetenv("LOWCONV_CL_VARIANT");
  if (!lc_context_create(&p, &ctx)) {
    check_tuned(ctx);
    lc_context_destroy(ctx);
  }
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* the test's own cache folder */
  if (dir[0] && system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return tu_finish("test_cl_conv");
}
