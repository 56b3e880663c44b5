/* The heuristic selector's plan against the CPU tuner's, head to head in one process (for
 * bench/selector_fit.py). Creates an AUTO fp32 NCHW conv in a context with a memory-only tuner,
 * lets prepare tune it (the tuner's choice and its own medians), then re-times the heuristic's
 * plan and the tuned one alternately, round after round (order swapped each round), and prints
 * both medians: the tuner's figures favour whichever candidate was lucky among many, the
 * head-to-head ones don't; ratio is the median of the rounds' heuristic / tuned times.
 * usage: bench_select IC OC IH IW KH KW SH SW PT PL PB PR G [--threads T] [--level fast|normal|heavy]
 *                     [--rounds N] [--min-ms MS] [--layout nchw|nhwc]
 * prints one JSON object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv/autotune.h"
#include "conv/route.h"
#include "lowconv.h"
#include "util/alloc.h"
#include "util/timer.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void fill(float *x, size_t n) {
  unsigned s = 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1u << 24) - 0.5f;
  }
}

static double run_plan(lc_conv *c, const lc_conv_plan *p, const float *in, float *out, unsigned char *ws) {
  c->plan = *p;
  double t0 = lc_now_ms();
  if (lc_route_def_of(p->route)->run(c, in, out, ws) != LC_OK) return -1.0;
  return lc_now_ms() - t0;
}

static void print_plan(const char *key, const lc_conv_plan *p) {
  printf("\"%s\":{\"route\":\"%s\",\"tile\":%zu,\"ntiles\":%zu,\"split\":%zu,\"threads\":%d}", key,
         lc_route_name(p->route), p->tile, p->ntiles, p->ocsplit, p->threads);
}

int main(int argc, char **argv) {
  if (argc < 14) {
    fprintf(stderr, "usage: %s IC OC IH IW KH KW SH SW PT PL PB PR G [--threads T] [--level L] [--rounds N] "
                    "[--min-ms MS] [--layout nchw|nhwc]\n", argv[0]);
    return 2;
  }
  long long v[13];
  for (int i = 0; i < 13; i++) v[i] = atoll(argv[1 + i]);
  int threads = 1, rounds = 15;
  double min_ms = 1000.0;
  lc_tune_level level = LC_TUNE_NORMAL;
  lc_layout layout = LC_NCHW;
  for (int i = 14; i + 1 < argc; i += 2) {
    const char *a = argv[i], *b = argv[i + 1];
    if (!strcmp(a, "--threads")) threads = atoi(b);
    else if (!strcmp(a, "--rounds")) rounds = atoi(b);
    else if (!strcmp(a, "--min-ms")) min_ms = atof(b);
    else if (!strcmp(a, "--layout")) layout = !strcmp(b, "nhwc") ? LC_NHWC : LC_NCHW;
    else if (!strcmp(a, "--level"))
      level = !strcmp(b, "fast") ? LC_TUNE_FAST : !strcmp(b, "heavy") ? LC_TUNE_HEAVY : LC_TUNE_NORMAL;
    else {
      fprintf(stderr, "bench_select: unknown option %s\n", a);
      return 2;
    }
  }
  if (rounds < 1 || rounds > 1000 || threads < 1) return 2;
  lc_context_params cp;
  lc_context_params_init(&cp);
  cp.threads = threads;
  cp.cpu_tune = level;
  cp.cache_dir = ""; /* memory only: every run tunes afresh */
  lc_context *ctx = NULL;
  if (lc_context_create(&cp, &ctx)) {
    fprintf(stderr, "bench_select: %s\n", lc_last_error());
    return 1;
  }
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = v[0], d.out_channels = v[1], d.kernel_h = v[4], d.kernel_w = v[5], d.stride_h = v[6];
  d.stride_w = v[7], d.pad_top = v[8], d.pad_left = v[9], d.pad_bottom = v[10], d.pad_right = v[11];
  d.groups = v[12], d.layout = layout;
  size_t nw = (size_t)(v[1] * (v[0] / v[12]) * v[4] * v[5]);
  float *w = lc_malloc(nw * sizeof(float));
  lc_conv *c = NULL;
  lc_conv_shape sh;
  if (!w) return 1;
  fill(w, nw);
  d.weights = w;
  if (lc_conv_create(ctx, &d, &c) || lc_conv_prepare(c, 1, v[2], v[3], &sh)) {
    fprintf(stderr, "bench_select: %s\n", lc_last_error());
    return 1;
  }
  lc_conv_plan tuned = c->plan, heur = c->plan;
  double tuner_ms = c->dev_info.kernel_ms;
  heur.hint_tile = 0;
  if (lc_select_route(c, &heur)) {
    fprintf(stderr, "bench_select: %s\n", lc_last_error());
    return 1;
  }
  size_t nin = (size_t)(v[0] * v[2] * v[3]), nout = (size_t)(v[1] * sh.out_h * sh.out_w);
  size_t wsb = heur.ws_thread * (size_t)heur.threads;
  if (tuned.ws_total > wsb) wsb = tuned.ws_total;
  float *in = lc_malloc(nin * sizeof(float)), *out = lc_malloc(nout * sizeof(float));
  unsigned char *ws = wsb ? lc_malloc(wsb + 64) : NULL;
  double *th = lc_malloc((size_t)rounds * sizeof(double)), *tt = lc_malloc((size_t)rounds * sizeof(double));
  double *ratio = lc_malloc((size_t)rounds * sizeof(double));
  if (!in || !out || (wsb && !ws) || !th || !tt || !ratio) return 1;
  fill(in, nin);
  int same = heur.route == tuned.route && heur.tile == tuned.tile && heur.ntiles == tuned.ntiles &&
             heur.ocsplit == tuned.ocsplit && heur.threads == tuned.threads && heur.variant == tuned.variant;
  if (same) rounds = 1, min_ms = 0.0; /* one plan: nothing to compare (the medians then say what it costs) */
  run_plan(c, &heur, in, out, ws); /* warm-up */
  run_plan(c, &tuned, in, out, ws);
  int n = 0;
  double spent = 0.0;
  for (; n < rounds; n++) {
    if ((n >= 5 || n >= rounds) && spent >= min_ms) break;
    if (n % 2) {
      tt[n] = run_plan(c, &tuned, in, out, ws);
      th[n] = run_plan(c, &heur, in, out, ws);
    } else {
      th[n] = run_plan(c, &heur, in, out, ws);
      tt[n] = run_plan(c, &tuned, in, out, ws);
    }
    if (th[n] <= 0.0 || tt[n] <= 0.0) return 1;
    ratio[n] = th[n] / tt[n]; /* a round's pair ran under the same load */
    spent += th[n] + tt[n];
  }
  c->plan = tuned;
  printf("{");
  print_plan("heuristic", &heur);
  printf(",");
  print_plan("tuned", &tuned);
  printf(",\"same\":%d,\"tuner_ms\":%.6f,\"candidates\":%d,\"rounds\":%d,\"heur_ms\":%.6f,\"tuned_ms\":%.6f,"
         "\"ratio\":%.4f,"
         "\"isa\":\"%s\"}\n",
         same, tuner_ms, c->dev_info.candidates, n, median(th, n), median(tt, n), median(ratio, n),
         lc_context_isa_name(ctx));
  lc_free(th), lc_free(tt), lc_free(ratio), lc_free(ws), lc_free(in), lc_free(out), lc_free(w);
  lc_conv_destroy(c);
  lc_context_destroy(ctx);
  return 0;
}
