/* Q8/Q4 convs: weight bytes against fp32, the workspace budget (peak allocation) and threads 1 vs 2
 * (bitwise). LC_TEST_QUICK=1 runs fewer shapes. */

#include "conv_quant_common.h"

/* ---------------------------------------------------------------- part 5: weight bytes */

static void part_weight_bytes(void) {
  lc_conv_desc d = cc_desc(256, 256, 3, 1);
  size_t nw = 256 * 256 * 9;
  float *w = cq_random_weights(&d);
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
  size_t start;
  if (cq_setup(&start)) {
    part_weight_bytes();
    part_budget();
    part_threads();
  }
  return cq_finish("test_conv_qbudget", start);
}
