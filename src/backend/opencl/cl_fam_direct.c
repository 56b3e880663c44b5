/* Kernel families "direct" (general conv, output-tile variants), "dw" (depthwise) and "gemv"
 * (1x1 on few pixels): which convs each runs, the local sizes it offers per tuning level, and
 * how it is enqueued. Global sizes are documented in the kernels' headers (kernels/conv_*.cl). */
#include "backend/opencl/cl_conv.h"
#include "util/error.h"

#include <stdlib.h>

static size_t lcd_pow2_ceil(size_t v) {
  size_t r = 1;
  while (r < v && r < ((size_t)1 << 20)) r <<= 1;
  return r;
}

static size_t lcd_div_up(size_t a, size_t b) { return (a + b - 1) / b; }

static int lcd_log2(size_t v) {
  int r = 0;
  while (v > 1) v >>= 1, r++;
  return r;
}

/* Local sizes per level: the heuristic alone, then about 4, 8, or all (up to max). */
static int lcd_count(int level, int max) {
  int n = level <= 0 ? 1 : level == 1 ? 4 : level == 2 ? 8 : max;
  return n < max ? n : max;
}

static int lcd_fits(const lc_cl_dev_info *d, size_t x, size_t y) {
  return x <= d->max_wi[0] && y <= d->max_wi[1] && x * y <= d->max_wg;
}

typedef struct lcd_shape {
  size_t x, y;
  int key;
} lcd_shape;

static int lcd_shape_cmp(const void *a, const void *b) {
  const lcd_shape *p = a, *q = b;
  if (p->key != q->key) return p->key < q->key ? -1 : 1;
  return p->x > q->x ? -1 : p->x < q->x; /* wider first: longer coalesced rows */
}

/* 2-D power-of-two local sizes (x, y, 1) for a global range gx x gy. Heuristic: 32 items along
 * the columns (a warp reading one run of a row), up to 128 in all (several warps per work-group,
 * enough work-groups for every compute unit), shrunk to the range. Other shapes follow in order
 * of closeness to 128 items; none is wider or taller than the range rounded up. */
static int lcd_lws_2d(const lc_cl_conv *c, size_t gx, size_t gy, int level, size_t lws[][3], int max) {
  const lc_cl_dev_info *d = &c->rt->info;
  size_t px = lcd_pow2_ceil(gx), py = lcd_pow2_ceil(gy);
  size_t hx = px < 32 ? px : 32, hy = py < 128 / hx ? py : 128 / hx;
  while (hx > 1 && !lcd_fits(d, hx, 1)) hx >>= 1;
  while (hy > 1 && !lcd_fits(d, hx, hy)) hy >>= 1;
  int n = 0, want = lcd_count(level, max);
  if (max < 1) return 0;
  lws[n][0] = hx, lws[n][1] = hy, lws[n][2] = 1, n++;
  lcd_shape s[21 * 21];
  int ns = 0;
  for (size_t x = 1; x <= px && x <= d->max_wi[0]; x <<= 1)
    for (size_t y = 1; y <= py && x * y <= d->max_wg; y <<= 1) {
      if ((x == hx && y == hy) || !lcd_fits(d, x, y) || ns == 21 * 21) continue;
      int l2 = lcd_log2(x * y);
      s[ns].x = x, s[ns].y = y, s[ns].key = l2 > 7 ? l2 - 7 : 7 - l2;
      ns++;
    }
  qsort(s, (size_t)ns, sizeof s[0], lcd_shape_cmp);
  for (int i = 0; i < ns && n < want; i++) lws[n][0] = s[i].x, lws[n][1] = s[i].y, lws[n][2] = 1, n++;
  return n;
}

static size_t lcd_ws_none(const lc_cl_conv *c, const lc_cl_cand *x) {
  (void)c, (void)x;
  return 0;
}

/* ---------------------------------------------------------------- direct */

static const char *const lcd_direct_names[] = {"c4h1w1", "c4h1w2", "c4h4w1", "c8h2w1", "c8h4w1", "c4h1w4", "c8h1w4"};
static const char *const lcd_direct_kernels[] = {"conv_c4h1w1", "conv_c4h1w2", "conv_c4h4w1", "conv_c8h2w1",
                                                 "conv_c8h4w1", "conv_c4h1w4", "conv_c8h1w4"};
/* oc4 blocks, rows, columns per work item */
static const int lcd_direct_tile[][3] = {{1, 1, 1}, {1, 1, 2}, {1, 4, 1}, {2, 2, 1}, {2, 4, 1}, {1, 1, 4}, {2, 1, 4}};
#define LCD_NDIRECT ((int)(sizeof lcd_direct_names / sizeof lcd_direct_names[0]))

/* Every variant runs every conv; a tile more than twice the output (rows, columns or oc blocks)
 * only wastes work, so it is not offered. c4h1w1, the baseline, always is. */
static int lcd_direct_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= LCD_NDIRECT) return 0;
  if (v > 0 && c->wfmt != LC_WEIGHTS_F32 && c->rt->info.local_mem < LC_CL_DIRECT_STAGE_F4 * 16) return 0;
  const int *t = lcd_direct_tile[v];
  return (t[0] == 1 || c->a.ob > t[0] / 2) && (t[1] == 1 || c->a.oh > t[1] / 2) && (t[2] == 1 || c->a.ow > t[2] / 2);
}

static void lcd_direct_gws(const lc_cl_conv *c, int v, size_t gws[3]) {
  const int *t = lcd_direct_tile[v];
  const lc_cl_conv_args *a = &c->a;
  gws[0] = lcd_div_up((size_t)a->ow, (size_t)t[2]);
  gws[1] = lcd_div_up((size_t)a->oh, (size_t)t[1]);
  gws[2] = (size_t)a->n * (size_t)a->groups * lcd_div_up((size_t)a->ob, (size_t)t[0]);
}

/* Level fast times the tiles that won often in the H200 runs (of 102 layers where direct won,
 * bench/gpu/results to 2026-12-02: c4h1w2 42, c8h2w1 33, c4h1w1 31, c4h4w1 2, c8h4w1 1, c4h1w4
 * and c8h1w4 never): each tile is a program, 0.13-0.38 s to build cold there. */
static int lcd_direct_fast(int v) { return v == 0 || v == 1 || v == 3; }

/* Level fast's short lists apply unless a test or the CLI forces a variant. */
static int lcd_fast_short(int level) { return level == 1 && lc_cl_fast_short() && !getenv("LOWCONV_CL_VARIANT"); }

static int lcd_direct_lws(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  if (lcd_fast_short(level) && !lcd_direct_fast(v)) return 0;
  size_t gws[3];
  lcd_direct_gws(c, v, gws);
  return lcd_lws_2d(c, gws[0], gws[1], level, lws, max);
}

static lc_status lcd_direct_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                                    cl_event *first, cl_event *last) {
  size_t gws[3];
  lcd_direct_gws(c, cand->variant, gws);
  /* The q8 / q4 tiles stage a work-group's weights in local memory, so every item of a group must
   * have the same oc blocks: the local size is always given, with z = 1. (dw keeps its per-item
   * weights: staging its few taps ran 8 of od96's 10 q4 depthwise layers 1-2 us slower, H100.) */
  lc_cl_cand k = *cand;
  if (!k.lws[0] && lcd_lws_2d(c, gws[0], gws[1], 0, &k.lws, 1) < 1)
    return lc_error(LC_ERR_UNSUPPORTED, "opencl direct: no local size fits the device");
  k.lws[2] = 1;
  return lc_cl_conv_enqueue_std(c, &k, "conv_direct", lcd_direct_kernels[k.variant], 3, gws, in, out, res, first, last);
}

const lc_cl_family lc_cl_family_direct = {
    "direct", "conv_direct", LCD_NDIRECT, lcd_direct_names, lcd_direct_eligible, lcd_direct_lws, lcd_ws_none,
    lcd_direct_enqueue};

/* ---------------------------------------------------------------- dw */

static const char *const lcd_dw_names[] = {"w1", "w2", "w4", "w8"};
static const char *const lcd_dw_kernels[] = {"dw_w1", "dw_w2", "dw_w4", "dw_w8"};
static const int lcd_dw_cols[] = {1, 2, 4, 8};
#define LCD_NDW ((int)(sizeof lcd_dw_names / sizeof lcd_dw_names[0]))

static int lcd_dw_eligible(const lc_cl_conv *c, int v) {
  if (v < 0 || v >= LCD_NDW || !c->depthwise) return 0;
  return v == 0 || c->a.ow > lcd_dw_cols[v] / 2;
}

static void lcd_dw_gws(const lc_cl_conv *c, int v, size_t gws[3]) {
  gws[0] = lcd_div_up((size_t)c->a.ow, (size_t)lcd_dw_cols[v]);
  gws[1] = (size_t)c->a.oh;
  gws[2] = (size_t)c->a.n * (size_t)c->a.groups;
}

static int lcd_dw_lws(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  size_t gws[3];
  lcd_dw_gws(c, v, gws);
  return lcd_lws_2d(c, gws[0], gws[1], level, lws, max);
}

static lc_status lcd_dw_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                                cl_event *first, cl_event *last) {
  size_t gws[3];
  lcd_dw_gws(c, cand->variant, gws);
  return lc_cl_conv_enqueue_std(c, cand, "conv_dw", lcd_dw_kernels[cand->variant], 3, gws, in, out, res, first, last);
}

const lc_cl_family lc_cl_family_dw = {"dw", "conv_dw", LCD_NDW, lcd_dw_names, lcd_dw_eligible, lcd_dw_lws,
                                      lcd_ws_none, lcd_dw_enqueue};

/* ---------------------------------------------------------------- gemv */

static const char *const lcd_gemv_names[] = {"p1", "p1b2", "p1b4", "p2", "p4", "p8", "r1", "r1p4"};
static const char *const lcd_gemv_kernels[] = {"gemv_p1", "gemv_p1b2", "gemv_p1b4", "gemv_p2",
                                               "gemv_p4", "gemv_p8",   "gemv_r1",   "gemv_r1p4"};
/* pixels per pass, oc4 blocks per work-group, 1 = reads rows one at a time (any K) */
static const int lcd_gemv_shape[][3] = {{1, 1, 0}, {1, 2, 0}, {1, 4, 0}, {2, 1, 0},
                                        {4, 1, 0}, {8, 1, 0}, {1, 1, 1}, {4, 1, 1}};
#define LCD_NGEMV ((int)(sizeof lcd_gemv_names / sizeof lcd_gemv_names[0]))
#define LCD_GEMV_MAXPIX 8

/* Rows of one 16-byte chunk of codes (f32: one row of 4 lanes). */
static int lcd_gemv_rows(const lc_cl_conv *c) { return c->wfmt == LC_WEIGHTS_Q4 ? 8 : c->wfmt == LC_WEIGHTS_Q8 ? 4 : 1; }

static int lcd_gemv_eligible(const lc_cl_conv *c, int v) {
  const lc_cl_conv_args *a = &c->a;
  if (v < 0 || v >= LCD_NGEMV) return 0;
  if (a->kh != 1 || a->kw != 1 || a->pt != 0 || a->pl != 0) return 0;
  /* No pad at the bottom / right either: every output pixel reads an input pixel. */
  if ((int64_t)(a->oh - 1) * a->sh >= a->ih || (int64_t)(a->ow - 1) * a->sw >= a->iw) return 0;
  int64_t npix = (int64_t)a->n * a->oh * a->ow;
  if (npix > LCD_GEMV_MAXPIX) return 0;
  const int *s = lcd_gemv_shape[v];
  if (s[0] > 1 && s[0] >= 2 * npix) return 0; /* half the pixels of a pass or more would be idle */
  if (s[2]) return 1;
  int r = lcd_gemv_rows(c);
  if (a->cin_g % r != 0) return 0;
  if (c->wfmt != LC_WEIGHTS_F32 && a->bsz % r != 0 && a->bsz < a->cin_g) return 0;
  return s[1] == 1 || (a->groups == 1 && a->ob >= s[1]);
}

/* Heuristic: enough items that each loads its 4 (q8/q4) or 8 (f32) chunks at once, 32..256. */
static int lcd_gemv_lws(const lc_cl_conv *c, int v, int level, size_t lws[][3], int max) {
  const lc_cl_dev_info *d = &c->rt->info;
  size_t per = lcd_gemv_shape[v][2] ? 1 : (size_t)lcd_gemv_rows(c) * (c->wfmt == LC_WEIGHTS_F32 ? 8 : 4);
  size_t h = lcd_pow2_ceil(lcd_div_up((size_t)c->a.cin_g, per));
  h = h < 32 ? 32 : h > 256 ? 256 : h;
  size_t lim = d->max_wg < d->max_wi[0] ? d->max_wg : d->max_wi[0];
  while (h > 32 && h > lim) h >>= 1;
  if (h > lim || max < 1) return 0; /* a device under 32 items per group: the other families */
  /* Level fast leaves out the multi-block variants: on the H200's FC (25088 -> 512) p1b2 and
   * p1b4 took 1.2-1.9x p1's time, f32 and q4 alike, and each is a program to build. */
  if (lcd_fast_short(level) && lcd_gemv_shape[v][1] > 1) return 0;
  /* and p1 for long f32 rows, where r1 won both measured shapes (the FC: 25.0 against 44.3 us;
   * K = 4096, N = 14336: r1 chosen), saving a program on a cold start */
  if (lcd_fast_short(level) && v == 0 && c->wfmt == LC_WEIGHTS_F32 && c->a.cin_g >= 4096) return 0;
  int n = 0, want = lcd_count(level, max);
  lws[n][0] = h, lws[n][1] = 1, lws[n][2] = 1, n++;
  const size_t order[] = {h / 2, h * 2, h / 4, h * 4, h / 8, h * 8};
  for (int i = 0; i < 6 && n < want; i++)
    if (order[i] >= 32 && order[i] <= 256 && order[i] <= lim) lws[n][0] = order[i], lws[n][1] = 1, lws[n][2] = 1, n++;
  return n;
}

static lc_status lcd_gemv_enqueue(const lc_cl_conv *c, const lc_cl_cand *cand, cl_mem in, cl_mem out, cl_mem res,
                                  cl_event *first, cl_event *last) {
  /* The kernels need a power-of-two local size of at most 256 (their reduction). */
  lc_cl_cand k = *cand;
  if (k.lws[0] == 0) k.lws[0] = 128;
  if (k.lws[0] > 256 || (k.lws[0] & (k.lws[0] - 1)))
    return lc_error(LC_ERR_UNSUPPORTED, "opencl gemv: local size %zu is not a power of two up to 256", k.lws[0]);
  k.lws[1] = k.lws[2] = 1;
  size_t gws[3] = {lcd_div_up((size_t)c->a.groups * (size_t)c->a.ob, (size_t)lcd_gemv_shape[k.variant][1]) * k.lws[0],
                   1, 1};
  return lc_cl_conv_enqueue_std(c, &k, "conv_gemv", lcd_gemv_kernels[k.variant], 1, gws, in, out, res, first, last);
}

const lc_cl_family lc_cl_family_gemv = {"gemv", "conv_gemv", LCD_NGEMV, lcd_gemv_names, lcd_gemv_eligible,
                                        lcd_gemv_lws, lcd_ws_none, lcd_gemv_enqueue};
