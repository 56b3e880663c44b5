#include "conv/i8planes.h"

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

void lc_i8planes_panel(const lc_conv *c, const lc_i8planes *g, const unsigned char *planes, size_t pix0, size_t np,
                       size_t b0, size_t nb, const uint32_t *nq, unsigned char *dst) {
  const lc_conv_desc *d = &c->d;
  size_t ow = (size_t)c->plan.ow, wp = g->wp, pix = g->pix, kw = (size_t)d->kernel_w, base[16], qt = 0;
  size_t sh = (size_t)d->stride_h, sw = (size_t)d->stride_w, dh = (size_t)d->dilation_h, dw = (size_t)d->dilation_w;
  for (size_t i = 0; i < 16; i++) { /* pixels past np repeat the first: computed and dropped */
    size_t o = pix0 + (i < np ? i : 0);
    base[i] = o / ow * sh * wp + o % ow * sw;
  }
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
