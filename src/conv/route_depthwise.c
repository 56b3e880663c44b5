/* Depthwise route (channel multiplier 1, any kernel, stride 1 or 2, any dilation).
 * NCHW: a task is a run of (image, channel) planes. The padded plane is copied once into the thread's
 * slot, its rows split by phase (row r at phase r % sh, position r / sh), so that for every tap row ky
 * the input of output row oy is row oy of one phase plane, plus a fixed offset. Then:
 *  - FLAT (narrow outputs): the plane is one long row. Output j = oy * Wp/sw + ox reads flat input
 *    sw * j + tap offset, so one dw_row call computes the whole plane (the columns ox >= ow are
 *    scratch, dropped when copying out): on 7..28-wide outputs a call per row costs more than its compute.
 *  - PLANE: one dw_row call per output row, straight into the output.
 *  - ROWS (when the plane does not fit the budget): each output row gathers its kh padded rows.
 *  - DIRECT (3x3 and 5x5 stride 1, 3x3 stride 2, dilation 1, left pad < k, a table with
 *    f32_dw_row_unpadded, outputs from DW_DIRECT_MIN_OW wide): no copy; the kernel reads the input
 *    rows in place, masked loads and a lane shift standing in for the padding, a plane a call (4
 *    output rows at a time, 2-8 at stride 2, from input rows loaded once). Copying the plane in and
 *    FLAT's output out was half of a 256-channel 3x3 at 40x40 (0.26 ms against oneDNN's 0.12; DIRECT 0.16). 32 channels
 *    3x3 s2 320 -> 160 px: 1.05 -> 0.63 ms; 5x5 stride 2 (one row a call) ran slower than PLANE.
 *  - C8 (a table with f32_dw_c8, narrow outputs): 8 channels transposed into one zero-padded tile of
 *    8-channel pixels, every tap an aligned vector, transposed back a row at a time (dw_c8_wanted).
 * Every variant makes the same kernel do the same sums per output element, so the output is the same
 * for any variant, budget and thread count.
 * NHWC: per (image, output row); a pointer per tap into the channel vectors, NULL for padding. */
#include <stdlib.h>
#include <string.h>

#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"

enum { DW_ROWS = 0, DW_PLANE = 1, DW_FLAT = 2, DW_DIRECT = 3, DW_C8 = 4 };

/* DIRECT from this output width (256 channels, 3x3, 1 thread, ms FLAT / DIRECT with 4 rows a call:
 * 7 px (512 ch) 0.026-0.029 / 0.030, 10 px 0.026 / 0.020, 20 px 0.060 / 0.059, 32 px 0.147 / 0.094,
 * 40 px 0.260 / 0.157; 56 px (96 ch, PLANE) 0.187 / 0.107). */
#define DW_DIRECT_MIN_OW 8

/* Outputs narrower than this take FLAT: the per-row calls of PLANE cost more than FLAT's scratch
 * columns and output copy (ow 40 and 56: FLAT 5-10% faster; ow 80 about even). */
#define DW_FLAT_MAX_OW 64
/* A plane larger than this (bytes per thread) takes ROWS: past L2 the copy stops paying off. */
#define DW_PLANE_MAX_BYTES ((size_t)1 << 20)
/* Multiply-adds per task at least, so that the pool's per-task cost stays small on 7x7 planes. */
#define DW_TASK_MACS 32768

typedef struct dw_geom {
  size_t wneed;  /* padded input columns read: (ow-1)*sw + (kw-1)*dw + 1 */
  size_t wp;     /* row stride of the phase planes: wneed rounded up to sw */
  size_t hneed;  /* padded input rows read */
  size_t hph;    /* rows per phase plane */
  size_t so;     /* FLAT output row stride: wp / sw */
  size_t ow;     /* output width (C8's row of outputs) */
  size_t flat;   /* FLAT outputs computed: (oh-1)*so + ow */
  size_t iw;     /* input width (DIRECT's zero row) */
} dw_geom;

static void dw_geometry(const lc_conv *c, const lc_conv_plan *p, dw_geom *g) {
  const lc_conv_desc *d = &c->d;
  size_t sh = (size_t)d->stride_h, sw = (size_t)d->stride_w;
  g->wneed = (size_t)((p->ow - 1) * d->stride_w + (d->kernel_w - 1) * d->dilation_w + 1);
  g->wp = lc_round_up(g->wneed, sw);
  g->hneed = (size_t)((p->oh - 1) * d->stride_h + (d->kernel_h - 1) * d->dilation_h + 1);
  g->hph = lc_div_up(g->hneed, sh);
  g->so = g->wp / sw;
  g->flat = ((size_t)p->oh - 1) * g->so + (size_t)p->ow;
  g->iw = (size_t)p->iw;
  g->ow = (size_t)p->ow;
}

/* Floats of an NCHW variant's buffers; 0 on overflow. */
static size_t dw_slot_floats(const lc_conv *c, const dw_geom *g, int variant) {
  size_t kh = (size_t)c->d.kernel_h, floats;
  if (variant == DW_DIRECT) return lc_round_up(g->iw, 16); /* a row of zeros */
  if (variant == DW_C8) { /* lc_f32_dw_c8_fn's: tile, a row of outputs, the weights, alignment */
    size_t t;
    if (!lc_mul_sz(g->hneed, g->wneed, &t) || !lc_add_sz(t, g->ow + (size_t)c->taps + 1, &t) ||
        !lc_mul_sz(t, 8, &t))
      return 0;
    return t;
  }
  if (variant == DW_ROWS) return lc_mul_sz(kh + 1, g->wneed, &floats) ? floats : 0; /* kh rows + a zero row */
  if (!lc_mul_sz((size_t)c->d.stride_h * g->hph, g->wp, &floats)) return 0;
  if (variant == DW_FLAT && !lc_add_sz(floats, g->flat, &floats)) return 0;
  return floats;
}

/* Slot bytes: the float buffers, then the row pointers (2*kh; DIRECT: one per input row a plane
 * reads, a call per plane); 0 on overflow. */
static size_t dw_slot_bytes(const lc_conv *c, const dw_geom *g, int variant) {
  size_t t, floats = dw_slot_floats(c, g, variant);
  size_t ptrs = variant == DW_DIRECT ? g->hneed : 2 * (size_t)c->d.kernel_h;
  if (floats == 0 || !lc_mul_sz(floats, sizeof(float), &t) || t > SIZE_MAX / 2) return 0;
  if (ptrs > SIZE_MAX / 2 / sizeof(float *)) return 0;
  return lc_round_up(t, 64) + lc_round_up(ptrs * sizeof(float *), 64);
}

/* The row pointers of a slot. */
static const float **dw_slot_ptrs(const lc_conv *c, const dw_geom *g, int variant, unsigned char *slot) {
  return (const float **)(slot + lc_round_up(dw_slot_floats(c, g, variant) * sizeof(float), 64));
}

/* C8 tiles up to this many bytes per thread: past L2 the transposes stop paying. */
#define DW_C8_MAX_BYTES ((size_t)384 << 10)

/* C8 (f32_dw_c8) where the row kernels' edges and tails dominate: 3x3 up to 16 px wide outputs (28
 * at stride 2 where DIRECT does not run), 5x5 and wider up to 28 (48 at stride 2). A Zen 3, 1
 * thread, fastest of 4-5 rounds against DIRECT / FLAT: 3x3 at 7 / 14 / 16 / 20 / 28 / 40 px 0.70 /
 * 0.76 / 0.95 / 0.99 / 1.17 / 1.41x; 5x5 at 20 / 28 / 32 / 40 / 80 px 0.78 / 0.84 / 0.98 / 1.01 /
 * 1.12x, stride 2 to 28 / 40 / 48 px 0.53 / 0.56 / 0.59x. 3x3 stride 2 against stop 33's shuffle
 * kernel (medians of 3 rounds) to 8 / 10 / 12 / 14 / 20 / 28 px: C8 took 1.6 / 1.6 / 1.9 / 1.7 /
 * 2.1 / 2.0x DIRECT's time (0.55-0.79x the kernel before). LOWCONV_DW_C8=0 / 1 forces it (tests). */
static int dw_c8_wanted(const lc_conv *c, const lc_conv_plan *p, int direct) {
  const char *e = getenv("LOWCONV_DW_C8");
  if (e && *e) return e[0] != '0';
  const lc_conv_desc *d = &c->d;
  int s2 = d->stride_h > 1 || d->stride_w > 1, wide = d->kernel_w >= 5;
  int64_t most = wide ? (s2 ? 48 : 28) : (s2 ? (direct ? 0 : 28) : 16);
  return p->ow <= most;
}

lc_status lc_depthwise_plan(const lc_conv *c, lc_conv_plan *p) {
  if (!c->depthwise) return lc_error(LC_ERR_UNSUPPORTED, "depthwise: needs groups == in == out channels");
  if (c->d.stride_h > 2 || c->d.stride_w > 2) return lc_error(LC_ERR_UNSUPPORTED, "depthwise: stride must be 1 or 2");
  size_t per;
  int threads;
  if (c->d.layout == LC_NCHW) {
    dw_geom g;
    dw_geometry(c, p, &g);
    size_t rows = dw_slot_bytes(c, &g, DW_ROWS);
    if (rows == 0) return lc_error(LC_ERR_OVERFLOW, "depthwise: row buffer overflows");
    int variant = DW_ROWS;
    size_t plane = dw_slot_bytes(c, &g, p->ow < DW_FLAT_MAX_OW ? DW_FLAT : DW_PLANE);
    /* The plane variant only when it keeps as many threads as the row one. */
    if (plane && plane <= DW_PLANE_MAX_BYTES && lc_threads_for_budget(c, plane) >= lc_threads_for_budget(c, rows))
      variant = p->ow < DW_FLAT_MAX_OW ? DW_FLAT : DW_PLANE;
    const lc_conv_desc *d = &c->d;
    if (c->ctx->k->f32_dw_row_unpadded && d->kernel_h == d->kernel_w && (d->kernel_w == 3 || d->kernel_w == 5) &&
        d->stride_h == d->stride_w && (d->stride_w == 1 || d->kernel_w == 3) && d->dilation_h == 1 &&
        d->dilation_w == 1 && p->pl < d->kernel_w &&
        p->ow >= DW_DIRECT_MIN_OW) {
      size_t db = dw_slot_bytes(c, &g, DW_DIRECT);
      if (db && lc_threads_for_budget(c, db) >= lc_threads_for_budget(c, rows)) variant = DW_DIRECT, plane = db;
    }
    if (c->ctx->k->f32_dw_c8 && dw_c8_wanted(c, p, variant == DW_DIRECT)) {
      size_t cb = dw_slot_bytes(c, &g, DW_C8);
      if (cb && cb <= DW_C8_MAX_BYTES && lc_threads_for_budget(c, cb) >= lc_threads_for_budget(c, rows))
        variant = DW_C8, plane = cb;
    }
    per = variant == DW_ROWS ? rows : plane;
    size_t macs;
    if (!lc_mul_sz(p->ohw, (size_t)c->taps, &macs)) macs = DW_TASK_MACS;
    size_t cpt = macs >= DW_TASK_MACS ? 1 : DW_TASK_MACS / (macs ? macs : 1);
    if (variant == DW_C8) cpt = lc_round_up(cpt, 8); /* whole groups of 8 channels */
    p->variant = variant;
    p->tile = lc_min_sz(cpt, (size_t)c->d.out_channels); /* channels per task */
    p->ntiles = lc_div_up((size_t)c->d.out_channels, p->tile); /* tasks per image */
  } else {
    per = lc_round_up((size_t)c->taps * sizeof(float *), 64);
    p->ntiles = (size_t)p->oh;
  }
  threads = lc_threads_for_budget(c, per);
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "depthwise: needs %zu bytes per thread, budget is %zu", per, c->ctx->budget);
  return lc_route_planned(p, LC_ROUTE_DEPTHWISE, per, threads);
}

/* One padded row: zeros, input columns [0, xn) at x0, zeros up to width w. */
static void fill_row(float *dst, const float *src, size_t x0, size_t xn, size_t w) {
  memset(dst, 0, x0 * sizeof(float));
  memcpy(dst + x0, src, xn * sizeof(float));
  memset(dst + x0 + xn, 0, (w - x0 - xn) * sizeof(float));
}

/* Valid input columns land at [*x0, *x0 + *xn) of a padded row of width w (the right pad may cut
 * columns that are never read). */
static void row_span(const lc_conv_plan *p, size_t w, size_t *x0, size_t *xn) {
  size_t l = (size_t)p->pl, n = (size_t)p->iw;
  if (l > w) l = w;
  if (n > w - l) n = w - l;
  *x0 = l;
  *xn = n;
}

/* Rows of up to 256 floats are copied inline (constant-size memcpy compiles to moves; a plain loop
 * would be turned back into a call): a libc call per 40-float row was 44 % of a 256-channel 3x3 at
 * 40x40 (perf, Xeon model 167), against 41 % for the convolution itself. */
#define DW_INLINE_MAX 256
static void copy_floats(float *dst, const float *src, size_t n) {
  if (n >= DW_INLINE_MAX) {
    memcpy(dst, src, n * sizeof(float));
    return;
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(dst + i, src + i, 8 * sizeof(float));
  if (n - i >= 4) {
    memcpy(dst + i, src + i, 4 * sizeof(float));
    i += 4;
  }
  if (n - i >= 2) {
    memcpy(dst + i, src + i, 2 * sizeof(float));
    i += 2;
  }
  if (i < n) dst[i] = src[i];
}

/* Zeroes n floats; inline for the 1..2 pad columns of most rows. */
static void zero_floats(float *dst, size_t n) {
  static const float zero[8];
  if (n >= DW_INLINE_MAX) {
    memset(dst, 0, n * sizeof(float));
    return;
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(dst + i, zero, sizeof zero);
  if (n - i >= 4) {
    memcpy(dst + i, zero, 4 * sizeof(float));
    i += 4;
  }
  if (n - i >= 2) {
    memcpy(dst + i, zero, 2 * sizeof(float));
    i += 2;
  }
  if (i < n) dst[i] = 0.0f;
}

/* PLANE and FLAT over channels [ch0, ch1) of one image. The pads of the phase planes are zeroed once
 * per task: the input copies never touch them. */
static void dw_plane_task(const lc_conv *c, const dw_geom *g, int variant, const float *in, float *out,
                          size_t ch0, size_t ch1, unsigned char *slot, lc_gemm_params *ep) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t kh = (size_t)d->kernel_h, sh = (size_t)d->stride_h, wp = g->wp, ow = (size_t)p->ow, iw = (size_t)p->iw;
  size_t oh = (size_t)p->oh, phase = g->hph * wp, x0, xn;
  float *buf = (float *)slot, *obuf = buf + sh * phase;
  const float **rp = dw_slot_ptrs(c, g, variant, slot);
  const float **rq = rp + kh;
  row_span(p, wp, &x0, &xn);
  /* Input rows [y0, y1) land in padded rows [y0 + pt, y1 + pt), all < hneed. */
  int64_t y0 = p->pt > 0 ? 0 : -p->pt, y1 = (int64_t)g->hneed - p->pt;
  if (y1 > p->ih) y1 = p->ih;
  size_t r0 = (size_t)(y0 + p->pt), r1 = y1 > y0 ? (size_t)(y1 + p->pt) : r0;
  /* Zero only what the copies leave: pad rows, and the pad columns of input rows. */
  for (size_t q = 0; q < sh; q++) {
    float *ph = buf + q * phase;
    for (size_t i = 0; i < g->hph; i++) {
      size_t r = i * sh + q;
      if (r < r0 || r >= r1) {
        zero_floats(ph + i * wp, wp);
      } else {
        zero_floats(ph + i * wp, x0);
        zero_floats(ph + i * wp + x0 + xn, wp - x0 - xn);
      }
    }
  }
  for (size_t ky = 0; ky < kh; ky++) {
    size_t r = ky * (size_t)d->dilation_h;
    rp[ky] = buf + (r % sh) * phase + (r / sh) * wp;
  }
  lc_f32_dw_row_fn row = c->ctx->k->f32_dw_row;
  size_t kw = (size_t)d->kernel_w, sw = (size_t)d->stride_w, dw = (size_t)d->dilation_w;
  for (size_t ch = ch0; ch < ch1; ch++) {
    const float *plane = in + ch * p->ihw;
    float *oplane = out + ch * p->ohw;
    for (int64_t y = y0; y < y1; y++) {
      size_t r = (size_t)(y + p->pt);
      /* sh is 1 or 2: phase r % 2, row r / 2 without a division */
      copy_floats(buf + (sh == 1 ? r * wp : (r & 1) * phase + (r >> 1) * wp) + x0, plane + (size_t)y * iw, xn);
    }
    const float *w = c->wdw + ch * (size_t)c->taps;
    ep->bias = c->bias ? c->bias + ch : NULL;
    if (variant == DW_FLAT) {
      row(g->flat, kh, kw, sw, dw, rp, w, obuf, ep);
      for (size_t oy = 0; oy < oh; oy++) copy_floats(oplane + oy * ow, obuf + oy * g->so, ow);
      continue;
    }
    for (size_t oy = 0; oy < oh; oy++) {
      for (size_t ky = 0; ky < kh; ky++) rq[ky] = rp[ky] + oy * wp;
      row(ow, kh, kw, sw, dw, rq, w, oplane + oy * ow, ep);
    }
  }
}

/* Low-memory variant: kh padded rows per output row. */
static void dw_rows(const lc_conv *c, const dw_geom *g, const float *plane, float *oplane, size_t ch,
                    unsigned char *slot, const lc_gemm_params *ep) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t pw = g->wneed, kh = (size_t)d->kernel_h, x0, xn;
  float *rows = (float *)slot;
  float *zero = rows + kh * pw;
  const float **rp = dw_slot_ptrs(c, g, DW_ROWS, slot);
  memset(zero, 0, pw * sizeof(float));
  row_span(p, pw, &x0, &xn);
  for (int64_t oy = 0; oy < p->oh; oy++) {
    for (size_t ky = 0; ky < kh; ky++) {
      int64_t iy = oy * d->stride_h - p->pt + (int64_t)ky * d->dilation_h;
      if (iy < 0 || iy >= p->ih || xn == 0) {
        rp[ky] = zero;
        continue;
      }
      float *r = rows + ky * pw;
      fill_row(r, plane + (size_t)iy * (size_t)p->iw, x0, xn, pw);
      rp[ky] = r;
    }
    c->ctx->k->f32_dw_row((size_t)p->ow, kh, (size_t)d->kernel_w, (size_t)d->stride_w, (size_t)d->dilation_w, rp,
                          c->wdw + ch * (size_t)c->taps, oplane + (size_t)oy * (size_t)p->ow, ep);
  }
}

/* DIRECT over channels [ch0, ch1) of one image: rows read in place, a zero row for the padding. */
static void dw_direct_task(const lc_conv *c, const dw_geom *g, const float *in, float *out, size_t ch0, size_t ch1,
                           unsigned char *slot, lc_gemm_params *ep) {
  const lc_conv_plan *p = &c->plan;
  size_t k = (size_t)c->d.kernel_w, s = (size_t)c->d.stride_w, iw = g->iw, ow = (size_t)p->ow;
  float *zero = (float *)slot;
  const float **rp = dw_slot_ptrs(c, g, DW_DIRECT, slot);
  memset(zero, 0, iw * sizeof(float));
  lc_f32_dw_row_unpadded_fn row = c->ctx->k->f32_dw_row_unpadded;
  for (size_t ch = ch0; ch < ch1; ch++) {
    const float *plane = in + ch * p->ihw, *w = c->wdw + ch * (size_t)c->taps;
    float *oplane = out + ch * p->ohw;
    ep->bias = c->bias ? c->bias + ch : NULL;
    for (size_t i = 0; i < g->hneed; i++) { /* the whole plane in one call */
      int64_t iy = (int64_t)i - p->pt;
      rp[i] = iy >= 0 && iy < p->ih ? plane + (size_t)iy * iw : zero;
    }
    row(ow, (size_t)p->oh, ow, s, k, (size_t)p->pl, iw, rp, w, oplane, ep);
  }
}

/* C8 over channels [ch0, ch1) of one image, 8 at a time. */
static void dw_c8_task(const lc_conv *c, const dw_geom *g, const float *in, float *out, size_t ch0, size_t ch1,
                       unsigned char *slot, lc_gemm_params *ep) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  lc_dw_c8_args a = {0};
  a.ws = (float *)slot;
  a.ihw = p->ihw, a.ohw = p->ohw, a.ih = (size_t)p->ih, a.iw = (size_t)p->iw, a.oh = (size_t)p->oh, a.ow = (size_t)p->ow;
  a.kh = (size_t)d->kernel_h, a.kw = (size_t)d->kernel_w, a.sh = (size_t)d->stride_h, a.sw = (size_t)d->stride_w;
  a.dh = (size_t)d->dilation_h, a.dw = (size_t)d->dilation_w, a.pt = (size_t)p->pt, a.pl = (size_t)p->pl;
  a.hp = g->hneed, a.wp = g->wneed, a.ep = ep;
  for (size_t ch = ch0; ch < ch1; ch += 8) {
    a.nch = lc_min_sz(8, ch1 - ch);
    a.in = in + ch * p->ihw, a.out = out + ch * p->ohw, a.w = c->wdw + ch * (size_t)c->taps;
    a.bias = c->bias ? c->bias + ch : NULL;
    c->ctx->k->f32_dw_c8(&a);
  }
}

static void dw_nchw_task(void *arg, size_t task, int thread) {
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  size_t C = (size_t)c->d.out_channels, n = task / p->ntiles, ch0 = task % p->ntiles * p->tile;
  size_t ch1 = lc_min_sz(ch0 + p->tile, C);
  int variant = p->variant;
  unsigned char *slot = jb->ws + (size_t)thread * p->ws_thread;
  const float *in = jb->in + n * C * p->ihw;
  float *out = jb->out + n * C * p->ohw;
  dw_geom g;
  dw_geometry(c, p, &g);
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.final = 1;
  if (variant == DW_DIRECT) {
    dw_direct_task(c, &g, in, out, ch0, ch1, slot, &ep);
    return;
  }
  if (variant == DW_C8) {
    dw_c8_task(c, &g, in, out, ch0, ch1, slot, &ep);
    return;
  }
  if (variant != DW_ROWS) {
    dw_plane_task(c, &g, variant, in, out, ch0, ch1, slot, &ep);
    return;
  }
  for (size_t ch = ch0; ch < ch1; ch++) {
    ep.bias = c->bias ? c->bias + ch : NULL;
    dw_rows(c, &g, in + ch * p->ihw, out + ch * p->ohw, ch, slot, &ep);
  }
}

static void dw_nhwc_task(void *arg, size_t task, int thread) {
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t C = (size_t)d->out_channels, oh = (size_t)p->oh;
  size_t n = task / oh;
  int64_t oy = (int64_t)(task % oh);
  const float *img = jb->in + n * C * p->ihw;
  float *orow = jb->out + (n * p->ohw + (size_t)oy * (size_t)p->ow) * C;
  const float **ptrs = (const float **)(jb->ws + (size_t)thread * p->ws_thread);
  lc_gemm_params ep;
  lc_conv_epilogue(c, &ep);
  ep.final = 1;
  ep.bias = c->bias;
  for (int64_t ox = 0; ox < p->ow; ox++) {
    size_t t = 0;
    for (int64_t ky = 0; ky < d->kernel_h; ky++) {
      int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
      for (int64_t kx = 0; kx < d->kernel_w; kx++, t++) {
        int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
        ptrs[t] = (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw) ? img + (size_t)(iy * p->iw + ix) * C : NULL;
      }
    }
    c->ctx->k->f32_dw_pixel(C, (size_t)c->taps, ptrs, c->wdw, orow + (size_t)ox * C, &ep);
  }
}

lc_status lc_depthwise_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  lc_route_launch(c, in, out, ws, (size_t)c->plan.n * c->plan.ntiles,
                  c->d.layout == LC_NCHW ? dw_nchw_task : dw_nhwc_task);
  return LC_OK;
}
