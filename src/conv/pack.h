/* Packing of the patch operand (im2col rows) into panels [k][pp], pixel index fastest. */
#ifndef LC_CONV_PACK_H
#define LC_CONV_PACK_H

#include "conv/conv.h"

/* Largest panel width any kernel table uses. */
#define LC_PP_MAX 64

/* Source of one tap for the pixels of a panel: src[j] points at channel 0 of the input pixel
 * (the zero pointer for padding); run = r > 0 when src[j] = src[0] + j * r for all j (interior
 * segments of one row, NCHW only), and then only src[0] is set. */
typedef struct lc_tap_src {
  const float *src[LC_PP_MAX];
  size_t run;
} lc_tap_src;

/* Sources of tap t for pixels [pix0, pix0 + np) of one image/group; zero = pointer used for padding
 * taps (NULL or a zero vector). */
void lc_tap_sources(const lc_conv *c, const float *img_g, size_t pix0, size_t np, int64_t t, const float *zero,
                    lc_tap_src *s);

/* Writes rows k in [k0, k0 + kn) of the panel (dst row r = k - k0, stride pp) from the tap sources
 * provider: calls lc_tap_sources per tap, or reads a prebuilt table when table != NULL
 * (table[j * taps + t], zero marking padding). */
void lc_pack_panel(const lc_conv *c, const float *img_g, size_t pix0, size_t np, size_t k0, size_t kn, size_t pp,
                   const float *const *table, const float *zero, float *dst);

#endif
