/* Route selector for LC_ROUTE_AUTO. Every size product is checked; when a route can't run the
 * shape or doesn't fit the budget the next candidate is tried, ending at direct (no workspace).
 * Once a route is planned, tile and split rules may re-plan it (shape features, threads and the
 * kernel table only; fitted to the tuner's choices: bench/selector_fit.py, docs/benchmarks.md). */
#include "conv/route.h"
#include "kernels/registry.h"
#include "util/checked.h"
#include "util/error.h"

/* The AVX2 table runs on cores with 512 KiB-1 MiB of L2 (Zen 2-4, Skylake client): tiles sized
 * for the AVX-512 parts' 2 MiB L2 spill there. The AVX-512 rules stay as they were (not refitted)
 * except F(4x4)'s (wino4_first, timed on a Xeon). */
static int l2_small(const lc_conv *c) { return c->ctx->k->isa == LC_ISA_AVX2; }

/* Tasks per thread the balance rules aim for: with 1-2 per thread, a thread that is descheduled
 * or handed the last odd one leaves the others idle for a third of the run or more. */
#define TASKS_PER_THREAD 4

/* F(4x4)'s rule on the output size is lc_wino4_size_first (route_winograd4.c); fp32 convs need
 * their transformed weights, Q8/Q4 ones transform theirs per task. */
static int wino4_first(const lc_conv *c, const lc_conv_plan *p) {
  return (c->wwino4 || c->qw) && lc_wino4_size_first(c, p->oh, p->ow);
}

/* NCHW 1x1 in place reads each K row of a pixel panel a plane apart; past 64 KiB planes (128x128)
 * every row is another page, and packing (im2col) ran 1.4x faster (64->256 at 160x160). */
static int big_plane_1x1(const lc_conv *c, const lc_conv_plan *p, int is_1x1) {
  if (!is_1x1 || c->d.layout != LC_NCHW) return 0;
  if (l2_small(c)) return p->ohw >= 16384;
  /* AVX-512 (2 MiB L2): in place, a plane of a multiple of 1 KiB puts the K rows of a pixel panel
   * in a sixteenth or less of the cache's sets (L1 and L2 index by the low address bits alike),
   * so with 64+ rows, which every weight panel reads again, they evict each other. fp32, a Xeon
   * model 167, 3 interleaved rounds, gemm1x1 / im2col: 64->256 at 160 px 1.04-1.06 (1 thread),
   * 1.00-1.02 (2); 128->256 at 80 px 1.08-1.13 / 1.07-1.09. With K or cout under 64 (MobileNetV2's
   * 1x1 at 112 px) the rows are few or little reused: not measured faster, left in place. Q8/Q4
   * dequantize a weight panel per tile, which im2col's tiles would change: not measured. */
  return !c->qw && p->ohw >= 4096 && p->ohw % 256 == 0 && c->K >= 64 && c->cout_g >= 64;
}

static size_t tasks_of(const lc_conv *c, const lc_conv_plan *p) {
  return (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit;
}

/* Weights an im2col tile may stream again for balance: each extra tile reads all of them once more,
 * which stays cheap while they sit in L2/L3 (stride-2 layers up to 2.4 MB took 48-112 px tiles at
 * 2 threads, 1.05-1.25x), not for the 9x9 256-channel layers (21 MB: 48 px tiles lost 1.2x). */
#define BALANCE_WEIGHT_BYTES ((size_t)4 << 20)

/* The tile (pixels, or Winograd tiles per chunk) the rules want for planned p; 0 keeps the route's.
 * With threads and few tiles, im2col and F(4x4) split a tile's weight panels, and each split packs
 * or transforms that tile's input again: smaller tiles balance the threads instead. F(2x2) keeps
 * its split: at 7x7 its 16 tiles are one chunk, and smaller chunks lost 1.5x. Independent of the
 * ISA: the task count is. */
static size_t want_tile(const lc_conv *c, const lc_conv_plan *p) {
  size_t T = (size_t)p->threads, tiles = (size_t)p->n * (size_t)c->d.groups * p->ntiles, want = 0;
  size_t few = T > 1 && tiles < TASKS_PER_THREAD * T, nt = p->ntiles * p->tile;
  const lc_conv_desc *d = &c->d;
  int s2_1x1 = d->kernel_h == 1 && d->kernel_w == 1 && (d->stride_h > 1 || d->stride_w > 1);
  if (p->route == LC_ROUTE_IM2COL && s2_1x1 && !c->qw && !l2_small(c) && p->ohw >= 1600 && p->tile > 128) {
    /* Strided 1x1 (a gather of each tile's K rows) on the AVX-512 table: tiles of 128 pixels, 64 KiB
     * of B at K 128, ran 1.05-1.09x faster than 224-256 at 1600-6400 px, 2 threads (PP-OCR det's
     * shortcuts, Xeon model 167, stop 37's selector fit). */
    want = 128;
  } else if (p->route == LC_ROUTE_IM2COL && few && !c->qw) {
    size_t wbytes;
    /* Q8/Q4 dequantize the weights once per tile: not traded for balance (not measured). */
    if (lc_mul_sz((size_t)c->cout_g, c->K * sizeof(float), &wbytes) && wbytes <= BALANCE_WEIGHT_BYTES)
      want = lc_div_up(nt, TASKS_PER_THREAD * T);
  } else if (p->route == LC_ROUTE_WINOGRAD4) {
    /* Each chunk streams all the transformed weights (36 x cin x cout): below 2 mr-panels of tiles
     * per chunk (512 channels: 6) that dominated, the tuner took 12-36 (1.1-1.25x). */
    size_t tmin = 2 * c->ctx->k->mr;
    if (p->tile < tmin) want = tmin;
    /* Balance only where the chunks then still cover the threads twice; else split (14x14: the
     * tuner kept one chunk of 16 tiles split in 2 at 2 threads, 1.4x over chunks of 6). */
    if (few && nt >= 2 * T * tmin) want = lc_max_sz(tmin, lc_div_up(nt, TASKS_PER_THREAD * T));
    /* Kernels of shifted 3x3s (9x9: 9 of them) transform each chunk's input once per shift, so a
     * weight-panel split repeats 9 input transforms per thread: a chunk per thread instead (256 ch
     * 9x9 at 20 px, 2 threads, 25 tiles: the tuner took 16 + 9 over one chunk of 32 split in 2,
     * 1.11-1.13x; Xeon model 167, stop 37). */
    else if (few && c->d.kernel_h * c->d.kernel_w > 9 && p->ntiles < T && nt > tmin)
      want = lc_max_sz(tmin, lc_div_up(nt, T));
    if (want > p->tile && p->tile >= tmin) want = 0;
  }
  return want && want != p->tile ? want : 0;
}

/* Winograd chunks at 2+ threads: the memory target's count can leave a thread idle for a whole
 * chunk (128@28, F(2x2): chunks of 72, 72 and 52 tiles, one thread running two of them; the tuner
 * took 2 chunks of 104 and 92, 1.18x at 2 threads). The busiest thread's tiles when threads take
 * the imgs x chunks tasks in order, each chunk also costing `over` tiles (its weights streamed). */
#define BALANCE_MAX_THREADS 64
#define BALANCE_MAX_TASKS 256
static size_t busiest(size_t imgs, size_t nt, size_t T, int threads, size_t over) {
  size_t load[BALANCE_MAX_THREADS] = {0}, nch = lc_div_up(nt, T), most = 0;
  for (size_t i = 0; i < imgs * nch; i++) {
    size_t k = i % nch, m = 0;
    for (int t = 1; t < threads; t++)
      if (load[t] < load[m]) m = (size_t)t;
    load[m] += lc_min_sz(T, nt - k * T) + over;
  }
  for (int t = 0; t < threads; t++) most = lc_max_sz(most, load[t]);
  return most;
}

/* The Winograd chunk (tiles, as the route equalizes it) whose busiest thread has the least work,
 * from the F(4x4) floor (2 mr) or mr up to twice planned p's chunk (up to p's own with at most
 * LC_WINO_SMALL_K_CIN input channels), at least one chunk per thread; 0 unless it beats p's by
 * 3 % (a one-chunk-per-thread split stays: select's rules keep it). One
 * image's tiles in one chunk per thread is also tried up to 4x p's chunk: 256 ch 9x9 at 40 px, 2
 * threads, kept 5 chunks of 20 tiles (3 on one thread) where 2 of 56 and 44 ran 1.28-1.32x faster
 * (Xeon model 167, stop 27). */
static size_t balanced_chunk(const lc_conv *c, const lc_conv_plan *p) {
  int w4 = p->route == LC_ROUTE_WINOGRAD4, T = p->threads;
  if ((!w4 && p->route != LC_ROUTE_WINOGRAD) || T < 2 || T > BALANCE_MAX_THREADS || p->ocsplit != 1) return 0;
  size_t pp = c->ctx->k->mr, f = w4 ? 4 : 2, imgs = (size_t)p->n * (size_t)c->d.groups;
  size_t nt = lc_div_up((size_t)p->oh, f) * lc_div_up((size_t)p->ow, f);
  if (imgs * p->ntiles < (size_t)T || imgs * p->ntiles > BALANCE_MAX_TASKS) return 0;
  /* Few input channels: the chunk stays at most the route's; growing it back for balance ran
   * 32 -> 32 at 320 px, 2 threads, 4.91-5.09 ms in chunks of 80 against 4.19-4.85 in 40, 32 -> 64
   * 7.83-8.74 against 7.43-8.25 */
  size_t cur = busiest(imgs, nt, p->tile, T, pp), best = 0, cost = cur;
  size_t hi = c->cin_g <= LC_WINO_SMALL_K_CIN ? p->tile : 2 * p->tile;
  size_t each = lc_round_up(lc_div_up(nt, (size_t)T), pp); /* one chunk per thread (one image) */
  if (imgs == 1 && each > hi && each <= 4 * p->tile) hi = each;
  /* Past the route's chunk, V (xi x cin x tiles) must stay within half of a 2 MiB L2 unless the
   * weights' stream is what the larger chunk saves (Xeon model 167, 2 threads, stop 37): 256 -> 64
   * at 80 px, F(2x2), chunks of 80 (V 1.31 MB, U 1 MB) ran 1.06-1.08x chunks of 40, and 72 1.06-1.10x;
   * 256 -> 64 at 160 px, F(4x4), now 24 (V 0.88 MB) runs within 1.04x of the tuner's 32; 512 -> 512
   * at 20 px (U 16.8 MB) keeps 56. */
  size_t xis = w4 ? 36 : 16, ubytes, vmax = (size_t)1 << 20;
  int big_u = !lc_mul_sz(xis * sizeof(float) * (size_t)c->cin_g, (size_t)c->cout_g, &ubytes) ||
              ubytes >= ((size_t)4 << 20);
  for (size_t x = w4 ? 2 * pp : pp; x <= lc_min_sz(hi, lc_round_up(nt, pp)); x += pp) {
    size_t nch = lc_div_up(nt, x), t = lc_round_up(lc_div_up(nt, nch), pp); /* the route's equal chunks */
    if (imgs * nch > BALANCE_MAX_TASKS || imgs * lc_div_up(nt, t) < (size_t)T) continue;
    size_t vb;
    if (t > p->tile && !big_u && (!lc_mul_sz(xis * sizeof(float) * (size_t)c->cin_g, t, &vb) || vb > vmax)) continue;
    size_t b = busiest(imgs, nt, t, T, pp);
    if (b < cost) cost = b, best = t;
  }
  return best && cost * 100 < cur * 97 ? best : 0;
}

/* Applies the tile and split rules to planned p (geo: the plan before the route's); p stays as it
 * was when the re-planned route can't run (budget) or the rule wants nothing. */
static void refine(const lc_conv *c, const lc_conv_plan *geo, lc_conv_plan *p) {
  size_t want = want_tile(c, p);
  if (want) {
    lc_conv_plan q = *geo;
    q.hint_tile = want;
    if (lc_route_plan(c, p->route, &q) == LC_OK && q.threads == p->threads) *p = q;
  }
  size_t bal = balanced_chunk(c, p);
  if (bal) {
    lc_conv_plan q = *geo;
    q.hint_tile = bal;
    if (lc_route_plan(c, p->route, &q) == LC_OK && q.threads == p->threads && q.ocsplit == 1) *p = q;
  }
  /* gemm1x1 reads the input in place, so splitting weight panels costs nothing: enough tasks to
   * balance (the tuner split 1x1 layers of <= 1600 px 4-way at 2 threads, 1.05-1.08x). */
  if (p->route == LC_ROUTE_GEMM1X1 && p->threads > 1 && tasks_of(c, p) < (size_t)TASKS_PER_THREAD * p->threads) {
    size_t tiles = (size_t)p->n * (size_t)c->d.groups * p->ntiles;
    p->ocsplit = lc_min_sz(c->npanels, lc_div_up((size_t)TASKS_PER_THREAD * (size_t)p->threads, tiles));
  }
  lc_clear_error();
}

lc_status lc_select_route(const lc_conv *c, lc_conv_plan *p) {
  const lc_conv_desc *d = &c->d;
  lc_route order[12];
  int n = 0;
  if (c->depthwise) order[n++] = LC_ROUTE_DEPTHWISE;
  int is_1x1 = d->kernel_h == 1 && d->kernel_w == 1 && d->stride_h == 1 && d->stride_w == 1 && !p->pt && !p->pl &&
               !p->pb && !p->pr;
  /* <= 4 input channels (the RGB stem; route_stem.c plans only those), either layout: im2col's packing and
   * 6-row tiles cost 1.7-2.1x at K = 27..147 (stems 3->32/64 at 112..320 px, 3x3 s1/s2 and 7x7 s2,
   * docs/benchmarks.md "Stride-2 and stem"). 1x1 keeps gemm1x1 (the input is the operand). */
  if (!is_1x1 && d->kernel_h * d->kernel_w > 1) order[n++] = LC_ROUTE_STEM;
  /* int8 activations asked for: Q4 through integer dot products (route_i8gemm.c), except where the
   * GEMV serves (few pixels), K < 32 (quantizing the patches costs more than the products save) and
   * where Winograd F(2x2) runs (3x3 stride 1: within 0.85-1.2x of it, docs/benchmarks.md). Q8 pays
   * the sign trick per product and lost to gemm1x1 (96 ch 1x1: 1.4x): the tuner may still take it.
   * Tables that quantize the input once (i8fill, 512-bit VNNI, where Q8 needs no sign trick) take
   * Q8 and Winograd's shapes too: on a Xeon model 167, 1 thread, Q4 3x3 stride 1 at 7-56 px ran
   * 0.80-0.89x of Q4's Winograd, 1.01x at 112 px; but 1x1 stride 1 only from K 128 (PP-OCRv4 det,
   * against gemm1x1: K 192-384 at 20-40 px 0.49-0.92x, K 32-96 at 40-160 px 1.03-2.25x). */
  int wino = (c->wwino || c->qw) && lc_winograd_auto(c), fill = c->ctx->k->i8fill != NULL;
  if (c->qw && (c->qw->format == LC_WEIGHTS_Q4 || (fill && c->qw->format == LC_WEIGHTS_Q8)) && lc_i8gemm_wanted(c) &&
      c->K >= 32 && (!wino || fill) && !(fill && is_1x1 && c->K < 128) &&
      !(is_1x1 && lc_conv_use_qgemv(c, p)))
    order[n++] = LC_ROUTE_I8GEMM;
  if (big_plane_1x1(c, p, is_1x1)) order[n++] = LC_ROUTE_IM2COL;
  if (is_1x1) order[n++] = LC_ROUTE_GEMM1X1;
  if (wino4_first(c, p)) order[n++] = LC_ROUTE_WINOGRAD4;
  /* 3x3 stride 1: Winograd F(2x2,3x3) does 2.25x fewer multiplies; 1.6-2.2x faster than im2col
   * from 16 channels (route_winograd.c). */
  if (wino) order[n++] = LC_ROUTE_WINOGRAD;
  /* NHWC direct (input read in place per tap, route_direct.c) beat im2col on every measured shape,
   * 1 thread: 9x9 256ch 20..160px 1.1-1.6x, 3x3 32/64ch 1.3-1.6x, 3x3 s2 3ch 1.1x, q4 1.2x.
   * NCHW direct was slower on 9x9 256ch <= 80px (B rows at the plane stride) and sh2 3ch. */
  if (d->layout == LC_NHWC && d->groups == 1) order[n++] = LC_ROUTE_DIRECT;
  /* 3x3 stride 2 NCHW: B gathered by whole output rows, kx taps in one pass; 1x1 stride 2 at
   * 7-32 px, 7-20 at 2+ threads (route_taprows.c). */
  if (lc_taprows_auto(c, p)) order[n++] = LC_ROUTE_TAPROWS;
  /* igemm is never chosen: it packs each pixel's whole K per chunk and streams all the weights per
   * chunk; im2col blocks K, keeps larger tiles and less memory, and measured faster (1 thread:
   * 9x9 256ch at 80 px 0.71 vs 1.28 s; 3x3 64ch at 56 px 2.7 vs 2.9 ms). igemm serves when asked. */
  order[n++] = LC_ROUTE_IM2COL;
  order[n++] = LC_ROUTE_DIRECT;
  for (int i = 0; i < n; i++) {
    lc_conv_plan q = *p;
    if (!lc_conv_has_weights_for(c, order[i])) continue;
    lc_status st = lc_route_plan(c, order[i], &q);
    if (st == LC_OK) {
      refine(c, p, &q);
      *p = q;
      return LC_OK;
    }
    if (st != LC_ERR_UNSUPPORTED && st != LC_ERR_BUDGET) return st;
  }
  return lc_error(LC_ERR_INTERNAL, "conv: no route could be planned");
}
