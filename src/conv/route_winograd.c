/* Winograd F(2x2, 3x3) route for 3x3, stride 1, dilation 1 convs (any pads, any groups, NCHW and
 * NHWC). Each 2x2 output tile comes from a 4x4 input tile d:  Y = A^T [ (G g G^T) .* (B^T d B) ] A,
 * so the conv becomes 16 GEMMs with K = cin/groups (2.25x fewer multiplies than im2col), framed by
 * an input transform (adds only) and an output transform (adds, then bias and activation).
 * Both layouts use one orientation: M[xi] (tiles x oc) = V[xi] (tiles x ic) * U[xi] (ic x oc), tiles
 * on the microkernel's mr side, output channels on its nr side. Small images have few tiles (49 at
 * 14x14) and panels of mr = 6..8 tiles waste less than panels of nr = 16..32 would.
 *   U: [group][xi][panel][ic][nr], packed B panels of nr output channels (transformed at create).
 *      Q8/Q4 weights keep no U: a thread dequantizes one panel x K block at a time, transforms it
 *      into its slot ([xi][kc][nr]) and runs it over all tiles of its chunk before the next one.
 *   V: NCHW [xi][ic][T] (the transform runs along tiles; A read with rs_a = 1, cs_a = T),
 *      NHWC [xi][T][ic] (the transform runs along channels; rs_a = ic, cs_a = 1).
 *   M: [xi][T][nr] for one weight panel; the output transform runs along channels.
 * Work is split in chunks of T tiles per (image, group); a thread slot holds V, M and a zero row.
 * K is summed in LC_KC blocks (Q8/Q4: QKC) in a fixed order, so the output doesn't depend on T or
 * the threads.
 * Transform index xi = 4 * row + column of the 4x4 transformed tile. */
#include <stdint.h>
#include <string.h>

#include "conv/route.h"
#include "kernels/wino.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

/* Slot size when the budget is unlimited. Of 256, 512, 768 and 1024 KiB, 768 was best or close on
 * the ResNet-34 layers (bench_winograd, Zen4, 1 MiB L2): larger chunks stream the weights fewer
 * times, smaller ones keep V in L2. */
#define LC_WINO_CHUNK_BYTES ((size_t)768 << 10)
/* Q8/Q4 transform their weights once per chunk: fewer, larger chunks pay that less often than V
 * leaving L2 costs. bench_winograd Q4 ms at 1 / 2 MiB: 128@28 1.30 / 1.20 (fp32 1.20), 128->256@28
 * 2.40 / 2.27 (2.23), 64@56 1.39 / 1.34 (1.33); 14x14 and 7x7 fit one chunk either way. */
#define LC_WINO_QCHUNK_BYTES ((size_t)2 << 20)
/* Tiles per transform segment (bounds the local buffers); >= any panel width. */
#define SEG LC_WINO_SEG
/* Q8/Q4: input channels per transformed weight block (U of one panel: 16 x 128 x 32 floats =
 * 256 KiB with AVX-512, next to V in L2). The K sums then differ in order from fp32's LC_KC
 * blocks. 512@7 Q4 (bench_winograd, Zen 4): 2.43 ms at 256, 1.81 at 128, 1.84 at 64. */
#define QKC 128

static int wino_shape_ok(const lc_conv_desc *d) {
  return d->kernel_h == 3 && d->kernel_w == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 &&
         d->dilation_w == 1;
}

/* Tiles per GEMM row panel, output channels per weight panel, and weight panels per group. */
static size_t tile_pp(const lc_conv *c) { return c->ctx->k->mr; }
static size_t wpw(const lc_conv *c) { return c->ctx->k->nr; }
static size_t wpanels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, wpw(c)); }

/* Transforms of the context's kernel table (every version gives the same bits). */
static const lc_wino_kernels *wino_kernels(const lc_conv *c) { return c->ctx->k->wino; }

/* Where AUTO takes winograd (bench_winograd, 1 thread, Zen 4): NCHW wins from 16 input channels
 * per group (1.2x at 16, 1.4-2.0x from 32), NHWC from 8 (im2col is weaker there); stems of 3
 * channels run 1.5-2.5x slower than im2col. */
int lc_winograd_auto(const lc_conv *c) {
  int64_t min_cin = c->d.layout == LC_NCHW ? 16 : 8;
  return wino_shape_ok(&c->d) && !c->depthwise && c->cin_g >= min_cin;
}

lc_status lc_winograd_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!wino_shape_ok(d)) return LC_OK;
  /* Transformed weights cost 16/9 of the packed ones: only keep them where the route may run and,
   * under AUTO, may win (depthwise has its own route; stems of < 4 input channels run 1.5-2.5x slower
   * than im2col, bench_winograd --shape 3,64,112). */
  if (d->route != LC_ROUTE_AUTO && d->route != LC_ROUTE_WINOGRAD) return LC_OK;
  if (d->route == LC_ROUTE_AUTO && !lc_winograd_auto(c) && !(c->ctx->tuner && !c->depthwise)) return LC_OK; /* the tuner times it */
  size_t pw = wpw(c), np = wpanels(c), cig = (size_t)c->cin_g, n, bytes;
  if (!lc_mul_sz((size_t)d->groups * 16, np, &n) || !lc_mul_sz(n, cig, &n) || !lc_mul_sz(n, pw, &n) ||
      !lc_mul_sz(n, sizeof(float), &bytes))
    return lc_error(LC_ERR_OVERFLOW, "winograd: transformed weight size overflows");
  c->wwino = lc_calloc(n, sizeof(float)); /* zero padding of the last panel */
  if (!c->wwino) return lc_error(LC_ERR_NO_MEMORY, "winograd: cannot allocate %zu bytes of weights", bytes);
  c->wwino_bytes = bytes;
  c->weight_bytes += bytes;
  const lc_wino_kernels *wk = wino_kernels(c);
  size_t cog = (size_t)c->cout_g;
  for (size_t g = 0; g < (size_t)d->groups; g++)
    for (size_t q = 0; q < np; q++)
      for (size_t ic = 0; ic < cig; ic += SEG) /* OIHW: (oc, tap, ic) at oc * 9 cig + ic * 9 + tap */
        wk->weights(lc_min_sz(pw, cog - q * pw), pw, lc_min_sz(SEG, cig - ic), w + ((g * cog + q * pw) * cig + ic) * 9,
                    9 * cig, 1, 9, c->wwino + ((g * 16 * np + q) * cig + ic) * pw, np * cig * pw);
  return LC_OK;
}

/* Zero floats a slot holds for padding: a channel vector (NHWC) or an input row segment (NCHW). */
static size_t zero_len(const lc_conv *c) { return lc_max_sz((size_t)c->cin_g, 2 * SEG + 2); }

/* Q8/Q4: input channels per dequantization call (a multiple of every block length up to 64). */
#define QSEG LC_WINO_QSEG

/* Q8/Q4 part of a slot: U of one panel and K block [16][kc][nr], and that panel's dequantized
 * weights for QSEG channels [nr][9][QSEG]. Small: kc <= QKC. The xi planes of U lie kc * nr
 * floats plus one cache line apart, so the 16 stores per channel don't all map to one L1 set
 * (kc * nr * 4 bytes is a multiple of 4 KiB; 512@7 Q4 2.74 -> 2.52 ms). */
static size_t ubuf_xs(size_t kn, size_t pw) { return kn * pw + 16; }
static size_t ubuf_floats(const lc_conv *c) { return 16 * ubuf_xs(lc_min_sz((size_t)c->cin_g, QKC), wpw(c)); }
static size_t qbuf_bytes(const lc_conv *c) {
  if (!c->qw) return 0;
  return lc_round_up(ubuf_floats(c) * sizeof(float), 64) + lc_round_up(wpw(c) * 9 * QSEG * sizeof(float), 64);
}

/* Slot: [V: 16 x cig x T][M: 16 x T x nr][zeros: zero_len][Q8/Q4: qbuf], each 64-aligned. */
static int slot_bytes(const lc_conv *c, size_t T, size_t *bytes) {
  size_t v, m, z = lc_round_up(zero_len(c) * sizeof(float), 64) + qbuf_bytes(c);
  if (!lc_mul_sz(16 * sizeof(float), (size_t)c->cin_g, &v) || !lc_mul_sz(v, T, &v)) return 0;
  if (!lc_mul_sz(16 * sizeof(float) * wpw(c), T, &m)) return 0;
  /* + 64: run aligns the caller's workspace to a cache line (the Q8/Q4 U in a 16-byte aligned one
   * ran 512@7 Q4 in 2.4 ms instead of 1.8: every B row straddled two lines). */
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z + 64, bytes);
}

/* plan.variant: the weight panels of a chunk are split over tasks and its V is transformed once, by
 * channel ranges over the threads, into a region every task reads (at the workspace's start, the
 * slots after it). Before, each task transformed the whole V (~20 % of such a layer at 1 thread):
 * 512 ch at 7 px, 2 threads, 0.654 -> 0.622 ms (Xeon model 167). */
#define WINO_SHARED_V 1
/* From this many input channels per group: below, the second launch costs more than the transform
 * each task repeats (2 threads, ms shared / repeated V: 64 ch at 14 px 0.090 / 0.080, 64 -> 128 at
 * 20 px 0.201 / 0.171, 128 ch at 7 px 0.091 / 0.085, at 14 px 0.218 / 0.220; 256 at 14 px 0.59 /
 * 0.59, 512 at 7 px 0.605 / 0.655; Xeon model 167). */
#define WINO_SHARED_V_MIN_CIN 256

/* V of one chunk (16 x cig x T floats) and of every chunk of the plan. */
static size_t chunk_v_bytes(const lc_conv *c, size_t T) {
  return lc_round_up(16 * (size_t)c->cin_g * T * sizeof(float), 64);
}
static int shared_v_bytes(const lc_conv *c, const lc_conv_plan *p, size_t *bytes) {
  size_t n, one;
  return lc_mul_sz(16 * sizeof(float), (size_t)c->cin_g, &one) && lc_mul_sz(one, p->tile, &one) &&
         lc_mul_sz((size_t)p->n * (size_t)c->d.groups, p->ntiles, &n) && lc_mul_sz(n, lc_round_up(one, 64), bytes);
}

lc_status lc_winograd_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!wino_shape_ok(&c->d))
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: needs a 3x3 kernel, stride 1, dilation 1");
  if (!c->wwino && !c->qw)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: weights not transformed at create (%s)",
                    c->depthwise ? "depthwise convs take the depthwise route" : "created for another route");
  size_t pp = tile_pp(c), one, nt;
  if (pp > SEG || wpw(c) > SEG)
    return lc_error(LC_ERR_UNSUPPORTED, "winograd: GEMM tile %zux%zu wider than %d", c->ctx->k->mr, c->ctx->k->nr, SEG);
  if (!lc_mul_sz(lc_div_up((size_t)p->oh, 2), lc_div_up((size_t)p->ow, 2), &nt) || !slot_bytes(c, pp, &one))
    return lc_error(LC_ERR_OVERFLOW, "winograd: tile count or slot size overflows");
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "winograd: one chunk of %zu tiles x %lld channels needs %zu bytes, budget is %zu",
                    pp, (long long)c->cin_g, one, c->ctx->budget);
  size_t chunk = c->qw ? LC_WINO_QCHUNK_BYTES : LC_WINO_CHUNK_BYTES;
  size_t target = c->ctx->budget ? c->ctx->budget / (size_t)threads : lc_max_sz(chunk + qbuf_bytes(c), one);
  /* Largest T (multiple of pp, <= all tiles) whose slot fits the target: slot bytes grow by per_pp per pp. */
  size_t two, per_pp, T = pp, cap = lc_round_up(nt, pp);
  if (slot_bytes(c, 2 * pp, &two) && two > one) {
    per_pp = two - one;
    size_t extra = target > one ? (target - one) / per_pp : 0;
    T = lc_min_sz(cap, pp + lc_min_sz(extra, cap / pp) * pp);
    size_t b;
    while (T > pp && (!slot_bytes(c, T, &b) || b > target)) T -= pp;
  }
  /* Equal chunks, then split the weight panels when there are fewer tasks than threads. */
  if (p->hint_tile) { /* the tuner's chunk, within the budget */
    size_t b;
    T = lc_min_sz(cap, lc_round_up(p->hint_tile, pp));
    if (!slot_bytes(c, T, &b)) return lc_error(LC_ERR_OVERFLOW, "winograd: slot size overflows");
    if (c->ctx->budget && b > c->ctx->budget / (size_t)threads)
      return lc_error(LC_ERR_BUDGET, "winograd: a chunk of %zu tiles needs %zu bytes per thread, budget is %zu", T, b,
                      c->ctx->budget);
  }
  size_t nch = lc_div_up(nt, T);
  /* Q8/Q4 with more threads than chunks: a chunk per thread (each builds all of U) rather than the
   * weight panels split (each transforms all of V) where the tiles outnumber the output channels:
   * 128@28 q8 at 2 threads 0.68 -> 0.56 ms (fp32 0.53; the Xeon model 167). */
  if (c->qw && !p->hint_tile && threads > 1 && nch < (size_t)threads && nt >= (size_t)c->cout_g) nch = (size_t)threads;
  T = lc_min_sz(T, lc_round_up(lc_div_up(nt, nch), pp));
  p->tile = T; /* tiles (2x2 output pixels) per chunk */
  p->ntiles = lc_div_up(nt, T);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, threads, wpanels(c));
  size_t ws, sv, wt;
  if (!slot_bytes(c, T, &ws)) return lc_error(LC_ERR_OVERFLOW, "winograd: slot size overflows");
  /* Weight panels split over tasks: V once per chunk, shared, where it fits beside the slots (its
   * share of each thread's bytes). */
  p->variant = 0;
  if (p->ocsplit > 1 && c->cin_g >= WINO_SHARED_V_MIN_CIN && shared_v_bytes(c, p, &sv) &&
      lc_add_sz(ws, lc_round_up(lc_div_up(sv, (size_t)threads), 64), &wt) &&
      (!c->ctx->budget || wt <= c->ctx->budget / (size_t)threads))
    p->variant = WINO_SHARED_V, ws = wt;
  return lc_route_planned(p, LC_ROUTE_WINOGRAD, ws, threads);
}

/* ------------------------------------------------------------------ run */

typedef struct wino_job {
  const lc_conv *c;
  const float *in;
  float *out;
  size_t tw;       /* tiles per row */
  float *sv;       /* WINO_SHARED_V: every chunk's V (chunk_v_bytes apart), else NULL */
  unsigned char *slots; /* thread slots, `stride` bytes apart */
  size_t stride;
  size_t parts;    /* channel ranges of a chunk's shared transform */
} wino_job;

const float *lc_wino_plane_row(const lc_conv_plan *p, const lc_wino_kernels *wk, const float *plane, int64_t iy,
                               int64_t x0, int64_t w, float *buf, const float *zero, float pv) {
  if (iy < 0 || iy >= p->ih) {
    if (pv == 0.0f) return zero;
    for (int64_t k = 0; k < w; k++) buf[k] = pv;
    return buf;
  }
  if (x0 >= 0 && x0 + w <= p->iw) return plane + iy * p->iw + x0;
  int64_t lo = x0 < 0 ? -x0 : 0, hi = p->iw - x0 < w ? p->iw - x0 : w;
  if (lo > w) lo = w;
  if (hi < lo) hi = lo;
  /* src is only read in [lo, hi): offset it there so no pointer leaves the plane. */
  const float *src = hi > lo ? plane + iy * p->iw + x0 + lo : NULL;
  wk->pad_row(buf + lo, src, 0, (size_t)(hi - lo), (size_t)(w - lo));
  for (int64_t k = 0; k < lo; k++) buf[k] = pv;
  for (int64_t k = hi; pv != 0.0f && k < w; k++) buf[k] = pv;
  return buf;
}

/* V for tiles [t0, t0 + nt) of one image and group, channels [ic0, ic1). */
static void input_chunk(const wino_job *jb, const float *img_g, size_t t0, size_t nt, float *V, size_t T,
                        const float *zero, const float *pvg, size_t ic0, size_t ic1) {
  const lc_conv *c = jb->c;
  const lc_wino_kernels *wk = wino_kernels(c);
  const lc_conv_plan *p = &c->plan;
  size_t cig = (size_t)c->cin_g, xs = cig * T, tw = jb->tw;
  if (c->d.layout == LC_NCHW) {
    float buf[4][2 * SEG + 2];
    for (size_t ic = ic0; ic < ic1; ic++) {
      const float *plane = img_g + ic * p->ihw, *rows[4] = {NULL, NULL, NULL, NULL};
      float *b[4] = {buf[0], buf[1], buf[2], buf[3]}, *t;
      size_t pty = SIZE_MAX, ptx = 0, pn = 0;
      for (size_t j = 0; j < nt;) {
        size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
        size_t n = lc_min_sz(lc_min_sz(tw - tx, SEG), nt - j); /* one tile row */
        int64_t x0 = (int64_t)(2 * tx) - p->pl, y0 = (int64_t)(2 * ty) - p->pt;
        int r0 = 0;
        if (ty == pty + 1 && tx == ptx && n == pn) { /* the tile row below: its rows 0-1 are our rows 2-3 */
          rows[0] = rows[2], rows[1] = rows[3];
          t = b[0], b[0] = b[2], b[2] = t;
          t = b[1], b[1] = b[3], b[3] = t;
          r0 = 2;
        }
        for (int r = r0; r < 4; r++)
          rows[r] = lc_wino_plane_row(p, wk, plane, y0 + r, x0, (int64_t)(2 * n + 2), b[r], zero, pvg ? pvg[ic] : 0.0f);
        wk->in_tiles(n, rows, V + ic * T + j, xs);
        pty = ty, ptx = tx, pn = n;
        j += n;
      }
    }
    return;
  }
  size_t cin = (size_t)c->d.in_channels;
  for (size_t j = 0; j < nt; j++) {
    size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
    const float *src[16];
    for (int r = 0; r < 4; r++)
      for (int x = 0; x < 4; x++) {
        int64_t iy = (int64_t)(2 * ty) - p->pt + r, ix = (int64_t)(2 * tx) - p->pl + x;
        int in = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
        src[r * 4 + x] = in ? img_g + ((size_t)iy * (size_t)p->iw + (size_t)ix) * cin : pvg ? pvg : zero;
      }
    for (size_t ic = ic0; ic < ic1; ic += SEG) {
      const float *s[16];
      for (int i = 0; i < 16; i++) s[i] = src[i] + ic;
      wk->in_channels(lc_min_sz(SEG, ic1 - ic), s, V + j * cig + ic, xs);
    }
  }
}

/* Output transform of one weight panel (noc channels from oc0) for tiles [t0, t0 + nt); M[xi][T][nr]. */
static void output_chunk(const wino_job *jb, float *img_out, const float *M, size_t T, size_t oc0, size_t noc,
                         size_t t0, size_t nt) {
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_wino_kernels *wk = wino_kernels(c);
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  size_t pw = wpw(c), xs = pw * T, tw = jb->tw, ow = (size_t)p->ow, oh = (size_t)p->oh;
  size_t cout = (size_t)c->d.out_channels;
  const float *bv = c->bias ? c->bias + oc0 : NULL;
  if (ep.slope) ep.slope += oc0;
  int nchw = c->d.layout == LC_NCHW;
  float y[4][SEG];
  for (size_t j = 0; j < nt; j++) {
    size_t tt = t0 + j, ty = tt / tw, tx = tt % tw;
    wk->out(noc, M + j * pw, xs, bv, NULL, &ep, y);
    for (size_t dy = 0; dy < 2; dy++)
      for (size_t dx = 0; dx < 2; dx++) {
        size_t oy = 2 * ty + dy, ox = 2 * tx + dx;
        if (oy >= oh || ox >= ow) continue;
        const float *v = y[dy * 2 + dx];
        if (nchw) {
          float *o = img_out + oc0 * p->ohw + oy * ow + ox;
          for (size_t i = 0; i < noc; i++) o[i * p->ohw] = v[i];
        } else {
          memcpy(img_out + (oy * ow + ox) * cout + oc0, v, noc * sizeof(float));
        }
      }
  }
}

int lc_wino_qfused(const lc_conv *c, size_t pw) {
  const lc_kernels *kt = c->ctx->k;
  return kt->wino_qweights && pw % 16 == 0 && kt->wino_qweights_ok(c->qw);
}

void lc_wino_q_u(const lc_conv *c, int f4, size_t oc0, size_t noc, size_t pw, size_t k0, size_t kn, float *U, size_t xs,
                 float *D) {
  const lc_kernels *kt = c->ctx->k;
  size_t cig = (size_t)c->cin_g;
  if (lc_wino_qfused(c, pw)) {
    kt->wino_qweights(c->qw, oc0, noc, pw, k0, kn, U, xs, f4);
    return;
  }
  for (size_t s0 = 0; s0 < kn; s0 += QSEG) {
    size_t sn = lc_min_sz(QSEG, kn - s0);
    for (size_t t = 0; t < 9; t++) /* in range by construction */
      (void)lc_dequant_rows_with(kt, c->qw, oc0, noc, t * cig + k0 + s0, sn, D + t * QSEG, 9 * QSEG);
    (f4 ? kt->wino->weights4 : kt->wino->weights)(noc, pw, sn, D, 9 * QSEG, QSEG, 1, U + s0 * pw, xs);
  }
}

/* fp32: the U block the GEMMs read after that of (panel q, K block k0, xi) and its bytes, NULL after
 * the task's last one. In a network the weights come from memory: the calls on one block prefetch
 * the next (lc_pf_spread), so the first call on it reads L2, not DRAM. */
static const float *next_block(const lc_conv *c, size_t g, size_t q, size_t q1, size_t k0, size_t xi, size_t *bytes) {
  size_t np = wpanels(c), cig = (size_t)c->cin_g, pw = wpw(c);
  if (xi < 15) xi++;
  else if (k0 + LC_KC < cig) xi = 0, k0 += LC_KC;
  else if (q + 1 < q1) xi = 0, k0 = 0, q++;
  else return NULL;
  *bytes = lc_min_sz(LC_KC, cig - k0) * pw * sizeof(float);
  return c->wwino + ((g * 16 * np + q) * cig + k0) * pw + xi * np * cig * pw;
}

/* A slot's zero row, after its V and M (slot_bytes). */
static float *slot_zero(const lc_conv *c, unsigned char *slot, size_t T) {
  return (float *)(slot + lc_round_up(16 * (size_t)c->cin_g * T * sizeof(float), 64) +
                   lc_round_up(16 * wpw(c) * T * sizeof(float), 64));
}

static void wino_task(void *arg, size_t task, int thread) {
  const wino_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  lc_task_pos tp = lc_task_decode(p, (size_t)c->d.groups, wpanels(c), task);
  size_t chunk = tp.tile, g = tp.g, n = tp.n;
  size_t T = p->tile, cig = (size_t)c->cin_g, coutg = (size_t)c->cout_g, pw = wpw(c), pp = tile_pp(c);
  size_t np = wpanels(c), ntl = lc_div_up((size_t)p->oh, 2) * jb->tw;
  size_t t0 = chunk * T, nt = lc_min_sz(T, ntl - t0);
  size_t cin = (size_t)c->d.in_channels, cout = (size_t)c->d.out_channels;
  int nchw = c->d.layout == LC_NCHW;
  const float *img_g = jb->in + n * cin * p->ihw + g * cig * (nchw ? p->ihw : 1);
  float *img_out = jb->out + n * cout * p->ohw;
  unsigned char *slot = jb->slots + (size_t)thread * jb->stride;
  float *V = (float *)slot;
  float *M = (float *)(slot + lc_round_up(16 * cig * T * sizeof(float), 64));
  float *zero = slot_zero(c, slot, T);
  float *ubuf = NULL, *dbuf = NULL; /* Q8/Q4 only */
  if (c->qw) {
    ubuf = (float *)((unsigned char *)zero + lc_round_up(zero_len(c) * sizeof(float), 64));
    dbuf = (float *)((unsigned char *)ubuf + lc_round_up(ubuf_floats(c) * sizeof(float), 64));
  }
  if (jb->sv) { /* transformed by vin_task */
    V = jb->sv + ((n * (size_t)c->d.groups + g) * p->ntiles + chunk) * (chunk_v_bytes(c, T) / sizeof(float));
  } else {
    memset(zero, 0, zero_len(c) * sizeof(float));
    input_chunk(jb, img_g, t0, nt, V, T, zero, c->padv ? c->padv + g * cig : NULL, 0, cig);
  }

  lc_gemm_params ep;
  memset(&ep, 0, sizeof ep); /* final = 0: bias and activation follow the output transform */
  /* A (tiles x ic) element (i, k): NCHW V[k * T + i], NHWC V[i * cig + k]. */
  size_t rs_a = nchw ? 1 : cig, cs_a = nchw ? T : 1;
  size_t q0 = tp.q0, q1 = tp.q1;
  for (size_t q = q0; q < q1; q++) {
    size_t noc = lc_min_sz(pw, coutg - q * pw);
    /* Each xi sums its K blocks in order whichever loop is outside: the same bits as xi outside. */
    size_t kb = c->wwino ? LC_KC : QKC;
    for (size_t k0 = 0; k0 < cig; k0 += kb) {
      size_t kn = lc_min_sz(kb, cig - k0), uxs = np * cig * pw;
      const float *U0 = c->wwino ? c->wwino + ((g * 16 * np + q) * cig + k0) * pw : ubuf;
      if (!c->wwino) {
        lc_wino_q_u(c, 0, g * coutg + q * pw, noc, pw, k0, kn, ubuf, ubuf_xs(kn, pw), dbuf);
        uxs = ubuf_xs(kn, pw);
      }
      ep.accumulate = k0 > 0;
      for (size_t xi = 0; xi < 16; xi++) {
        const float *U = U0 + xi * uxs, *Vx = V + xi * cig * T;
        float *Mx = M + xi * pw * T;
        size_t nbytes = 0;
        const float *next = c->wwino ? next_block(c, g, q, q1, k0, xi, &nbytes) : NULL;
        for (size_t j = 0; j < nt; j += pp) {
          lc_pf_spread(&ep, next, nbytes, lc_div_up(nt, pp), kn, j / pp);
          kt->f32_gemm(lc_min_sz(pp, nt - j), noc, kn, Vx + j * rs_a + k0 * cs_a, rs_a, cs_a, U, pw, Mx + j * pw,
                       pw, &ep);
        }
      }
      ep.pf = NULL;
    }
    output_chunk(jb, img_out, M, T, g * coutg + q * pw, noc, t0, nt);
  }
}

/* WINO_SHARED_V: channel range `part` of one chunk's V (tasks: image x group x chunk x part). */
static void vin_task(void *arg, size_t task, int thread) {
  const wino_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  size_t part = task % jb->parts, ck = task / jb->parts, chunk = ck % p->ntiles, ig = ck / p->ntiles;
  size_t g = ig % (size_t)c->d.groups, n = ig / (size_t)c->d.groups, T = p->tile, cig = (size_t)c->cin_g;
  size_t ntl = lc_div_up((size_t)p->oh, 2) * jb->tw, t0 = chunk * T, nt = lc_min_sz(T, ntl - t0);
  size_t ic0 = cig * part / jb->parts, ic1 = cig * (part + 1) / jb->parts;
  if (ic0 >= ic1) return;
  int nchw = c->d.layout == LC_NCHW;
  const float *img_g = jb->in + n * (size_t)c->d.in_channels * p->ihw + g * cig * (nchw ? p->ihw : 1);
  float *zero = slot_zero(c, jb->slots + (size_t)thread * jb->stride, T);
  memset(zero, 0, zero_len(c) * sizeof(float));
  input_chunk(jb, img_g, t0, nt, jb->sv + ck * (chunk_v_bytes(c, T) / sizeof(float)), T, zero,
              c->padv ? c->padv + g * cig : NULL, ic0, ic1);
}

void lc_run_winograd(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  unsigned char *base = ws + (64 - (uintptr_t)ws % 64) % 64;
  wino_job jb = {c, in, out, lc_div_up((size_t)p->ow, 2), NULL, base, p->ws_thread, 1};
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit, slot, sv, need;
  /* The shared V where the workspace still holds it beside every thread's slot (the tuner may have
   * cut the threads after planning). */
  if (p->variant == WINO_SHARED_V && slot_bytes(c, p->tile, &slot) && shared_v_bytes(c, p, &sv) &&
      lc_mul_sz(slot, (size_t)p->threads, &need) && lc_add_sz(need, sv, &need) && need <= p->ws_total) {
    jb.sv = (float *)base, jb.slots = base + sv, jb.stride = slot;
    jb.parts = lc_min_sz((size_t)c->cin_g, 2 * (size_t)p->threads);
    size_t chunks = (size_t)p->n * (size_t)c->d.groups * p->ntiles;
    lc_pool_run(c->ctx->pool, chunks * jb.parts, p->threads, vin_task, &jb);
  }
  lc_pool_run(c->ctx->pool, tasks, p->threads, wino_task, &jb);
}
