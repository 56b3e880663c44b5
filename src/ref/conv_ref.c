/* The reference convolution every route is tested against: plain loops, fp64 accumulation.
 * The sum and the bias are added in fp64 and rounded to fp32 once, then the activation runs
 * in fp32 exactly as the kernels' lc_apply_act does, so the only error is that one rounding.
 * It always reads desc->weights as fp32 (weight_format is ignored: quantization is tested on
 * its own against the dequantized weights). */
#include "lowconv.h"

#include "kernels/kernels.h"
#include "util/checked.h"
#include "util/error.h"

static lc_status ref_check_desc(const lc_conv_desc *d) {
  if (d->in_channels < 1 || d->out_channels < 1 || d->groups < 1)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: channels %lld->%lld, groups %lld must be >= 1",
                    (long long)d->in_channels, (long long)d->out_channels, (long long)d->groups);
  if (d->in_channels % d->groups || d->out_channels % d->groups)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: channels %lld->%lld not divisible by groups %lld",
                    (long long)d->in_channels, (long long)d->out_channels, (long long)d->groups);
  if (d->kernel_h < 1 || d->kernel_w < 1 || d->stride_h < 1 || d->stride_w < 1 || d->dilation_h < 1 ||
      d->dilation_w < 1)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: kernel %lldx%lld, stride %lldx%lld, dilation %lldx%lld must be >= 1",
                    (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->stride_h,
                    (long long)d->stride_w, (long long)d->dilation_h, (long long)d->dilation_w);
  if (d->layout != LC_NCHW && d->layout != LC_NHWC)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: unknown layout %d", (int)d->layout);
  if ((int)d->activation < LC_ACT_NONE || (int)d->activation > LC_ACT_PRELU)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: unknown activation %d", (int)d->activation);
  if (d->activation == LC_ACT_PRELU && !d->act_slopes)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: LC_ACT_PRELU needs act_slopes");
  return LC_OK;
}

/* Byte size of a 4-D float tensor fits in ptrdiff_t (so every int64 index below is exact). */
static int ref_fits(const int64_t f[4]) {
  int64_t ff[5] = {f[0], f[1], f[2], f[3], (int64_t)sizeof(float)};
  size_t s;
  return lc_mul_n(&s, 5, ff) && s <= (size_t)PTRDIFF_MAX;
}

/* Tensor sizes and the padded extents, so no index the loops form can overflow. */
static lc_status ref_sizes(const lc_conv_desc *d, int64_t n, int64_t ih, int64_t iw, const int64_t pads[4],
                           int64_t oh, int64_t ow) {
  const int64_t fin[4] = {n, d->in_channels, ih, iw};
  const int64_t fout[4] = {n, d->out_channels, oh, ow};
  const int64_t fw[4] = {d->out_channels, d->in_channels / d->groups, d->kernel_h, d->kernel_w};
  int64_t t;
  int ok = ref_fits(fin) && ref_fits(fout) && ref_fits(fw);
  ok = ok && lc_add_i64(ih, pads[0], &t) && lc_add_i64(t, pads[2], &t);
  ok = ok && lc_add_i64(iw, pads[1], &t) && lc_add_i64(t, pads[3], &t);
  ok = ok && lc_mul_i64(d->kernel_h, d->dilation_h, &t) && lc_mul_i64(d->kernel_w, d->dilation_w, &t);
  ok = ok && lc_mul_i64(oh, d->stride_h, &t) && lc_mul_i64(ow, d->stride_w, &t);
  if (!ok)
    return lc_error(LC_ERR_OVERFLOW, "conv_reference: tensor sizes overflow (batch %lld, %lldx%lld, channels %lld->%lld)",
                    (long long)n, (long long)ih, (long long)iw, (long long)d->in_channels,
                    (long long)d->out_channels);
  return LC_OK;
}

lc_status lc_conv_reference(const lc_conv_desc *desc, int64_t batch, int64_t in_h, int64_t in_w,
                            const float *input, float *output) {
  if (!desc) return lc_error(LC_ERR_INVALID_ARG, "conv_reference: desc is NULL");
  if (!desc->weights) return lc_error(LC_ERR_INVALID_ARG, "conv_reference: weights are NULL");
  if (!input || !output)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: %s is NULL", input ? "output" : "input");
  if (batch < 1 || in_h < 1 || in_w < 1)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: batch %lld, input %lldx%lld must be >= 1",
                    (long long)batch, (long long)in_h, (long long)in_w);
  lc_status st = ref_check_desc(desc);
  if (st != LC_OK) return st;
  int64_t pads[4], oh, ow;
  st = lc_conv_resolve_pads(desc, in_h, in_w, pads, &oh, &ow);
  if (st != LC_OK) return st;
  if (oh < 1 || ow < 1)
    return lc_error(LC_ERR_INVALID_ARG, "conv_reference: output %lldx%lld is empty", (long long)oh, (long long)ow);
  st = ref_sizes(desc, batch, in_h, in_w, pads, oh, ow);
  if (st != LC_OK) return st;

  const int64_t g = desc->groups, cig = desc->in_channels / g, cog = desc->out_channels / g;
  const int64_t ci = desc->in_channels, co = desc->out_channels;
  const int64_t kh = desc->kernel_h, kw = desc->kernel_w;
  const int nhwc = desc->layout == LC_NHWC;
  lc_gemm_params act = {0};
  act.act = (int)desc->activation;
  act.act_min = desc->act_min;
  act.act_max = desc->act_max;
  act.act_alpha = desc->act_alpha;
  act.post = desc->post_mul != 1.0f || desc->post_add != 0.0f;
  act.post_mul = desc->post_mul;
  act.post_add = desc->post_add;
  act.slope = desc->act_slopes;

  for (int64_t b = 0; b < batch; b++)
    for (int64_t oc = 0; oc < co; oc++) {
      const int64_t grp = oc / cog;
      const float *w = desc->weights + oc * cig * kh * kw;
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          double acc = desc->bias ? (double)desc->bias[oc] : 0.0;
          for (int64_t c = 0; c < cig; c++) {
            const int64_t ic = grp * cig + c;
            const double pv = desc->pad_values ? (double)desc->pad_values[ic] : 0.0;
            for (int64_t ky = 0; ky < kh; ky++) {
              const int64_t iy = oy * desc->stride_h - pads[0] + ky * desc->dilation_h;
              for (int64_t kx = 0; kx < kw; kx++) {
                const int64_t ix = ox * desc->stride_w - pads[1] + kx * desc->dilation_w;
                if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
                  acc += pv * (double)w[(c * kh + ky) * kw + kx]; /* a padding pixel */
                  continue;
                }
                const int64_t idx = nhwc ? ((b * in_h + iy) * in_w + ix) * ci + ic
                                         : ((b * ci + ic) * in_h + iy) * in_w + ix;
                acc += (double)input[idx] * (double)w[(c * kh + ky) * kw + kx];
              }
            }
          }
          const int64_t odx = nhwc ? ((b * oh + oy) * ow + ox) * co + oc : ((b * co + oc) * oh + oy) * ow + ox;
          output[odx] = lc_apply_act_ch((float)acc, &act, (size_t)oc);
        }
    }
  return LC_OK;
}
