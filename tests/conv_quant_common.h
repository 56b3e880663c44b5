/* Shared by the Q8/Q4 conv tests (test_conv_quant*.c): format x symmetry x block combos, a
 * context per kernel table and thread count, and the block geometry of docs/quantization.md.
 * Header-only: each test links only with testutil.c. */
#ifndef LC_TEST_CONV_QUANT_COMMON_H
#define LC_TEST_CONV_QUANT_COMMON_H

#include <ctype.h>
#include <float.h>

#include "conv_cases.h"
#include "util/timer.h"

#define U24 5.9604644775390625e-08 /* 2^-24, fp32 unit roundoff */

static const int block_sizes[6] = {16, 32, 64, 128, 256, 0};
#define NCOMBO 24 /* format (2) x asym (2) x block size (6) */

typedef struct qcombo {
  lc_weight_format fmt;
  int asym, block;
} qcombo;

static inline qcombo combo_of(int i) {
  qcombo q;
  q.fmt = (i & 1) ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
  q.asym = (i >> 1) & 1;
  q.block = block_sizes[(i >> 2) % 6];
  return q;
}

static inline void combo_name(qcombo q, char *buf, size_t len) {
  snprintf(buf, len, "%s %s block %d", q.fmt == LC_WEIGHTS_Q4 ? "q4" : "q8", q.asym ? "asym" : "sym", q.block);
}

static inline void set_combo(lc_conv_desc *d, qcombo q) {
  d->weight_format = q.fmt;
  d->asym = q.asym;
  d->block_size = q.block;
}

static lc_context *ctx[CC_NISA][2]; /* [table][threads - 1] */
static int have_isa[CC_NISA];

/* Pool workers free their start-up argument when they first run, after lc_context_create has
 * returned: run a 2-task conv so every worker has started before bytes are counted. */
static inline void settle_pool(lc_context *cx) {
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

static inline int64_t cin_g(const lc_conv_desc *d) { return d->in_channels / d->groups; }
static inline int64_t taps_of(const lc_conv_desc *d) { return d->kernel_h * d->kernel_w; }

static inline size_t expect_nb(const lc_conv_desc *d) {
  if (d->block_size == 0) return 1;
  return (size_t)(taps_of(d) * ((cin_g(d) + d->block_size - 1) / d->block_size));
}

/* Offsets (within one output channel's OIHW weights) of block b's elements; returns the count. */
static inline size_t block_elems(const lc_conv_desc *d, size_t b, size_t *idx) {
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
static inline size_t block_of(const lc_conv_desc *d, int64_t ic, int64_t t) {
  if (d->block_size == 0) return 0;
  int64_t B = d->block_size, bpt = (cin_g(d) + B - 1) / B;
  return (size_t)(t * bpt + ic / B);
}

/* lc_conv_weight_bytes as documented: codes (every block byte aligned), scales (+ offsets),
 * bias, and the fp32 depthwise copy. */
static inline size_t expect_wbytes(const lc_conv_desc *d) {
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

static inline int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Part 2. Per block, with the step recomputed from the block's ORIGINAL range (sym: absmax / qmax,
 * asym: (max - min) / (2^b - 1); conv weights are quantized without clipping):
 *   |deq - w| <= step / 2 + 4 FLT_EPSILON (|w| + |offset| + 2^(b-1) step)  (the decode's ulps, as documented)
 * and a block holds at most 2^b distinct values. Returns the bad blocks; *worst = max |deq - w| / (step / 2). */
static inline long check_half_step(const lc_conv_desc *d, const float *w, const float *deq, double *worst, char *msg,
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


/* Every route of one case against the reference (part 1, and the other tests' cases). */
typedef struct rstat {
  long ran, failed;
  double worst;
  double fail_macs;
  char fail[800];
} rstat;

static rstat rstats[LC_ROUTE_COUNT];

/* Can route r run this shape? (direct/im2col/igemm: always, without a budget; winograd: 3x3 stride 1.) */
static inline int route_must_run(const cc_case *c, lc_route r) {
  const lc_conv_desc *d = &c->d;
  if (r == LC_ROUTE_WINOGRAD4) return 0; /* fp32 only */
  if (r == LC_ROUTE_I8GEMM) return 0;    /* int8 activations only: test_conv_qi8.c, with its own bound */
  if (r == LC_ROUTE_STEM)
    return d->layout == LC_NCHW && d->groups == 1 && d->in_channels <= 4 && d->stride_w <= 4 &&
           d->in_channels * d->kernel_h * d->kernel_w <= 160;
  if (r == LC_ROUTE_TAPROWS) return d->layout == LC_NCHW;
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
static inline int uses_gemv(const cc_case *c, lc_route chosen) {
  int64_t oh, ow;
  cc_out_size(c, &oh, &ow);
  return chosen == LC_ROUTE_GEMM1X1 && c->d.groups == 1 && c->n * oh * ow <= 16 &&
         (c->d.layout == LC_NHWC || oh * ow == 1);
}

static inline void note_fail(lc_route r, const cc_case *c, const char *what, int isa, int threads) {
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
static inline void check_routes(const cc_case *c, const float *deq, const float *in, int threads, int int8_other) {
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

/* Random OIHW weights in [-1, 1] for d (malloc'd; d->weights points at them). */
static inline float *cq_random_weights(lc_conv_desc *d) {
  size_t nw = (size_t)(d->out_channels * cin_g(d) * taps_of(d));
  float *w = malloc(nw * sizeof(float));
  tu_fill(w, nw, -1.0f, 1.0f);
  d->weights = w;
  return w;
}

/* Contexts for every table (1 and 2 threads); 0 when the scalar table is missing. */
static inline int cq_setup(size_t *start) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(0x0C0DE5EEDull);
  *start = lc_alloc_current_bytes();
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
  return have_isa[0];
}

/* Frees the contexts, checks nothing leaked and prints the totals. */
static inline int cq_finish(const char *name, size_t start) {
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++)
      if (ctx[i][t]) lc_context_destroy(ctx[i][t]);
  TU_CHECK(lc_alloc_current_bytes() == start, "%zd bytes still allocated at the end",
           (ssize_t)(lc_alloc_current_bytes() - start));
  return tu_finish(name);
}

#endif
