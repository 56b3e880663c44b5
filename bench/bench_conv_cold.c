/* One conv with its weights hot against the same conv with its weights cold, as in a network where
 * every layer's weights come from memory: `copies` convs of the shape (own weights) run in turn,
 * against copy 0 run alone. Medians of `rounds` rounds, ms per conv run, for each route given.
 * usage: bench_conv_cold DESC [threads 1] [copies 12] [rounds 40] [routes auto,...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "lowconv.h"
#include "util/timer.h"

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  return t[n / 2];
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_conv_cold DESC [threads] [copies] [rounds] [routes]\n");
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 1, copies = argc > 3 ? atoi(argv[3]) : 12;
  int rounds = argc > 4 ? atoi(argv[4]) : 40;
  char routes[256];
  snprintf(routes, sizeof routes, "%s", argc > 5 ? argv[5] : "auto");
  if (copies < 1 || copies > 256 || rounds < 1) return 2;
  bd_conv c;
  lc_context *ctx;
  int rc = bench_open("bench_conv_cold", argv[1], threads, &c, &ctx);
  if (rc) return rc;
  unsigned seed = 12345;
  size_t nw, ni, no;
  bench_counts(&c, &nw, &ni, &no);
  float *in = bench_rand_floats(ni, &seed), *out = malloc(no * sizeof *out);
  double *hot = malloc((size_t)rounds * sizeof *hot), *cold = malloc((size_t)rounds * sizeof *cold);
  if (!in || !out || !hot || !cold) return 1;
  for (char *save = NULL, *name = strtok_r(routes, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int r = lc_route_from_name(name);
    if (r < 0) {
      fprintf(stderr, "bench_conv_cold: no route %s\n", name);
      return 2;
    }
    lc_conv *conv[256] = {NULL};
    size_t wsb = 0, wbytes = 0;
    lc_route got = LC_ROUTE_AUTO;
    for (int k = 0; k < copies; k++) {
      float *w = bench_rand_floats(nw, &seed);
      lc_conv_desc d;
      bench_desc(&c, &d);
      d.weights = w;
      d.route = (lc_route)r;
      lc_conv_shape sh;
      if (!w || lc_conv_create(ctx, &d, &conv[k]) || lc_conv_prepare(conv[k], c.mb, c.ih, c.iw, &sh) ||
          lc_conv_release_unused(conv[k])) {
        fprintf(stderr, "bench_conv_cold: %s: %s\n", name, lc_last_error());
        return 1;
      }
      free(w);
      if (sh.workspace_bytes > wsb) wsb = sh.workspace_bytes;
      got = sh.route;
      wbytes = lc_conv_weight_bytes(conv[k]);
    }
    void *ws = wsb ? aligned_alloc(64, (wsb + 63) / 64 * 64) : NULL;
    if (wsb && !ws) return 1;
    for (int i = 0; i < 5; i++) lc_conv_run(conv[0], in, out, ws, wsb);
    for (int i = 0; i < rounds; i++) { /* hot (the second of two runs) and cold interleaved */
      lc_conv_run(conv[0], in, out, ws, wsb);
      double t0 = lc_now_ms();
      lc_conv_run(conv[0], in, out, ws, wsb);
      hot[i] = lc_now_ms() - t0;
      t0 = lc_now_ms();
      for (int k = 0; k < copies; k++) lc_conv_run(conv[k], in, out, ws, wsb);
      cold[i] = (lc_now_ms() - t0) / copies;
    }
    printf("%s threads %d route %s (%s): weights %.2f MB, hot %.4f ms, cold (%d copies in turn) %.4f ms\n", argv[1],
           threads, name, lc_route_name(got), wbytes / 1e6, median(hot, rounds), copies, median(cold, rounds));
    for (int k = 0; k < copies; k++) lc_conv_destroy(conv[k]);
    free(ws);
  }
  lc_context_destroy(ctx);
  free(in), free(out), free(hot), free(cold);
  return 0;
}
