#include "conv/pack.h"

#include <string.h>

void lc_tap_sources(const lc_conv *c, const float *img_g, size_t pix0, size_t np, int64_t t, const float *zero,
                    lc_tap_src *s) {
  const lc_conv_desc *d = &c->d;
  const lc_plan *p = &c->plan;
  int64_t ky = t / d->kernel_w, kx = t % d->kernel_w;
  int64_t pixstride = d->layout == LC_NCHW ? 1 : d->in_channels;
  int64_t oy = (int64_t)pix0 / p->ow, ox = (int64_t)pix0 % p->ow;
  /* Fast path (NCHW): the panel sits in one output row and the tap's input row segment is inside
   * the image, so the sources are a run src[0] + j * stride_w and only src[0] is needed. */
  if (d->layout == LC_NCHW && ox + (int64_t)np <= p->ow) {
    int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
    int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
    if (iy >= 0 && iy < p->ih && ix >= 0 && ix + ((int64_t)np - 1) * d->stride_w < p->iw) {
      s->src[0] = img_g + iy * p->iw + ix;
      s->run = (size_t)d->stride_w;
      return;
    }
  }
  int contiguous = 1;
  for (size_t j = 0; j < np; j++) {
    int64_t iy = oy * d->stride_h - p->pt + ky * d->dilation_h;
    int64_t ix = ox * d->stride_w - p->pl + kx * d->dilation_w;
    if (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw) {
      s->src[j] = img_g + (iy * p->iw + ix) * pixstride;
    } else {
      s->src[j] = zero;
      contiguous = 0;
    }
    if (j && contiguous && s->src[j] != s->src[j - 1] + 1) contiguous = 0;
    if (++ox == p->ow) {
      ox = 0;
      oy++;
    }
  }
  s->run = contiguous && d->layout == LC_NCHW;
}

static void pack_tap(const lc_conv *c, const lc_tap_src *s, const float *zero, size_t np, size_t c0, size_t c1,
                     float *dst, size_t pp) {
  if (c->d.layout == LC_NCHW) {
    size_t cs = c->plan.ihw;
    for (size_t ch = c0; ch < c1; ch++, dst += pp) {
      if (s->run == 1) {
        memcpy(dst, s->src[0] + ch * cs, np * sizeof(float));
        continue;
      }
      if (s->run) {
        const float *src = s->src[0] + ch * cs;
        for (size_t j = 0; j < np; j++) dst[j] = src[j * s->run];
        continue;
      }
      for (size_t j = 0; j < np; j++) dst[j] = s->src[j] != zero ? s->src[j][ch * cs] : 0.0f;
    }
  } else {
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
}

void lc_pack_panel(const lc_conv *c, const float *img_g, size_t pix0, size_t np, size_t k0, size_t kn, size_t pp,
                   const float *const *table, const float *zero, float *dst) {
  size_t cin = (size_t)c->cin_g, taps = (size_t)c->taps;
  size_t k = k0, kend = k0 + kn;
  lc_tap_src s;
  while (k < kend) {
    size_t t = k / cin, ch0 = k % cin;
    size_t ch1 = cin < ch0 + (kend - k) ? cin : ch0 + (kend - k);
    if (table) {
      int contiguous = 1;
      for (size_t j = 0; j < np; j++) {
        s.src[j] = table[j * taps + t];
        if (s.src[j] == zero || (j && s.src[j] != s.src[j - 1] + 1)) contiguous = 0;
      }
      s.run = contiguous && c->d.layout == LC_NCHW;
    } else {
      lc_tap_sources(c, img_g, pix0, np, (int64_t)t, zero, &s);
    }
    pack_tap(c, &s, zero, np, ch0, ch1, dst + (k - k0) * pp, pp);
    k += ch1 - ch0;
  }
}
