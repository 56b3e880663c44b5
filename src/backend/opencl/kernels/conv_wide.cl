/* Large kernels, few output channels (family "wide", cl_fam_wide.c): PP-OCR det's 9x9 convs to 24
 * channels, where a GEMM tile pads M to 32 and gathers every input value kh*kw times. A work item
 * holds CB oc4 blocks x WT adjacent output columns of one row. Per input channel the work-group
 * stages that channel's kh*kw*CB weight rows in local memory (dequantized once, there); per kernel
 * row an item loads the WT + kw - 1 input values it needs once and reuses them over the kw taps:
 * 4*CB*WT FMAs per CB local float4 reads, no index math in the tap loop. Stride and dilation 1
 * along x (the reuse), any along y.
 *
 * Global size (ceil(ow / WT), oh, n * groups * ceil(ob / CB) * ksplit), local (lx, ly, 1). The
 * input channels are split in p.ksplit chunks of p.kchunk (dim 2, fastest): every item writes its
 * partial sums to the workspace in gemm's split-K layout and wide_reduce adds the chunks and
 * applies the epilogue (one path for every ksplit: the epilogue is inlined once, not per register,
 * which keeps the build short). Items past the output still stage weights: barriers need them. */

#define LCW_KMAX 9 /* kh, kw <= 9 (cl_fam_wide.c) */
/* The kernel's width as a build option (cl_fam_wide.c passes it unless LOWCONV_CL_WIDE_FIXK=0):
 * the tap loops lose their predicates; the row loop, not unrolled, keeps its run-time bound. */
#ifdef LCW_KW
#define LCW_KWV LCW_KW
#else
#define LCW_KWV p.kw
#endif
#define LCW_KHV p.kh
#ifndef LCW_VEC /* 1: the input rows as aligned float4 chunks (cl_fam_wide.c: wide_vec) */
#define LCW_VEC 0
#endif

#ifndef LCW_W9 /* 1: family wino9's quantized form (cl_fam_wino9.c), weights transformed while staged */
#define LCW_W9 0
#endif
#if LCW_W9
/* Family wino9 on q8/q4 weights: the grouped 3x3 conv's weight of group xi, oc4 block b, sub-kernel
 * sub, channel ic is U = (G g G^T)[xi] of the 9x9 conv's 3x3 sub-kernel g, made here from the
 * codes (p: the 9x9 conv's weight addressing, K = 81 cin_g and its blocks), so U never exists in
 * device memory and the codes stay codes. G as in conv_wino9.cl. */
__constant float lcw_g9[5][3] = {{0.5f, 0.0f, 0.0f},
                                 {-0.5f, -0.5f, -0.5f},
                                 {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                 {1.0f / 6, 1.0f / 3, 2.0f / 3},
                                 {0.0f, 0.0f, 1.0f}};
inline float4 lcw_w9_weight(__global const wtype *w, __global const float *sc, __global const float *of,
                            const lc_cl_conv_args *p, int xi, int b, int sub, int ic) {
  const int xr = xi / 5, xc = xi - 5 * xr, dy = sub / 3, dx = sub - 3 * dy, icb = ic / p->bsz; /* lc_blk's */
  float4 u = (float4)(0.0f);
  for (int r = 0; r < 3; r++) {
    float4 t = (float4)(0.0f);
    for (int q = 0; q < 3; q++) {
      const int tap = (3 * dy + r) * 9 + 3 * dx + q;
      t = mad((float4)(lcw_g9[xc][q]), lc_w4(w, sc, of, p, b, tap * p->cin_g + ic, tap * p->bpt + icb), t);
    }
    u = mad((float4)(lcw_g9[xr][r]), t, u);
  }
  return u;
}
#endif

#ifndef LCW_PF
#define LCW_PF 1
#endif

/* Staged value i (tap i / CB, block b0 + i % CB) of input channel ic, group g. */
static inline __attribute__((always_inline)) float4 lcw_stage(__global const wtype *restrict w,
                                                              __global const float *restrict sc,
                                                              __global const float *restrict of,
                                                              const lc_cl_conv_args *pp, int g, int b0, int i, int ic,
                                                              const int CB) {
  const int tap = i / CB, cb = i - tap * CB;
#if LCW_W9
  return lcw_w9_weight(w, sc, of, pp, g, min(b0 + cb, pp->ob - 1), tap, ic);
#else
  const int wb = g * pp->ob + min(b0 + cb, pp->ob - 1); /* a block past the last repeats it, unstored */
#if WFMT == 0
  const int blk = 0;
#else
  const int blk = lc_blk(pp, tap, ic);
#endif
  return lc_w4(w, sc, of, pp, wb, tap * pp->cin_g + ic, blk);
#endif
}

static inline __attribute__((always_inline)) void
lcw_wide(__global const float *restrict in, __global const wtype *restrict w, __global const float *restrict sc,
         __global const float *restrict of, const lc_cl_conv_args *pa, __global float *restrict ws,
         __local float4 *Ws, const int CB, const int WT) {
  const lc_cl_conv_args p = *pa;
  const int ox0 = (int)get_global_id(0) * WT, oy = (int)get_global_id(1);
  const int T = (int)(get_local_size(0) * get_local_size(1));
  const int lid = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));
  const int nob = (p.ob + CB - 1) / CB;
  int z = (int)get_global_id(2);
  const int s = z % p.ksplit;
  z /= p.ksplit;
  const int b0 = (z % nob) * CB;
  z /= nob;
  const int g = z % p.groups, n = z / p.groups;
  const int ic0 = s * p.kchunk, ic1 = min(p.cin_g, ic0 + p.kchunk);
  const int taps = LCW_KHV * LCW_KWV, nw = taps * CB;
  const bool live = ox0 < p.ow && oy < p.oh;
  const int inb = p.in_off + n * p.in_sn + g * p.cin_g * p.in_sc, ix0 = ox0 - p.pl;

  float4 acc[8][8];
LC_UNROLL
  for (int cb = 0; cb < CB; cb++)
LC_UNROLL
    for (int x = 0; x < WT; x++) acc[cb][x] = (float4)(0.0f);

  /* With one staged value per item (nw <= T: wino9's 3x3 tiles) the next channel's is loaded
   * (for wino9 on q8/q4 also transformed) while this channel's FMAs run: the staging's latency
   * was exposed at every channel. LCW_PF=0 (LOWCONV_CL_WIDE_PF=0): staged after the barrier. */
  const bool pf = LCW_PF && nw <= T;
  float4 nxt = (float4)(0.0f);
  if (pf && lid < nw && ic0 < ic1) nxt = lcw_stage(w, sc, of, &p, g, b0, lid, ic0, CB);
  for (int ic = ic0; ic < ic1; ic++) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (pf) {
      if (lid < nw) Ws[lid] = nxt;
    } else {
      for (int i = lid; i < nw; i += T) Ws[i] = lcw_stage(w, sc, of, &p, g, b0, i, ic, CB);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (pf && lid < nw && ic + 1 < ic1) nxt = lcw_stage(w, sc, of, &p, g, b0, lid, ic + 1, CB);
    const int cbase = inb + ic * p.in_sc;
    for (int ky = 0; ky < LCW_KHV; ky++) {
      const int iy = oy * p.sh - p.pt + ky * p.dh;
      if (!live || (uint)iy >= (uint)p.ih) continue;
      const int rbase = cbase + iy * p.in_sh;
      float xr[8 + LCW_KMAX - 1];
      if (LCW_VEC && WT % 4 == 0) {
        /* Aligned float4 chunks (cl_fam_wide.c, wide_vec: unit x stride, iw, strides and pl
         * multiples of 4; sub-buffers start aligned): each chunk lies all inside the row or all in
         * the padding, so 3 vector loads replace 12 scalar ones and their bound checks. */
LC_UNROLL
        for (int q = 0; q < (WT + LCW_KWV + 2) / 4; q++) {
          const int b = ix0 + 4 * q;
          const bool ok = (uint)b < (uint)p.iw;
          float4 v = *(__global const float4 *)(in + rbase + (ok ? b : 0));
          v = ok ? v : (float4)(0.0f);
          xr[4 * q] = v.s0, xr[4 * q + 1] = v.s1, xr[4 * q + 2] = v.s2, xr[4 * q + 3] = v.s3;
        }
      } else {
LC_UNROLL
        for (int j = 0; j < WT + LCW_KMAX - 1; j++) {
          const int ix = ix0 + j;
          const bool ok = j < WT + LCW_KWV - 1 && (uint)ix < (uint)p.iw;
          xr[j] = in[ok ? rbase + ix * p.in_sw : rbase];
          xr[j] = ok ? xr[j] : 0.0f;
        }
      }
      __local const float4 *wr = Ws + ky * LCW_KWV * CB;
LC_UNROLL
      for (int kx = 0; kx < LCW_KMAX; kx++) {
        if (kx < LCW_KWV) {
LC_UNROLL
          for (int cb = 0; cb < CB; cb++) {
            const float4 wv = wr[kx * CB + cb];
LC_UNROLL
            for (int x = 0; x < WT; x++) acc[cb][x] = mad((float4)(xr[x + kx]), wv, acc[cb][x]);
          }
        }
      }
    }
  }
  if (!live) return;
  /* Partials: ws[((g * ksplit + s) * M + m) * N + col], col = (n * oh + oy) * ow + ox. */
  const int M = p.cout_g, N = p.n * p.oh * p.ow, col = (n * p.oh + oy) * p.ow + ox0;
  const bool vec = WT == 4 && (p.ow & 3) == 0 && (N & 3) == 0; /* ox0 + 3 < ow then, col % 4 == 0 */
LC_UNROLL
  for (int cb = 0; cb < CB; cb++)
LC_UNROLL
    for (int lane = 0; lane < 4; lane++) {
      const int m = (b0 + cb) * 4 + lane;
      if (b0 + cb >= p.ob || m >= M) continue;
      __global float *dst = ws + ((g * p.ksplit + s) * M + m) * N + col;
      if (vec) {
        vstore4((float4)(lcd_lane(acc[cb][0], lane), lcd_lane(acc[cb][1 % WT], lane), lcd_lane(acc[cb][2 % WT], lane),
                         lcd_lane(acc[cb][3 % WT], lane)),
                0, dst);
      } else {
LC_UNROLL
        for (int x = 0; x < WT; x++)
          if (ox0 + x < p.ow) dst[x] = lcd_lane(acc[cb][x], lane);
      }
    }
}

#define LCW_KERNEL(NAME, CB, WT)                                                              \
  __kernel void NAME(LC_KERNEL_ARGS, __global float *restrict ws) {                          \
    __local float4 Ws[LCW_KMAX * LCW_KMAX * (CB)];                                            \
    lcw_wide(in, w, sc, of, &p, ws, Ws, CB, WT);                                              \
    (void)bias;                                                                               \
    (void)res;                                                                                \
    (void)out;                                                                                \
  }

/* Variants (cl_fam_wide.c holds the same table): oc4 blocks x columns per item. */
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c8w4)
LCW_KERNEL(wide_c8w4, 2, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c12w4)
LCW_KERNEL(wide_c12w4, 3, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c16w4)
LCW_KERNEL(wide_c16w4, 4, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c24w4)
LCW_KERNEL(wide_c24w4, 6, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c24w2)
LCW_KERNEL(wide_c24w2, 6, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c8w8)
LCW_KERNEL(wide_c8w8, 2, 8)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_wide_c12w8)
LCW_KERNEL(wide_c12w8, 3, 8)
#endif

/* The chunks' sum and the epilogue, in every program of this file. */
__kernel void wide_reduce(LC_KERNEL_ARGS, __global const float *restrict ws) {
  lc_ksplit_reduce(out, bias, res, &p, ws);
  (void)in;
  (void)w;
  (void)sc;
  (void)of;
}
