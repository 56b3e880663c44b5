/* Tap-rows route: NCHW strided convs with B read in place. im2col packs 32-pixel panels, a gather
 * call per (tap, channel, row segment) of 8-32 floats: 17-27 % of a 3x3 / 1x1 stride-2 conv
 * (perf, 64 ch at 112 px, Zen 5). Here a task takes whole output rows; per K block each row k =
 * (tap, channel) of B is gathered output row by output row (ow floats a call) into [k][tile
 * pixels], and the GEMM kernel reads it in place (row stride: an odd number of 64-byte lines, so
 * the rows of a K block don't pile onto a few L1 sets; 32- and 48-pixel panels start aligned,
 * 49-pixel ones after a tile's first do not: tile_cost prices that).
 * 3-wide stride-2 kernels gather their three kx taps in one pass over the input row
 * (f32_gather3_s2), and the rows two channels on are prefetched as a row is gathered. With
 * f32_gather_s2_rows (AVX2, AVX-512) a stride-2 B row of the tile is one call, padding in masks.
 * Pixel panels: the table's wide tile (8x49) where tile_cost says it pays, then nr-wide ones.
 * Each output is the kernel's sum over K blocks (kblock) in order (the wide kernel's sum is the
 * 8x32's): the bits don't depend on threads, tile or budget. */
#include <stdint.h>
#include <string.h>

#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"

/* Output pixels per task by default (whole rows): im2col's tile. */
#define TR_TILE_PIX 256
/* Weights a tile streams again when rows are cut for balance (select.c's BALANCE_WEIGHT_BYTES). */
#define TR_BALANCE_WEIGHT_BYTES ((size_t)4 << 20)
/* One thread: a tile's K-block of B at most this big, the rest of L2 for the weights streaming by. */
#define TR_B_BYTES ((size_t)768 << 10)
/* A task's gather of its tile's B, in tenths of tile_cost's units per pixel (a fifth of an
 * nr-wide call per weight panel): perf at 1 thread on a Xeon model 167, 3x3 s2, the gather's
 * share against the kernel calls' of the same tile: 64 ch at 56 px 20 / 76 % (0.34 units a pixel),
 * 256 ch at 14 px 10 / 87 % (0.6). Splitting a 14 px tile's weight panels over 2 threads made
 * each gather all of it (before TR_SHARED): 256 ch ran 0.749 ms against 0.708 with 7-row tiles
 * (no split). The 1x1 s2 gathers are cheaper than their weights streamed again: without the split
 * 128 -> 256 at 14 px ran 1.10x, 256 -> 512 at 20 px 1.04x, so only 3-wide kernels count it. */
#define TR_GATHER_COST 5
/* Channels ahead whose input rows are prefetched while a row is gathered. */
#define TR_PF_AHEAD 2
/* Kernels without the three-tap gather (1x1 s2): a tile split over weight panels pays a second
 * launch and reads B across cores, an eighth more work on the busiest thread, at most this many
 * tile_cost units (a Xeon model 167, 2 threads, one 20-row tile split against two of 10 rows, ms:
 * 64 -> 64 ch at 20 px 0.031 / 0.019, 128 -> 128 0.077 / 0.054; 128 -> 256 at 14 px, 7-row tiles,
 * 0.065 / 0.058; 256 -> 512 at 20 px even, 0.357 / 0.362; at 7 px the split stays, 4 + 3 rows ran
 * 1.3-1.4x). 3x3 s2 split tiles share their costlier gather: 128 ch at 7 px, split 0.078, 4 + 3
 * rows 0.091. */
#define TR_SPLIT_COST 64
/* plan.variant: fewer tiles than threads (fp32): the tasks of a tile's weight-panel split first
 * gather a share of its input channels into the tile's whole B (a pool launch), then run their
 * panels' GEMM calls on it (a second launch), so no task repeats the tile's gather. */
#define TR_SHARED 1

/* Pixel panels of a tile of npix pixels: *wide panels of *width pixels (the table's wide tile,
 * f32_gemm_wide: nr_wide or nr_wide - 1) from the tile's start, then nr-wide ones; the count and
 * width of least cost (ties: the fewer columns). Costs in fifths of an nr-wide call: a call of up
 * to nr_wide - 1 columns 7 (8x48 against 8x32 at k = 192-576, B in L2: 1.40-1.43x the time), of
 * nr_wide columns 8 (the extra column reads a fourth line of B per k: 4 x 49 px on 14x14 maps
 * ran 1.03x of 3 x 48 and 52 px in 8x32 calls; 7x7 maps in one call ran 0.72x of 32 + 17 px),
 * a masked call as a full one. Q8/Q4 pass their dequantized weights in rows (not packed): the
 * kernel then takes the extra column as a call of its own, so they keep to nr_wide - 1. */
static size_t tile_cost(const lc_conv *c, size_t npix, size_t *wide, size_t *width) {
  const lc_kernels *kt = c->ctx->k;
  size_t best = 0, bw = kt->nr, cost = 5 * lc_div_up(npix, kt->nr);
  for (size_t ww = kt->nr_wide - 1; kt->f32_gemm_wide && ww <= kt->nr_wide - (c->qw != NULL); ww++)
    for (size_t a = 1; a <= lc_div_up(npix, ww); a++) {
      size_t left = npix > a * ww ? npix - a * ww : 0;
      size_t k = (ww == kt->nr_wide ? 8 : 7) * a + 5 * lc_div_up(left, kt->nr);
      if (k < cost) cost = k, best = a, bw = ww;
    }
  if (wide) *wide = best, *width = bw;
  return cost;
}

/* Floats between rows of B for tiles of `rows` output rows: whole lines, an odd count of them. */
static size_t row_stride(const lc_conv_plan *p, size_t rows) {
  size_t s = lc_round_up(rows * (size_t)p->ow, 16);
  return (s / 16) % 2 ? s : s + 16;
}

/* 3-wide kernel rows, stride_w 2, dense: a kernel reads each input row once for the three kx taps. */
static int fuses_kx(const lc_conv *c) {
  return c->ctx->k->f32_gather3_s2 && c->d.kernel_w == 3 && c->d.stride_w == 2 && c->d.dilation_w == 1;
}

/* K block: LC_KC, or with fuses_kx whole kernel rows of taps (3 x cin, up to 3 LC_KC) so a row's
 * three kx taps are gathered together (LC_KC split them from 64 channels; 256 channels, 768-row
 * blocks: 0.94x of 256-row ones, Zen 5). Q8/Q4 keep LC_KC: the dequantized panel is sized for it. */
static size_t kblock(const lc_conv *c) {
  size_t kr = 3 * (size_t)c->cin_g;
  if (c->qw || !fuses_kx(c) || kr > 3 * LC_KC || kr > c->K) return lc_min_sz(c->K, LC_KC);
  return kr * lc_max_sz(1, lc_min_sz(LC_KC / kr, c->K / kr));
}

static int slot_bytes(const lc_conv *c, const lc_conv_plan *p, size_t rows, size_t *bbytes, size_t *all) {
  size_t n;
  if (!lc_mul_sz(rows, (size_t)p->ow, &n) || n > SIZE_MAX / 2 ||
      !lc_mul_sz(row_stride(p, rows), kblock(c) * sizeof(float), bbytes))
    return 0;
  *bbytes = lc_round_up(*bbytes, 64);
  return lc_add_sz(*bbytes, lc_qpanel_bytes(c), all);
}

/* Bytes of every tile's whole B ([K][row_stride]) for the shared gather; 0: overflows. */
static int shared_bytes(const lc_conv *c, const lc_conv_plan *p, size_t *bytes) {
  size_t tiles, n;
  return lc_mul_sz((size_t)p->n, (size_t)c->d.groups, &tiles) && lc_mul_sz(tiles, p->ntiles, &tiles) &&
         lc_mul_sz(row_stride(p, p->tile), c->K, &n) && lc_mul_sz(n, tiles, &n) && lc_mul_sz(n, sizeof(float), bytes) &&
         *bytes <= SIZE_MAX / 2;
}

lc_status lc_taprows_plan(const lc_conv *c, lc_conv_plan *p) {
  const lc_conv_desc *d = &c->d;
  if (d->layout != LC_NCHW) return lc_error(LC_ERR_UNSUPPORTED, "taprows: needs NCHW");
  if (!c->wpack && !c->qw) return lc_error(LC_ERR_UNSUPPORTED, "taprows: reads the packed or quantized weights");
  size_t oh = (size_t)p->oh, ow = (size_t)p->ow, imgs = (size_t)p->n * (size_t)d->groups;
  size_t T = (size_t)c->ctx->threads, wbytes = 0;
  const lc_kernels *kt = c->ctx->k;
  size_t rows = lc_min_sz(oh, p->hint_tile ? p->hint_tile : lc_max_sz(1, TR_TILE_PIX / ow));
  if (!p->hint_tile && T > 1 && lc_mul_sz(c->K, sizeof(float), &wbytes) &&
      lc_mul_sz((size_t)c->cout_g, wbytes, &wbytes) && wbytes <= TR_BALANCE_WEIGHT_BYTES) {
    /* the least work on the busiest thread: each task's kernel calls (tile_cost per weight panel, a
     * tile's weight-panel split sharing them) and its gather of the tile's B (TR_GATHER_COST), which
     * a split's task counts the whole gather even where fp32 shares it (TR_SHARED): it reads the
     * other tasks' share of B from their cores' caches and pays a second launch (256 ch at 14 px,
     * as one shared split tile 0.905 ms, as two 7-row tiles 0.830, Xeon model 167, 2 threads);
     * ties: the larger tile. Whole rows of 14-28 px leave a part-empty panel per tile: 4-row tiles
     * of 28 px (7 for 2 threads) ran 1.03-1.1x of im2col. */
    size_t best = rows, cost = SIZE_MAX, gather = fuses_kx(c) ? TR_GATHER_COST : 0;
    if (kt->f32_gemm_wide) rows = lc_min_sz(oh, lc_max_sz(1, 2 * TR_TILE_PIX / ow)); /* room for 8 x 49 px */
    for (size_t r = rows; r >= 1; r--) {
      size_t tiles = imgs * lc_div_up(oh, r), s = lc_route_ocsplit(tiles, (int)T, c->npanels);
      size_t task = lc_div_up(c->npanels, s) * tile_cost(c, r * ow, NULL, NULL);
      task += gather * r * ow / 10;
      size_t w = lc_div_up(tiles * s, T) * task;
      if (s > 1 && !gather) w += lc_min_sz(w / 8, TR_SPLIT_COST);
      if (w < cost) cost = w, best = r;
    }
    rows = best;
  } else if (!p->hint_tile && kt->f32_gemm_wide) {
    /* one thread (or weights too big to stream again for balance): tiles of TR_TILE_PIX / 2 ..
     * 2 TR_TILE_PIX pixels, the least kernel work over the image (the last tile's included; ties:
     * the larger), e.g. 28 px rows: 12-row tiles of 7 panels of 48 px rather than 9 rows of 5 and
     * a 12-pixel one */
    size_t best = rows, cost = SIZE_MAX, lo = lc_max_sz(1, TR_TILE_PIX / 2 / ow);
    /* and a K block's B under TR_B_BYTES (256 ch at 20 px: 12-row tiles, 0.74 MB, ran 0.95x of 20 rows) */
    size_t hi = lc_min_sz(lc_max_sz(1, 2 * TR_TILE_PIX / ow), lc_max_sz(lo, TR_B_BYTES / sizeof(float) / kblock(c) / ow));
    for (size_t r = lc_min_sz(oh, hi); r >= lo; r--) {
      size_t w = oh / r * tile_cost(c, r * ow, NULL, NULL) + (oh % r ? tile_cost(c, oh % r * ow, NULL, NULL) : 0);
      if (w < cost) cost = w, best = r;
    }
    rows = best;
    /* Threads share whole tiles: where that choice deals them unevenly, equal tiles in equal
     * rounds if some exist (256 -> 512 ch at 20 px, 2 threads: 12 + 8 rows ran 3.55 ms, 10 + 10
     * rows 3.17, one tile split by weight panels 3.41; one thread 5.95). Fewer tiles than threads
     * keep the weight-panel split. */
    size_t n0 = imgs * lc_div_up(oh, rows);
    if (T > 1 && n0 >= T && (n0 % T || oh % rows)) {
      size_t even = 0, ecost = SIZE_MAX;
      for (size_t r = lc_min_sz(oh, hi); r >= lo; r--) {
        size_t nt = imgs * (oh / r);
        if (oh % r || nt % T) continue;
        size_t w = nt / T * tile_cost(c, r * ow, NULL, NULL);
        if (w < ecost) ecost = w, even = r;
      }
      if (even) rows = even;
    }
  }
  size_t bb, ws;
  int threads;
  for (;;) {
    if (!slot_bytes(c, p, rows, &bb, &ws)) return lc_error(LC_ERR_OVERFLOW, "taprows: workspace overflows");
    threads = lc_threads_for_budget(c, ws);
    if (threads > 0 || rows == 1) break;
    rows /= 2;
  }
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "taprows: one output row's K block needs %zu bytes, budget is %zu", ws,
                    c->ctx->budget);
  p->tile = rows;
  p->ntiles = lc_div_up(oh, rows);
  p->ocsplit = lc_route_ocsplit(imgs * p->ntiles, threads, c->npanels);
  p->variant = 0;
  size_t sb, per;
  if (!c->qw && p->ocsplit > 1 && shared_bytes(c, p, &sb)) {
    per = lc_round_up(lc_div_up(sb, (size_t)threads), 64);
    if (per <= ws || lc_threads_for_budget(c, per) >= threads) p->variant = TR_SHARED, ws = lc_max_sz(ws, per);
  }
  return lc_route_planned(p, LC_ROUTE_TAPROWS, ws, threads);
}

/* Output columns [lo, hi) of tap column kx whose input column lies inside the image. */
static void col_range(const lc_conv *c, int64_t kx, int64_t *x0, int64_t *lo, int64_t *hi) {
  const lc_conv_plan *p = &c->plan;
  int64_t sw = c->d.stride_w, ow = p->ow;
  *x0 = kx * c->d.dilation_w - p->pl; /* input column of output column 0 */
  *lo = *x0 >= 0 ? 0 : (-*x0 + sw - 1) / sw;
  *hi = *x0 < p->iw ? (p->iw - 1 - *x0) / sw + 1 : 0;
  if (*lo > ow) *lo = ow;
  if (*hi > ow) *hi = ow;
  if (*hi < *lo) *hi = *lo;
}

/* Rows of B for tap t (and, when three, t + 1 and t + 2: kx = 0, 1, 2 of one ky) and channel ch through
 * f32_gather_s2_rows (stride_w 2): one call for the output rows whose input row lies in the image, the
 * others zero. The input rows two channels on are prefetched first (64+ planes are more streams than
 * the prefetchers follow). */
static void build_rows_s2(const lc_conv *c, const float *img_g, size_t t, size_t ch, size_t oy0, size_t rows,
                          float *const dst[3], int three) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t ow = (size_t)p->ow, iw = (size_t)p->iw, sh = (size_t)d->stride_h;
  int64_t ky = (int64_t)t / d->kernel_w, kx = (int64_t)t % d->kernel_w;
  int64_t iy0 = (int64_t)oy0 * d->stride_h + ky * d->dilation_h - p->pt; /* input row of tile row 0 */
  size_t r0 = iy0 >= 0 ? 0 : lc_min_sz(rows, (size_t)(-iy0 + d->stride_h - 1) / sh);
  size_t r1 = iy0 < p->ih ? lc_min_sz(rows, (size_t)(p->ih - 1 - iy0) / sh + 1) : 0;
  if (r1 < r0) r1 = r0;
  for (int i = 0; i < (three ? 3 : 1); i++) {
    memset(dst[i], 0, r0 * ow * sizeof(float));
    memset(dst[i] + r1 * ow, 0, (rows - r1) * ow * sizeof(float));
  }
  if (r1 == r0) return;
  const float *first = img_g + ch * p->ihw + (size_t)(iy0 + (int64_t)(r0 * sh)) * iw;
  if (ch + TR_PF_AHEAD < (size_t)c->cin_g)
    for (size_t r = r0; r < r1; r++)
      for (size_t x = 0; x < iw; x += 16) __builtin_prefetch(first + TR_PF_AHEAD * p->ihw + (r - r0) * sh * iw + x, 0, 3);
  c->ctx->k->f32_gather_s2_rows(dst[0] + r0 * ow, three ? dst[1] + r0 * ow : NULL, three ? dst[2] + r0 * ow : NULL, ow,
                                first, sh * iw, r1 - r0, ow, (ptrdiff_t)(kx * d->dilation_w - p->pl), iw);
}

/* B row k = t * cin + ch (tap-major, then channel) for output rows [oy0, oy0 + rows): dst[r * ow + x] =
 * input of output pixel (oy0 + r, x) under tap t; zero in the padding. */
static void build_row(const lc_conv *c, const float *img_g, size_t t, size_t ch, size_t oy0, size_t rows, float *dst) {
  const lc_conv_desc *d = &c->d;
  if (d->stride_w == 2 && c->ctx->k->f32_gather_s2_rows) {
    float *const one[3] = {dst, NULL, NULL};
    build_rows_s2(c, img_g, t, ch, oy0, rows, one, 0);
    return;
  }
  const lc_conv_plan *p = &c->plan;
  size_t cin = (size_t)c->cin_g, ow = (size_t)p->ow;
  int64_t ky = (int64_t)t / d->kernel_w, sw = d->stride_w, x0, lo, hi;
  col_range(c, (int64_t)t % d->kernel_w, &x0, &lo, &hi);
  const float *plane = img_g + ch * p->ihw;
  size_t pf = ch + TR_PF_AHEAD < cin ? TR_PF_AHEAD * p->ihw : 0; /* as in build_row3 */
  for (size_t r = 0; r < rows; r++, dst += ow) {
    int64_t iy = (int64_t)(oy0 + r) * d->stride_h + ky * d->dilation_h - p->pt;
    if (iy < 0 || iy >= p->ih || hi == lo) {
      memset(dst, 0, ow * sizeof(float));
      continue;
    }
    if (pf)
      for (int64_t x = 0; x < p->iw; x += 16) __builtin_prefetch(plane + pf + iy * p->iw + x, 0, 3);
    for (int64_t x = 0; x < lo; x++) dst[x] = 0.0f;
    const float *s = plane + (iy * p->iw + x0 + lo * sw);
    if (sw == 1)
      memcpy(dst + lo, s, (size_t)(hi - lo) * sizeof(float));
    else
      c->ctx->k->f32_gather(dst + lo, s, (size_t)(hi - lo), (size_t)sw);
    for (int64_t x = hi; x < (int64_t)ow; x++) dst[x] = 0.0f;
  }
}

int lc_taprows_auto(const lc_conv *c, const lc_conv_plan *p) {
  /* 3x3 s2 on Zen 5 against im2col, same-binary rounds (docs/benchmarks.md "Stride 2 without a
   * gather pass"): 64/128/256 ch (K 576-2304) 0.89/0.93/0.94x at 1 thread, 0.87/0.88/0.81x at 2;
   * 512 ch 1.06x / 1.12x (im2col's panel-first order keeps B in L1). With the 8x49 tile (a Xeon
   * model 167, 1 / 2 threads): 512 ch at 7 px 0.74 / 0.78x, at 14 px 0.86 / 0.86x, 384 ch at 7 px
   * 0.76 / 0.80x. Q8/Q4 (the Xeon, stop 22, 1 / 2 threads against im2col): 64-256 ch 0.90-0.95 /
   * 0.86-0.95x, 512 ch 0.97-1.04 / 0.97-1.04x, so they take it to K 2304; the other rules are
   * fp32's only (not measured at q). AVX2 (Zen 3, stop 29, 1 thread, fastest of 5 rounds against
   * im2col): 64 ch at 56 / 80 px outputs 0.88 / 0.90x, 128-256 ch 0.98-1.03x, 512 ch at 7 px 0.94x
   * (K 4608: left to im2col without the wide tile); 2 threads within the shared machine's noise.
   * Stop 31 (the same Zen 3, min / median of 5 interleaved runs, taprows against im2col): 512 ch at
   * 7 px 3.53 / 3.56 against 3.78 / 3.93 ms at 1 thread, 1.92 / 1.94 against 2.11 / 2.16 at 2 (the
   * tuner took taprows there too, 1.05x): fp32 K 4608 on AVX2 as well. Past K 4608 with the wide
   * tile (the Xeon, stop 41, medians of 3 rounds, 1 / 2 threads): 640-2048 ch at 7-40 px outputs
   * 0.53-0.94 / 0.56-1.00x, so no bound there; AVX2 past 4608 is not measured. */
  const lc_conv_desc *d = &c->d;
  const lc_kernels *kt = c->ctx->k;
  if (d->layout != LC_NCHW) return 0;
  if (d->kernel_h == 3 && d->stride_h == 2 && fuses_kx(c)) {
    if (kt->f32_gemm_wide && !c->qw) return 1;
    return c->K <= (kt->isa == LC_ISA_AVX2 && !c->qw ? (size_t)4608 : (size_t)2304);
  }
  if (c->qw) return 0;
  /* 9x9 stride 1 at <= 40 px outputs, 1 thread (the Xeon model 167, against im2col): 256 ch at
   * 20 / 40 px 0.86x / selector_fit's head to head 1.19, 1.14; 96->24 at 20 / 40 px 0.84 / 0.93x; 64 ch
   * at 40 px 0.94x. At 2 threads 0.92-1.49x (96->24 at 20 px the worst): im2col there. */
  if (d->kernel_h == 9 && d->kernel_w == 9 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
      d->dilation_w == 1 && kt->f32_gemm_wide && c->ctx->threads == 1 && p->ow <= 40)
    return 1;
  /* 1x1 s2 with the row-block gather and the wide tile (the Xeon, 1 / 2 threads against im2col):
   * 7 px outputs 0.79 / 0.83x (256->512), 0.74 / 0.78x (512->1024), 14 px 0.89 / 0.78-0.87x
   * (128->256), 0.91x (512->1024), 20 px 0.97 / 0.98x (256->512), 28 px 0.95 / 1.09x (64->128: im2col
   * at 2+ threads), 0.97x (512->1024); 40-80 px 1.04-1.07x at 1 thread (im2col's packed panels).
   * AVX2 without it (Zen 3, stop 31, min / median of 5 interleaved runs, taprows against im2col, ms,
   * 1 / 2 threads): 256->512 at 7 px 0.178 / 0.184 against 0.188 / 0.189, 0.104 / 0.106 against
   * 0.109 / 0.111; 128->256 at 14 px 0.167 / 0.171 against 0.178 / 0.179, 0.100 / 0.103 against
   * 0.108 / 0.109; 64->128 at 28 px even, 256->512 at 20 px even / 1.1x: to 14 px. */
  if (d->kernel_h != 1 || d->kernel_w != 1 || d->stride_h != 2 || d->stride_w != 2 || !kt->f32_gather_s2_rows ||
      c->K > 512 || p->ow < 7)
    return 0;
  if (!kt->f32_gemm_wide) return kt->isa == LC_ISA_AVX2 && p->ow <= 14;
  return p->ow <= (c->ctx->threads > 1 ? 20 : 32);
}

/* Rows of taps t, t + 1, t + 2 (kx = 0, 1, 2 of one ky) for channel ch into dst[0..2]. */
static void build_row3(const lc_conv *c, const float *img_g, size_t t, size_t ch, size_t oy0, size_t rows,
                       float *dst[3]) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t cin = (size_t)c->cin_g, ow = (size_t)p->ow;
  int64_t ky = (int64_t)t / d->kernel_w, x0[3], lo[3], hi[3];
  for (int i = 0; i < 3; i++) col_range(c, i, &x0[i], &lo[i], &hi[i]);
  int64_t fl = lo[0] > lo[1] ? lo[0] : lo[1], fh = hi[0] < hi[1] ? hi[0] : hi[1];
  fl = fl > lo[2] ? fl : lo[2];
  fh = fh < hi[2] ? fh : hi[2];
  if (fh < fl) fh = fl;
  const float *plane = img_g + ch * p->ihw;
  size_t pf = ch + TR_PF_AHEAD < cin ? TR_PF_AHEAD * p->ihw : 0; /* floats to the channel prefetched */
  for (size_t r = 0; r < rows; r++) {
    float *o[3] = {dst[0] + r * ow, dst[1] + r * ow, dst[2] + r * ow};
    int64_t iy = (int64_t)(oy0 + r) * d->stride_h + ky * d->dilation_h - p->pt;
    if (iy < 0 || iy >= p->ih) {
      for (int i = 0; i < 3; i++) memset(o[i], 0, ow * sizeof(float));
      continue;
    }
    const float *row = plane + iy * p->iw;
    if (pf) /* the same row of a later channel: 64+ planes are more streams than the prefetchers follow */
      for (int64_t x = 0; x < p->iw; x += 16) __builtin_prefetch(row + pf + x, 0, 3);
    for (int i = 0; i < 3; i++) { /* the columns outside the common run: edges, a few each */
      for (int64_t x = 0; x < fl; x++) o[i][x] = x >= lo[i] && x < hi[i] ? row[2 * x + x0[i]] : 0.0f;
      for (int64_t x = fh; x < (int64_t)ow; x++) o[i][x] = x >= lo[i] && x < hi[i] ? row[2 * x + x0[i]] : 0.0f;
    }
    if (fh > fl)
      c->ctx->k->f32_gather3_s2(o[0] + fl, o[1] + fl, o[2] + fl, row + (2 * fl + x0[0]), (size_t)(fh - fl));
  }
}

/* Rows [k0, k0 + kn) of B, row i at b + i * ps. Tap and channel are stepped, not divided out per
 * row (two 64-bit divisions a row were 2 % of a 3x3 s2 conv, perf on a Xeon). */
static void build_block(const lc_conv *c, const float *img_g, size_t k0, size_t kn, size_t oy0, size_t rows,
                        float *b, size_t ps) {
  size_t cin = (size_t)c->cin_g, kw = (size_t)c->d.kernel_w, t = k0 / cin, ch = k0 % cin, kx = t % kw;
  int fuse = fuses_kx(c), rows_s2 = c->ctx->k->f32_gather_s2_rows != NULL;
  for (size_t i = 0; i < kn; i++) {
    if (fuse && i >= kx * cin && i - kx * cin + 2 * cin < kn) {
      if (kx == 0) { /* kx 1, 2: written with their kx = 0 row */
        float *dst[3] = {b + i * ps, b + (i + cin) * ps, b + (i + 2 * cin) * ps};
        if (rows_s2) build_rows_s2(c, img_g, t, ch, oy0, rows, dst, 1);
        else build_row3(c, img_g, t, ch, oy0, rows, dst);
      }
    } else {
      build_row(c, img_g, t, ch, oy0, rows, b + i * ps);
    }
    if (++ch == cin) {
      ch = 0;
      t++;
      kx = kx + 1 == kw ? 0 : kx + 1;
    }
  }
}

/* The whole B of task `task`'s tile (TR_SHARED: tiles in task order from the workspace's start). */
static float *shared_b(const void *arg, size_t task) {
  const lc_route_job *jb = arg;
  const lc_conv_plan *p = &jb->c->plan;
  return (float *)jb->ws + task / p->ocsplit * jb->c->K * row_stride(p, p->tile);
}

/* TR_SHARED's first launch: task s of a tile's split gathers input channels [cin s / split,
 * cin (s + 1) / split) of every tap into the tile's B, a 3-wide stride-2 kernel row's three taps
 * together. */
static void shared_gather_task(void *arg, size_t task, int thread) {
  const lc_conv *c = ((const lc_route_job *)arg)->c;
  const lc_conv_plan *p = &c->plan;
  lc_task_view v = lc_task_view_of(arg, task, thread);
  size_t oy0 = v.tp.tile * p->tile, rows = lc_min_sz(p->tile, (size_t)p->oh - oy0), ps = row_stride(p, p->tile);
  size_t cin = (size_t)c->cin_g, split = task % p->ocsplit, c0 = cin * split / p->ocsplit;
  size_t c1 = cin * (split + 1) / p->ocsplit, taps = c->K / cin;
  float *b = shared_b(arg, task);
  int fuse = fuses_kx(c), rows_s2 = c->ctx->k->f32_gather_s2_rows != NULL;
  for (size_t t = 0; t < taps; t += fuse ? 3 : 1)
    for (size_t ch = c0; ch < c1; ch++) {
      float *row = b + (t * cin + ch) * ps;
      if (!fuse) {
        build_row(c, v.img_g, t, ch, oy0, rows, row);
        continue;
      }
      float *dst[3] = {row, row + cin * ps, row + 2 * cin * ps};
      if (rows_s2) build_rows_s2(c, v.img_g, t, ch, oy0, rows, dst, 1);
      else build_row3(c, v.img_g, t, ch, oy0, rows, dst);
    }
}

/* Task `task`'s GEMM calls; B gathered per K block into its slot, or with `shared` read from its
 * tile's whole B (gathered by shared_gather_task). */
static void tile_task(void *arg, size_t task, int thread, int shared) {
  const lc_conv *c = ((const lc_route_job *)arg)->c;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  lc_task_view v = lc_task_view_of(arg, task, thread);
  size_t oy0 = v.tp.tile * p->tile, rows = lc_min_sz(p->tile, (size_t)p->oh - oy0);
  size_t npix = rows * (size_t)p->ow, ps = row_stride(p, p->tile);
  size_t coutg = (size_t)c->cout_g, pw = c->pw, pp = kt->nr, K = c->K, kc = kblock(c);
  float *b = (float *)v.slot;
  float *qbuf = c->qw ? (float *)(v.slot + p->ws_thread - lc_qpanel_bytes(c)) : NULL;
  float *out = v.img_out + oy0 * (size_t)p->ow;
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.bias_per_row = 1;
  ep.rs_res = p->ohw;
  /* the GEMM adds the residual before the activation */
  const float *res = c->res ? c->res + (out - ((const lc_route_job *)arg)->out) : NULL;
  size_t nwide, ww;
  tile_cost(c, npix, &nwide, &ww);
  for (size_t k0 = 0; k0 < K; k0 += kc) {
    size_t kn = lc_min_sz(kc, K - k0);
    if (shared) b = shared_b(arg, task) + k0 * ps;
    else build_block(c, v.img_g, k0, kn, oy0, rows, b, ps);
    ep.accumulate = k0 > 0;
    ep.final = k0 + kn == K;
    lc_f32_gemm_fn gemm = K <= kc && kt->f32_gemm_final ? kt->f32_gemm_final : kt->f32_gemm; /* as im2col's */
    for (size_t q = v.tp.q0; q < v.tp.q1; q++) {
      size_t oc0 = (size_t)v.tp.g * coutg + q * pw, noc = lc_min_sz(pw, coutg - q * pw), wrs, wcs;
      const float *w = lc_conv_wpanel(c, (int64_t)v.tp.g, q, k0, kn, qbuf, &wrs, &wcs);
      ep.bias = c->bias ? c->bias + oc0 : NULL;
      /* fp32: the calls on a panel prefetch the next one (deep layers stream their weights) */
      size_t nrs, ncs, calls = nwide + lc_div_up(npix - lc_min_sz(npix, nwide * ww), pp), call = 0;
      const void *next =
          !c->qw && q + 1 < v.tp.q1 ? lc_conv_wpanel(c, (int64_t)v.tp.g, q + 1, k0, kn, NULL, &nrs, &ncs) : NULL;
      size_t j = 0;
      for (size_t a = 0; a < nwide; a++, j += ww) {
        lc_pf_spread(&ep, next, kn * pw * sizeof(float), calls, kn, call++);
        ep.residual = res ? res + oc0 * p->ohw + j : NULL;
        kt->f32_gemm_wide(noc, lc_min_sz(ww, npix - j), kn, w, wrs, wcs, b + j, ps, out + oc0 * p->ohw + j, p->ohw, &ep);
      }
      for (; j < npix; j += pp) {
        lc_pf_spread(&ep, next, kn * pw * sizeof(float), calls, kn, call++);
        ep.residual = res ? res + oc0 * p->ohw + j : NULL;
        gemm(noc, lc_min_sz(pp, npix - j), kn, w, wrs, wcs, b + j, ps, out + oc0 * p->ohw + j, p->ohw, &ep);
      }
      ep.pf = NULL;
    }
  }
}

static void taprows_task(void *arg, size_t task, int thread) { tile_task(arg, task, thread, 0); }
static void shared_gemm_task(void *arg, size_t task, int thread) { tile_task(arg, task, thread, 1); }

lc_status lc_taprows_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit, sb;
  /* the tuner may cut the threads (and the workspace with them) or the split after the plan */
  if (p->variant == TR_SHARED && p->ocsplit > 1 && shared_bytes(c, p, &sb) && sb <= p->ws_total) {
    lc_route_launch(c, in, out, ws, tasks, shared_gather_task);
    lc_route_launch(c, in, out, ws, tasks, shared_gemm_task);
  } else {
    lc_route_launch(c, in, out, ws, tasks, taprows_task);
  }
  return LC_OK;
}
