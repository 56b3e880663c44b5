/* Winograd F(2x2, 3x3) vs im2col on the 3x3 stride-1 layers of ResNet-34 (NCHW and NHWC, batch 1).
 * usage: bench_winograd [--threads T] [--isa auto|scalar|avx2|avx512] [--layout nchw|nhwc|both]
 *                       [--reps N] [--shape IC,OC,HW] [--only im2col|winograd] [--weights f32|q8|q4]
 * (q8/q4: blocks of 32; winograd then transforms the weights per panel while running)
 * Prints the best time of N runs per route (robust to other load) and the speedup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lowconv.h"
#include "util/timer.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static unsigned rng = 12345u;
static void fill(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    rng = rng * 1664525u + 1013904223u;
    x[i] = (float)(rng >> 8) / (float)(1u << 24) - 0.5f;
  }
}

/* Best seconds of reps runs (after one warm-up); -1 when the route can't plan. */
static double time_route(lc_context *ctx, const lc_conv_desc *d0, int64_t hw, lc_route r, int reps, const float *in,
                         float *out, size_t *ws_bytes) {
  lc_conv_desc d = *d0;
  d.route = r;
  lc_conv *c = NULL;
  lc_conv_shape sh;
  if (lc_conv_create(ctx, &d, &c) != LC_OK || lc_conv_prepare(c, 1, hw, hw, &sh) != LC_OK) {
    fprintf(stderr, "%s: %s\n", lc_route_name(r), lc_last_error());
    lc_conv_destroy(c);
    return -1.0;
  }
  *ws_bytes = sh.workspace_bytes;
  /* 64-byte aligned, as lowconv.h recommends (plain malloc gives 16 and the timings then depend on
   * where the heap happens to put it). */
  void *ws = sh.workspace_bytes ? aligned_alloc(64, (sh.workspace_bytes + 63) / 64 * 64) : NULL;
  double t[64];
  if (reps > 64) reps = 64;
  lc_conv_run(c, in, out, ws, sh.workspace_bytes);
  for (int i = 0; i < reps; i++) {
    double t0 = lc_now_s();
    lc_conv_run(c, in, out, ws, sh.workspace_bytes);
    t[i] = lc_now_s() - t0;
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  free(ws);
  lc_conv_destroy(c);
  return t[0]; /* best of reps: the machine is shared */
}

int main(int argc, char **argv) {
  int threads = 1, reps = 9;
  lc_isa isa = LC_ISA_AUTO;
  int layouts = 1; /* bit 0: nchw, bit 1: nhwc */
  int64_t shapes[8][3] = {{3, 64, 112}, {64, 64, 56}, {128, 128, 28}, {256, 256, 14}, {512, 512, 7}};
  int nshapes = 5, only = 0; /* 0: both routes, else the route to time (for perf stat) */
  lc_weight_format wf = LC_WEIGHTS_F32;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "--threads")) threads = atoi(v), i++;
    else if (!strcmp(a, "--reps")) reps = atoi(v), i++;
    else if (!strcmp(a, "--isa")) {
      isa = !strcmp(v, "scalar")   ? LC_ISA_SCALAR
            : !strcmp(v, "avx2")   ? LC_ISA_AVX2
            : !strcmp(v, "avx512") ? LC_ISA_AVX512
                                   : LC_ISA_AUTO;
      i++;
    } else if (!strcmp(a, "--layout")) {
      layouts = !strcmp(v, "nhwc") ? 2 : !strcmp(v, "both") ? 3 : 1;
      i++;
    } else if (!strcmp(a, "--shape")) {
      long long ic, oc, hw;
      if (sscanf(v, "%lld,%lld,%lld", &ic, &oc, &hw) != 3) return fprintf(stderr, "bad --shape %s\n", v), 2;
      shapes[0][0] = ic, shapes[0][1] = oc, shapes[0][2] = hw, nshapes = 1;
      i++;
    } else if (!strcmp(a, "--weights")) {
      wf = !strcmp(v, "q8") ? LC_WEIGHTS_Q8 : !strcmp(v, "q4") ? LC_WEIGHTS_Q4 : LC_WEIGHTS_F32;
      i++;
    } else if (!strcmp(a, "--only")) {
      only = lc_route_from_name(v);
      i++;
    } else {
      fprintf(stderr, "usage: %s [--threads T] [--isa auto|scalar|avx2|avx512] [--layout nchw|nhwc|both] [--reps N] "
              "[--shape IC,OC,HW] [--only im2col|winograd] [--weights f32|q8|q4]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  lc_context_params cp;
  lc_context_params_init(&cp);
  cp.threads = threads;
  cp.isa = isa;
  lc_context *ctx = NULL;
  if (lc_context_create(&cp, &ctx) != LC_OK) return fprintf(stderr, "context: %s\n", lc_last_error()), 1;
  printf("table %s, %d thread(s), best of %d, weights %s\n", lc_context_isa_name(ctx), threads, reps,
         wf == LC_WEIGHTS_Q8 ? "q8" : wf == LC_WEIGHTS_Q4 ? "q4" : "f32");
  printf("%-6s %-16s %10s %10s %8s %10s %10s\n", "layout", "shape", "im2col ms", "wino ms", "speedup", "wino GF/s",
         "wino ws KiB");
  for (int l = 0; l < 2; l++) {
    if (!(layouts >> l & 1)) continue;
    for (int s = 0; s < nshapes; s++) {
      int64_t ic = shapes[s][0], oc = shapes[s][1], hw = shapes[s][2];
      lc_conv_desc d;
      lc_conv_desc_init(&d);
      d.in_channels = ic;
      d.out_channels = oc;
      d.kernel_h = d.kernel_w = 3;
      d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
      d.layout = l ? LC_NHWC : LC_NCHW;
      d.activation = LC_ACT_RELU;
      d.weight_format = wf;
      d.block_size = 32;
      size_t nw = (size_t)(oc * ic * 9), nin = (size_t)(ic * hw * hw), nout = (size_t)(oc * hw * hw);
      float *w = malloc(nw * sizeof(float)), *b = malloc((size_t)oc * sizeof(float));
      float *in = malloc(nin * sizeof(float)), *out = malloc(nout * sizeof(float));
      fill(w, nw);
      fill(b, (size_t)oc);
      fill(in, nin);
      d.weights = w;
      d.bias = b;
      size_t ws_i = 0, ws_w = 0;
      double ti = 1.0, tw = 1.0;
      if (!only || only == LC_ROUTE_IM2COL) ti = time_route(ctx, &d, hw, LC_ROUTE_IM2COL, reps, in, out, &ws_i);
      if (!only || only == LC_ROUTE_WINOGRAD) tw = time_route(ctx, &d, hw, LC_ROUTE_WINOGRAD, reps, in, out, &ws_w);
      char name[32];
      snprintf(name, sizeof name, "%lld->%lld @%lld", (long long)ic, (long long)oc, (long long)hw);
      double gf = 2.0 * (double)nout * (double)ic * 9.0 / tw * 1e-9; /* direct-conv flops */
      printf("%-6s %-16s %10.3f %10.3f %7.2fx %10.1f %10.0f\n", l ? "nhwc" : "nchw", name, ti * 1e3, tw * 1e3, ti / tw,
             gf, (double)ws_w / 1024.0);
      fflush(stdout);
      free(w);
      free(b);
      free(in);
      free(out);
    }
  }
  lc_context_destroy(ctx);
  return 0;
}
