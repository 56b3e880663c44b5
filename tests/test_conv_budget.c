/* Workspace budgets: with workspace=NULL, what prepare+run allocate stays within the context's
 * budget, shape.workspace_bytes too, and the output is still right (and the same for every budget:
 * the K blocking does not depend on it, src/conv/conv.h). */
#include "conv_cases.h"

static const size_t KiB = 1024, MiB = 1024 * 1024;

/* One shape's data and reference. */
typedef struct bcase {
  cc_case c;
  float *in, *ref, *first; /* first: output under the first budget that ran */
  lc_route first_route;
  cc_bound b;
  size_t nout;
} bcase;

static void bcase_make(bcase *t, const lc_conv_desc *d, int64_t n, int64_t h, int64_t w) {
  memset(t, 0, sizeof *t);
  t->c.d = *d;
  t->c.n = n;
  t->c.h = h;
  t->c.w = w;
  cc_fill(&t->c, 1);
  size_t nin = cc_in_count(&t->c);
  t->nout = cc_out_count(&t->c);
  t->in = malloc(nin * sizeof(float));
  t->ref = malloc(t->nout * sizeof(float));
  tu_fill(t->in, nin, -1.0f, 1.0f);
  lc_status st = lc_conv_reference(&t->c.d, n, h, w, t->in, t->ref);
  lc_status st2 = cc_bound_make(&t->c, t->in, &t->b);
  TU_CHECK(st == LC_OK && st2 == LC_OK, "reference: %s", lc_last_error());
}

static void bcase_free(bcase *t) {
  free(t->in);
  free(t->ref);
  free(t->first);
  free(t->b.s);
  cc_free(&t->c);
}

/* Runs t through route r under budget; checks the peak, the workspace and the output.
 * Returns the status of create/prepare/run; *ws gets shape.workspace_bytes. */
static lc_status run_budget(bcase *t, lc_route r, size_t budget, int threads, size_t *ws, int quiet) {
  lc_context *ctx = NULL;
  lc_status st = cc_context(LC_ISA_AUTO, threads, budget, &ctx);
  TU_CHECK(st == LC_OK, "context: %s", lc_status_name(st));
  if (st != LC_OK) return st;
  lc_conv_desc d = t->c.d;
  d.route = r;
  lc_conv *conv = NULL;
  st = lc_conv_create(ctx, &d, &conv);
  if (st != LC_OK) {
    lc_context_destroy(ctx);
    return st;
  }
  float *out = malloc(t->nout * sizeof(float));
  size_t before = lc_alloc_current_bytes();
  lc_alloc_reset_peak();
  lc_conv_shape shape = {0};
  st = lc_conv_prepare(conv, t->c.n, t->c.h, t->c.w, &shape);
  if (st == LC_OK) st = lc_conv_run(conv, t->in, out, NULL, 0);
  size_t used = lc_alloc_peak_bytes() - before;
  *ws = shape.workspace_bytes;
  if (st == LC_OK) {
    if (!quiet)
      printf("  %-9s threads %d budget %8zu: route %-9s workspace %8zu, peak allocated %8zu\n", lc_route_name(r),
             threads, budget, lc_route_name(shape.route), shape.workspace_bytes, used);
    if (budget) {
      TU_CHECK(used <= budget, "%s budget %zu: prepare+run allocated %zu", lc_route_name(r), budget, used);
      TU_CHECK(shape.workspace_bytes <= budget, "%s budget %zu: workspace %zu", lc_route_name(r), budget,
               shape.workspace_bytes);
    }
    size_t at;
    double ratio = cc_err_ratio(&t->b, shape.route, out, t->ref, t->nout, &at);
    TU_CHECK(ratio <= 1.0, "%s budget %zu: element %zu = %g, reference %g", lc_route_name(r), budget, at, out[at],
             t->ref[at]);
    if (!t->first) {
      t->first = out;
      t->first_route = shape.route;
      out = NULL;
    } else if (shape.route == t->first_route) { /* AUTO may pick another route under another budget */
      TU_CHECK(memcmp(out, t->first, t->nout * sizeof(float)) == 0,
               "%s: output under budget %zu differs bitwise from the first budget's", lc_route_name(r), budget);
    }
  }
  free(out);
  lc_conv_destroy(conv);
  lc_context_destroy(ctx);
  return st;
}

/* Smallest budget under which route r prepares this shape (binary search; 0 if none up to hi). */
static size_t min_budget(bcase *t, lc_route r, int threads, size_t hi) {
  size_t lo = 1, ws;
  if (run_budget(t, r, hi, threads, &ws, 1) != LC_OK) return 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (run_budget(t, r, mid, threads, &ws, 1) == LC_OK)
      hi = mid;
    else
      lo = mid + 1;
  }
  return hi;
}

static lc_conv_desc shape_for(lc_route r) {
  lc_conv_desc d = cc_desc(32, 24, 3, 1);
  d.activation = LC_ACT_RELU;
  if (r == LC_ROUTE_GEMM1X1) {
    d.kernel_h = d.kernel_w = 1;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 0;
  }
  if (r == LC_ROUTE_DEPTHWISE) d.groups = d.out_channels = d.in_channels;
  if (r == LC_ROUTE_IGEMM || r == LC_ROUTE_DEPTHWISE) d.layout = LC_NHWC;
  if (r == LC_ROUTE_STEM) d.in_channels = 3; /* NCHW only */
  return d;
}

static void test_routes(int threads) {
  static const size_t budgets[] = {0, 4 * 1024 * 1024, 256 * 1024, 64 * 1024};
  for (int r = 0; r < LC_ROUTE_COUNT; r++) {
    if (r == LC_ROUTE_I8GEMM) continue; /* Q8/Q4 with int8 activations: budgets in test_conv_qi8.c */
    lc_conv_desc d = shape_for((lc_route)r);
    for (int layout = 0; layout < 2; layout++) {
      if (r != LC_ROUTE_DIRECT && r != LC_ROUTE_STEM && r != LC_ROUTE_TAPROWS) /* those: NCHW only */
        d.layout = (lc_layout)layout;
      else if (layout)
        break;
      bcase t;
      bcase_make(&t, &d, 2, 24, 24);
      size_t ws_free = 0;
      for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        size_t ws;
        lc_status st = run_budget(&t, (lc_route)r, budgets[i], threads, &ws, 0);
        if (i == 0) {
          TU_CHECK(st == LC_OK, "%s unlimited: %s (%s)", lc_route_name((lc_route)r), lc_status_name(st),
                   lc_last_error());
          ws_free = ws;
        } else if (st != LC_OK) {
          printf("  %-9s threads %d budget %8zu: %s (%s)\n", lc_route_name((lc_route)r), threads, budgets[i],
                 lc_status_name(st), lc_last_error());
          TU_CHECK(st == LC_ERR_BUDGET, "%s budget %zu: %s", lc_route_name((lc_route)r), budgets[i],
                   lc_status_name(st));
        }
      }
      size_t m = min_budget(&t, (lc_route)r, threads, ws_free > 0 ? ws_free : 1);
      if (ws_free == 0) {
        printf("  %-9s %s needs no workspace\n", lc_route_name((lc_route)r), d.layout ? "nhwc" : "nchw");
      } else {
        TU_CHECK(m > 0, "%s: no budget up to %zu works", lc_route_name((lc_route)r), ws_free);
        size_t ws;
        printf("  %-9s %s minimum budget %zu (unlimited uses %zu)\n", lc_route_name((lc_route)r),
               d.layout ? "nhwc" : "nchw", m, ws_free);
        if (m) run_budget(&t, (lc_route)r, m, threads, &ws, 0);
        if (m > 1) {
          lc_status st = run_budget(&t, (lc_route)r, m - 1, threads, &ws, 1);
          TU_CHECK(st == LC_ERR_BUDGET, "%s budget %zu (minimum - 1): %s", lc_route_name((lc_route)r), m - 1,
                   lc_status_name(st));
        }
      }
      bcase_free(&t);
    }
  }
}

/* A 9x9 conv on igemm within 2 MiB where the whole packed input would be ~10 MiB. */
static void test_igemm_9x9(void) {
  lc_conv_desc d = cc_desc(32, 16, 9, 4);
  d.layout = LC_NHWC;
  bcase t;
  bcase_make(&t, &d, 1, 32, 32);
  size_t ws;
  lc_status st = run_budget(&t, LC_ROUTE_IGEMM, 2 * MiB, 2, &ws, 0);
  TU_CHECK(st == LC_OK, "igemm 9x9 in 2 MiB: %s (%s)", lc_status_name(st), lc_last_error());
  bcase_free(&t);
}

/* K = 64*11*11 = 7744: one micro-tile block of packed input (mr x K floats) alone is > 1 KiB. */
static void test_tile_over_budget(void) {
  lc_conv_desc d = cc_desc(64, 8, 11, 0);
  bcase t;
  bcase_make(&t, &d, 1, 13, 13);
  const size_t budget = 1 * KiB;
  static const lc_route explicit[] = {LC_ROUTE_IM2COL, LC_ROUTE_IGEMM};
  for (int i = 0; i < 2; i++) {
    size_t ws;
    lc_status st = run_budget(&t, explicit[i], budget, 1, &ws, 0);
    printf("  %-9s budget %zu on K=7744: %s\n", lc_route_name(explicit[i]), budget, lc_status_name(st));
    TU_CHECK(st == LC_ERR_BUDGET, "%s with 1 KiB on K=7744: %s, want LC_ERR_BUDGET", lc_route_name(explicit[i]),
             lc_status_name(st));
    TU_CHECK(lc_last_error()[0] != 0, "empty message for the budget error");
  }
  size_t ws;
  lc_status st = run_budget(&t, LC_ROUTE_AUTO, budget, 1, &ws, 0);
  TU_CHECK(st == LC_OK, "AUTO with 1 KiB on K=7744: %s (%s)", lc_status_name(st), lc_last_error());
  bcase_free(&t);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* keep what was printed if the library crashes */
  tu_seed_from_env(11);
  size_t start = lc_alloc_current_bytes();
  for (int threads = 1; threads <= 2; threads++) test_routes(threads);
  test_igemm_9x9();
  test_tile_over_budget();
  TU_CHECK(lc_alloc_current_bytes() == start, "leak: %zu bytes", lc_alloc_current_bytes() - start);
  return tu_finish("test_conv_budget");
}
