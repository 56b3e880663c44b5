/* Q8/Q4 convs on the GEMV path (1x1 conv on few pixels), accurate and int8 activations, against
 * the bounds of docs/quantization.md. LC_TEST_QUICK=1 runs fewer shapes. */

#include "conv_quant_common.h"

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

int main(void) {
  size_t start;
  if (cq_setup(&start)) {
    part_gemv();
  }
  return cq_finish("test_conv_qgemv", start);
}
