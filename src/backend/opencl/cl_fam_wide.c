/* Kernel family "wide" (kernels/conv_wide.cl): large kernels (3..9 taps along x, stride and
 * dilation 1 there) to at most 32 output channels, each item a register tile of all (or half) the
 * output channels x 2..8 columns, input rows reused across the taps, the input channels split over
 * work-groups. Made for PP-OCR det's 9x9 convs to 24 channels, where family gemm's 32-row tiles pad
 * a quarter of M and ran at 12 TFLOP/s on the H200 (docs/benchmarks.md). */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wide_names[] = {"c8w4", "c12w4", "c16w4", "c24w4", "c24w2", "c8w8", "c12w8"};
static const int wide_tile[][2] = {{2, 4}, {3, 4}, {4, 4}, {6, 4}, {6, 2}, {2, 8}, {3, 8}}; /* oc4 blocks, columns */
#define WIDE_NV ((int)(sizeof wide_names / sizeof wide_names[0]))
#define WIDE_KMAX 9      /* conv_wide.cl LCW_KMAX */
#define WIDE_ITEMS 768   /* items per compute unit the input-channel split aims for */

static size_t wide_div_up(size_t a, size_t b) { return (a + b - 1) / b; }

static size_t wide_cols(const lc_cl_conv *c) { return (size_t)c->a.n * (size_t)c->a.oh * (size_t)c->a.ow; }

/* Items of one input-channel chunk. */
static size_t wide_items(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  return wide_div_up((size_t)a->ow, (size_t)wide_tile[v][1]) * (size_t)a->oh * (size_t)a->n * (size_t)a->groups *
         wide_div_up((size_t)a->ob, (size_t)wide_tile[v][0]);
}

/* Input-channel chunks: enough items for WIDE_ITEMS x mul per compute unit, at most one chunk per
 * channel. The multiplier (1, 2 or 4) is tuned: which count leaves the last wave of work-groups
 * least empty depends on the registers the driver gave the tile, unknown here. */
static void wide_split(const lc_cl_conv *c, int v, size_t mul, int *ksplit, int *kchunk) {
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1, cin = (size_t)c->a.cin_g;
  size_t ks = wide_div_up(cu * WIDE_ITEMS * (mul ? mul : 1), wide_items(c, v));
  if (ks > cin) ks = cin;
  if (ks < 1) ks = 1;
  size_t kc = wide_div_up(cin, ks);
  *kchunk = (int)kc;
  *ksplit = (int)wide_div_up(cin, kc);
}

/* Split multiplier of a candidate (lws[2], wide_lws). */
static size_t wide_mul(const lc_cl_cand *x) { return x->lws[2] == 2 || x->lws[2] == 4 ? x->lws[2] : 1; }

/* Partial sums of variant v split with multiplier mul. */
static size_t wide_ws_need(const lc_cl_conv *c, int v, size_t mul) {
  if (v < 0 || v >= WIDE_NV) return 0;
  int ks, kc;
  wide_split(c, v, mul, &ks, &kc);
  return (size_t)c->a.groups * (size_t)ks * (size_t)c->a.cout_g * wide_cols(c) * sizeof(float);
}

/* Few output channels (<= 8 oc4 blocks) and kernel rows long enough to reuse; CB must cover the
 * blocks in whole chunks (c8 in chunks of two, the last possibly half empty). The partial sums are
 * indexed with int. */
static int wide_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= WIDE_NV || c->depthwise) return 0;
  const lc_cl_conv_args *a = &c->a;
  int cb = wide_tile[v][0];
  if (a->in_aff || a->sw != 1 || a->dw != 1 || a->kw < 3 || a->kw > WIDE_KMAX || a->kh > WIDE_KMAX) return 0;
  if (a->ob > 8 || cb > a->ob || (a->ob % cb != 0 && cb != 2)) return 0;
  if (wide_tile[v][1] > 4 && a->ow <= 4) return 0; /* half the columns or more would be idle */
  size_t lm = (size_t)WIDE_KMAX * WIDE_KMAX * (size_t)cb * 16;
  if (lm > c->rt->info.local_mem) return 0;
  return wide_ws_need(c, v, 4) / sizeof(float) < ((size_t)1 << 31); /* the largest split offered */
}

/* Level fast (each variant is a program to build cold) times the tile of all the output
 * channels and the one of half of them; other levels every eligible tile. */
static int wide_fast(const lc_cl_conv *c, int v) {
  int cb = wide_tile[v][0], ob = c->a.ob;
  return wide_tile[v][1] == 4 && (cb == ob || 2 * cb == ob || (ob % 2 && cb == 2));
}

/* A local size shrunk (powers of two) until it is at most twice the range gx x gy; 0 if the
 * device cannot run it. */
static int wide_fit(const lc_cl_dev_info *d, size_t gx, size_t gy, size_t *x, size_t *y) {
  while (*x > 1 && *x / 2 >= gx) *x /= 2;
  while (*y > 1 && *y / 2 >= gy) *y /= 2;
  return *x <= d->max_wi[0] && *y <= d->max_wi[1] && *x * *y <= d->max_wg;
}

/* 2-D local sizes, columns first (a warp's items read one run of a row); the heuristic's 8 x 16
 * first, each shrunk to the range. */
static int wide_lws(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || !wide_eligible(c, v)) return 0;
  const char *fv = getenv("LOWCONV_CL_VARIANT");
  int forced = fv && !strcmp(fv, wide_names[v]);
  if (level == 1 && !forced && lc_cl_fast_short() && !wide_fast(c, v)) return 0;
  /* (x, y, split multiplier); the multiplier rides in lws[2] (the kernels' dim 2 is 1 wide). */
  static const size_t shapes[][3] = {{8, 16, 1}, {8, 16, 2}, {16, 8, 1}, {8, 16, 4}, {16, 8, 2}, {8, 8, 1},
                                     {32, 4, 1}, {16, 16, 1}, {8, 8, 2},  {32, 8, 1}, {4, 32, 1}, {64, 2, 1}};
  const int nshape = (int)(sizeof shapes / sizeof shapes[0]);
  int want = level == 1 ? 3 : level == 2 ? 6 : nshape;
  const lc_cl_dev_info *d = &c->rt->info;
  size_t gx = wide_div_up((size_t)c->a.ow, (size_t)wide_tile[v][1]), gy = (size_t)c->a.oh;
  int n = 0, ks1, ks, kc;
  wide_split(c, v, 1, &ks1, &kc);
  if (level <= 0) { /* the heuristic: 8 x 16, multiplier 1 (LOWCONV_CL_WIDE_MUL: the tests' other splits) */
    const char *e = getenv("LOWCONV_CL_WIDE_MUL");
    size_t m = e && (atoi(e) == 2 || atoi(e) == 4) ? (size_t)atoi(e) : 1, x = 8, y = 16;
    if (!wide_fit(d, gx, gy, &x, &y)) x = y = 1;
    lws[0][0] = x, lws[0][1] = y, lws[0][2] = m;
    return 1;
  }
  for (int i = 0; i < nshape && n < want && n < max; i++) {
    size_t x = shapes[i][0], y = shapes[i][1], m = shapes[i][2];
    if (!wide_fit(d, gx, gy, &x, &y)) continue;
    wide_split(c, v, m, &ks, &kc);
    if (m > 1 && ks == ks1) continue; /* no more chunks than channels: the same candidate */
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= lws[j][0] == x && lws[j][1] == y && lws[j][2] == m;
    if (dup) continue;
    lws[n][0] = x, lws[n][1] = y, lws[n][2] = m, n++;
  }
  return n;
}

/* Input rows as aligned float4 chunks (conv_wide.cl LCW_VEC): every chunk start ix0 + 4q is a
 * multiple of 4 (ox0 is, for 4 or 8 columns, and pl) and so are the row, channel and image
 * strides; the input is a buffer or a sub-buffer, both aligned far beyond 16 bytes. NCHW only
 * (unit x stride). LOWCONV_CL_WIDE_VEC=0: the scalar loads, for A/B runs. */
static int wide_vec(const lc_cl_conv *c) {
  const lc_cl_conv_args *a = &c->a;
  const char *e = getenv("LOWCONV_CL_WIDE_VEC");
  if (e && *e == '0') return 0;
  return a->in_sw == 1 && a->iw % 4 == 0 && a->in_sh % 4 == 0 && a->in_sc % 4 == 0 && a->in_sn % 4 == 0 &&
         a->pl % 4 == 0 && a->in_off % 4 == 0;
}

/* One kernel of the program built for this conv's kernel width (LOWCONV_CL_WIDE_FIXK=0: the
 * generic program, for A/B runs): a width is a program of its own, and nets use few. */
static lc_status wide_launch(const lc_cl_conv *c, const char *want, const char *name, const size_t *sz,
                             const void *const *val, const size_t gws[3], const size_t lws[3], cl_event *ev) {
  const char *e = getenv("LOWCONV_CL_WIDE_FIXK");
  char opts[192];
  const char *pf = getenv("LOWCONV_CL_WIDE_PF"), *vec = wide_vec(c) ? " -DLCW_VEC=1" : "";
  const char *nopf = pf && *pf == '0' ? " -DLCW_PF=0" : ""; /* A/B runs */
  int n = e && *e == '0' ? snprintf(opts, sizeof opts, "%s%s%s", c->options, vec, nopf)
                         : snprintf(opts, sizeof opts, "%s -DLCW_KW=%d%s%s", c->options, c->a.kw, vec, nopf);
  if (n < 0 || (size_t)n >= sizeof opts) return lc_error(LC_ERR_INVALID_ARG, "conv (opencl): build options too long");
  cl_kernel k;
  lc_status s = lc_cl_kernel_of(c->rt, "conv_wide", opts, want, name, &k);
  if (!s) s = lc_cl_set_args(c->rt, k, name, 9, sz, val);
  if (!s) s = lc_cl_enqueue(c->rt, k, name, 3, gws, lws, ev);
  return s;
}

/* The tile's kernel alone: partial sums of ksplit input-channel chunks into c->ws (gemm's split-K
 * layout); the arguments' ksplit and kchunk are this variant's. */
static lc_status wide_partials(const lc_cl_conv *c, int v, size_t mul, const size_t lws_in[3], cl_mem in,
                               lc_cl_conv_args *sa, cl_event *ev) {
  *sa = c->a;
  wide_split(c, v, mul, &sa->ksplit, &sa->kchunk);
  size_t need = wide_ws_need(c, v, mul);
  if (!c->ws || c->ws_bytes < need)
    return lc_error(LC_ERR_INTERNAL, "conv (opencl): wide %s needs %zu bytes of workspace, has %zu", wide_names[v],
                    need, c->ws_bytes);
  char name[32];
  snprintf(name, sizeof name, "wide_%s", wide_names[v]);
  size_t lws[3] = {lws_in[0] ? lws_in[0] : 16, lws_in[0] ? lws_in[1] : 8, 1};
  size_t gx = wide_div_up((size_t)sa->ow, (size_t)wide_tile[v][1]), gy = (size_t)sa->oh;
  size_t gz = (size_t)sa->n * (size_t)sa->groups * wide_div_up((size_t)sa->ob, (size_t)wide_tile[v][0]) * (size_t)sa->ksplit;
  size_t gws[3] = {wide_div_up(gx, lws[0]) * lws[0], wide_div_up(gy, lws[1]) * lws[1], gz};
  const size_t sz[9] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                        sizeof(cl_mem), sizeof(cl_mem), sizeof *sa,       sizeof(cl_mem)};
  const void *val[9] = {&in, &c->w, &c->sc, &c->of, &c->bias, &c->bias, &c->ws, sa, &c->ws};
  return wide_launch(c, name, name, sz, val, gws, lws, ev);
}

/* The tile's kernel, then wide_reduce (the chunks' sum and the epilogue). */
static lc_status wide_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                              cl_event *first, cl_event *last) {
  const int v = cand->variant;
  lc_cl_conv_args sa;
  cl_event e0 = NULL, e1 = NULL;
  lc_status s = wide_partials(c, v, wide_mul(cand), cand->lws, in, &sa, first ? &e0 : NULL);
  size_t total = (size_t)sa.groups * (size_t)sa.cout_g * wide_cols(c), rl[3] = {128, 1, 1};
  size_t rg[3] = {wide_div_up(total, rl[0]) * rl[0], 1, 1};
  cl_mem r = res ? res : c->bias; /* never read when has_res is 0 */
  const size_t sz[9] = {sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem),
                        sizeof(cl_mem), sizeof(cl_mem), sizeof sa,        sizeof(cl_mem)};
  const void *val[9] = {&in, &c->w, &c->sc, &c->of, &c->bias, &r, &out, &sa, &c->ws};
  char name[32];
  snprintf(name, sizeof name, "wide_%s", wide_names[v]);
  if (!s) s = wide_launch(c, name, "wide_reduce", sz, val, rg, rl, last ? &e1 : NULL);
  return lc_cl_conv_end_events(c, s, e0, e1, first, last);
}

int lc_cl_wide_local_sizes(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  return wide_lws(c, v, level, lws, max);
}

size_t lc_cl_wide_partial_bytes(const lc_cl_conv *c, int v, size_t mul) { return wide_ws_need(c, v, mul); }

lc_status lc_cl_wide_partials(const lc_cl_conv *c, int v, const size_t lws[3], cl_mem in, int *ksplit, cl_event *ev) {
  lc_cl_conv_args sa;
  lc_status s = wide_partials(c, v, lws[2] == 2 || lws[2] == 4 ? lws[2] : 1, lws, in, &sa, ev);
  *ksplit = sa.ksplit;
  return s;
}

int lc_cl_wide_eligible(const lc_cl_conv *c, int v) { return wide_eligible(c, v); }

static size_t wide_ws_cand(const lc_cl_conv *c, const lc_cl_cand *x) { return wide_ws_need(c, x->variant, wide_mul(x)); }

const lc_cl_family lc_cl_family_wide = {"wide", "conv_wide", WIDE_NV, wide_names, wide_eligible, wide_lws, wide_ws_cand,
                                        wide_enqueue};
