/* Convolution with block-quantized (Q8/Q4) weights:
 *   1. every route x kernel table x format x symmetry x block size on random shapes, against
 *      lc_conv_reference on the dequantized weights (lc_conv_get_weights), fp32 routes' bound;
 *   2. the dequantized weights are within half a step of the originals;
 *   3. the GEMV path (1x1 conv on few pixels), accurate and int8 activations;
 *   4. weights quantized elsewhere (q_codes), and bad input;
 *   5. weight bytes against fp32;
 *   6. workspace budget (peak allocation) and threads 1 vs 2 (bitwise).
 * LC_TEST_QUICK=1 runs fewer shapes. */
#include <ctype.h>
#include <float.h>
#include <time.h>

#include "conv_cases.h"
#include "util/timer.h"

#define U24 5.9604644775390625e-08 /* 2^-24, fp32 unit roundoff */

static const int block_sizes[6] = {16, 32, 64, 128, 256, 0};
#define NCOMBO 24 /* format (2) x asym (2) x block size (6) */

typedef struct qcombo {
  lc_weight_format fmt;
  int asym, block;
} qcombo;

static qcombo combo_of(int i) {
  qcombo q;
  q.fmt = (i & 1) ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
  q.asym = (i >> 1) & 1;
  q.block = block_sizes[(i >> 2) % 6];
  return q;
}

static void combo_name(qcombo q, char *buf, size_t len) {
  snprintf(buf, len, "%s %s block %d", q.fmt == LC_WEIGHTS_Q4 ? "q4" : "q8", q.asym ? "asym" : "sym", q.block);
}

static void set_combo(lc_conv_desc *d, qcombo q) {
  d->weight_format = q.fmt;
  d->asym = q.asym;
  d->block_size = q.block;
}

static lc_context *ctx[CC_NISA][2]; /* [table][threads - 1] */
static int have_isa[CC_NISA];

/* Pool workers free their start-up argument when they first run, after lc_context_create has
 * returned: run a 2-task conv so every worker has started before bytes are counted. */
static void settle_pool(lc_context *cx) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = d.out_channels = d.kernel_h = d.kernel_w = 1;
  float w = 1.0f, in[2] = {1.0f, 2.0f}, out[2];
  d.weights = &w;
  d.route = LC_ROUTE_DIRECT;
  lc_conv *cv = NULL;
  lc_conv_shape sh;
  if (lc_conv_create(cx, &d, &cv) == LC_OK && lc_conv_prepare(cv, 1, 2, 1, &sh) == LC_OK)
    lc_conv_run(cv, in, out, NULL, 0);
  lc_conv_destroy(cv);
}

/* ---------------------------------------------------------------- block geometry (docs/quantization.md) */

static int64_t cin_g(const lc_conv_desc *d) { return d->in_channels / d->groups; }
static int64_t taps_of(const lc_conv_desc *d) { return d->kernel_h * d->kernel_w; }

static size_t expect_nb(const lc_conv_desc *d) {
  if (d->block_size == 0) return 1;
  return (size_t)(taps_of(d) * ((cin_g(d) + d->block_size - 1) / d->block_size));
}

/* Offsets (within one output channel's OIHW weights) of block b's elements; returns the count. */
static size_t block_elems(const lc_conv_desc *d, size_t b, size_t *idx) {
  int64_t cg = cin_g(d), T = taps_of(d);
  size_t n = 0;
  if (d->block_size == 0) {
    for (int64_t t = 0; t < T; t++)
      for (int64_t ic = 0; ic < cg; ic++) idx[n++] = (size_t)(ic * T + t);
    return n;
  }
  int64_t B = d->block_size, bpt = (cg + B - 1) / B, t = (int64_t)b / bpt, bi = (int64_t)b % bpt;
  int64_t ic1 = (bi + 1) * B < cg ? (bi + 1) * B : cg;
  for (int64_t ic = bi * B; ic < ic1; ic++) idx[n++] = (size_t)(ic * T + t);
  return n;
}

/* Block index of weight (ic, tap t) within its output channel. */
static size_t block_of(const lc_conv_desc *d, int64_t ic, int64_t t) {
  if (d->block_size == 0) return 0;
  int64_t B = d->block_size, bpt = (cin_g(d) + B - 1) / B;
  return (size_t)(t * bpt + ic / B);
}

/* lc_conv_weight_bytes as documented: codes (every block byte aligned), scales (+ offsets),
 * bias, and the fp32 depthwise copy. */
static size_t expect_wbytes(const lc_conv_desc *d) {
  int64_t cg = cin_g(d), T = taps_of(d), OC = d->out_channels;
  int q4 = d->weight_format == LC_WEIGHTS_Q4;
  size_t row = 0;
  if (d->block_size == 0) {
    size_t K = (size_t)(cg * T);
    row = q4 ? (K + 1) / 2 : K;
  } else {
    for (int64_t t = 0; t < T; t++)
      for (int64_t ic = 0; ic < cg; ic += d->block_size) {
        size_t len = (size_t)(cg - ic < d->block_size ? cg - ic : d->block_size);
        row += q4 ? (len + 1) / 2 : len;
      }
  }
  size_t bytes = (size_t)OC * row + (size_t)OC * expect_nb(d) * sizeof(float) * (d->asym ? 2 : 1);
  if (d->bias) bytes += (size_t)OC * sizeof(float);
  if (cg == 1 && d->out_channels == d->groups) bytes += (size_t)(OC * T) * sizeof(float);
  return bytes;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Part 2. Per block, with the step recomputed from the block's ORIGINAL range (sym: absmax / qmax,
 * asym: (max - min) / (2^b - 1); conv weights are quantized without clipping):
 *   |deq - w| <= step / 2 + 4 FLT_EPSILON (|w| + |offset| + 2^(b-1) step)  (the decode's ulps, as documented)
 * and a block holds at most 2^b distinct values. Returns the bad blocks; *worst = max |deq - w| / (step / 2). */
static long check_half_step(const lc_conv_desc *d, const float *w, const float *deq, double *worst, char *msg,
                            size_t mlen) {
  int64_t cg = cin_g(d), T = taps_of(d), OC = d->out_channels;
  size_t K = (size_t)(cg * T), nb = expect_nb(d);
  size_t *idx = malloc(K * sizeof *idx);
  float *vals = malloc(K * sizeof *vals);
  int bits = d->weight_format == LC_WEIGHTS_Q4 ? 4 : 8;
  double qmax = bits == 4 ? 7.0 : 127.0, half = bits == 4 ? 8.0 : 128.0;
  long bad = 0;
  for (int64_t oc = 0; oc < OC; oc++)
    for (size_t b = 0; b < nb; b++) {
      const float *wr = w + (size_t)oc * K, *dr = deq + (size_t)oc * K;
      size_t n = block_elems(d, b, idx);
      double mn = INFINITY, mx = -INFINITY, amax = 0.0;
      for (size_t i = 0; i < n; i++) {
        double v = wr[idx[i]];
        mn = fmin(mn, v);
        mx = fmax(mx, v);
        amax = fmax(amax, fabs(v));
      }
      double step = d->asym ? (mx - mn) / (2.0 * half - 1.0) : amax / qmax;
      double off = d->asym ? mn + half * step : 0.0;
      int blk_bad = 0;
      for (size_t i = 0; i < n; i++) {
        double v = wr[idx[i]], e = fabs((double)dr[idx[i]] - v);
        double tol = 0.5 * step + 4.0 * FLT_EPSILON * (fabs(v) + fabs(off) + half * step);
        if (step > 0 && e / (0.5 * step) > *worst) *worst = e / (0.5 * step);
        if (!(e <= tol)) {
          if (!blk_bad && bad == 0)
            snprintf(msg, mlen, "oc %lld block %zu: weight %g dequantized to %g, step %g", (long long)oc, b, v,
                     (double)dr[idx[i]], step);
          blk_bad = 1;
        }
        vals[i] = dr[idx[i]];
      }
      qsort(vals, n, sizeof *vals, cmp_float);
      size_t distinct = n ? 1 : 0;
      for (size_t i = 1; i < n; i++) distinct += vals[i] != vals[i - 1];
      if (distinct > ((size_t)1 << bits)) {
        if (!blk_bad && bad == 0)
          snprintf(msg, mlen, "oc %lld block %zu: %zu distinct values for %d bits", (long long)oc, b, distinct, bits);
        blk_bad = 1;
      }
      bad += blk_bad;
    }
  free(idx);
  free(vals);
  return bad;
}

/* ---------------------------------------------------------------- part 1: routes */

typedef struct rstat {
  long ran, failed;
  double worst;
  double fail_macs;
  char fail[800];
} rstat;

static rstat rstats[LC_ROUTE_COUNT];
static long combo_runs[NCOMBO];

/* Can route r run this shape? (direct/im2col/igemm: always, without a budget; winograd: 3x3 stride 1.) */
static int route_must_run(const cc_case *c, lc_route r) {
  const lc_conv_desc *d = &c->d;
  if (r == LC_ROUTE_WINOGRAD)
    return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
           d->dilation_w == 1;
  if (r == LC_ROUTE_GEMM1X1) {
    int64_t pads[4], oh, ow;
    if (lc_conv_resolve_pads(d, c->h, c->w, pads, &oh, &ow) != LC_OK) return 0;
    return d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1 && !pads[0] && !pads[1] &&
           !pads[2] && !pads[3];
  }
  if (r == LC_ROUTE_DEPTHWISE)
    return d->groups == d->in_channels && d->groups == d->out_channels && d->stride_h <= 2 && d->stride_w <= 2;
  return 1;
}

/* Does this run go through lc_qgemv (where int8_activations matters)? Mirrors lc_conv_use_qgemv. */
static int uses_gemv(const cc_case *c, lc_route chosen) {
  int64_t oh, ow;
  cc_out_size(c, &oh, &ow);
  return chosen == LC_ROUTE_GEMM1X1 && c->d.groups == 1 && c->n * oh * ow <= 16 &&
         (c->d.layout == LC_NHWC || oh * ow == 1);
}

static void note_fail(lc_route r, const cc_case *c, const char *what, int isa, int threads) {
  rstat *s = &rstats[r];
  char d[400], q[64], line[800];
  cc_describe(c, d, sizeof d);
  qcombo qc = {c->d.weight_format, c->d.asym, c->d.block_size};
  combo_name(qc, q, sizeof q);
  snprintf(line, sizeof line, "route %s isa=%s threads=%d %s int8=%d: %s [%s]", lc_route_name(r), cc_isa_names[isa],
           threads, q, c->d.int8_activations, what, d);
  s->failed++;
  if (s->failed <= 3) fprintf(stderr, "FAILURE %s\n", line);
  if (s->fail[0] == 0 || cc_macs(c) < s->fail_macs) {
    s->fail_macs = cc_macs(c);
    snprintf(s->fail, sizeof s->fail, "%s", line);
  }
}

/* Runs a quantized conv (c->d: Q8/Q4 fields set, weights or q_codes) through every route and table
 * on `threads`, against the reference on deq (the dequantized OIHW weights). int8_other: set
 * int8_activations on the routes that never use the GEMV (the flag must not change them). */
static void check_routes(const cc_case *c, const float *deq, const float *in, int threads, int int8_other) {
  size_t nout = cc_out_count(c);
  float *ref = malloc(nout * sizeof(float)), *out = malloc(nout * sizeof(float));
  cc_case rc = *c;
  rc.d.weight_format = LC_WEIGHTS_F32;
  rc.d.block_size = 0;
  rc.d.asym = 0;
  rc.d.q_codes = NULL;
  rc.d.q_scales = rc.d.q_offsets = NULL;
  rc.d.weights = deq;
  rc.wts = (float *)deq;
  cc_bound b;
  lc_status st = lc_conv_reference(&rc.d, c->n, c->h, c->w, in, ref);
  lc_status st2 = cc_bound_make(&rc, in, &b);
  TU_CHECK(st == LC_OK && st2 == LC_OK, "reference failed: %s", lc_last_error());
  for (int i = 0; st == LC_OK && i < CC_NISA; i++)
    for (int r = 0; have_isa[i] && r < LC_ROUTE_COUNT; r++) {
      cc_case qc = *c;
      qc.d.route = (lc_route)r;
      qc.d.int8_activations = int8_other && (r == LC_ROUTE_DIRECT || r == LC_ROUTE_IM2COL || r == LC_ROUTE_IGEMM ||
                                             r == LC_ROUTE_DEPTHWISE);
      for (size_t k = 0; k < nout; k++) out[k] = NAN;
      lc_conv_shape shape;
      lc_status rs = cc_run(ctx[i][threads - 1], &qc, (lc_route)r, in, out, &shape);
      char what[300];
      int must = route_must_run(c, (lc_route)r);
      if (rs == LC_ERR_UNSUPPORTED && !must) continue;
      if (rs != LC_OK) {
        snprintf(what, sizeof what, "status %s (%s)", lc_status_name(rs), lc_last_error());
        note_fail((lc_route)r, &qc, what, i, threads);
        TU_CHECK(0, "route %s: %s", lc_route_name((lc_route)r), what);
        continue;
      }
      if (r != LC_ROUTE_AUTO && shape.route != (lc_route)r) {
        snprintf(what, sizeof what, "prepare reported route %s", lc_route_name(shape.route));
        note_fail((lc_route)r, &qc, what, i, threads);
        TU_CHECK(0, "%s", what);
        continue;
      }
      if (qc.d.int8_activations) TU_CHECK(!uses_gemv(c, shape.route), "int8 set on a GEMV run");
      size_t at;
      double ratio = cc_err_ratio(&b, shape.route, out, ref, nout, &at);
      rstat *s = &rstats[r];
      if (ratio > s->worst) s->worst = ratio;
      s->ran++;
      if (!(ratio <= 1.0)) {
        snprintf(what, sizeof what, "element %zu = %.9g, reference %.9g (err/bound %.3g)", at, out[at], ref[at], ratio);
        note_fail((lc_route)r, &qc, what, i, threads);
        TU_CHECK(0, "%s", what);
      }
    }
  free(b.s);
  free(ref);
  free(out);
}

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
    if (r != LC_ROUTE_WINOGRAD) TU_CHECK(s->ran >= nshapes / 10, "route %s ran only %ld times", lc_route_name((lc_route)r), s->ran);
  }
}

/* ---------------------------------------------------------------- part 3: GEMV */

typedef struct gstat {
  long runs, int8_runs, int8_differs;
  double worst_acc, worst_int8, worst_int8_t1; /* err / bound; err / (activation rounding term alone) */
} gstat;
static gstat gs;

/* Int8 activations (docs/quantization.md): per pixel and block b, xs_b = absmax_b / 127 and
 * xq = round(x / xs_b), so |x - xs_b xq| <= xs_b / 2 (+ |x| u from the division). The kernel is
 * exact on integers, so against fp64 on the dequantized weights
 *   |err| <= sum_b (xs_b / 2) sum_{k in b} |w_k| + 2u sum |x w|                     (activation rounding)
 *          + (K + nb + 16) u sum_b sum_{k in b} (|x_k| + xs_b / 2)(|w_k| + 3 A_b)    (fp32 rounding)
 *          + 2u |bias|,
 * A_b the block's max |w|: the fp32 steps scale integer dot products by s xs and fold the offset in
 * through sum(xq), terms bounded by xs|xq| (|w| + 2|o| + s) with |o| <= A_b, s <= 2 A_b / 15.
 * Then the activation's Lipschitz constant and 8u |ref| as for the fp32 routes. */
static double int8_bound(const lc_conv_desc *d, const float *x, const float *w, size_t K, float bias, double lip,
                         double ref, double *t1_out) {
  size_t B = d->block_size ? (size_t)d->block_size : K, nb = (K + B - 1) / B;
  double t1 = 0.0, t2 = 0.0, S = 0.0;
  for (size_t k0 = 0; k0 < K; k0 += B) {
    size_t n = K - k0 < B ? K - k0 : B;
    float amax = 0.0f;
    double A = 0.0, sw = 0.0;
    for (size_t k = k0; k < k0 + n; k++) {
      amax = fmaxf(amax, fabsf(x[k]));
      A = fmax(A, fabs(w[k]));
      sw += fabs(w[k]);
    }
    double xs = (double)(amax / 127.0f);
    t1 += 0.5 * xs * sw;
    for (size_t k = k0; k < k0 + n; k++) {
      t2 += (fabs(x[k]) + 0.5 * xs) * (fabs(w[k]) + 3.0 * A);
      S += fabs((double)x[k] * w[k]);
    }
  }
  *t1_out = lip * t1;
  double pre = t1 + 2.0 * U24 * S + (double)(K + nb + 16) * U24 * t2 + 2.0 * U24 * fabs(bias);
  return lip * pre + 8.0 * U24 * fabs(ref) + 1e-30;
}

/* One 1x1 conv (K -> N channels) over M pixel rows, accurate and int8, on table isa. */
static void gemv_case(qcombo q, int64_t K, int64_t N, int64_t M, lc_layout layout, int isa, int threads) {
  cc_case c;
  lc_conv_desc_init(&c.d);
  c.d.in_channels = K;
  c.d.out_channels = N;
  c.d.kernel_h = c.d.kernel_w = 1;
  c.d.layout = layout;
  cc_random_act(&c.d);
  if (layout == LC_NCHW) { /* rows are images of one pixel */
    c.n = M;
    c.h = c.w = 1;
  } else {
    c.n = (M % 2 == 0 && tu_rand_int(0, 1)) ? 2 : 1;
    int64_t px = M / c.n;
    c.h = (px % 2 == 0 && tu_rand_int(0, 1)) ? 2 : 1;
    c.w = px / c.h;
  }
  cc_fill(&c, tu_rand_int(0, 1));
  set_combo(&c.d, q);
  size_t nin = (size_t)(M * K), nout = (size_t)(M * N), nw = (size_t)(N * K);
  float *in = malloc(nin * sizeof(float)), *deq = malloc(nw * sizeof(float)), *ref = malloc(nout * sizeof(float));
  float *acc = malloc(nout * sizeof(float)), *i8 = malloc(nout * sizeof(float));
  tu_fill(in, nin, -1.0f, 1.0f);
  for (size_t i = 0; i < nin; i++) /* blocks of different magnitudes: different activation scales */
    if ((i % (size_t)K) / 16 % 3 == 1) in[i] *= 8.0f;
  char name[64], dsc[400];
  combo_name(q, name, sizeof name);
  cc_describe(&c, dsc, sizeof dsc);
  lc_conv *cv = NULL;
  lc_status st = lc_conv_create(ctx[isa][threads - 1], &c.d, &cv);
  if (st == LC_OK) st = lc_conv_get_weights(cv, deq);
  lc_conv_destroy(cv);
  TU_CHECK(st == LC_OK, "gemv %s: %s", name, lc_last_error());
  cc_case rc = c;
  rc.d.weight_format = LC_WEIGHTS_F32;
  rc.d.weights = rc.wts = deq;
  cc_bound b;
  b.s = NULL;
  if (st == LC_OK) st = lc_conv_reference(&rc.d, c.n, c.h, c.w, in, ref);
  if (st == LC_OK) st = cc_bound_make(&rc, in, &b);
  for (int mode = 0; st == LC_OK && mode < 2; mode++) {
    lc_route route = tu_rand_int(0, 1) ? LC_ROUTE_GEMM1X1 : LC_ROUTE_AUTO;
    float *out = mode ? i8 : acc;
    cc_case mc = c;
    mc.d.int8_activations = mode;
    lc_conv_shape shape;
    for (size_t i = 0; i < nout; i++) out[i] = NAN;
    lc_status rs = cc_run(ctx[isa][threads - 1], &mc, route, in, out, &shape);
    TU_CHECK(rs == LC_OK && (route == LC_ROUTE_AUTO || shape.route == LC_ROUTE_GEMM1X1), "gemv %s mode %d: %s route %s [%s]", name, mode,
             lc_status_name(rs), lc_route_name(shape.route), dsc);
    if (rs != LC_OK) continue;
    int gemv = uses_gemv(&c, shape.route);
    gs.runs++;
    for (int64_t p = 0; p < M; p++)
      for (int64_t j = 0; j < N; j++) {
        size_t o = (size_t)(p * N + j);
        double e = fabs((double)out[o] - (double)ref[o]), bound, t1 = 0.0;
        if (mode && gemv)
          bound = int8_bound(&c.d, in + p * K, deq + j * K, (size_t)K, c.bias ? c.bias[j] : 0.0f, b.lip, ref[o], &t1);
        else
          bound = b.lip * b.gamma * (double)b.s[o] + 8.0 * U24 * fabs((double)ref[o]) + 1e-30;
        double r = e / bound;
        if (r != r) r = INFINITY;
        if (mode && gemv) {
          gs.worst_int8 = fmax(gs.worst_int8, r);
          if (t1 > 0) gs.worst_int8_t1 = fmax(gs.worst_int8_t1, e / t1);
        } else {
          gs.worst_acc = fmax(gs.worst_acc, r);
        }
        if (!(r <= 1.0)) {
          TU_CHECK(0, "gemv %s %s: row %lld out %lld = %.9g, reference %.9g, err/bound %.3g (isa %s threads %d) [%s]",
                   name, mode ? "int8" : "accurate", (long long)p, (long long)j, out[o], ref[o], r, cc_isa_names[isa],
                   threads, dsc);
          p = M; /* one report per run */
          break;
        }
      }
    if (mode && gemv) {
      gs.int8_runs++;
      gs.int8_differs += memcmp(acc, i8, nout * sizeof(float)) != 0;
    }
  }
  free(b.s);
  free(in);
  free(deq);
  free(ref);
  free(acc);
  free(i8);
  cc_free(&c);
}

static void part_gemv(void) {
  double t0 = lc_now_s();
  static const int64_t Ks[] = {1, 3, 17, 31, 33, 100, 255, 300, 517, 1000};
  static const int64_t Ns[] = {1, 3, 5, 13, 33, 65};
  int per = cc_quick() ? 2 : 5, n = 0;
  for (int ci = 0; ci < NCOMBO; ci++)
    for (int j = 0; j < per; j++, n++) {
      int64_t K = Ks[tu_rand_int(0, 9)], N = Ns[tu_rand_int(0, 5)], M = 1 + (n % 9);
      int isa;
      do isa = tu_rand_int(0, CC_NISA - 1);
      while (!have_isa[isa]);
      gemv_case(combo_of(ci), K, N, M, (lc_layout)(n % 2), isa, 1 + (n / 2) % 2);
    }
  /* More than 16 pixel rows: the GEMM route, where int8_activations must change nothing. */
  for (int j = 0; j < 4; j++, n++) gemv_case(combo_of(j * 5), 100 + j, 9, 20 + j, LC_NHWC, 0, 1 + j % 2);
  printf("part 3: %d GEMV-shaped convs (%ld runs), %.1f s: accurate worst err/bound %.4f; int8 worst err/bound %.4f, "
         "worst err / activation-rounding term %.4f; int8 differs from accurate in %ld of %ld runs\n",
         n, gs.runs, lc_now_s() - t0, gs.worst_acc, gs.worst_int8, gs.worst_int8_t1, gs.int8_differs, gs.int8_runs);
  TU_CHECK(gs.int8_runs > 0 && gs.int8_differs > gs.int8_runs / 2, "int8_activations had no effect (%ld of %ld runs)",
           gs.int8_differs, gs.int8_runs);
}

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
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = 20;
  d.out_channels = 3;
  d.kernel_h = d.kernel_w = 3;
  size_t nw = 3 * 20 * 9;
  float *w = malloc(nw * sizeof(float));
  tu_fill(w, nw, -1.0f, 1.0f);
  d.weights = w;
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
  lc_conv_desc_init(&c.d);
  c.d.in_channels = cin;
  c.d.out_channels = cout;
  c.d.kernel_h = c.d.kernel_w = k;
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

/* ---------------------------------------------------------------- part 5: weight bytes */

static void part_weight_bytes(void) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = d.out_channels = 256;
  d.kernel_h = d.kernel_w = 3;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  size_t nw = 256 * 256 * 9;
  float *w = malloc(nw * sizeof(float));
  tu_fill(w, nw, -1.0f, 1.0f);
  d.weights = w;
  lc_conv *cv = NULL;
  TU_CHECK(lc_conv_create(ctx[0][0], &d, &cv) == LC_OK, "f32 256->256: %s", lc_last_error());
  size_t f32 = lc_conv_weight_bytes(cv), raw = nw * sizeof(float);
  lc_conv_destroy(cv);
  printf("part 5: 3x3 256->256: f32 operator holds %zu bytes (plain tensor %zu); block 32:", f32, raw);
  for (int f = 1; f <= 2; f++)
    for (int asym = 0; asym < 2; asym++) {
      lc_conv_desc q = d;
      q.weight_format = (lc_weight_format)f;
      q.block_size = 32;
      q.asym = asym;
      cv = NULL;
      lc_status st = lc_conv_create(ctx[0][0], &q, &cv);
      TU_CHECK(st == LC_OK, "quantized 256->256: %s", lc_last_error());
      size_t qb = lc_conv_weight_bytes(cv);
      lc_conv_destroy(cv);
      /* docs/quantization.md: no fp32 copy of the whole weight tensor is ever made; create may hold
       * the quantized weights plus a row or a block of scratch. */
      size_t base = lc_alloc_current_bytes();
      lc_alloc_reset_peak();
      st = lc_conv_create(ctx[0][0], &q, &cv);
      size_t peak = lc_alloc_peak_bytes() - base;
      lc_conv_destroy(cv);
      TU_CHECK(st == LC_OK && peak <= qb + ((size_t)64 << 10),
               "%s %s: create peaks at %zu bytes, quantized weights are %zu (plain fp32 tensor %zu)",
               f == 2 ? "q4" : "q8", asym ? "asym" : "sym", peak, qb, raw);
      printf(" %s %s %zu (%.4fx tensor)", f == 2 ? "q4" : "q8", asym ? "asym" : "sym", qb, (double)qb / (double)raw);
      TU_CHECK(qb == expect_wbytes(&q), "weight bytes %zu, expected %zu", qb, expect_wbytes(&q));
      if (!asym) { /* the limits, against the operator and, stricter, against the plain fp32 tensor */
        double lim = f == 2 ? 0.16 : 0.3;
        TU_CHECK((double)qb <= lim * (double)f32 && (double)qb <= lim * (double)raw, "%s sym block 32: %zu bytes > %.2fx",
                 f == 2 ? "q4" : "q8", qb, lim);
      }
    }
  printf("\n");
  free(w);
}

/* ---------------------------------------------------------------- part 6: budget, threads */

typedef struct bcase {
  int64_t cin, cout, groups, k, h, w;
  lc_layout layout;
  int combo, int8;
} bcase;

/* Creates, prepares (and runs, when out != NULL) on a fresh context; *peak = peak bytes above the
 * level before prepare (prepare + run). Returns prepare's or run's status. */
static lc_status budget_run(const cc_case *c, lc_route r, size_t budget, int threads, const float *in, float *out,
                            size_t *peak, lc_route *chosen) {
  lc_context *cx = NULL;
  lc_status st = cc_context(LC_ISA_AUTO, threads, budget, &cx);
  if (st) return st;
  settle_pool(cx);
  lc_conv_desc d = c->d;
  d.route = r;
  lc_conv *cv = NULL;
  st = lc_conv_create(cx, &d, &cv);
  if (st == LC_OK) {
    lc_conv_shape sh;
    size_t base = lc_alloc_current_bytes();
    lc_alloc_reset_peak();
    st = lc_conv_prepare(cv, c->n, c->h, c->w, &sh);
    if (st == LC_OK && out) st = lc_conv_run(cv, in, out, NULL, 0);
    *peak = lc_alloc_peak_bytes() - base;
    *chosen = sh.route;
  }
  lc_conv_destroy(cv);
  lc_context_destroy(cx);
  return st;
}

static void part_budget(void) {
  double t0 = lc_now_s();
  static const bcase cases[] = {
      {64, 64, 1, 3, 16, 16, LC_NCHW, 1, 0},   /* q4 sym b16 */
      {64, 48, 1, 3, 14, 15, LC_NHWC, 10, 0},  /* q8 asym b64 */
      {96, 96, 2, 3, 9, 9, LC_NCHW, 19, 0},    /* q4 asym b128, groups */
      {2048, 33, 1, 1, 4, 4, LC_NHWC, 5, 1},   /* GEMV, q4 sym b32, int8 */
      {2048, 33, 1, 1, 1, 1, LC_NCHW, 4, 0},   /* GEMV, q8 sym b32, accurate (batch 3) */
      {256, 64, 1, 1, 12, 12, LC_NCHW, 13, 0}, /* gemm1x1, q4 sym b128 */
      {32, 32, 32, 3, 10, 10, LC_NHWC, 6, 0},  /* depthwise, q8 asym b32 */
  };
  static const lc_route routes[] = {LC_ROUTE_AUTO, LC_ROUTE_DIRECT, LC_ROUTE_GEMM1X1, LC_ROUTE_IM2COL,
                                    LC_ROUTE_IGEMM, LC_ROUTE_DEPTHWISE};
  size_t ncases = cc_quick() ? 4 : sizeof cases / sizeof cases[0];
  long checked = 0;
  for (size_t ci = 0; ci < ncases; ci++) {
    const bcase *bc = &cases[ci];
    cc_case c;
    lc_conv_desc_init(&c.d);
    c.d.in_channels = bc->cin;
    c.d.out_channels = bc->cout;
    c.d.groups = bc->groups;
    c.d.kernel_h = c.d.kernel_w = bc->k;
    c.d.pad_top = c.d.pad_left = c.d.pad_bottom = c.d.pad_right = bc->k / 2;
    c.d.layout = bc->layout;
    c.d.int8_activations = bc->int8;
    c.d.activation = LC_ACT_RELU;
    c.n = bc->h == 1 ? 3 : 1;
    c.h = bc->h;
    c.w = bc->w;
    cc_fill(&c, 1);
    set_combo(&c.d, combo_of(bc->combo));
    size_t nin = cc_in_count(&c), nout = cc_out_count(&c);
    float *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float)), *out = malloc(nout * sizeof(float));
    float *ref2 = malloc(nout * sizeof(float));
    tu_fill(in, nin, -1.0f, 1.0f);
    char dsc[400], name[64];
    cc_describe(&c, dsc, sizeof dsc);
    combo_name(combo_of(bc->combo), name, sizeof name);
    for (size_t ri = 0; ri < sizeof routes / sizeof routes[0]; ri++) {
      lc_route r = routes[ri], chosen = LC_ROUTE_AUTO;
      if (r != LC_ROUTE_AUTO && !route_must_run(&c, r)) continue;
      size_t peak = 0;
      lc_status st = budget_run(&c, r, 0, 1, in, ref, &peak, &chosen);
      TU_CHECK(st == LC_OK, "budget case %zu route %s unlimited: %s", ci, lc_route_name(r), lc_last_error());
      if (st) continue;
      /* The smallest budget prepare accepts, per thread count. */
      for (int threads = 1; threads <= 2; threads++) {
        size_t lo = 0, hi = (size_t)64 << 20, pk = 0;
        lc_route ch2;
        while (hi - lo > 1) {
          size_t mid = lo + (hi - lo) / 2;
          if (budget_run(&c, r, mid, threads, NULL, NULL, &pk, &ch2) == LC_OK)
            hi = mid;
          else
            lo = mid;
        }
        size_t budgets[2] = {(size_t)256 << 10, hi};
        for (int bi = 0; bi < 2; bi++) {
          for (size_t i = 0; i < nout; i++) out[i] = NAN;
          st = budget_run(&c, r, budgets[bi], threads, in, out, &peak, &ch2);
          if (st == LC_ERR_BUDGET && budgets[bi] < hi) continue; /* 256 KiB below what this route needs */
          checked++;
          TU_CHECK(st == LC_OK, "budget case %zu route %s budget %zu threads %d: %s", ci, lc_route_name(r),
                   budgets[bi], threads, lc_last_error());
          if (st) continue;
          TU_CHECK(peak <= budgets[bi],
                   "route %s (ran %s) %s threads %d: peak allocation in prepare+run %zu bytes > budget %zu%s [%s]",
                   lc_route_name(r), lc_route_name(ch2), name, threads, peak, budgets[bi],
                   bi ? " (smallest accepted)" : "", dsc);
          if (ch2 != chosen) { /* AUTO took another route under the budget: compare with that route */
            size_t pk2;
            lc_route ch3;
            TU_CHECK(budget_run(&c, ch2, 0, 1, in, ref2, &pk2, &ch3) == LC_OK, "route %s unlimited: %s",
                     lc_route_name(ch2), lc_last_error());
          } else {
            memcpy(ref2, ref, nout * sizeof(float));
          }
          TU_CHECK(memcmp(out, ref2, nout * sizeof(float)) == 0,
                   "route %s (ran %s) %s threads %d budget %zu: output not bitwise equal to the same route, 1 thread, no budget [%s]",
                   lc_route_name(r), lc_route_name(ch2), name, threads, budgets[bi], dsc);
        }
      }
    }
    free(in);
    free(ref);
    free(ref2);
    free(out);
    cc_free(&c);
  }
  printf("part 6: %zu shapes, %ld budgeted runs (256 KiB and the smallest accepted, threads 1 and 2), %.1f s\n",
         ncases, checked, lc_now_s() - t0);
}

/* Threads 1 vs 2, every table and route, on random quantized shapes: bitwise identical. */
static void part_threads(void) {
  int nshapes = cc_quick() ? 8 : 30;
  long compared = 0;
  for (int s = 0; s < nshapes; s++) {
    cc_case c;
    cc_generate(&c, s % 3 == 0 ? CC_1X1 : (s % 3 == 1 ? CC_BIG_IMG : CC_ANY));
    qcombo q = combo_of((s * 7) % NCOMBO);
    set_combo(&c.d, q);
    c.d.int8_activations = s % 2;
    size_t nin = cc_in_count(&c), nout = cc_out_count(&c);
    float *in = malloc(nin * sizeof(float)), *o1 = malloc(nout * sizeof(float)), *o2 = malloc(nout * sizeof(float));
    tu_fill(in, nin, -1.0f, 1.0f);
    for (int i = 0; i < CC_NISA; i++)
      for (int r = 0; have_isa[i] && r < LC_ROUTE_COUNT; r++) {
        lc_conv_shape sh1, sh2;
        lc_status st1 = cc_run(ctx[i][0], &c, (lc_route)r, in, o1, &sh1);
        lc_status st2 = cc_run(ctx[i][1], &c, (lc_route)r, in, o2, &sh2);
        TU_CHECK(st1 == st2, "threads 1 / 2 statuses differ: %s / %s", lc_status_name(st1), lc_status_name(st2));
        if (st1 || st2) continue;
        compared++;
        char dsc[400];
        cc_describe(&c, dsc, sizeof dsc);
        TU_CHECK(memcmp(o1, o2, nout * sizeof(float)) == 0, "route %s isa %s: threads 1 and 2 differ [%s]",
                 lc_route_name(sh1.route), cc_isa_names[i], dsc);
      }
    free(in);
    free(o1);
    free(o2);
    cc_free(&c);
  }
  printf("part 6b: threads 1 vs 2 bitwise on %ld runs\n", compared);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(0x0C0DE5EEDull);
  size_t start = lc_alloc_current_bytes();
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) {
      lc_status st = cc_context(cc_isas[i], t + 1, 0, &ctx[i][t]);
      TU_CHECK(st == LC_OK || st == LC_ERR_UNSUPPORTED, "context %s: %s", cc_isa_names[i], lc_status_name(st));
      have_isa[i] = st == LC_OK;
      if (st != LC_OK) ctx[i][t] = NULL;
      if (ctx[i][t]) settle_pool(ctx[i][t]);
    }
  TU_CHECK(have_isa[0], "the scalar table must always be available");
  for (int i = 0; i < CC_NISA; i++) printf("table %s: %s\n", cc_isa_names[i], have_isa[i] ? "tested" : "not supported");
  if (!have_isa[0]) return tu_finish("test_conv_quant");
  static void (*const parts[])(void) = {part_routes, part_gemv, part_prequant, part_weight_bytes, part_budget,
                                        part_threads};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    parts[i]();
    if (getenv("LC_TEST_VERBOSE")) printf("  %zd bytes above the start\n", (ssize_t)(lc_alloc_current_bytes() - start));
  }
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++)
      if (ctx[i][t]) lc_context_destroy(ctx[i][t]);
  TU_CHECK(lc_alloc_current_bytes() == start, "%zd bytes still allocated at the end",
           (ssize_t)(lc_alloc_current_bytes() - start));
  return tu_finish("test_conv_quant");
}
