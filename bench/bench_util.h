/* What the small C benchmarks share: a benchdnn descriptor as an lc_conv_desc, random inputs and
 * the sort order of timings. Header-only: each bench_*.c is one executable. */
#ifndef LC_BENCH_UTIL_H
#define LC_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "benchdnn.h"
#include "lowconv.h"

/* NCHW, fp32, no activation: the descriptor's shape and pads (weights and route left to the caller). */
static inline void bench_desc(const bd_conv *c, lc_conv_desc *d) {
  lc_conv_desc_init(d);
  d->in_channels = c->ic, d->out_channels = c->oc, d->groups = c->g, d->kernel_h = c->kh, d->kernel_w = c->kw;
  d->stride_h = c->sh, d->stride_w = c->sw, d->dilation_h = c->dh + 1, d->dilation_w = c->dw + 1;
  d->pad_top = c->ph, d->pad_left = c->pw, d->pad_bottom = c->pb, d->pad_right = c->pr;
}

/* Parses desc into *c and makes a context of `threads`: 0, else the exit code (2: bad descriptor,
 * 1: no context) after a message naming prog. */
static inline int bench_open(const char *prog, const char *desc, int threads, bd_conv *c, lc_context **ctx) {
  char err[256];
  if (bd_parse(desc, c, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 2;
  }
  lc_context_params cp;
  lc_context_params_init(&cp);
  cp.threads = threads;
  *ctx = NULL;
  if (lc_context_create(&cp, ctx)) {
    fprintf(stderr, "%s: context: %s\n", prog, lc_last_error());
    return 1;
  }
  return 0;
}

/* Elements of the weights, input and output of c. */
static inline void bench_counts(const bd_conv *c, size_t *nw, size_t *ni, size_t *no) {
  *nw = (size_t)(c->oc * (c->ic / c->g) * c->kh * c->kw);
  *ni = (size_t)(c->mb * c->ic * c->ih * c->iw);
  *no = (size_t)(c->mb * c->oc * c->oh * c->ow);
}

/* n values in [-0.5, 0.5) from *seed (an LCG: the same inputs run to run); NULL when out of memory. */
static inline float *bench_rand_floats(size_t n, unsigned *seed) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; v && i < n; i++) {
    *seed = *seed * 1664525u + 1013904223u;
    v[i] = (float)(*seed >> 8) / (float)(1u << 24) - 0.5f;
  }
  return v;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
