/* The input of an i8gemm conv quantized once per run (route_i8gemm.c's variant I8_PLANES). Where
 * every weight block lies within one tap (blocks of input channels), an output pixel's activation
 * block is one input pixel's channel block: it is quantized once per input pixel instead of once
 * per tap that reads it (9x fewer for 3x3 stride 1), and a patch panel is a copy of 4-byte quads.
 * Per image and group, over the padded input (padding: zero codes and scales): codes [quad][pixel]
 * (4 channels a pixel, one tap's quads), and per channel block [block][pixel] the scale, the code
 * sum and their product; the values and roundings are lc_i8prep_fn's, so outputs keep their bits. */
#ifndef LC_CONV_I8PLANES_H
#define LC_CONV_I8PLANES_H

#include <stddef.h>
#include <stdint.h>

#include "conv/conv.h"
#include "quant/i8gemm.h"

typedef struct lc_i8planes {
  size_t wp, pix;            /* padded columns and pixels */
  size_t quads, bpt, qblock; /* quads of one tap's channels, channel blocks, quads of a full block */
  size_t xs_off, isum_off, xsum_off, bytes; /* per image and group, from its planes' start */
} lc_i8planes;

/* The planes of c under plan p; 0 where the variant does not apply (one tap, blocks across taps,
 * not NCHW, no lc_kernels.i8fill in the table) or a size overflows. total: bytes for every image and group. */
int lc_i8planes_geo(const lc_conv *c, const lc_conv_plan *p, lc_i8planes *g, size_t *total);

/* Padded rows [y0, y1) of channel block j of one image and group (img_g: its NCHW input). */
void lc_i8planes_fill(const lc_conv *c, const lc_i8planes *g, const float *img_g, size_t j, size_t y0, size_t y1,
                      unsigned char *planes);

/* The runs of a panel whose lane i < np reads plane offset base[i] (step: the conv's column stride). */
void lc_i8planes_runs(const size_t *base, size_t np, size_t step, lc_i8runs *ru);

/* The int8 panels of output pixels [pix0, pix0 + np) (16 a panel, xpan bytes apart) for row blocks
 * [b0, b0 + nb) (quads nq[]): each xq [quads][16][4], then per block 16 scales, code sums, products
 * (lc_i8act's arrays). */
void lc_i8planes_panels(const lc_conv *c, const lc_i8planes *g, const unsigned char *planes, size_t pix0, size_t np,
                        size_t b0, size_t nb, const uint32_t *nq, unsigned char *dst, size_t xpan);

#endif
