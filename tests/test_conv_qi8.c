/* The i8gemm route (Q8/Q4 weights, int8 activations, integer dot products) on randomized shapes:
 * odd sizes, strides 1-3, pads, dilation, groups, batch 1-3, q8/q4, sym/asym, blocks 16..256, 0
 * and tails, every kernel table the CPU runs (the avx512 table takes the VNNI kernels where the CPU
 * has AVX-512 VNNI), 1 and 2 threads. Two references, both fp64 over the dequantized weights:
 *  - on the activations rounded as the route rounds them (per output pixel and weight block:
 *    scale amax / 127, codes rint(x * (127 / amax)) in fp32): only fp32 rounding is left, bounded
 *    by (nb + 6) u S, S = sum_k (|q s| + |o|) |x_k rounded| + |bias| (nb roundings of the block
 *    sums, the scale product, the offset fold, the reference's rounding of the dequantized weight);
 *  - on the fp32 activations: that plus the activation rounding, |x - x rounded| <= amax / 254 per
 *    element of a block, so sum over blocks of sum_k |w_k| * amax_b / 254 (docs/quantization.md).
 * Activation functions scale both by their Lipschitz constant. The scalar and SIMD tables must
 * agree bit for bit (same int32 block sums, same fp32 operations in the same order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "conv_cases.h"
#include "kernels/registry.h"

#define U24 5.9604644775390625e-08

typedef struct qcase {
  cc_case c;
  int8_t *q;
  float *s, *o, *deq; /* codes, scales, offsets (NULL: sym), dequantized OIHW weights */
  size_t nb, kc, blk; /* blocks per row, channels per tap (K for block 0), block length */
} qcase;

static int64_t cin_g(const lc_conv_desc *d) { return d->in_channels / d->groups; }

/* Element k (order (ky, kx, ic)) of a row: its block index. */
static size_t block_of(const qcase *qc, size_t k) {
  size_t bpt = (qc->kc + qc->blk - 1) / qc->blk;
  return k / qc->kc * bpt + k % qc->kc / qc->blk;
}

static void make_case(qcase *qc) {
  cc_case *c = &qc->c;
  lc_conv_desc *d = &c->d;
  for (;;) {
    lc_conv_desc_init(d);
    int64_t g = tu_rand_int(0, 3) == 0 ? tu_rand_int(2, 3) : 1;
    int64_t ci = tu_rand_int(0, 3) == 0 ? tu_rand_int(60, 300) : tu_rand_int(1, 70), co = tu_rand_int(1, 37);
    d->in_channels = g * ci, d->out_channels = g * co, d->groups = g;
    int one = tu_rand_int(0, 3) == 0; /* 1x1 stride 1 unpadded: panels quantized in place */
    d->kernel_h = one ? 1 : tu_rand_int(1, 5);
    d->kernel_w = one ? 1 : (tu_rand_int(0, 2) ? d->kernel_h : tu_rand_int(1, 5));
    d->stride_h = one ? 1 : tu_rand_int(1, 3);
    d->stride_w = one ? 1 : (tu_rand_int(0, 2) ? d->stride_h : tu_rand_int(1, 3));
    d->dilation_h = one || tu_rand_int(0, 3) ? 1 : 2;
    d->dilation_w = d->dilation_h;
    if (!one) {
      d->pad_top = tu_rand_int(0, 2), d->pad_bottom = tu_rand_int(0, 2);
      d->pad_left = tu_rand_int(0, 2), d->pad_right = tu_rand_int(0, 2);
    }
    d->layout = LC_NCHW;
    cc_random_act(d);
    if (tu_rand_int(0, 3) == 0) /* the post affine after the activation (never exactly 1, 0) */
      d->post_mul = tu_rand_float(-1.5f, 1.5f), d->post_add = tu_rand_float(-1.0f, 1.0f);
    d->weight_format = tu_rand_int(0, 1) ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
    d->asym = tu_rand_int(0, 1);
    static const int blocks[6] = {16, 32, 64, 128, 256, 0};
    d->block_size = blocks[tu_rand_int(0, 5)];
    d->int8_activations = 1;
    c->n = tu_rand_int(0, 3) ? 1 : tu_rand_int(2, 3);
    c->h = tu_rand_int(1, 24), c->w = tu_rand_int(1, 24);
    int64_t oh, ow;
    cc_out_size(c, &oh, &ow);
    if (oh < 1 || ow < 1 || cc_macs(c) > 6e5) continue;
    break;
  }
  size_t K = (size_t)cc_k(c), OC = (size_t)d->out_channels;
  /* Geometry as lc_quantize's: block 0 spans the row, else blocks of min(block, cin_g) per tap. */
  size_t cgi = (size_t)cin_g(d);
  qc->kc = d->block_size == 0 ? K : cgi;
  qc->blk = d->block_size == 0 ? K : ((size_t)d->block_size < cgi ? (size_t)d->block_size : cgi);
  qc->nb = lc_conv_quant_blocks(d);
  qc->q = malloc(OC * K);
  qc->s = malloc(OC * qc->nb * sizeof(float));
  qc->o = d->asym ? malloc(OC * qc->nb * sizeof(float)) : NULL;
  int qmax = d->weight_format == LC_WEIGHTS_Q4 ? 7 : 127, qmin = d->weight_format == LC_WEIGHTS_Q4 ? -8 : -128;
  for (size_t i = 0; i < OC * K; i++) qc->q[i] = (int8_t)tu_rand_int(d->asym ? qmin : -qmax, qmax);
  for (size_t i = 0; i < OC * qc->nb; i++) qc->s[i] = tu_rand_float(0.001f, 0.1f);
  for (size_t i = 0; qc->o && i < OC * qc->nb; i++) qc->o[i] = tu_rand_float(-0.3f, 0.3f);
  d->weights = NULL;
  d->q_codes = qc->q, d->q_scales = qc->s, d->q_offsets = qc->o;
  c->wts = NULL;
  c->bias = NULL;
  if (tu_rand_int(0, 2)) {
    c->bias = malloc(OC * sizeof(float));
    tu_fill(c->bias, OC, -1.0f, 1.0f);
  }
  d->bias = c->bias;
  /* Dequantized OIHW as lc_conv_get_weights gives them: fmaf(q, s, o). */
  size_t taps = (size_t)(d->kernel_h * d->kernel_w), cg = (size_t)cin_g(d);
  qc->deq = malloc(OC * K * sizeof(float));
  for (size_t oc = 0; oc < OC; oc++)
    for (size_t k = 0; k < K; k++) {
      size_t b = block_of(qc, k), t = k / cg, ic = k % cg;
      float v = fmaf((float)qc->q[oc * K + k], qc->s[oc * qc->nb + b], qc->o ? qc->o[oc * qc->nb + b] : 0.0f);
      qc->deq[(oc * cg + ic) * taps + t] = v;
    }
}

static void free_case(qcase *qc) {
  free(qc->q), free(qc->s), free(qc->o), free(qc->deq), free(qc->c.bias);
}

static double lip_of(const lc_conv_desc *d) {
  if (d->activation == LC_ACT_LEAKY_RELU && fabs(d->act_alpha) > 1.0) return fabs(d->act_alpha);
  return d->activation == LC_ACT_HARD_SWISH ? 1.5 : 1.0;
}

static double act(const lc_conv_desc *d, double v) {
  switch (d->activation) {
    case LC_ACT_RELU: return v > 0 ? v : 0;
    case LC_ACT_CLIP: return v < d->act_min ? d->act_min : v > d->act_max ? d->act_max : v;
    case LC_ACT_LEAKY_RELU: return v < 0 ? d->act_alpha * v : v;
    case LC_ACT_HARD_SWISH: {
      double t = v / 6.0 + 0.5;
      return v * (t < 0 ? 0 : t > 1 ? 1 : t);
    }
    default: return v;
  }
}

/* Both references and both bounds per output element (NCHW). */
static void reference(const qcase *qc, const float *in, double *ref_r, double *ref_f, double *bnd_r,
                      double *bnd_f) {
  const cc_case *c = &qc->c;
  const lc_conv_desc *d = &c->d;
  int64_t pads[4], oh, ow;
  lc_conv_resolve_pads(d, c->h, c->w, pads, &oh, &ow);
  size_t K = (size_t)cc_k(c), cg = (size_t)cin_g(d), cog = (size_t)(d->out_channels / d->groups);
  size_t taps = (size_t)(d->kernel_h * d->kernel_w);
  float *pf = malloc(K * sizeof(float)), *amax = malloc(qc->nb * sizeof(float));
  double *pr = malloc(K * sizeof(double));
  double lip = lip_of(d) * fmax(1.0, fabs((double)d->post_mul)), pm = d->post_mul, pa = d->post_add;
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t g = 0; g < d->groups; g++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          for (size_t k = 0; k < K; k++) {
            size_t t = k / cg, ic = k % cg;
            int64_t iy = oy * d->stride_h - pads[0] + (int64_t)(t / (size_t)d->kernel_w) * d->dilation_h;
            int64_t ix = ox * d->stride_w - pads[1] + (int64_t)(t % (size_t)d->kernel_w) * d->dilation_w;
            int inside = iy >= 0 && iy < c->h && ix >= 0 && ix < c->w;
            pf[k] = inside ? in[((n * d->in_channels + g * (int64_t)cg + (int64_t)ic) * c->h + iy) * c->w + ix] : 0.0f;
          }
          for (size_t b = 0; b < qc->nb; b++) amax[b] = 0.0f;
          for (size_t k = 0; k < K; k++) amax[block_of(qc, k)] = fmaxf(amax[block_of(qc, k)], fabsf(pf[k]));
          for (size_t k = 0; k < K; k++) {
            float a = amax[block_of(qc, k)], inv = a > 0.0f ? 127.0f / a : 0.0f, r = pf[k] * inv;
            r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
            pr[k] = (double)rintf(r) * (double)(a / 127.0f);
          }
          for (size_t j = 0; j < cog; j++) {
            size_t oc = (size_t)g * cog + j;
            double sr = c->bias ? c->bias[oc] : 0.0, sf = sr, S = fabs(sr), A = 0.0;
            for (size_t k = 0; k < K; k++) {
              size_t b = block_of(qc, k);
              double w = qc->deq[(oc * cg + k % cg) * taps + k / cg];
              double qs = fabs((double)qc->q[oc * K + k] * qc->s[oc * qc->nb + b]) + (qc->o ? fabs(qc->o[oc * qc->nb + b]) : 0);
              sr += w * pr[k], sf += w * (double)pf[k];
              S += qs * fabs(pr[k]);
              A += fabs(w) * amax[b] / 254.0;
            }
            size_t at = (((size_t)n * (size_t)d->out_channels + oc) * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox;
            double ar = act(d, sr) * pm, af = act(d, sf) * pm;
            ref_r[at] = ar + pa, ref_f[at] = af + pa;
            double fp = ((double)qc->nb + 6.0) * U24 * S;
            bnd_r[at] = lip * fp + 8 * U24 * (fabs(ar) + fabs(pa)) + 1e-30;
            bnd_f[at] = lip * (fp + A * (1.0 + 1e-4)) + 8 * U24 * (fabs(af) + fabs(pa)) + 1e-30;
          }
        }
  free(pf), free(amax), free(pr);
}

static void describe(const qcase *qc, char *buf, size_t n) {
  char d[400];
  cc_describe(&qc->c, d, sizeof d);
  snprintf(buf, n, "%s %s block %d: %s", qc->c.d.weight_format == LC_WEIGHTS_Q4 ? "q4" : "q8",
           qc->c.d.asym ? "asym" : "sym", qc->c.d.block_size, d);
}

static lc_context *ctx[CC_NISA][2];

/* select.c on a table that quantizes the input once (lc_kernels.i8fill: 512-bit VNNI): with int8
 * activations AUTO takes i8gemm for Q8 and Q4 on Winograd's shapes, and 1x1 stride 1 only from K 128. */
static void test_fill_rules(lc_context *cx) {
  if (!cx || !cx->k->i8fill) {
    printf("fill rules: the table has no i8fill, not checked\n");
    return;
  }
  static const struct { int64_t cin, k; lc_weight_format f; int want; } cases[] = {
      {64, 3, LC_WEIGHTS_Q4, 1}, {64, 3, LC_WEIGHTS_Q8, 1}, {256, 3, LC_WEIGHTS_Q4, 1},
      {64, 1, LC_WEIGHTS_Q4, 0}, {96, 1, LC_WEIGHTS_Q8, 0}, {192, 1, LC_WEIGHTS_Q4, 1}, {256, 1, LC_WEIGHTS_Q8, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lc_conv_desc d = cc_desc(cases[i].cin, 32, cases[i].k, cases[i].k / 2);
    size_t nw = (size_t)(32 * cases[i].cin * cases[i].k * cases[i].k);
    float *w = malloc(nw * sizeof(float));
    if (!w) return;
    tu_fill(w, nw, -1.0f, 1.0f);
    d.weights = w, d.weight_format = cases[i].f, d.block_size = 32, d.int8_activations = 1;
    lc_conv *cv = NULL;
    lc_conv_shape sh;
    lc_status st = lc_conv_create(cx, &d, &cv);
    if (st == LC_OK) st = lc_conv_prepare(cv, 1, 28, 28, &sh);
    TU_CHECK(st == LC_OK, "fill rules %zu: %s", i, lc_last_error());
    if (st == LC_OK)
      TU_CHECK((sh.route == LC_ROUTE_I8GEMM) == cases[i].want, "fill rules: %s %lldx%lld, %lld ch took %s",
               cases[i].f == LC_WEIGHTS_Q4 ? "q4" : "q8", (long long)cases[i].k, (long long)cases[i].k,
               (long long)cases[i].cin, lc_route_name(sh.route));
    lc_conv_destroy(cv);
    free(w);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_seed_from_env(0x18A7E5EEDull);
  int have[CC_NISA] = {0}, nshapes = cc_quick() ? 60 : 130;
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) have[i] = cc_context(cc_isas[i], t + 1, 0, &ctx[i][t]) == LC_OK;
  double worst_r = 0, worst_f = 0;
  long runs = 0, mismatches = 0;
  for (int s = 0; s < nshapes; s++) {
    qcase qc;
    make_case(&qc);
    cc_case *c = &qc.c;
    size_t nin = cc_in_count(c), nout = cc_out_count(c);
    float *in = malloc(nin * sizeof(float)), *out = malloc(nout * sizeof(float)), *first = malloc(nout * sizeof(float));
    double *rr = malloc(nout * sizeof(double)), *rf = malloc(nout * sizeof(double));
    double *br = malloc(nout * sizeof(double)), *bf = malloc(nout * sizeof(double));
    tu_fill(in, nin, -1.0f, 1.0f);
    if (s % 7 == 3) /* a channel block of zeros: scale 0 */
      memset(in, 0, (size_t)c->h * (size_t)c->w * sizeof(float) * (size_t)(c->d.in_channels > 1 ? 1 : 0));
    reference(&qc, in, rr, rf, br, bf);
    char desc[600];
    describe(&qc, desc, sizeof desc);
    int have_first = 0;
    for (int i = 0; i < CC_NISA; i++)
      for (int t = 0; have[i] && t < 2; t++) {
        if (t == 1 && s % 3) continue; /* 2 threads on a third of the shapes */
        for (size_t k = 0; k < nout; k++) out[k] = NAN;
        lc_conv_shape sh;
        lc_status st = cc_run(ctx[i][t], c, LC_ROUTE_I8GEMM, in, out, &sh);
        TU_CHECK(st == LC_OK && sh.route == LC_ROUTE_I8GEMM, "%s threads %d: %s (%s) [%s]", cc_isa_names[i], t + 1,
                 lc_status_name(st), lc_last_error(), desc);
        if (st != LC_OK) continue;
        runs++;
        double er = 0, ef = 0;
        size_t ar = 0, af = 0;
        for (size_t k = 0; k < nout; k++) {
          double a = fabs(out[k] - rr[k]) / br[k], b = fabs(out[k] - rf[k]) / bf[k];
          if (!(a <= er)) er = a, ar = k;
          if (!(b <= ef)) ef = b, af = k;
        }
        worst_r = fmax(worst_r, er), worst_f = fmax(worst_f, ef);
        TU_CHECK(er <= 1.0, "%s threads %d vs rounded activations: [%zu] %.9g ref %.9g (err/bound %.3g) [%s]",
                 cc_isa_names[i], t + 1, ar, out[ar], rr[ar], er, desc);
        TU_CHECK(ef <= 1.0, "%s threads %d vs fp32 activations: [%zu] %.9g ref %.9g (err/bound %.3g) [%s]",
                 cc_isa_names[i], t + 1, af, out[af], rf[af], ef, desc);
        if (!have_first) {
          memcpy(first, out, nout * sizeof(float)), have_first = 1;
        } else if (memcmp(first, out, nout * sizeof(float)) != 0) {
          mismatches++;
          TU_CHECK(0, "%s threads %d differs from the first table's output bitwise [%s]", cc_isa_names[i], t + 1, desc);
        }
      }
    free(in), free(out), free(first), free(rr), free(rf), free(br), free(bf);
    free_case(&qc);
  }
  printf("%d shapes, %ld runs: worst err/bound %.3f (rounded activations), %.3f (fp32 activations); %ld bitwise "
         "mismatches\n", nshapes, runs, worst_r, worst_f, mismatches);

  /* Selection, the opt-out and the budget on one Q4 shape (K = 288, stride 2). */
  {
    lc_conv_desc d;
    lc_conv_desc_init(&d);
    d.in_channels = 32, d.out_channels = 24, d.kernel_h = d.kernel_w = 3, d.stride_h = d.stride_w = 2;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    size_t nw = 24 * 32 * 9;
    float *w = malloc(nw * sizeof(float)), in[32 * 20 * 20], out[24 * 10 * 10];
    tu_fill(w, nw, -1.0f, 1.0f);
    tu_fill(in, sizeof in / sizeof *in, -1.0f, 1.0f);
    d.weights = w, d.weight_format = LC_WEIGHTS_Q4, d.block_size = 32, d.int8_activations = 1;
    lc_context *cx = ctx[1][0] ? ctx[1][0] : ctx[0][0];
    lc_conv *cv = NULL;
    lc_conv_shape sh;
    TU_CHECK(lc_conv_create(cx, &d, &cv) == LC_OK && lc_conv_prepare(cv, 1, 20, 20, &sh) == LC_OK, "create");
    TU_CHECK(sh.route == LC_ROUTE_I8GEMM, "AUTO with int8 activations took %s, not i8gemm", lc_route_name(sh.route));
    TU_CHECK(lc_conv_run(cv, in, out, NULL, 0) == LC_OK, "run");
    lc_conv_destroy(cv);
    d.int8_activations = 0;
    TU_CHECK(lc_conv_create(cx, &d, &cv) == LC_OK && lc_conv_prepare(cv, 1, 20, 20, &sh) == LC_OK, "create");
    TU_CHECK(sh.route != LC_ROUTE_I8GEMM, "AUTO without int8 activations took i8gemm");
    lc_conv_destroy(cv);
    d.int8_activations = 1;
    setenv("LOWCONV_INT8_ACT", "0", 1); /* the opt-out */
    d.route = LC_ROUTE_I8GEMM;
    TU_CHECK(lc_conv_create(cx, &d, &cv) == LC_OK, "create");
    TU_CHECK(lc_conv_prepare(cv, 1, 20, 20, &sh) == LC_ERR_UNSUPPORTED, "LOWCONV_INT8_ACT=0 still ran i8gemm");
    lc_conv_destroy(cv);
    unsetenv("LOWCONV_INT8_ACT");
    /* Budgets: one 16-pixel panel fits (smaller tiles, same output), less does not. */
    float ref[24 * 10 * 10];
    TU_CHECK(lc_conv_create(cx, &d, &cv) == LC_OK && lc_conv_prepare(cv, 1, 20, 20, &sh) == LC_OK, "create");
    lc_conv_run(cv, in, ref, NULL, 0);
    size_t full = sh.workspace_bytes;
    lc_conv_destroy(cv);
    for (size_t budget = full; budget > 512; budget /= 2) {
      lc_context *bx = NULL;
      TU_CHECK(cc_context(LC_ISA_AUTO, 1, budget, &bx) == LC_OK, "context");
      lc_status st = lc_conv_create(bx, &d, &cv);
      if (st == LC_OK) st = lc_conv_prepare(cv, 1, 20, 20, &sh);
      if (st == LC_OK) {
        TU_CHECK(sh.workspace_bytes <= budget, "workspace %zu over the budget %zu", sh.workspace_bytes, budget);
        TU_CHECK(lc_conv_run(cv, in, out, NULL, 0) == LC_OK, "run at budget %zu", budget);
        TU_CHECK(memcmp(out, ref, sizeof out) == 0, "output at budget %zu differs", budget);
      } else {
        TU_CHECK(st == LC_ERR_BUDGET, "budget %zu: %s, not LC_ERR_BUDGET", budget, lc_status_name(st));
      }
      lc_conv_destroy(cv);
      cv = NULL;
      lc_context_destroy(bx);
    }
    free(w);
  }
  lc_context *auto_cx = NULL;
  if (cc_context(LC_ISA_AUTO, 1, 0, &auto_cx) == LC_OK) test_fill_rules(auto_cx);
  lc_context_destroy(auto_cx);
  for (int i = 0; i < CC_NISA; i++)
    for (int t = 0; t < 2; t++) lc_context_destroy(ctx[i][t]);
  return tu_finish("test_conv_qi8");
}
