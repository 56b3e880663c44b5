/* Packing of the patch operand (im2col rows) into panels [k][pp], pixel index fastest. */
#ifndef LC_CONV_PACK_H
#define LC_CONV_PACK_H

#include "conv/conv.h"

/* Largest panel width any kernel table uses. */
#define LC_PP_MAX 64

/* Pixels of a panel for one tap.
 * NHWC: src[j] points at channel 0 of pixel j's input (the zero pointer for padding).
 * NCHW: the panel as segments of pixels [j0, j0 + len) whose sources are src + i * stride
 * (src NULL: padding, zeros); at most 3 per output row the panel touches (left pad, run, right pad). */
typedef struct lc_tap_seg {
  size_t j0, len, stride;
  const float *src;
} lc_tap_seg;

typedef struct lc_tap_src {
  const float *src[LC_PP_MAX];
  lc_tap_seg seg[3 * LC_PP_MAX];
  size_t nseg;
} lc_tap_src;

/* Per-pixel sources of tap t for pixels [pix0, pix0 + np) of one image/group (any layout). */
void lc_tap_sources(const lc_conv *c, const float *img_g, size_t pix0, size_t np, int64_t t, const float *zero,
                    lc_tap_src *s);

/* Writes rows k in [k0, k0 + kn) of the panel (dst row r = k - k0, stride pp) from the input, or
 * from a prebuilt pointer table when table != NULL (table[j * taps + t], zero marking padding). */
void lc_pack_panel(const lc_conv *c, const float *img_g, size_t pix0, size_t np, size_t k0, size_t kn, size_t pp,
                   const float *const *table, const float *zero, float *dst);

#endif
