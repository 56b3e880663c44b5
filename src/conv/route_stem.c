/* Stem route: convs with few input channels (the RGB stem, K = cin*kh*kw <= LC_STEM_MAX_K), NCHW
 * or NHWC (a channel's row then gathered at stride cin; the output rows transposed in L1 into
 * pixel records, so a model running NHWC converts only the 3-channel input, not the stem's output).
 * At K = 27 im2col spent ~25% packing 16-pixel panels (a segment list per tap and panel) and its
 * 6-row GEMM tiles left dead rows at 32/64 outputs. Here each output row is computed from the
 * input rows it reads, copied once per row with the padding and split by stride phase (phase f of
 * a row holds padded columns f, f+s, f+2s, ...), so every tap's pixels are one contiguous run:
 * tap kx at output column x reads phase (kx*dw) % s at x + (kx*dw) / s. The rowconv kernel reads
 * those runs through a pointer per k; nothing of size K x pixels is ever packed.
 * Each output is one fp32 sum over k in order (the kernel's), independent of threads and budget. */
#include <stdint.h>
#include <string.h>

#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/transpose4.h"

/* Row pointers per output row live on the stack: K is bounded (7x7 RGB is 147). */
#define LC_STEM_MAX_K 160
#define LC_STEM_MAX_CIN 4
/* A row is copied once per stride phase: wider strides would copy phases no tap reads. */
#define LC_STEM_MAX_STRIDE 4
/* Tasks per thread when splitting rows into bands. Every task repacks its weight blocks: at 2
 * threads (a Xeon model 167, 4 interleaved rounds) 3->64 at 112 px ran 0.167-0.182 ms in bands of
 * 28 rows against 0.192-0.203 in bands of 14 (4 a thread), 3->32 s2 at 320 px 0.734-0.762 against
 * 0.741-0.773. */
#define STEM_TASKS_PER_THREAD 2

typedef struct stem_geo {
  size_t nblk, s, off, plen, rows; /* oc blocks, stride_w, largest phase offset, phase length, input rows */
  size_t es, nhwc;                 /* element stride of a channel along a row (NHWC: cin) */
} stem_geo;

static void geo_of(const lc_conv *c, const lc_conv_plan *p, stem_geo *g) {
  const lc_conv_desc *d = &c->d;
  g->nblk = lc_div_up((size_t)c->cout_g, LC_ROWCONV_MR);
  g->s = (size_t)d->stride_w;
  g->off = (size_t)((d->kernel_w - 1) * d->dilation_w) / g->s;
  /* whole 64-byte lines, so each phase row starts aligned: at stride 2 two of a 3x3 row's taps
   * then load aligned vectors */
  g->plen = lc_round_up(lc_round_up((size_t)p->ow, 16) + g->off, 16);
  g->rows = (size_t)(c->cin_g * d->kernel_h);
  g->nhwc = d->layout == LC_NHWC;
  g->es = g->nhwc ? (size_t)c->cin_g : 1;
}

/* Slot floats: [weights nblk x K x MR][dequantized row K][pad to 64 bytes][zero row plen][rows x s x plen]
 * and, NHWC, [nblk x MR x plen] (the task's output rows before the transpose). */
static int slot_floats(const lc_conv *c, const stem_geo *g, size_t *n) {
  size_t w, r;
  return lc_mul_sz(g->nblk, c->K * LC_ROWCONV_MR, &w) && lc_mul_sz(g->rows, g->s, &r) && lc_mul_sz(r, g->plen, &r) &&
         lc_add_sz(w, r, n) && lc_add_sz(*n, c->K + 16 + g->plen, n) &&
         lc_add_sz(*n, g->nhwc ? g->nblk * LC_ROWCONV_MR * g->plen : 0, n) && lc_mul_sz(*n, sizeof(float), n);
}

lc_status lc_stem_plan(const lc_conv *c, lc_conv_plan *p) {
  const lc_conv_desc *d = &c->d;
  if (d->groups != 1 || c->cin_g > LC_STEM_MAX_CIN || c->K > LC_STEM_MAX_K || d->stride_w > LC_STEM_MAX_STRIDE)
    return lc_error(LC_ERR_UNSUPPORTED, "stem: needs one group, <= %d input channels, K <= %d and stride_w <= %d",
                    LC_STEM_MAX_CIN, LC_STEM_MAX_K, LC_STEM_MAX_STRIDE);
  if (!c->wpack && !c->qw) return lc_error(LC_ERR_UNSUPPORTED, "stem: reads the packed or quantized weights");
  stem_geo g;
  geo_of(c, p, &g);
  size_t ws;
  if (!slot_floats(c, &g, &ws)) return lc_error(LC_ERR_OVERFLOW, "stem: workspace size overflows");
  ws = lc_round_up(ws, 64);
  int threads = lc_threads_for_budget(c, ws);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "stem: weights and input rows need %zu bytes, budget is %zu", ws, c->ctx->budget);
  size_t oh = (size_t)p->oh, want = threads > 1 ? lc_div_up(oh, STEM_TASKS_PER_THREAD * (size_t)threads) : oh;
  p->tile = lc_max_sz(1, lc_min_sz(oh, p->hint_tile ? p->hint_tile : want)); /* output rows per task */
  p->ntiles = lc_div_up(oh, p->tile);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * p->ntiles, threads, g.nblk);
  return lc_route_planned(p, LC_ROUTE_STEM, ws, threads);
}

/* Phase rows of input row src (iw floats, es apart) into dst (s rows of plen), padding as zeros. */
static void phase_rows(const lc_conv *c, const stem_geo *g, const float *src, float *dst) {
  const lc_conv_plan *p = &c->plan;
  size_t s = g->s, pl = (size_t)p->pl, iw = (size_t)p->iw;
  for (size_t f = 0; f < s; f++, dst += g->plen) {
    /* phase column i is padded column i*s + f, input column i*s + f - pl */
    size_t lo = pl > f ? lc_div_up(pl - f, s) : 0, hi = lc_min_sz(g->plen, (iw + pl - f + s - 1) / s);
    if (iw + pl <= f || lo >= hi) {
      memset(dst, 0, g->plen * sizeof(float));
      continue;
    }
    memset(dst, 0, lo * sizeof(float));
    const float *from = src + (lo * s + f - pl) * g->es;
    if (s * g->es == 1) memcpy(dst + lo, from, (hi - lo) * sizeof(float));
    else c->ctx->k->f32_gather(dst + lo, from, hi - lo, s * g->es);
    memset(dst + hi, 0, (g->plen - hi) * sizeof(float));
  }
}

/* Pixels ahead whose records to_pixels prefetches for writing: in a net the output lines are cold
 * (IResNet-34's stem NHWC, 1 thread: 1.22-1.26 -> 1.12-1.19 ms; 8, 16 and 32 alike). */
#define PF_PIX 16

/* NHWC output: t[i][x] (m rows, ts apart) to pixel x's channels o[x * os + i], pixel by pixel. */
static void to_pixels(const float *t, size_t ts, size_t m, size_t ow, float *o, size_t os) {
  size_t x = 0;
#if LC_HAVE_TR4
  for (; x + 4 <= ow; x += 4) {
    size_t i = 0;
    if (x + PF_PIX + 4 <= ow)
      for (size_t b = 0; b < 4 * m * sizeof(float); b += 64)
        __builtin_prefetch((const char *)(o + (x + PF_PIX) * os) + b, 1, 3);
    for (; i + 4 <= m; i += 4) lc_tr4(t + i * ts + x, ts, o + x * os + i, os);
    for (size_t j = x; j < x + 4; j++)
      for (size_t k = i; k < m; k++) o[j * os + k] = t[k * ts + j];
  }
#endif
  for (; x < ow; x++)
    for (size_t i = 0; i < m; i++) o[x * os + i] = t[i * ts + x];
}

static void stem_task(void *arg, size_t task, int thread) {
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  stem_geo g;
  geo_of(c, p, &g);
  lc_task_pos tp = lc_task_decode(p, 1, g.nblk, task);
  size_t K = c->K, cin = (size_t)c->cin_g, cout = (size_t)d->out_channels, ow = (size_t)p->ow;
  float *w = (float *)(jb->ws + (size_t)thread * p->ws_thread);
  float *qrow = w + (tp.q1 - tp.q0) * K * LC_ROWCONV_MR;
  float *zero = qrow + K + (16 - ((uintptr_t)(qrow + K) / sizeof(float)) % 16) % 16, *rbuf = zero + g.plen;
  float *tbuf = rbuf + g.rows * g.s * g.plen; /* NHWC: the task's output rows, [channel][plen] */
  /* The task's weight blocks as [k][MR], channels past cout zero. Every task repacks them: fp32 reads
   * the packed panel's column in steps of pw, without lc_conv_w's two divisions per weight (those
   * cost ~14 us a task, a third of a 14-row task at 2 threads: 3->64 at 112 px). */
  for (size_t b = tp.q0; b < tp.q1; b++)
    for (size_t i = 0; i < LC_ROWCONV_MR; i++) {
      size_t oc = b * LC_ROWCONV_MR + i;
      float *wb = w + (b - tp.q0) * K * LC_ROWCONV_MR + i;
      if (oc >= cout) {
        for (size_t k = 0; k < K; k++) wb[k * LC_ROWCONV_MR] = 0.0f;
      } else if (c->qw) {
        lc_conv_qrow(c, (int64_t)oc, qrow);
        for (size_t k = 0; k < K; k++) wb[k * LC_ROWCONV_MR] = qrow[k];
      } else {
        const float *col = c->wpack + (oc / c->pw * K) * c->pw + oc % c->pw; /* lc_conv_w(c, 0, oc, 0) */
        for (size_t k = 0; k < K; k++) wb[k * LC_ROWCONV_MR] = col[k * c->pw];
      }
    }
  memset(zero, 0, g.plen * sizeof(float));
  const float *img = jb->in + tp.n * cin * p->ihw;
  float *img_out = jb->out + tp.n * cout * p->ohw;
  const float *rows[LC_STEM_MAX_K];
  lc_gemm_params ep, pr;
  lc_conv_epilogue(c, &ep);
  ep.final = 1;
  ep.bias_per_row = 1;
  pr = ep;
  if (ep.act == 5) ep.act = 0, ep.post = 0; /* PRelu on the block's rows while they are in L1 */
  size_t oy0 = tp.tile * p->tile, oy1 = lc_min_sz(oy0 + p->tile, (size_t)p->oh);
  for (size_t oy = oy0; oy < oy1; oy++) {
    for (size_t ky = 0; ky < (size_t)d->kernel_h; ky++) {
      int64_t iy = (int64_t)oy * d->stride_h - p->pt + (int64_t)ky * d->dilation_h;
      for (size_t ic = 0; ic < cin; ic++) {
        float *dst = rbuf + (ky * cin + ic) * g.s * g.plen;
        int inside = iy >= 0 && iy < p->ih;
        if (inside) {
          size_t row = (size_t)iy * (size_t)p->iw;
          phase_rows(c, &g, img + (g.nhwc ? row * cin + ic : ic * p->ihw + row), dst);
        }
        for (size_t kx = 0; kx < (size_t)d->kernel_w; kx++) {
          size_t t = kx * (size_t)d->dilation_w;
          rows[(ky * (size_t)d->kernel_w + kx) * cin + ic] = inside ? dst + (t % g.s) * g.plen + t / g.s : zero;
        }
      }
    }
    /* Channel blocks outer: a block's weights stay in L1 while it sweeps the row (7x7: all the
     * weights are 37 KB), and its 4 output rows are written in sequence; with blocks inner every
     * chunk touched all 32-64 planes, which alias in L1 when the plane is a multiple of 4 KiB
     * (320x320: 7.6 ms, blocks outer: see docs/benchmarks.md). */
    float *orow = img_out + oy * ow;
    for (size_t b = tp.q0; b < tp.q1; b++) {
      size_t oc0 = b * LC_ROWCONV_MR;
      const float *wb = w + (b - tp.q0) * K * LC_ROWCONV_MR;
      ep.bias = c->bias ? c->bias + oc0 : NULL;
      size_t m = lc_min_sz(LC_ROWCONV_MR, cout - oc0);
      float *ob = g.nhwc ? tbuf + (b - tp.q0) * LC_ROWCONV_MR * g.plen : orow + oc0 * p->ohw;
      size_t ors = g.nhwc ? g.plen : p->ohw;
      for (size_t x0 = 0; x0 < ow; x0 += LC_ROWCONV_NR) {
        size_t n = lc_min_sz(LC_ROWCONV_NR, ow - x0);
        kt->f32_rowconv(m, n, K, wb, rows, x0, ob + x0, ors, &ep);
        if (pr.act == 5) lc_prelu_rows(ob + x0, m, n, ors, pr.slope + oc0, &pr);
      }
    }
    /* whole pixel records in sequence: a block at a time wrote 16 of each record's bytes per sweep,
     * each line of a large output fetched for it (3->32 s2 at 640 px: 3.8 ms against 1.7 NCHW) */
    if (g.nhwc) {
      size_t oc0 = tp.q0 * LC_ROWCONV_MR, nc = lc_min_sz(tp.q1 * LC_ROWCONV_MR, cout) - oc0;
      to_pixels(tbuf, g.plen, nc, ow, img_out + oy * ow * cout + oc0, cout);
    }
  }
}

lc_status lc_stem_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  lc_route_launch(c, in, out, ws, (size_t)p->n * p->ntiles * p->ocsplit, stem_task);
  return LC_OK;
}
