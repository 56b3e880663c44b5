#include "conv/i8planes.h"

#include <stdint.h>
#include <string.h>

#include "kernels/registry.h"
#include "quant/qkernels.h"
#include "util/checked.h"

int lc_i8planes_geo(const lc_conv *c, const lc_conv_plan *p, lc_i8planes *g, size_t *total) {
  const lc_qmatrix *w = c->qw;
  if (!w || !c->ctx->k->i8fill || c->d.layout != LC_NCHW || c->taps < 2 || w->kc != (size_t)c->cin_g || !w->bpt)
    return 0;
  size_t hp = (size_t)(p->ih + p->pt + p->pb), n;
  g->wp = (size_t)(p->iw + p->pl + p->pr);
  g->bpt = w->bpt, g->qblock = lc_div_up(w->block, 4);
  g->quads = (w->bpt - 1) * g->qblock + lc_div_up(w->tail, 4);
  size_t codes, scales;
  if (!lc_mul_sz(hp, g->wp, &g->pix) || !lc_mul_sz(g->quads, g->pix, &codes) || !lc_mul_sz(codes, 4, &codes) ||
      !lc_mul_sz(g->bpt, g->pix, &scales) || !lc_mul_sz(scales, 4, &scales) || codes > SIZE_MAX / 2 ||
      scales > SIZE_MAX / 8)
    return 0;
  g->xs_off = lc_round_up(codes, 64);
  g->isum_off = g->xs_off + lc_round_up(scales, 64);
  g->xsum_off = g->isum_off + lc_round_up(scales, 64);
  g->bytes = g->xsum_off + lc_round_up(scales, 64);
  return lc_mul_sz((size_t)p->n, (size_t)c->d.groups, &n) && lc_mul_sz(n, g->bytes, total) && *total <= SIZE_MAX / 4;
}

void lc_i8planes_fill(const lc_conv *c, const lc_i8planes *g, const float *img_g, size_t j, size_t y0, size_t y1,
                      unsigned char *planes) {
  const lc_qmatrix *w = c->qw;
  const lc_conv_plan *p = &c->plan;
  size_t len = lc_qblock_len(w, j), nq = lc_div_up(len, 4), pix = g->pix, wp = g->wp;
  size_t ih = (size_t)p->ih, iw = (size_t)p->iw, pt = (size_t)p->pt, pl = (size_t)p->pl, ihw = p->ihw;
  uint32_t *codes = (uint32_t *)planes + j * g->qblock * pix;
  float *xs = (float *)(planes + g->xs_off) + j * pix, *xm = (float *)(planes + g->xsum_off) + j * pix;
  int32_t *is = (int32_t *)(planes + g->isum_off) + j * pix;
  for (size_t y = y0; y < y1; y++) {
    size_t row = y * wp;
    int inside = y >= pt && y - pt < ih;
    /* padding: zero codes and scales (whole rows above and below, the side columns) */
    size_t z[2][2] = {{0, inside ? pl : wp}, {inside ? pl + iw : wp, wp}};
    for (int s = 0; s < 2; s++) {
      size_t a = row + z[s][0], n = z[s][1] - z[s][0];
      if (!n) continue;
      for (size_t q = 0; q < nq; q++) memset(codes + q * pix + a, 0, n * 4);
      memset(xs + a, 0, n * 4), memset(xm + a, 0, n * 4), memset(is + a, 0, n * 4);
    }
    if (inside) {
      size_t at = row + pl;
      c->ctx->k->i8fill(img_g + j * w->block * ihw + (y - pt) * iw, ihw, len, iw, codes + at, pix, xs + at, is + at,
                        xm + at);
    }
  }
}

void lc_i8planes_runs(const size_t *base, size_t np, size_t step, lc_i8runs *ru) {
  memset(ru, 0, sizeof *ru);
  ru->step = (int)step;
  for (size_t i = 0; i < np && i < 16; i++) {
    ru->off[i] = (int32_t)base[i];
    if (i && base[i] == base[i - 1] + step) {
      ru->lanes[ru->n - 1] |= (uint16_t)(1u << i);
      continue;
    }
    ru->at[ru->n] = (int64_t)base[i] - (int64_t)(step * i);
    ru->lanes[ru->n++] = (uint16_t)(1u << i);
  }
  for (int s = 0; step == 2 && s < ru->n; s++) { /* elements [2 first, 2 last] of the run's frame */
    unsigned l = ru->lanes[s], first = (unsigned)__builtin_ctz(l), last = 31u - (unsigned)__builtin_clz(l);
    uint32_t m = (uint32_t)((((uint64_t)1 << (2 * last + 1)) - 1) & ~(((uint64_t)1 << (2 * first)) - 1));
    ru->load[s][0] = (uint16_t)m, ru->load[s][1] = (uint16_t)(m >> 16);
  }
}

/* Plane offsets of output pixels [pix0, pix0 + min(np, 16)); lanes past np repeat the first. */
static void panel_base(const lc_conv *c, const lc_i8planes *g, size_t pix0, size_t np, size_t *base) {
  size_t ow = (size_t)c->plan.ow, sh = (size_t)c->d.stride_h, sw = (size_t)c->d.stride_w;
  size_t y = pix0 / ow, x = pix0 % ow;
  for (size_t i = 0; i < 16; i++) {
    base[i] = i < np ? y * sh * g->wp + x * sw : base[0];
    if (++x == ow) x = 0, y++;
  }
}

/* One panel a value at a time (tables without i8gather). */
static void panel_scalar(const lc_conv *c, const lc_i8planes *g, const unsigned char *planes, size_t pix0, size_t np,
                         size_t b0, size_t nb, const uint32_t *nq, unsigned char *dst) {
  const lc_conv_desc *d = &c->d;
  size_t ow = (size_t)c->plan.ow, wp = g->wp, pix = g->pix, kw = (size_t)d->kernel_w, base[16], qt = 0;
  size_t sw = (size_t)d->stride_w, dh = (size_t)d->dilation_h, dw = (size_t)d->dilation_w;
  panel_base(c, g, pix0, np, base); /* pixels past np: computed and dropped */
  int contig = sw == 1 && np == 16 && pix0 % ow + 16 <= ow;
  for (size_t b = 0; b < nb; b++) qt += nq[b];
  uint32_t *xq = (uint32_t *)dst;
  float *xs = (float *)(dst + qt * 64), *xm = xs + 2 * nb * 16;
  int32_t *is = (int32_t *)xs + nb * 16;
  const uint32_t *cq = (const uint32_t *)planes;
  const float *pxs = (const float *)(planes + g->xs_off), *pxm = (const float *)(planes + g->xsum_off);
  const int32_t *pis = (const int32_t *)(planes + g->isum_off);
  for (size_t b = 0; b < nb; b++) {
    size_t t = (b0 + b) / g->bpt, j = (b0 + b) % g->bpt;
    size_t toff = t / kw * dh * wp + t % kw * dw;
    for (size_t q = 0; q < nq[b]; q++, xq += 16) {
      const uint32_t *s = cq + (j * g->qblock + q) * pix + toff;
      if (contig)
        memcpy(xq, s + base[0], 64);
      else
        for (size_t i = 0; i < 16; i++) xq[i] = s[base[i]];
    }
    size_t so = j * pix + toff;
    for (size_t i = 0; i < 16; i++)
      xs[b * 16 + i] = pxs[so + base[i]], is[b * 16 + i] = pis[so + base[i]], xm[b * 16 + i] = pxm[so + base[i]];
  }
}

#define GATHER_PANELS 32 /* panels of one gather pass: their runs live on the stack */

void lc_i8planes_panels(const lc_conv *c, const lc_i8planes *g, const unsigned char *planes, size_t pix0, size_t np,
                        size_t b0, size_t nb, const uint32_t *nq, unsigned char *dst, size_t xpan) {
  lc_i8gather_fn gather = c->ctx->k->i8gather;
  if (!gather || g->pix > INT32_MAX) { /* the gather's offsets are int32 lanes */
    for (size_t j = 0; j < np; j += 16)
      panel_scalar(c, g, planes, pix0 + j, np - j < 16 ? np - j : 16, b0, nb, nq, dst + j / 16 * xpan);
    return;
  }
  const lc_conv_desc *d = &c->d;
  size_t wp = g->wp, pix = g->pix, kw = (size_t)d->kernel_w, dh = (size_t)d->dilation_h, dw = (size_t)d->dilation_w;
  size_t qt = 0, rs = (g->isum_off - g->xs_off) / 4; /* scales, sums, products: equal arrays in a row */
  for (size_t b = 0; b < nb; b++) qt += nq[b];
  const uint32_t *cq = (const uint32_t *)planes, *sc = (const uint32_t *)(planes + g->xs_off);
  lc_i8runs ru[GATHER_PANELS];
  for (size_t j0 = 0; j0 < np; j0 += 16 * GATHER_PANELS) {
    size_t npan = (np - j0 + 15) / 16, base[16];
    if (npan > GATHER_PANELS) npan = GATHER_PANELS;
    for (size_t k = 0; k < npan; k++) {
      size_t o = j0 + 16 * k, n = np - o < 16 ? np - o : 16;
      panel_base(c, g, pix0 + o, n, base);
      lc_i8planes_runs(base, n, (size_t)d->stride_w, &ru[k]);
    }
    unsigned char *p0 = dst + j0 / 16 * xpan;
    uint32_t *xq = (uint32_t *)p0, *xs = (uint32_t *)(p0 + qt * 64);
    for (size_t b = 0; b < nb; b++) {
      size_t t = (b0 + b) / g->bpt, j = (b0 + b) % g->bpt, toff = t / kw * dh * wp + t % kw * dw;
      gather(cq + j * g->qblock * pix + toff, pix, nq[b], ru, npan, xq, 16, xpan / 4);
      xq += 16 * nq[b];
      gather(sc + j * pix + toff, rs, 3, ru, npan, xs + b * 16, nb * 16, xpan / 4);
    }
  }
}
