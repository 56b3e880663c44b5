/* Direct route: one GEMM microkernel call per (weight panel, kernel tap, K block of <= LC_KC
 * channels), the input read in place: NCHW B = the tap's input row span (channel stride H*W),
 * NHWC A = the tap's input pixels (stride stride_w*C). Pixels whose tap column falls in the
 * padding are left out of that call (they'd add 0), so the output tile is zeroed first and every
 * call accumulates; a k = 0 call per tile applies bias and activation. The fallback for any conv.
 * Each output element's arithmetic (taps in order, K blocks in order, one kernel) doesn't depend on
 * the thread count, the budget or which pixels share a call, so the output bits don't either. */
#include <string.h>

#include "conv/route.h"
#include "util/checked.h"
#include "util/error.h"

/* Output pixels per task (whole rows): the task's output tile (pw channels x this) stays in L2
 * while every tap of a weight panel passes over it. */
#define DIRECT_CHUNK_PIX 512

/* variant bits: low-budget ways that keep the arithmetic (the kernel's columns are independent). */
enum { DIRECT_QROW = 1,   /* Q8/Q4: dequantize one weight row per call instead of a panel */
       DIRECT_NOPACK = 2  /* NCHW stride_w > 1: one pixel per call in place instead of a gathered panel */
};

static size_t pix_pw(const lc_conv *c) { return c->d.layout == LC_NCHW ? c->ctx->k->nr : c->ctx->k->mr; }
static size_t kc_max(const lc_conv *c) { return lc_min_sz((size_t)c->cin_g, LC_KC); }
static int needs_pack(const lc_conv *c) { return c->d.layout == LC_NCHW && c->d.stride_w > 1; }

/* Slot layout: [dequantized weights][gathered panel]. */
static size_t qbuf_bytes(const lc_conv *c, int variant) {
  if (!c->qw) return 0;
  return variant & DIRECT_QROW ? lc_round_up(kc_max(c) * sizeof(float), 64) : lc_qpanel_bytes(c);
}
static size_t pack_bytes(const lc_conv *c, int variant) {
  if (!needs_pack(c) || (variant & DIRECT_NOPACK)) return 0;
  return lc_round_up(kc_max(c) * pix_pw(c) * sizeof(float), 64);
}

lc_status lc_direct_plan(const lc_conv *c, lc_conv_plan *p) {
  p->tile = lc_min_sz((size_t)p->oh, lc_max_sz(1, DIRECT_CHUNK_PIX / (size_t)p->ow)); /* rows per task */
  p->ntiles = lc_div_up((size_t)p->oh, p->tile);
  p->ocsplit = lc_route_ocsplit((size_t)p->n * (size_t)c->d.groups * p->ntiles, c->ctx->threads, c->npanels);
  int variant = 0;
  size_t ws = qbuf_bytes(c, 0) + pack_bytes(c, 0);
  int threads = lc_threads_for_budget(c, ws);
  if (threads == 0) {
    variant = DIRECT_QROW | DIRECT_NOPACK;
    ws = qbuf_bytes(c, variant);
    threads = lc_threads_for_budget(c, ws);
  }
  if (threads == 0)
    return lc_error(LC_ERR_BUDGET, "direct: a dequantized weight row needs %zu bytes, budget is %zu", ws,
                    c->ctx->budget);
  p->variant = variant;
  return lc_route_planned(p, LC_ROUTE_DIRECT, ws, threads);
}

/* One task's view: image, group, rows [oy0, oy1), weight panel buffers. */
typedef struct dtask {
  const lc_conv *c;
  const float *img_g; /* the image's input at the group's first channel */
  float *img_out;
  size_t oy0, oy1;
  float *qbuf, *pack;
  lc_gemm_params ep;
} dtask;

/* C (+)= W[oc0 + i0 .. + mi][k block] x input of tap (ky, kx) at channels [c0, c0 + kn), output
 * columns [lo, hi) of every row of the task. w: element (i, k) at w[i * wrs + k * wcs]. The calls
 * prefetch next (nbytes, the panel's next weight block; NULL: none): inside a net the weights come
 * from DRAM (IResNet-34's 512 -> 512 3x3 s2 NHWC: 2.4 ms there against 1.7 alone). */
static void tap_calls(dtask *t, size_t oc, size_t mi, const float *w, size_t wrs, size_t wcs, int64_t ky, int64_t kx,
                      size_t c0, size_t kn, size_t lo, size_t hi, const void *next, size_t nbytes) {
  const lc_conv *c = t->c;
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  const lc_kernels *kt = c->ctx->k;
  size_t pp = pix_pw(c), cin = (size_t)d->in_channels, cout = (size_t)d->out_channels, sw = (size_t)d->stride_w;
  int64_t xoff = kx * d->dilation_w - p->pl; /* input column of output column 0 */
  size_t calls = (t->oy1 - t->oy0) * lc_div_up(hi - lo, pp), call = 0;
  for (size_t oy = t->oy0; oy < t->oy1; oy++) {
    int64_t iy = (int64_t)oy * d->stride_h - p->pt + ky * d->dilation_h;
    if (iy < 0 || iy >= p->ih) continue; /* the whole row of this tap is padding */
    size_t rowpix = oy * (size_t)p->ow;
    for (size_t a = lo; a < hi; a += pp) {
      size_t nj = lc_min_sz(pp, hi - a), pix = rowpix + a;
      size_t ix = (size_t)(iy * p->iw + (int64_t)a * (int64_t)sw + xoff); /* input pixel of column a */
      lc_pf_spread(&t->ep, next, nbytes, calls, kn, call++);
      if (d->layout == LC_NHWC) {
        const float *x = t->img_g + ix * cin + c0;
        kt->f32_gemm(nj, mi, kn, x, sw * cin, 1, w, wcs, t->img_out + pix * cout + oc, cout, &t->ep);
        continue;
      }
      const float *x = t->img_g + c0 * p->ihw + ix;
      float *o = t->img_out + oc * p->ohw + pix;
      if (sw == 1) {
        kt->f32_gemm(mi, nj, kn, w, wrs, wcs, x, p->ihw, o, p->ohw, &t->ep);
      } else if (t->pack) {
        for (size_t ch = 0; ch < kn; ch++) kt->f32_gather(t->pack + ch * pp, x + ch * p->ihw, nj, sw);
        kt->f32_gemm(mi, nj, kn, w, wrs, wcs, t->pack, pp, o, p->ohw, &t->ep);
      } else {
        for (size_t j = 0; j < nj; j++) kt->f32_gemm(mi, 1, kn, w, wrs, wcs, x + j * sw, p->ihw, o + j, p->ohw, &t->ep);
      }
    }
  }
  t->ep.pf = NULL;
}

/* Output columns [*lo, *hi) whose input column under tap column kx lies inside the image (lo <= hi). */
static void tap_cols(const lc_conv *c, int64_t kx, int64_t *lo, int64_t *hi) {
  const lc_conv_plan *p = &c->plan;
  int64_t sw = c->d.stride_w, off = kx * c->d.dilation_w - p->pl;
  *lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  *hi = off < p->iw ? (p->iw - 1 - off) / sw + 1 : 0;
  if (*hi > p->ow) *hi = p->ow;
  if (*lo > *hi) *lo = *hi;
}

/* lc_conv_desc.pad_values: what the padding pixels the tap calls left out add (c->wpadv, per output
 * channel and tap), for output channels [oc, oc + mi) of the task's rows. */
static void pad_sums(dtask *t, size_t oc, size_t mi) {
  const lc_conv *c = t->c;
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t ow = (size_t)p->ow, cout = (size_t)d->out_channels, taps = (size_t)c->taps;
  int nchw = d->layout == LC_NCHW;
  for (size_t tap = 0; tap < taps; tap++) {
    int64_t ky = (int64_t)tap / d->kernel_w, lo, hi;
    tap_cols(c, (int64_t)tap % d->kernel_w, &lo, &hi);
    for (size_t oy = t->oy0; oy < t->oy1; oy++) {
      int64_t iy = (int64_t)oy * d->stride_h - p->pt + ky * d->dilation_h;
      int row_out = iy < 0 || iy >= p->ih;
      for (size_t ox = 0; ox < ow; ox++) {
        if (!row_out && (int64_t)ox == lo) ox = (size_t)hi; /* the columns the calls covered */
        if (ox >= ow) break;
        size_t pix = oy * ow + ox;
        for (size_t i = 0; i < mi; i++)
          t->img_out[nchw ? (oc + i) * p->ohw + pix : pix * cout + oc + i] += c->wpadv[(oc + i) * taps + tap];
      }
    }
  }
}

/* Output channels [oc, oc + mi) (absolute) of the task's rows: zero, every tap, then the epilogue. */
static void panel_rows(dtask *t, int64_t g, size_t q, size_t i0, size_t mi) {
  const lc_conv *c = t->c;
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  size_t pw = c->pw, oc = (size_t)g * (size_t)c->cout_g + q * pw + i0, cout = (size_t)d->out_channels;
  size_t ow = (size_t)p->ow, pix0 = t->oy0 * ow, np = (t->oy1 - t->oy0) * ow, cin_g = (size_t)c->cin_g;
  int nchw = d->layout == LC_NCHW, qrow = (c->plan.variant & DIRECT_QROW) && c->qw;
  for (size_t i = 0; nchw && i < mi; i++) memset(t->img_out + (oc + i) * p->ohw + pix0, 0, np * sizeof(float));
  for (size_t j = 0; !nchw && j < np; j++) memset(t->img_out + (pix0 + j) * cout + oc, 0, mi * sizeof(float));
  t->ep.accumulate = 1;
  t->ep.final = 0;
  for (int64_t tap = 0; tap < c->taps; tap++) {
    int64_t ky = tap / d->kernel_w, kx = tap % d->kernel_w, lo, hi;
    tap_cols(c, kx, &lo, &hi);
    if (lo >= hi) continue; /* every column of this tap is padding */
    for (size_t c0 = 0; c0 < cin_g; c0 += LC_KC) {
      size_t kn = lc_min_sz(LC_KC, cin_g - c0), k0 = (size_t)tap * cin_g + c0, wrs, wcs;
      const float *w;
      if (qrow) {
        lc_dequant_rows_with(c->ctx->k, c->qw, oc, 1, k0, kn, t->qbuf, kn); /* in range by construction */
        w = t->qbuf;
        wrs = kn;
        wcs = 1;
      } else {
        w = lc_conv_wpanel(c, g, q, k0, kn, t->qbuf, &wrs, &wcs);
      }
      /* fp32: the next block of this panel (next K block, else the next tap's first) */
      const void *next = NULL;
      size_t nk = c0 + LC_KC < cin_g ? k0 + LC_KC : (size_t)(tap + 1) * cin_g, nkn = 0, r_, c_;
      if (!c->qw && nk < c->K) {
        nkn = lc_min_sz(LC_KC, cin_g - nk % cin_g);
        next = lc_conv_wpanel(c, g, q, nk, nkn, NULL, &r_, &c_);
      }
      tap_calls(t, oc, mi, w, wrs, wcs, ky, kx, c0, kn, (size_t)lo, (size_t)hi, next, nkn * pw * sizeof(float));
    }
  }
  if (c->padv) pad_sums(t, oc, mi);
  /* Bias and activation: k = 0 reads neither operand. */
  t->ep.final = 1;
  t->ep.bias = c->bias ? c->bias + oc : NULL;
  size_t pp = pix_pw(c);
  const float *dummy = t->img_g;
  for (size_t j = 0; j < np; j += pp) {
    size_t nj = lc_min_sz(pp, np - j), pix = pix0 + j;
    if (nchw)
      c->ctx->k->f32_gemm(mi, nj, 0, dummy, 1, 1, dummy, 1, t->img_out + oc * p->ohw + pix, p->ohw, &t->ep);
    else
      c->ctx->k->f32_gemm(nj, mi, 0, dummy, 1, 1, dummy, 1, t->img_out + pix * cout + oc, cout, &t->ep);
  }
  t->ep.bias = NULL;
}

static void direct_task(void *arg, size_t task, int thread) {
  const lc_route_job *jb = arg;
  const lc_conv *c = jb->c;
  const lc_conv_plan *p = &c->plan;
  lc_task_view v = lc_task_view_of(jb, task, thread);
  size_t q0 = v.tp.q0, q1 = v.tp.q1;
  int64_t g = (int64_t)v.tp.g;
  int nchw = c->d.layout == LC_NCHW;
  dtask t;
  t.c = c;
  t.img_g = v.img_g;
  t.img_out = v.img_out;
  t.oy0 = v.tp.tile * p->tile;
  t.oy1 = lc_min_sz(t.oy0 + p->tile, (size_t)p->oh);
  unsigned char *slot = v.slot;
  size_t qb = qbuf_bytes(c, p->variant);
  t.qbuf = qb ? (float *)slot : NULL;
  t.pack = pack_bytes(c, p->variant) ? (float *)(slot + qb) : NULL;
  lc_conv_epilogue(c, &t.ep);
  t.ep.bias_per_row = nchw;
  size_t pw = c->pw, coutg = (size_t)c->cout_g;
  for (size_t q = q0; q < q1; q++) {
    size_t noc = lc_min_sz(pw, coutg - q * pw), step = (p->variant & DIRECT_QROW) && c->qw ? 1 : noc;
    for (size_t i0 = 0; i0 < noc; i0 += step) panel_rows(&t, g, q, i0, step);
  }
}

lc_status lc_direct_run(const lc_conv *c, const float *in, float *out, unsigned char *ws) {
  const lc_conv_plan *p = &c->plan;
  lc_route_launch(c, in, out, ws, (size_t)p->n * (size_t)c->d.groups * p->ntiles * p->ocsplit, direct_task);
  return LC_OK;
}
