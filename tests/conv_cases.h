/* Shared by the conv tests: random conv shapes (general and aimed at one route), running one
 * shape through a route, and the error bound against lc_conv_reference.
 * Header-only (static inline) because each tests/test_*.c links only with testutil.c. */
#ifndef LC_TEST_CONV_CASES_H
#define LC_TEST_CONV_CASES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowconv.h"
#include "testutil.h"

typedef struct cc_case {
  lc_conv_desc d;
  int64_t n, h, w;
  float *wts, *bias; /* owned (malloc) */
} cc_case;

/* What a generated shape aims at. */
enum { CC_ANY = 0, CC_1X1 = 1, CC_DW = 2, CC_BIGK = 3, CC_TINY_IMG = 4, CC_WINO = 5, CC_BIG_IMG = 6 };

static inline int cc_quick(void) {
  const char *e = getenv("LC_TEST_QUICK");
  return e && *e && *e != '0';
}

/* A square conv: cin -> cout channels, k x k kernel, pad on every side; the rest as desc_init. */
static inline lc_conv_desc cc_desc(int64_t cin, int64_t cout, int64_t k, int64_t pad) {
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = cin;
  d.out_channels = cout;
  d.kernel_h = d.kernel_w = k;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
  return d;
}

static inline int64_t cc_ext(int64_t k, int64_t d) { return (k - 1) * d + 1; }

/* Output size of one dimension with the case's (explicit or auto) pads; 0 if invalid. */
static inline int64_t cc_out_dim(const lc_conv_desc *d, int64_t in, int64_t k, int64_t s, int64_t dl, int64_t pb,
                                 int64_t pe) {
  int64_t e = cc_ext(k, dl);
  if (d->auto_pad == LC_PAD_VALID) pb = pe = 0;
  if (d->auto_pad == LC_PAD_SAME_UPPER || d->auto_pad == LC_PAD_SAME_LOWER) return (in + s - 1) / s;
  if (in + pb + pe < e) return 0;
  return (in + pb + pe - e) / s + 1;
}

static inline void cc_out_size(const cc_case *c, int64_t *oh, int64_t *ow) {
  const lc_conv_desc *d = &c->d;
  *oh = cc_out_dim(d, c->h, d->kernel_h, d->stride_h, d->dilation_h, d->pad_top, d->pad_bottom);
  *ow = cc_out_dim(d, c->w, d->kernel_w, d->stride_w, d->dilation_w, d->pad_left, d->pad_right);
}

static inline size_t cc_in_count(const cc_case *c) { return (size_t)(c->n * c->d.in_channels * c->h * c->w); }
static inline size_t cc_out_count(const cc_case *c) {
  int64_t oh, ow;
  cc_out_size(c, &oh, &ow);
  return (size_t)(c->n * c->d.out_channels * oh * ow);
}
static inline int64_t cc_k(const cc_case *c) { return c->d.in_channels / c->d.groups * c->d.kernel_h * c->d.kernel_w; }
static inline double cc_macs(const cc_case *c) { return (double)cc_out_count(c) * (double)cc_k(c); }

static inline void cc_free(cc_case *c) {
  free(c->wts);
  free(c->bias);
  c->wts = c->bias = NULL;
}

/* Fills weights/bias (values in [-1, 1]) for the descriptor already set in c->d. */
static inline void cc_fill(cc_case *c, int with_bias) {
  size_t nw = (size_t)(c->d.out_channels * cc_k(c));
  c->wts = malloc(nw * sizeof(float));
  tu_fill(c->wts, nw, -1.0f, 1.0f);
  c->bias = NULL;
  if (with_bias) {
    c->bias = malloc((size_t)c->d.out_channels * sizeof(float));
    tu_fill(c->bias, (size_t)c->d.out_channels, -1.0f, 1.0f);
  }
  c->d.weights = c->wts;
  c->d.bias = c->bias;
}

static inline void cc_random_act(lc_conv_desc *d) {
  d->activation = (lc_activation)tu_rand_int(0, 4);
  d->act_min = tu_rand_float(-1.0f, 0.0f);
  d->act_max = d->act_min + tu_rand_float(0.1f, 1.5f);
  d->act_alpha = tu_rand_float(0.01f, 0.5f);
}

/* The post affine after the activation (lc_conv_desc post_mul / post_add) on every fourth shape i;
 * drawn from i, not the generator, so the shapes themselves stay those of the seed. */
static inline void cc_post_of(lc_conv_desc *d, int i) {
  if (i % 4 != 3) return;
  d->post_mul = -1.5f + 0.37f * (float)(i % 9); /* never 1 */
  d->post_add = 0.25f * (float)(i % 5) - 0.5f;
}

/* PRelu (LC_ACT_PRELU) on every fifth shape i (i % 5 == 1), slopes drawn from i in [-1.5, 1.5]
 * (0, negative and > 1 included) into one static array (the conv copies them at create; the next
 * call refills it): no draw from the generator, so the shapes stay those of the seed. */
#define CC_SLOPES_MAX 4096
static float cc_slopes[CC_SLOPES_MAX];
static inline void cc_prelu_of(lc_conv_desc *d, int i) {
  if (i % 5 != 1 || d->out_channels > CC_SLOPES_MAX) return;
  for (int64_t o = 0; o < d->out_channels; o++) cc_slopes[o] = 0.3f * (float)((o * 7 + i) % 11 - 5);
  d->activation = LC_ACT_PRELU;
  d->act_slopes = cc_slopes;
}

/* Pad values (lc_conv_desc.pad_values, a BatchNormalization folded from before the conv) on every
 * seventh shape i (i % 7 == 3), drawn from i in [-1, 1] like the slopes; routes that pad with
 * zeros only return LC_ERR_UNSUPPORTED for them. */
static float cc_padv[CC_SLOPES_MAX];
static inline void cc_padv_of(lc_conv_desc *d, int i) {
  if (i % 7 != 3 || d->in_channels > CC_SLOPES_MAX) return;
  for (int64_t c = 0; c < d->in_channels; c++) cc_padv[c] = 0.25f * (float)((c * 5 + i) % 9 - 4);
  d->pad_values = cc_padv;
}

/* The activation's Lipschitz constant (see cc_bound). */
static inline double cc_act_lip(const lc_conv_desc *d) {
  double lip = 1.0;
  if (d->activation == LC_ACT_LEAKY_RELU && fabs(d->act_alpha) > 1.0) lip = fabs(d->act_alpha);
  if (d->activation == LC_ACT_HARD_SWISH) lip = 1.5;
  for (int64_t o = 0; d->activation == LC_ACT_PRELU && o < d->out_channels; o++) lip = fmax(lip, fabs(d->act_slopes[o]));
  return lip;
}

static inline void cc_random_pads(lc_conv_desc *d) {
  d->auto_pad = tu_rand_int(0, 9) < 7 ? LC_PAD_NOTSET : (lc_auto_pad)tu_rand_int(1, 3);
  int64_t eh = cc_ext(d->kernel_h, d->dilation_h), ew = cc_ext(d->kernel_w, d->dilation_w);
  /* Pads up to the kernel extent (rarely beyond: rows that see only padding). */
  int mh = (int)(eh < 5 ? eh : 5), mw = (int)(ew < 5 ? ew : 5);
  d->pad_top = tu_rand_int(0, mh);
  d->pad_bottom = tu_rand_int(0, mh);
  d->pad_left = tu_rand_int(0, mw);
  d->pad_right = tu_rand_int(0, mw);
}

/* One random shape of the given kind; redraws until valid and small enough for the test time. */
static inline void cc_generate(cc_case *c, int kind) {
  for (;;) {
    lc_conv_desc *d = &c->d;
    lc_conv_desc_init(d);
    int64_t g = 1, cig, cog;
    if (kind == CC_DW || (kind == CC_ANY && tu_rand_int(0, 5) == 0)) {
      g = tu_rand_int(1, 40);
      cig = 1;
      cog = tu_rand_int(0, 4) == 0 ? 2 : 1; /* channel multiplier 2 now and then */
    } else {
      if (tu_rand_int(0, 3) == 0) g = tu_rand_int(2, 4);
      cig = tu_rand_int(1, 19);
      cog = tu_rand_int(1, 21);
    }
    d->in_channels = g * cig;
    d->out_channels = g * cog;
    d->groups = g;
    if (kind == CC_1X1) {
      d->kernel_h = d->kernel_w = 1;
    } else if (kind == CC_BIGK) {
      d->kernel_h = tu_rand_int(5, 11);
      d->kernel_w = tu_rand_int(5, 11);
    } else if (kind == CC_WINO) {
      d->kernel_h = d->kernel_w = 3;
    } else if (kind == CC_DW) {
      int k = tu_rand_int(0, 3) == 0 ? tu_rand_int(1, 7) : 3 + 2 * tu_rand_int(0, 1);
      d->kernel_h = k;
      d->kernel_w = tu_rand_int(0, 4) == 0 ? tu_rand_int(1, 7) : k;
    } else {
      d->kernel_h = tu_rand_int(0, 2) ? tu_rand_int(1, 5) : tu_rand_int(1, 11);
      d->kernel_w = tu_rand_int(0, 3) ? d->kernel_h : tu_rand_int(1, 11);
    }
    d->stride_h = tu_rand_int(0, 2) ? 1 : tu_rand_int(2, 3);
    d->stride_w = tu_rand_int(0, 3) ? d->stride_h : tu_rand_int(1, 3);
    d->dilation_h = tu_rand_int(0, 3) ? 1 : tu_rand_int(2, 3);
    d->dilation_w = tu_rand_int(0, 3) ? d->dilation_h : tu_rand_int(1, 3);
    cc_random_pads(d);
    if (kind == CC_WINO) { /* what Winograd F(2x2, 3x3) takes: stride 1, dilation 1 */
      d->stride_h = d->stride_w = d->dilation_h = d->dilation_w = 1;
      cc_random_pads(d);
    }
    if (kind == CC_1X1) { /* what gemm1x1 takes: stride 1, no pad */
      d->stride_h = d->stride_w = 1;
      d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 0;
      d->auto_pad = tu_rand_int(0, 3) ? LC_PAD_NOTSET : LC_PAD_VALID;
    }
    d->layout = (lc_layout)tu_rand_int(0, 1);
    cc_random_act(d);
    c->n = tu_rand_int(0, 3) ? 1 : tu_rand_int(2, 3);
    if (kind == CC_TINY_IMG || tu_rand_int(0, 9) == 0) {
      int t = tu_rand_int(0, 2); /* 1x1, 1xN, Nx1 */
      c->h = t == 2 ? tu_rand_int(2, 12) : 1;
      c->w = t == 1 ? tu_rand_int(2, 12) : 1;
    } else if (kind == CC_BIG_IMG) { /* several pixel tiles per image */
      c->h = tu_rand_int(16, 40);
      c->w = tu_rand_int(16, 40);
    } else {
      c->h = tu_rand_int(1, 17);
      c->w = tu_rand_int(1, 17);
    }
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh < 1 || ow < 1) continue;
    if (cc_macs(c) > (kind == CC_BIG_IMG ? 1.5e6 : 4e5)) continue;
    c->wts = c->bias = NULL;
    cc_fill(c, tu_rand_int(0, 2) != 0);
    return;
  }
}

static inline void cc_describe(const cc_case *c, char *buf, size_t len) {
  const lc_conv_desc *d = &c->d;
  static const char *ap[] = {"notset", "valid", "same_upper", "same_lower"};
  snprintf(buf, len,
           "n=%lld in=%lldx%lld cin=%lld cout=%lld groups=%lld k=%lldx%lld stride=%lldx%lld dil=%lldx%lld "
           "pads(t,l,b,r)=%lld,%lld,%lld,%lld auto_pad=%s layout=%s act=%d post=%g,%g bias=%d pad_values=%d",
           (long long)c->n, (long long)c->h, (long long)c->w, (long long)d->in_channels,
           (long long)d->out_channels, (long long)d->groups, (long long)d->kernel_h, (long long)d->kernel_w,
           (long long)d->stride_h, (long long)d->stride_w, (long long)d->dilation_h, (long long)d->dilation_w,
           (long long)d->pad_top, (long long)d->pad_left, (long long)d->pad_bottom, (long long)d->pad_right,
           ap[d->auto_pad & 3], d->layout == LC_NHWC ? "nhwc" : "nchw", (int)d->activation, (double)d->post_mul,
           (double)d->post_add, d->bias != NULL, d->pad_values != NULL);
}

/* Creates, prepares and runs one conv (workspace from the library); the operator is destroyed.
 * Returns the first failing status; *shape gets what prepare reported. */
/* Not NULL: cc_run adds this residual (lc_conv_run_residual); see cc_residual_ref. */
static const float *cc_residual;

static inline lc_status cc_run(lc_context *ctx, const cc_case *c, lc_route route, const float *in, float *out,
                               lc_conv_shape *shape) {
  lc_conv_desc d = c->d;
  d.route = route;
  lc_conv *conv = NULL;
  memset(shape, 0, sizeof *shape);
  lc_status st = lc_conv_create(ctx, &d, &conv);
  if (st != LC_OK) return st;
  st = lc_conv_prepare(conv, c->n, c->h, c->w, shape);
  if (st == LC_OK)
    st = cc_residual ? lc_conv_run_residual(conv, in, cc_residual, out, NULL, 0) : lc_conv_run(conv, in, out, NULL, 0);
  lc_conv_destroy(conv);
  return st;
}

/* The descriptor's activation then post affine on v of output channel o, in fp32 as the library. */
static inline float cc_act(const lc_conv_desc *d, float v, int64_t o) {
  switch (d->activation) {
    case LC_ACT_RELU: v = v > 0.0f ? v : 0.0f; break;
    case LC_ACT_CLIP: v = v < d->act_min ? d->act_min : (v > d->act_max ? d->act_max : v); break;
    case LC_ACT_LEAKY_RELU: v = v < 0.0f ? d->act_alpha * v : v; break;
    case LC_ACT_HARD_SWISH: {
      float t = v / 6.0f + 0.5f;
      t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
      v = v * t;
      break;
    }
    case LC_ACT_PRELU: v = v < 0.0f ? d->act_slopes[o] * v : v; break;
    default: break;
  }
  return d->post_mul != 1.0f || d->post_add != 0.0f ? v * d->post_mul + d->post_add : v;
}

/* ref = post(act(conv + bias + r)) from the reference without activation (pre, overwritten), and
 * radd = |pre| + |r| (the residual add's rounding, cc_err_ratio). */
static inline lc_status cc_residual_ref(const cc_case *c, const float *in, const float *r, float *ref, float *radd) {
  lc_conv_desc d = c->d;
  d.activation = LC_ACT_NONE;
  d.post_mul = 1.0f, d.post_add = 0.0f;
  lc_status st = lc_conv_reference(&d, c->n, c->h, c->w, in, ref);
  int64_t oh, ow, M = c->d.out_channels;
  cc_out_size(c, &oh, &ow);
  size_t n = cc_out_count(c), hw = (size_t)(oh * ow);
  for (size_t i = 0; st == LC_OK && i < n; i++) {
    int64_t o = c->d.layout == LC_NCHW ? (int64_t)(i / hw % (size_t)M) : (int64_t)(i % (size_t)M);
    radd[i] = fabsf(ref[i]) + fabsf(r[i]);
    ref[i] = cc_act(&c->d, ref[i] + r[i], o);
  }
  return st;
}

/* Error bound, per output element.
 * A route computes each output as an fp32 sum of K = cin/groups*kh*kw products plus the bias, in
 * some order (K blocks, split accumulators, FMA or not). Whatever the order, each term goes through
 * at most K+1 roundings, so (Higham, Accuracy and Stability, Thm 3.1 and 3.3):
 *     |out_pre - exact| <= gamma(K+2) * S,   S = sum_k |x_k*w_k| + |bias|,   gamma(n) = n*u/(1-n*u)
 * with u = 2^-24 (K+2: one more for the bias, one for the reference's own rounding to fp32).
 * S <= (K+1) * max|x| * max|w| (values in [-1, 1]), so this is the "C * eps * K * max|w|*max|x|"
 * bound with C = K+2 worst case; using S per element (computed by the reference on |x|, |w|) keeps it
 * tight where the terms cancel. The activations are Lipschitz with L = 1 (relu, clip), max(1, alpha)
 * (leaky relu), 1.5 (hard swish: slope x/3 + 1/2 <= 1.5), max(1, max |slope|) (PRelu), and their own fp32 ops add a few ulps of
 * the result: bound = L * gamma(K+2) * S + 8u * |ref|. A post affine y * m + a scales L by |m| and
 * the activation's ulps by |m| (|y m| <= |ref| + |a|), and adds two roundings: 8u (|ref| + |a|).
 * Winograd F(2x2, 3x3) sums other terms: V = B^T d B (<= 4 inputs, |V| <= 4 mx), U = G g G^T
 * (coefficients 1 and 1/2, |U| <= 2.25 mw), M = sum over cin/groups channels of U*V, Y = A^T M A
 * (9 M terms, coefficients +-1). Each step's rounding is bounded by its absolute sum, so
 *     |out_pre - exact| <= gamma(cin_g + 12) * (81 * cin_g * mx * mw + |bias|)
 * with mx, mw the largest |x|, |w| (cin_g + 12: 3 + 4 roundings in the transforms, cin_g in the
 * channel sum, 4 in the output transform, 1 for the bias). F(4x4, 3x3) (route winograd4):
 *     gamma(cin_g + 25) * (4444.5 * cin_g * mx * mw + |bias|)   (derived in test_conv_winograd.c) */
typedef struct cc_bound {
  float *s;  /* S per output element */
  double lip;
  double gamma;
  double wino, wino4; /* the Winograd bounds above, before L */
  double post_add;    /* |post_add| */
  const float *radd;  /* with a residual: |pre| + |r| per element (cc_residual_ref), else NULL */
} cc_bound;

static inline lc_status cc_bound_make(const cc_case *c, const float *in, cc_bound *b) {
  size_t nin = cc_in_count(c), nout = cc_out_count(c), nw = (size_t)(c->d.out_channels * cc_k(c));
  float *ain = malloc(nin * sizeof(float)), *aw = malloc(nw * sizeof(float));
  float *ab = c->bias ? malloc((size_t)c->d.out_channels * sizeof(float)) : NULL;
  float *apv = c->d.pad_values ? malloc((size_t)c->d.in_channels * sizeof(float)) : NULL;
  b->s = malloc(nout * sizeof(float));
  double mx = 0.0, mw = 0.0, mb = 0.0;
  for (size_t i = 0; i < nin; i++) ain[i] = fabsf(in[i]), mx = fmax(mx, ain[i]);
  /* a padding pixel is an input of value pad_values[ic] (the sums S and max |x| count it) */
  for (int64_t i = 0; apv && i < c->d.in_channels; i++) apv[i] = fabsf(c->d.pad_values[i]), mx = fmax(mx, apv[i]);
  for (size_t i = 0; i < nw; i++) aw[i] = fabsf(c->wts[i]), mw = fmax(mw, aw[i]);
  for (int64_t i = 0; ab && i < c->d.out_channels; i++) ab[i] = fabsf(c->bias[i]), mb = fmax(mb, ab[i]);
  lc_conv_desc d = c->d;
  d.weights = aw;
  d.bias = ab;
  d.pad_values = apv;
  d.activation = LC_ACT_NONE;
  d.post_mul = 1.0f, d.post_add = 0.0f;
  lc_status st = lc_conv_reference(&d, c->n, c->h, c->w, ain, b->s);
  free(ain);
  free(aw);
  free(ab);
  free(apv);
  double u = ldexp(1.0, -24), n = (double)cc_k(c) + 2.0;
  b->gamma = n * u / (1.0 - n * u);
  double cin_g = (double)(c->d.in_channels / c->d.groups), nw2 = cin_g + 12.0;
  b->wino = nw2 * u / (1.0 - nw2 * u) * (81.0 * cin_g * mx * mw + mb);
  double nw4 = cin_g + 25.0;
  b->wino4 = nw4 * u / (1.0 - nw4 * u) * (40000.0 / 9.0 * cin_g * mx * mw + mb);
  b->lip = cc_act_lip(&c->d) * fmax(1.0, fabs(c->d.post_mul));
  b->radd = NULL;
  b->post_add = fabs(c->d.post_add);
  return st;
}

/* Max of |out - ref| / bound over the tensor (NaN counts as infinity); index of the worst in *at.
 * route: the route that ran (Winograd has its own bound). */
static inline double cc_err_ratio(const cc_bound *b, lc_route route, const float *out, const float *ref, size_t n,
                                  size_t *at) {
  double worst = 0.0, u = ldexp(1.0, -24);
  *at = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)out[i] - (double)ref[i]);
    double pre = route == LC_ROUTE_WINOGRAD    ? b->wino
                 : route == LC_ROUTE_WINOGRAD4 ? b->wino4
                                               : b->gamma * (double)b->s[i];
    if (b->radd) pre += 2.0 * u * (double)b->radd[i]; /* the add's rounding (and the reference's) */
    double bound = b->lip * pre + 8.0 * u * (fabs((double)ref[i]) + b->post_add) + 1e-30;
    double r = e / bound;
    if (r != r) r = INFINITY;
    if (r > worst) {
      worst = r;
      *at = i;
    }
  }
  return worst;
}

/* Kernel tables to try; a context for one the CPU lacks returns LC_ERR_UNSUPPORTED. */
static const lc_isa cc_isas[] = {LC_ISA_SCALAR, LC_ISA_AVX2, LC_ISA_AVX512};
static const char *const cc_isa_names[] = {"scalar", "avx2", "avx512"};
#define CC_NISA 3

static inline lc_status cc_context(lc_isa isa, int threads, size_t budget, lc_context **ctx) {
  lc_context_params p;
  lc_context_params_init(&p);
  p.isa = isa;
  p.threads = threads;
  p.workspace_budget = budget;
  return lc_context_create(&p, ctx);
}

/* Route r runs within `need` bytes of workspace at `threads` and, one byte under, fails with
 * LC_ERR_BUDGET naming the route. */
static inline void cc_budget_edge(const cc_case *c, lc_route r, size_t need, int threads, const float *in,
                                  const float *ref, float *out, const cc_bound *b) {
  const char *name = lc_route_name(r);
  lc_context *cx;
  lc_conv_shape shape;
  size_t at, nout = cc_out_count(c);
  TU_CHECK(cc_context(LC_ISA_AUTO, threads, need, &cx) == LC_OK, "context");
  lc_status st = cc_run(cx, c, r, in, out, &shape);
  TU_CHECK(st == LC_OK && shape.workspace_bytes <= need, "%s at its budget: %s", name, lc_status_name(st));
  TU_CHECK(st != LC_OK || cc_err_ratio(b, r, out, ref, nout, &at) <= 1.0, "%s at its budget: error", name);
  lc_context_destroy(cx);
  TU_CHECK(cc_context(LC_ISA_AUTO, threads, need - 1, &cx) == LC_OK, "context");
  st = cc_run(cx, c, r, in, out, &shape);
  TU_CHECK(st == LC_ERR_BUDGET, "%s one byte under its budget: %s", name, lc_status_name(st));
  TU_CHECK(strstr(lc_last_error(), name) != NULL, "the error names the route: %s", lc_last_error());
  lc_context_destroy(cx);
}

/* One context per kernel table x 1, 2 threads (NULL where the CPU lacks the table). */
static inline void cc_contexts_open(lc_context *ctx[CC_NISA][2]) {
  int any = 0;
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) {
      ctx[i][t] = NULL;
      if (cc_context(cc_isas[i], t + 1, 0, &ctx[i][t]) != LC_OK) ctx[i][t] = NULL;
      else any = 1;
    }
  TU_CHECK(any && ctx[0][0], "no kernel table");
}

static inline void cc_contexts_close(lc_context *ctx[CC_NISA][2]) {
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) lc_context_destroy(ctx[i][t]);
}

/* A route's randomized and Q8/Q4 checks: make(c, big) draws a case, check(c, in, ref, b) runs it
 * and returns its worst err/bound. The Q8/Q4 reference runs on the weights the conv holds after
 * create (dequantized), so only the route's own arithmetic is tested against the bound. */
typedef void (*cc_make_fn)(cc_case *c, int big);
typedef double (*cc_check_fn)(const cc_case *c, const float *in, const float *ref, const cc_bound *b);

/* A random input for case c, and the reference output and bound on rc's weights (rc: c, or c on
 * the weights a quantized conv holds); the caller frees *in, *ref and b->s. */
static inline void cc_ref_make(const cc_case *c, const cc_case *rc, float **in, float **ref, cc_bound *b) {
  size_t nin = cc_in_count(c), nout = cc_out_count(c);
  *in = malloc(nin * sizeof(float)), *ref = malloc(nout * sizeof(float));
  tu_fill(*in, nin, -1.0f, 1.0f);
  lc_status s1 = lc_conv_reference(&rc->d, c->n, c->h, c->w, *in, *ref), s2 = cc_bound_make(rc, *in, b);
  TU_CHECK(s1 == LC_OK && s2 == LC_OK, "reference: %s", lc_last_error());
}

static inline double cc_check_on(const cc_case *c, const cc_case *rc, cc_check_fn check) {
  float *in, *ref;
  cc_bound b;
  cc_ref_make(c, rc, &in, &ref, &b);
  double e = check(c, in, ref, &b);
  free(b.s);
  free(in);
  free(ref);
  return e;
}

static inline void cc_random_shapes(cc_make_fn make, cc_check_fn check) {
  int nshapes = cc_quick() ? 60 : 300;
  double worst = 0.0;
  for (int s = 0; s < nshapes; s++) {
    cc_case c;
    make(&c, s % 4 == 0);
    double e = cc_check_on(&c, &c, check);
    if (e > worst) worst = e;
    cc_free(&c);
  }
  printf("%d random shapes, worst err/bound %.4f\n", nshapes, worst);
}

static inline void cc_quant_shapes(lc_context *ctx, cc_make_fn make, cc_check_fn check) {
  static const lc_weight_format fmts[] = {LC_WEIGHTS_Q8, LC_WEIGHTS_Q4};
  for (int s = 0; s < (cc_quick() ? 8 : 30); s++) {
    cc_case c;
    make(&c, 0);
    c.d.weight_format = fmts[s % 2];
    c.d.block_size = 0;
    c.d.asym = s % 3 == 0;
    c.d.weights = c.wts;
    lc_conv *conv = NULL;
    TU_CHECK(lc_conv_create(ctx, &c.d, &conv) == LC_OK, "create q: %s", lc_last_error());
    size_t nw = (size_t)(c.d.out_channels * cc_k(&c));
    float *deq = malloc(nw * sizeof(float));
    TU_CHECK(lc_conv_get_weights(conv, deq) == LC_OK, "dequantized weights: %s", lc_last_error());
    lc_conv_destroy(conv);
    cc_case rc = c;
    rc.d.weight_format = LC_WEIGHTS_F32;
    rc.d.weights = rc.wts = deq;
    cc_check_on(&c, &rc, check);
    free(deq);
    cc_free(&c);
  }
}

#endif
