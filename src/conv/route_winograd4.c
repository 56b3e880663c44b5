/* Winograd F(4x4, 3x3) for 3x3, stride 1, dilation 1 convs (any pads, groups, both layouts):
 * each 4x4 output tile comes from a 6x6 input tile, Y = A^T [ (G g G^T) .* (B^T d B) ] A, i.e. 36
 * GEMMs with K = cin/groups: 4x fewer multiplies than im2col (F(2x2): 2.25x), at the cost of a
 * larger rounding error (the points 0, +-1, +-2, +-1/2: transform entries up to 8 and 1/24;
 * test_conv_winograd measures it against the fp64 reference). The heuristic selector takes it
 * on the AVX2 table from 64 channels at 14x14 outputs and up (select.c); the tuner times it against
 * F(2x2) and the other routes. fp32 weights are transformed at create when a tuner is on, the
 * route is asked for, or lc_winograd4_auto says AUTO may take it; Q8/Q4 ones per task (QKC4 below).
 *   U: [group][xi][panel][ic][nr]   (G g G^T, fp32: kernels/wino.h weights4; zero-padded panels)
 *   V: NHWC [xi][tile block][ic][mr] (packed A panels of mr tiles; the transform runs along
 *      channels), NCHW [xi][ic][Tp] (it runs along a row of tiles, read in place; the GEMM's A
 *      with rs_a = 1, cs_a = Tp, as F(2x2))
 *   M: [xi][T][nr]                  (one weight panel's products)
 * Work: chunks of T tiles per (image, group), split over weight panels when there are fewer
 * chunks than threads. Each output's sum over ic is one GEMM call per xi and K block: the same bits
 * for any T, split or thread count. xi = 6 * row + column of the transformed tile. */
#include <string.h>

#include "conv/route.h"
#include "kernels/wino.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

#define CH LC_WINO_SEG /* channels (NHWC) or tiles (NCHW) per transform call */
/* Zero floats of a slot: a channel vector (NHWC) or a padding input row of CH tiles (NCHW). */
#define ZLEN (4 * CH + 2)
/* Slot size per thread when the budget is unlimited (as F(2x2): V near L2). */
#define W4_CHUNK_BYTES ((size_t)768 << 10)

/* 3x3, or (fp32) kernels of 3a x 3b, a, b <= 3 (6x6, 9x9, ...) as a x b 3x3 kernels on shifted
 * inputs: out = sum over shifts s = (i, j) of the 3x3 conv of taps [3i, 3i + 3) x [3j, 3j + 3) with
 * the input origin moved by (3i, 3j); each shift runs F(4x4) on its own U and the outputs add up.
 * 4x fewer multiplies than im2col on a 9x9 (PP-OCR det's large-kernel convs). */
static int w4_shape_ok(const lc_conv *c) {
  const lc_conv_desc *d = &c->d;
  int64_t kh = d->kernel_h, kw = d->kernel_w;
  return kh % 3 == 0 && kw % 3 == 0 && kh <= 9 && kw <= 9 && (kh * kw == 9 || !c->qw) && d->stride_h == 1 &&
         d->stride_w == 1 && d->dilation_h == 1 && d->dilation_w == 1 && !c->depthwise;
}
/* 3x3 kernels a conv is cut into (1 for a 3x3). */
static size_t w4_shifts(const lc_conv *c) { return (size_t)(c->d.kernel_h / 3) * (size_t)(c->d.kernel_w / 3); }
static size_t w4_panels(const lc_conv *c) { return lc_div_up((size_t)c->cout_g, c->ctx->k->nr); }

/* F(4x4) does 1.78x fewer multiplies than F(2x2) but 2.25x the transform work per channel. Since
 * its NCHW row transforms it wins from 16 channels on large planes on both tables (Xeon, fastest
 * runs F(2x2) / F(4x4), ms: 16@320 18.6 / 11.1, 32@160 6.5 / 3.8, 32->64@320 46.6 / 34.5; Zen 3 in
 * lc_wino4_size_first), so its weights are made from 16 channels; the output size decides there. */
int lc_winograd4_auto(const lc_conv *c) {
  int isa = c->ctx->k->isa;
  return (isa == LC_ISA_AVX2 || isa == LC_ISA_AVX512) && w4_shape_ok(c) && c->cin_g >= 16;
}

/* The channel and table rule is lc_winograd4_auto's (known at create, so the F(4x4)
 * weights are transformed only where AUTO may take them); the output size is decided here.
 * At 7x7 F(4x4) computes 8x8 from 4 tiles of 6x6 inputs (half of them padding) and lost to F(2x2).
 * Past 80x80 F(2x2) won while F(4x4) gathered NCHW channels a plane apart and its transforms ran
 * without AVX2; with both fixed F(4x4) won there too (Zen 3, min ms F(2x2) / F(4x4), NCHW: 96->24 at
 * 160 15.1 / 11.2, 256->64 at 160 85 / 48, 64->64 at 320 79 / 66; NHWC 256->64 at 160 100 / 74). */
int lc_wino4_size_first(const lc_conv *c, int64_t oh, int64_t ow) {
  /* AVX-512 (Xeon, 1 thread, fastest runs F(2x2) / F(4x4), ms, two runs): from 80x80 F(4x4) won or
   * tied up to 128 channels (128@80 12.1 / 9.6 and 8.8 / 8.2, 96->24@160 13.3 / 12.7, 64@112 4.9 /
   * 4.9 and 5.1 / 4.2) and with 256 from 160x160 (256->64@160 68 / 55 and 45 / 41), but lost with
   * 256 at 80 (256->64@80 19.3 / 20.9 and 14.4 / 21.1); at 7-56 px it tied or lost (512@7 2.9 / 9.2,
   * 256@14 1.2 / 2.5, 64@56 even). A quiet Xeon (model 167, medians of 5 alternating rounds, ms
   * F(2x2) / F(4x4), docs/benchmarks.md "stop 20") had F(4x4) ahead from 56 px wherever the output
   * channels are at least the input ones (64@56 1.20 / 1.05, 64->128@56 2.13 / 1.68, 128@56,
   * 256@56, 256@80 28.2 / 23.5: 0.79-0.87x) and from 28 px where they are twice (128->256@28 1.90 /
   * 1.74, 128->256@40 0.81x, 32->64 and 256->512@28 0.93x); behind where they are fewer (256->64@56
   * 1.08x, 64->32@56 1.09x) and at 28-48 px with as many (64@28 1.17x, 128@28 1.10x, 64@48 1.10x). */
  if (c->ctx->k->isa == LC_ISA_AVX512) {
    int64_t hw = oh < ow ? oh : ow;
    /* 9x9 as shifted 3x3s (Xeon model 167, 1 thread, ms, auto's taprows or im2col / winograd4):
     * 256@160 1989 / 1511, 256@80 484 / 190, 256@40 110 / 53, 256@20 26.9 / 17.6, 256@10 9.4 / 11.4,
     * 128@20 8.2 / 5.6, 64@40 8.7 / 5.8, 64@20 2.47 / 2.54, 48@80 18.8 / 13.4, 32@40 2.66 / 1.98;
     * even or behind with fewer channels on either side (24->16@40 1.33 / 1.36, 64->16@40 3.77 /
     * 3.86, 16->64@40 2.09 / 2.02). */
    if (w4_shifts(c) > 1)
      return lc_winograd4_auto(c) && c->cin_g >= 32 && c->cout_g >= 32 && (hw >= 40 || (hw >= 20 && c->cin_g >= 128));
    return lc_winograd4_auto(c) && ((hw >= 80 && (c->cin_g <= 128 || hw >= 160)) ||
                                    (hw >= 56 && c->cout_g >= c->cin_g) || (hw >= 28 && c->cout_g >= 2 * c->cin_g));
  }
  /* AVX2 (Zen 3, 1 thread, min ms of 7, auto's route / winograd4, stop 29): with fewer than 64
   * input channels F(4x4) won from 56 px (32@56 0.59 / 0.51, 32@160 7.13 / 3.93, 16@320 11.4 / 5.4,
   * 32->64@320 55.3 / 25.7) and lost at 28 (32@28 0.16 / 0.31, 16@28 0.12 / 0.15); 9x9 as shifted
   * 3x3s won from 20 px (256@80 841 / 290, 256@40 210 / 81, 256@20 54 / 24, 96->24@20 3.8 / 2.5,
   * 24->16@40 3.0 / 1.7; 64@20 even) and lost at 10 at 2 threads (256@10 8.9 / 10.6). */
  int64_t hw = oh < ow ? oh : ow;
  if (w4_shifts(c) > 1) return lc_winograd4_auto(c) && hw >= 20;
  /* Below 20 px F(2x2) (stop 31, forced routes, 5 interleaved rounds, fastest ms F(2x2) /
   * F(4x4)): at 2 threads 256@14 0.93 / 1.07, 128@14 0.29 / 0.67, 128@20 0.48 / 0.60, 256->64@20
   * 0.75 / 0.76, 256->512@14 even (the tuner took F(2x2) on the last two: 1.30x, 1.03x); at 1 thread
   * 64@14 0.140 / 0.190, 128@14 0.455 / 0.511, 256@14 1.71 / 1.68, but 256->512@14 3.33 / 3.07 and
   * 128@20 0.87 / 0.82, so with one thread F(4x4) keeps 14 px where the outputs are twice the inputs
   * and 20 px where they are as many; 256->64@20 1.09 / 1.13 (selector_fit: 1.10), so with fewer
   * outputs 28 px. */
  int64_t lo = c->ctx->threads > 1 || c->cout_g < c->cin_g ? 28 : c->cout_g >= 2 * c->cin_g ? 14 : 20;
  return lc_winograd4_auto(c) && hw >= lo && (c->cin_g >= 64 || hw >= 56);
}

/* fp32 U, transformed by the kernel table's weights4 as the Q8/Q4 panels are in run (same bits). */
lc_status lc_winograd4_pack(lc_conv *c, const float *w) {
  const lc_conv_desc *d = &c->d;
  if (!w4_shape_ok(c) || c->qw) return LC_OK;
  if (!(d->route == LC_ROUTE_WINOGRAD4 || (d->route == LC_ROUTE_AUTO && (c->ctx->tuner || lc_winograd4_auto(c)))))
    return LC_OK;
  size_t nr = c->ctx->k->nr, np = w4_panels(c), cig = (size_t)c->cin_g, cog = (size_t)c->cout_g, n, bytes;
  size_t S = w4_shifts(c), cout = (size_t)d->out_channels, kw = (size_t)d->kernel_w, taps = (size_t)c->taps;
  if (!lc_mul_sz((size_t)d->groups * 36 * S, np, &n) || !lc_mul_sz(n, cig, &n) || !lc_mul_sz(n, nr, &n) ||
      !lc_mul_sz(n, sizeof(float), &bytes))
    return lc_error(LC_ERR_OVERFLOW, "winograd4: transformed weight size overflows");
  float *sub = NULL; /* a shift's 3x3 taps, OIHW, when the kernel is larger */
  if (S > 1 && !(sub = lc_malloc(cout * cig * 9 * sizeof(float)))) /* <= the OIHW weights: no overflow */
    return lc_error(LC_ERR_NO_MEMORY, "winograd4: cannot allocate %zu bytes of weights", cout * cig * 36);
  if (!(c->wwino4 = lc_calloc(n, sizeof(float)))) {
    lc_free(sub);
    return lc_error(LC_ERR_NO_MEMORY, "winograd4: cannot allocate %zu bytes of weights", bytes);
  }
  c->wwino4_bytes = bytes;
  c->weight_bytes += bytes;
  const lc_wino_kernels *wk = c->ctx->k->wino;
  for (size_t sh = 0; sh < S; sh++) {
    const float *ws = w;
    if (sub) {
      size_t i = sh / (kw / 3), j = sh % (kw / 3);
      for (size_t oi = 0; oi < cout * cig; oi++)
        for (size_t t = 0; t < 9; t++) sub[oi * 9 + t] = w[oi * taps + (3 * i + t / 3) * kw + 3 * j + t % 3];
      ws = sub;
    }
    float *u = c->wwino4 + sh * (size_t)d->groups * 36 * np * cig * nr;
    for (size_t g = 0; g < (size_t)d->groups; g++)
      for (size_t q = 0; q < np; q++)
        for (size_t ic = 0; ic < cig; ic += CH) /* OIHW: (oc, ic, tap) at (oc * cig + ic) * 9 + tap */
          wk->weights4(lc_min_sz(nr, cog - q * nr), nr, lc_min_sz(CH, cig - ic), ws + ((g * cog + q * nr) * cig + ic) * 9,
                       9 * cig, 1, 9, u + ((g * 36 * np + q) * cig + ic) * nr, np * cig * nr);
  }
  lc_free(sub);
  return LC_OK;
}

/* Q8/Q4 keep no U: tasks transform it from the codes into their thread's slot, a weight panel x
 * QKC4 input channels ([xi][kc][nr], planes 16 floats apart against L1 set conflicts, as F(2x2))
 * at a time, summed block by block: up to QKC4 channels per group the fp32 conv's bits. Where U
 * of all panels of a group fits W4_UCACHE_BYTES (and the budget) the slot keeps it for the run
 * (plan variant 1): each thread transforms each panel once per group instead of once per chunk,
 * which cost 0.6 of 7 ms on a 96->24 160x160 layer (Xeon model 167, 40 chunks). */
#define QKC4 128
#define W4_UCACHE_BYTES ((size_t)1 << 20)
static size_t w4_uxs(size_t kn, size_t nr) { return kn * nr + 16; }
/* Floats of one panel x K block of U, and K blocks per group. */
static size_t w4_ublk(const lc_conv *c) { return 36 * w4_uxs(lc_min_sz((size_t)c->cin_g, QKC4), c->ctx->k->nr); }
static size_t w4_nkb(const lc_conv *c) { return lc_div_up((size_t)c->cin_g, QKC4); }
/* Bytes of the stamps (panel q holds group stamp[q] - 1's U; 0: none) before a cached U. */
static size_t w4_stamp_bytes(const lc_conv *c) { return lc_round_up(w4_panels(c) * sizeof(size_t), 64); }

/* Q8/Q4 part of a slot: U of one block, or (cached) the stamps and U of all panels; then D. */
static int w4_qbytes(const lc_conv *c, int cached, size_t *bytes) {
  *bytes = 0;
  if (!c->qw) return 1;
  size_t u = w4_ublk(c), blocks;
  if (cached && (!lc_mul_sz(w4_panels(c), w4_nkb(c), &blocks) || !lc_mul_sz(u, blocks, &u))) return 0;
  if (!lc_mul_sz(u, sizeof(float), &u)) return 0;
  *bytes = lc_round_up(u, 64) + (cached ? w4_stamp_bytes(c) : 0) +
           (lc_wino_qfused(c, c->ctx->k->nr) ? 0 : lc_round_up(c->ctx->k->nr * 9 * LC_WINO_QSEG * sizeof(float), 64));
  return 1;
}

/* Slot: [V: 36 x T x cig][M: 36 x T x nr][ZLEN zeros][Q8/Q4: w4_qbytes], 64-aligned parts (T is a
 * multiple of mr). */
static int w4_slot(const lc_conv *c, size_t T, int cached, size_t *bytes) {
  size_t v, m, q, z = lc_round_up(ZLEN * sizeof(float), 64) + 64; /* + 64: run aligns the slot */
  if (!w4_qbytes(c, cached, &q) || !lc_mul_sz(36 * sizeof(float) * (size_t)c->cin_g, T, &v) ||
      !lc_mul_sz(36 * sizeof(float) * c->ctx->k->nr, T, &m))
    return 0;
  return lc_add_sz(lc_round_up(v, 64), lc_round_up(m, 64), bytes) && lc_add_sz(*bytes, z, bytes) &&
         lc_add_sz(*bytes, q, bytes);
}

/* Shifted kernels stream S times the U per chunk: larger chunks reuse it over more tiles (9x9
 * 256@80, 1 thread: 256 ms at 768 KiB, 190 at 3 MiB, 194 at 8 MiB; 256@20 22.8 / 17.6). With one
 * thread twice that (Zen 3, stop 31, forced, 4 interleaved rounds, fastest / median ms at 3 and
 * 6 MiB: 256@40 85.2 / 87.4 against 78.6 / 82.4 and 89.2 / 90.2 against 79.0 / 81.6, the tuner's
 * one chunk of 102 tiles; 256@80 338 / 363 against 321 / 373; 256@20 and 96@40 even; 12 MiB lost
 * at 80 px). At 2 threads 6 MiB lost 1.1-1.2x (one chunk then splits its weight panels). Measured
 * on the AVX2 table only: the AVX-512 parts keep 3 MiB. */
#define W4_SHIFT_CHUNK_BYTES ((size_t)3 << 20)
/* With 32 input channels or fewer a tile's products are few and U small (36 x 32 x cout floats):
 * a chunk needs fewer tiles to pay for streaming U, and half the slot leaves L2 to the planes the
 * transforms read and write. 32 -> 32 at 320 px (a Xeon model 167, interleaved): 1 thread
 * 8.95-9.00 against 9.40-9.92 ms, 2 threads 4.89-5.28 against 5.30-5.79; 32 -> 64 at 2 threads
 * 8.30-8.68 against 9.75-10.03 (1 thread: 17.7-20.3 against 19.7-20.3). A quarter of the slot lost
 * at 1 thread (10.5 ms). */
static size_t w4_chunk_bytes(const lc_conv *c) {
  if (w4_shifts(c) > 1)
    return c->ctx->threads == 1 && c->ctx->k->isa == LC_ISA_AVX2 ? 2 * W4_SHIFT_CHUNK_BYTES : W4_SHIFT_CHUNK_BYTES;
  return c->cin_g <= LC_WINO_SMALL_K_CIN ? W4_CHUNK_BYTES / 2 : W4_CHUNK_BYTES;
}

static lc_status w4_plan(const lc_conv *c, lc_conv_plan *p, int cached) {
  size_t mr = c->ctx->k->mr, nt, one, q;
  if (!lc_mul_sz(lc_div_up((size_t)p->oh, 4), lc_div_up((size_t)p->ow, 4), &nt) || !w4_slot(c, mr, cached, &one) ||
      !w4_qbytes(c, cached, &q))
    return lc_error(LC_ERR_OVERFLOW, "winograd4: tile count or slot size overflows");
  int threads = lc_threads_for_budget(c, one);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "winograd4: one chunk of %zu tiles needs %zu bytes, budget is %zu", mr, one,
                    c->ctx->budget);
  size_t target = c->ctx->budget ? c->ctx->budget / (size_t)threads : lc_max_sz(w4_chunk_bytes(c) + q, one);
  size_t cap = lc_round_up(nt, mr), T = mr, b;
  if (p->hint_tile) {
    T = lc_min_sz(cap, lc_round_up(p->hint_tile, mr));
  } else {
    while (T + mr <= cap && w4_slot(c, T + mr, cached, &b) && b <= target) T += mr;
  }
  if (!w4_slot(c, T, cached, &b)) return lc_error(LC_ERR_OVERFLOW, "winograd4: slot size overflows");
  if (c->ctx->budget && b > target)
    return lc_error(LC_ERR_BUDGET, "winograd4: a chunk of %zu tiles needs %zu bytes per thread, budget is %zu", T, b,
                    c->ctx->budget);
  size_t nch = lc_div_up(nt, T);
  T = lc_min_sz(T, lc_round_up(lc_div_up(nt, nch), mr));
  p->tile = T;
  p->ntiles = lc_div_up(nt, T);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, threads, w4_panels(c));
  p->variant = cached;
  w4_slot(c, T, cached, &b);
  return lc_route_planned(p, LC_ROUTE_WINOGRAD4, b, threads);
}

lc_status lc_winograd4_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!w4_shape_ok(c)) return lc_error(LC_ERR_UNSUPPORTED, "winograd4: needs a 3x3 kernel, stride 1, dilation 1");
  if (!c->wwino4 && !c->qw)
    return lc_error(LC_ERR_UNSUPPORTED,
                    "winograd4: no transformed weights (made at create for route winograd4, a tuner or AUTO's rule)");
  /* The cache changes where U comes from, never a sum: the same bits either way. It is taken
   * unless the budget then leaves fewer threads. */
  size_t u;
  lc_conv_plan q = *p;
  if (c->qw && w4_qbytes(c, 1, &u) && u <= W4_UCACHE_BYTES && w4_plan(c, &q, 1) == LC_OK) {
    lc_conv_plan r = *p;
    *p = w4_plan(c, &r, 0) == LC_OK && r.threads > q.threads ? r : q;
    lc_clear_error();
    return LC_OK;
  }
  lc_clear_error();
  return w4_plan(c, p, 0);
}

/* The Q8/Q4 part of an aligned slot of the plan. */
static unsigned char *w4_slot_q(const lc_conv *c, unsigned char *slot) {
  size_t T = c->plan.tile, Tp = lc_round_up(T, c->ctx->k->mr);
  return slot + lc_round_up(36 * (size_t)c->cin_g * Tp * sizeof(float), 64) +
         lc_round_up(36 * c->ctx->k->nr * T * sizeof(float), 64) + lc_round_up(ZLEN * sizeof(float), 64);
}

typedef struct w4_job {
  const lc_conv *c;
  const float *in;
  float *out;
  unsigned char *ws;
  size_t tw, nt;
} w4_job;

/* V of tiles [t0, t0 + n) of one image and group. */
static void w4_input(const w4_job *jb, const float *img_g, size_t t0, size_t n, float *V, size_t T, const float *zero,
                     const float *pvg, int64_t pt, int64_t pl) {
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_wino_kernels *wk = c->ctx->k->wino;
  size_t cig = (size_t)c->cin_g, mr = c->ctx->k->mr, Tp = lc_round_up(T, mr);
  if (c->d.layout == LC_NCHW) {
    float buf[6][4 * CH + 2];
    for (size_t ic = 0; ic < cig; ic++) {
      const float *plane = img_g + ic * p->ihw, *rows[6];
      for (size_t j = 0; j < n;) {
        size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
        size_t nn = lc_min_sz(lc_min_sz(jb->tw - tx, CH), n - j); /* one tile row */
        int64_t x0 = (int64_t)(4 * tx) - pl, y0 = (int64_t)(4 * ty) - pt;
        /* Tiles that lie inside the row read it in place; the padded ones at its ends go alone
         * (copying whole rows was 13 % of a 96->24 160x160 run). */
        if (x0 < 0) nn = 1;
        else if (x0 + (int64_t)(4 * nn + 2) > p->iw && p->iw - x0 >= 6) nn = lc_min_sz(nn, (size_t)(p->iw - x0 - 2) / 4);
        for (int r = 0; r < 6; r++)
          rows[r] = lc_wino_plane_row(p, wk, plane, y0 + r, x0, (int64_t)(4 * nn + 2), buf[r], zero, pvg ? pvg[ic] : 0.0f);
        wk->in_tiles4(nn, rows, V + ic * Tp + j, cig * Tp);
        j += nn;
      }
    }
    return;
  }
  size_t pstep = (size_t)c->d.in_channels;
  float out[36][CH];
  for (size_t j = 0; j < n; j++) {
    size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
    const float *src[36];
    for (int r = 0; r < 6; r++)
      for (int x = 0; x < 6; x++) {
        int64_t iy = (int64_t)(4 * ty) - pt + r, ix = (int64_t)(4 * tx) - pl + x;
        int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
        src[r * 6 + x] = inside ? img_g + ((size_t)iy * (size_t)p->iw + (size_t)ix) * pstep : NULL;
      }
    float *vt = V + (j / mr) * cig * mr + j % mr;
    for (size_t ic = 0; ic < cig; ic += CH) {
      size_t nc = lc_min_sz(CH, cig - ic);
      const float *d[36];
      for (int i = 0; i < 36; i++) d[i] = src[i] ? src[i] + ic : pvg ? pvg + ic : zero;
      wk->in_channels4(nc, d, out);
      for (size_t xi = 0; xi < 36; xi++) {
        float *v = vt + xi * Tp * cig + ic * mr;
        for (size_t k = 0; k < nc; k++) v[k * mr] = out[xi][k];
      }
    }
  }
}

/* Shift sh of S (w4_shifts > 1) into an output of the panel's channel k: the first stores, the
 * others add, and the last adds the bias and applies the activation (ep) to the sum. */
static float w4_combine(float v, const float *o, size_t sh, size_t S, const float *bias, const lc_gemm_params *ep,
                        size_t k) {
  if (sh == 0) return v;
  v += *o;
  return sh + 1 < S ? v : lc_apply_act_ch(bias ? v + *bias : v, ep, k);
}

static void w4_task(void *arg, size_t task, int thread) {
  const w4_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  const lc_wino_kernels *wk = kt->wino;
  size_t np = w4_panels(c), nr = kt->nr, mr = kt->mr, cig = (size_t)c->cin_g, cog = (size_t)c->cout_g;
  lc_task_pos tp = lc_task_decode(p, (size_t)c->d.groups, np, task);
  size_t T = p->tile, Tp = lc_round_up(T, mr), t0 = tp.tile * T, n = lc_min_sz(T, jb->nt - t0);
  const float *img_g = jb->in + tp.n * (size_t)c->d.in_channels * p->ihw +
                       tp.g * cig * (c->d.layout == LC_NCHW ? p->ihw : 1);
  float *img_out = jb->out + tp.n * (size_t)c->d.out_channels * p->ohw;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  slot += (64 - (uintptr_t)slot % 64) % 64;
  float *V = (float *)slot;
  float *M = (float *)(slot + lc_round_up(36 * cig * Tp * sizeof(float), 64));
  float *zero = (float *)((unsigned char *)M + lc_round_up(36 * nr * T * sizeof(float), 64));
  unsigned char *qpart = w4_slot_q(c, slot); /* Q8/Q4 only */
  size_t *stamp = (size_t *)qpart, ublk = c->qw ? w4_ublk(c) : 0, nkb = c->qw ? w4_nkb(c) : 0;
  float *ubuf = (float *)(qpart + (p->variant ? w4_stamp_bytes(c) : 0));
  float *dbuf = ubuf + lc_round_up(ublk * (p->variant ? np * nkb : 1), 16);
  memset(zero, 0, ZLEN * sizeof(float));
  lc_gemm_params g0, ep;
  memset(&g0, 0, sizeof g0); /* plain products: bias and activation follow the output transform */
  lc_conv_epilogue(c, &ep);
  int nchw = c->d.layout == LC_NCHW;
  size_t cout = (size_t)c->d.out_channels, oh = (size_t)p->oh, ow = (size_t)p->ow;
  /* Shifted 3x3 kernels (w4_shifts > 1): each shift's V once per chunk, its outputs added into the
   * output (w4_combine). Summing them in M instead means V of a shift again per weight panel, or
   * S times the slot: the input transforms then cost more than the additions (9x9 256@80: 2.2x). */
  size_t S = w4_shifts(c), sw = (size_t)c->d.kernel_w / 3, ustride = (size_t)c->d.groups * 36 * np * cig * nr;
  float y[16][CH];
  for (size_t sh = 0; sh < S; sh++) {
    w4_input(jb, img_g, t0, n, V, T, zero, c->padv ? c->padv + tp.g * cig : NULL, p->pt - 3 * (int64_t)(sh / sw),
             p->pl - 3 * (int64_t)(sh % sw));
    const float *Us = c->wwino4 ? c->wwino4 + sh * ustride : NULL;
    for (size_t q = tp.q0; q < tp.q1; q++) {
      size_t noc = lc_min_sz(nr, cog - q * nr), oc0 = tp.g * cog + q * nr;
      /* fp32: one K block of all cig channels; Q8/Q4: blocks of QKC4, U made here or cached. */
      size_t kb = c->wwino4 ? cig : QKC4, cs_a = nchw ? Tp : mr;
      float *uq = p->variant ? ubuf + q * nkb * ublk : ubuf;
      int fresh = !c->wwino4 && (!p->variant || stamp[q] != tp.g + 1);
      for (size_t k0 = 0; k0 < cig; k0 += kb) {
        size_t kn = lc_min_sz(kb, cig - k0), uxs = np * cig * nr;
        const float *U0 = Us ? Us + (tp.g * 36 * np + q) * cig * nr : NULL;
        if (!Us) {
          float *ub = p->variant ? uq + k0 / QKC4 * ublk : uq;
          if (fresh) lc_wino_q_u(c, 1, oc0, noc, nr, k0, kn, ub, w4_uxs(kn, nr), dbuf);
          U0 = ub;
          uxs = w4_uxs(kn, nr);
        }
        g0.accumulate = k0 > 0;
        for (size_t xi = 0; xi < 36; xi++) {
          const float *Vx = V + xi * Tp * cig + k0 * cs_a;
          /* fp32: the calls on one U block prefetch the next (lc_pf_spread, as F(2x2)) */
          const float *next = !Us          ? NULL
                              : xi < 35      ? U0 + (xi + 1) * uxs
                              : q + 1 < tp.q1 ? Us + (tp.g * 36 * np + q + 1) * cig * nr
                              : sh + 1 < S    ? Us + ustride + (tp.g * 36 * np + tp.q0) * cig * nr
                                              : NULL;
          for (size_t j = 0; j < n; j += mr) {
            lc_pf_spread(&g0, next, cig * nr * sizeof(float), lc_div_up(n, mr), kn, j / mr);
            kt->f32_gemm(lc_min_sz(mr, n - j), noc, kn, Vx + j * (nchw ? 1 : cig), 1, cs_a, U0 + xi * uxs, nr,
                         M + (xi * T + j) * nr, nr, &g0);
          }
        }
        g0.pf = NULL;
      }
      if (fresh && p->variant) stamp[q] = tp.g + 1;
      const float *bias = c->bias ? c->bias + oc0 : NULL;
      lc_gemm_params epq = ep;
      if (ep.slope) epq.slope = ep.slope + oc0;
      for (size_t j = 0; j < n; j++) {
        size_t tt = t0 + j, ty = tt / jb->tw, tx = tt % jb->tw;
        size_t nx = lc_min_sz(4, ow - 4 * tx), ny = lc_min_sz(4, oh - 4 * ty);
        wk->out4(noc, M + j * nr, T * nr, S == 1 ? bias : NULL, S == 1 ? &epq : &g0, y);
        if (nchw && S == 1) { /* its own loop: the store is most of w4_task's own time */
          for (size_t k = 0; k < noc; k++) {
            float *o = img_out + (oc0 + k) * p->ohw + 4 * ty * ow + 4 * tx;
            for (size_t dy = 0; dy < ny; dy++)
              for (size_t dx = 0; dx < nx; dx++) o[dy * ow + dx] = y[4 * dy + dx][k];
          }
        } else if (nchw) {
          for (size_t k = 0; k < noc; k++) {
            float *o = img_out + (oc0 + k) * p->ohw + 4 * ty * ow + 4 * tx;
            const float *bk = bias ? bias + k : NULL;
            for (size_t dy = 0; dy < ny; dy++)
              for (size_t dx = 0; dx < nx; dx++) {
                float *od = o + dy * ow + dx;
                *od = w4_combine(y[4 * dy + dx][k], od, sh, S, bk, &epq, k);
              }
          }
        } else {
          for (size_t dy = 0; dy < ny; dy++)
            for (size_t dx = 0; dx < nx; dx++) {
              float *od = img_out + ((4 * ty + dy) * ow + 4 * tx + dx) * cout + oc0;
              if (S == 1) {
                memcpy(od, y[4 * dy + dx], noc * sizeof(float));
                continue;
              }
              for (size_t k = 0; k < noc; k++)
                od[k] = w4_combine(y[4 * dy + dx][k], od + k, sh, S, bias ? bias + k : NULL, &epq, k);
            }
        }
      }
    }
  }
}

lc_status lc_winograd4_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  w4_job jb = {c, in, out, ws, lc_div_up((size_t)p->ow, 4), 0};
  jb.nt = jb.tw * lc_div_up((size_t)p->oh, 4);
  for (int t = 0; p->variant && t < p->threads; t++) { /* no U cached yet in this run */
    unsigned char *slot = ws + (size_t)t * p->ws_thread;
    slot += (64 - (uintptr_t)slot % 64) % 64;
    memset(w4_slot_q(c, slot), 0, w4_panels(c) * sizeof(size_t));
  }
  size_t tasks = (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit;
  lc_pool_run(c->ctx->pool, tasks, p->threads, w4_task, &jb);
  return LC_OK;
}
