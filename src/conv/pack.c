#include "conv/pack.h"

#include <string.h>

void lc_tap_sources(const lc_conv *c, const float *img_g, size_t pix0, size_t np, int64_t t, const float *zero,
                    lc_tap_src *s) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  int64_t ky = t / d->kernel_w, kx = t % d->kernel_w;
  int64_t pixstride = d->layout == LC_NCHW ? 1 : d->in_channels;
  int64_t oy = (int64_t)pix0 / p->ow, ox = (int64_t)pix0 % p->ow;
  for (size_t j = 0; j < np; j++) {
    int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
    int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
    s->src[j] = (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw) ? img_g + (iy * p->iw + ix) * pixstride : zero;
    if (++ox == p->ow) {
      ox = 0;
      oy++;
    }
  }
}

static void add_seg(lc_tap_src *s, size_t j0, size_t len, const float *src, size_t stride) {
  if (!len) return;
  lc_tap_seg *g = &s->seg[s->nseg++];
  g->j0 = j0;
  g->len = len;
  g->src = src;
  g->stride = stride;
}

/* NCHW segments computed from the geometry: per output row, the valid input columns form one
 * run of stride stride_w, with padding on either side. */
static void tap_segments(const lc_conv *c, const float *img_g, size_t pix0, size_t np, int64_t t, lc_tap_src *s) {
  const lc_conv_desc *d = &c->d;
  const lc_conv_plan *p = &c->plan;
  int64_t ky = t / d->kernel_w, kx = t % d->kernel_w, sw = d->stride_w;
  int64_t oy = (int64_t)pix0 / p->ow, ox = (int64_t)pix0 % p->ow;
  s->nseg = 0;
  for (size_t j = 0; j < np;) {
    int64_t len = p->ow - ox;
    if (len > (int64_t)(np - j)) len = (int64_t)(np - j);
    int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
    if (iy < 0 || iy >= p->ih) {
      add_seg(s, j, (size_t)len, NULL, 0);
    } else {
      int64_t ix0 = ox * sw - p->pl + kx * d->dilation_w; /* input column of the row's first pixel */
      int64_t lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;  /* first pixel inside the image */
      int64_t hi = ix0 < p->iw ? (p->iw - 1 - ix0) / sw + 1 : 0;
      if (lo > len) lo = len;
      if (hi > len) hi = len;
      if (hi < lo) hi = lo;
      add_seg(s, j, (size_t)lo, NULL, 0);
      add_seg(s, j + (size_t)lo, (size_t)(hi - lo), img_g + iy * p->iw + ix0 + lo * sw, (size_t)sw);
      add_seg(s, j + (size_t)hi, (size_t)(len - hi), NULL, 0);
    }
    j += (size_t)len;
    ox = 0;
    oy++;
  }
}

/* NCHW segments from a pointer table: maximal runs of consecutive addresses, or of padding. */
static void table_segments(const float *const *tab, size_t taps, size_t np, const float *zero, lc_tap_src *s) {
  s->nseg = 0;
  for (size_t j = 0; j < np;) {
    const float *a = tab[j * taps];
    size_t e = j + 1;
    if (a == zero) {
      while (e < np && tab[e * taps] == zero) e++;
      add_seg(s, j, e - j, NULL, 0);
    } else {
      while (e < np && tab[e * taps] == a + (e - j)) e++;
      add_seg(s, j, e - j, a, 1);
    }
    j = e;
  }
}

static void pack_tap_nchw(const lc_conv *c, const lc_tap_src *s, size_t cs, size_t c0, size_t c1, float *dst,
                          size_t pp) {
  for (size_t ch = c0; ch < c1; ch++, dst += pp)
    for (size_t i = 0; i < s->nseg; i++) {
      const lc_tap_seg *g = &s->seg[i];
      float *o = dst + g->j0;
      if (!g->src) {
        memset(o, 0, g->len * sizeof(float));
      } else if (g->stride == 1) {
        memcpy(o, g->src + ch * cs, g->len * sizeof(float));
      } else {
        c->ctx->k->f32_gather(o, g->src + ch * cs, g->len, g->stride);
      }
    }
}

static void pack_tap_nhwc(const lc_tap_src *s, const float *zero, size_t np, size_t c0, size_t c1, float *dst,
                          size_t pp) {
  for (size_t j = 0; j < np; j++) {
    const float *src = s->src[j];
    float *o = dst + j;
    if (src == zero) {
      for (size_t ch = c0; ch < c1; ch++, o += pp) *o = 0.0f;
    } else {
      for (size_t ch = c0; ch < c1; ch++, o += pp) *o = src[ch];
    }
  }
}

void lc_pack_panel(const lc_conv *c, const float *img_g, size_t pix0, size_t np, size_t k0, size_t kn, size_t pp,
                   const float *const *table, const float *zero, float *dst) {
  size_t cin = (size_t)c->cin_g, taps = (size_t)c->taps;
  int nchw = c->d.layout == LC_NCHW;
  lc_tap_src s;
  for (size_t k = k0, kend = k0 + kn; k < kend;) {
    size_t t = k / cin, ch0 = k % cin;
    size_t ch1 = cin < ch0 + (kend - k) ? cin : ch0 + (kend - k);
    if (nchw) {
      if (table)
        table_segments(table + t, taps, np, zero, &s);
      else
        tap_segments(c, img_g, pix0, np, (int64_t)t, &s);
      pack_tap_nchw(c, &s, c->plan.ihw, ch0, ch1, dst + (k - k0) * pp, pp);
    } else {
      if (table)
        for (size_t j = 0; j < np; j++) s.src[j] = table[j * taps + t];
      else
        lc_tap_sources(c, img_g, pix0, np, (int64_t)t, zero, &s);
      pack_tap_nhwc(&s, zero, np, ch0, ch1, dst + (k - k0) * pp, pp);
    }
    k += ch1 - ch0;
  }
}
