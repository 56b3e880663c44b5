/* Descriptor defaults, validation, output sizes and auto_pad. */
#include <math.h>
#include <string.h>

#include "conv/conv.h"
#include "util/checked.h"
#include "util/error.h"

void lc_conv_desc_init(lc_conv_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->groups = 1;
  d->stride_h = d->stride_w = 1;
  d->dilation_h = d->dilation_w = 1;
  d->layout = LC_NCHW;
  d->activation = LC_ACT_NONE;
  d->act_min = -3.402823466e38f;
  d->act_max = 3.402823466e38f;
  d->act_alpha = 0.01f;
  d->post_mul = 1.0f;
  d->route = LC_ROUTE_AUTO;
}

/* Sizes beyond this are rejected outright: keeps every int64 expression below far from overflow
 * (products of two such values still fit) while allowing any realistic tensor. */
#define LC_DIM_MAX ((int64_t)1 << 30)

int64_t lc_conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                         int64_t pad_end) {
  if (in <= 0 || kernel <= 0 || stride <= 0 || dilation <= 0 || pad_begin < 0 || pad_end < 0) return -1;
  if (in > LC_DIM_MAX || kernel > LC_DIM_MAX || stride > LC_DIM_MAX || dilation > LC_DIM_MAX ||
      pad_begin > LC_DIM_MAX || pad_end > LC_DIM_MAX)
    return -1;
  int64_t span = dilation * (kernel - 1) + 1; /* < 2^60 */
  int64_t padded = in + pad_begin + pad_end;
  if (padded < span) return -1;
  return (padded - span) / stride + 1;
}

static lc_status resolve_dim(const char *what, lc_auto_pad ap, int64_t in, int64_t k, int64_t s, int64_t dil,
                             int64_t pb, int64_t pe, int64_t *ob, int64_t *oe, int64_t *out) {
  if (in <= 0) return lc_error(LC_ERR_INVALID_ARG, "conv: input %s %lld must be >= 1", what, (long long)in);
  if (in > LC_DIM_MAX)
    return lc_error(LC_ERR_OVERFLOW, "conv: input %s %lld is larger than 2^30", what, (long long)in);
  if (ap == LC_PAD_SAME_UPPER || ap == LC_PAD_SAME_LOWER) {
    int64_t o = (in + s - 1) / s;
    int64_t need = (o - 1) * s + dil * (k - 1) + 1 - in;
    if (need < 0) need = 0;
    pb = ap == LC_PAD_SAME_UPPER ? need / 2 : need - need / 2;
    pe = need - pb;
  } else if (ap == LC_PAD_VALID) {
    pb = pe = 0;
  }
  int64_t o = lc_conv_out_size(in, k, s, dil, pb, pe);
  if (o <= 0)
    return lc_error(LC_ERR_INVALID_ARG,
                    "conv: kernel %s %lld (dilation %lld) is larger than the padded input %lld (+%lld+%lld)", what,
                    (long long)k, (long long)dil, (long long)in, (long long)pb, (long long)pe);
  *ob = pb;
  *oe = pe;
  *out = o;
  return LC_OK;
}

lc_status lc_conv_resolve_pads(const lc_conv_desc *d, int64_t in_h, int64_t in_w, int64_t pads[4],
                               int64_t *out_h, int64_t *out_w) {
  if (!d || !pads || !out_h || !out_w) return lc_error(LC_ERR_INVALID_ARG, "conv: NULL argument to resolve_pads");
  lc_status st = resolve_dim("height", d->auto_pad, in_h, d->kernel_h, d->stride_h, d->dilation_h, d->pad_top,
                             d->pad_bottom, &pads[0], &pads[2], out_h);
  if (st) return st;
  return resolve_dim("width", d->auto_pad, in_w, d->kernel_w, d->stride_w, d->dilation_w, d->pad_left,
                     d->pad_right, &pads[1], &pads[3], out_w);
}

/* Validates everything that does not depend on the input size. */
lc_status lc_conv_desc_check(const lc_conv_desc *d) {
  if (!d) return lc_error(LC_ERR_INVALID_ARG, "conv: descriptor is NULL");
  if (!d->weights && !(d->weight_format != LC_WEIGHTS_F32 && d->q_codes))
    return lc_error(LC_ERR_INVALID_ARG, "conv: weights pointer is NULL");
  if (d->q_codes && d->weight_format == LC_WEIGHTS_F32)
    return lc_error(LC_ERR_INVALID_ARG, "conv: quantized codes given with weight format f32");
  if (d->q_codes && (!d->q_scales || (d->asym && !d->q_offsets)))
    return lc_error(LC_ERR_INVALID_ARG, "conv: quantized codes need scales%s", d->asym ? " and offsets" : "");
  const struct {
    const char *name;
    int64_t v, lo;
  } f[] = {{"in_channels", d->in_channels, 1}, {"out_channels", d->out_channels, 1}, {"groups", d->groups, 1},
           {"kernel_h", d->kernel_h, 1},       {"kernel_w", d->kernel_w, 1},         {"stride_h", d->stride_h, 1},
           {"stride_w", d->stride_w, 1},       {"dilation_h", d->dilation_h, 1},     {"dilation_w", d->dilation_w, 1},
           {"pad_top", d->pad_top, 0},         {"pad_left", d->pad_left, 0},         {"pad_bottom", d->pad_bottom, 0},
           {"pad_right", d->pad_right, 0}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    if (f[i].v < f[i].lo)
      return lc_error(LC_ERR_INVALID_ARG, "conv: %s = %lld must be >= %lld", f[i].name, (long long)f[i].v,
                      (long long)f[i].lo);
    if (f[i].v > LC_DIM_MAX)
      return lc_error(LC_ERR_OVERFLOW, "conv: %s = %lld is larger than 2^30", f[i].name, (long long)f[i].v);
  }
  if (d->in_channels % d->groups || d->out_channels % d->groups)
    return lc_error(LC_ERR_INVALID_ARG, "conv: channels in %lld / out %lld not divisible by groups %lld",
                    (long long)d->in_channels, (long long)d->out_channels, (long long)d->groups);
  size_t n;
  int64_t wf[4] = {d->out_channels, d->in_channels / d->groups, d->kernel_h, d->kernel_w};
  if (!lc_mul_n(&n, 4, wf) || !lc_mul_sz(n, sizeof(float), &n))
    return lc_error(LC_ERR_OVERFLOW, "conv: weight size %lld x %lld x %lld x %lld overflows",
                    (long long)wf[0], (long long)wf[1], (long long)wf[2], (long long)wf[3]);
  if ((unsigned)d->auto_pad > LC_PAD_SAME_LOWER) return lc_error(LC_ERR_INVALID_ARG, "conv: bad auto_pad %d", (int)d->auto_pad);
  if ((unsigned)d->layout > LC_NHWC) return lc_error(LC_ERR_INVALID_ARG, "conv: bad layout %d", (int)d->layout);
  if ((unsigned)d->activation > LC_ACT_PRELU)
    return lc_error(LC_ERR_INVALID_ARG, "conv: bad activation %d", (int)d->activation);
  if (d->activation == LC_ACT_PRELU) {
    if (!d->act_slopes) return lc_error(LC_ERR_INVALID_ARG, "conv: LC_ACT_PRELU needs act_slopes");
    for (int64_t o = 0; o < d->out_channels; o++)
      if (!isfinite(d->act_slopes[o]))
        return lc_error(LC_ERR_INVALID_ARG, "conv: act_slopes[%lld] = %g is not finite", (long long)o,
                        (double)d->act_slopes[o]);
  }
  for (int64_t c = 0; d->pad_values && c < d->in_channels; c++)
    if (!isfinite(d->pad_values[c]))
      return lc_error(LC_ERR_INVALID_ARG, "conv: pad_values[%lld] = %g is not finite", (long long)c,
                      (double)d->pad_values[c]);
  if (d->activation == LC_ACT_CLIP && !(d->act_min <= d->act_max))
    return lc_error(LC_ERR_INVALID_ARG, "conv: clip min %g > max %g", (double)d->act_min, (double)d->act_max);
  if (!isfinite(d->post_mul) || !isfinite(d->post_add))
    return lc_error(LC_ERR_INVALID_ARG, "conv: post_mul %g / post_add %g not finite", (double)d->post_mul,
                    (double)d->post_add);
  if ((unsigned)d->route >= LC_ROUTE_COUNT) return lc_error(LC_ERR_INVALID_ARG, "conv: bad route %d", (int)d->route);
  /* Routes fixed by the descriptor alone fail here, naming what they need (else prepare would
   * find their weights never packed). */
  if (d->route == LC_ROUTE_DEPTHWISE && !(d->groups == d->in_channels && d->groups == d->out_channels))
    return lc_error(LC_ERR_UNSUPPORTED,
                    "conv: route depthwise needs groups == in_channels == out_channels (got %lld, %lld, %lld)",
                    (long long)d->groups, (long long)d->in_channels, (long long)d->out_channels);
  if (d->route == LC_ROUTE_WINOGRAD &&
      (d->kernel_h != 3 || d->kernel_w != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dilation_h != 1 ||
       d->dilation_w != 1))
    return lc_error(LC_ERR_UNSUPPORTED, "conv: route winograd needs a 3x3 kernel, stride 1 and dilation 1");
  if ((unsigned)d->weight_format > LC_WEIGHTS_Q4)
    return lc_error(LC_ERR_INVALID_ARG, "conv: bad weight format %d", (int)d->weight_format);
  return LC_OK;
}
