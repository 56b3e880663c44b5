/* i8gemm: Q8/Q4 convs (NCHW, not depthwise) through integer dot products (quant/i8gemm.h). Per tile of
 * pixels and run of weight blocks (K split at block boundaries), the patches are packed in fp32
 * panels of 16 pixels and quantized to int8 per pixel and block; each 4-row weight panel is decoded
 * to a byte per code once per tile and run; the kernel adds the run into the output, the epilogue
 * (bias, activation) follows the last run. Taken only with int8 activations asked for (the
 * descriptor's int8_activations or LOWCONV_INT8_ACT=1; LOWCONV_INT8_ACT=0 turns it off). */
#include <stdlib.h>
#include <string.h>

#include "conv/i8planes.h"
#include "conv/pack.h"
#include "conv/route.h"
#include "kernels/registry.h"
#include "quant/i8gemm.h"
#include "util/checked.h"
#include "util/error.h"

/* Elements of K a run covers (more when one block is longer), and its most blocks. */
#define RUN_K 512
#define RUN_BLOCKS 64
/* Longest block: the int32 sum of a block must not overflow (Q8: 128 * 127 * len). */
#define MAX_BLOCK 65536
/* plan.variant: the input quantized once into planes (conv/i8planes.h), then the GEMM tasks. */
#define I8_PLANES 1

typedef struct run {
  size_t b0, nb, k0, kn, nq; /* blocks [b0, b0 + nb), k in [k0, k0 + kn), quads */
  uint32_t bq[RUN_BLOCKS], bl[RUN_BLOCKS];
} run;

/* The run starting at block b0 (the row's blocks are contiguous in k). */
static void run_at(const lc_qmatrix *w, size_t b0, run *r) {
  r->b0 = b0, r->nb = 0, r->kn = 0, r->nq = 0;
  r->k0 = b0 / w->bpt * w->kc + b0 % w->bpt * w->block;
  for (size_t b = b0; b < w->nb && r->nb < RUN_BLOCKS; b++) {
    size_t len = lc_qblock_len(w, b % w->bpt), q = lc_div_up(len, 4);
    if (r->nb && r->kn + len > RUN_K) break;
    r->bq[r->nb] = (uint32_t)q, r->bl[r->nb] = (uint32_t)len;
    r->nb++, r->kn += len, r->nq += q;
  }
}

int lc_i8gemm_wanted(const lc_conv *c) {
  const char *e = getenv("LOWCONV_INT8_ACT");
  if (e && *e) return e[0] != '0';
  return c->d.int8_activations != 0;
}

/* Largest run's k, quads and blocks. */
static void run_max(const lc_qmatrix *w, size_t *kn, size_t *nq, size_t *nb) {
  *kn = *nq = *nb = 0;
  run r;
  for (size_t b = 0; b < w->nb; b += r.nb) {
    run_at(w, b, &r);
    *kn = lc_max_sz(*kn, r.kn), *nq = lc_max_sz(*nq, r.nq), *nb = lc_max_sz(*nb, r.nb);
  }
}

/* The kernel table's tile for c's format: rows and pixels. */
static size_t tile_mr(const lc_conv *c) {
  unsigned char m = c->qw ? c->ctx->k->i8mr[c->qw->format] : 0;
  return m ? m : LC_I8_MR;
}
static size_t tile_np(const lc_conv *c) {
  unsigned char n = c->qw ? c->ctx->k->i8np[c->qw->format] : 0;
  return n ? n : LC_I8_NR;
}

size_t lc_i8gemm_panels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, tile_mr(c)); }

/* Slot: [fp32 panel 16 x kn][int8 panels of the tile][decoded rows mr x quads]. */
static int slot_bytes(const lc_conv *c, size_t tile, size_t *xf, size_t *xpan, size_t *bytes) {
  size_t kn, nq, nb, wd;
  run_max(c->qw, &kn, &nq, &nb);
  *xf = lc_round_up(LC_I8_NR * kn * sizeof(float), 64);
  *xpan = lc_round_up(nq * 4 * LC_I8_NR + nb * LC_I8_NR * 12, 64);
  wd = lc_round_up(tile_mr(c) * 4 * nq, 64);
  size_t n;
  return lc_mul_sz(tile / LC_I8_NR, *xpan, &n) && lc_add_sz(n, *xf + wd, bytes);
}

lc_status lc_i8gemm_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!c->qw || c->qw->format == LC_WEIGHTS_F32 || c->d.layout != LC_NCHW || c->depthwise || !lc_i8gemm_wanted(c))
    return lc_error(LC_ERR_UNSUPPORTED, "i8gemm: needs Q8/Q4 weights, NCHW, not depthwise, int8 activations");
  if (c->qw->block > MAX_BLOCK)
    return lc_error(LC_ERR_UNSUPPORTED, "i8gemm: blocks of at most %d (block is %zu)", MAX_BLOCK, c->qw->block);
  size_t one;
  if (!slot_bytes(c, LC_I8_NR, &(size_t){0}, &(size_t){0}, &one))
    return lc_error(LC_ERR_OVERFLOW, "i8gemm: workspace size overflows");
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "i8gemm: one panel of 16 pixels needs %zu bytes, budget is %zu", one,
                    c->ctx->budget);
  size_t want = p->hint_tile ? p->hint_tile : 2 * LC_TILE_PIX_MAX;
  size_t tile = lc_min_sz(lc_round_up(p->ohw, LC_I8_NR), lc_max_sz(LC_I8_NR, want / LC_I8_NR * LC_I8_NR)), b = 0;
  while (tile > LC_I8_NR && (!slot_bytes(c, tile, &(size_t){0}, &(size_t){0}, &b) ||
                             (c->ctx->budget && b * (size_t)threads > c->ctx->budget)))
    tile -= LC_I8_NR;
  /* Equal tiles covering the image; weight panels split when tiles are fewer than threads. */
  size_t n = lc_div_up(p->ohw, tile);
  p->tile = lc_min_sz(tile, lc_round_up(lc_div_up(p->ohw, n), LC_I8_NR));
  p->ntiles = lc_div_up(p->ohw, p->tile);
  size_t panels = lc_i8gemm_panels(c);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, c->ctx->threads, panels);
  slot_bytes(c, p->tile, &(size_t){0}, &(size_t){0}, &b);
  /* Planes where they fit beside every thread's slot (their share of each thread's bytes). */
  lc_i8planes g;
  size_t all, wt;
  p->variant = 0;
  if (lc_i8planes_geo(c, p, &g, &all) && lc_add_sz(b, lc_round_up(lc_div_up(all, (size_t)threads), 64), &wt) &&
      (!c->ctx->budget || wt <= c->ctx->budget / (size_t)threads))
    p->variant = I8_PLANES, b = wt;
  return lc_route_planned(p, LC_ROUTE_I8GEMM, b, threads);
}

/* The planes' bytes when this run uses them (the plan's variant, and the workspace still holds them
 * beside every thread's slot of `slot` bytes: the tuner may have cut the threads), else 0. */
static size_t planes_in_use(const lc_conv *c, size_t slot, lc_i8planes *g) {
  const lc_conv_plan *p = &c->plan;
  size_t all, need;
  if (p->variant != I8_PLANES || !lc_i8planes_geo(c, p, g, &all) || !lc_mul_sz(slot, (size_t)p->threads, &need) ||
      !lc_add_sz(need, lc_round_up(all, 64), &need) || need > p->ws_total)
    return 0;
  return lc_round_up(all, 64);
}

/* Rows [row0, row0 + nr) of the run decoded to a byte per code, each block padded to its quads
 * (Q8 biased to q + 128 for the kernels that take it unsigned). */
static void decode_rows(const lc_qmatrix *w, const run *r, size_t row0, size_t nr, int biased, uint8_t *dst) {
  size_t ld = 4 * r->nq, blk, at = lc_qcode_byte(w, r->k0, &blk), nbytes[RUN_BLOCKS], whole = 1;
  int q4 = w->format == LC_WEIGHTS_Q4;
  for (size_t b = 0, j = r->b0 % w->bpt; b < r->nb; b++, j = j + 1 == w->bpt ? 0 : j + 1) {
    nbytes[b] = lc_qblock_nbytes(w, j);
    whole &= r->bl[b] == 4 * r->bq[b] && nbytes[b] == (q4 ? r->bl[b] / 2 : r->bl[b]);
  }
  for (size_t i = 0; i < nr; i++) {
    const uint8_t *src = w->codes + (row0 + i) * w->row_bytes + at;
    uint8_t *d = dst + i * ld;
    if (whole) { /* blocks of whole quads back to back: one loop over the run (the common case) */
      if (q4)
        for (size_t j = 0; j < ld / 2; j++) d[2 * j] = src[j] & 15, d[2 * j + 1] = src[j] >> 4;
      else if (biased)
        for (size_t j = 0; j < ld; j++) d[j] = (uint8_t)(src[j] ^ 0x80u);
      else
        memcpy(d, src, ld);
      continue;
    }
    for (size_t b = 0; b < r->nb; b++) {
      size_t len = r->bl[b], pad = 4 * r->bq[b];
      if (q4) {
        for (size_t j = 0; j < len / 2; j++) d[2 * j] = src[j] & 15, d[2 * j + 1] = src[j] >> 4;
        if (len & 1) d[len - 1] = src[len / 2] & 15;
      } else if (biased) {
        for (size_t j = 0; j < len; j++) d[j] = (uint8_t)(src[j] ^ 0x80u); /* two's complement q + 128 */
      } else {
        memcpy(d, src, len);
      }
      memset(d + len, 0, pad - len);
      src += nbytes[b];
      d += pad;
    }
  }
}

/* Bias, activation and post of one output row: one loop per activation, so that each runs as
 * vectors (this file is built without trapping math); the values are lc_apply_act's. */
static void epilogue_row(float *o, size_t n, float bias, const lc_gemm_params *ep) {
  float lo = ep->act_min, hi = ep->act_max, al = ep->act_alpha;
  switch (ep->act) {
    case LC_ACT_NONE:
      for (size_t i = 0; i < n; i++) o[i] += bias;
      break;
    case LC_ACT_RELU:
      for (size_t i = 0; i < n; i++) { float v = o[i] + bias; o[i] = v > 0.0f ? v : 0.0f; }
      break;
    case LC_ACT_CLIP:
      for (size_t i = 0; i < n; i++) { float v = o[i] + bias; o[i] = v < lo ? lo : (v > hi ? hi : v); }
      break;
    case LC_ACT_LEAKY_RELU:
      for (size_t i = 0; i < n; i++) { float v = o[i] + bias; o[i] = v < 0.0f ? al * v : v; }
      break;
    case LC_ACT_HARD_SWISH:
      for (size_t i = 0; i < n; i++) {
        float v = o[i] + bias, t = v / 6.0f + 0.5f;
        t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        o[i] = v * t;
      }
      break;
    default:
      for (size_t i = 0; i < n; i++) o[i] = lc_act_only(o[i] + bias, ep);
  }
  if (ep->post) {
    float mu = ep->post_mul, ad = ep->post_add;
    for (size_t i = 0; i < n; i++) o[i] = o[i] * mu + ad;
  }
}

static void i8_task(void *arg, size_t task, int thread) {
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_qmatrix *w = c->qw;
  const lc_kernels *kt = c->ctx->k;
  size_t coutg = (size_t)c->cout_g, mr_t = tile_mr(c), np_t = tile_np(c), panels = lc_div_up(coutg, mr_t);
  lc_task_pos tp = lc_task_decode(p, (size_t)c->d.groups, panels, task);
  const float *img_g = jb->in + (tp.n * (size_t)c->d.in_channels + tp.g * (size_t)c->cin_g) * p->ihw;
  float *out = jb->out + (tp.n * (size_t)c->d.out_channels + tp.g * coutg) * p->ohw;
  size_t pix0 = tp.tile * p->tile, np = lc_min_sz(p->tile, p->ohw - pix0);
  size_t r0 = tp.q0 * mr_t, r1 = lc_min_sz(coutg, tp.q1 * mr_t);
  size_t xfb, xpan, total;
  slot_bytes(c, p->tile, &xfb, &xpan, &total);
  lc_i8planes g;
  size_t pl_all = planes_in_use(c, total, &g);
  const unsigned char *planes = pl_all ? jb->ws + (tp.n * (size_t)c->d.groups + tp.g) * g.bytes : NULL;
  unsigned char *slot = pl_all ? jb->ws + pl_all + (size_t)thread * total : jb->ws + (size_t)thread * p->ws_thread;
  float *xf = (float *)slot;
  unsigned char *xp = slot + xfb;
  uint8_t *wd = xp + p->tile / LC_I8_NR * xpan;
  lc_i8gemm_fn kern = kt->i8gemm[w->format];
  /* 1x1, stride 1, unpadded: full panels are quantized from the input planes in place. */
  const lc_conv_desc *d = &c->d;
  int in_place = d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1 && !p->pt && !p->pl &&
                 !p->pb && !p->pr;
  run r;
  for (size_t b0 = 0; b0 < w->nb; b0 += r.nb) {
    run_at(w, b0, &r);
    lc_i8blocks bl = {r.nb, r.bq, r.bl};
    size_t q = r.nq * 4 * LC_I8_NR, m = r.nb * LC_I8_NR;
    if (pl_all)
      lc_i8planes_panels(c, &g, planes, pix0, np, b0, r.nb, r.bq, xp, xpan);
    else
      for (size_t j = 0; j < np; j += LC_I8_NR) {
        size_t nj = lc_min_sz(LC_I8_NR, np - j);
        unsigned char *a = xp + j / LC_I8_NR * xpan;
        const float *x = xf;
        size_t ldx = LC_I8_NR;
        if (in_place && nj == LC_I8_NR) {
          x = img_g + r.k0 * p->ihw + pix0 + j, ldx = p->ihw;
        } else {
          if (nj < LC_I8_NR) memset(xf, 0, r.kn * LC_I8_NR * sizeof(float));
          lc_pack_panel(c, img_g, pix0 + j, nj, r.k0, r.kn, LC_I8_NR, NULL, NULL, xf);
        }
        kt->i8prep(&bl, x, ldx, (int8_t *)a, (float *)(a + q), (int32_t *)(a + q) + m, (float *)(a + q) + 2 * m);
      }
    for (size_t row = r0; row < r1; row += mr_t) {
      size_t mr = lc_min_sz(mr_t, r1 - row), oc = tp.g * coutg + row;
      decode_rows(w, &r, oc, mr, lc_i8gemm_q8_biased(kern), wd);
      const float *ws = w->scales + oc * w->nb + b0, *wo = w->offsets ? w->offsets + oc * w->nb + b0 : NULL;
      for (size_t j = 0; j < np; j += np_t) { /* np_t pixels a call: np_t / 16 panels, xpan apart */
        unsigned char *a = xp + j / LC_I8_NR * xpan;
        lc_i8act act = {(const int8_t *)a, (const float *)(a + q), (const int32_t *)(a + q) + m,
                        (const float *)(a + q) + 2 * m};
        kern(&bl, mr, lc_min_sz(np_t, np - j), wd, 4 * r.nq, ws, wo, w->nb, &act, xpan,
             out + row * p->ohw + pix0 + j, p->ohw, b0 > 0);
      }
    }
  }
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  for (size_t row = r0; row < r1; row++)
    epilogue_row(out + row * p->ohw + pix0, np, c->bias ? c->bias[tp.g * coutg + row] : 0.0f, &ep);
}

/* Fill task: image and group, channel block, band of padded rows (bands fastest). */
#define FILL_BANDS 4
static void fill_task(void *arg, size_t task, int thread) {
  (void)thread;
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  lc_i8planes g;
  size_t all;
  lc_i8planes_geo(c, p, &g, &all); /* launched only where planes_in_use */
  size_t hp = g.pix / g.wp, band = task % FILL_BANDS, j = task / FILL_BANDS % g.bpt, ig = task / FILL_BANDS / g.bpt;
  size_t n = ig / (size_t)c->d.groups, gr = ig % (size_t)c->d.groups;
  const float *img_g = jb->in + (n * (size_t)c->d.in_channels + gr * (size_t)c->cin_g) * p->ihw;
  lc_i8planes_fill(c, &g, img_g, j, hp * band / FILL_BANDS, hp * (band + 1) / FILL_BANDS, jb->ws + ig * g.bytes);
}

lc_status lc_i8gemm_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  lc_i8planes g;
  size_t slot;
  if (slot_bytes(c, p->tile, &(size_t){0}, &(size_t){0}, &slot) && planes_in_use(c, slot, &g))
    lc_route_launch(c, in, out, ws, (size_t)p->n * (size_t)c->d.groups * g.bpt * FILL_BANDS, fill_task);
  lc_route_launch(c, in, out, ws, (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit, i8_task);
  return LC_OK;
}
