/* The three GEMM routes: gemm1x1 (input used in place), im2col (tiles of KC x tile pixels),
 * igemm (pointer table + packed patches per chunk of pixels, chunk sized from the budget).
 * Orientation: NCHW computes out[oc][pix] = W[oc][k] * P[k][pix] (weights are A, patches B);
 * NHWC computes out[pix][oc] = P[pix][k] * W[k][oc] (patches are A, weights B). Either way the
 * packed patch panel is [k][pp] with the pixel index fastest. */
#include <string.h>

#include "conv/pack.h"
#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"

/* Default bytes per thread for an igemm chunk when the budget is unlimited: a common L2 size. */
#define LC_IGEMM_CHUNK_BYTES ((size_t)2 << 20)

/* fp32 NCHW im2col with K >= 2048: each pixel panel is packed and used by every weight panel while
 * it is in L1 (the tile's panels went through L2 before); the same kernel calls in the same K
 * order, so the same bits. Zen 5, 1 thread, CPU time of 60 runs tile / panel order: 3x3 s2 256@28
 * 109 / 96 ms, 9x9 256@20 1850 / 1600; with 64-128 input channels (K 576-1152) even or up to 5 %
 * slower. Q8/Q4 keep the tile order: they dequantize a weight panel per compute_block. */
static int panel_first(const lc_conv *c) { return !c->qw && c->d.layout == LC_NCHW && c->K >= 2048; }

static size_t patch_pw(const lc_conv *c) { return c->d.layout == LC_NCHW ? c->ctx->k->nr : c->ctx->k->mr; }
static size_t kc_of(const lc_conv *c) { return lc_min_sz(c->K, LC_KC); }

/* Tiles of equal size (a multiple of pp, at most max_tile) covering the image's pixels, and a split of
 * the weight panels when there are too few tiles to keep every thread busy (small late layers). */
static void set_tiles(const lc_conv *c, lc_conv_plan *p, size_t pp, size_t max_tile) {
  max_tile = lc_max_sz(pp, max_tile / pp * pp); /* panels never straddle tiles */
  size_t n = lc_div_up(p->ohw, max_tile);
  p->tile = lc_min_sz(max_tile, lc_round_up(lc_div_up(p->ohw, n), pp));
  p->ntiles = lc_div_up(p->ohw, p->tile);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, c->ctx->threads, c->npanels);
}

static size_t tasks_of(const lc_conv *c, const lc_conv_plan *p) {
  return (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit;
}

lc_status lc_gemm1x1_plan(const lc_conv *c, lc_conv_plan *p) {
  const lc_conv_desc *d = &c->d;
  if (d->kernel_h != 1 || d->kernel_w != 1 || d->stride_h != 1 || d->stride_w != 1 || p->pt || p->pl || p->pb ||
      p->pr)
    return lc_error(LC_ERR_UNSUPPORTED, "gemm1x1: needs a 1x1 kernel, stride 1 and no padding");
  size_t pp = patch_pw(c);
  /* Q8/Q4 dequantize every weight panel once per tile: 1024-pixel tiles took q8 from 1.07-1.14x to
   * 1.01-1.07x of fp32 on 16..192-channel 1x1 layers at 40-320 px (1 thread), 0.88-0.92x of the
   * 256-pixel tiles at 2 threads (the Xeon model 167). */
  set_tiles(c, p, pp, p->hint_tile ? p->hint_tile : c->qw ? 4 * LC_TILE_PIX_MAX : LC_TILE_PIX_MAX);
  /* The GEMV path is chosen from the shape alone (so the output doesn't depend on the budget);
   * it allocates its activation buffer in run, which must fit the budget. */
  if (lc_conv_use_qgemv(c, p) && c->ctx->budget && lc_qgemv_bytes_bound(c, p) > c->ctx->budget)
    return lc_error(LC_ERR_BUDGET, "gemm1x1: the GEMV path needs up to %zu bytes, budget is %zu",
                    lc_qgemv_bytes_bound(c, p), c->ctx->budget);
  size_t ws = lc_conv_use_qgemv(c, p) ? 0 : lc_qpanel_bytes(c);
  int threads = lc_threads_for_budget(c, ws);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "gemm1x1: a dequantized weight panel needs %zu bytes, budget is %zu", ws,
                    c->ctx->budget);
  return lc_route_planned(p, LC_ROUTE_GEMM1X1, ws, threads);
}

lc_status lc_im2col_plan(const lc_conv *c, lc_conv_plan *p) {
  size_t pp = patch_pw(c), kc = kc_of(c), qb = lc_qpanel_bytes(c);
  size_t row_bytes = kc * sizeof(float); /* one pixel of a tile */
  /* Quantized weights are dequantized once per tile: larger tiles amortize that (measured on
   * 3x3 64..256-channel layers: 512 pixels brings q4 within noise of fp32). */
  size_t maxt = p->hint_tile ? p->hint_tile : c->qw ? 2 * LC_TILE_PIX_MAX : LC_TILE_PIX_MAX;
  size_t want = lc_min_sz(lc_round_up(p->ohw, pp), maxt / pp * pp);
  int threads = lc_threads_for_budget(c, lc_round_up(row_bytes * pp, 64) + qb);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "im2col: one tile of %zu x %zu floats needs %zu bytes, budget is %zu", kc, pp,
                    row_bytes * pp + qb, c->ctx->budget);
  size_t tile = want;
  if (c->ctx->budget) {
    size_t fit = (c->ctx->budget / (size_t)threads - qb) / row_bytes / pp * pp;
    while (fit > pp && (lc_round_up(fit * row_bytes, 64) + qb) * (size_t)threads > c->ctx->budget) fit -= pp;
    tile = lc_min_sz(tile, fit);
  }
  set_tiles(c, p, pp, tile);
  return lc_route_planned(p, LC_ROUTE_IM2COL, lc_round_up(p->tile * row_bytes, 64) + qb, threads);
}

/* igemm slot: [table: tile*taps pointers][zero vector: cin_g floats][packed: tile*K floats]. */
static int igemm_bytes(const lc_conv *c, size_t tile, size_t *bytes) {
  size_t tab, pk, z;
  if (!lc_mul_sz(tile, (size_t)c->taps, &tab) || !lc_mul_sz(tab, sizeof(float *), &tab)) return 0;
  if (!lc_mul_sz(tile, c->K, &pk) || !lc_mul_sz(pk, sizeof(float), &pk)) return 0;
  z = (size_t)c->cin_g * sizeof(float);
  return lc_add_sz(lc_round_up(tab, 64), lc_round_up(z, 64), bytes) && lc_add_sz(*bytes, lc_round_up(pk, 64), bytes) &&
         lc_add_sz(*bytes, lc_qpanel_bytes(c), bytes);
}

lc_status lc_igemm_plan(const lc_conv *c, lc_conv_plan *p) {
  size_t pp = patch_pw(c), one;
  if (!igemm_bytes(c, pp, &one)) return lc_error(LC_ERR_OVERFLOW, "igemm: chunk size overflows");
  /* One block of pp pixels with the whole K is the least igemm can work on: if even that is over the
   * budget the route can't run (AUTO then takes im2col, which also splits K). */
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET,
                    "igemm: one block of %zu pixels x K=%zu needs %zu bytes, over the budget of %zu (use im2col, "
                    "which also splits K)",
                    pp, c->K, one, c->ctx->budget);
  size_t target = c->ctx->budget ? c->ctx->budget / (size_t)threads : LC_IGEMM_CHUNK_BYTES;
  size_t tile = pp, cap = lc_round_up(p->ohw, pp), b = one;
  while (tile + pp <= cap && igemm_bytes(c, tile + pp, &b) && b <= target) tile += pp;
  igemm_bytes(c, tile, &b);
  set_tiles(c, p, pp, tile);
  igemm_bytes(c, p->tile, &b);
  return lc_route_planned(p, LC_ROUTE_IGEMM, b, threads);
}

/* out tile (all weight panels x the pixel panels of [pix0, pix0+np)) for k in [k0, k0+kn).
 * Patch panels: packed (pan != NULL, panel i at pan + i*pstride + off) or the input in place. */
static void compute_block(const lc_conv *c, int64_t g, size_t q0, size_t q1, const float *img_in, float *img_out,
                          size_t pix0, size_t np, size_t k0, size_t kn, const float *pan, size_t pstride,
                          float *qbuf) {
  const lc_kernels *kt = c->ctx->k;
  const lc_conv_plan *p = &c->plan;
  size_t pp = patch_pw(c), pw = c->pw, K = c->K;
  size_t cout = (size_t)c->d.out_channels, cin = (size_t)c->d.in_channels, coutg = (size_t)c->cout_g;
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.accumulate = k0 > 0;
  ep.final = k0 + kn == K;
  int nchw = c->d.layout == LC_NCHW;
  ep.bias_per_row = nchw;
  /* One K block (1x1, K <= LC_KC): the compile-time epilogue, 0.89-0.97x on 1x1 layers (Xeon);
   * convs of several blocks keep one GEMM for all of them (mixed, 3x3 s2 moved 1.00-1.05x). */
  lc_f32_gemm_fn gemm = ep.final && !ep.accumulate && kt->f32_gemm_final ? kt->f32_gemm_final : kt->f32_gemm;
  for (size_t q = q0; q < q1; q++) {
    size_t oc0 = (size_t)g * coutg + q * pw, noc = lc_min_sz(pw, coutg - q * pw);
    size_t wrs, wcs;
    const float *w = lc_conv_wpanel(c, g, q, k0, kn, qbuf, &wrs, &wcs);
    ep.bias = c->bias ? c->bias + oc0 : NULL;
    for (size_t j = 0; j < np; j += pp) {
      size_t nj = lc_min_sz(pp, np - j), pix = pix0 + j;
      const float *pt;
      size_t prs;
      if (pan) {
        pt = pan + (j / pp) * pstride;
        prs = pp;
      } else if (nchw) {
        pt = img_in + ((size_t)g * (size_t)c->cin_g + k0) * p->ihw + pix;
        prs = p->ihw;
      } else {
        pt = img_in + pix * cin + (size_t)g * (size_t)c->cin_g + k0;
        prs = cin;
      }
      if (nchw)
        gemm(noc, nj, kn, w, wrs, wcs, pt, prs, img_out + oc0 * p->ohw + pix, p->ohw, &ep);
      else if (pan)
        gemm(nj, noc, kn, pt, 1, pp, w, pw, img_out + pix * cout + oc0, cout, &ep);
      else
        gemm(nj, noc, kn, pt, prs, 1, w, pw, img_out + pix * cout + oc0, cout, &ep);
    }
  }
}

static void gemm_task(void *arg, size_t task, int thread) {
  const lc_conv *c = ((const lc_route_job *)arg)->c;
  const lc_conv_plan *p = &c->plan;
  lc_task_view v = lc_task_view_of(arg, task, thread);
  size_t q0 = v.tp.q0, q1 = v.tp.q1;
  int64_t g = (int64_t)v.tp.g;
  size_t pp = patch_pw(c), K = c->K, kc = kc_of(c);
  size_t pix0 = v.tp.tile * p->tile, np = lc_min_sz(p->tile, p->ohw - pix0);
  const float *img = v.img, *img_g = v.img_g;
  float *img_out = v.img_out;
  unsigned char *slot = v.slot;
  /* Dequantized weight panel (Q8/Q4) at the end of the slot. */
  float *qbuf = c->qw ? (float *)(slot + p->ws_thread - lc_qpanel_bytes(c)) : NULL;

  if (p->route == LC_ROUTE_GEMM1X1) {
    for (size_t k0 = 0; k0 < K; k0 += kc)
      compute_block(c, g, q0, q1, img, img_out, pix0, np, k0, lc_min_sz(kc, K - k0), NULL, 0, qbuf);
  } else if (p->route == LC_ROUTE_IM2COL) {
    float *tilebuf = (float *)slot;
    for (size_t k0 = 0; k0 < K; k0 += kc) {
      size_t kn = lc_min_sz(kc, K - k0);
      if (panel_first(c)) {
        for (size_t j = 0; j < np; j += pp) {
          size_t nj = lc_min_sz(pp, np - j);
          lc_pack_panel(c, img_g, pix0 + j, nj, k0, kn, pp, NULL, NULL, tilebuf);
          compute_block(c, g, q0, q1, img, img_out, pix0 + j, nj, k0, kn, tilebuf, kn * pp, qbuf);
        }
        continue;
      }
      for (size_t j = 0; j < np; j += pp)
        lc_pack_panel(c, img_g, pix0 + j, lc_min_sz(pp, np - j), k0, kn, pp, NULL, NULL, tilebuf + (j / pp) * kn * pp);
      compute_block(c, g, q0, q1, img, img_out, pix0, np, k0, kn, tilebuf, kn * pp, qbuf);
    }
  } else { /* igemm */
    size_t taps = (size_t)c->taps;
    const float **table = (const float **)slot;
    float *zero = (float *)(slot + lc_round_up(p->tile * taps * sizeof(float *), 64));
    float *packed = zero + lc_round_up((size_t)c->cin_g * sizeof(float), 64) / sizeof(float);
    memset(zero, 0, (size_t)c->cin_g * sizeof(float));
    /* The table: a pointer per (pixel, tap) into the input, padding taps at the zero vector. */
    lc_tap_src s;
    for (size_t j = 0; j < np; j += pp) {
      size_t nj = lc_min_sz(pp, np - j);
      for (size_t t = 0; t < taps; t++) {
        lc_tap_sources(c, img_g, pix0 + j, nj, (int64_t)t, zero, &s);
        for (size_t i = 0; i < nj; i++) table[(j + i) * taps + t] = s.src[i];
      }
    }
    for (size_t j = 0; j < np; j += pp)
      lc_pack_panel(c, img_g, pix0 + j, lc_min_sz(pp, np - j), 0, K, pp, table + j * taps, zero,
                    packed + (j / pp) * K * pp);
    for (size_t k0 = 0; k0 < K; k0 += kc)
      compute_block(c, g, q0, q1, img, img_out, pix0, np, k0, lc_min_sz(kc, K - k0), packed + k0 * pp, K * pp, qbuf);
  }
}

lc_status lc_gemm_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  lc_route_launch(c, in, out, ws, tasks_of(c, &c->plan), gemm_task);
  return LC_OK;
}

lc_status lc_gemm1x1_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  if (lc_conv_use_qgemv(c, &c->plan)) return lc_run_qgemv(c, in, out);
  return lc_gemm_run(c, in, out, ws);
}
