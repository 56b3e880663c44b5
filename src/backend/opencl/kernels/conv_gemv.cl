/* 1x1 convolution on few pixels (n * oh * ow <= 8, no padding, any stride): the fully connected
 * case, bound by reading the weights once. A work-group of L items (a power of two, 32..256)
 * computes BW oc4 blocks (of one group) for PP pixels per pass; item t reads chunks t, t + L,
 * t + 2L, ... of each block (a chunk is 16 bytes of codes: 8 rows of q4, 4 rows of q8, or one f32
 * row), so a warp reads 512 contiguous bytes per load; LCG_U chunks are loaded before any is used
 * to keep enough bytes in flight. Sums stay in registers per item (per block in the code domain:
 * the scale and offset are applied once per chunk, which lies in one quantization block), then
 * one tree reduction in local memory per (block, pixel).
 *
 * Codes become floats with lcd_nib4 / lcd_byte4 (common.cl: no int-to-float conversions); the
 * folded offset multiplies the chunk's input sum.
 *
 * Global size (ceil(groups * ob / BW) * L), local size (L). Variants pPP[bBW]; r1 / r1p4 read
 * one row at a time with lc_w4 and run any K and block size (the fast ones need cin_g a multiple
 * of the chunk's rows and quantization blocks that are whole chunks; BW > 1 needs groups == 1). */

#define LCG_MP 8
#define LCG_MB 4
#define LCG_LMAX 256
#if WFMT == 0
#define LCG_R 1
#define LCG_U 8
typedef float4 lcg_raw;
typedef float lcg_xt;
#elif WFMT == 1
#define LCG_R 4
#define LCG_U 4
typedef uint4 lcg_raw;
typedef float4 lcg_xt;
#else
#define LCG_R 8
#define LCG_U 4
typedef uint4 lcg_raw;
typedef float8 lcg_xt;
#endif

/* Input element offsets of pixel pi at channel 0 of group g. */
inline int lcg_xbase(const lc_cl_conv_args *p, int pi, int g) {
  int ohw = p->oh * p->ow, n = pi / ohw, r = pi % ohw;
  return n * p->in_sn + (r / p->ow) * p->sh * p->in_sh + (r % p->ow) * p->sw * p->in_sw + g * p->cin_g * p->in_sc;
}

/* The LCG_R inputs of chunk j at xb; vx: contiguous and 16-byte aligned. */
inline lcg_xt lcg_x(__global const float *in, int xb, int j, int sc, int vx) {
#if WFMT == 0
  return in[xb + j * sc];
#elif WFMT == 1
  if (vx) return ((__global const float4 *)(in + xb))[j];
  int i = xb + j * 4 * sc;
  return (float4)(in[i], in[i + sc], in[i + 2 * sc], in[i + 3 * sc]);
#else
  if (vx) {
    __global const float4 *v = (__global const float4 *)(in + xb);
    return (float8)(v[2 * j], v[2 * j + 1]);
  }
  int i = xb + j * 8 * sc;
  return (float8)(in[i], in[i + sc], in[i + 2 * sc], in[i + 3 * sc], in[i + 4 * sc], in[i + 5 * sc],
                  in[i + 6 * sc], in[i + 7 * sc]);
#endif
}

/* Tree sum of v over the work-group (L a power of two); the total is returned to item 0. */
inline float4 lcg_reduce(__local float4 *red, float4 v, int t, int L) {
  red[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L >> 1; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* Only item 0 reads the total: the others may already be writing the next sum. */
  return t == 0 ? red[0] : v;
}

/* Stores the 4 lanes of block wb (global block index) for pixel pi. */
inline void lcg_store(__global float *out, __global const float *bias, __global const float *res,
                      const lc_cl_conv_args *p, int wb, int pi, float4 v) {
  int g = wb / p->ob, b = wb % p->ob, ohw = p->oh * p->ow, n = pi / ohw, r = pi % ohw;
  #pragma unroll
  for (int lane = 0; lane < 4; lane++)
    if (b * 4 + lane < p->cout_g)
      lc_store(out, bias, res, p, n, g * p->cout_g + b * 4 + lane, r / p->ow, r % p->ow, lcd_lane(v, lane));
}

__attribute__((always_inline)) static inline void lcg_fast(__global const float *restrict in, __global const wtype *restrict w,
                     __global const float *restrict sc, __global const float *restrict of,
                     __global const float *restrict bias, __global const float *restrict res,
                     __global float *restrict out, const lc_cl_conv_args *pa, __local float4 *red, const int PP,
                     const int BW) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), nbt = p.groups * p.ob;
  const int wg0 = (int)get_group_id(0) * BW, npix = p.n * p.oh * p.ow, nch = p.cin_g / LCG_R;
  const int g = min(wg0, nbt - 1) / p.ob;
#define LCG_WB(bw) min(wg0 + (bw), nbt - 1)
#if WFMT != 0
  /* Chunk j's block is j / cpb (1x1: tap 0); block sizes are powers of two but for one block per row. */
  const int cpb = max(min(p.bsz, p.cin_g) / LCG_R, 1), cpb_lg = 31 - clz(cpb), cpb_pow2 = (cpb & (cpb - 1)) == 0;
#endif
  for (int p0 = 0; p0 < npix; p0 += PP) {
    int xb[LCG_MP];
    int vx = p.in_sc == 1;
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      xb[q] = lcg_xbase(&p, min(p0 + q, npix - 1), g);
      vx = vx && (xb[q] & 3) == 0;
    }
    float4 acc[LCG_MB][LCG_MP] = {{(float4)(0.0f)}};
    for (int j0 = t; j0 < nch; j0 += LCG_U * L) {
      lcg_raw raw[LCG_U][LCG_MB];
      #pragma unroll
      for (int u = 0; u < LCG_U; u++) {
        int jj = min(j0 + u * L, nch - 1);
        #pragma unroll
        for (int bw = 0; bw < BW; bw++) raw[u][bw] = ((__global const lcg_raw *)w)[LCG_WB(bw) * nch + jj];
      }
      #pragma unroll
      for (int u = 0; u < LCG_U; u++) {
        int j = j0 + u * L;
        if (j >= nch) break;
#if WFMT != 0
        const int blk = cpb_pow2 ? j >> cpb_lg : j / cpb;
#endif
        #pragma unroll
        for (int q = 0; q < PP; q++) {
          const lcg_xt x = lcg_x(in, xb[q], j, p.in_sc, vx);
#if WFMT == 0
          #pragma unroll
          for (int bw = 0; bw < BW; bw++) acc[bw][q] = mad((float4)(x), raw[u][bw], acc[bw][q]);
#else
#if WFMT == 2
          const float4 h = x.lo + x.hi;
#else
          const float4 h = x;
#endif
          const float xs = (h.x + h.y) + (h.z + h.w);
          #pragma unroll
          for (int bw = 0; bw < BW; bw++) {
            float4 s, o;
            lcd_scales(sc, of, &p, LCG_WB(bw), blk, &s, &o);
            const uint4 r = raw[u][bw];
#if WFMT == 2
            float4 d = (float4)(x.s0) * lcd_nib4(r.x);
            d = mad((float4)(x.s1), lcd_nib4(r.x >> 16), d);
            d = mad((float4)(x.s2), lcd_nib4(r.y), d);
            d = mad((float4)(x.s3), lcd_nib4(r.y >> 16), d);
            d = mad((float4)(x.s4), lcd_nib4(r.z), d);
            d = mad((float4)(x.s5), lcd_nib4(r.z >> 16), d);
            d = mad((float4)(x.s6), lcd_nib4(r.w), d);
            d = mad((float4)(x.s7), lcd_nib4(r.w >> 16), d);
#else
            float4 d = (float4)(x.s0) * lcd_byte4(r.x);
            d = mad((float4)(x.s1), lcd_byte4(r.y), d);
            d = mad((float4)(x.s2), lcd_byte4(r.z), d);
            d = mad((float4)(x.s3), lcd_byte4(r.w), d);
#endif
            acc[bw][q] = mad(s, d, mad(o, (float4)(xs), acc[bw][q]));
          }
#endif
        }
      }
    }
    #pragma unroll
    for (int bw = 0; bw < BW; bw++)
      #pragma unroll
      for (int q = 0; q < PP; q++) {
        float4 v = lcg_reduce(red, acc[bw][q], t, L);
        if (t == 0 && wg0 + bw < nbt && p0 + q < npix) lcg_store(out, bias, res, &p, LCG_WB(bw), p0 + q, v);
      }
  }
}

/* Any K and block size: one row per step, lc_w4 dequantizing it. */
__attribute__((always_inline)) static inline void lcg_rows(__global const float *restrict in, __global const wtype *restrict w,
                     __global const float *restrict sc, __global const float *restrict of,
                     __global const float *restrict bias, __global const float *restrict res,
                     __global float *restrict out, const lc_cl_conv_args *pa, __local float4 *red, const int PP) {
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), wb = get_group_id(0), npix = p.n * p.oh * p.ow;
  const int g = wb / p.ob;
  for (int p0 = 0; p0 < npix; p0 += PP) {
    int xb[LCG_MP];
    float4 acc[LCG_MP];
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      xb[q] = lcg_xbase(&p, min(p0 + q, npix - 1), g);
      acc[q] = (float4)(0.0f);
    }
    for (int k = t; k < p.cin_g; k += L) {
#if WFMT == 0
      int blk = 0;
#else
      int blk = lc_blk(&p, 0, k);
#endif
      float4 wv = lc_w4(w, sc, of, &p, wb, k, blk);
      #pragma unroll
      for (int q = 0; q < PP; q++) acc[q] = mad((float4)(in[xb[q] + k * p.in_sc]), wv, acc[q]);
    }
    #pragma unroll
    for (int q = 0; q < PP; q++) {
      float4 v = lcg_reduce(red, acc[q], t, L);
      if (t == 0 && p0 + q < npix) lcg_store(out, bias, res, &p, wb, p0 + q, v);
    }
  }
}

#define LCG_FAST(NAME, PP, BW)                                          \
  __kernel void NAME(LC_KERNEL_ARGS) {                                  \
    __local float4 red[LCG_LMAX];                                       \
    lcg_fast(in, w, sc, of, bias, res, out, &p, red, PP, BW);           \
  }
#define LCG_ROWS(NAME, PP)                                              \
  __kernel void NAME(LC_KERNEL_ARGS) {                                  \
    __local float4 red[LCG_LMAX];                                       \
    lcg_rows(in, w, sc, of, bias, res, out, &p, red, PP);               \
  }

#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1)
LCG_FAST(gemv_p1, 1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1b2)
LCG_FAST(gemv_p1b2, 1, 2)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p1b4)
LCG_FAST(gemv_p1b4, 1, 4)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p2)
LCG_FAST(gemv_p2, 2, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p4)
LCG_FAST(gemv_p4, 4, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_p8)
LCG_FAST(gemv_p8, 8, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_r1)
LCG_ROWS(gemv_r1, 1)
#endif
#if LC_ALL_KERNELS || defined(LC_WANT_gemv_r1p4)
LCG_ROWS(gemv_r1p4, 4)
#endif

/* Squeeze-and-excitation (the model runner's "_se" conv, cl_ops_mm.c): the gate conv (1x1 on one
 * pixel, groups 1) and the Mul that scales x by it, in one kernel. Work-group c (local size L, a
 * power of two up to LCG_LMAX) recomputes gate c = epilogue(sum_k w[c][k] * in[k]) (K = cin_g is
 * small: an SE block's squeezed width), rows read as gemv_r1 reads them, then scales plane c of x
 * (res, packed NCHW, image 0): out[c * P + i] = res[c * P + i] * gate. p's oh, ow and out_* are x's.
 * Large planes are split in S slices of `chunk` elements (a multiple of 4), one work-group each
 * (global size M * S * L), so that few channels still fill the device; each recomputes the gate. */
#if LC_ALL_KERNELS || defined(LC_WANT_se_scale)
__kernel void se_scale(__global const float *restrict in, __global const wtype *restrict w,
                       __global const float *restrict sc, __global const float *restrict of,
                       __global const float *restrict bias, __global const float *restrict res,
                       __global float *restrict out, __global const lc_cl_conv_args *pa, const int S,
                       const int chunk) {
  __local float red[LCG_LMAX];
  const lc_cl_conv_args p = *pa;
  const int t = get_local_id(0), L = get_local_size(0), c = get_group_id(0) / S, sl = get_group_id(0) % S;
  const int wb = c / 4, lane = c % 4;
  float acc = 0.0f;
  for (int k = t; k < p.cin_g; k += L) {
#if WFMT == 0
    const int blk = 0;
#else
    const int blk = lc_blk(&p, 0, k);
#endif
    acc = mad(lc_w1(w, sc, of, &p, wb, lane, k, blk), in[k * p.in_sc], acc);
  }
  red[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L >> 1; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float v = red[0]; /* every item: nothing writes red after the last barrier */
  if (p.has_bias) v += bias[c];
  v = lc_epi_tail(bias, &p, c, v); /* lc_store's epilogue (no residual) */
  const int P = p.oh * p.ow, base = c * p.out_sc, i0 = sl * chunk, i1 = min(P, i0 + chunk);
  if ((P & 3) == 0 && (p.out_sc & 3) == 0) { /* 16-byte aligned planes and slices: float4 */
    __global const float4 *r4 = (__global const float4 *)(res + base);
    __global float4 *o4 = (__global float4 *)(out + base);
    for (int i = i0 / 4 + t; i < i1 / 4; i += L) o4[i] = r4[i] * v;
  } else {
    for (int i = i0 + t; i < i1; i += L) out[base + i] = res[base + i] * v;
  }
}
#endif
