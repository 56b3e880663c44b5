/* Run-to-run spread of one conv: times every run on its own (not only the median `lowconv conv`
 * prints), in blocks, so a slow mode shows as a block or as a tail. Per block: min, p10, median,
 * p90, max in ms. Runs follow each other back to back, or after a sleep of gap_us (0: none).
 * usage: bench_conv_runs DESC [threads 2] [runs per block 200] [blocks 5] [gap_us 0] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "conv/conv.h"
#include "lowconv.h"
#include "util/timer.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_conv_runs DESC [threads] [runs] [blocks] [gap_us]\n");
    return 2;
  }
  int threads = argc > 2 ? atoi(argv[2]) : 2, runs = argc > 3 ? atoi(argv[3]) : 200;
  int blocks = argc > 4 ? atoi(argv[4]) : 5;
  long gap_us = argc > 5 ? atol(argv[5]) : 0;
  if (runs < 1 || blocks < 1) return 2;
  bd_conv c;
  lc_context *ctx;
  int rc = bench_open("bench_conv_runs", argv[1], threads, &c, &ctx);
  if (rc) return rc;
  unsigned seed = 12345;
  size_t nw, ni, no;
  bench_counts(&c, &nw, &ni, &no);
  float *w = bench_rand_floats(nw, &seed), *in = bench_rand_floats(ni, &seed), *out = malloc(no * sizeof *out);
  double *t = malloc((size_t)runs * sizeof *t);
  lc_conv_desc d;
  bench_desc(&c, &d);
  d.weights = w;
  lc_conv *conv = NULL;
  lc_conv_shape sh;
  void *ws = NULL;
  if (!w || !in || !out || !t || lc_conv_create(ctx, &d, &conv) || lc_conv_prepare(conv, c.mb, c.ih, c.iw, &sh) ||
      (sh.workspace_bytes && !(ws = aligned_alloc(64, (sh.workspace_bytes + 63) / 64 * 64)))) {
    fprintf(stderr, "bench_conv_runs: setup: %s\n", lc_last_error());
    return 1;
  }
  const lc_conv_plan *pl = &conv->plan;
  printf("%s threads %d route %s (tile %zu x %zu, ocsplit %zu of %zu panels, plan threads %d), %d runs per block, "
         "gap %ld us; ms: min p10 median p90 max\n",
         argv[1], threads, lc_route_name(sh.route), pl->tile, pl->ntiles, pl->ocsplit, conv->npanels, pl->threads, runs,
         gap_us);
  for (int i = 0; i < 20; i++) lc_conv_run(conv, in, out, ws, sh.workspace_bytes);
  for (int b = 0; b < blocks; b++) {
    for (int i = 0; i < runs; i++) {
      if (gap_us > 0) nanosleep(&(struct timespec){gap_us / 1000000, gap_us % 1000000 * 1000}, NULL);
      double t0 = lc_now_ms();
      lc_conv_run(conv, in, out, ws, sh.workspace_bytes);
      t[i] = lc_now_ms() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
    printf("block %d: %.4f %.4f %.4f %.4f %.4f\n", b, t[0], t[runs / 10], t[runs / 2], t[runs * 9 / 10], t[runs - 1]);
  }
  lc_conv_destroy(conv);
  lc_context_destroy(ctx);
  free(ws), free(w), free(in), free(out), free(t);
  return 0;
}
