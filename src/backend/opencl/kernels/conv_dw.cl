/* Depthwise convolution (groups == cin == cout, so cin_g = cout_g = 1 and K = kh * kw): a work
 * item computes W consecutive output columns (variants w1, w2, w4, w8) of one channel and row.
 * Weights are the common layout with one block per channel (block wb = channel, lane 0).
 *
 * Global size (ceil(ow / W), oh, n * channels), dims 0 and 1 rounded up to the local size
 * (lx, ly, 1); items past the output return. Dim 0 runs along the columns so that in NCHW
 * neighbouring items read neighbouring inputs; the items of a work-group share the channel, so
 * the one weight per tap is a broadcast, dequantized once per tap for W outputs. */

#define LCDW_MW 8

__attribute__((always_inline)) static inline void lcdw(__global const float *restrict in, __global const wtype *restrict w,
                 __global const float *restrict sc, __global const float *restrict of,
                 __global const float *restrict bias, __global const float *restrict res,
                 __global float *restrict out, const lc_cl_conv_args *pa, const int WT) {
  const lc_cl_conv_args p = *pa;
  int ox0 = (int)get_global_id(0) * WT, oy = get_global_id(1), z = get_global_id(2);
  if (ox0 >= p.ow || oy >= p.oh) return;
  int c = z % p.groups, n = z / p.groups;
  float acc[LCDW_MW] = {0.0f};
  const int inb = n * p.in_sn + c * p.in_sc;
  for (int ky = 0; ky < p.kh; ky++) {
    int iy = oy * p.sh - p.pt + ky * p.dh;
    if (iy < 0 || iy >= p.ih) continue;
    for (int kx = 0; kx < p.kw; kx++) {
      int tap = ky * p.kw + kx;
#if WFMT == 0
      int blk = 0;
#else
      int blk = lc_blk(&p, tap, 0);
#endif
      float wv = lc_w1(w, sc, of, &p, c, 0, tap, blk);
      #pragma unroll
      for (int x = 0; x < WT; x++) {
        int ix = (ox0 + x) * p.sw - p.pl + kx * p.dw;
        int ok = ix >= 0 && ix < p.iw;
        float xv = in[inb + iy * p.in_sh + (ok ? ix : 0) * p.in_sw];
        acc[x] = mad(ok ? xv : 0.0f, wv, acc[x]);
      }
    }
  }
  #pragma unroll
  for (int x = 0; x < WT; x++) {
    if (ox0 + x >= p.ow) break;
    lc_store(out, bias, res, &p, n, c, oy, ox0 + x, acc[x]);
  }
}

#define LCDW_KERNEL(NAME, WT) \
  __kernel void NAME(LC_KERNEL_ARGS) { lcdw(in, w, sc, of, bias, res, out, &p, WT); }

#if LC_ALL_KERNELS || defined(LC_WANT_dw_w1)
LCDW_KERNEL(dw_w1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_dw_w2)
LCDW_KERNEL(dw_w2, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_dw_w4)
LCDW_KERNEL(dw_w4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_dw_w8)
LCDW_KERNEL(dw_w8, 8)
#endif
