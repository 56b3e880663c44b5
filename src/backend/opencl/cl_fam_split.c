/* Kernel family "split" (kernels/conv_split.cl): any conv, the reduction over (tap, input
 * channel) split over S items of a work-group and added in local memory. Made for small outputs
 * with long reductions: on the H200 PP-OCR det's 3x3 stride-2 convs at 20x20 .. 40x40 took 24 us
 * with family direct (a few thousand items, each a chain of 200+ dependent loads) against a
 * 5 us launch floor. Offered by the tuner only on small outputs; never the heuristic's choice
 * (gemm and direct come first), so untuned plans are unchanged. */
#include "backend/opencl/cl_conv.h"
#include "util/checked.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

static const char *const split_names[] = {"c4", "c8"};
static const int split_cb[] = {1, 2}; /* oc4 blocks per item */
#define SPLIT_NV 2
#define SPLIT_MAXWG 256   /* conv_split.cl LCS_MAXWG */
#define SPLIT_SMALL 384   /* oc4 blocks x pixels per compute unit below which the tuner tries it */

static size_t split_pow2_floor(size_t v) {
  size_t r = 1;
  while (r * 2 <= v) r *= 2;
  return r;
}

static int split_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= SPLIT_NV) return 0;
  if (split_cb[v] > 1 && c->a.ob < 2) return 0; /* half of every item idle */
  /* the kernel's local array: LCS_MC * LCS_MAXWG float4 */
  return c->rt->info.max_wg >= (size_t)(8 * split_cb[v]) && c->rt->info.local_mem >= 2 * SPLIT_MAXWG * 16;
}

/* P pixels per work-group, halved while half of them would still cover the output. */
static size_t split_pixels(const lc_cl_conv *c, size_t p) {
  size_t np = (size_t)c->a.oh * (size_t)c->a.ow;
  while (p > 1 && p / 2 >= np) p /= 2;
  return p;
}

/* (P, S): S slices, at least 4 per oc4 block (the stores), at most 32, so that each slice sums
 * about 16 rows; P pixels make 128 items in all, fewer when the output has fewer pixels. */
static int split_fit(const lc_cl_conv *c, int v, size_t s, size_t p, size_t out[3]) {
  const lc_cl_dev_info *d = &c->rt->info;
  size_t smin = (size_t)(4 * split_cb[v]);
  if (s < smin) s = smin;
  p = split_pixels(c, p);
  if (s > 32 || p * s > SPLIT_MAXWG || p * s > d->max_wg || p > d->max_wi[0] || s > d->max_wi[1]) return 0;
  out[0] = p, out[1] = s, out[2] = 1;
  return 1;
}

/* Where the tuner tries it below level heavy. Measured on the H200 (od96, 2026-12-04): it won on
 * small outputs with reductions up to 240 rows (3x3 stride 2 at 20x20: 17 us against direct's 30)
 * and lost where the reduction is long (1x1 960 -> 160 at 20x20: 37 us against gemm's 27; each
 * work-group reads all the weights of its blocks for only 128 / S pixels) or the work-groups too
 * few for the compute units (one pixel: 23 us against gemv's 8), although it timed faster there in
 * isolation. On resnet34-112's 1x1 stride-2 shortcuts it ran 11-15 us against 13-33 (suite
 * geomean 0.91x of the k x k-only rule for f32, q8 and q4) for 0.17 s more of IResNet34's cold
 * start (3.03 s against 2.86: two more programs), so level fast offers it on 1x1 too. */
static int split_worth(const lc_cl_conv *c, int v, int level, size_t rows, size_t work, size_t s, size_t cu) {
  const lc_cl_conv_args *a = &c->a;
  size_t np = (size_t)a->oh * (size_t)a->ow, p = split_pixels(c, 128 / s);
  size_t wgs = lc_div_up(np, p) * (size_t)a->n * (size_t)a->groups * lc_div_up((size_t)a->ob, (size_t)split_cb[v]);
  if (work > SPLIT_SMALL * cu || rows > 512 || wgs < cu) return 0;
  const char *e = getenv("LOWCONV_CL_SPLIT_1X1"); /* =0: level fast on k x k only (A/B runs) */
  return level != 1 || a->kh * a->kw > 1 || !(e && e[0] == '0');
}

static int split_lws(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (max < 1 || !split_eligible(c, v)) return 0;
  const lc_cl_conv_args *a = &c->a;
  size_t rows = (size_t)a->kh * (size_t)a->kw * (size_t)a->cin_g;
  size_t work = (size_t)a->n * (size_t)a->groups * (size_t)a->ob * (size_t)a->oh * (size_t)a->ow;
  size_t cu = c->rt->info.compute_units ? c->rt->info.compute_units : 1;
  const char *ff = getenv("LOWCONV_CL_FAMILY");
  int forced = ff && !strcmp(ff, "split");
  if (level <= 0 && !forced) return 0; /* never the heuristic's */
  size_t s = split_pow2_floor(rows / 16 ? rows / 16 : 1);
  if (s > 32) s = 32;
  if (s < (size_t)(4 * split_cb[v])) s = (size_t)(4 * split_cb[v]);
  if (level >= 1 && level < 3 && !forced && !split_worth(c, v, level, rows, work, s, cu)) return 0; /* heavy: every conv */
  const size_t tries[][2] = {{s, 128 / s}, {s / 2, 256 / s}, {s * 2, 64 / s ? 64 / s : 1}, {s, 256 / s}};
  int want = level <= 0 ? 1 : level == 1 ? 2 : 4, n = 0;
  for (int i = 0; i < 4 && n < want && n < max; i++) {
    size_t x[3];
    if (!tries[i][0] || !tries[i][1] || !split_fit(c, v, tries[i][0], tries[i][1], x)) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= lws[j][0] == x[0] && lws[j][1] == x[1];
    if (!dup) lws[n][0] = x[0], lws[n][1] = x[1], lws[n][2] = 1, n++;
  }
  return n;
}

static size_t split_ws(const lc_cl_conv *c, const lc_cl_cand *x) {
  (void)c, (void)x;
  return 0;
}

static lc_status split_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                               cl_event *first, cl_event *last) {
  static const char *const kernels[] = {"split_c4", "split_c8"};
  const lc_cl_conv_args *a = &c->a;
  const int v = cand->variant;
  size_t lws[3];
  if (!cand->lws[0] || !cand->lws[1]) { /* a candidate without a size: the heuristic's */
    size_t l[1][3];
    if (split_lws(c, v, 3, l, 1) != 1) return lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): split cannot run this conv");
    lws[0] = l[0][0], lws[1] = l[0][1];
  } else {
    lws[0] = cand->lws[0], lws[1] = cand->lws[1];
  }
  if (lws[1] & (lws[1] - 1) || lws[1] < (size_t)(4 * split_cb[v]) || lws[0] * lws[1] > SPLIT_MAXWG)
    return lc_error(LC_ERR_UNSUPPORTED, "conv (opencl): split local size %zu x %zu is not one it runs", lws[0], lws[1]);
  lc_cl_cand k = *cand;
  k.lws[0] = lws[0], k.lws[1] = lws[1], k.lws[2] = 1;
  size_t gws[3] = {lc_div_up((size_t)a->oh * (size_t)a->ow, lws[0]) * lws[0], lws[1],
                   (size_t)a->n * (size_t)a->groups * lc_div_up((size_t)a->ob, (size_t)split_cb[v])};
  return lc_cl_conv_enqueue_std(c, &k, "conv_split", kernels[v], 3, gws, in, out, res, first, last);
}

const lc_cl_family lc_cl_family_split = {"split", "conv_split", SPLIT_NV, split_names, split_eligible,
                                         split_lws, split_ws, split_enqueue};
